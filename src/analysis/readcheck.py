"""What a reader must never see in the rendered report: a scan of its visible text.

Analytical decisions taken here:

* The reading path is prose, tables and figures. Internal keys (``tier0``,
  ``rec_training``, ``gpu_hour_usd_MI355X``), Python's ``None``/``nan``, years printed with
  a thousands separator ("2,022") and a "Notebook" title are all signs that a dump or an
  unformatted value reached the page; each is a finding, with its context.
* HTML is scanned as a browser shows it: tags, scripts (the Vega specs and bundle), styles
  and attribute values (data: URIs of CSV downloads) are not text. The PDF is scanned as
  pypdf extracts it, page by page.
* "Years" are 2,010-2,039: a thousands-separated number in that range is read as a year
  (a token count such as 2,048 or a 2,000 ms bound is outside it). In an HTML table only
  a column whose header names a year or a date is scanned for them: a cell of dollars or
  GPU-hours may well read 2,014. The PDF has no table structure to read, so its every
  line is scanned.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

#: (what, pattern) pairs: each match in the visible text is a finding.
LEAK_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "internal key",
        re.compile(
            r"\b(?:tier\d+(?:_\w+)?|rec_\w+|gpu_hour_usd_\w+|\w*cost_per_mtok_\w+|"
            r"\w+_p_amd_cheaper|mlperf_mape_\w+|train_cost_usd_\w+|\w+_breakeven_\w+)\b"
        ),
    ),
    ("issue number", re.compile(r"\bissues?\s*#?\d+\b", re.IGNORECASE)),
    ("None", re.compile(r"\bNone\b")),
    ("nan", re.compile(r"\b(?:nan|NaN)\b")),
    ("year with a separator", re.compile(r"(?<![\d.,])2,0[1-3]\d(?![\d,])")),
    ("Notebook", re.compile(r"\bNotebook\b")),
)


#: Header words of a table column that may hold years (scanned for "2,022"); a rate per
#: year ("USD/year") is not one.
_YEAR_HEADER = re.compile(r"(?<!/)\byears?\b|date|launch|round", re.IGNORECASE)


class _Visible(HTMLParser):
    """Collects the text a browser shows: no script, style or template content.

    ``parts`` is all of it; ``year_parts`` the same less the data cells of table columns
    whose header names no year or date (the text scanned for years).
    """

    #: Not reading text: scripts and styles, and code (``pre``: folded "Code" blocks, whose
    #: identifiers are the code's, not prose).
    SKIP = {"script", "style", "template", "noscript", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.year_parts: list[str] = []
        self._skip = 0
        self._headers: list[str] = []
        self._col = -1
        self._th: list[str] | None = None
        self._non_year_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        if tag == "title":
            self._space()
        if tag == "table":
            self._headers = []
        elif tag == "tr":
            self._col = -1
        elif tag == "th":
            self._col += 1
            self._th = []
        elif tag == "td":
            self._col += 1
            head = self._headers[self._col] if self._col < len(self._headers) else ""
            self._non_year_cell = bool(self._headers) and not _YEAR_HEADER.search(head)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        if tag == "th" and self._th is not None:
            if self._col == len(self._headers):  # a column header (not a row's)
                self._headers.append("".join(self._th))
            self._th = None
        elif tag == "td":
            self._non_year_cell = False
        self._space()

    def _space(self) -> None:
        self.parts.append(" ")
        self.year_parts.append(" ")

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.parts.append(data)
        if not self._non_year_cell:
            self.year_parts.append(data)
        if self._th is not None:
            self._th.append(data)


def _visible(html: str) -> _Visible:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return parser


def _collapsed(parts: list[str]) -> str:
    return " ".join("".join(parts).split())


def visible_html_text(html: str) -> str:
    """The text of an HTML page as a reader sees it (whitespace collapsed)."""
    return _collapsed(_visible(html).parts)


def pdf_text(pdf: Path) -> list[str]:
    """The extracted text of each PDF page."""
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(pdf).pages]


def find_leaks(text: str, where: str = "") -> list[str]:
    """Every finding in ``text`` as ``"<what> '<match>' <where>: ...context..."``.

    >>> [f.split(" '")[0] for f in find_leaks("Launched 2,022; P = nan; tier0; 2,048 tokens")]
    ['internal key', 'nan', 'year with a separator']
    """
    out = []
    for what, pattern in LEAK_PATTERNS:
        for m in pattern.finditer(text):
            ctx = text[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
            out.append(f"{what} '{m.group(0)}' {where}: ...{ctx}...")
    return out


def report_leaks(html_file: Path | None, pdf_file: Path | None) -> list[str]:
    """:func:`find_leaks` over a rendered report's HTML and every PDF page."""
    found: list[str] = []
    if html_file is not None and html_file.is_file():
        found += _html_leaks(html_file.read_text(encoding="utf-8"))
    if pdf_file is not None and pdf_file.is_file():
        for i, page in enumerate(pdf_text(pdf_file), start=1):
            found += find_leaks(page, f"on PDF page {i}")
    return found


def _html_leaks(html: str) -> list[str]:
    """:func:`find_leaks` over a page's visible text, years not in non-year table columns.

    >>> page = ("<p>Launched 2,022</p><table><tr><th>Launch year</th><th>Cost (USD/year)</th>"
    ...         "</tr><tr><td>2,023</td><td>2,014</td></tr></table>")
    >>> [f.split(" in HTML")[0] for f in _html_leaks(page)]
    ["year with a separator '2,022'", "year with a separator '2,023'"]
    """
    vis = _visible(html)
    year = "year with a separator"
    found = [f for f in find_leaks(_collapsed(vis.parts), "in HTML") if not f.startswith(year)]
    years = find_leaks(_collapsed(vis.year_parts), "in HTML")
    return found + [f for f in years if f.startswith(year)]
