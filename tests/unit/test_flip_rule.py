"""One flip rule: the version diff and the summary's comparison call out the same flips."""

from __future__ import annotations

import json
import math
from pathlib import Path

from analysis import decision, report, results

OLD = {
    "30-inference-tiers": {
        "tier0_winner_vendor": "AMD",  # flips
        "tier0_winner": "MI355X",  # flips
        "tier1_winner": math.nan,  # no call before: a change, not a flip
        "tier0_margin_pct": 12.0,  # a number behind a call
    },
    "40-tco": {"tier0_cheapest": "MI355X", "tier0_p_amd_cheaper": 0.7},
    "00-summary": {"rec_tier0": "AMD", "rec_tier0_cost_margin_pct": 8.0, "rec_training": None},
}
NEW = {
    "30-inference-tiers": {
        "tier0_winner_vendor": "NVIDIA",
        "tier0_winner": "B200",
        "tier1_winner": "H200",
        "tier0_margin_pct": 3.0,
    },
    "40-tco": {"tier0_cheapest": "B200", "tier0_p_amd_cheaper": 0.4},
    "00-summary": {"rec_tier0": "either", "rec_tier0_cost_margin_pct": -2.0, "rec_training": "AMD"},
}
EXPECTED = {
    ("30-inference-tiers", "tier0_winner_vendor"),
    ("30-inference-tiers", "tier0_winner"),
    ("40-tco", "tier0_cheapest"),
    ("00-summary", "rec_tier0"),
}


def _write(folder: Path, version: str, chapters: dict) -> Path:
    folder.mkdir()
    doc = {"scenario": "t", "version": version, "chapters": chapters}
    (folder / "results.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def test_diff_and_summary_flag_the_same_flips(tmp_path: Path) -> None:
    diff = report.diff_versions(
        _write(tmp_path / "a", "v1", OLD), _write(tmp_path / "b", "v2", NEW)
    )
    by_diff = {(c.chapter, c.key) for c in diff.flipped}
    table = decision.compare_with_previous(NEW, {"chapters": OLD})
    by_summary = {(r.chapter, r.key) for r in table.itertuples() if r.flipped}
    assert by_diff == by_summary == EXPECTED
    # Every changed key is listed by both; only the calls are flips.
    assert {(c.chapter, c.key) for c in diff.changes} == set(
        zip(table.chapter, table.key, strict=True)
    )


def test_is_flip_rule() -> None:
    assert results.is_flip("tier0_winner_vendor", "AMD", "NVIDIA")
    assert not results.is_flip("tier0_winner_vendor", "AMD", "AMD")
    assert not results.is_flip("tier0_winner_vendor", None, "AMD")
    assert not results.is_flip("tier0_winner", math.nan, "H200")
    assert not results.is_flip("tier0_p_amd_cheaper", 0.7, 0.4)
    assert not results.is_flip("rec_tier0_cost_margin_pct", 8.0, -2.0)
