"""Derived hardware metrics: formulas on a small frame, and sanity on the real spec table."""

import math

import pandas as pd
import pytest

from analysis import data, hardware


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "accelerator": ["A", "B"],
            "vendor": ["AMD", "NVIDIA"],
            "status": ["shipping", "announced"],
            "label": ["A", "B (announced)"],
            "architecture": ["x", "y"],
            "launch_year": [2023, 2026],
            "memory_gb": [192.0, 80.0],
            "memory_bw_tbps": [5.3, 3.35],
            "bf16_dense_tflops": [1307.4, 989.5],
            "fp8_dense_tflops": [2614.9, 1979.0],
            "fp6_dense_tflops": [float("nan"), float("nan")],
            "fp4_dense_tflops": [float("nan"), 9000.0],
            "tdp_w": [750.0, 700.0],
            "scaleup_bw_gbps": [896.0, 900.0],
            "scaleup_domain_gpus": [8, 72],
        }
    )


def test_ridge_point_is_flops_over_bytes(frame):
    ridge = hardware.ridge_point(frame, "bf16")
    assert ridge.tolist() == pytest.approx([1307.4 / 5.3, 989.5 / 3.35])
    assert hardware.bytes_per_flop(frame, "bf16").tolist() == pytest.approx(
        [5.3 / 1307.4, 3.35 / 989.5]
    )


def test_unsupported_precision_stays_nan(frame):
    ridge = hardware.ridge_point(frame, "fp4")
    assert math.isnan(ridge.iloc[0])
    assert ridge.iloc[1] == pytest.approx(9000 / 3.35)


def test_unknown_precision_is_a_clear_error(frame):
    with pytest.raises(ValueError, match="unknown precision 'int3'; allowed: fp64, tf32"):
        hardware.ridge_point(frame, "int3")


def test_per_watt_metrics(frame):
    assert hardware.tflops_per_watt(frame, "fp8").tolist() == pytest.approx(
        [2614.9 / 750, 1979 / 700]
    )
    assert hardware.memory_gb_per_kw(frame).tolist() == pytest.approx([256.0, 80 / 0.7])
    assert hardware.bandwidth_gbps_per_w(frame).tolist() == pytest.approx([5300 / 750, 3350 / 700])


def test_scaleup_metrics(frame):
    assert hardware.scaleup_domain_memory_tb(frame).tolist() == pytest.approx([1.536, 5.76])
    # 896 GB/s per 1307.4 TFLOP/s = 0.685 bytes per kFLOP
    assert hardware.scaleup_bytes_per_flop(frame, "bf16").iloc[0] == pytest.approx(
        896e9 / 1307.4e12 * 1e3
    )


def test_ratio(frame):
    assert hardware.ratio(frame, "memory_bw_tbps", "A", "B") == pytest.approx(5.3 / 3.35)
    with pytest.raises(ValueError, match=r"\['Z'\] not in the specs frame"):
        hardware.ratio(frame, "memory_bw_tbps", "Z", "B")


def test_derived_metrics_keeps_rows_and_identity(frame):
    out = hardware.derived_metrics(frame)
    assert out["accelerator"].tolist() == ["A", "B"]
    assert {"ridge_flop_per_byte_bf16", "tflops_per_w_fp8", "memory_gb_per_kw"} <= set(out.columns)


def test_compute_by_precision_drops_unsupported(frame):
    long = hardware.compute_by_precision(frame)
    assert set(long.loc[long["accelerator"] == "A", "precision"]) == {"bf16", "fp8"}
    assert set(long.loc[long["accelerator"] == "B", "precision"]) == {"bf16", "fp8", "fp4"}
    assert (long["dense_tflops"] > 0).all()


