"""Per-prediction uncertainty by case (issue 16, item 7): which case, which error, which sigma."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import inference, params, paths, tco
from analysis.inference import uncertainty


def _held(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    """A held-out frame: (accelerator, vendor, benchmark, ape_pct) rows, all predicted."""
    df = pd.DataFrame(rows, columns=["accelerator", "vendor", "benchmark", "ape_pct"])
    df["precision"] = "fp8"
    df["measured"] = 100.0
    df["predicted"] = 100.0 * (1 + df["ape_pct"] / 100.0)
    df["holdout"] = "x"
    return df


def _validations() -> dict[str, pd.DataFrame]:
    rows = [
        ("MI355X", "AMD", "llama2-70b-99.9", 0.0),
        ("B200", "NVIDIA", "llama2-70b-99.9", 0.0),
        ("B200", "NVIDIA", "llama3.1-405b", 0.0),
    ]
    frames = {}
    for scheme, (amd, nv) in {
        "round": (8.0, 20.0),
        "accelerator": (12.0, 10.0),
        "workload": (30.0, 5.0),
    }.items():
        frames[scheme] = _held([(a, v, b, amd if v == "AMD" else nv) for a, v, b, _ in rows])
    return frames


def test_cases_follow_the_rows_and_take_the_larger_of_round_and_their_scheme():
    cases = uncertainty.prediction_cases(
        ["MI355X", "MI325X", "B200", "H200"], "llama3.1-405b", validations=_validations()
    ).set_index("accelerator")
    # MI355X has rows, AMD never ran 405B: new workload -> max(round 8, workload 30)
    assert cases.at["MI355X", "case"] == "new workload for this vendor"
    assert cases.at["MI355X", "median_ape_pct"] == pytest.approx(30.0)
    # MI325X: no rows at all, AMD never ran it: both -> max(8, 12, 30)
    assert cases.at["MI325X", "case"] == "new accelerator and new workload for this vendor"
    assert cases.at["MI325X", "median_ape_pct"] == pytest.approx(30.0)
    # B200 ran 405B: measured combination -> NVIDIA's round error
    assert cases.at["B200", "case"] == "measured combination"
    assert cases.at["B200", "scheme"] == "round"
    assert cases.at["B200", "median_ape_pct"] == pytest.approx(20.0)
    # H200: NVIDIA ran 405B on B200 only: new accelerator -> max(round 20, accelerator 10)
    assert cases.at["H200", "case"] == "new accelerator for this workload"
    assert cases.at["H200", "median_ape_pct"] == pytest.approx(20.0)
    assert cases.at["H200", "scheme"] == "round"


def test_sigma_is_the_lognormal_whose_median_abs_log_error_is_the_ape():
    cases = uncertainty.prediction_cases(["B200"], "llama2-70b", validations=_validations())
    sigma = float(cases["log_sigma"].iloc[0])
    z = np.random.default_rng(0).standard_normal(200_000)
    assert np.median(np.abs(np.exp(sigma * z) - 1)) * 100 == pytest.approx(20.0, rel=0.05)


def test_extrapolating_never_narrows_the_spread_on_the_real_validation():
    sc = params.load_scenario(paths.PARAMS / "scenarios" / "moe-deepseek-r1-rack-scale.yaml")
    cases = inference.prediction_cases(sc.accelerators, sc.inference.model)
    assert set(cases["case"]) <= set(uncertainty.CASE_SCHEMES)
    compared = 0
    for vendor, g in cases.groupby("vendor"):
        measured = g.loc[g["case"] == "measured combination", "median_ape_pct"]
        other = g.loc[g["case"] != "measured combination", "median_ape_pct"]
        if len(measured) and len(other):
            assert other.min() >= measured.max() - 1e-9, vendor
            compared += 1
    assert compared  # the scenario has a vendor with both kinds of case


def test_the_monte_carlo_draws_each_accelerator_with_its_case_sigma():
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    cases = inference.prediction_cases(sc.accelerators, sc.inference.model)
    inp = tco.with_throughput_sigmas(tco.cost_inputs(sc), inference.case_sigmas(cases))
    drawn = {a: s for a, s in inference.case_sigmas(cases).items() if a in inp.accelerators}
    assert drawn  # the scenario's candidates are costed
    for acc, sig in drawn.items():
        assert inp.inference_log_sigma[acc] == pytest.approx(sig)


def test_case_note_escapes_tier_names():
    cases = uncertainty.prediction_cases(["B200"], "llama2-70b", validations=_validations())
    winners = pd.DataFrame(
        [
            {
                "tier": "<script>x</script>",
                "winner": "B200",
                "margin_pct": 5.0,
                "runner_up_other_vendor": "MI355X",
            }
        ]
    )
    note = inference.case_note(cases, winners)
    assert "<script>" not in note and "B200" in note and "20.0 %" in note


def test_serving_sigmas_are_the_case_sigmas_with_the_teams_residual_on_top():
    from analysis import data, measurements

    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    mc = measurements.calibrate(data.load_measurements(sc.measurements))
    by_case = measurements.case_sigmas(sc)
    team = measurements.throughput_sigmas(mc, sc)
    got = measurements.serving_sigmas(mc, sc)
    assert set(got) == set(by_case) | set(team)
    for acc, sig in got.items():
        assert sig == pytest.approx(team.get(acc, by_case.get(acc)))


def test_case_note_with_tier_errors_names_how_each_winner_was_made():
    cases = uncertainty.prediction_cases(["B200"], "llama2-70b", validations=_validations())
    winners = pd.DataFrame(
        [
            {
                "tier_index": 0,
                "tier": "<25 ms",
                "winner": "B200",
                "margin_pct": 5.0,
                "runner_up_other_vendor": "MI355X",
            }
        ]
    )
    errors = pd.DataFrame(
        [
            {
                "tier_index": 0,
                "accelerator": "B200",
                "vendor": "NVIDIA",
                "deployment_basis": "measured-calibrated",
                "case": "measured combination",
                "case_ape_pct": 20.0,
                "check": "deployment model, one configuration held out (aggregated runs)",
                "check_ape_pct": 70.2,
                "error_source": "check",
                "median_ape_pct": 70.2,
            }
        ]
    )
    note = inference.case_note(cases, winners, errors)
    assert "calibrated" in note and "70.2 %" in note and "20.0 %" in note
    assert "&lt;25 ms" in note or "\\<25 ms" in note


def test_case_note_names_the_teams_runs_and_a_missing_check_plainly():
    cases = uncertainty.prediction_cases(["B200"], "llama2-70b", validations=_validations())
    winners = pd.DataFrame(
        [
            {
                "tier_index": i,
                "tier": f"t{i}",
                "winner": "B200",
                "margin_pct": 5.0,
                "runner_up_other_vendor": "MI355X",
            }
            for i in (0, 1)
        ]
    )
    common = {
        "accelerator": "B200",
        "vendor": "NVIDIA",
        "deployment_basis": "measured",
        "case": "measured combination",
        "case_ape_pct": 20.0,
    }
    errors = pd.DataFrame(
        [
            {
                **common,
                "tier_index": 0,
                "check": "",
                "check_ape_pct": np.nan,
                "error_source": "your measurements",
                "median_ape_pct": np.nan,
            },
            {
                **common,
                "tier_index": 1,
                "check": "some check",
                "check_ape_pct": np.nan,
                "error_source": "case",
                "median_ape_pct": 20.0,
            },
        ]
    )
    lines = inference.case_note(cases, winners, errors).splitlines()[2:]
    assert "your measurements of it set its spread" in lines[0] and "draws" not in lines[0]
    assert "no latency-resolved check" in lines[1] and "nan" not in lines[1]
    assert "round scheme, NVIDIA" in lines[1]
