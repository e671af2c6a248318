"""Out-of-sample validation of the training model and the AMD/NVIDIA ratio error.

Analytical decisions: each fold refits only the pooling without the held-out rows (per-row
fits are local to their rows); schemes: MLPerf leave one vendor x benchmark out, leave one
GPU count out, published rows leave one source out; errors are on tokens/s per GPU.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inputs import Inputs, resolve
from analysis.training.calibration import _fitted_cached, _predict_tps, estimate_efficiency
from analysis.training.model import spec_row

VALIDATION_SCHEMES: tuple[str, ...] = (
    "mlperf: leave one vendor x benchmark out",
    "mlperf: leave one GPU count out",
    "published: leave one source out",
)


def validate_training_model(
    fitted: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Out-of-sample predictions of every observation under each validation scheme.

    Each fold refits the pooled efficiency without the held-out rows (the per-row fits are
    local to their rows, so only the pooling changes) and predicts those rows:
    MLPerf rows leaving out a whole vendor x benchmark, or one accelerator x benchmark x GPU
    count; published rows leaving out one source (publisher) at a time, fitted on MLPerf and
    the other sources. ``err_pct`` is on throughput: 100 x (predicted / measured - 1),
    negative when the model is too slow. ``fold_rows`` counts the rows the fold fitted on
    (never including the predicted one).
    """
    inputs = resolve(inputs)
    fitted = _fitted_cached(inputs) if fitted is None else fitted
    folds: list[tuple[str, str, np.ndarray]] = []
    ml = (fitted["origin"] == "mlperf").to_numpy()
    for (v, bm), idx in fitted.loc[ml].groupby(["vendor", "benchmark"]).indices.items():
        held = np.flatnonzero(ml)[idx]
        folds.append((VALIDATION_SCHEMES[0], f"{v} x {bm}", held))
    for (a, bm, n), idx in (
        fitted.loc[ml].groupby(["accelerator", "benchmark", "n_gpus"]).indices.items()
    ):
        folds.append((VALIDATION_SCHEMES[1], f"{a} x {bm} x {n}", np.flatnonzero(ml)[idx]))
    pub = (fitted["origin"] == "published").to_numpy()
    for s, idx in fitted.loc[pub].groupby("source").indices.items():
        folds.append((VALIDATION_SCHEMES[2], str(s), np.flatnonzero(pub)[idx]))
    rows, effs, meta = [], [], []
    for scheme, fold, held in folds:
        train = fitted.drop(index=fitted.index[held])
        cache: dict[tuple[str, str, str, str], tuple[float, str]] = {}
        for i in held:
            r = fitted.iloc[i]
            key = (r["accelerator"], r["kind"], r["precision"], r["model"])
            if key not in cache:
                cache[key] = estimate_efficiency(
                    train,
                    spec_row(r["accelerator"], specs, inputs=inputs),
                    kind=r["kind"],
                    precision=r["precision"],
                    model=r["model"],
                    moe=bool(r["moe"]),
                    specs=specs,
                    inputs=inputs,
                )
            rows.append(i)
            effs.append(cache[key][0])
            meta.append((scheme, fold, len(train), cache[key][1]))
    out = fitted.iloc[rows].reset_index(drop=True)
    pred = _predict_tps(out, np.asarray(effs), specs, models, inputs=inputs)
    out.insert(0, "scheme", [m[0] for m in meta])
    out.insert(1, "fold", [m[1] for m in meta])
    out["fold_rows"] = [m[2] for m in meta]
    out["predicted_efficiency"] = effs
    out["efficiency_from"] = [m[3] for m in meta]
    out["predicted_tps"] = pred
    out["err_pct"] = 100.0 * (pred / out["measured_tps"] - 1.0)
    return out


def validation_scheme_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """Median absolute and signed error (%) per scheme and vendor, and over each scheme."""
    ok = pred.loc[pred["err_pct"].notna()]
    out = []
    for scheme, g in ok.groupby("scheme", sort=False):
        fam = [("dense", g.loc[~g["moe"]]), ("MoE", g.loc[g["moe"]])] if g["moe"].any() else []
        for name, gg in [*g.groupby("vendor", sort=True), *fam, ("overall", g)]:
            out.append(
                {
                    "scheme": scheme,
                    "group": name,
                    "n": len(gg),
                    "median_abs_err_pct": float(gg["err_pct"].abs().median()),
                    "median_err_pct": float(gg["err_pct"].median()),
                }
            )
    return pd.DataFrame(out)


def gpu_count_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """The training model's MLPerf error: leave one GPU count out, per vendor and overall.

    The rows of :func:`validation_scheme_summary` for ``mlperf: leave one GPU count out``
    (every accelerator x benchmark x GPU count predicted from a pooled fit without it),
    in :func:`~analysis.training.mlperf.validation_summary`'s columns (group, n,
    median_abs_err_pct, median_err_pct): the one figure quoted as the model's error
    against MLPerf Training (``mlperf_median_err_pct``).
    """
    s = validation_scheme_summary(pred.loc[pred["scheme"] == VALIDATION_SCHEMES[1]])
    keep = s["group"].isin([*pred["vendor"].unique(), "overall"])
    return s.loc[keep].drop(columns="scheme").reset_index(drop=True)


def ratio_errors(pred: pd.DataFrame) -> pd.DataFrame:
    """Error of the AMD/NVIDIA throughput ratio, per scheme, matched workload and GPU count.

    MLPerf rows are matched on benchmark and GPU count; published rows (the vendors' own
    framework tables) on model, precision and GPU count, where both vendors published one.
    For every match where both vendors have held-out predictions, each AMD part is paired
    with each NVIDIA part: measured ratio of the median throughputs against the predicted
    ratio; ``ratio_err_pct`` = 100 x (predicted / measured - 1). ``benchmark`` names the
    match: the MLPerf benchmark, or ``model precision`` for a published pair.
    """
    ok = pred.loc[pred["origin"].isin(["mlperf", "published"]) & pred["err_pct"].notna()].copy()
    published = (ok["origin"] == "published").to_numpy()
    ok["benchmark"] = np.where(
        published,
        ok["model"].astype(str) + " " + ok["precision"].astype(str),
        ok["benchmark"].astype(str),
    )
    keys = ["scheme", "origin", "benchmark", "n_gpus"]
    med = ok.groupby([*keys, "vendor", "accelerator"], as_index=False)[
        ["measured_tps", "predicted_tps"]
    ].median()
    amd, nv = med.loc[med["vendor"] == "AMD"], med.loc[med["vendor"] == "NVIDIA"]
    pair = amd.merge(nv, on=keys, suffixes=("_amd", "_nv"))
    pair["measured_ratio"] = pair["measured_tps_amd"] / pair["measured_tps_nv"]
    pair["predicted_ratio"] = pair["predicted_tps_amd"] / pair["predicted_tps_nv"]
    pair["ratio_err_pct"] = 100.0 * (pair["predicted_ratio"] / pair["measured_ratio"] - 1.0)
    return pair[
        [
            "scheme",
            "origin",
            "benchmark",
            "n_gpus",
            "accelerator_amd",
            "accelerator_nv",
            "measured_ratio",
            "predicted_ratio",
            "ratio_err_pct",
        ]
    ].reset_index(drop=True)


def ratio_error_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Median absolute and signed AMD/NVIDIA ratio error (%) per scheme."""
    return pairs.groupby("scheme", as_index=False, sort=False).agg(
        pairs=("ratio_err_pct", "size"),
        median_abs_ratio_err_pct=("ratio_err_pct", lambda s: float(s.abs().median())),
        median_ratio_err_pct=("ratio_err_pct", "median"),
    )
