"""HTML tables (the chapters' pandas Styler output) as Typst tables, for Quarto's PDF.

Analytical decisions taken here:

* Quarto reads a raw HTML table into its document only after inlining its CSS with juice,
  one ``quarto run`` subprocess per table on the Typst path (about 54 tables here: most of a
  67-76 s render). The report's tables are simple (one header row, text and number cells,
  links, code, cell colours set by id in a ``<style>`` block), so converting them here, in
  one pass in Python, keeps the PDF's tables and takes milliseconds.
* What is kept: header rows (repeated on every page), column and row spans, per-cell
  alignment (``num`` cells and ``text-align``), background and text colour, bold, italics,
  code, line breaks, links. Internal links (``#id``) become Typst label links, an
  ``<a id>`` anchor becomes an invisible, locatable label in its cell (so chapter links
  into the appendix register resolve); an internal link whose target is not in ``known``
  is kept as plain text rather than breaking the compile.
* Wide tables: small text and ``auto`` columns, which Typst shrinks to the text width
  (wrapping cell text) instead of overflowing the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

#: Point size of table text in the PDF (body text is 11 pt): the widest tables (the
#: appendix register, the price list) fit the A4 text width at this size.
TABLE_TEXT_PT = 7.5
#: A Typst label is letters, digits and ``_ - : .`` (Typst reference, "label").
TYPST_LABEL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_:.-]*$")
_STYLE_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_TYPST_SPECIAL = re.compile(r"([\\#\[\]$*_`<>@~/=+\-\"'])")
_COLOR = re.compile(r"^#(?:[0-9a-fA-F]{3}){1,2}$")
_RGB = re.compile(r"^rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)")
_INLINE = {"b": "strong", "strong": "strong", "em": "emph", "i": "emph", "sup": "super"}


def typst_text(text: str) -> str:
    r"""Plain text as Typst markup (markup characters escaped, whitespace collapsed).

    >>> typst_text("A_1 #2 [x] <y> 3-4 http://a")
    'A\\_1 \\#2 \\[x\\] \\<y\\> 3\\-4 http:\\/\\/a'
    """
    return _TYPST_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", text))


def typst_string(text: str) -> str:
    """A Typst string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _declarations(body: str) -> dict[str, str]:
    out = {}
    for decl in body.split(";"):
        if ":" in decl:
            key, value = decl.split(":", 1)
            out[key.strip().lower()] = value.strip()
    return out


def css_by_id(css: str) -> dict[str, dict[str, str]]:
    """``#id`` selectors of a Styler ``<style>`` block -> their declarations."""
    rules: dict[str, dict[str, str]] = {}
    for selectors, body in _STYLE_RULE.findall(css):
        decls = _declarations(body)
        for sel in selectors.split(","):
            sel = sel.strip()
            if sel.startswith("#") and " " not in sel:
                rules.setdefault(sel[1:], {}).update(decls)
    return rules


def _typst_color(value: str) -> str | None:
    value = value.strip().removesuffix("!important").strip()
    if _COLOR.match(value):
        return f"rgb({typst_string(value)})"
    m = _RGB.match(value)
    if m:
        return f"rgb({m.group(1)}, {m.group(2)}, {m.group(3)})"
    return None


@dataclass
class _Cell:
    header: bool
    attrs: dict[str, str]
    parts: list[str] = field(default_factory=list)


@dataclass
class _Table:
    rows: list[tuple[bool, list[_Cell]]] = field(default_factory=list)


