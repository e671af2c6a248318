import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import inference
from analysis.inference_benchmarks import benchmark_def
from analysis.inputs import Inputs

SPECS = pd.DataFrame(
    [
        {
            "accelerator": "H200",
            "vendor": "NVIDIA",
            "status": "shipping",
            "architecture": "Hopper",
            "memory_gb": 141.0,
            "memory_bw_tbps": 4.8,
            "bf16_dense_tflops": 989.5,
            "fp8_dense_tflops": 1979.0,
            "fp4_dense_tflops": np.nan,
            "scaleup_bw_gbps": 900.0,
            "scaleup_domain_gpus": 8,
            "scaleout_gbps_per_gpu": 400.0,
        },
        {
            "accelerator": "MI300X",
            "vendor": "AMD",
            "status": "shipping",
            "architecture": "CDNA 3",
            "memory_gb": 192.0,
            "memory_bw_tbps": 5.3,
            "bf16_dense_tflops": 1307.4,
            "fp8_dense_tflops": 2614.9,
            "fp4_dense_tflops": np.nan,
            "scaleup_bw_gbps": 896.0,
            "scaleup_domain_gpus": 8,
            "scaleout_gbps_per_gpu": 400.0,
        },
        {
            "accelerator": "H100-SXM",
            "vendor": "NVIDIA",
            "status": "shipping",
            "architecture": "Hopper",
            "memory_gb": 80.0,
            "memory_bw_tbps": 3.35,
            "bf16_dense_tflops": 989.5,
            "fp8_dense_tflops": 1979.0,
            "fp4_dense_tflops": np.nan,
            "scaleup_bw_gbps": 900.0,
            "scaleup_domain_gpus": 8,
            "scaleout_gbps_per_gpu": 400.0,
        },
    ]
)
MODELS = pd.DataFrame(
    [
        {
            "model": "llama2-70b",
            "total_params_b": 68.98,
            "active_params_b": 68.98,
            "layers": 80,
            "hidden_size": 8192,
            "attention_heads": 64,
            "kv_heads": 8,
            "head_dim": 128,
            "experts": 1,
            "active_experts": 1,
            "attention_type": "gqa",
            "kv_bytes_per_token_bf16": 327680,
            "kv_window_bytes_bf16": 0,
        },
        {
            "model": "mixtral-8x7b",
            "total_params_b": 46.7,
            "active_params_b": 12.9,
            "layers": 32,
            "hidden_size": 4096,
            "attention_heads": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "experts": 8,
            "active_experts": 2,
            "attention_type": "gqa",
            "kv_bytes_per_token_bf16": 131072,
            "kv_window_bytes_bf16": 0,
        },
        {
            "model": "llama3.1-405b",
            "total_params_b": 405.85,
            "active_params_b": 405.85,
            "layers": 126,
            "hidden_size": 16384,
            "attention_heads": 128,
            "kv_heads": 8,
            "head_dim": 128,
            "experts": 1,
            "active_experts": 1,
            "attention_type": "gqa",
            "kv_bytes_per_token_bf16": 516096,
            "kv_window_bytes_bf16": 0,
        },
    ]
)
CAL = inference.Calibration(
    by_group={("NVIDIA", "Hopper", "v5.1"): 0.6, ("AMD", "CDNA 3", "v5.1"): 0.5},
    by_generation={("NVIDIA", "Hopper"): 0.6, ("AMD", "CDNA 3"): 0.5},
    by_vendor={"NVIDIA": 0.6, "AMD": 0.5},
    scenario_scale={"Server": 0.9, "Interactive": 0.65},
    workload_scale={"llama2-70b": 1.0, "mixtral-8x7b": 0.55},
    rounds=("v5.1",),
)
KW = {"specs": SPECS, "models": MODELS, "calibration": CAL}


def tput(acc="H200", model="llama2-70b", **kw):
    args = {"precision": "fp8", "isl": 1024, "osl": 256, **KW, **kw}
    return inference.max_throughput_per_gpu(acc, model, **args)


def test_returns_positive_throughput():
    assert tput() > 0


def test_unknown_ids_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown accelerator 'H201'"):
        tput("H201")
    with pytest.raises(ValueError, match="unknown model"):
        tput(model="llama9")
    with pytest.raises(ValueError, match="unknown precision"):
        tput(precision="int3")
    with pytest.raises(ValueError, match="no fp4 tensor-core support"):
        tput(precision="fp4")


