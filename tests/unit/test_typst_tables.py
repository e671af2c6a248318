"""HTML tables (Styler output) as Typst tables for Quarto's PDF."""

from __future__ import annotations

from analysis.typst_tables import css_by_id, html_tables_to_typst

STYLED = (
    '<style type="text/css">\n#T_t_row0_col1, #T_t_row1_col1 { text-align: right; }\n'
    "#T_t_row1_col1 { background-color: #00ff00; color: rgb(1, 2, 3); font-weight: bold }\n"
    "</style>"
    '<table id="T_t"><thead><tr><th colspan="2">Head [1]</th><th>C</th></tr></thead><tbody>'
    '<tr><td><a id="A-one"></a>one</td><td id="T_t_row0_col1">1</td>'
    '<td><a href="#A-one">back</a> <a href="#nowhere">gone</a></td></tr>'
    '<tr><td><code>a_b #c</code><br>x</td><td id="T_t_row1_col1" class="num">2</td>'
    '<td><a href="https://example.org/x?a=1">src</a></td></tr>'
    "</tbody></table>"
)


def test_css_by_id_reads_styler_rules() -> None:
    rules = css_by_id("#a, #b { text-align: right; }\n#b { color: red }")
    assert rules == {"a": {"text-align": "right"}, "b": {"text-align": "right", "color": "red"}}


def test_a_styled_table_keeps_spans_alignment_colours_links_and_code() -> None:
    out = html_tables_to_typst(STYLED, known={"A-one"})
    assert out is not None
    assert "columns: 3" in out
    assert "table.header(repeat: true, table.cell(colspan: 2)[#strong[Head \\[1\\]]]" in out
    assert "#metadata(none)<A-one>one" in out  # a locatable label: links to it resolve
    assert "#link(<A-one>)[back]" in out
    assert "gone" in out and "<nowhere>" not in out  # unknown target: text, not a broken link
    assert '#raw("a_b #c") #linebreak() x' in out
    assert 'table.cell(align: right, fill: rgb("#00ff00"))' in out
    assert "#text(fill: rgb(1, 2, 3))[#strong[2]]" in out
    assert '#link("https://example.org/x?a=1")[src]' in out


def test_no_table_gives_none_and_all_links_kept_without_known() -> None:
    assert html_tables_to_typst("<p>no table</p>") is None
    out = html_tables_to_typst(STYLED)
    assert "#link(<nowhere>)[gone]" in out
