"""Issue 16, mechanism C: a per-layer overhead every model pays, by its kernels.

The serving shape's per-layer overhead is fitted on the DeepSeek-R1 sweeps; a dense
model used to pay none of it. It is charged per kernel now
(:mod:`analysis.inference.layer_kernels`), and InferenceX's published pages check the
result (:mod:`analysis.inference.published_checks`).
"""

import math

import numpy as np
import pytest
from rich.console import Console

from analysis import data
from analysis.devtools.validation import print_published_checks
from analysis.inference import published_checks as pc
from analysis.inference.layer_kernels import (
    REFERENCE_LAYER_KERNELS,
    layer_kernels,
    overhead_layers,
)
from analysis.inference.roofline import (
    ServingShape,
    _terms,
    hardware_params_at,
    model_params,
)
from analysis.inputs import Inputs
from analysis.tables import ALL


def _mp(model: str) -> dict[str, float]:
    models = data.load_models().set_index("model", drop=False)
    return model_params(models.loc[model])


def test_kernel_counts_by_architecture():
    # GQA attention 6 + dense MLP 4; + routed MoE 8 instead; MLA 11 + MoE 8 + shared 4
    assert layer_kernels(mla=False, moe=False, layers=80) == 10.0
    assert layer_kernels(mla=False, moe=True, layers=36) == 14.0
    assert layer_kernels(mla=True, moe=True, shared_experts=1, layers=58) == 23.0
    # DeepSeek-R1: 3 dense layers (15 kernels) and 58 MoE ones (23)
    assert pytest.approx((3 * 15 + 58 * 23) / 61) == REFERENCE_LAYER_KERNELS


def test_deepseek_is_the_unit_and_the_others_pay_in_proportion():
    # the fitted per-layer value keeps its meaning on the model it is fitted on
    assert _mp("deepseek-r1")["overhead_layers"] == pytest.approx(61.0)
    assert _mp("llama2-70b")["overhead_layers"] == pytest.approx(80 * 10 / REFERENCE_LAYER_KERNELS)
    assert _mp("gpt-oss-120b")["overhead_layers"] == pytest.approx(
        36 * 14 / REFERENCE_LAYER_KERNELS
    )
    # the MoE-only columns do not count in a dense model
    assert _mp("llama3.1-8b")["dense_layers"] == 0.0
    # shared experts count only beside routed ones
    assert layer_kernels(mla=False, moe=True, shared_experts=1, layers=36) == 18.0
    assert overhead_layers(_mp("llama3.1-8b")) == pytest.approx(32 * 10 / REFERENCE_LAYER_KERNELS)


def test_a_dense_step_pays_the_per_layer_overhead():
    spec = data.load_specs().set_index("accelerator", drop=False).loc["B200"]
    mp = _mp("llama3.1-70b")
    kw = {"precision": "fp8", "isl": 1024.0, "osl": 1024.0, "gpus": 8.0, "concurrency": 4.0}
    plain = _terms(hardware_params_at(spec, "fp8", ServingShape()), mp, **kw)
    shape = ServingShape(overhead_layer_s={"NVIDIA": 50e-6})
    with_overhead = _terms(hardware_params_at(spec, "fp8", shape), mp, **kw)
    extra = float(with_overhead["step_fixed"] - plain["step_fixed"])
    # 80 layers x 10 kernels / 22.6 = 35.4 DeepSeek-R1 layers at 50 us: 1.77 ms a step
    assert extra == pytest.approx(mp["overhead_layers"] * 50e-6)
    assert 1.7e-3 < extra < 1.8e-3
    # the bytes and FLOPs of the step are untouched
    assert float(with_overhead["step_scaled"]) == pytest.approx(float(plain["step_scaled"]))


def test_deepseek_row_states_its_dense_and_shared_layers():
    models = data.load_models()
    assert models.set_index("model").loc[
        "deepseek-r1", ["dense_layers", "shared_experts"]
    ].tolist() == [3, 1]


@pytest.fixture(scope="module")
def checks():
    return pc.published_checks()


def test_published_points_carry_their_pages(checks):
    table = data.load_table("inferencex_published")
    sources = set(data.load_sources()["source_id"])
    assert set(table["source_id"]) <= sources
    assert len(checks) == len(table) == 18
    # output tokens: half the pages' input-plus-output total at 1k/1k
    row = checks[(checks["accelerator"] == "MI355X") & (checks["precision"] == "fp8")]
    assert row.set_index("interactivity").loc[76.0, "measured"] == pytest.approx(1504.0 / 2)
    # the bound scored is the page's interactivity as a median TPOT
    assert row.set_index("interactivity").loc[96.0, "tpot_ms"] == pytest.approx(1000.0 / 96.0)
    # every page's frontier may hold speculative-decoding runs (the pages say so)
    assert table["may_include_speculative"].eq(1).all()


def test_refused_formats_are_not_predicted(checks):
    # gpt-oss-120b's MXFP4 weights on MI325X (no FP4 datapath): refused, not guessed
    mi325x = checks[checks["accelerator"] == "MI325X"]
    assert len(mi325x) == 3 and mi325x["predicted"].isna().all()
    assert checks.loc[checks["accelerator"] != "MI325X", "predicted"].notna().all()


def test_dense_fp8_is_within_2x_of_the_pages(checks):
    # before the per-layer overhead reached dense layers: 1.4-3.3x above the pages
    fp8 = checks[(checks["model"] == "llama3.1-70b") & (checks["precision"] == "fp8")]
    assert fp8["ratio"].between(0.5, 2.0).all()


def test_the_check_never_reads_what_it_scores(checks):
    # the measured side is the page's; the modelled side is the same whatever it says
    table = data.load_table("inferencex_published").copy()
    table["total_tok_s_gpu"] = table["total_tok_s_gpu"] * 3.0
    base = data.default_inputs()
    tables = {name: base.table(name) for name in ALL}
    inputs = Inputs.from_tables({**tables, "inferencex_published": table})
    again = pc.published_checks(inputs=inputs)
    np.testing.assert_allclose(again["predicted"], checks["predicted"])
    np.testing.assert_allclose(again["measured"], checks["measured"] * 3.0)


def test_ratios_match_points_of_one_interactivity(checks):
    prec = pc.precision_ratios(checks)
    assert set(prec["accelerator"]) == {"B200", "MI355X"}
    row = prec[(prec["accelerator"] == "MI355X") & (prec["interactivity"] == 76.0)].iloc[0]
    assert row["measured_ratio"] == pytest.approx(1504.0 / 1069.0)
    vend = pc.vendor_ratios(checks)
    both = vend[(vend["amd"] == "MI355X") & (vend["precision"] == "fp8")]
    assert both["interactivity"].tolist() == [76.0]
    assert math.isnan(vend[vend["amd"] == "MI325X"]["predicted_ratio"].iloc[0])


def test_validate_models_prints_the_check():
    console = Console(record=True, width=250)
    print_published_checks(console)
    text = console.export_text()
    assert "InferenceX published pages" in text
    assert "FP8/FP4 at matched interactivity" in text