def test_model_that_does_not_fit_raises():
    with pytest.raises(ValueError, match="does not fit on 1 x H100-SXM"):
        tput("H100-SXM", "llama3.1-405b", gpus=1)


def test_impossible_bound_raises():
    with pytest.raises(ValueError, match="impossible latency bound"):
        tput(tpot_ms=0.5)
    with pytest.raises(ValueError, match="impossible latency bound"):
        tput(ttft_ms=1.0)


def test_details_meet_the_bounds():
    d = tput(tpot_ms=50, ttft_ms=2000, return_details=True)
    assert d["tpot_ms"] <= 50 and d["ttft_ms"] <= 2000
    assert d["tokens_per_s_per_gpu"] == pytest.approx(d["concurrency"] / d["tpot_ms"] * 1e3 / 8)


@settings(max_examples=25, derandomize=True, deadline=None)
@given(factor=st.floats(1.0, 4.0), tpot=st.one_of(st.none(), st.floats(40.0, 500.0)))
def test_more_bandwidth_never_lowers_throughput(factor, tpot):
    faster = SPECS.copy()
    faster.loc[faster["accelerator"] == "H200", "memory_bw_tbps"] *= factor
    assert tput(specs=faster, tpot_ms=tpot) >= tput(tpot_ms=tpot) * (1 - 1e-12)


@settings(max_examples=25, derandomize=True, deadline=None)
@given(loose=st.floats(30.0, 400.0), tighten=st.floats(0.3, 1.0))
def test_tighter_tpot_never_raises_throughput(loose, tighten):
    a = tput(tpot_ms=loose)
    try:
        b = tput(tpot_ms=loose * tighten)
    except ValueError:
        return
    assert b <= a * (1 + 1e-12)


@settings(max_examples=20, derandomize=True, deadline=None)
@given(
    acc=st.sampled_from(["H200", "MI300X"]),
    model=st.sampled_from(["llama2-70b", "mixtral-8x7b"]),
    isl=st.integers(64, 8192),
    osl=st.integers(16, 2048),
    gpus=st.sampled_from([2, 4, 8]),
)
def test_throughput_below_rooflines(acc, model, isl, osl, gpus):
    spec = SPECS.set_index("accelerator").loc[acc]
    m = MODELS.set_index("model").loc[model]
    t = tput(acc, model, isl=isl, osl=osl, gpus=gpus)
    # Compute roofline: every output token costs 2 x active params FLOPs.
    compute = spec["fp8_dense_tflops"] * 1e12 / (2 * m["active_params_b"] * 1e9)
    assert t <= compute
    # Bandwidth roofline: at the memory-limited concurrency, one weight read per step.
    max_conc = inference.memory_headroom(
        [acc], model, precision="fp8", isl=isl, osl=osl, gpus=gpus, specs=SPECS, models=MODELS
    )
    b = max_conc["max_concurrency"].iloc[0]
    w_bytes = m["total_params_b"] * 1e9 / gpus
    assert t <= b * spec["memory_bw_tbps"] * 1e12 / w_bytes / gpus * (1 + 1e-9)


def test_moe_uses_active_params_for_compute():
    # Roofline accounting (the fitted grouped-GEMM shape would slow the MoE on purpose):
    # inputs whose serving shape is the plain roofline, instead of patching a module.
    roofline = Inputs.from_tables({})
    roofline.derived("inference.shape", lambda: inference.ROOFLINE_SHAPE)
    assert inference.default_shape(roofline) is inference.ROOFLINE_SHAPE
    dense_like = MODELS.copy()
    dense_like.loc[dense_like["model"] == "mixtral-8x7b", "active_params_b"] = 46.7
    moe = tput(model="mixtral-8x7b", inputs=roofline)
    assert moe > tput(model="mixtral-8x7b", models=dense_like, inputs=roofline)
    assert moe != tput(model="mixtral-8x7b")  # the fitted default shape is another one


def test_frontier_is_monotone_in_concurrency():
    f = inference.frontier("H200", "llama2-70b", precision="fp8", isl=1024, osl=256, **KW)
    assert (np.diff(f["tokens_per_s_per_user"]) <= 1e-9).all()
    assert len(f) > 10


def test_sweep_covers_every_combination_fast():
    df = inference.sweep(isl=2048, osl=256, **KW)
    # fp4 is unsupported on every fixture part; 405B at fp8 fits on 8 x H100 only barely.
    assert set(df["precision"]) == {"bf16", "fp8"}
    assert df.groupby(["accelerator", "model", "precision"]).size().max() == 256


