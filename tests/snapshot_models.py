"""Snapshot of the model figures: ``validate-models`` tables plus public contract calls.

``python tests/snapshot_models.py`` (or ``make snapshot``) rewrites
``tests/data/snapshots/models.json``; ``tests/unit/test_snapshot_models.py`` recomputes the
figures and fails on any difference. Numbers are rounded to 6 significant digits, so a
refactor that changes no arithmetic keeps the file byte-identical.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis import inference, inference_latency, params, tco, training
from analysis.inference import frontier_validation

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "data" / "snapshots" / "models.json"
SIG_DIGITS = 6


def _round(value: Any) -> Any:
    """JSON-ready value, floats rounded to :data:`SIG_DIGITS` significant digits."""
    if isinstance(value, dict):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return float(f"{f:.{SIG_DIGITS - 1}e}") if f else 0.0
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _frame(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [_round(r) for r in df.to_dict(orient="records")]


def _validation() -> dict[str, Any]:
    """The tables ``python -m analysis validate-models`` prints, in its order."""
    out: dict[str, Any] = {}
    for scheme, summary in inference.validation_summaries().summaries.items():
        out[f"inference_{scheme}"] = _frame(summary)
    # "inferencex": the report's serving model (what the tiers use); "_sweep": the sweep
    # model, validated but not used by the tiers (inference_latency.MODEL_LABELS).
    for suffix, validate in (
        ("", inference_latency.validate_serving_model),
        ("_sweep", inference_latency.validate_sweep_model),
    ):
        ix = validate()
        out[f"inferencex{suffix}"] = _frame(inference_latency.summary(ix))
        out[f"fp8_fp4_ratio{suffix}"] = _frame(
            inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(ix))
        )
        out[f"amd_nvidia_frontier_ratio{suffix}"] = _frame(
            frontier_validation.ratio_pair_summary(frontier_validation.held_out_frontiers(ix))
        )
    held, cross = (
        inference_latency.validate_serving_model(),
        inference_latency.cross_fold_predictions(),
    )
    reference, per_cell = inference_latency.transfer_tables(held, cross)
    out["inferencex_transfer_reference"] = _frame(reference)
    out["inferencex_transfer_cells"] = _frame(per_cell)
    fitted = inference_latency.fit_serving_model()
    out["inferencex_in_sample"] = _frame(inference_latency.summary(fitted))
    out["fp8_fp4_ratio_in_sample"] = _frame(
        inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(fitted))
    )
    out["training_mlperf"] = _frame(training.validation_summary(training.validate_against_mlperf()))
    pred = training.validate_training_model()
    out["training_schemes"] = _frame(training.validation_scheme_summary(pred))
    out["training_ratio"] = _frame(training.ratio_error_summary(training.ratio_errors(pred)))
    return out


def _contracts() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for acc in ("H200", "B200", "MI300X", "MI355X"):
        out[f"max_tps_{acc}"] = _round(
            inference.max_throughput_per_gpu(
                acc,
                "llama3.1-70b",
                precision="fp8",
                isl=1024,
                osl=1024,
                tpot_ms=50.0,
                return_details=True,
            )
        )
        out[f"predict_mlperf_{acc}"] = _round(
            inference.predict_mlperf(acc, "llama2-70b", "Offline", precision="fp8")
        )
        out[f"train_tps_{acc}"] = _round(
            training.throughput_per_gpu(
                acc, "llama3.1-70b", 1024, precision="bf16", global_batch_tokens=16.0e6
            )
        )
        out[f"train_scaling_{acc}"] = _round(training.scaling_efficiency(acc, "llama3.1-70b", 1024))
    out["cost_per_mtok"] = _round(tco.cost_per_million_tokens(2.5, 1500.0))
    return out


def _scenario(path: str) -> dict[str, Any]:
    sc = params.load_scenario(ROOT / path)
    tiers = inference.evaluate_tiers(sc)
    train = training.evaluate_training(sc)
    inp = tco.cost_inputs(sc)
    sim = tco.simulate(sc, tiers, train, inputs=inp, n=2000)
    return {
        "evaluate_tiers": _frame(tiers),
        "frontiers": _frame(inference.frontiers(sc).iloc[::25]),
        "evaluate_training": _frame(train),
        "gpu_hour_cost": _frame(tco.gpu_hour_cost(sc, inp)),
        "price_rule": _frame(tco.price_rule(sc, inp)),
        "simulate_tiers": _frame(sim.tiers),
        "simulate_tier_summary": _frame(sim.tier_summary),
        "simulate_training_summary": _round(sim.training_summary),
    }


def compute() -> dict[str, Any]:
    """Every snapshot figure, recomputed from the bundled data."""
    return {
        "validate_models": _validation(),
        "contracts": _contracts(),
        "params/ci.yaml": _scenario("params/ci.yaml"),
        "params/default.yaml": _scenario("params/default.yaml"),
    }


def render(figures: dict[str, Any]) -> str:
    return json.dumps(figures, indent=1, sort_keys=True) + "\n"


def main() -> int:
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(render(compute()), encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
