"""MLPerf Training: the batch each run used, tokens to converge, per-benchmark fits.

Analytical decisions: MLPerf reports time to train, so tokens come from the reference
convergence points at the run's global batch, read from its MLLOG (``mlperf_training_logs``;
the policy :func:`mlperf_batch_size` only where no log was readable); every v4.0-v5.0 LLM
submission is modelled at FP8; the per-accelerator x benchmark fit (at the smallest count of
at least one node) predicts the other counts of the same pair (``validate_against_mlperf``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analysis.inputs import Inputs, resolve
from analysis.training.model import (
    BENCHMARKS,
    FP4_OVER_FP8_SPEEDUP,
    FP8_OVER_BF16_SPEEDUP,
    MLPERF_PRECISION,
    NODE_GPUS,
    _benchmark,
    _check_precision,
    _load_mlperf,
    _load_specs,
    model_arch,
    spec_row,
)
from analysis.training.step import evaluate_layouts


def mlperf_batch_size(benchmark: str, n_gpus: int | np.ndarray) -> np.ndarray:
    """Global batch (sequences) assumed for an MLPerf submission on ``n_gpus`` GPUs.

    The policy for submissions whose run log states no batch (and for benchmarks run at a
    count nobody submitted); :func:`mlperf_rows` carries each logged run's own batch.

    >>> [int(mlperf_batch_size("llama2_70b_lora", n)[0]) for n in (8, 64, 512, 1024)]
    [8, 8, 64, 128]
    """
    bm = _benchmark(benchmark)
    raw = np.atleast_1d(np.asarray(n_gpus, dtype=float)) * bm.seqs_per_gpu
    batch: np.ndarray = np.clip(np.round(raw), bm.rcp_batch[0], bm.rcp_batch[-1])
    return batch


def mlperf_tokens(benchmark: str, batch_seqs: np.ndarray | float) -> np.ndarray:
    """Tokens to converge at a global batch: log-log interpolation of the RCP means.

    Outside the reference batches the nearest one's value holds: Llama 3.1 405B runs
    logged 448-1,120 sequences, below the 1,152 reference (MLCommons' 1,008-sequence
    reference, ``training_5.0.0/rcps_llama31_405b.json`` in ``mlperf-logging`` 4.1.68, needs
    0.6 % more samples; the runs stopped at 276,480-279,552 samples at 448 to 1,152,
    ``mlperf_training_logs``).
    """
    bm = _benchmark(benchmark)
    x = np.log(np.atleast_1d(np.asarray(batch_seqs, dtype=float)))
    tokens: np.ndarray = np.exp(np.interp(x, np.log(bm.rcp_batch), np.log(bm.rcp_tokens)))
    return tokens


def _mlperf_layouts(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n_gpus: np.ndarray,
    efficiency: float | np.ndarray,
    precision: str,
    batch_seqs: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    # The global batch (``batch_seqs``, else the policy :func:`mlperf_batch_size`) and the
    # best layouts at it.
    bm = _benchmark(benchmark)
    b = mlperf_batch_size(benchmark, n_gpus) if batch_seqs is None else batch_seqs
    res = evaluate_layouts(
        spec,
        arch,
        n_gpus,
        precision=precision,
        seq_len=bm.seq_len,
        batch_seqs=b,
        efficiency=efficiency,
        lora=bm.lora,
    )
    return b, res


def _mlperf_minutes(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n_gpus: np.ndarray,
    efficiency: float | np.ndarray,
    precision: str,
    batch_seqs: np.ndarray | None = None,
) -> np.ndarray:
    b, res = _mlperf_layouts(spec, arch, benchmark, n_gpus, efficiency, precision, batch_seqs)
    thr = res["tokens_per_s_per_gpu"] * np.asarray(n_gpus, dtype=float)
    minutes: np.ndarray = mlperf_tokens(benchmark, b) / thr / 60.0
    return minutes


#: Root search of the calibration: candidate efficiencies per vectorized call and rounds.
#: Each round narrows the bracket 64-fold; 9 rounds reach 64**-9 = 2**-54 of the initial
#: log-space bracket (as fine as 50+ bisection steps) in 10 model calls instead of 51.
_FIT_POINTS, _FIT_ROUNDS = 63, 9


def _fit_one(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n: int,
    minutes: float,
    precision: str,
    batch_seqs: float | None = None,
) -> float:
    """Efficiency at which the model reproduces ``minutes`` (bracketing search in log space).

    Predicted time falls strictly monotonically with efficiency, so the root is unique; each
    round evaluates :data:`_FIT_POINTS` efficiencies across the bracket in one vectorized
    call and keeps the sub-interval where the prediction crosses ``minutes``. Roots outside
    [0.01, 3] converge to the nearer bound.
    """
    lo, hi = math.log(0.01), math.log(3.0)
    counts = np.full(_FIT_POINTS, int(n))
    batch = None if batch_seqs is None else np.full(_FIT_POINTS, float(batch_seqs))

    def pred(log_e: np.ndarray) -> np.ndarray:
        k = len(log_e)
        v = _mlperf_minutes(
            spec,
            arch,
            benchmark,
            counts[:k],
            np.exp(log_e),
            precision,
            None if batch is None else batch[:k],
        )
        return np.where(np.isfinite(v), v, math.inf)

    if not math.isfinite(pred(np.array([hi]))[0]):
        return math.nan  # infeasible at this count whatever the efficiency
    steps = np.arange(1, _FIT_POINTS + 1) / (_FIT_POINTS + 1)
    for _ in range(_FIT_ROUNDS):
        grid = lo + (hi - lo) * steps
        above = pred(grid) > minutes  # True below the root (too slow), then False
        k = int(np.argmin(above)) if not above.all() else _FIT_POINTS
        lo, hi = (grid[k - 1] if k > 0 else lo), (grid[k] if k < _FIT_POINTS else hi)
    return math.exp(0.5 * (lo + hi))


def one_rate_basis(rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`mlperf_rows` at one throughput basis per benchmark, with ``rate_basis``.

    A benchmark whose run logs print a steady training rate (``steady_samples_per_s``:
    Llama 2 70B LoRA, Llama 3.1 405B) keeps only the rows that have one (``"steady"``):
    its time to train also holds evaluations and warm-up, 10-18 % of a run on one node
    and up to 1.7x the training time at 512-1,024 GPUs, so the two bases would not pool.
    A benchmark with no such rate (GPT-3: its logs print one whole-run figure) keeps every
    row at its time to train (``"time-to-train"``).

    >>> rows = pd.DataFrame({"benchmark": ["a", "a", "b"],
    ...                      "steady_samples_per_s": [2.0, np.nan, np.nan]})
    >>> one_rate_basis(rows)["rate_basis"].tolist()
    ['steady', 'time-to-train']
    """
    steady = rows["steady_samples_per_s"].notna()
    has = steady.groupby(rows["benchmark"]).transform("any").astype(bool)
    out = rows.loc[steady | ~has].copy()
    out["rate_basis"] = np.where(steady[out.index], "steady", "time-to-train")
    return out.reset_index(drop=True)


