"""Derived hardware metrics: pure, vectorized functions over the specs frame.

Every function takes the frame :func:`analysis.data.load_specs` returns (or any frame with
the same columns) and returns a Series aligned with it, or a new tidy frame; besides them,
:func:`model_table` (the model table in display units) and :func:`key_results` (the data
chapter's key results). Nothing here reads files or prints.

Analytical decisions taken here:

* All ratios use the **dense** peak FLOPS of the spec table and peak memory bandwidth:
  they describe the hardware's balance, not achieved performance.
* The **ridge point** (roofline knee) is peak FLOP/s divided by memory bytes/s: a kernel
  whose arithmetic intensity (FLOP per byte moved) is below it is memory-bound. LLM decode
  at small batch runs at roughly 1-2 FLOP per weight byte, far below every ridge point.
* Per-watt metrics divide by the board/module TDP (an upper bound on draw, not measured
  power); system, CPU, network and cooling power are excluded.
* A format a part does not support (NaN in the spec table) stays NaN in every metric.
* The "largest shipping part" is the shipping part with the most HBM; when a scenario has
  no shipping part, the largest of its parts stands in.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd

#: Precision name -> dense peak TFLOPS column of the specs frame.
PRECISION_COLUMNS: dict[str, str] = {
    "fp64": "fp64_dense_tflops",
    "tf32": "tf32_dense_tflops",
    "bf16": "bf16_dense_tflops",
    "fp8": "fp8_dense_tflops",
    "fp6": "fp6_dense_tflops",
    "fp4": "fp4_dense_tflops",
}


def _tflops(specs: pd.DataFrame, precision: str) -> pd.Series:
    try:
        column = PRECISION_COLUMNS[precision]
    except KeyError:
        allowed = ", ".join(PRECISION_COLUMNS)
        raise ValueError(f"unknown precision {precision!r}; allowed: {allowed}") from None
    return specs[column].astype(float)


def ridge_point(specs: pd.DataFrame, precision: str = "bf16") -> pd.Series:
    """Roofline ridge point: dense peak FLOP per byte of memory traffic.

    TFLOP/s over TB/s is FLOP per byte directly (the 1e12 factors cancel).

    >>> specs = pd.DataFrame({"bf16_dense_tflops": [989.5], "memory_bw_tbps": [3.35]})
    >>> round(float(ridge_point(specs, "bf16").iloc[0]), 1)
    295.4
    """
    return _tflops(specs, precision) / specs["memory_bw_tbps"].astype(float)


def bytes_per_flop(specs: pd.DataFrame, precision: str = "bf16") -> pd.Series:
    """Memory bytes available per dense peak FLOP (inverse of the ridge point)."""
    return 1.0 / ridge_point(specs, precision)


def tflops_per_watt(specs: pd.DataFrame, precision: str = "bf16") -> pd.Series:
    """Dense peak TFLOPS per watt of TDP.

    >>> specs = pd.DataFrame({"fp8_dense_tflops": [4500.0], "tdp_w": [1000.0]})
    >>> float(tflops_per_watt(specs, "fp8").iloc[0])
    4.5
    """
    return _tflops(specs, precision) / specs["tdp_w"].astype(float)


def memory_gb_per_kw(specs: pd.DataFrame) -> pd.Series:
    """HBM capacity per kilowatt of TDP (GB/kW)."""
    return specs["memory_gb"].astype(float) / (specs["tdp_w"].astype(float) / 1000.0)


def bandwidth_gbps_per_w(specs: pd.DataFrame) -> pd.Series:
    """HBM bandwidth per watt of TDP (GB/s per W)."""
    return specs["memory_bw_tbps"].astype(float) * 1000.0 / specs["tdp_w"].astype(float)


def scaleup_domain_memory_tb(specs: pd.DataFrame) -> pd.Series:
    """HBM in one scale-up domain (TB): the largest model state one NVLink/IF domain holds."""
    return specs["memory_gb"].astype(float) * specs["scaleup_domain_gpus"].astype(float) / 1000.0


def scaleup_bytes_per_flop(specs: pd.DataFrame, precision: str = "bf16") -> pd.Series:
    """Scale-up bytes per second per dense peak FLOP/s, in bytes per kFLOP.

    How much GPU-to-GPU bandwidth backs each unit of compute: the lower, the more tensor
    parallelism is limited by communication.
    """
    return specs["scaleup_bw_gbps"].astype(float) * 1e9 / (_tflops(specs, precision) * 1e12) * 1e3


def scaleup_group_share(mesh: Any, group: Any, domain: Any) -> np.ndarray:
    """Share of a GPU's scale-up bandwidth that a collective among ``group`` GPUs can use.

    ``scaleup_bw_gbps`` is a GPU's bandwidth summed over its links. Behind a switch
    (``scaleup_topology = switch``: NVSwitch, NVLink Switch) any two GPUs of the domain
    talk at all of it, so every group gets 1. In AMD's 8-GPU Infinity Fabric mesh
    (``mesh``, truthy here) each GPU has one link to each of its ``domain - 1`` peers, so
    a collective among ``group`` GPUs of one domain (a tensor-parallel all-reduce, an
    expert-parallel all-to-all, a data-parallel ring inside the node) runs on the
    ``group - 1`` links to its members: (group - 1) / (domain - 1). A point-to-point send
    (``group`` 2: a pipeline stage's activations, a ring-attention hop) takes one link,
    1 / (domain - 1), the floor. A group of the whole domain or more gets 1 (beyond the
    domain the scale-out network sets the pace). Vectorized over every argument.

    Used by the training model's step time (:func:`analysis.training.evaluate_layouts`):
    TP and in-node data-parallel rings at their group's share, the CP ring and pipeline
    sends as point-to-point hops (Megatron-LM's default ``--cp-comm-type p2p``,
    ``megatron/training/arguments.py`` in NVIDIA/Megatron-LM), the expert all-to-all at
    its in-node peers' links. Effect on its validation (``validate-models``, 2026-12-06):
    leave one vendor x benchmark out AMD 7.7 -> 4.4 %, AMD/NVIDIA ratio 8.1 -> 6.4 %
    (MI300X LoRA on 8-32 GPUs moves from CP8 with the ring hidden to PP2 CP4, and its
    per-GPU fall with the GPU count is partly modelled: 32 GPUs +46 -> +31 %); leave one
    GPU count out AMD 10.6 -> 10.4 %, ratio 5.4 -> 6.1 %; leave one round out AMD 13.2 ->
    10.2 %, ratio 15.3 -> 12.8 %; published rows 10.7 % either way (signed -0.5 -> +0.5
    %). Charging the CP ring as a collective of its group instead ((cp - 1) / 7 of the
    links) left the vendor x benchmark ratio at 8.1 %: MI300X kept CP8, whose ring then had
    every link.

    Not used by the inference model yet (examined 2026-12-06, not kept): on every
    tensor-parallel all-reduce (:func:`analysis.inference.roofline._terms`, the MLPerf
    rows' TP options and the InferenceX sweeps alike) the InferenceX held-out error moves
    32.2 -> 31.5 % (AMD 37.8 -> 34.9), but the MI355X FP8/FP4 ratio error 21.4 -> 26.5 %
    and the MLPerf leave-one-workload-out ratio error 13.3 -> 20.9 %: the MLPerf fit's one
    efficiency, set by Offline at TP1, leaves TP1 unable to meet gpt-oss-120b's Server
    TPOT bound on MI355X, and TP2 had stood in over a link as fast as NVSwitch's; with
    one link TP8 is the best left and the Server prediction falls 60 %. It waits for
    compute and bandwidth efficiencies apart in the MLPerf path.

    >>> scaleup_group_share(False, 2, 8)  # NVSwitch: any pair at full bandwidth
    array(1.)
    >>> scaleup_group_share(True, [2, 4, 8, 16], 8).round(3).tolist()  # MI300X mesh
    [0.143, 0.429, 1.0, 1.0]
    """
    k = np.asarray(group, dtype=float)
    d = np.maximum(np.asarray(domain, dtype=float), 2.0)
    share = np.clip((k - 1.0) / (d - 1.0), 1.0 / (d - 1.0), 1.0)
    return np.where(np.asarray(mesh, dtype=bool), share, 1.0)


def ratio(specs: pd.DataFrame, column: str, numerator: str, denominator: str) -> float:
    """``column`` of accelerator ``numerator`` divided by that of ``denominator``.

    Raises:
        ValueError: an id is not in ``specs``.

    >>> specs = pd.DataFrame({"accelerator": ["A", "B"], "memory_bw_tbps": [5.3, 3.35]})
    >>> round(ratio(specs, "memory_bw_tbps", "A", "B"), 3)
    1.582
    """
    values = specs.set_index("accelerator")[column]
    missing = [a for a in (numerator, denominator) if a not in values.index]
    if missing:
        raise ValueError(
            f"accelerator(s) {missing} not in the specs frame; have {list(values.index)}"
        )
    return float(values[numerator]) / float(values[denominator])


def derived_metrics(specs: pd.DataFrame) -> pd.DataFrame:
    """One row per accelerator with every derived metric (identity columns first)."""
    keep = [c for c in ("accelerator", "vendor", "status", "label") if c in specs.columns]
    out = specs[keep].copy()
    for precision in ("bf16", "fp8", "fp4"):
        out[f"ridge_flop_per_byte_{precision}"] = ridge_point(specs, precision)
    out["bytes_per_flop_bf16"] = bytes_per_flop(specs, "bf16")
    for precision in ("bf16", "fp8", "fp4"):
        out[f"tflops_per_w_{precision}"] = tflops_per_watt(specs, precision)
    out["memory_gb_per_kw"] = memory_gb_per_kw(specs)
    out["bandwidth_gbps_per_w"] = bandwidth_gbps_per_w(specs)
    out["scaleup_domain_memory_tb"] = scaleup_domain_memory_tb(specs)
    out["scaleup_bytes_per_kflop_bf16"] = scaleup_bytes_per_flop(specs, "bf16")
    return out


def compute_by_precision(
    specs: pd.DataFrame, precisions: tuple[str, ...] = ("bf16", "fp8", "fp6", "fp4")
) -> pd.DataFrame:
    """Long frame of dense peak TFLOPS: one row per (accelerator, supported precision).

    Unsupported or unpublished formats (NaN) are dropped, not shown as zero. Columns:
    ``accelerator, label, vendor, status, architecture, launch_year, precision,
    dense_tflops, basis`` (the spec row's basis, e.g. ``estimate``).
    """
    ident = ["accelerator", "label", "vendor", "status", "architecture", "launch_year"]
    frames = []
    for precision in precisions:
        column = PRECISION_COLUMNS[precision]
        part = specs[ident].copy()
        part["precision"] = precision
        part["dense_tflops"] = _tflops(specs, precision)
        basis = f"{column}_basis"
        part["basis"] = specs[basis] if basis in specs.columns else np.nan
        frames.append(part)
    out = pd.concat(frames, ignore_index=True)
    return out[out["dense_tflops"].notna()].reset_index(drop=True)


#: Bytes per KiB and per MiB (the model table shows KV-cache sizes in binary units).
_KIB = 1024
_MIB = 2**20


def model_table(models: pd.DataFrame) -> pd.DataFrame:
    """The model table with its KV-cache sizes in display units.

    Adds ``kv_kib_per_token`` (``kv_bytes_per_token_bf16`` in KiB) and ``kv_window_mib``
    (``kv_window_bytes_bf16``, the fixed sliding-window KV per sequence, in MiB) to a copy
    of the frame :func:`analysis.data.load_models` returns.

    >>> models = pd.DataFrame({"kv_bytes_per_token_bf16": [70272], "kv_window_bytes_bf16": [2**22]})
    >>> model_table(models)[["kv_kib_per_token", "kv_window_mib"]].to_numpy().tolist()
    [[68.625, 4.0]]
    """
    return models.assign(
        kv_kib_per_token=models["kv_bytes_per_token_bf16"] / _KIB,
        kv_window_mib=models["kv_window_bytes_bf16"] / _MIB,
    )


def largest_memory_part(specs: pd.DataFrame) -> pd.Series:
    """The row of the shipping part with the most HBM (any part if none is shipping).

    Raises:
        ValueError: ``specs`` has no rows.

    >>> specs = pd.DataFrame({"accelerator": ["A", "B", "C"], "memory_gb": [192.0, 288.0, 432.0],
    ...                       "status": ["shipping", "shipping", "announced"]})
    >>> str(largest_memory_part(specs)["accelerator"])
    'B'
    """
    if specs.empty:
        raise ValueError("the specs frame has no rows; no largest part to pick")
    shipping = specs[specs["status"] == "shipping"]
    return (shipping if len(shipping) else specs).sort_values("memory_gb").iloc[-1]


def key_results(
    specs: pd.DataFrame,
    all_specs: pd.DataFrame,
    models: pd.DataFrame,
    spec_values: pd.DataFrame,
    cited_sources: Collection[str],
    coverage: pd.DataFrame,
) -> dict[str, Any]:
    """The data chapter's (``10-data``) key results.

    Counts describe the scenario (``specs``); the MI300X-over-H100-SXM ratios and the BF16
    ridge points always come from the full table (``all_specs``), so they exist whatever
    the scenario's candidates.

    Args:
        specs: the scenario's rows of :func:`analysis.data.load_specs`.
        all_specs: every row of :func:`analysis.data.load_specs` (must hold MI300X and
            H100-SXM).
        models: :func:`analysis.data.load_models`.
        spec_values: :func:`analysis.data.load_spec_values`.
        cited_sources: the source ids the spec and model tables cite
            (:func:`analysis.data.spec_and_model_source_ids`); only their number is used.
        coverage: :func:`analysis.data.mlperf_coverage`.

    Returns:
        ``accelerators_in_scenario, announced_in_scenario, models,
        sources_cited_by_specs_and_models, spec_values_estimated,
        max_memory_shipping_accelerator, max_memory_shipping_gb,
        memory_gb_ratio_MI300X_over_H100-SXM, memory_bw_ratio_MI300X_over_H100-SXM,
        bf16_ridge_flop_per_byte_H100-SXM, bf16_ridge_flop_per_byte_MI300X,
        mlperf_accelerators_covered``, in that order.
    """
    derived = derived_metrics(all_specs).set_index("accelerator")
    largest = largest_memory_part(specs)
    return {
        "accelerators_in_scenario": len(specs),
        "announced_in_scenario": int((specs["status"] == "announced").sum()),
        "models": len(models),
        "sources_cited_by_specs_and_models": len(cited_sources),
        "spec_values_estimated": int((spec_values["basis"] == "estimate").sum()),
        "max_memory_shipping_accelerator": str(largest["accelerator"]),
        "max_memory_shipping_gb": float(largest["memory_gb"]),
        "memory_gb_ratio_MI300X_over_H100-SXM": ratio(all_specs, "memory_gb", "MI300X", "H100-SXM"),
        "memory_bw_ratio_MI300X_over_H100-SXM": ratio(
            all_specs, "memory_bw_tbps", "MI300X", "H100-SXM"
        ),
        "bf16_ridge_flop_per_byte_H100-SXM": derived.at["H100-SXM", "ridge_flop_per_byte_bf16"],
        "bf16_ridge_flop_per_byte_MI300X": derived.at["MI300X", "ridge_flop_per_byte_bf16"],
        "mlperf_accelerators_covered": int(coverage["accelerator"].nunique()),
    }
