"""Scaling: throughput per GPU (public contract), scaling curves, weak and strong scaling.

Analytical decisions: ``scaling_efficiency`` (public contract) stays the capped ratio to
the one-node baseline; the weak/strong studies are uncapped against an unconstrained
per-GPU reference (one node, no memory or batch limit) and name the step-time term with the
largest share of the step (:data:`LIMIT_TERMS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

import numpy as np
import pandas as pd

from analysis import ids
from analysis.inputs import Inputs, resolve
from analysis.training.calibration import pretrain_efficiency, resolve_efficiency
from analysis.training.model import CURVE_GPU_COUNTS, NODE_GPUS, model_arch, spec_row
from analysis.training.step import evaluate_layouts, layout_label

#: A what-if's spec changes: numeric columns, and the scale-up fabric's topology
#: (``scaleup_topology``, one of :data:`analysis.ids.SCALEUP_TOPOLOGIES`).
SpecOverrides = Mapping[str, float | str]


def _apply_overrides(spec: Mapping[str, Any], overrides: SpecOverrides | None) -> dict[str, Any]:
    out = dict(spec)
    for k, v in (overrides or {}).items():
        if k == "scaleup_topology":
            if v not in ids.SCALEUP_TOPOLOGIES:
                allowed = ", ".join(ids.SCALEUP_TOPOLOGIES)
                raise ValueError(f"unknown scale-up topology {v!r}; allowed: {allowed}")
            out[k] = str(v)
            continue
        if k not in {
            "scaleup_domain_gpus",
            "scaleup_bw_gbps",
            "scaleout_gbps_per_gpu",
            "memory_gb",
            "memory_bw_tbps",
        }:
            raise ValueError(f"cannot override spec column {k!r}")
        out[k] = float(v)
    return out


def scaling_curve(
    accelerator: str,
    model: str,
    *,
    precision: str = "bf16",
    gpu_counts: tuple[int, ...] | list[int] = CURVE_GPU_COUNTS,
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    efficiency: float | None = None,
    spec_overrides: SpecOverrides | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Best layout, tokens/s per GPU and scaling efficiency at each GPU count.

    Scaling efficiency is relative to the first feasible count of ``gpu_counts`` at or above
    one node (capped at 1, see the module docstring); NaN where infeasible.
    ``throughput_ratio`` is the same ratio uncapped: above 1 where a larger count relieves
    memory pressure (a cheaper recomputation or sharding fits) rather than scaling.
    """
    inputs = resolve(inputs)
    spec = _apply_overrides(spec_row(accelerator, specs, inputs=inputs), spec_overrides)
    arch = model_arch(model, models, inputs=inputs)
    if efficiency is None:
        efficiency, _ = resolve_efficiency(
            accelerator,
            kind="pretrain",
            precision=precision,
            fits=fits,
            inputs=inputs,
        )
    counts = np.asarray(sorted({int(c) for c in gpu_counts}), dtype=float)
    b = global_batch_tokens / seq_len
    res = evaluate_layouts(
        spec,
        arch,
        counts,
        precision=precision,
        seq_len=seq_len,
        batch_seqs=b,
        efficiency=efficiency,
    )
    thr = res["tokens_per_s_per_gpu"]
    base_mask = res["feasible"] & (counts >= min(NODE_GPUS, counts.max()))
    eff = np.full_like(thr, np.nan)
    ratio = np.full_like(thr, np.nan)
    if base_mask.any():
        j0 = int(np.argmax(base_mask))
        ratio = np.where(counts >= counts[j0], thr / thr[j0], np.nan)
        eff = np.minimum(1.0, ratio)
    df = pd.DataFrame(
        {
            "accelerator": accelerator,
            "model": model,
            "n_gpus": counts.astype(int),
            "feasible": res["feasible"],
            "tokens_per_s_per_gpu": thr,
            "scaling_efficiency": eff,
            "throughput_ratio": ratio,
            "mfu": res["mfu"],
            "memory_gb": res["memory_gb"],
            "step_s": res["step_s"],
            "t_compute": res["t_compute"],
            "t_tp": res["t_tp"],
            "t_bubble": res["t_bubble"],
            "t_dp_exposed": res["t_dp_exposed"],
            "t_other": res["t_other"],
            "t_recompute": res["t_recompute"],
            "t_moe": res["t_moe"],
            "t_moe_kernels": res["t_moe_kernels"],
            "t_pp": res["t_pp"],
            "t_latency": res["t_latency"],
            "t_optimizer": res["t_optimizer"],
            "t_step_fixed": res["t_step_fixed"],
            "reason": res["reason"],
        }
    )
    df["layout"] = [
        layout_label(*v)
        for v in zip(
            res["tp"], res["pp"], res["dp"], res["zero"], res["recompute"], res["cp"], strict=True
        )
    ]
    return df