def test_predict_mlperf_uses_benchmark_bounds():
    off = inference.predict_mlperf("H200", "llama2-70b-99.9", "Offline", precision="fp8", **KW)
    inter = inference.predict_mlperf("H200", "llama2-70b-99", "Interactive", precision="fp8", **KW)
    assert 0 < inter < off
    with pytest.raises(ValueError, match="unknown MLPerf benchmark"):
        inference.predict_mlperf("H200", "gptj-99", "Offline", precision="fp8", **KW)
    with pytest.raises(ValueError, match="unknown MLPerf scenario"):
        inference.predict_mlperf("H200", "llama2-70b-99", "Batch", precision="fp8", **KW)


def test_benchmark_table_matches_mlperf_conf():
    assert benchmark_def("llama2-70b-99").bounds("Interactive") == (450.0, 40.0)
    assert benchmark_def("llama3.1-405b").bounds("Server") == (6000.0, 175.0)
    assert benchmark_def("llama3.1-8b").bounds("Interactive") == (500.0, 30.0)
    assert benchmark_def("deepseek-r1").bounds("Server") == (2000.0, 80.0)
    assert benchmark_def("mixtral-8x7b").bounds("Offline") == (None, None)


def test_fit_efficiency_recovers_known_factors():
    rows = pd.DataFrame(
        {
            "vendor": ["AMD"] * 3 + ["NVIDIA"] * 3,
            "generation": ["CDNA 3"] * 3 + ["Hopper"] * 3,
            "round": ["v5.1"] * 6,
            "benchmark": ["llama2-70b-99", "llama2-70b-99", "mixtral-8x7b"] * 2,
            "scenario": ["Offline", "Server", "Offline"] * 2,
            "eta": [0.5, 0.45, 0.25, 0.6, 0.54, 0.3],
        }
    )
    cal = inference.fit_efficiency(rows)
    assert cal.by_group[("AMD", "CDNA 3", "v5.1")] == pytest.approx(0.5)
    assert cal.scenario_scale["Server"] == pytest.approx(0.9)
    assert cal.workload_scale["mixtral-8x7b"] == pytest.approx(0.5)
    # Deterministic: the same input gives the same factors to the last digit.
    assert inference.fit_efficiency(rows) == cal


def _two_round_cal(rows_v41: int, rows_v60: int, **kw) -> inference.Calibration:
    """CDNA 3 calibrated in v4.1 (eta 0.4) and v6.0 (0.5) on the given row counts."""
    return inference.Calibration(
        by_group={("AMD", "CDNA 3", "v4.1"): 0.4, ("AMD", "CDNA 3", "v6.0"): 0.5},
        by_generation={("AMD", "CDNA 3"): 0.45},
        by_vendor={"AMD": 0.45},
        rounds=("v4.1", "v6.0"),
        group_rows={("AMD", "CDNA 3", "v4.1"): rows_v41, ("AMD", "CDNA 3", "v6.0"): rows_v60},
        **kw,
    )


def test_nearest_round_and_accelerator_shrinkage():
    cal = _two_round_cal(
        10,
        10,
        by_accelerator={("MI325X", "v6.0"): 0.8},
        accelerator_rows={("MI325X", "v6.0"): 10},
    )
    assert cal.base_eta("AMD", "CDNA 3")[0] == pytest.approx(0.5)  # latest
    assert cal.base_eta("AMD", "CDNA 3", "v4.1")[0] == pytest.approx(0.4)  # own round
    # A round between two calibrated ones: their row-weighted geometric mean.
    assert cal.base_eta("AMD", "CDNA 3", "v5.1")[0] == pytest.approx(math.sqrt(0.4 * 0.5))
    # Accelerator factor shrunk half-way (10 rows, prior 10) in log space.
    assert cal.base_eta("AMD", "CDNA 3", None, "MI325X")[0] == pytest.approx(math.sqrt(0.5 * 0.8))
    assert cal.factor_level("AMD", "CDNA 3", "MI325X") == "accelerator"
    assert cal.factor_level("AMD", "CDNA 3", "MI300X") == "generation"
    assert cal.factor_level("AMD", "CDNA 4", "MI355X") == "older generation"
    assert cal.factor_level("AMD", "CDNA 9", "MI999X") == "vendor"


