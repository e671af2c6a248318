"""Training model: scaling efficiency properties, infeasibility, ids, calibration."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import data, params, paths, training

ACCS = ("H100-SXM", "H200", "B200", "GB200", "MI300X", "MI325X", "MI355X")


@pytest.fixture(scope="module")
def fits() -> pd.DataFrame:
    return training.fit_efficiencies()


def test_flops_per_token_palm_and_lora() -> None:
    arch = {"active_params_b": 70.0, "layers": 80, "attention_heads": 64, "head_dim": 128}
    attn = 12 * 80 * 64 * 128 * 8192
    assert training.flops_per_token(arch, 8192) == pytest.approx(6 * 70e9 + attn)
    assert training.flops_per_token(arch, 8192, lora=True) == pytest.approx(4 * 70e9 + attn)


@pytest.mark.parametrize("acc", ACCS)
def test_efficiency_is_one_at_baseline_and_never_above(acc: str, fits: pd.DataFrame) -> None:
    curve = training.scaling_curve(acc, "llama3.1-8b", fits=fits)
    eff = curve["scaling_efficiency"].dropna()
    assert eff.iloc[0] == pytest.approx(1.0)
    assert (eff <= 1.0 + 1e-12).all() and (eff > 0).all()
    base = int(curve.loc[curve["scaling_efficiency"].notna(), "n_gpus"].iloc[0])
    assert training.scaling_efficiency(acc, "llama3.1-8b", base, fits=fits) == pytest.approx(1.0)


def test_baseline_is_one_node_when_model_fits(fits: pd.DataFrame) -> None:
    assert training.scaling_efficiency("H200", "llama3.1-8b", 8, fits=fits) == 1.0
    # 70B training state (16 bytes/param) does not fit in 8 x 80 GB: baseline moves up.
    with pytest.raises(ValueError, match="does not fit in memory"):
        training.scaling_efficiency("H100-SXM", "llama3.1-70b", 8, fits=fits)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    acc=st.sampled_from(ACCS),
    model=st.sampled_from(["llama3.1-8b", "llama3.1-70b"]),
    k=st.integers(min_value=3, max_value=14),
    cut=st.floats(min_value=0.05, max_value=0.95),
    which=st.sampled_from(["scaleup_bw_gbps", "scaleout_gbps_per_gpu"]),
)
def test_cutting_bandwidth_never_raises_throughput(acc, model, k, cut, which) -> None:
    f = training._fits_cached(data.default_inputs())
    spec = training.spec_row(acc)
    n = 2**k
    a = training.scaling_curve(acc, model, gpu_counts=[n], fits=f).iloc[0]
    b = training.scaling_curve(
        acc, model, gpu_counts=[n], fits=f, spec_overrides={which: spec[which] * cut}
    ).iloc[0]
    if a["feasible"] and b["feasible"]:
        assert b["tokens_per_s_per_gpu"] <= a["tokens_per_s_per_gpu"] * (1 + 1e-12)


@settings(max_examples=65, deadline=None, derandomize=True)
@given(
    acc=st.sampled_from(ACCS),
    model=st.sampled_from(["llama3.1-8b", "llama3.1-70b", "llama3.1-405b"]),
    k=st.integers(min_value=3, max_value=14),
    cut=st.floats(min_value=0.05, max_value=0.95),
    which=st.sampled_from(["scaleup_bw_gbps", "scaleout_gbps_per_gpu"]),
)
def test_cutting_bandwidth_never_raises_scaling_efficiency(acc, model, k, cut, which) -> None:
    f = training._fits_cached(data.default_inputs())
    spec = training.spec_row(acc)
    n = 2**k
    try:
        base = training.scaling_efficiency(acc, model, n, fits=f)
        slower = training.scaling_efficiency(
            acc, model, n, fits=f, spec_overrides={which: spec[which] * cut}
        )
    except ValueError:  # infeasible, or below the baseline count
        return
    assert slower <= base + 1e-9


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    acc=st.sampled_from(("MI300X", "MI325X", "MI355X")),
    model=st.sampled_from(["llama3.1-8b", "llama3.1-70b", "llama3.1-405b"]),
    k=st.integers(min_value=1, max_value=12),
)
def test_a_switch_at_the_same_bandwidth_never_slows_a_mesh_part(acc, model, k) -> None:
    # Behind a switch every group gets the GPU's whole scale-up bandwidth; on the mesh a
    # group of k of 8 gets k - 1 of its 7 links. Same bandwidth, switched: never slower.
    f = training._fits_cached(data.default_inputs())
    n = 2**k
    mesh = training.scaling_curve(acc, model, gpu_counts=[n], fits=f).iloc[0]
    switch = training.scaling_curve(
        acc, model, gpu_counts=[n], fits=f, spec_overrides={"scaleup_topology": "switch"}
    ).iloc[0]
    if mesh["feasible"]:
        assert switch["feasible"]
        assert switch["tokens_per_s_per_gpu"] >= mesh["tokens_per_s_per_gpu"] * (1 - 1e-12)


def test_switched_fabric_what_ifs_switch_the_mesh_and_a_bad_topology_is_refused() -> None:
    # NVLink 6, UALink and a 72-GPU rack are switched fabrics; the 8-GPU domain keeps each
    # part's own board
    what_ifs = dict(training.WHAT_IFS)
    for name in ("scale-up domain 72", "scale-up 3.6 TB/s (NVLink 6 claim)"):
        assert what_ifs[name]["scaleup_topology"] == "switch"
    assert what_ifs["scale-up 300 GB/s (article's UALink figure)"]["scaleup_topology"] == "switch"
    assert "scaleup_topology" not in what_ifs["scale-up domain 8"]
    with pytest.raises(ValueError, match="unknown scale-up topology 'ring'; allowed: switch, mesh"):
        training.scaling_curve("MI300X", "llama3.1-8b", spec_overrides={"scaleup_topology": "ring"})


def test_scaleup_cut_efficiency_at_fixed_baseline(fits: pd.DataFrame) -> None:
    # The efficiency ratio's own baseline uses scale-up too; against a fixed (as shipped)
    # baseline, a scale-up cut never helps.
    acc, model = "H200", "llama3.1-70b"
    spec = training.spec_row(acc)
    nominal = training.scaling_curve(acc, model, fits=fits)
    cut = training.scaling_curve(
        acc, model, fits=fits, spec_overrides={"scaleup_bw_gbps": spec["scaleup_bw_gbps"] / 4}
    )
    ok = nominal["feasible"] & cut["feasible"]
    assert ok.any()
    assert (cut.loc[ok, "tokens_per_s_per_gpu"] <= nominal.loc[ok, "tokens_per_s_per_gpu"]).all()


def test_infeasible_is_reported_not_computed(fits: pd.DataFrame) -> None:
    curve = training.scaling_curve("H100-SXM", "llama3.1-405b", gpu_counts=[8, 16, 1024], fits=fits)
    small = curve.loc[curve["n_gpus"] == 8].iloc[0]
    assert not small["feasible"]
    assert math.isnan(small["tokens_per_s_per_gpu"])
    assert "memory" in small["reason"]
    with pytest.raises(ValueError, match="infeasible"):
        training.time_to_train_hours("H100-SXM", "llama3.1-405b", 1e12, 8, fits=fits)


def test_batch_smaller_than_dp_is_infeasible(fits: pd.DataFrame) -> None:
    curve = training.scaling_curve(
        "B200", "llama3.1-8b", gpu_counts=[16384], global_batch_tokens=8192 * 64, fits=fits
    )
    row = curve.iloc[0]
    if not row["feasible"]:
        assert "global batch" in row["reason"] or "memory" in row["reason"]
    else:  # TP x PP x CP absorbs the GPUs: DP must not exceed the batch
        dp = next(int(x[2:]) for x in row["layout"].split() if x.startswith("DP"))
        assert dp <= 64


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: training.scaling_efficiency("H100", "llama3.1-8b", 8), "H100-SXM"),
        (lambda: training.scaling_efficiency("H200", "llama-8b", 8), "Did you mean"),
        (lambda: training.predict_mlperf("H200", "llama2_70b", 8), "llama2_70b_lora"),
        (lambda: training.predict_mlperf("MI300", "llama2_70b_lora", 8), "MI300X"),
        (
            lambda: training.scaling_efficiency("H200", "llama3.1-8b", 8, precision="fp16"),
            "precision",
        ),
    ],
)
def test_unknown_ids_raise_with_suggestions(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_predict_mlperf_reproduces_calibration_points(fits: pd.DataFrame) -> None:
    for r in fits.itertuples():
        got = training.predict_mlperf(
            r.accelerator, r.benchmark, r.n_gpus, batch_seqs=r.batch_seqs, fits=fits
        )
        assert got == pytest.approx(r.measured_min, rel=1e-3)


def test_predict_mlperf_llama31_8b_exists_without_data(fits: pd.DataFrame) -> None:
    t = training.predict_mlperf("B200", "llama31_8b", 8, fits=fits)
    assert 1.0 < t < 10_000.0


def test_validation_columns_and_target() -> None:
    val = training.validate_against_mlperf()
    cols = {
        "round",
        "accelerator",
        "vendor",
        "benchmark",
        "n_gpus",
        "measured_min",
        "predicted_min",
        "err_pct",
        "holdout",
    }
    assert cols <= set(val.columns)
    held = val.loc[val["holdout"]]
    assert len(held) >= 30 and {"AMD", "NVIDIA"} <= set(held["vendor"])
    # held-out rows are never at the count the efficiency was fitted on
    assert (held["n_gpus"] != held["calibration_n_gpus"]).all()
    summary = training.validation_summary(val)
    assert list(summary["group"]) == ["AMD", "NVIDIA", "overall"]
    overall = float(summary.loc[summary["group"] == "overall", "median_abs_err_pct"].iloc[0])
    assert overall < 20.0  # issue 5 target


def test_efficiency_fit_is_plausible(fits: pd.DataFrame) -> None:
    ok = fits.loc[np.isfinite(fits["efficiency"])]
    assert ((ok["mfu"] > 0.1) & (ok["mfu"] < 0.7)).all()
    assert {"MI300X", "MI325X", "H100-SXM", "H200", "B200"} <= set(ok["accelerator"])


def test_evaluate_training_contract() -> None:
    sc = params.load_scenario(paths.CI_PARAMS)
    ev = training.evaluate_training(sc)
    assert list(ev["accelerator"]) == list(sc.accelerators)
    for col in (
        "accelerator",
        "vendor",
        "status",
        "n_gpus",
        "feasible",
        "layout",
        "mfu",
        "scaling_efficiency",
        "tokens_per_s_per_gpu",
        "time_to_train_hours",
        "gpu_hours",
        "reason",
    ):
        assert col in ev.columns
    feas = ev.loc[ev["feasible"]]
    assert np.allclose(feas["gpu_hours"], feas["time_to_train_hours"] * feas["n_gpus"])
    assert ((feas["scaling_efficiency"] > 0) & (feas["scaling_efficiency"] <= 1)).all()
    win = training.training_winner(ev)
    assert win["winner"] in set(sc.candidates)


def test_what_if_rows_and_baseline() -> None:
    sc = params.load_scenario(paths.CI_PARAMS)
    wi = training.what_if_table(sc)
    assert len(wi) == len(sc.accelerators) * len(training.WHAT_IFS)
    shipped = wi.loc[wi["what_if"] == "as shipped", "change_pct"]
    assert (shipped == 0).all()


def test_time_and_gpu_hours_consistent(fits: pd.DataFrame) -> None:
    h = training.time_to_train_hours("H200", "llama3.1-8b", 1e11, 64, fits=fits)
    g = training.gpu_hours("H200", "llama3.1-8b", 1e11, 64, fits=fits)
    assert g == pytest.approx(64 * h)
    assert training.cost_to_train_usd(g, 2.0) == pytest.approx(2 * g)


def test_bench_cases_shape() -> None:
    cases = training.bench_cases()
    assert cases and all(callable(fn) and target > 0 for _, fn, target in cases)


def test_capped_efficiency_is_min_of_one_and_uncapped_ratio() -> None:
    sc = params.load_scenario(paths.DEFAULT_PARAMS)
    curves = training.scaling_curves(sc)
    ok = curves["throughput_ratio"].notna()
    assert (curves["scaling_efficiency"].notna() == ok).all()
    capped = np.minimum(1.0, curves.loc[ok, "throughput_ratio"])
    assert np.array_equal(curves.loc[ok, "scaling_efficiency"].to_numpy(), capped.to_numpy())


def test_key_results_add_efficiency_at_16384_gpus() -> None:
    sc = params.load_scenario(paths.DEFAULT_PARAMS)
    ev = training.evaluate_training(sc)
    curves = training.scaling_curves(sc)
    summary = training.validation_summary(training.validate_against_mlperf())
    keys = training.key_results(ev, summary, curves)
    top = curves.loc[curves["n_gpus"] == 16384].set_index("accelerator")
    for acc in sc.accelerators:
        assert f"scaling_eff_{acc}" in keys
        want = top.at[acc, "scaling_efficiency"]
        got = keys[f"scaling_eff_16384_{acc}"]
        assert (got is None and not np.isfinite(want)) or got == pytest.approx(want, rel=1e-12)
    assert not any(k.startswith("scaling_eff_16384") for k in training.key_results(ev, summary))


def test_default_calibration_is_cached_copied_and_refreshed() -> None:
    from analysis import data

    first = training.fit_efficiencies()
    first["efficiency"] = -1.0  # callers get a copy: the cache is untouched
    again = training.fit_efficiencies()
    assert (again["efficiency"].dropna() > 0).all()
    cached = training._fits_cached(data.default_inputs())
    data.clear_cache()
    assert (
        training._fits_cached(data.default_inputs()) is not cached
    )  # refitted after the tables were reloaded
    pd.testing.assert_frame_equal(training._fits_cached(data.default_inputs()), cached)


def test_validation_detail_matches_summary_counts() -> None:
    val = training.validate_against_mlperf()
    detail = training.validation_detail(val)
    summary = training.validation_summary(val)
    overall = summary.loc[summary["group"] == "overall", "n"].iloc[0]
    assert detail["rows"].sum() == overall
    assert (detail["median_abs_err_pct"] >= detail["median_err_pct"].abs() - 1e-9).all()


def test_overall_error_reads_the_overall_row() -> None:
    val = training.validate_against_mlperf()
    summary = training.validation_summary(val)
    held = val.loc[val["holdout"] & val["err_pct"].notna()]
    assert training.overall_error(summary) == pytest.approx(float(held["err_pct"].abs().median()))
    # the overall row is picked by name, not by position
    assert training.overall_error(summary.iloc[::-1]) == training.overall_error(summary)
    assert math.isnan(training.overall_error(summary.loc[summary["group"] != "overall"]))


def test_throughput_ratio_table_is_counts_by_accelerators() -> None:
    curves = pd.DataFrame(
        {
            "n_gpus": [16, 8, 16, 8, 8, 16],
            "accelerator": ["MI300X", "MI300X", "H200", "H200", "B200", "B200"],
            "throughput_ratio": [0.8, 1.0, 1.2, 1.0, np.nan, np.nan],
        }
    )
    t = training.throughput_ratio_table(curves)
    assert list(t.index) == [8, 16]
    # alphabetical columns; a part with no feasible count has none
    assert list(t.columns) == ["H200", "MI300X"]
    assert t.at[16, "MI300X"] == 0.8 and t.at[16, "H200"] == 1.2


def test_what_if_matrix_matches_the_long_table() -> None:
    sc = params.load_scenario(paths.CI_PARAMS)
    wi = training.what_if_table(sc)
    m = training.what_if_matrix(wi)
    assert sorted(m.index) == list(m.index) == sorted(set(sc.accelerators))
    assert list(m.columns) == sorted(name for name, _ in training.WHAT_IFS)
    for r in wi.itertuples(index=False):
        got = m.at[r.accelerator, r.what_if]
        assert (math.isnan(got) and math.isnan(r.change_pct)) or got == r.change_pct
