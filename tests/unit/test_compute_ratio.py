"""Issue 16, mechanism B: a workload's and a format's scales act on FLOPs, not on bytes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import inference
from analysis.inference import compute_ratio
from analysis.inference.roofline import ROOFLINE_SHAPE, _terms, hardware_params_at, model_params


def test_scaled_time_by_hand():
    # Linear: 2 ms of bytes, 1 ms of FLOPs; attention: 0.5 ms of bytes, 1 ms of FLOPs;
    # all-reduce 0.25 ms. At kappa 1 the step is max(2, 1) + max(0.5, 1) + 0.25 = 3.25 ms;
    # at kappa 0.25 (FLOPs 4x slower) max(2, 4) + max(0.5, 4) + 0.25 = 8.25 ms.
    pieces = [np.array(v) for v in (2.0, 1.0, 0.5, 1.0, 0.25)]
    assert float(compute_ratio.scaled_time(pieces, 1.0)) == pytest.approx(3.25)
    assert float(compute_ratio.scaled_time(pieces, 0.25)) == pytest.approx(8.25)
    # Bytes-bound operators do not move with kappa until their FLOPs overtake them.
    assert float(compute_ratio.scaled_time(pieces, 0.5)) == pytest.approx(2.0 + 2.0 + 0.25)


def _spec(name: str) -> pd.Series:
    specs = inference._specs(None)
    return specs[specs["accelerator"] == name].iloc[0]


def _model(name: str) -> dict[str, float]:
    models = inference._models(None)
    return model_params(models[models["model"] == name].iloc[0])


def test_a_compute_scale_leaves_a_bytes_bound_step_alone():
    # gpt-oss-120b on one B200 at FP4: one sequence reads weights (bytes-bound); 4,096
    # sequences are mostly FLOP-bound (their KV reads stay bytes). A compute ratio of 0.2
    # must slow the second, not the first.
    hw = hardware_params_at(_spec("B200"), "fp4", ROOFLINE_SHAPE)
    mp = _model("gpt-oss-120b")
    conc = np.array([1.0, 4096.0])
    kw = {"precision": "fp4", "isl": 1024.0, "osl": 1024.0, "gpus": 1.0, "concurrency": conc}
    plain = _terms(hw, mp, **kw)["step_scaled"]
    scaled = _terms({**hw, "compute_ratio": 0.2}, mp, **kw)["step_scaled"]
    assert scaled[0] == pytest.approx(plain[0], rel=1e-9)
    assert scaled[1] > 2.0 * plain[1]


def test_the_calibration_moves_workload_and_precision_scales_onto_flops():
    cal = inference.default_calibration()
    # What is left on bytes and FLOPs together is within the convergence tolerance (1 %)...
    assert cal.leftover().largest_log() < compute_ratio.CONVERGED_LOG
    # ... and the ratios carry the scales: the reference workload is 1, gpt-oss-120b's
    # FLOPs cost several times the roofline's, a part's format above its native one
    # reaches more of its peak.
    assert cal.compute_ratio("llama2-70b-99", "native") == pytest.approx(1.0)
    assert cal.compute_ratio("gpt-oss-120b", "native") < 0.2
    assert cal.compute_ratio("llama2-70b-99", "one above native") > 1.2
    # A model without an MLPerf benchmark is served at the reference workload's ratio.
    assert cal.compute_ratio(None, "native") == pytest.approx(1.0)


def test_a_benchmark_without_a_scale_takes_its_family_median():
    scales = compute_ratio.ComputeScales(workload={"a": 0.25, "b": 1.0, "c": 4.0, "d": 0.5})
    assert scales.ratio("new", None, family=("a", "b", "c")) == pytest.approx(1.0)
    assert scales.ratio("new", None, family=("a", "d")) == pytest.approx(np.sqrt(0.125))
    assert scales.ratio("new", None) == 1.0  # no family: the reference
    both = scales.times(compute_ratio.ComputeScales(workload={"a": 2.0, "e": 3.0}))
    assert both.workload == {"a": 0.5, "b": 1.0, "c": 4.0, "d": 0.5, "e": 3.0}


def test_rows_at_the_compute_ratio_reproduce_the_fit():
    # The efficiencies the calibration's factors describe are the runs' bytes efficiencies at
    # their compute ratio: re-fitting them without a ratio gives the same group factors.
    rows = inference._default_implied()
    cal = inference.default_calibration()
    at = inference.rows_at_compute_ratio(rows, cal)
    assert at["eta"].notna().sum() == rows["eta"].notna().sum()
    gpt = at["benchmark"].astype(str).str.startswith("gpt-oss")
    # gpt-oss-120b's runs read as their FLOPs' efficiency at ratio 1 (about 0.1), as their
    # bytes' at the calibration's ratio (near the other workloads').
    assert rows.loc[gpt, "eta"].median() < 0.2 < at.loc[gpt, "eta"].median()
    refit = inference.fit_efficiency(at)
    for key, eta in cal.by_group.items():
        assert refit.by_group[key] == pytest.approx(eta, rel=1e-9)


def test_fit_with_compute_ratio_converges_on_a_synthetic_workload():
    # Two workloads of one vendor: the second's rows are FLOP-bound with their FLOPs twice
    # as costly as the roofline's. The loop must find kappa = 0.5 for it.
    bytes_, flops = np.array([1.0, 1.0, 0.1, 0.1]), np.array([0.5, 0.5, 1.0, 1.0])
    true_kappa = np.array([1.0, 1.0, 0.5, 0.5])
    step = np.maximum(bytes_, flops / true_kappa) / 0.6  # measured step at eta_b = 0.6
    names = ["ref", "ref", "heavy", "heavy"]

    def solve(scales):
        kappa = np.array([scales.ratio(n, None) for n in names])
        return np.maximum(bytes_, flops / kappa) / step

    def fit(eta):
        base = np.median(eta[:2])
        return {"heavy": float(np.median(eta[2:]) / base)}

    def leftover(scales):
        return compute_ratio.ComputeScales(workload={"heavy": scales["heavy"]})

    fitted, scales = compute_ratio.fit_with_compute_ratio(solve, fit, leftover)
    assert scales.workload["heavy"] == pytest.approx(0.5, rel=2e-2)
    assert abs(np.log(fitted["heavy"])) < compute_ratio.CONVERGED_LOG


def test_eta_table_reads_back_exactly_where_it_must():
    # A row whose efficiency is 0.5 / kappa: log-linear in log kappa, so the interpolation
    # is exact; a second row without an efficiency below kappa 0.1 (outside the bracket).
    def solve(kappa):
        k = np.asarray(kappa, dtype=float)
        return np.stack([0.5 / k[0:1], np.where(k[1:2] < 0.1, np.nan, 0.3)]).ravel()

    calls = []

    def solve_rows(rows, kappa):
        calls.append(list(rows))
        full = np.ones(2)
        full[rows] = kappa
        return solve(full)[rows]

    table = compute_ratio.EtaTable.of(solve_rows, 2)
    calls.clear()  # building the table solves every row at each grid ratio
    got = table.at(np.array([0.37, 0.37]), solve_rows)
    assert got == pytest.approx([0.5 / 0.37, 0.3])
    assert calls == []  # both rows on the grid and finite: no exact solve
    # An interval with a grid end outside the bracket is solved exactly, that row only.
    k = np.array([0.37, compute_ratio.KAPPA_GRID[np.searchsorted(compute_ratio.KAPPA_GRID, 0.1)]])
    got = table.at(k * np.array([1.0, 0.97]), solve_rows)
    assert calls == [[1]] and np.isfinite(got[0])
    # Off the grid: exact; at ratio 1 with the rows' own efficiencies given: those.
    got = table.at(np.array([100.0, 1.0]), solve_rows, exact=np.array([9.0, 0.25]))
    assert got[0] == pytest.approx(0.005) and got[1] == 0.25


def test_the_default_calibration_converged():
    scales = inference.default_calibration().compute
    assert scales.converged and 1 < scales.rounds < compute_ratio.MAX_ROUNDS
    # The vendors' deviations stay on the whole step, shrunk (Calibration.leftover).
    cal = inference.default_calibration()
    assert cal.vendor_workload_scale and cal.vendor_workload_scale == {
        k: v for k, v in cal.vendor_workload_scale.items() if 0.9 < v < 1.1
    }