def test_software_drift_moves_factors_to_uncalibrated_rounds():
    cal = _two_round_cal(10, 30, drift_per_round={"AMD": 1.1})
    assert cal.base_eta("AMD", "CDNA 3")[0] == pytest.approx(0.5)  # latest: no shift
    assert cal.base_eta("AMD", "CDNA 3", "v4.1")[0] == pytest.approx(0.4)  # own round
    # v6.1 is one release after v6.0; v4.0 one before v4.1 (two releases a year).
    assert cal.base_eta("AMD", "CDNA 3", "v6.1")[0] == pytest.approx(0.5 * 1.1)
    assert cal.base_eta("AMD", "CDNA 3", "v4.0")[0] == pytest.approx(0.4 / 1.1)
    # v5.1 lies two releases after v4.1 and one before v6.0: both moved, row-weighted.
    want = math.exp((10 * math.log(0.4 * 1.1**2) + 30 * math.log(0.5 / 1.1)) / 40)
    assert cal.base_eta("AMD", "CDNA 3", "v5.1")[0] == pytest.approx(want)


def test_drift_is_paired_within_cells_and_shrunk():
    # One cell (MI300X, llama2-70b, Offline) in v4.1 and v5.1 (two releases apart) gains
    # 1.1^2; a second part seen in v5.1 only changes the mix but adds no pair.
    rows = pd.DataFrame(
        {
            "vendor": ["AMD"] * 4,
            "generation": ["CDNA 3"] * 4,
            "accelerator": ["MI300X", "MI300X", "MI325X", "MI325X"],
            "round": ["v4.1", "v5.1", "v5.1", "v5.1"],
            "benchmark": ["llama2-70b-99"] * 4,
            "scenario": ["Offline"] * 4,
            "eta": [0.4, 0.4 * 1.1**2, 0.9, 0.9],
        }
    )
    cal = inference.fit_efficiency(rows)
    assert cal.drift_pairs == {"AMD": 1}
    shrink = 1 / (1 + inference.DRIFT_PRIOR_PAIRS)
    assert math.log(cal.drift_per_round["AMD"]) == pytest.approx(math.log(1.1) * shrink)
    # No pairs: no drift.
    assert inference.fit_efficiency(rows.iloc[1:]).drift_per_round == {"AMD": 1.0}


def test_drift_ignores_a_precision_change_between_rounds():
    # The same cell read at two precision classes (B200's fp8 preview, then fp4) is a
    # precision contrast, not software: it pairs nothing.
    drift, pairs = inference._drift_per_round(
        np.log([0.6, 0.4]),
        ["NVIDIA"] * 2,
        ["B200"] * 2,
        ["llama2-70b"] * 2,
        ["Offline"] * 2,
        ["v4.1", "v5.1"],
        ["fp8 on fp4", "native"],
    )
    assert drift == {"NVIDIA": 0.0} and pairs == {"NVIDIA": 0}


def test_drift_gives_each_workload_one_vote():
    # Six parts double on workload A in one release; B and C gain 2 % on one part each.
    # The pair median would be A's doubling; each benchmark x scenario votes once instead.
    accs = [f"P{i}" for i in range(6)] + ["P0", "P0"]
    benches = ["A"] * 6 + ["B", "C"]
    gain = np.array([np.log(2.0)] * 6 + [np.log(1.02)] * 2)
    n = len(accs)
    drift, pairs = inference._drift_per_round(
        np.concatenate([np.zeros(n), gain]),
        ["NVIDIA"] * 2 * n,
        accs * 2,
        benches * 2,
        ["Offline"] * 2 * n,
        ["v5.1"] * n + ["v6.0"] * n,
    )
    assert pairs == {"NVIDIA": 8}
    want = np.log(1.02) * 8 / (8 + inference.DRIFT_PRIOR_PAIRS)
    assert drift["NVIDIA"] == pytest.approx(want)


def _power_rows(slope: float) -> pd.DataFrame:
    # CDNA 3 in one round: MI300X (750 W) and MI325X (1000 W, the top bin) on the same
    # benchmark in two scenarios: two pairs, eta proportional to power ** slope.
    eta325 = {"Offline": 0.5, "Server": 0.45}
    return pd.DataFrame(
        {
            "vendor": ["AMD"] * 4,
            "generation": ["CDNA 3"] * 4,
            "accelerator": ["MI300X", "MI325X"] * 2,
            "round": ["v5.1"] * 4,
            "benchmark": ["llama2-70b-99"] * 4,
            "scenario": ["Offline", "Offline", "Server", "Server"],
            "eta": [
                eta325[sc] * f for sc in ("Offline", "Server") for f in ((750 / 1000) ** slope, 1.0)
            ],
        }
    )


