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

from analysis.inference.decode_model import SweepShape, _lookup, combine_scaled, sweep_parts
from analysis.inference.latency import (
    PRIOR_POINTS,
    SHAPE_CLIP,
    SHAPE_PREFILL_COST_GRID,
    SWEEP_KEYS,
    choose_prefill_cost,
)
from analysis.inference.roofline import (
    CONCURRENCY,
    ROOFLINE_SHAPE,
    _codes,
    _group_median,
    hardware_params_at,
    model_params,
    model_params_for,
)

#: Grids of the shape fit: seconds per MoE layer per step, per sequence, the compute over
#: bandwidth efficiency ratio, and the fewest rows a touched expert's GEMM costs.
LAYER_GRID_S = np.arange(0.0, 301e-6, 10e-6)
SEQ_GRID_S = np.array([0.0, 5e-6, 10e-6, 20e-6])
KAPPA_GRID = np.array([0.25, 0.35, 0.5, 0.7, 1.0])
ROWS_GRID = np.r_[0.0, np.geomspace(16.0, 1024.0, 7)]
#: Residuals of log eta beyond this are clipped in the shape fit's loss (latency's).
CLIP = SHAPE_CLIP
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
        "group": (points["vendor"] + " " + points["generation"]).to_numpy(object),
    }


