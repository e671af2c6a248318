"""Issue 16: the report's serving path scored against InferenceX's measured frontiers.

The InferenceX validation of :mod:`analysis.inference.latency_validation` fits its own
efficiency on the sweeps; the tiers and ``max_throughput_per_gpu`` use MLPerf's. These
tests pin what the check of the path the report uses reads on each side.
"""

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from analysis import inference
from analysis.devtools.validation import print_public_path_validation
from analysis.inference import frontier_validation as fv


def _points(tpot, tput, dates, acc="A", vendor="AMD", precision="fp8"):
    return pd.DataFrame(
        {
            "accelerator": acc,
            "vendor": vendor,
            "model": "deepseek-r1",
            "precision": precision,
            "isl": 1024,
            "osl": 1024,
            "date": dates,
            "median_tpot_ms": tpot,
            "output_tput_per_gpu": tput,
        }
    )


def test_measured_frontier_is_the_best_point_within_each_reached_bound():
    pts = _points([12.0, 18.0, 26.0, 55.0], [40.0, 70.0, 60.0, 300.0], ["2026-05-01"] * 4)
    got = fv.measured_frontiers(pts, (15.0, 20.0, 30.0, 60.0)).set_index("tpot_ms")
    # 30 ms: the best of 12/18/26 ms is the 18 ms point (70), not the last one (60)
    assert got.loc[30.0, "measured"] == 70.0
    assert got.loc[15.0, "measured"] == 40.0
    # 60 ms lies beyond the sweep's slowest point: the sweep, not the bound, capped it
    assert 60.0 not in got.index
    assert got.loc[20.0, "points"] == 2


def test_measured_frontier_reads_only_the_cells_recent_runs():
    # January's run was faster; May's software is what a buyer gets (60-day window)
    pts = _points(
        [10.0, 30.0, 10.0, 30.0],
        [90.0, 400.0, 50.0, 200.0],
        ["2026-01-02"] * 2 + ["2026-05-20"] * 2,
    )
    got = fv.measured_frontiers(pts, (20.0,))
    assert got["measured"].tolist() == [50.0]
    assert got["last_date"].tolist() == ["2026-05-20"]


@pytest.fixture(scope="module")
def scored():
    return fv.validate_public_path()


def test_every_scored_bound_is_the_public_path_at_median_tpot(scored):
    # The modelled side is the bounded frontier the tiers use, read at median TPOT: at a
    # grid point's own TPOT the check returns that point's throughput (best over TP 4, 8).
    row = scored[(scored["accelerator"] == "B200") & (scored["isl"] == 1024)].iloc[0]
    kw = {"precision": str(row["precision"]), "isl": 1024, "osl": int(row["osl"])}
    fronts = [inference.frontier("B200", "deepseek-r1", gpus=tp, **kw) for tp in fv.MODEL_TP]
    best = max(
        np.interp(np.log(row["tpot_ms"]), np.log(f["tpot_ms"]), np.log(f["tokens_per_s_per_gpu"]))
        for f in fronts
    )
    assert row["predicted"] == pytest.approx(float(np.exp(best)), rel=1e-9)
    # H200 holds DeepSeek-R1 at fp8 on 8 GPUs only: TP4 is skipped, not an error
    tp8 = inference.frontier("H200", "deepseek-r1", precision="fp8", isl=1024, osl=1024, gpus=8)
    tight = fv.modelled_frontier(
        "H200",
        "deepseek-r1",
        "fp8",
        1024,
        1024,
        np.array([1.0, float(tp8["tpot_ms"].iloc[3])]),
        inference.default_calibration(),
        None,
    )
    assert np.isnan(tight[0])  # 1 ms: even one sequence is slower
    assert tight[1] == pytest.approx(float(tp8["tokens_per_s_per_gpu"].iloc[3]), rel=1e-9)


def test_scores_cover_both_vendors_and_pair_them(scored):
    assert set(scored["vendor"]) == {"AMD", "NVIDIA"}
    assert scored["predicted"].notna().all()
    np.testing.assert_allclose(
        scored["ape_pct"], (scored["predicted"] / scored["measured"] - 1).abs() * 100
    )
    summ = fv.summary(scored).set_index("vendor")
    pairs = fv.ratio_pairs(scored)
    assert summ.at["overall", "ratio_pairs"] == len(pairs) > 0
    assert summ.at["overall", "ratio_median_err_pct"] == pytest.approx(
        pairs["ratio_err_pct"].median()
    )
    # pairs are at one model, precision, lengths and bound, AMD against NVIDIA
    assert (pairs["measured_ratio"] > 0).all()


def test_validate_models_prints_the_public_path(capsys):
    console = Console(width=250, force_terminal=False)
    print_public_path_validation(console)
    out = capsys.readouterr().out
    assert "Report's serving path" in out
    assert "Same check, per cell" in out


def test_ratio_pair_summary_groups_matched_bounds_by_part_pair():
    base = {"model": "m", "precision": "fp8", "isl": 1024, "osl": 1024, "vendor": "AMD"}
    rows = [
        # two bounds for the AMD part A against NVIDIA's N: 10 % and 30 % off
        {**base, "accelerator": "A", "tpot_ms": 20.0, "measured": 100.0, "predicted": 110.0},
        {**base, "accelerator": "A", "tpot_ms": 40.0, "measured": 100.0, "predicted": 130.0},
        {
            **base,
            "accelerator": "N",
            "vendor": "NVIDIA",
            "tpot_ms": 20.0,
            "measured": 200.0,
            "predicted": 200.0,
        },
        {
            **base,
            "accelerator": "N",
            "vendor": "NVIDIA",
            "tpot_ms": 40.0,
            "measured": 200.0,
            "predicted": 200.0,
        },
    ]
    got = fv.ratio_pair_summary(pd.DataFrame(rows))
    keys = got[["precision", "amd", "nvidia", "pairs"]].to_numpy().tolist()
    assert keys == [["fp8", "A", "N", 2]]
    assert got["measured_ratio"].tolist() == pytest.approx([0.5])
    assert got["predicted_ratio"].tolist() == pytest.approx([0.6])
    assert got["ratio_err_pct"].tolist() == pytest.approx([20.0])
    # No AMD row: no pair, but the same columns (the printout reads them).
    none = fv.ratio_pair_summary(pd.DataFrame(rows[2:]))
    assert none.empty and list(none.columns) == list(got.columns)
