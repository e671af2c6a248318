"""End to end: the CI scenario rendered once per session; what the reader gets.

Marked slow (it executes chapters and renders). The browser test opens the HTML in
headless Chromium (Playwright driving the system Chromium; no browser download).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from analysis import charts, report
from analysis.render import DETAIL_OPTION, cell_options, find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]


def _chart_count(version_dir: Path, *, pdf: bool = False) -> int:
    """Charts in the executed chapters; ``pdf``: without detail cells (HTML-only)."""
    n = 0
    for p in sorted((version_dir / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(p, as_version=4)
        n += sum(
            charts.VEGALITE_MIME in o.get("data", {})
            for c in nb.cells
            if c.cell_type == "code" and not (pdf and DETAIL_OPTION in cell_options(c.source))
            for o in c.outputs
        )
    return n


def _chapter_titles(version_dir: Path) -> list[str]:
    from analysis.execute import front_matter

    return [
        str(front_matter(nbformat.read(p, as_version=4)).get("title", p.stem))
        for p in sorted((version_dir / "notebooks").glob("*.ipynb"))
    ]


def test_published_layout(rendered_report) -> None:
    r = rendered_report
    assert r.latest.is_symlink() and r.latest.resolve() == r.version_dir.resolve()
    assert re.fullmatch(r"v0001-\d{8}T\d{6}Z-[0-9a-f]{8}", r.version)
    for name in ("index.html", "report.pdf", "manifest.json", "results.json"):
        assert (r.version_dir / name).is_file(), name
    assert not list(r.version_dir.parent.glob(".tmp-*"))
    assert set(r.timings) >= {"execute", "html", "pdf", "total"}


def test_manifest_records_inputs_outputs_and_provenance(rendered_report) -> None:
    m = json.loads((rendered_report.version_dir / "manifest.json").read_text())
    assert m["version"] == rendered_report.version
    assert m["inputs"]["params"]["path"] == "params/ci.yaml"
    assert re.fullmatch(r"[0-9a-f]{64}", m["inputs"]["params"]["sha256"])
    assert m["inputs"]["notebooks"]["files"] and all(
        len(f["sha256"]) == 64 for f in m["inputs"]["notebooks"]["files"]
    )
    assert "files" in m["inputs"]["data"]
    assert {"commit", "dirty"} <= set(m["git"])
    assert m["renderer"]["name"] in {"fallback", "quarto"} and m["renderer"]["version"]
    assert {"execute", "html", "pdf", "total"} <= set(m["timings_s"])
    names = {o["path"] for o in m["outputs"]}
    assert {"index.html", "report.pdf", "results.json"} <= names
    assert m["packages"]["papermill"]


def test_results_json_has_every_chapter(rendered_report) -> None:
    res = json.loads((rendered_report.version_dir / "results.json").read_text())
    assert res["scenario"] == "ci" and res["version"] == rendered_report.version
    assert len(res["chapters"]) == len(rendered_report.chapters)


def test_html_is_self_contained_and_folds_code(rendered_report) -> None:
    html = (rendered_report.version_dir / "index.html").read_text(encoding="utf-8")
    # nothing is loaded from a host: no src=, stylesheet link, CSS url() or @import pointing
    # at one (hyperlinks to cited sources are content, and the Vega bundle's strings are
    # not loads; the browser test checks the requests actually made)
    loads = re.findall(r"""src\s*=\s*["'](?:https?:)?//[^"']*""", html)
    loads += re.findall(r"""<link[^>]+href\s*=\s*["'](?:https?:)?//[^"']*""", html)
    loads += re.findall(r"""url\(\s*["']?(?:https?:)?//[^)]*""", html)
    loads += re.findall(r"@import", html)
    assert loads == []
    assert '<details class="code-fold"><summary>Code</summary>' in html
    assert "injected-parameters" not in html and "# Parameters" not in html
    assert "Rendered by" in html and rendered_report.renderer["label"] in html
    for ch in rendered_report.chapters:
        assert f'href="#{ch}"' in html  # table of contents


@pytest.mark.browser
@pytest.mark.skipif(find_chromium() is None, reason="Chromium not installed (make system-deps)")
def test_charts_draw_offline_in_a_browser(rendered_report) -> None:
    expected = _chart_count(rendered_report.version_dir)
    assert expected > 0
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("browser_check.py")),
            str(rendered_report.version_dir / "index.html"),
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
    assert seen["drawn"], seen
    assert seen["svg_marks"] == seen["charts"] == expected
    assert seen["external_requests"] == []
    assert seen["console_errors"] == []
    assert seen["folds"] > 0 and seen["code_hidden_before"] and seen["code_visible_after"]


def test_pdf_has_every_chapter_and_the_charts(rendered_report) -> None:
    from pypdf import PdfReader

    reader = PdfReader(rendered_report.version_dir / "report.pdf")
    text = "\n".join(page.extract_text() for page in reader.pages)
    flat = re.sub(r"-\s+", "-", re.sub(r"\s+", " ", text))  # a title hyphen-wrapped at a line end
    for title in _chapter_titles(rendered_report.version_dir):
        assert re.sub(r"\s+", " ", title) in flat, title
    images = sum(len(page.images) for page in reader.pages)
    assert images >= _chart_count(rendered_report.version_dir, pdf=True)
    assert mediabox_is_a4(reader.pages[0].mediabox)
    assert all("Rendered by" in p.extract_text() for p in reader.pages)
    assert "Code" not in [line.strip() for line in text.splitlines()]  # code folded away


def mediabox_is_a4(box) -> bool:
    return abs(float(box.width) - 595.3) < 2 and abs(float(box.height) - 841.9) < 2


def test_failed_run_keeps_latest_and_names_the_cell(rendered_report, tmp_path: Path) -> None:
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell(
            "scenario: dict = {}  # injected", metadata={"tags": ["parameters"]}
        ),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("raise RuntimeError('deliberate failure')"),
    ]
    nbformat.write(nb, chapters / "15-fails.ipynb")
    reports = rendered_report.version_dir.parent.parent
    before = sorted(p.name for p in rendered_report.version_dir.parent.iterdir())
    target = rendered_report.latest.readlink()
    with pytest.raises(report.ReportError) as err:
        report.run_report(
            Path(report.paths.CI_PARAMS),
            out_dir=reports,
            notebooks_dir=chapters,
            build_root=tmp_path / "_build",
            progress=False,
        )
    msg = str(err.value)
    assert "15-fails.ipynb" in msg and "cell 3" in msg
    assert "raise RuntimeError('deliberate failure')" in msg and "RuntimeError" in msg
    kept = re.search(r"kept for debugging: (\S+\.ipynb)", msg)
    assert kept and Path(kept.group(1)).is_file()
    assert sorted(p.name for p in rendered_report.version_dir.parent.iterdir()) == before
    assert rendered_report.latest.readlink() == target


def test_second_run_gets_next_version_and_previous_results(rendered_report, tmp_path: Path) -> None:
    """A diff between two versions of the same inputs shows nothing changed."""
    r1 = rendered_report
    diff = report.diff_versions(r1.version_dir, r1.version_dir)
    assert diff.changes == [] and "No key figure changed" in report.format_diff(diff)
