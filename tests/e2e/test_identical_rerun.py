"""An identical re-run of the CI scenario reports 0 changed key figures, end to end.

The issue this guards: a second run with the same inputs said "14 key figures changed"
(unrounded values against their rounded published copy, plus the summary's own counters)
while ``analysis diff`` said none. Here the CI scenario is published twice for real into
one temporary reports folder (HTML only, to keep it fast) and the second version's summary
(its key results and the sentence in its HTML) and ``python -m analysis diff`` must agree
on zero changes.

The two runs share an empty derived store of their own (:mod:`analysis.derived_store`):
the first computes the validations and writes them, the second reads them back, as a
user's re-run does, so the same comparison also shows that what is read back is what was
computed. That each fresh computation repeats itself is the nbval goldens' check.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import derived_store, paths, report

pytestmark = pytest.mark.slow


def _run(reports: Path, build: Path) -> report.RunResult:
    return report.run_report(
        paths.CI_PARAMS,
        out_dir=reports,
        formats=("html",),
        jobs=2,
        notebooks_dir=paths.NOTEBOOKS,
        build_root=build,
        progress=False,
    )


def _entries(store: Path) -> dict[Path, tuple[int, int]]:
    """Each stored entry's inode and modification time (a rewrite by rename changes both)."""
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in store.rglob("*.pkl")}


def test_identical_rerun_reports_zero_changed_figures(tmp_path: Path, monkeypatch) -> None:
    reports, build = tmp_path / "reports", tmp_path / "_build"
    store = tmp_path / "store"
    monkeypatch.setenv(derived_store.ENV, str(store))
    first = _run(reports, build)
    written = _entries(store)
    assert written, "the first run stored no validation"
    # what a killed run leaves: its staging folder and temporary latest link (the pid is
    # above pid_max's default, so no such process); the next run removes both
    dead = 2**22 + 12345
    stale = [
        reports / "ci" / f".tmp-20260101T000000000000Z-{dead}",
        reports / "ci" / f".latest-{dead}-1",
    ]
    (stale[0] / "notebooks").mkdir(parents=True)
    stale[1].symlink_to(first.version)
    second = _run(reports, build)
    # the second run read the stored validations back and rewrote none of them
    assert _entries(store) == written
    assert not [p for p in stale if p.exists() or p.is_symlink()]
    assert second.version_dir != first.version_dir
    assert second.version.startswith("v0002-")

    summary = second.results["chapters"]["00-summary"]
    assert summary["changes_since_previous"] == 0
    assert summary["recommendations_flipped"] == 0
    page = html.unescape(re.sub(r"\s+", " ", (second.version_dir / "index.html").read_text()))
    assert f"No key figure changed since {first.version}." in page
    assert "key figures changed since" not in page

    manifest = json.loads((second.version_dir / "manifest.json").read_text())
    assert manifest["previous_version"] == first.version

    res = subprocess.run(
        [sys.executable, "-m", "analysis", "diff", str(first.version_dir), str(second.latest)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    header = f"{first.version} -> {second.version}"
    assert res.stdout.splitlines() == [header, "No key figure changed."]
    assert report.diff_versions(first.version_dir, second.version_dir).changes == []