def subset(raw: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    """The raw terms of the points in ``mask``."""
    return {
        "grid": {k: v[mask] for k, v in raw["grid"].items()},
        "own": {k: v[mask] for k, v in raw["own"].items()},
        **{k: raw[k][mask] for k in ("in_memory", "gpus", "vendor", "klass", "group")},
    }


def shaped_terms(raw: dict[str, Any], shape: SweepShape) -> dict[str, np.ndarray]:
    """The terms :func:`analysis.inference.latency.throughput_at_tpot` reads, at ``shape``."""
    v, kl, gr = raw["vendor"], raw["klass"], raw["group"]
    gf, gs = shape.combine(raw["grid"], v[:, None], kl[:, None], gr[:, None])
    of, os_ = shape.combine(raw["own"], v, kl, gr)
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
    if not len(code):
        return np.zeros(y.shape[0])
    # Each sweep's sum over its points in their given order: the k-th point of every
    # sweep is added in step k (a stable sort ranks them), so the sums are bit for bit
    # those of accumulating point by point, at a fraction of ``np.add.at``'s time.
    n = int(code.max()) + 1
    cnt = np.bincount(code, minlength=n)
    order = np.argsort(code, kind="stable")
    sorted_code = code[order]
    rank = np.arange(len(code)) - (np.cumsum(cnt) - cnt)[sorted_code]
    sums = np.zeros((y.shape[0], n))
    for k in range(int(cnt.max())):
        at = rank == k  # at most one point of each sweep
        sums[:, sorted_code[at]] += y[:, order[at]]
    res = y - (sums / np.maximum(cnt, 1.0))[:, code]
    loss: np.ndarray = np.minimum(res**2, CLIP**2).sum(axis=1)
    return loss


_OL, _OS, _KA = (
    a.ravel() for a in np.meshgrid(LAYER_GRID_S, SEQ_GRID_S, KAPPA_GRID, indexing="ij")
)


#: Points at most this concurrent are used for the prefill efficiency: their time to first
#: token is one prefill pass plus fixed latency, with little queueing behind other prompts.
PREFILL_FIT_CONC = 4


def _prefill_line(c1: np.ndarray, ttft: np.ndarray) -> float:
    """Efficiency from TTFT = T0 + c1 / eta (least squares); NaN without two prompt lengths."""
    if len(c1) < 2 or np.ptp(c1) <= 0:
        return float("nan")
    slope = np.polyfit(c1, ttft, 1)[0]
    return float(1.0 / slope) if slope > 0 else float("nan")


def fit_prefill_eta(points: pd.DataFrame, raw: dict[str, Any]) -> dict[str, float]:
    """Prefill efficiency per vendor and per group (vendor and generation), from TTFT.

    At low concurrency (:data:`PREFILL_FIT_CONC`) the time to first token is a fixed
    latency (request handling, scheduling, the first decode step) plus one prefill pass,
    whose FLOPs at the peak are ``pre_c / joins`` (:func:`sweep_parts`): the slope of TTFT
    against them across prompt lengths is 1 / efficiency. A group's log efficiency is
    shrunk to its vendor's by n / (n + PRIOR_POINTS) points.
    """
    c1 = raw["own"]["pre_c"] / np.maximum(raw["own"]["joins"], 1e-12)
    ttft = points["median_ttft_ms"].to_numpy(float) / 1e3
    low = (points["conc"].to_numpy(float) <= PREFILL_FIT_CONC) & np.isfinite(ttft)
    out: dict[str, float] = {}
    for v in sorted(set(raw["vendor"].tolist())):
        mv = low & (raw["vendor"] == v)
        ev = _prefill_line(c1[mv], ttft[mv])
        if not np.isfinite(ev):
            continue
        out[v] = ev
        for gname in sorted(set(raw["group"][mv].tolist())):
            mg = mv & (raw["group"] == gname)
            eg = _prefill_line(c1[mg], ttft[mg])
            if np.isfinite(eg):
                w = mg.sum() / (mg.sum() + PRIOR_POINTS)
                out[gname] = float(np.exp(w * np.log(eg) + (1 - w) * np.log(ev)))
    return out


def _fit_overheads(
    raw: dict[str, Any],
    tau: np.ndarray,
    code_all: np.ndarray,
    mask: np.ndarray,
    stall: np.ndarray,
    prefill: bool,
    pre_cost: float = 1.0,
) -> tuple[int, dict[Any, np.ndarray]]:
    """Best (overheads, kappa) grid index on the points of ``mask``, and per class the rows."""
    p = {k: a[mask] for k, a in raw["own"].items()}
    klass = raw["klass"][mask]
    t = tau[mask][None, :]
    room = t - _fixed(p, stall[mask], _OL[:, None], _OS[:, None])
    bad = room <= 0.05 * t
    log_room = np.log(np.maximum(room, 0.05 * t))
    total = np.zeros(len(_OL))
    best: dict[Any, np.ndarray] = {}
    for kl in sorted(set(klass.tolist())):
        mk = klass == kl
        pk = {k: a[mk] for k, a in p.items()}
        code = _codes(code_all[mask][mk].tolist())[1]
        losses = []
        for rows in ROWS_GRID:
            scaled = combine_scaled(pk, _KA[:, None], rows, prefill=prefill, pre_cost=pre_cost)
            y = np.log(scaled) - log_room[:, mk]
            loss = _flatness(y, code) + bad[:, mk].sum(axis=1) * CLIP**2
            losses.append(loss + (np.maximum(y, 0.0) ** 2).sum(axis=1))
        lr = np.stack(losses, axis=1)
        j = np.argmin(lr, axis=1)
        total += lr[np.arange(len(_OL)), j]
        best[kl] = j
    return int(np.argmin(total)), best


def _fixed(p: dict[str, np.ndarray], stall: np.ndarray, o_layer: Any, o_seq: Any) -> np.ndarray:
    out: np.ndarray = (
        p["fixed"] + stall + o_layer * p["moe_layers"] * (1.0 + p["joins"]) + o_seq * p["seqs"]
    )
    return out


def _cross_length_loss(
    raw: dict[str, Any],
    tau: np.ndarray,
    engine_code: np.ndarray,
    mask: np.ndarray,
    stall: np.ndarray,
    pre_cost: float,
    fit: tuple[int, dict[Any, np.ndarray]],
) -> np.ndarray:
    """The shape fit's loss at one fitted grid point, over each engine-day's lengths.

    As :func:`analysis.inference.latency.fit_shape`'s prefill-cost criterion: the clipped
    spread of implied log eta_b within each engine and run date (every prompt and answer
    length), with the same penalties. Per engine-day (``engine_code``: integer codes of
    every point; zero for one outside ``mask``), as
    :func:`analysis.inference.latency.choose_prefill_cost` compares them.
    """
    i, best = fit
    p = {k: a[mask] for k, a in raw["own"].items()}
    t = tau[mask]
    room = t - _fixed(p, stall[mask], _OL[i], _OS[i])
    rows = np.array([ROWS_GRID[best[kl][i]] for kl in raw["klass"][mask]])
    scaled = combine_scaled(p, _KA[i], rows, pre_cost=pre_cost)
    y = np.log(scaled) - np.log(np.maximum(room, 0.05 * t))
    code = engine_code[mask]
    n_groups = int(engine_code.max()) + 1 if len(engine_code) else 0
    cnt = np.bincount(code, minlength=n_groups).astype(float)
    mean = np.bincount(code, weights=y, minlength=n_groups) / np.maximum(cnt, 1.0)
    point = (
        np.minimum((y - mean[code]) ** 2, CLIP**2)
        + (room <= 0.05 * t) * CLIP**2
        + np.maximum(y, 0.0) ** 2
    )
    return np.bincount(code, weights=point, minlength=n_groups)


def fit_sweep_shape(
    points: pd.DataFrame,
    raw: dict[str, Any],
    *,
    by_generation: bool = False,
    prefill_from_ttft: bool = False,
) -> SweepShape:
    """Per vendor the overheads and kappa, per vendor x class the expert rows, on sweeps.

    Where the prefill passes are charged at eta_b (the default), first the cost of their
    FLOPs (``SweepShape.prefill_cost``, one for every vendor, on the serving shape's grid
    :data:`analysis.inference.latency.SHAPE_PREFILL_COST_GRID`): per trial cost each
    vendor's overheads and rows are fitted as below, and the spread of implied log eta_b
    within each engine-day across lengths (:func:`_cross_length_loss`), summed over
    vendors, decides by the serving shape's one-standard-error rule
    (:func:`analysis.inference.latency.choose_prefill_cost`). On the bundled sweeps 2.5
    (the plain minimum, 3, before the rule). Held out (same folds, 2026-12-02): 30.9 ->
    27.9 % with the cost at the plain minimum (AMD 41.9 -> 38.2, NVIDIA 21.7 -> 25.1; TPOT
    AMD 17.0 -> 14.7, NVIDIA 9.3 -> 10.9), B200 FP8/FP4 47.4 -> 44.9 %, MI355X 31.5 ->
    31.7 %; with the rule 28.0 % (AMD 37.3, NVIDIA 25.1), B200 23.3 %, MI355X 31.7 %.

    Within a sweep (one engine configuration at several concurrencies) the bandwidth
    efficiency should not move, so the grid point (:data:`LAYER_GRID_S`, ...) that makes
    the implied log eta_b, log(scaled / (measured TPOT - fixed)), flattest within the
    sweeps wins (clipped squares, a penalty where the overheads alone exceed the TPOT or
    eta_b exceeds 1). Deterministic: the first minimum. The level is not seen here.

    Options, both off by default (examined on the held-out scheme with the level of
    :func:`fit_level`, neither lowered its median error: with the prefill cost above,
    2026-12-02, 30.0 % (AMD 34.2, NVIDIA 29.3; TPOT AMD 14.7 -> 14.2 %) and 39.8 % (AMD
    34.5, NVIDIA 41.7) against 27.9 % (AMD 38.2, NVIDIA 25.1); before it, 35.1 % and
    38.2 % against 30.7 %; a per-generation kappa on top of the first, 36.2 %, and
    per-sequence overheads up to 320 us, which the fit does not pick, were examined too,
    before the cost): ``by_generation`` fits the overheads per
    vendor x generation too, shrunk to the vendor's by n / (n + PRIOR_POINTS) points
    (CDNA 3's fixed step cost is about twice CDNA 4's); ``prefill_from_ttft`` charges
    the prefill passes at an efficiency fitted on time to first token
    (:func:`fit_prefill_eta`) instead of at eta_b.

    Pooling by compute die (part -> die -> generation -> vendor) adds nothing to
    ``by_generation`` on these data: every InferenceX generation is one die (CDNA 3 = MI300X
    and MI325X, CDNA 4 = MI355X only, Hopper = H200, Blackwell = B200, Blackwell Ultra =
    B300), and a part level is either the held-out cell itself (CDNA 3) or the part's other
    format (MI355X, B200, B300), which is the generation's fit. Fitted alone, the same die
    gives 170 us per MoE layer on MI300X and 270 us on MI325X, so a die level is noisy where
    it exists. Also examined (held-out scheme, same folds): both options together, AMD 33.1
    %, NVIDIA 35.4 %, overall 34.9 % (H200's held-out fold takes Blackwell's TTFT prefill
    efficiency; these, before the prefill cost); the measured sustained GEMM clocks of
    MI300X and MI325X (:mod:`analysis.training.sustained`) on the compute peaks, AMD 42.2 %
    (decode is bandwidth-bound at these batches); the TTFT prefill efficiency only where the
    fold has the point's own generation (else prefill at eta_b), AMD 34.5 %, NVIDIA 37.2 %
    (the NVIDIA overheads and kappa refit worse: H200 18 -> 37 %, B200 fp4 21 -> 40 %); a
    serving-release level term (vendor x generation x framework x run date, shrunk like the
    frameworks, in :func:`fit_level`), AMD 41.2 %, NVIDIA 23.2 %, overall 29.7 % (the
    date-to-date change is in the fixed step cost, not the level; not kept, NVIDIA
    regresses). :func:`analysis.inference.latency_validation.cell_summary` shows where each
    cell's error sits: on CDNA 3 the modelled TPOT is 32-38 % low at concurrency <= 8 and
    14-19 % high at >= 32 (a slope error, consistent with a fixed step cost too small),
    MI355X fp8 and B200 fp8 are high mainly at high concurrency.
    """
    tau = points["median_tpot_ms"].to_numpy(float) / 1e3
    vendor, group = raw["vendor"], raw["group"]
    code_all = _sweep_codes(points)
    out: dict[str, dict[Any, float]] = {"layer": {}, "seq": {}, "kappa": {}, "rows": {}}
    eta_pre = fit_prefill_eta(points, raw) if prefill_from_ttft else {}
    stall = raw["own"]["pre_c"] / _lookup(eta_pre, group, vendor, default=1.0)
    if not prefill_from_ttft:
        stall = 0.0 * stall
    pre_cost = 1.0
    if not prefill_from_ttft:
        # One cost of a prefill pass's FLOPs for every vendor, on the summed cross-length
        # loss, as the serving shape's (:func:`analysis.inference.latency.fit_shape`).
        cols = [c for c in SWEEP_KEYS if c not in ("isl", "osl")]
        engine = _codes(points[cols].astype(str).agg("|".join, axis=1).tolist())[1]
        vendors = sorted(set(vendor.tolist()))

        def summed(k: float) -> np.ndarray:
            total: np.ndarray = np.sum(
                [
                    _cross_length_loss(
                        raw,
                        tau,
                        engine,
                        vendor == v,
                        stall,
                        k,
                        _fit_overheads(raw, tau, code_all, vendor == v, stall, True, k),
                    )
                    for v in vendors
                ],
                axis=0,
            )
            return total

        if len(points):
            pre_cost = choose_prefill_cost({k: summed(k) for k in SHAPE_PREFILL_COST_GRID})
    for v in sorted(set(vendor.tolist())):
        mv = vendor == v
        i, best = _fit_overheads(raw, tau, code_all, mv, stall, not prefill_from_ttft, pre_cost)
        out["layer"][v], out["seq"][v], out["kappa"][v] = _OL[i], _OS[i], _KA[i]
        for kl, j in best.items():
            out["rows"][(v, kl)] = float(ROWS_GRID[j[i]])
        if not by_generation:
            continue
        # Per generation: its own overheads (one serving stack and chip), shrunk to the
        # vendor's by n / (n + PRIOR_POINTS) points.
        for gname in sorted(set(group[mv].tolist())):
            mg = group == gname
            ig, _ = _fit_overheads(raw, tau, code_all, mg, stall, not prefill_from_ttft, pre_cost)
            w = mg.sum() / (mg.sum() + PRIOR_POINTS)
            out["layer"][gname] = float(w * _OL[ig] + (1 - w) * _OL[i])
            out["seq"][gname] = float(w * _OS[ig] + (1 - w) * _OS[i])
    return SweepShape(
        overhead_layer_s=out["layer"],
        overhead_seq_s=out["seq"],
        kappa=out["kappa"],
        expert_rows=out["rows"],
        prefill_eta=eta_pre,
        prefill_cost=pre_cost,
    )


#: Prior of a precision class's log-efficiency effect where a vendor x generation has not
#: served both classes in the fold: none (the format's bytes and peaks are already in the
#: step terms, :func:`analysis.inference.decode_model.sweep_parts`). Fixed a priori: a
#: format's software gain (its kernels' efficiency) is a property of one vendor's stack,
#: so it is not carried from the other vendor's measurements. The formats the step terms
#: use for fp4 (every weight at 4.5 bits, fp4 peak, fp8 KV cache) match AMD's MXFP4
#: DeepSeek-R1 card (https://huggingface.co/amd/DeepSeek-R1-MXFP4, README revision
#: 7f771af, accessed 2026-12-01: weights and activations OCP MXFP4, KV cache fp8, only
#: lm_head excluded; an earlier revision also excluded self_attn and mlp.gate), so
#: MI355X's measured fp4 efficiency, 0.88x its fp8 one, is its kernels', not bytes.
#: Examined (one-off experiment of 2026-12-03, same folds; patch not kept): a prior pooled
#: over vendors instead (each class's mean effect over every vendor x generation that
#: served both, shrunk to none; a vendor's own mean shrunk to it). The folds that hold out
#: an MI355X format then take NVIDIA's Blackwell effect, of the opposite sign to AMD's:
#: MI355X fp4 +12.9 -> +93.2 % signed, fp8 -11.5 -> -42.9 %, FP8/FP4 ratio error MI355X
#: 29.0 -> 66.4 %, B200 31.6 -> 35.9 %, serving model overall 30.7 -> 34.7 %.
#: Examined (one-off, 2026-12-07, not kept): the prior set to MI355X's own measured effect,
#: +0.128 (fp4 at 0.88x fp8's efficiency), which no fold may know: the serving model's
#: FP8/FP4 ratio error on MI355X 21.4 -> 38.9 % (modelled median ratio 0.52 -> 0.62 against
#: 0.51 measured), B200 7.8 -> 14.4 %; -0.128: 26.8 / 15.4 %. The MI355X ratio error is
#: point-to-point scatter (each configuration's own median ratio misses by 29.7 %), not
#: the prior.
PRECISION_PRIOR = 0.0
_REF_CLASS = "native"


def _class_effects(
    r: np.ndarray, group: list[Any], klass: list[Any], vendor: list[Any]
) -> dict[tuple[Any, Any], float]:
    """Per (group, class): log efficiency over the group's native class.

    A group that served both classes: its own median difference, shrunk to its vendor's
    by n / (n + PRIOR_POINTS) points of the class; the vendor's is the mean over such
    groups, shrunk to :data:`PRECISION_PRIOR` by all their points; a group or vendor
    without both classes takes the next level up.
    """
    frame = pd.DataFrame({"r": r, "g": group, "c": klass, "v": vendor})
    med = frame.groupby(["g", "c"])["r"].agg(["median", "size"])
    own: dict[tuple[Any, Any], tuple[float, int]] = {}
    for (g, c), row in med.iterrows():
        if c != _REF_CLASS and (g, _REF_CLASS) in med.index:
            diff = float(row["median"] - med.at[(g, _REF_CLASS), "median"])
            own[(g, c)] = (diff, int(row["size"]))
    vend_of = dict(zip(group, vendor, strict=True))
    by_vendor: dict[tuple[Any, Any], list[tuple[float, int]]] = {}
    for (g, c), val in own.items():
        by_vendor.setdefault((vend_of[g], c), []).append(val)
    vend: dict[tuple[Any, Any], float] = {}
    for key, vals in by_vendor.items():
        n = sum(k for _, k in vals)
        w = n / (n + PRIOR_POINTS)
        vend[key] = w * float(np.mean([d for d, _ in vals])) + (1 - w) * PRECISION_PRIOR
    out: dict[tuple[Any, Any], float] = {}
    for g, c in set(zip(group, klass, strict=True)) | set(own):
        base = vend.get((vend_of[g], c), PRECISION_PRIOR)
        if c == _REF_CLASS:
            out[(g, c)] = 0.0
        elif (g, c) in own:
            d, k = own[(g, c)]
            w = k / (k + PRIOR_POINTS)
            out[(g, c)] = w * d + (1 - w) * base
        else:
            out[(g, c)] = base
    for (v, c), effect in vend.items():
        out[(("vendor", v), c)] = effect
    return out


def fit_level(points: pd.DataFrame, iterations: int = 20) -> dict[str, dict[Any, float]]:
    """The sweep model's level: log eta = group + the group's class effect + framework.

    A median polish (frameworks shrunk by n / (n + PRIOR_POINTS) and centred) whose
    precision effect is per vendor x generation (:func:`_class_effects`), never pooled
    over vendors: where the fold leaves a vendor without both classes in any generation,
    a held-out class takes :data:`PRECISION_PRIOR`. Both InferenceX validations use it.
    """
    p = points[points["eta"].notna()]
    y = np.log(p["eta"].to_numpy(float))
    group = list(zip(p["vendor"], p["generation"], strict=True))
    klass = p["precision_class"].tolist()
    vendor = p["vendor"].tolist()
    g_names, g = _codes(group)
    f_names, f = _codes(p["framework"].tolist())
    cnt = np.bincount(f, minlength=len(f_names)).astype(float)
    f_w = cnt / (cnt + PRIOR_POINTS)
    df = np.zeros(len(f_names))
    a = np.zeros(len(g_names))
    eff: dict[tuple[Any, Any], float] = {}
    for _ in range(iterations):
        eff = _class_effects(y - df[f] - a[g], group, klass, vendor)
        d = np.array([eff[k] for k in zip(group, klass, strict=True)])
        a = _group_median(g, y - d - df[f], len(g_names))
        df = _group_median(f, y - a[g] - d, len(f_names)) * f_w
        df = df - np.median(df)
    v_names, v = _codes(vendor)
    vlev = _group_median(v, y - d - df[f], len(v_names))
    return {
        "group": dict(zip(g_names, a, strict=True)),
        "vendor": dict(zip(v_names, vlev, strict=True)),
        "class": eff,
        "framework": dict(zip(f_names, df, strict=True)),
    }


def predict_level(points: pd.DataFrame, fitted: dict[str, dict[Any, float]]) -> np.ndarray:
    """Efficiency of each point from :func:`fit_level` (an unseen group takes its vendor's)."""
    out = np.empty(len(points))
    cols = ["vendor", "generation", "precision_class", "framework"]
    for i, (v, gen, kl, fw) in enumerate(points[cols].itertuples(index=False, name=None)):
        g = (v, gen)
        if g in fitted["group"]:
            base = fitted["group"][g]
            cls = fitted["class"].get((g, kl), fitted["class"].get((("vendor", v), kl)))
        else:
            base = fitted["vendor"].get(v, np.nan)
            cls = fitted["class"].get((("vendor", v), kl))
        cls = PRECISION_PRIOR if cls is None or kl == _REF_CLASS else cls
        out[i] = np.exp(base + cls + fitted["framework"].get(fw, 0.0))
    return out
