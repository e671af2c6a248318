"""Screenshots of a rendered report for docs/screenshots/ (and an overflow check).

Usage: .venv/bin/python scripts/screenshots.py [REPORT_DIR] [OUT_DIR]
(defaults: reports/default/latest, docs/screenshots). Needs Chromium and pdftoppm.
Writes summary.png (first screen of the HTML report), chapter-inference.png (the inference
chapter's opening) and pdf-page1.png (the PDF's first page), and prints every output that
is wider than its column (horizontal overflow), which should be none.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from analysis import paths
from analysis.render import CHROMIUM_FLAGS, find_chromium

# The renderer's Chromium flags; Playwright sets headless mode itself.
FLAGS = [f for f in CHROMIUM_FLAGS if f != "--headless"]
OVERFLOW_JS = """() => [
  ...document.querySelectorAll('.jp-OutputArea-output, .gpu-chart, main > *')]
  .filter(e => e.scrollWidth > e.clientWidth + 2)
  .map(e => (e.closest('.jp-Cell')?.id || e.className)
    + ': ' + e.scrollWidth + ' > ' + e.clientWidth)"""


def main(report: Path, out: Path) -> None:
    """Write the three screenshots of ``report`` into ``out``; print overflowing outputs."""
    out.mkdir(parents=True, exist_ok=True)
    index = (report / "index.html").resolve()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(index.as_uri(), wait_until="load")
        page.wait_for_function("document.querySelectorAll('svg.marks').length > 0", timeout=20000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / "summary.png"))
        top = page.evaluate(
            "document.getElementById('30-inference-tiers').closest('section')"
            ".getBoundingClientRect().top + window.scrollY"
        )
        page.screenshot(
            path=str(out / "chapter-inference.png"),
            full_page=True,
            clip={"x": 0, "y": top - 10, "width": 1280, "height": 1600},
        )
        for line in page.evaluate(OVERFLOW_JS):
            print("overflow:", line)
        browser.close()
    pdf_page1(report, out)
    for name in ("summary.png", "chapter-inference.png", "pdf-page1.png"):
        print(f"{out / name}: {(out / name).stat().st_size // 1024} KB")


def _typst_source(report: Path) -> Path | None:
    """The Typst source Quarto kept for this report version (its build folder), if any."""
    import json

    manifest = json.loads((report / "manifest.json").read_text(encoding="utf-8"))
    sc = manifest.get("scenario")
    scenario = (sc.get("name") if isinstance(sc, dict) else sc) or report.resolve().parent.name
    found = sorted(
        (paths.ROOT / "_build" / scenario).glob("*/quarto/report-pdf.typ"),
        key=lambda p: p.stat().st_mtime,
    )
    return found[-1] if found else None


def pdf_page1(report: Path, out: Path) -> None:
    """PDF page 1 as PNG: pdftoppm when installed, else Quarto's Typst on the kept source."""
    import shutil

    typ = _typst_source(report)
    if shutil.which("pdftoppm") is None and typ is not None and shutil.which("quarto"):
        with tempfile.TemporaryDirectory() as tmp:
            # Quarto's bundled typst CLI has no page selection: every page, keep the first.
            cmd = ["quarto", "typst", "compile", "-f", "png", "--ppi", "80"]
            subprocess.run([*cmd, typ.name, f"{tmp}/p{{0p}}.png"], cwd=typ.parent, check=True)
            sorted(Path(tmp).glob("p*.png"))[0].replace(out / "pdf-page1.png")
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                "pdftoppm",
                "-r",
                "80",
                "-png",
                "-f",
                "1",
                "-l",
                "1",
                str(report / "report.pdf"),
                f"{tmp}/p",
            ],
            check=True,
        )
        Path(next(Path(tmp).glob("p*.png"))).replace(out / "pdf-page1.png")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        Path(args[0]) if args else paths.REPORTS / "default" / "latest",
        Path(args[1]) if len(args) > 1 else paths.ROOT / "docs" / "screenshots",
    )
