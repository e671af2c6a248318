"""The rendered report as a reader gets it: the memo on page one, no dumps, what-if sliders.

Both renderers where available (``rendered_report`` is the fallback, ``quarto_report``
Quarto). Marked slow: they use the CI scenario's rendered report.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from analysis import readcheck
from analysis.render import PDF_AUTHOR, find_chromium

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]

RENDERERS = ["rendered_report", "quarto_report"]


@pytest.fixture(params=RENDERERS)
def report(request):
    return request.getfixturevalue(request.param)


def test_reading_path_has_no_internal_names_or_raw_values(report) -> None:
    d = report.version_dir
    leaks = readcheck.report_leaks(d / "index.html", d / "report.pdf")
    assert leaks == [], "\n".join(leaks[:20])


def test_key_results_are_not_shown_but_every_table_downloads(report) -> None:
    html = (report.version_dir / "index.html").read_text(encoding="utf-8")
    assert 'class="key-results"' not in html
    tables = html.count('class="report-table"')
    assert tables > 0 and html.count('class="table-download"') == tables
    chapters = json.loads((report.version_dir / "results.json").read_text())["chapters"]
    assert "rec_training" in chapters["00-summary"]  # the figures stay in results.json


def test_html_ids_are_unique(report) -> None:
    html = (report.version_dir / "index.html").read_text(encoding="utf-8")
    body = re.sub(r"<script\b.*?</script>", "", html, flags=re.DOTALL)
    ids = Counter(re.findall(r'\sid="([^"]+)"', body) + re.findall(r"\sid='([^']+)'", body))
    assert [k for k, n in ids.items() if n > 1] == []


def test_pdf_page_one_is_the_memo_with_metadata_bookmarks_and_footer(report) -> None:
    from pypdf import PdfReader

    reader = PdfReader(report.version_dir / "report.pdf")
    # NFKC: PDF text carries ligatures ("ﬂips" for "flips")
    first = " ".join(unicodedata.normalize("NFKC", reader.pages[0].extract_text()).split())
    recs = json.loads((report.version_dir / "results.json").read_text())["chapters"]["00-summary"]
    calls = [k for k in recs if re.fullmatch(r"rec_(training|tier\d+)", k)]
    assert calls
    for key in calls:
        if recs[key] in ("AMD", "NVIDIA"):
            margin = abs(recs[f"{key}_cost_margin_pct"])
            assert f"{margin:.0f}%" in first, (key, first[:400])
    decided = sum(recs[k] in ("AMD", "NVIDIA") for k in calls)
    assert first.count("likely; flips if") == decided, first
    meta = reader.metadata
    assert meta.title and meta.title != "Notebook"
    assert meta.author == PDF_AUTHOR and meta.subject is not None
    assert len(reader.outline) >= len(report.chapters)
    n = len(reader.pages)
    last = " ".join(unicodedata.normalize("NFKC", reader.pages[-1].extract_text()).split())
    assert re.search(rf"page {n} of {n}", last), last[-200:]
    assert "Scenario ci" in last


@pytest.mark.browser
@pytest.mark.skipif(find_chromium() is None, reason="Chromium not installed (make system-deps)")
def test_sliders_recompute_costs_in_the_browser(report) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("slider_check.py")),
            str(report.version_dir / "index.html"),
            find_chromium(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["drawn"] and seen["svg"] == seen["charts"] > 0, seen
    assert seen["console_errors"] == [], seen["console_errors"]
    assert seen["overflow_px"] <= 0, seen["overflow_px"]
    # two charts (frontier, cost per token), each with an AMD and an NVIDIA price slider
    assert len(seen["labels_before"]) >= 2 and seen["moved"] >= 4, seen
    for before, after in zip(seen["labels_before"], seen["labels_after"], strict=True):
        assert before and before != after, (before, after)