def _baseline_counts(n_gpus: int) -> list[int]:
    counts = [c for c in (1, 2, 4) if c < NODE_GPUS] + [NODE_GPUS]
    c = NODE_GPUS
    while c < n_gpus:
        c *= 2
        counts.append(c)
    return sorted({x for x in counts if x >= min(NODE_GPUS, n_gpus)} | {int(n_gpus)})


def scaling_efficiency(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str = "bf16",
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    spec_overrides: SpecOverrides | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> float:
    """Throughput per GPU at ``n_gpus`` / throughput per GPU at the smallest feasible count.

    The baseline is one node when the model fits there, else the smallest feasible power of
    two above it. In (0, 1]. Raises ValueError for unknown ids, for a count below the
    baseline, and when no layout is feasible at ``n_gpus`` (the message says why).

    With ``spec_overrides`` (a what-if interconnect), the baseline stays the part as
    shipped: the result is the share of the shipping node's per-GPU throughput that a
    cluster with the changed interconnect keeps. Otherwise a cut in scale-up bandwidth
    would also slow the one-node baseline (its tensor parallelism runs over that link) and
    the ratio could rise while every GPU got slower; against a fixed baseline, cutting
    bandwidth never raises efficiency.
    """
    if int(n_gpus) < 1:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    counts = _baseline_counts(int(n_gpus))

    def curve(overrides: SpecOverrides | None) -> pd.DataFrame:
        return scaling_curve(
            accelerator,
            model,
            precision=precision,
            gpu_counts=counts,
            seq_len=seq_len,
            global_batch_tokens=global_batch_tokens,
            spec_overrides=overrides,
            specs=specs,
            models=models,
            fits=fits,
            inputs=inputs,
        )

    df = curve(None)
    if spec_overrides:
        changed = curve(spec_overrides)
        j0 = df["scaling_efficiency"].first_valid_index()
        base = df.at[j0, "tokens_per_s_per_gpu"] if j0 is not None else np.nan
        df = changed.assign(
            scaling_efficiency=np.where(
                df["scaling_efficiency"].notna(),
                np.minimum(1.0, changed["tokens_per_s_per_gpu"] / base),
                np.nan,
            )
        )
    row = df.loc[df["n_gpus"] == int(n_gpus)].iloc[0]
    if not row["feasible"]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {row['reason']}"
        )
    if not np.isfinite(row["scaling_efficiency"]):
        base = int(df.loc[df["feasible"], "n_gpus"].min())
        raise ValueError(
            f"{n_gpus} GPUs is below the baseline of {base} GPUs (one node or "
            f"the smallest feasible count) for {model} on {accelerator}"
        )
    return float(row["scaling_efficiency"])


def time_to_train_hours(
    accelerator: str,
    model: str,
    tokens: float,
    n_gpus: int,
    *,
    precision: str = "bf16",
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    spec_overrides: SpecOverrides | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> float:
    """Wall-clock hours to train ``model`` on ``tokens`` tokens with ``n_gpus`` GPUs."""
    df = scaling_curve(
        accelerator,
        model,
        precision=precision,
        gpu_counts=[int(n_gpus)],
        seq_len=seq_len,
        global_batch_tokens=global_batch_tokens,
        spec_overrides=spec_overrides,
        specs=specs,
        models=models,
        fits=fits,
        inputs=inputs,
    )
    row = df.iloc[0]
    if not row["feasible"]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {row['reason']}"
        )
    return float(tokens / (row["tokens_per_s_per_gpu"] * n_gpus) / 3600.0)


class TrainOptions(TypedDict, total=False):
    """The keywords :func:`gpu_hours` passes to :func:`time_to_train_hours`."""

    precision: str
    seq_len: int
    global_batch_tokens: float
    spec_overrides: SpecOverrides | None
    specs: pd.DataFrame | None
    models: pd.DataFrame | None
    fits: pd.DataFrame | None
    inputs: Inputs | None