def _mlperf_rate(r: Any, tokens: float, seq_len: int) -> float:
    # tokens/s per GPU of one MLPerf row: the log's steady training rate (samples/s over the
    # blocks after the first, evaluation excluded, as the v5.1 forward set and the published
    # tables are), else the time to train over the RCP tokens at the row's batch (which also
    # holds evaluation and warm-up: 10-18 % at one node, up to 1.7x at 512-1,024 GPUs);
    # ``r`` is a row of :func:`one_rate_basis`, which decided the basis
    n = int(r.n_gpus)
    if r.rate_basis == "steady":
        return float(r.steady_samples_per_s) * seq_len / n
    return tokens / (float(r.measured_min) * 60.0) / n


def mlperf_rows(
    mlperf: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """MLPerf Training rows the model uses: canonical accelerator, known benchmark, a time.

    From ``mlperf`` when given, else the ``mlperf_training`` table of ``inputs``. Each row
    carries the global batch its run used, ``batch_seqs``: the ``mlperf_training_logs``
    row of the same round and ``results_path`` (``batch_basis`` ``"logged"``), else the
    policy :func:`mlperf_batch_size` (``"policy"``); and the log's steady training rate
    ``steady_samples_per_s`` (global samples/s, NaN where the log has none). Both come from
    ``inputs``' logs table whatever ``mlperf`` holds, matched on round and results path (a
    frame without ``results_path`` gets the policy and no rate).
    """
    inputs = resolve(inputs)
    df = _load_mlperf(inputs) if mlperf is None else mlperf
    keep = (
        df["accelerator"].notna()
        & (df["accelerator"].astype(str) != "")
        & df["benchmark"].isin(list(BENCHMARKS))
        & df["time_to_train_min"].notna()
    )
    if "division" in df.columns:
        keep &= df["division"] == "closed"
    out = df.loc[
        keep,
        [
            "round",
            "submitter",
            "system",
            "accelerator",
            "vendor",
            "benchmark",
            "total_accelerators",
            "time_to_train_min",
        ],
    ].copy()
    out = out.rename(columns={"total_accelerators": "n_gpus", "time_to_train_min": "measured_min"})
    out["n_gpus"] = out["n_gpus"].astype(int)
    out["measured_min"] = out["measured_min"].astype(float)
    out = out.reset_index(drop=True)
    paths = df.loc[keep, "results_path"] if "results_path" in df.columns else None
    if paths is not None:
        out["results_path"] = paths.to_numpy()
    logs = _logged(inputs, out["round"], paths)
    policy = np.empty(len(out))
    for bench, idx in out.groupby("benchmark").indices.items():
        policy[idx] = mlperf_batch_size(str(bench), out["n_gpus"].to_numpy()[idx])
    have = logs["global_batch_seqs"].notna().to_numpy()
    out["batch_seqs"] = np.where(have, logs["global_batch_seqs"].to_numpy(dtype=float), policy)
    out["batch_basis"] = np.where(have, "logged", "policy")
    out["steady_samples_per_s"] = logs["steady_samples_per_s"].to_numpy(dtype=float)
    return out


def _logged(inputs: Inputs, rounds: pd.Series, paths: pd.Series | None) -> pd.DataFrame:
    # The ``mlperf_training_logs`` facts of each (round, results path), in that order (NaN
    # where no log was read, or where the rows have no results path to match on).
    cols = ["global_batch_seqs", "steady_samples_per_s"]
    if paths is None:
        return pd.DataFrame(np.nan, index=range(len(rounds)), columns=cols)
    logs = inputs.table("mlperf_training_logs").set_index(["round", "results_path"])[cols]
    key = pd.MultiIndex.from_arrays([rounds.to_numpy(), paths.to_numpy()])
    return logs.reindex(key).reset_index(drop=True).astype(float)


def fit_efficiencies(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Fitted compute efficiency per accelerator and benchmark at its calibration count.

    The calibration count is the smallest submitted count of at least one node
    (:data:`NODE_GPUS`), else the smallest submitted count. A frame that is ``None`` comes
    from ``inputs`` (default: the default inputs); with every frame ``None`` the fit runs
    once per inputs (for the default ones: until :func:`analysis.data.clear_cache`) and
    callers get a copy.

    Columns: accelerator, vendor, benchmark, n_gpus, batch_seqs (median logged global batch
    there), n_submissions, measured_min (median there), efficiency (fraction of FP8 peak
    while computing), mfu (achieved end-to-end model FLOPs utilization at that point, FP8
    peak).
    """
    inp = resolve(inputs)
    if mlperf is None and specs is None and models is None:
        return _fits_cached(inp).copy()
    return _fit_efficiencies(mlperf, specs, models, inp)


def _fit_efficiencies(
    mlperf: pd.DataFrame | None,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    inputs: Inputs,
) -> pd.DataFrame:
    rows = mlperf_rows(mlperf, inputs=inputs)
    specs = _load_specs(inputs) if specs is None else specs
    out = []
    for (acc, bench), grp in rows.groupby(["accelerator", "benchmark"], sort=True):
        counts = grp["n_gpus"]
        n0 = int(counts[counts >= NODE_GPUS].min() if (counts >= NODE_GPUS).any() else counts.min())
        at = grp.loc[grp["n_gpus"] == n0, "measured_min"]
        b0 = float(grp.loc[grp["n_gpus"] == n0, "batch_seqs"].median())
        spec = spec_row(str(acc), specs, inputs=inputs)
        arch = model_arch(_benchmark(str(bench)).model, models, inputs=inputs)
        t = float(at.median())
        e = _fit_one(spec, arch, str(bench), n0, t, MLPERF_PRECISION, b0)
        mfu = math.nan
        if math.isfinite(e):
            _, res = _mlperf_layouts(
                spec, arch, str(bench), np.array([n0]), e, MLPERF_PRECISION, np.array([b0])
            )
            mfu = float(res["mfu"][0])
        out.append(
            {
                "accelerator": acc,
                "vendor": grp["vendor"].iloc[0],
                "benchmark": bench,
                "n_gpus": n0,
                "batch_seqs": b0,
                "n_submissions": len(at),
                "measured_min": t,
                "efficiency": e,
                "mfu": mfu,
            }
        )
    return pd.DataFrame(out)


def _precision_factor(precision: str) -> float:
    """Efficiency at ``precision`` relative to the FP8-relative fitted efficiency."""
    _check_precision(precision)
    if precision == "bf16":
        return 2.0 / FP8_OVER_BF16_SPEEDUP
    if precision == "fp4":
        return FP4_OVER_FP8_SPEEDUP / 2.0
    return 1.0


def _fits_cached(inputs: Inputs) -> pd.DataFrame:
    """The calibration of ``inputs`` (shared frame: do not modify), fitted once per inputs."""
    return inputs.derived("training.fits", lambda: _fit_efficiencies(None, None, None, inputs))


def validate_against_mlperf(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Held-out predictions: every submission at a GPU count other than the calibration one.

    A frame that is ``None`` comes from ``inputs`` (default: the default inputs).

    Columns: round, accelerator, vendor, benchmark, n_gpus, batch_seqs (the run's global
    batch, :func:`mlperf_rows`), measured_min, predicted_min, err_pct (signed, predicted vs
    measured), holdout (True for held-out rows; the calibration rows are included with
    holdout=False for reference), submitter, system, measured_scaling / predicted_scaling
    (per-GPU throughput relative to the calibration point, each time weighted by the
    tokens to converge at its own batch).
    """
    inputs = resolve(inputs)
    rows = mlperf_rows(mlperf, inputs=inputs)
    fits = fit_efficiencies(mlperf=mlperf, specs=specs, models=models, inputs=inputs)
    # One vectorized model call per (accelerator, benchmark): every submitted count and the
    # calibration count at the fitted efficiency (what predict_mlperf computes one by one).
    fitted = {
        (f.accelerator, f.benchmark): f
        for f in fits.itertuples(index=False)
        if np.isfinite(f.efficiency)
    }
    # each submitted (count, batch) and the calibration point's
    predicted: dict[tuple[str, str], dict[tuple[int, float], float]] = {}
    for (acc, bench), grp in rows.groupby(["accelerator", "benchmark"], sort=False):
        fr = fitted.get((acc, bench))
        if fr is None:
            continue
        points = sorted(
            set(zip(grp["n_gpus"].astype(int), grp["batch_seqs"].astype(float), strict=True))
            | {(int(fr.n_gpus), float(fr.batch_seqs))}
        )
        eff = float(fr.efficiency) * _precision_factor(MLPERF_PRECISION)
        minutes = _mlperf_minutes(
            spec_row(str(acc), specs, inputs=inputs),
            model_arch(_benchmark(str(bench)).model, models, inputs=inputs),
            str(bench),
            np.array([p[0] for p in points]),
            eff,
            MLPERF_PRECISION,
            np.array([p[1] for p in points]),
        )
        predicted[(acc, bench)] = {
            p: float(m) if np.isfinite(m) else math.nan
            for p, m in zip(points, minutes, strict=True)
        }
    out = []
    for r in rows.itertuples(index=False):
        fr = fitted.get((r.accelerator, r.benchmark))
        if fr is None:
            continue
        by_point = predicted[(r.accelerator, r.benchmark)]
        pred = by_point[(int(r.n_gpus), float(r.batch_seqs))]
        t0_pred = by_point[(int(fr.n_gpus), float(fr.batch_seqs))]
        # per-GPU throughput ratio: tokens at each batch over time and GPUs
        work = float(mlperf_tokens(str(r.benchmark), r.batch_seqs)[0]) / float(
            mlperf_tokens(str(r.benchmark), fr.batch_seqs)[0]
        )
        n_ratio = r.n_gpus / fr.n_gpus / work
        out.append(
            {
                "round": r.round,
                "accelerator": r.accelerator,
                "vendor": r.vendor,
                "benchmark": r.benchmark,
                "n_gpus": r.n_gpus,
                "batch_seqs": r.batch_seqs,
                "measured_min": r.measured_min,
                "predicted_min": pred,
                "err_pct": 100.0 * (pred - r.measured_min) / r.measured_min,
                "holdout": bool(r.n_gpus != fr.n_gpus),
                "submitter": r.submitter,
                "system": r.system,
                "calibration_n_gpus": int(fr.n_gpus),
                "measured_scaling": fr.measured_min / (r.measured_min * n_ratio),
                "predicted_scaling": t0_pred / (pred * n_ratio),
            }
        )
    df = pd.DataFrame(out)
    return df.sort_values(["benchmark", "accelerator", "n_gpus", "round"]).reset_index(drop=True)


def validation_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Median absolute error (%) of the held-out predictions, per vendor and overall."""
    held = df.loc[df["holdout"] & df["err_pct"].notna()]
    groups = [*held.groupby("vendor", sort=True), ("overall", held)]
    # the median of no rows is NaN, so an empty hold-out set gives an overall row of NaN
    return pd.DataFrame(
        [
            {
                "group": name,
                "n": len(g),
                "median_abs_err_pct": float(g["err_pct"].abs().median()),
                "median_err_pct": float(g["err_pct"].median()),
            }
            for name, g in groups
        ]
    )


def overall_error(summary: pd.DataFrame) -> float:
    """The overall median absolute error (%) of a :func:`validation_summary` table.

    The headline figure quoted next to the training winner; NaN when the table has no
    ``overall`` row.

    >>> s = pd.DataFrame({"group": ["AMD", "overall"], "median_abs_err_pct": [20.0, 12.5]})
    >>> overall_error(s)
    12.5
    """
    overall = summary.loc[summary["group"] == "overall", "median_abs_err_pct"]
    return float(overall.iloc[0]) if len(overall) else math.nan


def validation_detail(df: pd.DataFrame) -> pd.DataFrame:
    """Held-out errors per benchmark and accelerator: rows, median signed and absolute error.

    Signed error is positive when the model is too slow (predicted time above measured).
    """
    held = df.loc[df["holdout"] & df["err_pct"].notna()]
    return held.groupby(["benchmark", "accelerator", "vendor"], as_index=False).agg(
        rows=("err_pct", "size"),
        median_err_pct=("err_pct", "median"),
        median_abs_err_pct=("err_pct", lambda s: s.abs().median()),
    )
