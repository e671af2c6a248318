"""Per-tier uncertainty: each tier's figure carries the error of how it was made.

:func:`analysis.inference.tier_uncertainty` on hand-made tiers with known check errors,
the Monte Carlo drawing a tier row with its own sigma, the team's residual overriding
both, the cell hold-out keeping the whole accelerator x precision out of its fold's fit,
and the real checks read from the same validations the inference chapter prints.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import fleet, inference, measurements, params, paths, tco
from analysis.inference import deployment_fit, frontier_validation
from analysis.inference import tier_checks as tu
from analysis.inference.uncertainty import sigma_for_median_ape
from analysis.inputs import resolve
from analysis.tco.formulas import Z_95

#: Check key -> per-vendor median APE the stubbed checks report.
CHECK_ERRORS = {
    "repeat": {"AMD": 17.0, "NVIDIA": 4.0, "overall": 8.0},
    "configuration:aggregated": {"AMD": 30.0, "NVIDIA": 70.0, "overall": 55.0},
    "configuration:disaggregated": {"AMD": 17.5, "NVIDIA": 19.8, "overall": 19.7},
    "cell:disaggregated": {"NVIDIA": 18.0, "overall": 19.0},
    "frontier": {"AMD": 42.0, "NVIDIA": 37.0, "overall": 39.0},
}


@pytest.fixture
def stub_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []

    def fake(key: str, inp: object) -> dict[str, float]:
        asked.append(key)
        return CHECK_ERRORS[key]

    monkeypatch.setattr(tu, "_check_errors", fake)
    monkeypatch.setattr(tu, "_frontier_models", lambda inp: {"deepseek-r1"})
    return asked


def _tier(ti, acc, vendor, basis, kind, tpot=25.0):
    return {
        "tier_index": ti,
        "tier": f"t{ti}",
        "tpot_ms_max": tpot,
        "accelerator": acc,
        "vendor": vendor,
        "deployment_basis": basis,
        "deployment_kind": kind,
    }


CASES = pd.DataFrame(
    {
        "accelerator": ["B300", "MI355X", "MI455X"],
        "vendor": ["NVIDIA", "AMD", "AMD"],
        "case": ["measured combination", "new workload for this vendor", "new accelerator"],
        "median_ape_pct": [10.0, 20.0, 9.0],
    }
)


def test_each_basis_reads_its_check_and_takes_the_larger_error(stub_checks):
    tiers = pd.DataFrame(
        [
            _tier(0, "B300", "NVIDIA", "measured", "disaggregated"),  # repeat 4 < case 10
            _tier(0, "MI355X", "AMD", "measured-calibrated", "expert-parallel"),  # agg 30
            _tier(0, "MI455X", "AMD", "modelled, no measurement", "disaggregated"),  # overall
            _tier(1, "B300", "NVIDIA", "MLPerf-calibrated", "aggregated"),  # frontier 37
            _tier(2, "B300", "NVIDIA", "MLPerf-calibrated", "aggregated", tpot=np.nan),
        ]
    )
    got = tu.tier_uncertainty(tiers, CASES, "deepseek-r1", inputs=resolve(None))
    assert got["error_source"].tolist() == ["case", "check", "check", "check", "case"]
    assert got["check_ape_pct"].tolist()[:4] == [4.0, 30.0, 19.0, 37.0]
    assert got["median_ape_pct"].tolist() == [10.0, 30.0, 19.0, 37.0, 10.0]
    assert got.loc[1, "check"].endswith("(aggregated runs)")  # expert-parallel runs aggregated
    assert got.loc[4, "check"] == "" and np.isnan(got.loc[4, "check_ape_pct"])
    for ape, sig in zip(got["median_ape_pct"], got["throughput_log_sigma"], strict=True):
        assert sig == pytest.approx(sigma_for_median_ape(ape))
    # Only the checks the tiers need are run; the unbounded tier runs none.
    assert sorted(set(stub_checks)) == [
        "cell:disaggregated",
        "configuration:aggregated",
        "frontier",
        "repeat",
    ]


def test_a_model_without_sweeps_checks_only_its_deployment_model_figures(stub_checks):
    tiers = pd.DataFrame(
        [
            _tier(0, "B300", "NVIDIA", "MLPerf-calibrated", "aggregated"),
            _tier(0, "MI455X", "AMD", "modelled, no measurement", "disaggregated"),
        ]
    )
    got = tu.tier_uncertainty(tiers, CASES, "llama2-70b", inputs=resolve(None))
    # MLPerf-calibrated: no sweep of this model, the case error alone, no check run.
    assert got.loc[0, "error_source"] == "case" and got.loc[0, "median_ape_pct"] == 10.0
    # The deployment model carried to this model: the part-held-out check is its floor.
    assert got.loc[1, "error_source"] == "check" and got.loc[1, "median_ape_pct"] == 19.0
    assert stub_checks == ["cell:disaggregated"]


def test_the_disaggregated_configuration_check_is_the_chapters_validation(monkeypatch):
    sentinel = pd.DataFrame({"vendor": ["AMD"], "ape_pct": [12.0]})
    monkeypatch.setattr(deployment_fit, "validation", lambda inputs=None: sentinel)
    got = deployment_fit.held_out("disaggregated", "configuration", resolve(None))
    assert got is sentinel


def test_the_hybrid_plan_draws_a_tier_row_with_its_own_sigma():
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    inp = tco.cost_inputs(sc)
    tier = tco.example_tiers(sc)
    tier = tier[tier["tier_index"] == tier["tier_index"].min()].reset_index(drop=True)
    train = tco.example_training(sc)
    base = fleet._draw_costs(sc, inp, tier, train)["mtok"]
    wide = fleet._draw_costs(sc, inp, tier.assign(throughput_log_sigma=0.8), train)["mtok"]

    def spread(x: np.ndarray) -> np.ndarray:
        lo, hi = np.nanquantile(x, [0.05, 0.95], axis=1)
        return hi / lo

    assert (spread(wide) > spread(base) * 1.5).all()


def _grp(sigmas: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"accelerator": ["a", "b"], "throughput_log_sigma": sigmas})


def test_a_tier_row_draws_its_own_sigma_on_its_accelerators_normal():
    z = np.random.default_rng(1).standard_normal((2, 1000))
    d = {"inference_throughput_factor": np.exp(0.1 * z), "throughput_z": z}
    got = tco.tier_throughput_factors(_grp([0.5, np.nan]), [0, 1], d)
    np.testing.assert_array_equal(got[0], np.exp(0.5 * z[0]))  # same world, wider spread
    np.testing.assert_array_equal(got[1], d["inference_throughput_factor"][1])  # NaN: as before
    plain = tco.tier_throughput_factors(pd.DataFrame({"accelerator": ["a"]}), [0], d)
    np.testing.assert_array_equal(plain, d["inference_throughput_factor"][[0]])


def test_the_monte_carlo_widens_a_tier_with_a_larger_sigma_and_nothing_else():
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    tiers = tco.example_tiers(sc)
    base = tco.simulate(sc, tiers, None, n=4000)
    same = tco.simulate(sc, tiers.assign(throughput_log_sigma=np.nan), None, n=4000)
    assert same.tiers["throughput_log_sigma"].isna().all()
    pd.testing.assert_frame_equal(base.tiers, same.tiers.drop(columns="throughput_log_sigma"))
    acc = str(tiers["accelerator"].iloc[0])
    wide = tiers.assign(throughput_log_sigma=np.where(tiers["accelerator"] == acc, 0.8, np.nan))
    got = tco.simulate(sc, wide, None, n=4000).tiers
    mine, other = got["accelerator"] == acc, got["accelerator"] != acc
    span = got["cost_per_mtok_p95"] / got["cost_per_mtok_p05"]
    base_span = base.tiers["cost_per_mtok_p95"] / base.tiers["cost_per_mtok_p05"]
    assert (span[mine] > base_span[mine] * 1.5).all()
    np.testing.assert_allclose(span[other], base_span[other])


def test_the_tornado_swings_a_tier_row_over_its_own_sigma():
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    tiers = tco.example_tiers(sc)
    inp = tco.cost_inputs(sc)
    title, base = tco.tier_sensitivity(tco.simulate(sc, tiers, None, n=500), inp)
    nan = tiers.assign(throughput_log_sigma=np.nan)
    pd.testing.assert_frame_equal(
        tco.tier_sensitivity(tco.simulate(sc, nan, None, n=500), inp)[1], base
    )
    amd = title.split(" minus ")[0]
    wide = tiers.assign(throughput_log_sigma=np.where(tiers["accelerator"] == amd, 0.8, np.nan))
    got = tco.tier_sensitivity(tco.simulate(sc, wide, None, n=500), inp)[1].set_index("input")
    row = got.loc[[i for i in got.index if "throughput" in i and amd in i][0]]
    assert (row["low"], row["high"]) == pytest.approx((np.exp(-Z_95 * 0.8), np.exp(Z_95 * 0.8)))
    before = base.set_index("input").loc[row.name]
    assert row["swing"] > before["swing"] * 2
    others = got.drop(index=row.name)
    pd.testing.assert_frame_equal(
        others.sort_index(), base.set_index("input").drop(index=row.name).sort_index()
    )


def test_the_teams_residual_replaces_the_tier_error(monkeypatch):
    tiers = pd.DataFrame(
        [
            _tier(0, "B300", "NVIDIA", "measured", "aggregated"),
            _tier(0, "MI355X", "AMD", "measured", "aggregated"),
        ]
    )
    fake = tiers[["tier_index", "tier", "accelerator", "vendor"]].assign(
        median_ape_pct=[10.0, 20.0],
        error_source="check",
        throughput_log_sigma=[0.15, 0.3],
    )
    monkeypatch.setattr(inference, "tier_uncertainty", lambda *a, **k: fake.copy())
    monkeypatch.setattr(measurements, "throughput_sigmas", lambda mc, sc: {"MI355X": 0.05})
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    got = measurements.tier_errors(tiers, None, sc, cases=CASES)  # type: ignore[arg-type]
    assert got["throughput_log_sigma"].tolist() == [0.15, 0.05]
    assert got["error_source"].tolist() == ["check", "your measurements"]
    merged = measurements.with_tier_sigmas(tiers, got)
    assert merged["throughput_log_sigma"].tolist() == [0.15, 0.05]
    assert merged[tiers.columns].equals(tiers)


def test_the_cell_hold_out_keeps_the_whole_part_and_precision_out_of_its_fit(monkeypatch):
    implied = pd.DataFrame(
        {
            "accelerator": ["A", "A", "A", "B"],
            "precision": ["fp8", "fp8", "fp4", "fp8"],
            "kind": ["aggregated", "disaggregated", "disaggregated", "disaggregated"],
            "tput_per_gpu": [1.0, 2.0, 3.0, 4.0],
        }
    )
    fitted_on: list[set[tuple[str, str]]] = []

    def fit(rows: pd.DataFrame) -> object:
        fitted_on.append(set(zip(rows["accelerator"], rows["precision"], strict=True)))
        return object()

    monkeypatch.setattr(deployment_fit, "fit_calibration", fit)
    monkeypatch.setattr(
        deployment_fit, "predict_points", lambda held, cal, matched=False: np.ones(len(held))
    )
    got = deployment_fit.validate_by_configuration(
        implied, "disaggregated", unit=deployment_fit.CELL_KEYS
    )
    assert sorted(got["config"]) == ["A | fp4", "A | fp8", "B | fp8"]  # disaggregated rows only
    assert fitted_on == [
        {("A", "fp8"), ("B", "fp8")},
        {("A", "fp4"), ("B", "fp8")},
        {("A", "fp8"), ("A", "fp4")},
    ]


def test_the_frontier_check_is_the_chapters_public_path_error():
    inp = resolve(None)
    got = tu._check_errors("frontier", inp)
    summary = frontier_validation.summary(frontier_validation.validate_public_path(inputs=inp))
    for vendor, ape in summary.set_index("vendor")["median_ape_pct"].items():
        assert got[str(vendor)] == pytest.approx(float(ape))
