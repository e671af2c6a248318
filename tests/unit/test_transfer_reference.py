"""The transfer reference: a held-out point carried over from another cell's measured sweep.

:func:`analysis.inference.latency_diagnostics.transferred` on hand-worked frames: the
lender's measurement times the model's ratio of the two parts, never the point's own cell,
one software release apart at most, the tightest lender first.
"""

import numpy as np
import pandas as pd
import pytest

from analysis.inference import latency_diagnostics as ld

CONFIG = {
    "model": "DeepSeek-R1",
    "framework": "sglang",
    "decode_tp": 8,
    "decode_ep": 1,
    "decode_dp_attention": False,
    "isl": 1024,
    "osl": 1024,
}


def _row(acc, prec, tpot, measured, predicted, date="2026-01-10", **attrs):
    gen = {"A1": "G1", "A2": "G1", "A3": "G2", "A4": "G3", "N1": "H1"}[acc]
    bw = {"A1": 5.0, "A2": 6.0, "A3": 8.0, "A4": 5.5, "N1": 5.0}[acc]
    vendor = "NVIDIA" if acc.startswith("N") else "AMD"
    return {
        **CONFIG,
        "accelerator": acc,
        "precision": prec,
        "vendor": vendor,
        "generation": gen,
        "memory_bw_tbps": bw,
        "median_tpot_ms": tpot,
        "measured": measured,
        "predicted": predicted,
        "date": date,
        **attrs,
    }


def _cross(df):
    # Every fold predicts every point as the frame does (one model for all folds).
    cells = sorted(set(df["accelerator"] + " x " + df["precision"]))
    return pd.DataFrame({c: df["predicted"].to_numpy(float) for c in cells})


def _lend(df, share=()):
    return ld.transferred(df, _cross(df), share)


def _lender(acc="A2", prec="fp8", date="2026-01-10", scale=1.25):
    # A sweep whose measurement is `scale` x the model's everywhere.
    return [
        _row(acc, prec, 10.0, 100.0 * scale, 100.0, date),
        _row(acc, prec, 20.0, 200.0 * scale, 200.0, date),
    ]


def test_a_point_takes_the_lenders_measurement_times_the_models_ratio():
    df = pd.DataFrame([_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender()])
    out = _lend(df)
    # The lender measures 1.25x its prediction at every TPOT, so the point gets 1.25 x 90.
    assert out[0] == pytest.approx(112.5)
    # The lender's points borrow the first row's single point within 0.3 of its log TPOT:
    # at 20 ms (log 20/15 = 0.29), not at 10 ms (0.41).
    assert np.isnan(out[1:]).sum() == 1


def test_the_points_own_cell_never_lends():
    # Its own cell's sweep two days later would reach it; it is not a lender.
    df = pd.DataFrame(
        [_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender("A1", "fp8", date="2026-01-12")]
    )
    assert np.isnan(_lend(df)).all()
    # The same sweep on another part lends.
    df = pd.DataFrame(
        [_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender("A2", "fp8", date="2026-01-12")]
    )
    assert np.isfinite(_lend(df)[0])


@pytest.mark.parametrize(("date", "lent"), [("2026-01-17", True), ("2026-01-18", False)])
def test_lenders_run_within_a_week(date, lent):
    df = pd.DataFrame([_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender(date=date)])
    assert np.isfinite(_lend(df)[0]) == lent


@pytest.mark.parametrize(("tpot", "lent"), [(25.0, True), (28.0, False), (7.5, True), (7.0, False)])
def test_a_lender_reaches_0_3_past_its_ends(tpot, lent):
    # log(25/20) = 0.22, log(28/20) = 0.34; log(10/7.5) = 0.29, log(10/7) = 0.36.
    df = pd.DataFrame([_row("A1", "fp8", tpot, 999.0, 90.0), *_lender()])
    assert np.isfinite(_lend(df)[0]) == lent