def test_power_reference_is_the_generations_top_bin():
    ref = inference.power_reference()
    assert ref["MI300X"] == (750.0, 1000.0)
    assert ref["MI325X"] == (1000.0, 1000.0)
    assert ref["MI350X"] == (1000.0, 1400.0)
    assert ref["H100-SXM"] == ref["H200"] == (700.0, 700.0)


def test_power_exponent_is_paired_within_cells_and_shrunk():
    cal = inference.fit_efficiency(_power_rows(0.7))
    assert cal.power_pairs == {"AMD": 2}
    prior = inference.POWER_PRIOR_EXPONENT
    want = prior + (0.7 - prior) * 2 / (2 + inference.POWER_PRIOR_PAIRS)
    assert cal.power_exponent["AMD"] == pytest.approx(want)
    # Group factors are top-bin equivalents; each part is moved to its own TDP.
    assert cal.power_factor("AMD", "MI325X") == 1.0
    assert cal.power_factor("AMD", "MI300X") == pytest.approx(0.75**want)
    # A stated cap overrides the TDP; unknown parts and vendors get no adjustment.
    assert cal.power_factor("AMD", "MI325X", power_w=750.0) == pytest.approx(0.75**want)
    assert cal.power_factor("AMD", "MI999X") == 1.0
    assert cal.power_factor("NVIDIA", "B300") == 1.0
    # The part's own factor (stored at its TDP) is what it measured.
    assert cal.by_accelerator[("MI300X", "v5.1")] == pytest.approx(0.5 * 0.75**0.7)
    assert cal.by_accelerator[("MI325X", "v5.1")] == pytest.approx(0.5)
    # No power difference measured: the exponent moves from the DVFS prior towards 0.
    flat = inference.fit_efficiency(_power_rows(0.0))
    assert flat.power_exponent["AMD"] == pytest.approx(prior * 10 / 12)
    assert 0.0 < flat.power_exponent["AMD"] < prior


def test_unmeasured_lower_bin_is_predicted_below_its_top_bin():
    # Only the top bin has rows: a sister part at lower power gets its factor moved down.
    rows = _power_rows(0.7)
    cal = inference.fit_efficiency(rows)
    beta = cal.power_exponent["AMD"]
    only_top = inference.fit_efficiency(rows[rows["accelerator"] == "MI325X"])
    # No pair in the data: the physics prior (clock ~ power^(1/3)).
    assert only_top.power_exponent == {"AMD": inference.POWER_PRIOR_EXPONENT}
    held_out = dataclasses.replace(only_top, power_exponent={"AMD": beta})
    top = held_out.eta("AMD", "CDNA 3", accelerator="MI325X")[0]
    assert held_out.eta("AMD", "CDNA 3", accelerator="MI300X")[0] == pytest.approx(top * 0.75**beta)


def test_stated_power_cap_in_the_mlperf_rows():
    rows = inference.implied_efficiency()
    capped = rows[rows["accelerator_raw"].str.contains("Power Cap", case=False)]
    assert len(capped) > 0 and (capped["power_w"] == 1000.0).all()
    mi355 = rows[(rows["accelerator"] == "MI355X") & ~rows.index.isin(capped.index)]
    assert (mi355["power_w"] == 1400.0).all()


def test_uncalibrated_workload_borrows_its_family_scale():
    eta_moe, fb = CAL.workload("deepseek-r1")
    assert fb and eta_moe == pytest.approx(0.55)  # the only calibrated MoE: mixtral
    assert CAL.workload("mixtral-8x7b") == (0.55, False)
    assert CAL.workload("llama3.1-8b") == (1.0, True)  # dense family: llama2-70b


def test_announced_generation_falls_back_to_newest_measured():
    eta, source = CAL.eta("NVIDIA", "Rubin")
    assert math.isclose(eta, 0.6) and "Hopper" in source


def test_validation_summary_shape():
    df = pd.DataFrame(
        {
            "vendor": ["AMD", "AMD", "NVIDIA"],
            "predicted": [1.0, 2.0, np.nan],
            "measured": [1.0, 1.0, 1.0],
            "ape_pct": [0.0, 100.0, np.nan],
        }
    )
    s = inference.validation_summary(df)
    assert list(s["vendor"]) == ["AMD", "NVIDIA", "overall"]
    assert s.loc[s["vendor"] == "AMD", "median_ape_pct"].item() == 50.0
    assert s.loc[s["vendor"] == "NVIDIA", "unpredicted"].item() == 1