def gpu_hours(
    accelerator: str, model: str, tokens: float, n_gpus: int, **kwargs: Unpack[TrainOptions]
) -> float:
    """GPU-hours to train: :func:`time_to_train_hours` x ``n_gpus``."""
    return time_to_train_hours(accelerator, model, tokens, n_gpus, **kwargs) * n_gpus


def cost_to_train_usd(gpu_hours_: float, gpu_hour_usd: float) -> float:
    """Dollars to train: GPU-hours x $/GPU-hour (the TCO chapter supplies the price).

    >>> cost_to_train_usd(1000.0, 2.5)
    2500.0
    """
    return float(gpu_hours_) * float(gpu_hour_usd)


#: Step-time overhead terms and the limit each one names (the chapter's "which limit bites").
LIMIT_TERMS: tuple[tuple[str, str], ...] = (
    ("t_recompute", "memory (recomputation forced by HBM capacity)"),
    ("t_tp", "exposed tensor/context-parallel communication"),
    ("t_moe", "exposed MoE all-to-all"),
    ("t_moe_kernels", "MoE grouped GEMMs and token permutation"),
    ("t_bubble", "pipeline bubble (too few microbatches per rank: the batch)"),
    ("t_pp", "pipeline point-to-point traffic"),
    ("t_dp_exposed", "exposed data-parallel communication"),
    ("t_latency", "collective latency"),
    ("t_optimizer", "optimizer step"),
    ("t_step_fixed", "fixed per-step cost"),
)


class DetailOptions(TypedDict, total=False):
    """The keywords :func:`throughput_per_gpu` passes to :func:`throughput_details`."""

    efficiency: float | None
    spec_overrides: SpecOverrides | None
    specs: pd.DataFrame | None
    models: pd.DataFrame | None
    fitted: pd.DataFrame | None
    inputs: Inputs | None


def throughput_details(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str,
    seq_len: int = 8192,
    global_batch_tokens: float,
    efficiency: float | None = None,
    spec_overrides: SpecOverrides | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fitted: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> dict[str, str | float]:
    """:func:`throughput_per_gpu` with its layout, MFU, memory and step-time terms.

    Keys: accelerator, model, n_gpus, precision, tokens_per_s_per_gpu, layout, tp, pp, cp,
    dp, ep, vp, zero, recompute, memory_gb, mfu, step_s, the ``t_*`` terms of
    :func:`evaluate_layouts` (seconds per step), efficiency and efficiency_from; raises
    ValueError with the reason when no layout is feasible.
    """
    inputs = resolve(inputs)
    if int(n_gpus) < 1:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    if not global_batch_tokens or global_batch_tokens <= 0:
        raise ValueError(f"global_batch_tokens must be positive, got {global_batch_tokens!r}")
    spec = _apply_overrides(spec_row(accelerator, specs, inputs=inputs), spec_overrides)
    arch = model_arch(model, models, inputs=inputs)
    source = "given"
    if efficiency is None:
        efficiency, source = pretrain_efficiency(
            accelerator, precision, model=model, fitted=fitted, specs=specs, inputs=inputs
        )
    res = evaluate_layouts(
        spec,
        arch,
        [int(n_gpus)],
        precision=precision,
        seq_len=int(seq_len),
        batch_seqs=global_batch_tokens / seq_len,
        efficiency=efficiency,
    )
    if not res["feasible"][0]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {res['reason'][0]}"
        )
    out: dict[str, str | float] = {
        "accelerator": accelerator,
        "model": model,
        "n_gpus": int(n_gpus),
        "precision": precision,
    }
    for k, v in res.items():
        if k not in {"n_gpus", "feasible", "reason"}:
            out[k] = float(v[0])
    out["layout"] = layout_label(
        res["tp"][0], res["pp"][0], res["dp"][0], res["zero"][0], res["recompute"][0], res["cp"][0]
    )
    out["efficiency"] = float(efficiency)
    out["efficiency_from"] = source
    return out


