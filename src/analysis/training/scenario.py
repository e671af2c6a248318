"""The scenario's training job: evaluation, winner, what-ifs, key results, bench cases.

Analytical decisions: a scenario's job uses the part's pooled pre-training efficiency at the
scenario's precision; its scaling efficiency is strong scaling against the part's
unconstrained reference, uncapped, with the limiting term named; the what-ifs change one
interconnect property of every candidate at the cluster size.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from analysis.inputs import Inputs, resolve
from analysis.params import Scenario
from analysis.training.calibration import resolve_efficiency
from analysis.training.model import (
    CURVE_GPU_COUNTS,
    _load_specs,
    model_arch,
    spec_row,
)
from analysis.training.scaling import (
    _baseline_counts,
    _limit_names,
    reference_throughput,
    scaling_curve,
    scaling_study,
)


def evaluate_training(
    sc: Scenario,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """One row per accelerator in ``sc.accelerators`` for the scenario's training job.

    Columns (contracts.md): accelerator, vendor, status, n_gpus, feasible, layout, mfu,
    scaling_efficiency, tokens_per_s_per_gpu, time_to_train_hours, gpu_hours, reason; plus
    efficiency and mfu_source (where the efficiency comes from).
    """
    inputs = resolve(inputs)
    tr = sc.training
    specs = _load_specs(inputs) if specs is None else specs
    counts = _baseline_counts(tr.cluster_gpus)
    out = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs, inputs=inputs)
        eff, source = resolve_efficiency(
            acc, kind="pretrain", precision=tr.precision, model=tr.model, fits=fits, inputs=inputs
        )
        df = scaling_curve(
            acc,
            tr.model,
            precision=tr.precision,
            gpu_counts=counts,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            efficiency=eff,
            specs=specs,
            models=models,
            fits=fits,
            inputs=inputs,
        )
        at = df.loc[df["n_gpus"] == tr.cluster_gpus]
        row = at.iloc[0]
        thr = float(row["tokens_per_s_per_gpu"]) if row["feasible"] else math.nan
        # scaling efficiency against the unconstrained per-GPU reference (uncapped), and the
        # overhead term that costs the most there
        ref = reference_throughput(
            spec,
            model_arch(tr.model, models, inputs=inputs),
            precision=tr.precision,
            seq_len=tr.seq_len,
            efficiency=eff,
        )
        limit = _limit_names(at, 1.0 / ref)[0]
        hours = tr.tokens / (thr * tr.cluster_gpus) / 3600.0 if row["feasible"] else math.nan
        out.append(
            {
                "accelerator": acc,
                "vendor": spec.get("vendor"),
                "status": spec.get("status"),
                "n_gpus": tr.cluster_gpus,
                "feasible": bool(row["feasible"]),
                "layout": row["layout"],
                "mfu": float(row["mfu"]),
                "scaling_efficiency": thr / ref,
                "limit": limit if row["feasible"] else "",
                "tokens_per_s_per_gpu": thr,
                "time_to_train_hours": hours,
                "gpu_hours": hours * tr.cluster_gpus,
                "reason": row["reason"],
                "efficiency": eff,
                "mfu_source": source,
            }
        )
    return pd.DataFrame(out)


def training_winner(ev: pd.DataFrame) -> dict[str, str | float]:
    """Shipping winner (shortest time to train) and its margin over the other vendor's best.

    ``margin_pct`` = winner's tokens/s per GPU over the best feasible shipping part of the
    other vendor, minus 100 (NaN when the other vendor has none).
    """
    ship = ev.loc[(ev["status"] == "shipping") & ev["feasible"]]
    if ship.empty:
        return {"winner": "", "vendor": "", "margin_pct": math.nan}
    best = ship.sort_values(["time_to_train_hours", "accelerator"]).iloc[0]
    other = ship.loc[ship["vendor"] != best["vendor"]]
    margin = (
        100.0 * (best["tokens_per_s_per_gpu"] / other["tokens_per_s_per_gpu"].max() - 1.0)
        if len(other)
        else math.nan
    )
    return {"winner": best["accelerator"], "vendor": best["vendor"], "margin_pct": margin}


#: What-ifs that isolate the article's interconnect claims (seed article): NVLink 6
#: "3.6 TB/s per GPU" belongs to Vera Rubin (announced), "UALink 300 GB/s" is not a shipping
#: MI3xx figure; scale-up domain 8 vs 72; scale-out 400 vs 800 Gb/s per GPU. A 72-GPU
#: domain, NVLink 6 and UALink are switched fabrics, so those what-ifs switch an 8-GPU
#: Infinity Fabric mesh too; the 8-GPU domain keeps each part's own board (a mesh on MI3xx).
WHAT_IFS: tuple[tuple[str, dict[str, float | str]], ...] = (
    ("as shipped", {}),
    ("scale-up domain 8", {"scaleup_domain_gpus": 8}),
    ("scale-up domain 72", {"scaleup_domain_gpus": 72, "scaleup_topology": "switch"}),
    ("scale-up 3.6 TB/s (NVLink 6 claim)", {"scaleup_bw_gbps": 3600, "scaleup_topology": "switch"}),
    (
        "scale-up 300 GB/s (article's UALink figure)",
        {"scaleup_bw_gbps": 300, "scaleup_topology": "switch"},
    ),
    ("scale-out 400 Gb/s", {"scaleout_gbps_per_gpu": 400}),
    ("scale-out 800 Gb/s", {"scaleout_gbps_per_gpu": 800}),
)


def what_if_table(
    sc: Scenario,
    *,
    n_gpus: int | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Tokens/s per GPU and time to train under each interconnect what-if, per candidate.

    Columns: accelerator, vendor, what_if, feasible, tokens_per_s_per_gpu,
    time_to_train_hours, change_pct (throughput vs as shipped), layout.
    """
    inputs = resolve(inputs)
    tr = sc.training
    n = int(n_gpus or tr.cluster_gpus)
    specs = _load_specs(inputs) if specs is None else specs
    out = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs, inputs=inputs)
        eff, _ = resolve_efficiency(
            acc, kind="pretrain", precision=tr.precision, model=tr.model, fits=fits, inputs=inputs
        )
        base = math.nan
        for name, ov in WHAT_IFS:
            df = scaling_curve(
                acc,
                tr.model,
                precision=tr.precision,
                gpu_counts=[n],
                seq_len=tr.seq_len,
                global_batch_tokens=tr.global_batch_tokens,
                efficiency=eff,
                spec_overrides=ov,
                specs=specs,
                models=models,
                inputs=inputs,
            )
            r = df.iloc[0]
            thr = float(r["tokens_per_s_per_gpu"])
            if not ov:
                base = thr
            out.append(
                {
                    "accelerator": acc,
                    "vendor": spec.get("vendor"),
                    "what_if": name,
                    "feasible": bool(r["feasible"]),
                    "tokens_per_s_per_gpu": thr,
                    "time_to_train_hours": tr.tokens / (thr * n) / 3600.0,
                    "change_pct": 100.0 * (thr / base - 1.0),
                    "layout": r["layout"],
                }
            )
    return pd.DataFrame(out)


