"""MLPerf Inference rows as model inputs: the efficiency each result implies."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.inference.benchmarks import BenchmarkDef, benchmark_def
from analysis.inference.compute_ratio import scaled_time
from analysis.inference.roofline import (
    BYTES_PER_PARAM,
    CONCURRENCY,
    ETA_BRACKET,
    MLPERF_TP,
    SCENARIOS,
    _apply_eta,
    _best,
    _generation,
    _models,
    _num,
    _specs,
    _supports,
    _terms,
    model_params,
    model_params_for,
    precision_class,
    serving_metrics,
)
from analysis.inference.shape import hardware_params
from analysis.inputs import Inputs, resolve


def _dedupe_mlperf(mlperf: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Rows the calibration can use: one per distinct run, known accelerator/model/precision."""
    df = mlperf.copy()
    if "duplicate_of" in df:
        df = df[df["duplicate_of"].isna() | (df["duplicate_of"].astype(str) == "")]
    df = df[df["accelerator"].notna() & (df["accelerator"].astype(str) != "")]
    if "units" in df:
        df = df[df["units"].astype(str).str.lower().str.startswith("tokens")]
    df = df[df["precision"].isin(list(BYTES_PER_PARAM))]
    df = df[df["model"].isin(set(models["model"]))]
    df = df[df["scenario"].isin(SCENARIOS)]
    keep = []
    for bench, scen in zip(df["benchmark"], df["scenario"], strict=True):
        try:
            benchmark_def(bench).bounds(scen)
            keep.append(True)
        except ValueError:
            keep.append(False)
    df = df[np.array(keep, dtype=bool)] if len(df) else df
    # -99 / -99.9 reruns with identical results that the ingest did not link: keep one.
    df = df.drop_duplicates(["round", "submitter", "system", "model", "scenario", "result"])
    return df.reset_index(drop=True)


#: The operator pieces :func:`_row_terms` also stacks (piece first), and the scaled time each
#: gives at another compute ratio (:func:`with_compute_ratio`).
_PIECE_SCALED = {
    "step_pieces": "step_scaled",
    "tail_pieces": "tail_scaled",
    "prefill_pieces": "prefill_scaled",
}


def with_compute_ratio(t: Mapping[str, np.ndarray], kappa: Any) -> dict[str, np.ndarray]:
    """Row terms (:func:`_row_terms`) re-timed at a compute ratio per row (``kappa``).

    The result holds the scaled times at ``kappa`` and no operator pieces (what
    :func:`_needed_eta` and :func:`_predict_terms` read); re-time the original terms for
    another ratio.
    """
    k = np.asarray(kappa, dtype=float).reshape(-1, 1, 1)
    out = {key: v for key, v in t.items() if key not in _PIECE_SCALED}
    for pk, sk in _PIECE_SCALED.items():
        out[sk] = scaled_time(t[pk], k)
    return out


