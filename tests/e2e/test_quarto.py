"""End to end with Quarto: the CI scenario rendered by Quarto, checked against the fallback.

Skipped with a reason when Quarto is not on PATH (CI builds it with the kit in
../shared/tools/quarto: scripts/quarto.sh). Both renders run on one xdist worker (group
"report"), so each renders once per session. Checks what the issue asks of both renderers:
the same chapters and key figures, no external resources, cross-links that resolve, a
footer naming the renderer on every PDF page, charts that draw in Chromium.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from pypdf import PdfReader

from analysis import paths
from analysis.render import find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]

FIGURE_CAPTION = re.compile(r"Figure\s+(\d+)\s*:")


def _html(r) -> str:
    return (r.version_dir / "index.html").read_text(encoding="utf-8")


def _pdf_pages(r) -> list[str]:
    return [p.extract_text() for p in PdfReader(r.version_dir / "report.pdf").pages]


def _flat(text: str) -> str:
    """Whitespace collapsed, entities decoded, typographic quotes as typed (smart quotes).

    Chapter titles are escaped as user text (textsafe), so pandoc writes an apostrophe as
    ``&#39;`` rather than a smart quote: compare what a reader sees.
    """
    text = unescape(text).replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    return re.sub(r"\s+", " ", text.replace("\u201d", '"'))


def _external_loads(html: str) -> list[str]:
    """Resources the page would load from a host (hyperlinks to sources are content)."""
    loads = re.findall(
        r"""<(?:script|img|iframe|source)[^>]+src\s*=\s*["'](?:https?:)?//[^"']*""", html
    )
    loads += re.findall(r"""<link[^>]+href\s*=\s*["'](?:https?:)?//[^"']*""", html)
    loads += re.findall(r"""url\(\s*["']?(?:https?:)?//[^)]*""", html)
    loads += re.findall(r"@import\s+(?:url\()?[\"']?(?:https?:)?//", html)
    return loads


def _dead_links(html: str) -> list[str]:
    from urllib.parse import unquote

    ids = {unescape(i) for i in re.findall(r'\sid="([^"]+)"', html)}
    hrefs = {unescape(t) for t in re.findall(r'href="#([^"]+)"', html)}
    # a browser tries the fragment as written, then percent-decoded (HTML, "indicated part")
    return sorted(t for t in hrefs if t not in ids and unquote(t) not in ids)


def _chapter_titles(r) -> list[str]:
    import nbformat

    from analysis.execute import front_matter

    return [
        str(front_matter(nbformat.read(p, as_version=4)).get("title", p.stem))
        for p in sorted((r.version_dir / "notebooks").glob("*.ipynb"))
    ]


def test_quarto_renders_and_books_each_phase(quarto_report) -> None:
    m = json.loads((quarto_report.version_dir / "manifest.json").read_text())
    env = (paths.ROOT / "environment.yml").read_text(encoding="utf-8")
    pin = re.search(r"^\s*-\s*quarto\s*==?\s*([\d.]+)\s*$", env, re.MULTILINE)
    assert m["renderer"]["name"] == "quarto"
    # the Quarto the tests ran with is the one environment.yml gives users
    assert pin and m["renderer"]["version"] == pin.group(1), "update environment.yml's pin"
    t = m["timings_s"]
    # one quarto call per format: both phases carry their own time, none is lumped in
    assert t["html"] > 0 and t["pdf"] > 0
    assert t["total"] >= t["execute"] + t["html"] + t["pdf"] - 0.01
    label = quarto_report.renderer["label"]
    assert label.startswith("Quarto ")
    assert f"Rendered by {label}" in _html(quarto_report)


