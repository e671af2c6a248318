"""The key-results schema: contracts.md is generated from it, the run checks against it."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import nbformat
import pytest

from analysis import execute, keys, params, paths, results
from analysis.errors import KeyResultsError

GOLDENS = paths.TESTS / "notebooks" / "goldens"
CI = params.load_scenario(paths.PARAMS / "ci.yaml")
CTX = keys.KeyContext.from_scenario(CI)


def _golden_results() -> dict[str, dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for path in sorted(GOLDENS.glob("*.ipynb")):
        found.update(results.extract_key_results(nbformat.read(path, as_version=4)))
    return found


GOLDEN = _golden_results()


def test_contracts_md_is_generated_from_the_schema() -> None:
    current = paths.CONTRACTS.read_text(encoding="utf-8")
    assert current == keys.contracts_with_keys(current), (
        "docs/contracts.md's key results are stale: run `make contracts`"
    )
    for spec in keys.KEYS:
        assert f"`{spec.pattern}`" in current


def test_every_bundled_chapter_has_a_schema() -> None:
    bundled = {c.id for c in execute.discover_chapters(paths.NOTEBOOKS)}
    assert bundled == set(keys.chapters())
    assert set(GOLDEN) == bundled  # the goldens record every chapter's key results


@pytest.mark.parametrize("chapter", sorted(GOLDEN))
def test_the_goldens_key_results_pass(chapter: str) -> None:
    # The goldens run params/ci.yaml (35-your-measurements: plus the bundled measurements,
    # which changes neither the tiers nor the candidates).
    assert keys.problems(chapter, GOLDEN[chapter], CTX) == []


def test_a_missing_required_key_fails_naming_chapter_and_key() -> None:
    res = dict(GOLDEN["40-tco"])
    del res["tier1_cost_ratio"]
    with pytest.raises(
        KeyResultsError, match=r"chapter 40-tco: .*missing required key 'tier1_cost_ratio'"
    ):
        keys.check_chapter("40-tco", res, CTX)
    # Per accelerator: one candidate's figure gone is one missing key.
    res = dict(GOLDEN["30-inference-tiers"])
    del res["tier2_tok_s_gpu_MI325X"]
    assert keys.problems("30-inference-tiers", res, CTX) == [
        "missing required key 'tier2_tok_s_gpu_MI325X' (Output tokens/s per GPU within the "
        "tier's bounds (None: infeasible))"
    ]


def test_a_nan_in_a_decision_key_fails() -> None:
    for value in (math.nan, None):
        res = {**GOLDEN["00-summary"], "rec_tier0": value}
        with pytest.raises(
            KeyResultsError, match=r"chapter 00-summary: .*key 'rec_tier0' is NaN/None where a call"
        ):
            keys.check_chapter("00-summary", res, CTX)


def test_a_nan_in_a_required_number_fails_but_not_where_none_is_allowed() -> None:
    res = {**GOLDEN["10-data"], "max_memory_shipping_gb": math.nan}
    assert keys.problems("10-data", res, CTX) == [
        "key 'max_memory_shipping_gb' is NaN/None where a number is needed (Its HBM capacity)"
    ]
    # An infeasible part has no throughput: None is its value, not a gap.
    res = {**GOLDEN["30-inference-tiers"], "tier0_tok_s_gpu_H100-SXM": None}
    assert keys.problems("30-inference-tiers", res, CTX) == []


def test_an_unknown_key_fails() -> None:
    res = {**GOLDEN["20-training-scaling"], "train_winer": "H200"}
    with pytest.raises(
        KeyResultsError,
        match=r"unknown key 'train_winer': it matches no key pattern of 20-training-scaling",
    ):
        keys.check_chapter("20-training-scaling", res, CTX)
    # A key of another chapter is unknown here too.
    assert keys.problems("15-claims", {**GOLDEN["15-claims"], "mode": "buy"}, CTX) != []


def test_a_value_of_the_wrong_kind_fails() -> None:
    res = {**GOLDEN["15-claims"], "claims_total": "53"}
    assert keys.problems("15-claims", res, CTX) == [
        "key 'claims_total' should be int, got str '53'"
    ]
    assert keys.problems("40-tco", {**GOLDEN["40-tco"], "mode": True}, CTX) != []


def test_a_chapter_the_schema_does_not_know_is_not_checked() -> None:
    assert keys.problems("20-fixture-tiers", {"anything": 1}, CTX) == []


def test_the_run_checks_each_chapter_as_it_finishes(tmp_path: Path) -> None:
    parameters = params.scenario_to_parameters(CI)
    execute.check_key_results({"15-claims": GOLDEN["15-claims"]}, parameters, tmp_path / "nb")
    broken = {"15-claims": {k: v for k, v in GOLDEN["15-claims"].items() if k != "claims_total"}}
    with pytest.raises(
        KeyResultsError, match=r"15-claims.*'claims_total'.*executed notebook: .*nb"
    ):
        execute.check_key_results(broken, parameters, tmp_path / "nb")
    # The scenario decides which keys must exist: a third tier's keys in a two-tier scenario.
    two = CI.model_copy(
        update={"inference": CI.inference.model_copy(update={"tiers": CI.inference.tiers[:2]})}
    )
    ctx = keys.KeyContext.from_scenario(two)
    assert ctx.tiers == 2
    assert keys.problems("30-inference-tiers", GOLDEN["30-inference-tiers"], ctx) == []
    assert keys.problems("30-inference-tiers", GOLDEN["30-inference-tiers"], CTX) == []
    more = keys.KeyContext(tiers=4, accelerators=CTX.accelerators)
    assert "missing required key 'tier3_winner'" in "; ".join(
        keys.problems("30-inference-tiers", GOLDEN["30-inference-tiers"], more)
    )


def test_the_flip_rule_reads_its_calls_from_the_schema() -> None:
    calls = {k for s in keys.KEYS if s.decision for k in s.expand(CTX)}
    others = {k for s in keys.KEYS if not s.decision and s.required for k in s.expand(CTX)}
    assert calls and others
    assert all(results.is_decision_key(k) for k in calls)
    assert not any(results.is_decision_key(k) for k in others)
    assert results.is_flip("tier0_cheapest", "MI325X", "B200")
    assert results.is_flip("plan_cheapest", "all-NVIDIA", "split")  # a change of fleet plan
    assert not results.is_flip("plan_p_cheapest", 0.6, 0.4)
    assert not results.is_flip("tier0_winner_public", "H200", "MI300X")  # not a call


def test_no_two_specs_of_a_chapter_claim_the_same_key() -> None:
    wide = keys.KeyContext(tiers=3, accelerators=CTX.accelerators)
    for chapter in keys.chapters():
        specs = keys.specs_of(chapter)
        for a, b in itertools.combinations(specs, 2):
            clash = (
                [k for k in a.expand(wide) if b.matches(k)]
                if not set(a.placeholders) - keys.EXPANDED
                else []
            )
            assert clash == [], f"{chapter}: {a.pattern} and {b.pattern} both match {clash[:3]}"
    for key in ("scaling_eff_16384_H100-SXM", "correction_MI355X_deepseek-r1_fp4"):
        chapter = "20-training-scaling" if key.startswith("scaling") else "35-your-measurements"
        assert keys.spec_for(chapter, key) is not None


def test_a_spec_is_validated_when_defined() -> None:
    with pytest.raises(ValueError, match="unknown placeholder"):
        keys.KeySpec("x_{vendor}", "number", "", "", "c")
    with pytest.raises(ValueError, match="required pattern"):
        keys.KeySpec("correction_{model}", "number", "", "", "c", required=True)
    with pytest.raises(ValueError, match="a call is text"):
        keys.KeySpec("x_winner", "number", "", "", "c", decision=True)
