"""Identical re-runs report nothing changed; diff agrees; output, lock and cleanup helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from analysis import decision, report, results


def _results_json(tmp: Path, chapters: dict, tiers: list[str], scenario: str = "ci") -> Path:
    d = tmp / f"v-{len(list(tmp.iterdir()))}"
    d.mkdir()
    (d / "results.json").write_text(
        json.dumps({"scenario": scenario, "version": d.name, "tiers": tiers, "chapters": chapters})
    )
    return d


def test_identical_rerun_reports_zero_changes(tmp_path: Path) -> None:
    """Unrounded current values vs their rounded published copy, plus the summary's counters."""
    raw = {"40-tco": {"tier0_cost_per_mtok_H200": 0.123456789, "gpu_hour_usd_H200": 3.0}}
    summary = {"rec_tier0": "AMD", "rec_tier0_p_amd_cheaper": 0.876543219}
    published = {
        ch: {k: results.normalize(v) for k, v in vals.items()}
        for ch, vals in {**raw, "00-summary": summary}.items()
    }
    published["00-summary"].update(changes_since_previous=14, recommendations_flipped=2)
    published["90-appendix"] = {"version": "v0001-x"}
    previous = {"version": "v0001-x", "tiers": ["a", "b"], "chapters": published}
    current = {**raw, "00-summary": summary, "90-appendix": {"version": "v0002-y"}}
    changes = decision.compare_with_previous(current, previous, ["a", "b"])
    assert changes.empty
    assert (
        decision.key_results(decision.recommend.__globals__["pd"].DataFrame(), changes)[
            "changes_since_previous"
        ]
        == 0
    )
    a = _results_json(tmp_path, published, ["a", "b"])
    b = _results_json(
        tmp_path, {**current, "00-summary": {**summary, "changes_since_previous": 0}}, ["a", "b"]
    )
    assert report.diff_versions(a, b).changes == []


def test_what_changed_equals_diff_and_matches_tiers_by_name(tmp_path: Path) -> None:
    old = {"30-x": {"tier0_winner": "H200", "tier1_winner": "MI300X", "tier1_margin_pct": 5.0}}
    new = {"30-x": {"tier0_winner": "MI300X", "tier1_winner": "H200", "tier1_margin_pct": 7.0}}
    # the two tiers swapped places: tier "fast" is tier0 before and tier1 after
    a = _results_json(tmp_path, old, ["fast", "slow"])
    b = _results_json(tmp_path, new, ["slow", "fast"])
    d = report.diff_versions(a, b)
    prev = json.loads((a / "results.json").read_text())
    summary = decision.compare_with_previous(new, prev, ["slow", "fast"])

    def none(v):
        return None if v != v else v  # pandas shows a missing value as NaN

    assert [(c.chapter, c.key, c.old, c.new) for c in d.changes] == [
        (r.chapter, r.key, none(r.previous), none(r.current)) for r in summary.itertuples()
    ]
    # winners follow their tier's name (no phantom flip); the "slow" tier's margin moved
    # from index 1 to 0 and the "fast" tier's appeared
    assert [(c.key, c.old, c.new) for c in d.changes] == [
        ("tier0_margin_pct", 5.0, None),
        ("tier1_margin_pct", None, 7.0),
    ]


def test_diff_refuses_two_scenarios(tmp_path: Path) -> None:
    a = _results_json(tmp_path, {}, [], "ci")
    b = _results_json(tmp_path, {}, [], "default")
    with pytest.raises(report.ReportError, match="different scenarios"):
        report.diff_versions(a, b)


def test_output_folder_checked_before_execution(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(report.ReportError, match="is a file"):
        report.check_output_folder(f / "ci")
    with pytest.raises(report.ReportError, match="MB free"):
        report.check_output_folder(tmp_path / "ok", min_free=1 << 62)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root ignores permissions
            pytest.skip("running as root: a read-only folder is writable")
        with pytest.raises(report.ReportError, match="permission denied"):
            report.check_output_folder(ro / "ci")
    finally:
        ro.chmod(0o700)


def test_stale_staging_and_old_builds_are_removed(tmp_path: Path) -> None:
    dead = 2**22 + 12345  # above pid_max's default: no such process
    (tmp_path / f".tmp-20260101T000000000000Z-{dead}").mkdir()
    (tmp_path / f".tmp-20260101T000000000000Z-{os.getpid()}").mkdir()
    (tmp_path / f".latest-{dead}-1").symlink_to("nowhere")
    removed = report.remove_stale_staging(tmp_path)
    assert sorted(p.name[:5] for p in removed) == [".late", ".tmp-"]
    assert (tmp_path / f".tmp-20260101T000000000000Z-{os.getpid()}").exists()
    builds = tmp_path / "build"
    for i in range(8):
        (builds / f"2026010{i}T000000000000Z-{dead}").mkdir(parents=True)
    report.prune_builds(builds, keep=3)
    assert sorted(p.name[7] for p in builds.iterdir()) == ["5", "6", "7"]


def test_scenario_lock_is_exclusive(tmp_path: Path) -> None:
    import fcntl

    with report.scenario_lock(tmp_path):
        with (tmp_path / ".lock").open("a") as fh, pytest.raises(BlockingIOError):
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with (
            pytest.raises(report.ReportError, match="another run"),
            report.scenario_lock(tmp_path, timeout=0.3),
        ):
            pass