class _TableParser(HTMLParser):
    """Collects tables (rows of cells with Typst content) and ``<style>`` text."""

    def __init__(self, known: set[str] | None) -> None:
        super().__init__(convert_charrefs=True)
        self.known = known
        self.css: list[str] = []
        self.tables: list[_Table] = []
        self._in_style = False
        self._in_head = False
        self._row: list[_Cell] | None = None
        self._row_header = False
        self._cell: _Cell | None = None
        self._stack: list[str] = []  # closing text for each open inline element

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "style":
            self._in_style = True
        elif tag == "table":
            self.tables.append(_Table())
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row, self._row_header = [], self._in_head
        elif tag in ("td", "th") and self._row is not None:
            header = tag == "th" or a.get("data-quarto-table-cell-role") == "th"
            self._cell = _Cell(header=header, attrs=a)
            self._stack = []
        elif self._cell is not None:
            self._open_inline(tag, a)

    def _open_inline(self, tag: str, a: dict[str, str]) -> None:
        parts = self._cell.parts  # type: ignore[union-attr]
        if tag == "br":
            parts.append(" #linebreak() ")
            return
        if tag == "a":
            anchor = a.get("id") or a.get("name")
            if anchor and TYPST_LABEL.match(anchor):
                parts.append(f"#metadata(none)<{anchor}>")
            href = a.get("href", "")
            if href.startswith("#") and TYPST_LABEL.match(href[1:]):
                if self.known is None or href[1:] in self.known:
                    parts.append(f"#link(<{href[1:]}>)[")
                    self._stack.append("]")
                    return
            elif re.match(r"^(https?|mailto):", href):
                parts.append(f"#link({typst_string(href)})[")
                self._stack.append("]")
                return
            self._stack.append("")
        elif tag == "code":
            parts.append("#raw(")
            self._stack.append(")")
            parts.append("\x00")  # marks where the code's text starts (joined below)
        elif tag in _INLINE:
            parts.append(f"#{_INLINE[tag]}[")
            self._stack.append("]")
        else:
            self._stack.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None:
            while self._stack:
                self._close_inline()
            self._row.append(self._cell)  # type: ignore[union-attr]
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self.tables:
                header = self._row_header or all(c.header for c in self._row)
                self.tables[-1].rows.append((header, self._row))
            self._row = None
        elif self._cell is not None and tag not in ("br",) and self._stack:
            self._close_inline()

    def _close_inline(self) -> None:
        closing = self._stack.pop()
        parts = self._cell.parts  # type: ignore[union-attr]
        if closing == ")":  # end of <code>: the collected text becomes one raw string
            start = len(parts) - 1 - parts[::-1].index("\x00")
            code = "".join(p[1:] if p.startswith("\x01") else p for p in parts[start + 1 :])
            del parts[start:]
            parts.append(typst_string(code) + ")")
        else:
            parts.append(closing)

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)
        elif self._cell is not None:
            in_code = ")" in self._stack
            # code text is kept verbatim (marked, joined at </code>); other text escaped
            self._cell.parts.append("\x01" + data if in_code else typst_text(data))


def _cell_typst(cell: _Cell, styles: dict[str, dict[str, str]]) -> str:
    decls = dict(styles.get(cell.attrs.get("id", ""), {}))
    decls.update(_declarations(cell.attrs.get("style", "")))
    body = "".join(cell.parts).strip()
    if cell.header or decls.get("font-weight") in ("bold", "700"):
        body = f"#strong[{body}]"
    color = _typst_color(decls.get("color", ""))
    if color:
        body = f"#text(fill: {color})[{body}]"
    args = []
    classes = cell.attrs.get("class", "").split()
    align = decls.get("text-align") or ("right" if "num" in classes else "")
    if align in ("left", "right", "center"):
        args.append(f"align: {align}")
    fill = _typst_color(decls.get("background-color", decls.get("background", "")))
    if fill:
        args.append(f"fill: {fill}")
    for span in ("colspan", "rowspan"):
        n = cell.attrs.get(span, "1")
        if n.isdigit() and int(n) > 1:
            args.append(f"{span}: {n}")
    if not args:
        return f"[{body}]"
    return f"table.cell({', '.join(args)})[{body}]"


def html_tables_to_typst(html: str, known: set[str] | None = None) -> str | None:
    """Every table in ``html`` as Typst code (``None`` when there is no table).

    ``known``: the ids that exist in the document (internal links to others become text);
    ``None`` keeps every internal link.
    """
    parser = _TableParser(known)
    parser.feed(html)
    parser.close()
    if not parser.tables:
        return None
    styles = css_by_id("\n".join(parser.css))
    out = []
    for table in parser.tables:
        if not table.rows:
            continue
        ncols = max(
            sum(int(c.attrs.get("colspan", "1") or 1) for c in cells) for _, cells in table.rows
        )
        head = [r for r in table.rows if r[0]]
        body = [r for r in table.rows if not r[0]]
        lines = [
            f"#block(width: 100%)[#set text(size: {TABLE_TEXT_PT}pt)",
            "#table(",
            f"  columns: {ncols},",
            "  align: left + horizon,",
            "  inset: (x: 3pt, y: 2.5pt),",
            "  stroke: (x, y) => if y == 0 { (bottom: 0.6pt) }"
            " else { (bottom: 0.2pt + luma(200)) },",
        ]
        if head:
            cells = ", ".join(_cell_typst(c, styles) for _, row in head for c in row)
            lines.append(f"  table.header(repeat: true, {cells}),")
        for _, row in body:
            lines.append("  " + ", ".join(_cell_typst(c, styles) for c in row) + ",")
        lines.append(")]")
        out.append("\n".join(lines))
    return "\n\n".join(out) if out else None
