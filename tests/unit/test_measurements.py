"""The measurements layer: it pulls the model to the team's runs and narrows the Monte Carlo.

Rows are built in memory in the ingested format (the ingest itself is tested in
tests/data/test_bench_ingest.py), at a known ratio to the model, so each test can state
what the calibration must do with them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import data, execute, inference, measurements, params, paths, tco
from analysis.tables.benchmarks import USER_BENCHMARKS

ACC, MODEL, PREC = "MI300X", "llama2-70b", "fp8"
SC = params.parse_scenario(
    {
        "name": "t",
        "title": "t",
        "candidates": ["H100-SXM", "H200", "MI300X"],
        "inference": {"model": MODEL, "precision": PREC, "isl": 1024, "osl": 256},
        "cost": {"mode": "rent", "mc_draws": 4000},
    }
)


def _model(tpot: float | None, acc: str = ACC) -> float:
    return inference.max_throughput_per_gpu(
        acc, MODEL, precision=PREC, isl=1024, osl=256, tpot_ms=tpot, gpus=8
    )


def _rows(points: list[tuple[float | None, float]], acc: str = ACC, **extra) -> pd.DataFrame:
    """Ingested-format rows: (median TPOT ms, measured tokens/s per GPU) at TP8, 1024/256."""
    recs = []
    for i, (tpot, tok) in enumerate(points):
        rec = dict.fromkeys(USER_BENCHMARKS.column_names)
        rec.update(
            tool="vllm",
            accelerator=acc,
            vendor="AMD" if acc.startswith("MI") else "NVIDIA",
            model=MODEL,
            precision=PREC,
            tp=8,
            gpus=8,
            isl_tokens=1024.0,
            osl_tokens=256.0,
            output_tokens_per_s=tok * 8,
            output_tokens_per_s_per_gpu=tok,
            median_tpot_ms=tpot,
            median_ttft_ms=300.0,
            source_file="f.json",
            source_sha256="0" * 64,
            source_row=i,
            flags="x",
            ingested="2026-12-01",
        )
        rec.update(extra)
        recs.append(rec)
    return pd.DataFrame(recs)


def test_measured_points_pull_the_prediction_within_their_own_spread() -> None:
    # Four repeated runs at one configuration, 30 % above the model, +-2 % run to run.
    m = _model(21.0)
    runs = [m * 1.30 * j for j in (0.98, 1.0, 1.01, 1.02)]
    mc = measurements.calibrate(_rows([(21.0, r) for r in runs]))
    c = mc.factors(MODEL, PREC)[ACC]
    lo, hi = min(runs), max(runs)
    assert not lo <= m <= hi  # the public-data model is outside the runs' spread
    assert lo <= c * m <= hi  # the corrected prediction is inside it
    # ... and the tiers and frontier carry the same correction.
    tiers = measurements.apply_to_tiers(inference.evaluate_tiers(SC, with_cost=False), mc, SC)
    base = inference.evaluate_tiers(SC, with_cost=False)
    mine = tiers["accelerator"] == ACC
    np.testing.assert_allclose(
        tiers.loc[mine, "tokens_per_s_per_gpu"], base.loc[mine, "tokens_per_s_per_gpu"] * c
    )
    assert (
        tiers.loc[~mine, "tokens_per_s_per_gpu"] == base.loc[~mine, "tokens_per_s_per_gpu"]
    ).all()


def test_more_points_count_more() -> None:
    m = _model(21.0)
    one = measurements.calibrate(_rows([(21.0, 1.3 * m)])).factors(MODEL, PREC)[ACC]
    four = measurements.calibrate(_rows([(21.0, 1.3 * m)] * 4)).factors(MODEL, PREC)[ACC]
    assert 1.0 < one < four < 1.3
    k = measurements._register_values(None, data.default_inputs())[0]
    assert np.log(one) == pytest.approx(np.log(1.3) * 1 / (1 + k))
    assert np.log(four) == pytest.approx(np.log(1.3) * 4 / (4 + k))


def test_points_the_model_lacks_are_listed_not_fitted() -> None:
    m = _model(21.0)
    rows = _rows([(21.0, 1.3 * m), (21.0, 3.0 * m)])
    rows.loc[1, "caveat"] = "speculative decoding (mtp): not in the serving model"
    mc = measurements.calibrate(rows)
    assert list(mc.points["used"]) == [True, False]
    assert "speculative decoding" in mc.points.loc[1, "reason"]
    assert int(mc.corrections["n"].iloc[0]) == 1


def test_the_monte_carlo_spread_narrows_for_a_measured_combination() -> None:
    m = _model(21.0)
    mc = measurements.calibrate(_rows([(21.0, m * j) for j in (0.99, 1.0, 1.01)]))
    sig = measurements.throughput_sigmas(mc, SC)
    assert sig[ACC] == pytest.approx(mc.sigma_floor)  # residual below the floor
    tiers = measurements.apply_to_tiers(inference.evaluate_tiers(SC, with_cost=False), mc, SC)
    inp = tco.cost_inputs(SC)
    narrow = tco.simulate(SC, tiers, None, inputs=tco.with_throughput_sigmas(inp, sig))
    wide = tco.simulate(SC, tiers, None, inputs=inp)

    def spread(sim: tco.Simulation, acc: str) -> float:
        t = sim.tiers[(sim.tiers["accelerator"] == acc) & (sim.tiers["tier_index"] == 0)]
        return float((t["cost_per_mtok_p95"] / t["cost_per_mtok_p05"]).iloc[0])

    assert spread(narrow, ACC) < spread(wide, ACC)
    assert spread(narrow, "H200") == spread(wide, "H200")  # same draws elsewhere


def test_without_measurements_the_draws_are_unchanged() -> None:
    inp = tco.cost_inputs(SC)
    assert tco.with_throughput_sigmas(inp, {}) is inp
    d = tco.draw_inputs(inp, 500, 7)
    np.testing.assert_array_equal(d["inference_throughput_factor"], d["throughput_factor"])
    legacy = np.random.default_rng(7)
    for _, row in inp.globals.iterrows():  # replay the draws before the throughput error
        tco._triangular(legacy, row["value"], row["low"], row["high"], 500)
    pa = inp.per_acc
    for name in (
        "gpu_price_usd",
        "server_price_usd",
        "server_power_kw",
        "porting_engineer_months",
        "software_usd_per_gpu_year",
    ):
        for a in inp.accelerators:
            tco._triangular(
                legacy, pa.at[a, name], pa.at[a, f"{name}_low"], pa.at[a, f"{name}_high"], 500
            )
    for a in inp.accelerators:
        pool = inp.quotes[a]
        if pool.size:
            legacy.integers(0, pool.size, 500)
    before = np.exp(legacy.normal(0.0, inp.throughput_log_sigma, (len(inp.accelerators), 500)))
    np.testing.assert_array_equal(d["throughput_factor"], before)


def test_tiers_say_measured_where_a_run_meets_the_bound() -> None:
    m = _model(30.0)
    mc = measurements.calibrate(_rows([(30.0, 1.1 * m)]))
    tiers = measurements.apply_to_tiers(inference.evaluate_tiers(SC, with_cost=False), mc, SC)
    t = tiers.set_index(["tier_index", "accelerator"])
    # tier 0: TPOT <= 50 ms and TTFT <= 2 s, met by the 30 ms / 300 ms run
    assert t.at[(0, ACC), "basis"] == "measured"
    assert t.at[(0, ACC), "measured_tok_s_gpu"] == pytest.approx(1.1 * m)
    assert t.at[(0, "H200"), "basis"] == "model"
    # A run at another workload corrects the model but is no evidence for the tier.
    other = measurements.calibrate(_rows([(30.0, 1.1 * m)], isl_tokens=128.0))
    tiers = measurements.apply_to_tiers(inference.evaluate_tiers(SC, with_cost=False), other, SC)
    assert set(tiers.loc[tiers["accelerator"] == ACC, "basis"]) == {"model, corrected"}


def test_energy_per_token_measured_where_the_run_has_power() -> None:
    m = _model(30.0)
    rows = _rows([(30.0, m)], avg_power_w_per_gpu=700.0, power_source="amd-smi log p.csv")
    mc = measurements.calibrate(rows)
    tiers = measurements.apply_to_tiers(inference.evaluate_tiers(SC, with_cost=False), mc, SC)
    e = measurements.energy_per_token(tiers, mc, SC, data.load_table("facility"))
    e = e.set_index(["tier_index", "accelerator"])
    mine = e.loc[(0, ACC)]
    assert mine["power_basis"].startswith("measured")
    assert mine["joules_per_token"] == pytest.approx(700.0 / m)
    assert mine["tokens_per_s_per_kw"] == pytest.approx(m / 0.7)
    nv = e.loc[(0, "H200")]
    kw = data.load_table("facility").query(
        "parameter == 'server_power_kw' and accelerator == 'H200'"
    )
    assert nv["power_basis"].startswith("provisioned")
    assert nv["power_w_per_gpu"] == pytest.approx(kw["value"].mean() * 1000 / 8)


def test_your_measurements_numbers() -> None:
    m_amd, m_nv = _model(30.0), _model(None, "H200")
    rows = pd.concat(
        [
            _rows([(30.0, 1.25 * m_amd), (20.0, 1.25 * _model(20.0))]),
            _rows([(None, 0.9 * m_nv)], acc="H200", source_sha256="1" * 64),
        ],
        ignore_index=True,
    )
    mc = measurements.calibrate(rows)
    fit = measurements.fit_summary(mc)
    assert (fit["points"], fit["used"], fit["combinations"], fit["files"]) == (3, 3, 2, 2)
    assert fit["rms_log_error_after"] < fit["rms_log_error_before"]
    public = inference.evaluate_tiers(SC, with_cost=False)
    inp = tco.with_throughput_sigmas(tco.cost_inputs(SC), measurements.case_sigmas(SC))
    shift = measurements.decision_shift(SC, mc, public_tiers=public, inputs=inp)
    # The public column is the public-data model's own Monte Carlo, unchanged (every
    # figure of this model is MLPerf-calibrated: each tier row draws its case's sigma) ...
    assert set(public["deployment_basis"]) == {"MLPerf-calibrated"}
    pub = tco.simulate(SC, public, None, inputs=inp).tier_summary.set_index("tier_index")
    np.testing.assert_allclose(shift["p_amd_cheaper_public"], pub["p_amd_cheaper"])
    # ... and a faster measured AMD part and a slower NVIDIA one raise P(AMD cheaper).
    assert (shift["p_amd_cheaper_measured"] >= shift["p_amd_cheaper_public"]).all()
    assert (shift["p_amd_cheaper_change"] > 0).any()
    keys = measurements.key_results(mc, shift)
    assert (
        keys["measured_points"] == 3 and keys["tier0_winner_public"] == shift.at[0, "winner_public"]
    )
    assert keys[f"correction_{ACC}_{MODEL}_{PREC}"] > 1 > keys[f"correction_H200_{MODEL}_{PREC}"]


def test_shift_markdown_escapes_tier_names() -> None:
    shift = pd.DataFrame(
        {
            "tier_index": [0],
            "tier": ["<b>fast</b>"],
            "winner_public": ["H200"],
            "winner_measured": ["MI300X"],
            "winner_changed": [True],
            "p_amd_cheaper_public": [0.4],
            "p_amd_cheaper_measured": [0.6],
        }
    )
    fit = {
        "points": 1,
        "files": 1,
        "used": 1,
        "combinations": 1,
        "rms_log_error_before": 0.2,
        "rms_log_error_after": 0.05,
    }
    text = measurements.shift_markdown(shift, fit)
    assert "<b>" not in text and "H200 -> MI300X" in text and "0.40 -> 0.60" in text


def test_no_measurements_is_the_public_model() -> None:
    mc = measurements.calibrate(data.load_measurements([]))
    assert mc.empty and mc.corrections.empty
    base = inference.evaluate_tiers(SC, with_cost=False)
    tiers = measurements.apply_to_tiers(base, mc, SC)
    pd.testing.assert_series_equal(tiers["tokens_per_s_per_gpu"], base["tokens_per_s_per_gpu"])
    assert set(tiers["basis"]) == {"model"}
    assert measurements.throughput_sigmas(mc, SC) == {}


def test_the_measurements_chapter_appears_only_with_measurements() -> None:
    ch = {c.id: c for c in execute.discover_chapters(paths.NOTEBOOKS)}["35-your-measurements"]
    assert ch.requires == ("measurements",)
    assert not ch.applies_to(params.load_scenario(paths.CI_PARAMS))
    assert ch.applies_to(params.load_scenario(paths.SCENARIOS / "own-measurements.yaml"))