def test_real_specs_mi300x_vs_h100():
    specs = data.load_specs()
    assert hardware.ratio(specs, "memory_bw_tbps", "MI300X", "H100-SXM") == pytest.approx(
        5.3 / 3.35
    )
    ridge = hardware.ridge_point(specs, "bf16").set_axis(specs["accelerator"])
    # Every part needs hundreds of FLOP per byte to be compute-bound at BF16.
    assert (ridge.dropna() > 100).all()
    assert ridge["H100-SXM"] == pytest.approx(989.5 / 3.35)


def test_model_table_converts_kv_sizes_to_binary_units():
    models = pd.DataFrame(
        {
            "model": ["m1", "m2"],
            "kv_bytes_per_token_bf16": [70272, 327680],
            "kv_window_bytes_bf16": [0, 4718592],
        }
    )
    out = hardware.model_table(models)
    assert out["kv_kib_per_token"].tolist() == pytest.approx([68.625, 320.0])
    assert out["kv_window_mib"].tolist() == pytest.approx([0.0, 4.5])
    # The original columns are kept, in order, and the input is not modified.
    assert out.columns.tolist()[:3] == ["model", "kv_bytes_per_token_bf16", "kv_window_bytes_bf16"]
    assert "kv_kib_per_token" not in models.columns


def test_largest_memory_part_prefers_shipping(frame):
    # B has less memory but is announced; A is the only shipping part.
    assert hardware.largest_memory_part(frame)["accelerator"] == "A"
    bigger_announced = frame.assign(memory_gb=[192.0, 432.0])
    assert hardware.largest_memory_part(bigger_announced)["accelerator"] == "A"


def test_largest_memory_part_falls_back_to_any_part(frame):
    announced_only = frame.assign(status=["announced", "announced"])
    assert hardware.largest_memory_part(announced_only)["accelerator"] == "A"
    announced_only = announced_only.assign(memory_gb=[192.0, 432.0])
    assert hardware.largest_memory_part(announced_only)["accelerator"] == "B"
    with pytest.raises(ValueError, match="no rows"):
        hardware.largest_memory_part(frame.iloc[:0])


def test_key_results_of_a_small_scenario():
    all_specs = data.load_specs()
    specs = data.load_specs(accelerators=["MI300X", "H200", "MI455X"])
    models = pd.DataFrame({"model": ["m1", "m2", "m3"]})
    spec_values = pd.DataFrame({"basis": ["published", "estimate", "estimate", "derived"]})
    coverage = pd.DataFrame({"accelerator": ["MI300X", "MI300X", "H200"]})
    out = hardware.key_results(specs, all_specs, models, spec_values, ["s1", "s2"], coverage)
    assert list(out) == [
        "accelerators_in_scenario",
        "announced_in_scenario",
        "models",
        "sources_cited_by_specs_and_models",
        "spec_values_estimated",
        "max_memory_shipping_accelerator",
        "max_memory_shipping_gb",
        "memory_gb_ratio_MI300X_over_H100-SXM",
        "memory_bw_ratio_MI300X_over_H100-SXM",
        "bf16_ridge_flop_per_byte_H100-SXM",
        "bf16_ridge_flop_per_byte_MI300X",
        "mlperf_accelerators_covered",
    ]
    assert out["accelerators_in_scenario"] == 3
    assert out["announced_in_scenario"] == 1
    assert out["models"] == 3
    assert out["sources_cited_by_specs_and_models"] == 2
    assert out["spec_values_estimated"] == 2
    # MI455X (announced) has more HBM but only shipping parts count: MI300X 192 GB > H200 141.
    assert out["max_memory_shipping_accelerator"] == "MI300X"
    assert out["max_memory_shipping_gb"] == pytest.approx(192.0)
    # Ratios and ridge points come from the full table even though H100-SXM is not a candidate.
    assert out["memory_bw_ratio_MI300X_over_H100-SXM"] == pytest.approx(5.3 / 3.35)
    assert out["bf16_ridge_flop_per_byte_H100-SXM"] == pytest.approx(989.5 / 3.35)
    assert out["mlperf_accelerators_covered"] == 2