def throughput_per_gpu(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str,
    seq_len: int = 8192,
    global_batch_tokens: float,
    **kwargs: Unpack[DetailOptions],
) -> float:
    """Tokens/s per GPU of pre-training at the best feasible layout (public contract).

    The efficiency is the part's pooled pre-training fit (:func:`pretrain_efficiency`);
    ValueError with the reason when no layout fits (memory, batch, GPU count).
    """
    return float(
        throughput_details(
            accelerator,
            model,
            n_gpus,
            precision=precision,
            seq_len=seq_len,
            global_batch_tokens=global_batch_tokens,
            **kwargs,
        )["tokens_per_s_per_gpu"]
    )


def reference_throughput(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    *,
    precision: str,
    seq_len: int,
    efficiency: float,
) -> float:
    """Unconstrained per-GPU reference: best layout on one node, memory and batch unlimited.

    The ceiling the scaling curves are measured against: one node's scale-up domain,
    :data:`REFERENCE_MICROBATCHES` microbatches per rank, no HBM limit (so no forced
    recomputation). A curve below it has lost to batch, bubble, communication or memory.
    """
    res = evaluate_layouts(
        spec,
        arch,
        [NODE_GPUS],
        precision=precision,
        seq_len=seq_len,
        batch_seqs=1.0,
        efficiency=efficiency,
        unconstrained=True,
    )
    return float(res["tokens_per_s_per_gpu"][0])


def _limit_names(df: pd.DataFrame, ref_step_per_token: float) -> list[str]:
    # the overhead term with the largest share of the step (per token, over the reference)
    terms = np.column_stack([df[t].to_numpy(dtype=float) for t, _ in LIMIT_TERMS])
    tokens = (df["tokens_per_s_per_gpu"] * df["step_s"]).to_numpy(dtype=float)
    per_tok = terms / tokens[:, None]
    out = []
    for j in range(len(df)):
        if not np.isfinite(per_tok[j]).all():
            out.append("infeasible")
            continue
        out.append(LIMIT_TERMS[int(np.argmax(per_tok[j]))][1])
    return out


def scaling_study(
    accelerator: str,
    model: str,
    *,
    precision: str,
    seq_len: int,
    global_batch_tokens: float,
    cluster_gpus: int,
    gpu_counts: tuple[int, ...] = CURVE_GPU_COUNTS,
    efficiency: float | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Weak and strong scaling of one part against its unconstrained per-GPU reference.

    ``strong``: the scenario's global batch at every count (fewer microbatches per rank as
    the count grows). ``weak``: tokens per GPU held at the scenario's
    (``global_batch_tokens / cluster_gpus``), so the global batch grows with the count.
    ``efficiency_vs_reference`` = tokens/s per GPU over :func:`reference_throughput`,
    uncapped; ``limit`` names the overhead term with the largest share of the step there.
    """
    inputs = resolve(inputs)
    spec = spec_row(accelerator, specs, inputs=inputs)
    arch = model_arch(model, models, inputs=inputs)
    if efficiency is None:
        efficiency, _ = pretrain_efficiency(
            accelerator, precision, model=model, specs=specs, inputs=inputs
        )
    counts = np.asarray(sorted({int(c) for c in gpu_counts} | {int(cluster_gpus)}), dtype=float)
    ref = reference_throughput(
        spec, arch, precision=precision, seq_len=seq_len, efficiency=efficiency
    )
    per_gpu = global_batch_tokens / cluster_gpus
    frames = []
    for mode, batch in (
        ("strong", np.full_like(counts, global_batch_tokens / seq_len)),
        ("weak", np.maximum(1.0, np.round(per_gpu * counts / seq_len))),
    ):
        res = evaluate_layouts(
            spec,
            arch,
            counts,
            precision=precision,
            seq_len=seq_len,
            batch_seqs=batch,
            efficiency=efficiency,
        )
        df = pd.DataFrame({k: v for k, v in res.items() if k != "n_gpus"})
        df.insert(0, "n_gpus", counts.astype(int))
        df.insert(0, "mode", mode)
        df.insert(0, "accelerator", accelerator)
        df["global_batch_seqs"] = batch
        df["reference_tps"] = ref
        df["efficiency_vs_reference"] = df["tokens_per_s_per_gpu"] / ref
        df["limit"] = _limit_names(df, 1.0 / ref)
        df["layout"] = [
            layout_label(*v)
            for v in zip(
                df["tp"], df["pp"], df["dp"], df["zero"], df["recompute"], df["cp"], strict=True
            )
        ]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
