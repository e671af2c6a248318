"""The Inputs value: tables by name, derived frames, per-instance fits, the default seam."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import data, inference, params, tco, training
from analysis.inputs import Inputs


def _tables() -> dict[str, pd.DataFrame]:
    inputs = data.load_inputs()
    return {n: inputs.table(n) for n in ("sources", "accelerators", "accelerator_values", "models")}


def test_from_tables_derives_specs_and_models_like_the_loaders() -> None:
    inputs = Inputs.from_tables(_tables())
    pd.testing.assert_frame_equal(inputs.specs, data.load_specs())
    pd.testing.assert_frame_equal(inputs.models, data.load_models())


def test_table_is_a_copy_the_caller_may_modify() -> None:
    inputs = Inputs.from_tables({"sources": pd.DataFrame({"source_id": ["a", "b"]})})
    t = inputs.table("sources")
    t.loc[0, "source_id"] = "changed"
    assert list(inputs.table("sources")["source_id"]) == ["a", "b"]


def test_missing_table_names_itself() -> None:
    with pytest.raises(KeyError, match="table 'models' not in these inputs"):
        Inputs.from_tables({}).table("models")


def test_a_source_the_table_cites_must_exist() -> None:
    tables = _tables()
    src = tables["sources"]
    tables["sources"] = src[src["source_id"] != "nvidia-hgx-page"]
    with pytest.raises(data.DataValidationError, match="unknown source 'nvidia-hgx-page'"):
        Inputs.from_tables(tables).specs  # noqa: B018


def test_derived_is_memoized_per_instance() -> None:
    calls: list[int] = []
    a, b = Inputs.from_tables({}), Inputs.from_tables({})
    assert a.derived("k", lambda: calls.append(1) or len(calls)) == 1
    assert a.derived("k", lambda: calls.append(1) or len(calls)) == 1
    assert b.derived("k", lambda: calls.append(1) or len(calls)) == 2


def test_clear_cache_gives_fresh_inputs_and_recomputes_the_fits() -> None:
    before = data.default_inputs()
    cal = inference.default_calibration()
    fits = training._fits_cached(data.default_inputs())
    assert inference.default_calibration() is cal  # memoized on the instance
    data.clear_cache()
    after = data.default_inputs()
    assert after is not before
    cal2 = inference.default_calibration()
    assert cal2 is not cal  # recomputed, not the stale module cache of before
    assert cal2.by_vendor == cal.by_vendor
    assert training._fits_cached(data.default_inputs()) is not fits


def test_a_modelling_function_runs_on_small_inputs() -> None:
    # The spec and model tables as they are, a small MLPerf table (one round, one
    # benchmark, NVIDIA only) and every fourth InferenceX point: the calibration and the
    # serving shape are fitted on these frames, memoized on this instance, and the default
    # inputs are left alone.
    full = data.load_inputs()
    ml = full.table("mlperf_inference")
    small = ml[(ml["round"] == "v5.1") & (ml["benchmark"] == "llama2-70b-99")]
    small = small[small["vendor"] == "NVIDIA"]
    tables = _tables() | {
        "mlperf_inference": small,
        "inferencex": full.table("inferencex").iloc[::4],
    }
    tiny = Inputs.from_tables(tables)
    kw = {"precision": "fp8", "isl": 1024, "osl": 1024, "tpot_ms": 50.0}
    got = inference.max_throughput_per_gpu("H200", "llama3.1-70b", inputs=tiny, **kw)
    default = inference.max_throughput_per_gpu("H200", "llama3.1-70b", **kw)
    assert got > 0 and default > 0 and got != default
    cal = inference.default_calibration(inputs=tiny)
    assert inference.default_calibration(inputs=tiny) is cal
    assert set(cal.by_vendor) == {"NVIDIA"}
    assert set(inference.default_calibration().by_vendor) == {"AMD", "NVIDIA"}
    # An AMD part has no calibration in these inputs: the model says so instead of
    # borrowing the default tables' fit.
    with pytest.raises(ValueError, match="no calibration data for vendor 'AMD'"):
        inference.max_throughput_per_gpu("MI300X", "llama3.1-70b", inputs=tiny, **kw)


def test_point_terms_default_to_the_fitted_shape_of_the_inputs() -> None:
    from analysis import inference_latency

    pts = inference_latency.select().head(20)
    specs, models = data.load_specs(), data.load_models()
    default = inference_latency.point_terms(pts, specs, models)
    fitted = inference_latency.point_terms(pts, specs, models, inference.default_shape())
    roof = inference_latency.point_terms(pts, specs, models, inference.ROOFLINE_SHAPE)
    for key in ("step_fixed", "step_scaled"):
        np.testing.assert_array_equal(default[key], fitted[key])
    assert not all(np.array_equal(default[k], roof[k]) for k in ("step_fixed", "step_scaled"))


def test_training_runs_on_small_inputs() -> None:
    # The spec and model tables as they are, an MLPerf Training table cut to NVIDIA's
    # LoRA rows (with the run logs' facts), no published rows and no sustained-GEMM rows:
    # every fit comes from these frames, memoized on this instance, so the throughput moves
    # and the default inputs are left alone.
    full = data.load_inputs()
    mt = full.table("mlperf_training")
    small = mt[(mt["benchmark"] == "llama2_70b_lora") & (mt["vendor"] == "NVIDIA")]
    logs = {"mlperf_training_logs": full.table("mlperf_training_logs")}
    empty = {n: full.table(n)[:0] for n in ("published_training", "gemm_max_achievable")}
    tiny = Inputs.from_tables(_tables() | {"mlperf_training": small} | logs | empty)
    fits = training.fit_efficiencies(inputs=tiny)
    assert set(fits["benchmark"]) == {"llama2_70b_lora"}
    assert set(fits["vendor"]) == {"NVIDIA"}
    assert set(training.fit_efficiencies()["vendor"]) == {"AMD", "NVIDIA"}
    kw = {"precision": "bf16", "global_batch_tokens": 16.0e6}
    got = training.throughput_per_gpu("H200", "llama3.1-70b", 64, inputs=tiny, **kw)
    default = training.throughput_per_gpu("H200", "llama3.1-70b", 64, **kw)
    assert got > 0 and default > 0 and got != default
    eff = training.scaling_efficiency("H200", "llama3.1-70b", 64, inputs=tiny)
    assert 0 < eff <= 1
    # Without a training table these inputs cannot fit anything: the error names the
    # table instead of the default tables answering.
    with pytest.raises(KeyError, match="table 'mlperf_training' not in these inputs"):
        training.throughput_per_gpu(
            "H200", "llama3.1-70b", 64, inputs=Inputs.from_tables(_tables()), **kw
        )


def test_tco_runs_on_small_inputs() -> None:
    # One rental quote (B200 at $9.00 in the default pool) and the other cost tables as
    # they are: the rented price is that quote, every other part has none.
    full = data.load_inputs()
    quotes = full.table("rental_quotes")
    one = quotes[quotes["accelerator"] == "B200"].head(1)
    one = one.assign(provider_class="neocloud-list", term="on-demand", price_usd_per_gpu_hour=9.0)
    names = ("purchase_prices", "facility", "assumptions")
    tiny = Inputs.from_tables({n: full.table(n) for n in names} | {"rental_quotes": one})
    sc = params.Scenario(name="t", title="t", cost=params.Cost(mode="rent"))
    got = tco.gpu_hour_cost(sc, tables=tiny).set_index("accelerator")
    assert got.loc["B200", "n_quotes"] == 1
    assert got.loc["B200", "rent_quote_min"] == 9.0
    assert (got.drop(index="B200")["n_quotes"] == 0).all()
    default = tco.gpu_hour_cost(sc).set_index("accelerator")
    assert default.loc["B200", "n_quotes"] > 1
    rent = tco.scenario_inputs(sc, inputs=tiny).rent
    assert rent.quotes["B200"].tolist() == [9.0]
    sim = tco.simulate(sc, tco.example_tiers(sc), None, tables=tiny, n=500)
    costs = sim.tier_summary
    assert not costs.empty
    with pytest.raises(KeyError, match="table 'rental_quotes' not in these inputs"):
        tco.cost_inputs(sc, inputs=Inputs.from_tables({n: full.table(n) for n in names}))