def subset_terms(t: Mapping[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """Row terms (:func:`_row_terms`) of the rows ``rows`` (pieces keep their piece axis).

    Every row in order (what :class:`analysis.inference.compute_ratio.EtaTable` asks for
    at each of its grid ratios) gives the arrays themselves, not copies: the terms are
    only read, and copying them all took 0.1 s a call (4.4 s of chapter 30 before).
    """
    idx = np.asarray(rows)
    every = next((v.shape[1] if k in _PIECE_SCALED else len(v) for k, v in t.items()), 0)
    if idx.dtype.kind in "iu" and np.array_equal(idx, np.arange(every)):
        return dict(t)
    return {k: (v[:, rows] if k in _PIECE_SCALED else v[rows]) for k, v in t.items()}


def _row_inputs(row: pd.Series, bdef: BenchmarkDef) -> tuple[float, float]:
    osl = row.get("tokens_per_sample")
    osl = float(osl) if osl is not None and pd.notna(osl) and float(osl) > 0 else bdef.osl_mean
    return bdef.isl_mean, osl


def _mlperf_grid(
    hw: dict[str, float],
    mp: dict[str, float],
    precision: str,
    isl: float,
    osl: float,
    tps: Sequence[int],
    eta: np.ndarray,
) -> dict[str, np.ndarray]:
    """Metrics on a (eta, tp, concurrency) grid."""
    g = np.asarray(tps, dtype=float)[None, :, None]
    return serving_metrics(
        hw,
        mp,
        precision=precision,
        isl=isl,
        osl=osl,
        gpus=g,
        eta=np.asarray(eta, dtype=float)[:, None, None],
        concurrency=CONCURRENCY[None, None, :],
    )


def _predict_one(
    hw: dict[str, float],
    mp: dict[str, float],
    precision: str,
    isl: float,
    osl: float,
    ttft: float | None,
    tpot: float | None,
    tps: Sequence[int],
    eta: float,
) -> float:
    """Best tokens/s per GPU over the TP choices (NaN if nothing fits the bounds)."""
    m = _mlperf_grid(hw, mp, precision, isl, osl, tps, np.array([eta]))
    best, _, _ = _best(m, tpot, ttft)
    return float(np.nanmax(best)) if np.isfinite(best).any() else float("nan")


def _tp_options(hw: Mapping[str, float], gpus: int) -> tuple[int, ...]:
    return tuple(t for t in MLPERF_TP if t <= gpus and t <= max(hw["domain"], 1.0)) or (1,)


#: Keys of the hardware parameter dict stacked per row: every key of
#: :func:`hardware_params_at` (a key left out reads as its default in :func:`_terms`).
_HW_KEYS = (
    "bw_tbps",
    "peak_tflops",
    "attn_peak_tflops",
    "mem_gb",
    "link_gbps",
    "domain",
    "scaleout_gbps",
    "amd",
    "expert_rows",
    "overhead_layer_s",
    "overhead_seq_s",
    "overhead_expert_s",
    "prefill_cost",
)

#: Per-row model terms :func:`_row_terms` stacks (see :func:`_terms`).
_ROW_TERM_KEYS = (
    "step_fixed",
    "step_scaled",
    "tail_fixed",
    "tail_scaled",
    "prefill_fixed",
    "prefill_scaled",
    "ttft_steps",
    "max_concurrency",
    "in_memory",
)


def _row_terms(
    accelerators: Sequence[str],
    model_ids: Sequence[str],
    precisions: Sequence[str],
    isl: Any,
    osl: Any,
    ttft_ms: Any,
    tpot_ms: Any,
    spec_by: Mapping[str, pd.Series],
    model_by: Mapping[str, dict[str, float]],
    *,
    inputs: Inputs | None = None,
) -> dict[str, np.ndarray]:
    """Model terms of many MLPerf rows on one (row, TP in ``MLPERF_TP``, concurrency) grid.

    Every row's precision must be supported by its accelerator. Adds ``tp_ok`` (the TP
    choices an 8-GPU node offers the row), ``ttft_s``/``tpot_s`` bounds (inf = none).
    """
    n = len(accelerators)
    shape = (n, len(MLPERF_TP), len(CONCURRENCY))
    out: dict[str, np.ndarray] = {k: np.empty(shape) for k in _ROW_TERM_KEYS if k != "in_memory"}
    out["in_memory"] = np.zeros(shape, dtype=bool)
    for k in _PIECE_SCALED:
        out[k] = np.empty((5, *shape))
    gpus = np.asarray(MLPERF_TP, dtype=float)[None, :, None]
    isl = np.asarray(isl, dtype=float)
    osl = np.asarray(osl, dtype=float)
    hw_cache: dict[tuple[str, str], dict[str, float]] = {}
    hw_rows = []
    for acc, prec in zip(accelerators, precisions, strict=True):
        if (acc, prec) not in hw_cache:
            hw_cache[(acc, prec)] = hardware_params(spec_by[acc], prec, inputs=inputs)
        hw_rows.append(hw_cache[(acc, prec)])
    mp_rows = [model_params_for(model_by, m) for m in model_ids]
    prec_arr = np.asarray(precisions, dtype=object)
    for prec in sorted(set(prec_arr.tolist())):
        idx = np.flatnonzero(prec_arr == prec)
        hw = {k: np.array([hw_rows[i][k] for i in idx])[:, None, None] for k in _HW_KEYS}
        mp = {k: np.array([mp_rows[i][k] for i in idx])[:, None, None] for k in mp_rows[0]}
        t = _terms(
            hw,
            mp,
            precision=prec,
            isl=isl[idx][:, None, None],
            osl=osl[idx][:, None, None],
            gpus=gpus,
            concurrency=CONCURRENCY[None, None, :],
        )
        for k in _ROW_TERM_KEYS:
            out[k][idx] = np.broadcast_to(t[k], (len(idx),) + shape[1:])
        for k in _PIECE_SCALED:
            for j, piece in enumerate(t[k]):
                out[k][j, idx] = np.broadcast_to(piece, (len(idx),) + shape[1:])
    domain = np.array([max(h["domain"], 1.0) for h in hw_rows])
    out["tp_ok"] = (gpus <= 8) & (gpus <= domain[:, None, None])
    out["tp_ok"][:, 0, :] = True  # TP1 is always a choice
    out["concurrency"] = np.broadcast_to(CONCURRENCY[None, None, :], shape)
    out["gpus"] = np.broadcast_to(gpus, shape)

    def nan_inf(v: np.ndarray) -> np.ndarray:  # ms -> s, a missing bound is none
        s: np.ndarray = np.where(np.isnan(v), np.inf, v) / 1e3
        return s

    out["ttft_s"] = nan_inf(np.asarray(ttft_ms, dtype=float))
    out["tpot_s"] = nan_inf(np.asarray(tpot_ms, dtype=float))
    return out


def _candidates_ok(t: Mapping[str, np.ndarray]) -> np.ndarray:
    ok: np.ndarray = t["in_memory"] & t["tp_ok"]
    return ok


def _needed_eta(t: Mapping[str, np.ndarray], measured: Any) -> np.ndarray:
    """Per row: the smallest eta at which the model's best layout reaches ``measured``.

    inf where no eta does (a latency bound the fixed overheads already break).
    """
    a, s = t["step_fixed"], t["step_scaled"]
    a9, s9 = t["tail_fixed"], t["tail_scaled"]
    n = t["ttft_steps"]
    ap, sp = t["prefill_fixed"] + n * a9, t["prefill_scaled"] + n * s9
    m = np.asarray(measured, dtype=float)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        y = t["concurrency"] / (t["gpus"] * m)  # step time that delivers the measurement
        e_thr = np.where(y > a, s / (y - a), np.inf)
        tpot = t["tpot_s"][:, None, None]  # the p99 bound, met by the p99 step
        e_tpot = np.where(np.isinf(tpot), 0.0, np.where(tpot > a9, s9 / (tpot - a9), np.inf))
        ttft = t["ttft_s"][:, None, None]
        e_ttft = np.where(np.isinf(ttft), 0.0, np.where(ttft > ap, sp / (ttft - ap), np.inf))
    e = np.maximum(np.maximum(e_thr, e_tpot), e_ttft)
    e = np.where(_candidates_ok(t), e, np.inf)
    needed: np.ndarray = e.reshape(len(m), -1).min(axis=1)
    return needed


def _predict_terms(t: Mapping[str, np.ndarray], eta: Any) -> np.ndarray:
    """Per row: best tokens/s per GPU at efficiency ``eta`` under its bounds (NaN if none)."""
    eta = np.asarray(eta, dtype=float)[:, None, None]
    m = _apply_eta(t, eta)
    ok = (
        _candidates_ok(t)
        & (m["tpot_p99_s"] <= t["tpot_s"][:, None, None])
        & (m["ttft_s"] <= t["ttft_s"][:, None, None])
    )
    val = np.where(ok, m["tok_s_gpu"], -np.inf).reshape(len(eta), -1).max(axis=1)
    return np.where(np.isfinite(val), val, np.nan)


def _solve_rows(t: Mapping[str, np.ndarray], measured: Any) -> tuple[np.ndarray, list[str]]:
    """Implied efficiency per row within ``ETA_BRACKET`` (NaN + note outside)."""
    eta = _needed_eta(t, measured)
    notes = np.where(
        eta > ETA_BRACKET[1],
        f"above the model at {ETA_BRACKET[1]:g}x roofline (or latency bound unreachable)",
        np.where(eta < ETA_BRACKET[0], "below the model at the lowest efficiency", ""),
    )
    eta = np.where((eta > ETA_BRACKET[1]) | (eta < ETA_BRACKET[0]), np.nan, eta)
    return eta, notes.tolist()


def _bounds_of(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    pairs = [
        benchmark_def(b).bounds(s) for b, s in zip(rows["benchmark"], rows["scenario"], strict=True)
    ]
    ttft = np.array([np.nan if p[0] is None else p[0] for p in pairs], dtype=float)
    tpot = np.array([np.nan if p[1] is None else p[1] for p in pairs], dtype=float)
    return ttft, tpot


def _terms_for_rows(
    rows: pd.DataFrame,
    specs: pd.DataFrame,
    models: pd.DataFrame,
    precision_col: str = "precision",
    *,
    inputs: Inputs | None = None,
) -> dict[str, np.ndarray]:
    """:func:`_row_terms` for calibration rows (accelerator, model, isl, osl, benchmark, ...)."""
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    model_by = {r["model"]: model_params(r) for _, r in models.iterrows()}
    ttft, tpot = _bounds_of(rows)
    return _row_terms(
        rows["accelerator"].tolist(),
        rows["model"].tolist(),
        rows[precision_col].tolist(),
        rows["isl"].to_numpy(float),
        rows["osl"].to_numpy(float),
        ttft,
        tpot,
        spec_by,
        model_by,
        inputs=inputs,
    )


def stated_power_cap(accelerator_raw: object) -> float | None:
    """A board-power cap stated in an MLPerf accelerator name, in watts, else None.

    >>> stated_power_cap("AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)")
    1000.0
    >>> stated_power_cap("NVIDIA H200-SXM-141GB") is None
    True
    """
    match = POWER_CAP_PATTERN.search(str(accelerator_raw or ""))
    return float(match.group(1)) if match else None


def implied_efficiency(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Per MLPerf run: the efficiency eta at which the model reproduces the measured result.

    Returns the deduplicated calibration rows with ``generation``, ``power_w`` (board
    power: a power cap stated in the MLPerf accelerator name, else the part's TDP), ``isl``,
    ``osl``, ``measured`` (tokens/s per accelerator) and ``eta`` (NaN where no eta in
    ``ETA_BRACKET`` reproduces it, e.g. a latency bound the model cannot meet, or
    speculative decoding beyond 3x the roofline; ``eta_note`` says which). Solved in closed
    form for all rows at once (see :func:`_needed_eta`). ``reread_stack`` names the
    (round, software, published precision) stack of a row that could be re-read one format
    lower (:data:`PRECISION_REREAD`; "" if none) and ``above_published`` says whether the
    row exceeds the roofline at its published precision (what triggers its stack's re-read).
    """
    if mlperf is None:
        mlperf = resolve(inputs).table("mlperf_inference")
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    df = _dedupe_mlperf(mlperf, models)
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    df = df[df["accelerator"].isin(list(spec_by))].reset_index(drop=True)
    df["measured"] = df["result_per_accelerator"].astype(float)
    df["generation"] = [_generation(spec_by[a]) for a in df["accelerator"]]
    df["power_w"] = [
        stated_power_cap(raw) or _num(spec_by[a], "tdp_w")
        for a, raw in zip(
            df["accelerator"], df.get("accelerator_raw", df["accelerator"]), strict=True
        )
    ]
    lengths = [
        _row_inputs(r, benchmark_def(b))
        for b, (_, r) in zip(df["benchmark"], df.iterrows(), strict=True)
    ]
    df["isl"] = [v[0] for v in lengths]
    df["osl"] = [v[1] for v in lengths]
    df["eta"] = np.nan
    df["eta_note"] = ""
    df["precision_published"] = df["precision"]
    supported = np.array(
        [_supports(spec_by[a], p) for a, p in zip(df["accelerator"], df["precision"], strict=True)],
        dtype=bool,
    )
    for i in np.flatnonzero(~supported):
        try:
            hardware_params(spec_by[df.at[i, "accelerator"]], df.at[i, "precision"], inputs=inputs)
        except ValueError as err:
            df.at[i, "eta_note"] = str(err)
    idx = np.flatnonzero(supported)
    if len(idx):
        sub = df.iloc[idx]
        eta, notes = _solve_rows(
            _terms_for_rows(sub, specs, models, inputs=inputs), sub["measured"]
        )
        df.loc[idx, "eta"] = eta
        df.loc[idx, "eta_note"] = notes
    # A run above the roofline at its published precision used a lower one (v4.1 NVIDIA
    # TensorRT runs publish fp16 weights but ran FP8). The same software stack in the same
    # round with the same published precision ran the same way: re-read all its rows.
    lower = PRECISION_REREAD
    software = df["software"] if "software" in df else pd.Series([None] * len(df))
    above = (df["eta"] > 1.0) | df["eta_note"].str.startswith("above")
    stack = list(zip(df["round"], software, df["precision"], strict=True))
    stacks = {
        k
        for k, ok, sup in zip(stack, above, supported, strict=True)
        if ok and sup and k[2] in lower
    }
    rereadable = np.array(
        [
            sup and k[2] in lower and _supports(spec_by[a], lower[k[2]])
            for k, sup, a in zip(stack, supported, df["accelerator"], strict=True)
        ],
        dtype=bool,
    )
    # What the held-out validation needs to take the decision per fold (from the fold's
    # own training rows): each re-readable row's stack and whether it is above the roofline
    # at its published precision.
    df["reread_stack"] = [
        " | ".join(str(x) for x in k) if ok else "" for k, ok in zip(stack, rereadable, strict=True)
    ]
    df["above_published"] = above.to_numpy(dtype=bool) & supported
    redo = rereadable & np.array([k in stacks for k in stack], dtype=bool)
    idx = np.flatnonzero(redo)
    if len(idx):
        sub = df.iloc[idx].copy()
        sub["precision"] = [lower[p] for p in sub["precision_published"]]
        eta2, notes2 = _solve_rows(
            _terms_for_rows(sub, specs, models, inputs=inputs), sub["measured"]
        )
        df.loc[idx, "eta"] = eta2
        df.loc[idx, "precision"] = sub["precision"].to_numpy()
        df.loc[idx, "eta_note"] = [
            n
            or (
                f"precision re-read as {lo}: this stack's runs in this round exceed the "
                f"{pub} roofline"
            )
            for n, lo, pub in zip(notes2, sub["precision"], sub["precision_published"], strict=True)
        ]
    # Speculative decoding (allowed by the scenario's rules) emits several tokens per step:
    # outside the model's scope, so such rows are neither fitted nor scored.
    spec = np.array(
        [
            s in benchmark_def(b).speculative_scenarios
            for b, s in zip(df["benchmark"], df["scenario"], strict=True)
        ],
        dtype=bool,
    )
    df.loc[spec, "eta"] = np.nan
    df.loc[spec, "eta_note"] = (
        "out of scope: this scenario allows speculative decoding, "
        "which the model does not represent"
    )
    df["precision_class"] = [
        precision_class(spec_by[a], p)
        for a, p in zip(df["accelerator"], df["precision"], strict=True)
    ]
    return df


#: The format a run published at a precision is re-read at when its software stack's runs
#: in that round exceed the published precision's roofline (see :func:`implied_efficiency`).
PRECISION_REREAD: dict[str, str] = {"bf16": "fp8", "fp8": "fp4"}

#: A board-power cap stated in an MLPerf accelerator name, e.g. "(Power Cap 1000 W)".
POWER_CAP_PATTERN = re.compile(r"power\s*cap\s*(\d+(?:\.\d+)?)\s*w", re.IGNORECASE)
