"""Hostile text in a report and concurrent runs: rendered as text, versions self-consistent.

Uses the fixture chapters (seconds) plus one chapter that builds the summary's Markdown,
the recommendation table and the key-results table from the scenario, as the real
summary does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from pypdf import PdfReader

from analysis import paths, render, report

XSS_TITLE = (
    '<script>alert("title")</script> <img src=x onerror=alert("img")> '
    '[click](javascript:alert("link"))'
)
XSS_TIERS = [
    {"name": '<script>alert("tier")</script>', "tpot_ms_max": 50, "ttft_ms_max": 2000},
    {"name": "<img src=x onerror=alert(1)>", "tpot_ms_max": 100, "ttft_ms_max": 5000},
    {"name": "[x](javascript:alert(2))", "tpot_ms_max": None, "ttft_ms_max": None},
]
SUMMARY_CHAPTER = """\
import pandas as pd
from IPython.display import Markdown
from analysis import charts, decision, params, results
sc = params.scenario_from_parameters(scenario)
recs = decision.recommend(sc, {})
display(Markdown(decision.summary_markdown(sc, recs, {"30-inference-tiers": {"x": 1}})))
display(charts.table(recs, "hostile-recs", columns={"label": "Workload", "recommendation": "Call"}))
results.show_key_results("05-hostile", {"title": sc.title, "tier0": sc.inference.tiers[0].name})
"""


def _chapters(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for p in src.glob("*.ipynb"):
        shutil.copy2(p, dst / p.name)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_raw_cell('---\ntitle: "Hostile text"\n---'),
        nbformat.v4.new_code_cell(
            "scenario: dict = {}  # injected", metadata={"tags": ["parameters"]}
        ),
        nbformat.v4.new_code_cell(SUMMARY_CHAPTER),
    ]
    nbformat.write(nb, dst / "05-hostile.ipynb")
    return dst


def _params(tmp: Path, **changes) -> Path:
    doc = yaml.safe_load(paths.CI_PARAMS.read_text())
    doc.update(changes)
    f = tmp / "p.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return f


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("renderer", ["fallback", "quarto"])
def test_hostile_title_and_tiers_render_as_text(tmp_path: Path, monkeypatch, renderer) -> None:
    if renderer == "fallback":
        monkeypatch.setenv("GPU_REPORT_NO_QUARTO", "1")
    else:
        monkeypatch.delenv("GPU_REPORT_NO_QUARTO", raising=False)
        if render.find_quarto() is None:
            pytest.skip("Quarto not on PATH (CI builds it with scripts/quarto.sh)")
    chromium = render.find_chromium()
    if chromium is None:
        pytest.skip("no Chromium")
    doc_tiers = {"tiers": XSS_TIERS}
    inference = {**yaml.safe_load(paths.CI_PARAMS.read_text())["inference"], **doc_tiers}
    params = _params(tmp_path, title=XSS_TITLE, inference=inference)
    chapters = _chapters(paths.TESTS / "e2e" / "fixtures" / "chapters", tmp_path / "ch")
    res = report.run_report(
        params,
        out_dir=tmp_path / "reports",
        formats=("html", "pdf"),
        jobs=2,
        notebooks_dir=chapters,
        build_root=tmp_path / "build",
        progress=False,
    )
    assert (renderer == "quarto") == res.renderer["name"].startswith("quarto"), res.renderer
    index = res.version_dir / "index.html"
    # the fallback prints a page of its own to PDF; Quarto's PDF comes from Typst
    printable = [p for p in [res.build_dir / "html" / "print.html"] if p.is_file()]
    html = index.read_text(encoding="utf-8")
    assert "<script>alert(" not in html and "<img src=x" not in html
    assert 'href="javascript:' not in html.lower()
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("xss_check.py")),
            chromium,
            str(index),
            *map(str, printable),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    pages = json.loads(proc.stdout)
    for page in pages:
        assert page["dialogs"] == [], page["page"]
        assert page["javascript_links"] == 0, page["page"]
        assert '<script>alert("title")</script>' in page["text"], page["page"]
        assert '<script>alert("tier")</script>' in page["text"], page["page"]
        assert "[x](javascript:alert(2))" in page["text"], page["page"]
    pdf_text = " ".join(p.extract_text() for p in PdfReader(res.version_dir / "report.pdf").pages)
    assert 'alert("title")' in pdf_text and "onerror=alert(1)" in pdf_text


RUNNER = """
import sys
from pathlib import Path
from analysis import report
r = report.run_report(Path(sys.argv[1]), out_dir=Path(sys.argv[2]), formats=("html",), jobs=1,
    notebooks_dir=Path(sys.argv[3]), build_root=Path(sys.argv[4]), progress=False)
print(r.version)
"""


@pytest.mark.slow
def test_concurrent_runs_publish_two_self_consistent_versions(tmp_path: Path) -> None:
    params = _params(tmp_path)
    chapters = paths.TESTS / "e2e" / "fixtures" / "chapters"
    env = {**os.environ, "GPU_REPORT_NO_QUARTO": "1"}
    cmd = [
        sys.executable,
        "-c",
        RUNNER,
        str(params),
        str(tmp_path / "reports"),
        str(chapters),
        str(tmp_path / "build"),
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    printed = sorted(o[0].strip().splitlines()[-1] for o in outs)
    scenario_dir = tmp_path / "reports" / "ci"
    versions = sorted(p.name for p in scenario_dir.iterdir() if report.VERSION_DIR.match(p.name))
    assert versions == printed and len(set(versions)) == 2
    assert [v[:5] for v in versions] == ["v0001", "v0002"]
    for v in versions:
        d = scenario_dir / v
        results = json.loads((d / "results.json").read_text())
        manifest = json.loads((d / "manifest.json").read_text())
        assert results["version"] == manifest["version"] == v
        assert results["chapters"]["00-fixture-summary"]["version"] == v
        html = (d / "index.html").read_text()
        assert v in html and "pending-version" not in html
        other = next(x for x in versions if x != v)
        assert other not in html
    assert (scenario_dir / "latest").readlink().name == versions[-1]
    assert not [p for p in scenario_dir.iterdir() if p.name.startswith(".tmp-")]
