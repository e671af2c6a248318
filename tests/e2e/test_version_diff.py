"""A second version of the CI scenario after one price change: diff, summary section, history.

Reuses the session's rendered CI report (``rendered_report``, xdist group ``report``): its
reports folder is copied, and the changed scenario (same name, a different MI300X GPU-hour
price) is published into the copy, so the shared fixture stays as the other tests expect.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from analysis import paths, report

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("report")]

KEY = "gpu_hour_usd_MI300X"


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _text(fragment: str) -> str:
    txt = html.unescape(re.sub(r"<[^>]+>", " ", fragment))
    return re.sub(r"\s+", " ", txt)


@pytest.fixture(scope="module")
def two_versions(rendered_report, tmp_path_factory: pytest.TempPathFactory):
    """(v1 dir, v2 dir, old price, new price, v1 digests before the second run, second run)."""
    root = tmp_path_factory.mktemp("versions")
    reports = root / "reports"
    shutil.copytree(rendered_report.version_dir.parent.parent, reports, symlinks=True)
    v1 = reports / rendered_report.version_dir.parent.name / rendered_report.version
    before = _digests(v1)
    old = json.loads((v1 / "results.json").read_text())["chapters"]["40-tco"][KEY]
    new = round(old * 0.6, 2)  # a clearly different MI300X price
    doc = yaml.safe_load(paths.CI_PARAMS.read_text())
    doc.setdefault("cost", {})["gpu_hour_usd"] = {"MI300X": new}
    changed = root / "ci-mi300x-price.yaml"
    changed.write_text(yaml.safe_dump(doc, sort_keys=False))
    r2 = report.run_report(
        changed,
        out_dir=reports,
        formats=("html",),
        jobs=2,
        notebooks_dir=paths.NOTEBOOKS,
        build_root=root / "_build",
        progress=False,
    )
    return v1, r2.version_dir, old, new, before, r2


def test_second_version_is_published_next_to_the_first(two_versions) -> None:
    v1, v2, *_, r2 = two_versions
    assert v2.parent == v1.parent and v2 != v1
    assert v2.name.startswith("v0002-") and r2.latest.resolve() == v2.resolve()
    res = json.loads((v2 / "results.json").read_text())
    assert res["scenario"] == "ci"


def test_first_version_untouched(two_versions) -> None:
    v1, _, _, _, before, _ = two_versions
    assert _digests(v1) == before


def test_diff_cli_lists_the_changed_keys(two_versions) -> None:
    v1, v2, old, new, *_ = two_versions
    proc = subprocess.run(
        [sys.executable, "-m", "analysis", "diff", str(v1), str(v2)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=paths.ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = re.sub(r"\s+", " ", proc.stdout)
    assert f"40-tco: {KEY}:" in out
    diff = report.diff_versions(v1, v2)
    changed = {(c.chapter, c.key) for c in diff.changes}
    assert ("40-tco", KEY) in changed
    for chapter, key in changed:
        assert f"{chapter}: {key}:" in out, key
    c = next(c for c in diff.changes if c.key == KEY)
    # the TCO chapter's all-in median GPU-hour follows the configured price
    assert c.old == old and c.new == pytest.approx(new, rel=0.05)
    assert ("FLIPPED" in out) == bool(diff.flipped)


def test_html_summary_names_the_change_and_the_flips(two_versions) -> None:
    v1, v2, old, new, *_ = two_versions
    page = (v2 / "index.html").read_text(encoding="utf-8")
    start = page.index('id="00-summary"')
    end = page.find('id="10-data"', start)
    summary = _text(page[start : end if end > 0 else len(page)])
    i = summary.index("What changed since the previous version")
    section = summary[i:]
    assert v1.name in section  # "... changed since v0001-..."
    assert "first published version" not in section
    c = next(c for c in report.diff_versions(v1, v2).changes if c.key == KEY)
    assert abs(c.new - new) <= 0.05 * new
    assert re.search(rf"{KEY}\s*:\s*{c.old:.4g}\s*->\s*{c.new:.4g}", section), section[:2000]
    # A flip is a decision (a recommendation, winner or cheapest part: text) that changed;
    # a changed probability or margin under a rec_* key is a change, not a flip.
    flips = [
        c
        for c in report.diff_versions(v1, v2).changes
        if report.is_decision_key(c.key) and isinstance(c.old, str) and isinstance(c.new, str)
    ]
    if flips:
        assert "Flipped:" in section
        for c in flips:
            assert c.key in section, c.key
    else:
        assert "No recommendation, winner or cheapest part flipped" in section
    res = json.loads((v2 / "results.json").read_text())["chapters"]["00-summary"]
    assert res["changes_since_previous"] >= 1
    assert (res["recommendations_flipped"] > 0) == bool(flips)
