"""The reading-path scan (analysis.readcheck): what counts as a leaked year."""

from __future__ import annotations

from analysis import readcheck


def _years(html: str) -> list[str]:
    return [f.split("'")[1] for f in readcheck._html_leaks(html) if f.startswith("year")]


def test_a_year_with_a_separator_is_found_in_prose_and_year_columns_only() -> None:
    page = (
        "<p>Launched in 2,022.</p>"
        "<table><thead><tr><th>Part</th><th>Launch year</th><th>Median cost (USD/year)</th>"
        "<th>Document date</th></tr></thead><tbody>"
        "<tr><td>X</td><td>2,023</td><td>2,014</td><td>2,025</td></tr>"
        "</tbody></table>"
    )
    assert _years(page) == ["2,022", "2,023", "2,025"]


def test_other_findings_are_scanned_everywhere() -> None:
    page = "<table><tr><th>Cost</th></tr><tr><td>nan</td></tr></table><p>tier0</p>"
    whats = [f.split(" '")[0] for f in readcheck._html_leaks(page)]
    assert whats == ["internal key", "nan"]


def test_a_year_outside_any_table_is_found_and_scripts_are_not_read() -> None:
    page = "<script>var y = '2,021';</script><div>2,024 plan</div>"
    assert _years(page) == ["2,024"]