# --- vectorized calibration solver vs the scalar reference ---------------------------------


def _scalar_eta(acc, model, precision, benchmark, scenario, measured):
    """Reference: Brent's method on log eta over the scalar predictor (the former solver)."""
    from scipy.optimize import brentq

    spec = SPECS.set_index("accelerator").loc[acc].copy()
    spec["accelerator"] = acc
    hw = inference.hardware_params(spec, precision)
    mp = inference.model_params(MODELS.set_index("model").loc[model].rename(model))
    bdef = benchmark_def(benchmark)
    ttft, tpot = bdef.bounds(scenario)
    tps = inference._tp_options(hw, 8)

    def f(log_eta):
        p = inference._predict_one(
            hw, mp, precision, bdef.isl_mean, bdef.osl_mean, ttft, tpot, tps, math.exp(log_eta)
        )
        return (math.log(p) if p > 0 and np.isfinite(p) else -50.0) - math.log(measured)

    lo, hi = math.log(inference.ETA_BRACKET[0]), math.log(inference.ETA_BRACKET[1])
    if f(hi) < 0 or f(lo) > 0:
        return float("nan")
    return math.exp(brentq(f, lo, hi, xtol=1e-10))


def _mlperf_rows(cases):
    return pd.DataFrame(
        [
            {
                "round": "v5.1",
                "submitter": f"S{i}",
                "system": f"sys{i}",
                "accelerator": acc,
                "vendor": "AMD" if acc.startswith("MI") else "NVIDIA",
                "benchmark": bench,
                "model": model,
                "scenario": scen,
                "precision": prec,
                "result": measured * 8,
                "result_per_accelerator": measured,
                "tokens_per_sample": np.nan,
                "software": "x",
            }
            for i, (acc, model, prec, bench, scen, measured) in enumerate(cases)
        ]
    )


CASES = [
    ("H200", "llama2-70b", "fp8", "llama2-70b-99", "Offline", 3000.0),
    ("H200", "llama2-70b", "fp8", "llama2-70b-99", "Server", 2500.0),
    ("MI300X", "llama2-70b", "fp8", "llama2-70b-99.9", "Interactive", 900.0),
    ("MI300X", "mixtral-8x7b", "bf16", "mixtral-8x7b", "Server", 4000.0),
    ("H100-SXM", "llama2-70b", "bf16", "llama2-70b-99", "Offline", 700.0),
    ("H100-SXM", "llama3.1-405b", "fp8", "llama3.1-405b", "Server", 60.0),
]


def test_vectorized_solver_matches_scalar_brent():
    rows = inference.implied_efficiency(_mlperf_rows(CASES), SPECS, MODELS)
    assert len(rows) == len(CASES)
    for (acc, model, prec, bench, scen, measured), eta in zip(CASES, rows["eta"], strict=True):
        ref = _scalar_eta(acc, model, prec, bench, scen, measured)
        assert math.isfinite(ref), (acc, bench, scen)
        assert eta == pytest.approx(ref, rel=1e-6), (acc, bench, scen)


def test_vectorized_solver_reproduces_the_measurement():
    rows = inference.implied_efficiency(_mlperf_rows(CASES), SPECS, MODELS)
    terms = inference._terms_for_rows(rows, SPECS, MODELS)
    pred = inference._predict_terms(terms, rows["eta"].to_numpy())
    np.testing.assert_allclose(pred, rows["measured"].to_numpy(), rtol=1e-9)


def test_solver_flags_unreachable_measurements():
    cases = [
        ("H200", "llama2-70b", "fp8", "llama2-70b-99", "Offline", 1e7),
        ("H200", "llama2-70b", "fp8", "llama2-70b-99", "Offline", 1e-3),
    ]
    rows = inference.implied_efficiency(_mlperf_rows(cases), SPECS, MODELS)
    assert rows["eta"].isna().all()
    assert rows["eta_note"].iloc[0].startswith("above")
    assert rows["eta_note"].iloc[1].startswith("below")


