"""Fit of the sweep physics (:mod:`analysis.inference.decode_model`) on InferenceX points.

The raw per-operator parts of every point are computed once on the concurrency grid and at
the point's own concurrency (:func:`raw_terms`); a serving shape (:class:`SweepShape`) only
recombines them (:func:`shaped_terms`), so each validation fold refits the shape and the
level cheaply.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis.inference.decode_model import SweepShape, combine_scaled, sweep_parts
from analysis.inference.roofline import (
    CONCURRENCY,
    ROOFLINE_SHAPE,
    _codes,
    hardware_params_at,
    model_params,
    model_params_for,
)

#: Grids of the shape fit: seconds per MoE layer per step, per sequence, the compute over
#: bandwidth efficiency ratio, and the fewest rows a touched expert's GEMM costs.
LAYER_GRID_S = np.arange(0.0, 201e-6, 10e-6)
SEQ_GRID_S = np.array([0.0, 5e-6, 10e-6, 20e-6])
KAPPA_GRID = np.array([0.25, 0.35, 0.5, 0.7, 1.0])
ROWS_GRID = np.r_[0.0, np.geomspace(16.0, 1024.0, 7)]
#: Residuals of log eta beyond this are clipped in the shape fit's loss.
CLIP = 0.5
SWEEP_KEYS = (
    "accelerator",
    "precision",
    "framework",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
    "isl",
    "osl",
    "date",
)
RAW_KEYS = (
    "lin_bw",
    "lin_c",
    "moe_c",
    "moe_row_c",
    "attn_bw",
    "attn_c",
    "comm",
    "pre_bw",
    "pre_c",
    "fixed",
    "joins",
    "moe_layers",
    "seqs",
)


def raw_terms(points: pd.DataFrame, specs: pd.DataFrame, models: pd.DataFrame) -> dict[str, Any]:
    """Raw parts of every point on (point, grid) under ``grid`` and at ``conc`` under ``own``."""
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    model_by = {r["model"]: model_params(r) for _, r in models.iterrows()}
    n, m = len(points), len(CONCURRENCY)
    grid = {k: np.zeros((n, m)) for k in RAW_KEYS}
    own = {k: np.zeros(n) for k in RAW_KEYS}
    mem = np.zeros((n, m), dtype=bool)
    keys = list(zip(points["accelerator"], points["model"], points["precision"], strict=True))
    for key in sorted(set(keys)):
        idx = np.flatnonzero([k == key for k in keys])
        acc, model, prec = key
        hw = hardware_params_at(spec_by[acc], prec, ROOFLINE_SHAPE)
        mp = model_params_for(model_by, model)
        sub = points.iloc[idx]
        col = {
            "isl": sub["isl"].to_numpy(float)[:, None],
            "osl": sub["osl"].to_numpy(float)[:, None],
            "gpus": sub["decode_tp"].to_numpy(float)[:, None],
            "dp_attention": sub["decode_dp_attention"].to_numpy(float)[:, None],
            "ep": sub["decode_ep"].to_numpy(float)[:, None],
        }
        pg = sweep_parts(hw, mp, precision=prec, concurrency=CONCURRENCY[None, :], **col)
        po = sweep_parts(
            hw, mp, precision=prec, concurrency=sub["conc"].to_numpy(float)[:, None], **col
        )
        for k in RAW_KEYS:
            grid[k][idx] = np.broadcast_to(pg[k], (len(idx), m))
            own[k][idx] = np.broadcast_to(po[k], (len(idx), 1))[:, 0]
        mem[idx] = np.broadcast_to(pg["in_memory"], (len(idx), m))
    return {
        "grid": grid,
        "own": own,
        "in_memory": mem,
        "gpus": points["decode_tp"].to_numpy(float),
        "vendor": points["vendor"].to_numpy(object),
        "klass": points["precision_class"].to_numpy(object),
    }


def subset(raw: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    """The raw terms of the points in ``mask``."""
    return {
        "grid": {k: v[mask] for k, v in raw["grid"].items()},
        "own": {k: v[mask] for k, v in raw["own"].items()},
        **{k: raw[k][mask] for k in ("in_memory", "gpus", "vendor", "klass")},
    }


def shaped_terms(raw: dict[str, Any], shape: SweepShape) -> dict[str, np.ndarray]:
    """The terms :func:`analysis.inference.latency.throughput_at_tpot` reads, at ``shape``."""
    v, kl = raw["vendor"], raw["klass"]
    gf, gs = shape.combine(raw["grid"], v[:, None], kl[:, None])
    of, os_ = shape.combine(raw["own"], v, kl)
    return {
        "step_fixed": gf,
        "step_scaled": gs,
        "in_memory": raw["in_memory"],
        "gpus": raw["gpus"],
        "own_fixed": of,
        "own_scaled": os_,
    }


def _sweep_codes(points: pd.DataFrame) -> np.ndarray:
    keys = points[list(SWEEP_KEYS)].astype(str).agg("|".join, axis=1).tolist()
    return _codes(keys)[1]


def _flatness(y: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Per row of ``y`` (candidates x points): clipped squared deviation from sweep means."""
    n = int(code.max()) + 1 if len(code) else 0
    cnt = np.bincount(code, minlength=n).astype(float)
    sums = np.zeros((y.shape[0], n))
    np.add.at(sums.T, code, y.T)
    res = y - (sums / np.maximum(cnt, 1.0))[:, code]
    return np.minimum(res**2, CLIP**2).sum(axis=1)


