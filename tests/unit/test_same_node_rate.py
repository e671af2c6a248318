"""A same-node refresh's tensor rate bounded by its power (issue 16, Blackwell Ultra FP4)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis import data, inference
from analysis.inference.roofline import ROOFLINE_SHAPE
from analysis.inputs import _node_rate_per_watt


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "accelerator": ["old", "new", "other-node", "other-vendor"],
            "vendor": ["V", "V", "V", "W"],
            "process_node": ["N1", "N1", "N2", "N1"],
            "launch_year": [2024, 2025, 2025, 2023],
            "tdp_w": [1000.0, 1100.0, 1100.0, 500.0],
            "bf16_dense_tflops": [2000.0, 2000.0, 2000.0, 2000.0],
            "fp8_dense_tflops": [4000.0, 4000.0, 4000.0, 4000.0],
            "fp4_dense_tflops": [8000.0, 12000.0, 12000.0, float("nan")],
        }
    )


def test_predecessor_rate_per_watt_is_same_vendor_same_node_earlier_only():
    got = _node_rate_per_watt(_frame())["fp4_node_tflops_per_w"]
    # Only "new" has a predecessor ("old": same vendor and node, earlier): 8000 / 1000 W.
    assert math.isnan(got[0]) and math.isnan(got[2]) and math.isnan(got[3])
    assert got[1] == pytest.approx(8.0)


def test_sustained_rate_is_tdp_times_predecessor_rate_per_watt():
    spec = _frame().assign(**_node_rate_per_watt(_frame())).iloc[1]
    # 1100 W x 8 TFLOPS/W = 8800 < the 12000 spec; fp8 (4000 < 1100 x 4) keeps its spec.
    assert inference.sustained_tflops(spec, "fp4") == pytest.approx(8800.0)
    assert inference.sustained_tflops(spec, "fp8") == pytest.approx(4000.0)


def test_bundled_blackwell_ultra_fp4_is_bounded_and_nothing_else_moves():
    specs = data.load_specs().set_index("accelerator")
    b300 = inference.hardware_params_at(specs.loc["B300"].rename("B300"), "fp4", ROOFLINE_SHAPE)
    gb300 = inference.hardware_params_at(specs.loc["GB300"].rename("GB300"), "fp4", ROOFLINE_SHAPE)
    # B200's 9 PFLOPS FP4 at 1000 W: 9 TFLOPS/W, times 1100 W and 1400 W.
    assert b300["peak_tflops"] == pytest.approx(9900.0)
    assert gb300["peak_tflops"] == pytest.approx(12600.0)
    for acc in specs.index:
        spec = specs.loc[acc].rename(acc)
        for prec, col in inference.PEAK_COLUMN.items():
            if acc in ("B300", "GB300") and prec == "fp4":
                continue
            if not spec[col] > 0:
                continue
            assert inference.sustained_tflops(spec, prec) == pytest.approx(spec[col]), (acc, prec)


def test_the_configuration_sweep_runs_at_the_bounded_rate():
    # the 10,000-configuration sweep takes each format's peak from the same bounded rate
    # as the roofline (B300 FP4 at 9.9 PFLOPS, not the 13.5 of its datasheet): the same
    # sweep on a spec table whose B300 datasheet FP4 is cut to 9.9 gives the same numbers
    specs = data.load_specs()
    models = data.load_models()
    few = specs[specs["accelerator"].isin(["B200", "B300"])].reset_index(drop=True)
    one = models[models["model"] == "llama2-70b"].reset_index(drop=True)
    kw = {"isl": 1024, "osl": 1024, "models": one, "precisions": ("fp4",)}
    got = inference.sweep(specs=few, **kw)
    cut = few.copy()
    cut.loc[cut["accelerator"] == "B300", "fp4_dense_tflops"] = 9900.0
    want = inference.sweep(specs=cut, **kw)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, want)