def scaling_curves(
    sc: Scenario,
    *,
    gpu_counts: tuple[int, ...] = CURVE_GPU_COUNTS,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Scaling curves (one node to 16,384 GPUs) for every accelerator of the scenario."""
    inputs = resolve(inputs)
    tr = sc.training
    specs = _load_specs(inputs) if specs is None else specs
    frames = []
    for acc in sc.accelerators:
        eff, _ = resolve_efficiency(
            acc, kind="pretrain", precision=tr.precision, model=tr.model, fits=fits, inputs=inputs
        )
        df = scaling_curve(
            acc,
            tr.model,
            precision=tr.precision,
            gpu_counts=gpu_counts,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            efficiency=eff,
            specs=specs,
            models=models,
            inputs=inputs,
        )
        spec = spec_row(acc, specs, inputs=inputs)
        df.insert(1, "vendor", spec.get("vendor"))
        df.insert(2, "status", spec.get("status"))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def throughput_ratio_table(curves: pd.DataFrame) -> pd.DataFrame:
    """The uncapped throughput ratio of :func:`scaling_curves`: GPU counts x accelerators.

    One row per GPU count (ascending), one column per accelerator (alphabetical); a part
    with no feasible count at all has no column. Values above 1 are memory relief, not
    scaling (the plotted efficiency is min(1, ratio)).

    >>> c = pd.DataFrame({"n_gpus": [8, 16, 8, 16], "accelerator": ["B", "B", "A", "A"],
    ...                   "throughput_ratio": [1.0, 0.9, 1.0, 1.1]})
    >>> throughput_ratio_table(c).to_dict("index")
    {8: {'A': 1.0, 'B': 1.0}, 16: {'A': 1.1, 'B': 0.9}}
    """
    return curves.pivot_table(index="n_gpus", columns="accelerator", values="throughput_ratio")


def what_if_matrix(what_ifs: pd.DataFrame) -> pd.DataFrame:
    """Throughput change (%) vs as shipped of :func:`what_if_table`: accelerators x what-ifs.

    One row per accelerator, one column per what-if (both alphabetical).

    >>> w = pd.DataFrame({"accelerator": ["H200", "H200"],
    ...                   "what_if": ["as shipped", "scale-out 400 Gb/s"],
    ...                   "change_pct": [0.0, -2.5]})
    >>> what_if_matrix(w).to_dict("index")
    {'H200': {'as shipped': 0.0, 'scale-out 400 Gb/s': -2.5}}
    """
    return what_ifs.pivot_table(index="accelerator", columns="what_if", values="change_pct")


def scaling_studies(
    sc: Scenario,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """:func:`scaling_study` for every accelerator of the scenario (vendor and status added)."""
    inputs = resolve(inputs)
    tr = sc.training
    frames = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs, inputs=inputs)
        df = scaling_study(
            acc,
            tr.model,
            precision=tr.precision,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            cluster_gpus=tr.cluster_gpus,
            specs=specs,
            models=models,
            inputs=inputs,
        )
        df.insert(1, "vendor", spec.get("vendor"))
        df.insert(2, "status", spec.get("status"))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def key_results(
    ev: pd.DataFrame,
    summary: pd.DataFrame,
    curves: pd.DataFrame | None = None,
    studies: pd.DataFrame | None = None,
    forward: pd.DataFrame | None = None,
) -> dict[str, object]:
    """The chapter's key results (contracts.md, ``20-training-scaling``).

    ``ev`` from :func:`evaluate_training`, ``summary`` from :func:`validation_summary`,
    ``forward`` from :func:`~analysis.training.validation.forward_summary` (the MLPerf
    v5.1 rows no fit saw; without it the ``mlperf_v51_*`` keys are None).
    ``scaling_eff_{N}_{ACC}`` is the efficiency at the largest count N (16,384 GPUs) so the
    report shows the scale-out gap beyond the scenario's cluster. With ``studies``
    (:func:`scaling_studies`) it is the *strong-scaling* efficiency against the part's
    unconstrained per-GPU reference, uncapped (the same definition as ``scaling_eff_{ACC}``
    at the cluster size); otherwise, for older callers, the capped ratio of ``curves``
    (:func:`scaling_curves`). Infeasible candidates get None for their numbers.
    """
    out: dict[str, Any] = {}
    top = None
    col = "scaling_efficiency"
    if studies is not None and len(studies):
        strong = studies.loc[studies["mode"] == "strong"]
        n_max = int(strong["n_gpus"].max())
        top = strong.loc[strong["n_gpus"] == n_max].set_index("accelerator")
        col = "efficiency_vs_reference"
    elif curves is not None and len(curves):
        n_max = int(curves["n_gpus"].max())
        top = curves.loc[curves["n_gpus"] == n_max].set_index("accelerator")
    for r in ev.itertuples(index=False):
        ok = bool(r.feasible)
        out[f"train_hours_{r.accelerator}"] = float(r.time_to_train_hours) if ok else None
        out[f"train_gpu_hours_{r.accelerator}"] = float(r.gpu_hours) if ok else None
        out[f"scaling_eff_{r.accelerator}"] = float(r.scaling_efficiency) if ok else None
        if top is not None:
            eff = (
                float(top.at[r.accelerator, col])
                if r.accelerator in top.index and bool(top.at[r.accelerator, "feasible"])
                else math.nan
            )
            out[f"scaling_eff_{n_max}_{r.accelerator}"] = eff if math.isfinite(eff) else None
    win = training_winner(ev)
    out["train_winner"] = win["winner"]
    out["train_winner_vendor"] = win["vendor"]
    out["train_margin_pct"] = float(win["margin_pct"])
    overall = summary.loc[summary["group"] == "overall", "median_abs_err_pct"]
    out["mlperf_median_err_pct"] = float(overall.iloc[0]) if len(overall) else None
    fwd = (
        pd.Series(dtype=float)
        if forward is None
        else forward.set_index("group")["median_abs_err_pct"]
    )
    for key, group in (
        ("mlperf_v51_median_err_pct", "overall"),
        ("mlperf_v51_ratio_err_pct", "AMD/NVIDIA ratio"),
    ):
        v = float(fwd.get(group, math.nan))
        out[key] = v if math.isfinite(v) else None
    return out