def test_same_chapters_and_key_figures_as_the_fallback(quarto_report, rendered_report) -> None:
    q = json.loads((quarto_report.version_dir / "results.json").read_text())
    f = json.loads((rendered_report.version_dir / "results.json").read_text())

    def figures(res: dict) -> dict:  # the version id differs by construction
        return {
            ch: {k: v for k, v in keys.items() if k != "version"}
            for ch, keys in res["chapters"].items()
        }

    assert figures(q) == figures(f)
    titles = _chapter_titles(quarto_report)
    assert titles == _chapter_titles(rendered_report)
    for r in (quarto_report, rendered_report):
        html, pdf = _flat(_html(r)), _flat(" ".join(_pdf_pages(r)))
        positions = [html.find(t) for t in titles]
        assert -1 not in positions and positions == sorted(positions), r.renderer["name"]
        for t in titles:
            assert _flat(t) in pdf, (r.renderer["name"], t)
        # the summary's recommendations (accelerator ids, vendors) are in both documents
        for key, value in q["chapters"]["00-summary"].items():
            if key.startswith("rec_") and isinstance(value, str) and value:
                assert value in pdf, (r.renderer["name"], key, value)
    q_figs = FIGURE_CAPTION.findall(" ".join(_pdf_pages(quarto_report)))
    f_figs = FIGURE_CAPTION.findall(" ".join(_pdf_pages(rendered_report)))
    assert len(q_figs) == len(f_figs) > 0


@pytest.mark.parametrize("which", ["quarto_report", "rendered_report"])
def test_no_external_resources_and_links_resolve(which: str, request) -> None:
    r = request.getfixturevalue(which)
    html = _html(r)
    assert _external_loads(html) == []
    assert _dead_links(html) == []
    # the TCO chapter's links into the appendix register land on the register's rows
    assert 'href="#A-utilization"' in html and 'id="A-utilization"' in html
    for ch in r.chapters:
        assert f'href="#{ch}"' in html  # contents
    assert "injected-parameters" not in html and "# Parameters" not in html


def test_quarto_pdf_is_one_document(quarto_report) -> None:
    reader = PdfReader(quarto_report.version_dir / "report.pdf")
    pages = [p.extract_text() for p in reader.pages]
    label = quarto_report.renderer["label"]
    assert all(f"Rendered by {label}" in _flat(p) for p in pages)  # footer on every page
    # continuous page numbers in the footer: page i says "page i of N"
    n = len(pages)
    assert all(re.search(rf"page {i} of {n}\b", p) for i, p in enumerate(pages, 1))
    # the title block and the memo on page 1, then one contents
    assert quarto_report.version in _flat(pages[0]) and "Contents" not in pages[0]
    assert sum(p.lstrip().startswith("Contents") for p in pages) == 1
    # figures numbered 1..n across chapters (each chapter its own document restarts at 1)
    numbers = [int(n) for n in FIGURE_CAPTION.findall(" ".join(pages))]
    assert numbers and numbers == list(range(1, len(numbers) + 1))
    # internal links (contents, cross-chapter) point into the document
    internal = 0
    for page in reader.pages:
        for annot in page.get("/Annots") or []:
            a = annot.get_object()
            action = a.get("/A")
            if "/Dest" in a or (action is not None and action.get("/S") == "/GoTo"):
                internal += 1
    assert internal >= len(quarto_report.chapters)
    assert abs(float(reader.pages[0].mediabox.width) - 595.3) < 2  # A4


@pytest.mark.browser
@pytest.mark.skipif(find_chromium() is None, reason="Chromium not installed (make system-deps)")
def test_quarto_charts_draw_offline_in_a_browser(quarto_report) -> None:
    import nbformat

    from analysis import charts

    expected = sum(
        charts.VEGALITE_MIME in o.get("data", {})
        for p in sorted((quarto_report.version_dir / "notebooks").glob("*.ipynb"))
        for c in nbformat.read(p, as_version=4).cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert expected > 0
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("browser_check.py")),
            str(quarto_report.version_dir / "index.html"),
            str(expected),
            find_chromium(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["drawn"] and seen["svg_marks"] == seen["charts"] == expected, seen
    assert seen["external_requests"] == []
    assert seen["console_errors"] == []
    assert seen["folds"] > 0 and seen["code_hidden_before"] and seen["code_visible_after"]