def test_past_its_ends_a_lender_holds_its_last_measured_over_predicted():
    # A lender whose measurement and prediction slope opposite ways (the measurement falls
    # from 10 to 11 ms, the model rises): extended on their own the two curves would
    # diverge; their ratio is held at either end.
    point = _row("A1", "fp8", 11.5, 999.0, 90.0)
    lender = [
        _row("A2", "fp8", 10.0, 300.0, 100.0),
        _row("A2", "fp8", 11.0, 30.0, 120.0),
    ]
    df = pd.DataFrame([point, *lender])
    # log(11.5 / 11) = 0.044 past the end: the last point's 30 / 120 holds.
    assert _lend(df)[0] == pytest.approx(30.0 / 120.0 * 90.0)
    # log(10 / 9.5) = 0.051 before the start: the first point's 300 / 100 holds.
    df = pd.DataFrame([_row("A1", "fp8", 9.5, 999.0, 90.0), *lender])
    assert _lend(df)[0] == pytest.approx(300.0 / 100.0 * 90.0)
    # Between the two points the log ratio is interpolated in log TPOT.
    df = pd.DataFrame([_row("A1", "fp8", 10.5, 999.0, 90.0), *lender])
    w = np.log(10.5 / 10.0) / np.log(11.0 / 10.0)
    gap = (1 - w) * np.log(3.0) + w * np.log(0.25)
    assert _lend(df)[0] == pytest.approx(np.exp(gap) * 90.0)


def test_nearer_bandwidth_then_fewer_days_break_ties():
    point = _row("A1", "fp8", 15.0, 999.0, 90.0)  # generation G1, 5 TB/s
    # Two other generations of the vendor at the point's format: the nearer bandwidth
    # first (5.5 TB/s against 8), though the farther one's rows come first.
    far_bw = _lender("A3", "fp8", scale=2.0)
    near_bw = _lender("A4", "fp8", scale=3.0)
    df = pd.DataFrame([point, *far_bw, *near_bw])
    assert _lend(df)[0] == pytest.approx(3.0 * 90.0)
    # Another vendor, at the point's very bandwidth (5 TB/s), comes after the vendor's own.
    df = pd.DataFrame([point, *_lender("N1", "fp8", scale=4.0), *far_bw])
    assert _lend(df)[0] == pytest.approx(2.0 * 90.0)
    # Two sweeps of one part and format: the nearer date first.
    early = _lender("A2", "fp8", date="2026-01-04", scale=2.0)
    late = _lender("A2", "fp8", date="2026-01-12", scale=3.0)
    df = pd.DataFrame([point, *early, *late])
    assert _lend(df)[0] == pytest.approx(3.0 * 90.0)


def test_a_rule_keeps_lenders_that_share_its_columns():
    df = pd.DataFrame([_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender("N1", "fp8")])
    assert np.isfinite(_lend(df)[0])
    assert np.isnan(_lend(df, ("vendor",))[0])
    assert np.isnan(_lend(df, ("generation", "precision"))[0])


def test_the_tightest_lender_comes_first():
    point = _row("A1", "fp8", 15.0, 999.0, 90.0)
    same_gen = _lender("A2", "fp8", date="2026-01-15", scale=2.0)  # same generation, 5 days
    other_gen = _lender("A3", "fp8", date="2026-01-10", scale=3.0)  # other generation, same day
    other_fmt = _lender("A2", "fp4", date="2026-01-10", scale=4.0)  # same generation, fp4
    df = pd.DataFrame([point, *other_gen, *other_fmt, *same_gen])
    assert _lend(df)[0] == pytest.approx(2.0 * 90.0)
    # Without the same generation's fp8, its fp4 comes before another generation's fp8.
    df = pd.DataFrame([point, *other_gen, *other_fmt])
    assert _lend(df)[0] == pytest.approx(4.0 * 90.0)
    # Another vendor lends last, whatever its bandwidth.
    df = pd.DataFrame([point, *_lender("N1", "fp8", scale=5.0), *other_gen])
    assert _lend(df)[0] == pytest.approx(3.0 * 90.0)