@settings(max_examples=30, derandomize=True, deadline=None)
@given(values=st.lists(st.floats(-5, 5), min_size=1, max_size=40), groups=st.integers(1, 5))
def test_group_median_equals_numpy_median(values, groups):
    v = np.array(values)
    codes = np.arange(len(v)) % min(groups, len(v))
    got = inference._group_median(codes, v, int(codes.max()) + 1)
    want = [np.median(v[codes == k]) for k in range(int(codes.max()) + 1)]
    assert got.tolist() == want


# --- deployment choice (TP within the server) ---------------------------------------------


def test_tp_choices():
    assert inference.tp_choices(8) == (1, 2, 4, 8)
    assert inference.tp_choices(6) == (1, 2, 4, 6)
    assert inference.tp_choices(1) == (1,)
    with pytest.raises(ValueError, match="must be >= 1"):
        inference.tp_choices(0)


def deploy(acc="H200", model="llama2-70b", **kw):
    args = {"precision": "fp8", "isl": 2048, "osl": 256, **KW, **kw}
    return inference.best_deployment(acc, model, **args)


@settings(max_examples=25, derandomize=True, deadline=None)
@given(
    acc=st.sampled_from(["H200", "MI300X", "H100-SXM"]),
    tpot=st.one_of(st.none(), st.floats(30.0, 400.0)),
)
def test_tp_choice_never_below_fixed_tp8(acc, tpot):
    try:
        fixed = tput(acc, isl=2048, tpot_ms=tpot, gpus=8)
    except ValueError:
        return
    d = deploy(acc, tpot_ms=tpot)
    assert d["tokens_per_s_per_gpu"] >= fixed * (1 - 1e-12)
    assert d["tp"] in (1, 2, 4, 8)
    if tpot is not None:
        assert d["tpot_ms"] <= tpot


@settings(max_examples=25, derandomize=True, deadline=None)
@given(loose=st.floats(30.0, 400.0), tighten=st.floats(0.3, 1.0))
def test_tp_choice_tighter_tpot_never_raises_throughput(loose, tighten):
    a = deploy(tpot_ms=loose)["tokens_per_s_per_gpu"]
    try:
        b = deploy(tpot_ms=loose * tighten)["tokens_per_s_per_gpu"]
    except ValueError:
        return
    assert b <= a * (1 + 1e-12)


def test_tp_choice_matches_fixed_tp_when_max_tp_is_one_layout():
    d = deploy(max_tp=4, tpot_ms=60)
    assert d["tp"] <= 4
    assert deploy(max_tp=1)["tp"] == 1
    assert deploy(max_tp=1)["tokens_per_s_per_gpu"] == pytest.approx(tput(isl=2048, gpus=1))


def test_tp_choice_errors():
    with pytest.raises(ValueError, match="does not fit on 2 x H100-SXM"):
        deploy("H100-SXM", "llama3.1-405b", max_tp=2)
    with pytest.raises(ValueError, match="impossible latency bound .* TP <= 8"):
        deploy(tpot_ms=0.5)


def test_predicted_rows_drops_only_unpredicted():
    df = pd.DataFrame({"measured": [1.0, 2.0, 3.0], "predicted": [1.1, np.nan, 2.9]})
    out = inference.predicted_rows(df)
    assert out["measured"].tolist() == [1.0, 3.0]
    assert list(out.columns) == list(df.columns)


def _round_summary(amd, nvidia, overall=10.0):
    return pd.DataFrame(
        {"vendor": ["AMD", "NVIDIA", "overall"], "median_ape_pct": [amd, nvidia, overall]}
    )


def test_validation_verdict_meets_and_misses():
    target = inference.MAPE_TARGET_PCT
    ok = inference.validation_verdict(_round_summary(10.04, 14.66))
    assert "10.0% for AMD and 14.7% for NVIDIA" in ok
    assert f"meets the {target:.0f}% target" in ok and ok.endswith("(closest to it: NVIDIA).")
    # the target is inclusive; the overall row never names the worst vendor
    assert "meets" in inference.validation_verdict(_round_summary(target, 1.0, overall=99.0))
    miss = inference.validation_verdict(_round_summary(target + 0.1, 1.0))
    assert "misses" in miss and miss.endswith("(closest to it: AMD).")


def test_deployment_value_says_whether_it_is_bounded():
    assert inference.Deployment("H200", 8).is_bounded is False
    assert inference.Deployment("H200", 8, tpot_ms=50.0).is_bounded is True
    assert inference.Deployment("H200", 8, ttft_ms=900.0).is_bounded is True
    assert inference.Deployment("H200", 8, bounded=True).is_bounded is True
    w = inference.Workload("llama2-70b", "fp8", 1024, 256)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.isl = 2048  # type: ignore[misc]