def fit_sweep_shape(points: pd.DataFrame, raw: dict[str, Any]) -> SweepShape:
    """Per vendor the overheads and kappa, per vendor x class the expert rows, on sweeps.

    Within a sweep (one engine configuration at several concurrencies) the bandwidth
    efficiency should not move, so the grid point (:data:`LAYER_GRID_S`, ...) that makes
    the implied log eta_b, log(scaled / (measured TPOT - fixed)), flattest within the
    sweeps wins (clipped squares, a penalty where the overheads alone exceed the TPOT or
    eta_b exceeds 1). Deterministic: the first minimum. The level is not seen here.
    """
    own = raw["own"]
    tau = points["median_tpot_ms"].to_numpy(float) / 1e3
    vendor, klass = raw["vendor"], raw["klass"]
    code_all = _sweep_codes(points)
    ol, os_, ka = (
        a.ravel() for a in np.meshgrid(LAYER_GRID_S, SEQ_GRID_S, KAPPA_GRID, indexing="ij")
    )
    out: dict[str, dict[Any, float]] = {"layer": {}, "seq": {}, "kappa": {}, "rows": {}}
    for v in sorted(set(vendor.tolist())):
        mv = vendor == v
        p = {k: a[mv] for k, a in own.items()}
        fixed = p["fixed"][None, :] + ol[:, None] * p["moe_layers"] * (1.0 + p["joins"])
        fixed = fixed + os_[:, None] * p["seqs"]
        room = tau[mv][None, :] - fixed
        bad = room <= 0.05 * tau[mv][None, :]
        log_room = np.log(np.maximum(room, 0.05 * tau[mv][None, :]))
        total = np.zeros(len(ol))
        best: dict[Any, np.ndarray] = {}
        for kl in sorted(set(klass[mv].tolist())):
            mk = klass[mv] == kl
            pk = {k: a[mk] for k, a in p.items()}
            code = _codes(code_all[mv][mk].tolist())[1]
            losses = []
            for rows in ROWS_GRID:
                scaled = combine_scaled(pk, ka[:, None], rows)  # (candidates, points)
                y = np.log(scaled) - log_room[:, mk]
                loss = _flatness(y, code) + bad[:, mk].sum(axis=1) * CLIP**2
                losses.append(loss + (np.maximum(y, 0.0) ** 2).sum(axis=1))
            lr = np.stack(losses, axis=1)
            j = np.argmin(lr, axis=1)
            total += lr[np.arange(len(ol)), j]
            best[kl] = j
        i = int(np.argmin(total))
        out["layer"][v], out["seq"][v], out["kappa"][v] = float(ol[i]), float(os_[i]), float(ka[i])
        for kl, j in best.items():
            out["rows"][(v, kl)] = float(ROWS_GRID[j[i]])
    return SweepShape(
        overhead_layer_s=out["layer"],
        overhead_seq_s=out["seq"],
        kappa=out["kappa"],
        expert_rows=out["rows"],
    )