def test_the_reference_scores_every_point_and_bounds_each_cell_with_hindsight():
    specs = pd.DataFrame(
        {
            "accelerator": ["A1", "A2", "A3", "N1"],
            "architecture": ["G1", "G1", "G2", "H1"],
            "memory_bw_tbps": [5.0, 6.0, 8.0, 5.0],
        }
    )
    rows = [_row("A1", "fp8", t, 100.0, p) for t, p in [(12.0, 80.0), (15.0, 150.0)]]
    rows += _lender("A2", "fp8") + _lender("N1", "fp8", scale=0.5)
    df = pd.DataFrame(rows).drop(columns=["generation", "memory_bw_tbps"])
    ref = ld.transfer_reference(df, _cross(df), specs)
    assert ref["predictor"].iloc[0] == "the model alone (as held out)"
    assert ref["predictor"].iloc[-1] == "best row per cell, chosen with hindsight"
    assert (ref["points"] == len(df)).all()
    model_ape = np.abs(df["predicted"] / df["measured"] - 1.0) * 100.0
    assert ref["overall_median_ape_pct"].iloc[0] == pytest.approx(model_ape.median())
    assert ref["anchored"].iloc[1:-1].gt(0).all()
    # The hindsight row is no worse than any row, per cell, so no worse overall here.
    assert ref["overall_median_ape_pct"].iloc[-1] <= ref["overall_median_ape_pct"].min() + 1e-9


def test_the_ratio_of_two_parts_comes_from_the_points_own_fold():
    # The fold that held A1 out predicts the lender at 200 (not the frame's 100): the
    # lender then measures 125 / 200 of that fold's prediction, and the point gets it.
    df = pd.DataFrame([_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender()])
    cross = _cross(df)
    cross.loc[1:, "A1 x fp8"] = cross.loc[1:, "A1 x fp8"] * 2.0
    assert ld.transferred(df, cross, ())[0] == pytest.approx(1.25 / 2.0 * 90.0)


def test_a_cross_frame_of_other_folds_is_refused():
    specs = pd.DataFrame(
        {"accelerator": ["A1", "A2"], "architecture": ["G1", "G1"], "memory_bw_tbps": [5.0, 6.0]}
    )
    df = pd.DataFrame([_row("A1", "fp8", 15.0, 999.0, 90.0), *_lender()])
    df = df.drop(columns=["generation", "memory_bw_tbps"])
    cross = _cross(df)
    cross.loc[0, "A1 x fp8"] = 91.0  # not the point's held-out prediction
    with pytest.raises(ValueError, match="does not predict this frame's points"):
        ld.transfer_reference(df, cross, specs)
    with pytest.raises(ValueError, match="does not hold the folds"):
        ld.transfer_reference(df, _cross(df).iloc[:2], specs)


def test_both_tables_come_from_one_set_of_transfers():
    specs = pd.DataFrame(
        {"accelerator": ["A1", "A2"], "architecture": ["G1", "G1"], "memory_bw_tbps": [5.0, 6.0]}
    )
    rows = [_row("A1", "fp8", t, 100.0, p) for t, p in [(12.0, 80.0), (15.0, 150.0)]]
    df = pd.DataFrame(rows + _lender()).drop(columns=["generation", "memory_bw_tbps"])
    reference, per_cell = ld.transfer_tables(df, _cross(df), specs)
    pd.testing.assert_frame_equal(reference, ld.transfer_reference(df, _cross(df), specs))
    assert list(per_cell.columns[2:]) == reference["predictor"].tolist()
    # Every scored point in one cell, and each cell's model column its own median APE.
    assert per_cell["cell"].tolist() == ["A1 x fp8", "A2 x fp8"]
    assert per_cell["points"].sum() == reference["points"].iloc[0]
    ape = (df["predicted"] / df["measured"] - 1.0).abs() * 100.0
    by_cell = ape.groupby(df["accelerator"] + " x " + df["precision"]).median()
    np.testing.assert_allclose(per_cell[reference["predictor"].iloc[0]], by_cell.to_numpy())