def _bridge_rows(nvidia_llama: bool) -> pd.DataFrame:
    """AMD runs llama2-70b and mixtral; NVIDIA mixtral, llama3.1-405b (and llama2-70b)."""
    rows = [
        ("AMD", "CDNA 3", "llama2-70b-99", 0.5),
        ("AMD", "CDNA 3", "mixtral-8x7b", 0.25),  # AMD's measured mixtral scale: 0.5
        ("NVIDIA", "Hopper", "mixtral-8x7b", 0.3),
        ("NVIDIA", "Hopper", "llama3.1-405b", 0.05),
        ("NVIDIA", "Hopper", "llama3.1-405b", 0.06),
        ("NVIDIA", "Hopper", "llama3.1-405b", 0.07),
    ]
    if nvidia_llama:
        rows.append(("NVIDIA", "Hopper", "llama2-70b-99", 0.75))
    return pd.DataFrame(
        {
            "vendor": [r[0] for r in rows],
            "generation": [r[1] for r in rows],
            "round": ["v5.1"] * len(rows),
            "benchmark": [r[2] for r in rows],
            "scenario": ["Offline"] * len(rows),
            "eta": [r[3] for r in rows],
        }
    )


def test_a_vendor_without_the_reference_workload_is_levelled_through_a_bridge():
    # NVIDIA has no llama2-70b rows (a vendor x workload holdout): its level comes from
    # mixtral, which AMD also ran, at AMD's measured mixtral scale (0.3 / 0.5 = 0.6), not
    # from the median of workloads only NVIDIA ran (405B, whose scale is then its own).
    cal = inference.fit_efficiency(_bridge_rows(nvidia_llama=False))
    assert cal.by_group[("NVIDIA", "Hopper", "v5.1")] == pytest.approx(0.6)
    assert cal.workload_scale["mixtral-8x7b"] == pytest.approx(0.5)
    assert cal.workload_scale["llama3.1-405b"] == pytest.approx(0.06 / 0.6)
    assert ("NVIDIA", "mixtral-8x7b") not in cal.vendor_workload_scale  # unidentifiable
    # With its own llama2-70b rows NVIDIA is anchored to them, whatever its other rows.
    own = inference.fit_efficiency(_bridge_rows(nvidia_llama=True))
    assert own.by_group[("NVIDIA", "Hopper", "v5.1")] == pytest.approx(0.75, rel=0.1)
    assert ("NVIDIA", "mixtral-8x7b") in own.vendor_workload_scale


def test_a_group_with_only_unbridged_rows_sets_no_level():
    # NVIDIA's v6.0 rows are all of a workload no anchored vendor ran: that round's level
    # and the workload's scale are one number, so the group is left to the round rule.
    rows = _bridge_rows(nvidia_llama=False)
    extra = rows.iloc[[3]].assign(round="v6.0", eta=0.2)
    cal = inference.fit_efficiency(pd.concat([rows, extra], ignore_index=True))
    assert ("NVIDIA", "Hopper", "v6.0") not in cal.by_group
    assert cal.by_group[("NVIDIA", "Hopper", "v5.1")] == pytest.approx(0.6)


def test_precision_scale_is_measured_inside_groups_with_native_rows():
    # CDNA 4 serves fp4 (native) and fp8 in one round: the fp8 class scale is their ratio.
    # Blackwell's only rows are fp8 (a preview round): its level takes the measured scale,
    # and its own rows do not move that scale.
    rows = pd.DataFrame(
        {
            "vendor": ["AMD", "AMD", "NVIDIA"],
            "generation": ["CDNA 4", "CDNA 4", "Blackwell"],
            "round": ["v6.0", "v6.0", "v4.1"],
            "benchmark": ["llama2-70b-99"] * 3,
            "scenario": ["Offline"] * 3,
            "precision_class": ["native", "one above native", "one above native"],
            "eta": [0.4, 0.6, 0.9],
        }
    )
    cal = inference.fit_efficiency(rows)
    assert cal.precision_scale["one above native"] == pytest.approx(1.5)
    assert cal.by_group[("NVIDIA", "Blackwell", "v4.1")] == pytest.approx(0.9 / 1.5)
    assert ("NVIDIA", "one above native") not in {
        k for k, v in cal.vendor_precision_scale.items() if v != 1.0
    }
