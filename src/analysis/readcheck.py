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
  (a token count such as 2,048 or a 2,000 ms bound is outside it).
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


class _Visible(HTMLParser):
    """Collects the text a browser shows: no script, style or template content."""

    #: Not reading text: scripts and styles, and code (``pre``: folded "Code" blocks, whose
    #: identifiers are the code's, not prose).
    SKIP = {"script", "style", "template", "noscript", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip += 1
        if tag == "title":
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def visible_html_text(html: str) -> str:
    """The text of an HTML page as a reader sees it (whitespace collapsed)."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


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
        found += find_leaks(visible_html_text(html_file.read_text(encoding="utf-8")), "in HTML")
    if pdf_file is not None and pdf_file.is_file():
        for i, page in enumerate(pdf_text(pdf_file), start=1):
            found += find_leaks(page, f"on PDF page {i}")
    return found
