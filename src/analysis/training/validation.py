"""Out-of-sample validation of the training model and the AMD/NVIDIA ratio error.

Analytical decisions: each fold refits only the pooling without the held-out rows (per-row
fits are local to their rows); schemes: MLPerf leave one vendor x benchmark out, leave one
GPU count out, leave one round out, published rows leave one source out, and the MLPerf
Training v5.1 rows (a newer round no fit reads) predicted from the whole fit; errors are on
tokens/s per GPU.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inputs import Inputs, resolve
from analysis.training.calibration import (
    _fitted_cached,
    _predict_tps,
    estimate_efficiency,
    training_observations,
)
from analysis.training.model import BENCHMARKS, spec_row

#: The MLPerf Training round kept aside (``mlperf_training_holdout``): never fitted.
FORWARD_SCHEME = "mlperf v5.1: newer round, never fitted"
#: MLPerf Training v4.0, v4.1 and v5.0 each held out in turn.
ROUND_SCHEME = "mlperf: leave one round out"

VALIDATION_SCHEMES: tuple[str, ...] = (
    "mlperf: leave one vendor x benchmark out",
    "mlperf: leave one GPU count out",
    "published: leave one source out",
    ROUND_SCHEME,
    FORWARD_SCHEME,
)


def holdout_observations(
    specs: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """The MLPerf Training v5.1 rows as observations (origin ``holdout``), never fitted.

    :func:`~analysis.training.calibration.training_observations` of the
    ``mlperf_training_holdout`` table alone (its columns are the published table's), with
    ``round`` ``v5.1`` and ``benchmark`` the MLPerf pre-training benchmark of the row's
    model (:data:`~analysis.training.model.BENCHMARKS`: ``llama31_8b``, ``llama31_405b``).
    Nothing that fits reads this table.
    """
    inputs = resolve(inputs)
    hold = inputs.table("mlperf_training_holdout")
    if hold.empty:
        return _fitted_cached(inputs).iloc[:0].drop(columns="efficiency").assign(origin="holdout")
    obs = training_observations(inputs.table("mlperf_training")[:0], hold, specs, inputs=inputs)
    pretrain = {b.model: name for name, b in BENCHMARKS.items() if not b.lora}
    bench = obs["model"].map(pretrain).to_numpy(dtype=object)
    return obs.assign(origin="holdout", round="v5.1", benchmark=bench)


def _folds(fitted: pd.DataFrame) -> list[tuple[str, str, np.ndarray]]:
    # (scheme, fold, positions of the held-out rows) of every scheme that refits
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
    for r, idx in fitted.loc[ml].groupby("round").indices.items():
        folds.append((ROUND_SCHEME, str(r), np.flatnonzero(ml)[idx]))
    return folds


def _held_efficiencies(
    train: pd.DataFrame,
    held: pd.DataFrame,
    specs: pd.DataFrame | None,
    *,
    inputs: Inputs,
) -> list[tuple[float, str]]:
    # the pooled efficiency (and its source) of each held row, from ``train`` alone
    cache: dict[tuple[str, str, str, str], tuple[float, str]] = {}
    out = []
    for r in held.to_dict("records"):
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
        out.append(cache[key])
    return out


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
    MLPerf rows leaving out a whole vendor x benchmark, one accelerator x benchmark x GPU
    count, or one round (v4.0, v4.1, v5.0: fitted on the other rounds and the published
    rows); published rows leaving out one source (publisher) at a time, fitted on MLPerf and
    the other sources. :data:`FORWARD_SCHEME` predicts the MLPerf Training v5.1 rows
    (:func:`holdout_observations`, a round no fit reads) from the whole fit, each at its
    own precision, GPU count and global batch (the layout searched, as for fitted rows).
    ``err_pct`` is on throughput: 100 x (predicted / measured - 1), negative when the model
    is too slow. ``fold_rows`` counts the rows the
    fold fitted on (never including the predicted one).
    """
    inputs = resolve(inputs)
    fitted = _fitted_cached(inputs) if fitted is None else fitted
    parts, effs, meta = [], [], []
    for scheme, fold, held in _folds(fitted):
        train = fitted.drop(index=fitted.index[held])
        got = _held_efficiencies(train, fitted.iloc[held], specs, inputs=inputs)
        parts.append(fitted.iloc[held])
        effs += [g[0] for g in got]
        meta += [(scheme, fold, len(train), g[1]) for g in got]
    fwd = holdout_observations(specs, inputs=inputs)
    got = _held_efficiencies(fitted, fwd, specs, inputs=inputs)
    parts.append(fwd)
    effs += [g[0] for g in got]
    srcs = fwd["source"].astype(str)
    meta += [(FORWARD_SCHEME, s, len(fitted), g[1]) for s, g in zip(srcs, got, strict=True)]
    out = pd.concat(parts, ignore_index=True)
    pred = _predict_tps(out, np.asarray(effs), specs, models, inputs=inputs)
    out.insert(0, "scheme", [m[0] for m in meta])
    out.insert(1, "fold", [m[1] for m in meta])
    out["fold_rows"] = [m[2] for m in meta]
    out["predicted_efficiency"] = effs
    out["efficiency_from"] = [m[3] for m in meta]
    out["predicted_tps"] = pred
    out["err_pct"] = 100.0 * (pred / out["measured_tps"] - 1.0)
    return out


def forward_predictions(pred: pd.DataFrame) -> pd.DataFrame:
    """Per-row predictions of the MLPerf Training v5.1 rows (:data:`FORWARD_SCHEME`).

    One row per submission: source, benchmark, accelerator, vendor, precision, GPU count,
    measured and predicted tokens/s per GPU and ``err_pct``, from the fit on every other
    row (MLPerf v4.0 to v5.0 and the published tables).
    """
    cols = [
        "source",
        "benchmark",
        "accelerator",
        "vendor",
        "precision",
        "n_gpus",
        "measured_tps",
        "predicted_tps",
        "err_pct",
    ]
    fwd = pred.loc[pred["scheme"] == FORWARD_SCHEME, cols]
    return fwd.sort_values(["vendor", "benchmark", "accelerator", "n_gpus"]).reset_index(drop=True)


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
    framework tables) on model, precision and GPU count, where both vendors published one;
    the MLPerf v5.1 rows (origin ``holdout``) on benchmark and GPU count, each vendor at its
    own submitted precision (AMD FP8 against NVIDIA NVFP4 at 8 GPUs), as the inference ratio
    pairs are matched.
    For every match where both vendors have held-out predictions, each AMD part is paired
    with each NVIDIA part: measured ratio of the median throughputs against the predicted
    ratio; ``ratio_err_pct`` = 100 x (predicted / measured - 1). ``benchmark`` names the
    match: the MLPerf benchmark, or ``model precision`` for a published pair.
    """
    origins = ["mlperf", "published", "holdout"]
    ok = pred.loc[pred["origin"].isin(origins) & pred["err_pct"].notna()].copy()
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


def forward_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """The MLPerf v5.1 forward scheme in one small table: per vendor, overall, the ratio.

    Rows ``AMD``, ``NVIDIA``, ``overall`` (tokens/s per GPU, :func:`validation_scheme_summary`)
    and ``AMD/NVIDIA ratio`` (:func:`ratio_errors` on the matched v5.1 pairs: same
    benchmark and GPU count, each vendor at its own precision); columns group, n (rows or
    pairs), median_abs_err_pct, median_err_pct.
    """
    fwd = pred.loc[pred["scheme"] == FORWARD_SCHEME]
    cols = ["group", "n", "median_abs_err_pct", "median_err_pct"]
    ratio = pd.DataFrame([{"group": "AMD/NVIDIA ratio", "n": 0}], columns=cols)
    r = ratio_error_summary(ratio_errors(fwd))
    if len(r):
        ratio.loc[0, "n"] = int(r["pairs"].iloc[0])
        ratio.loc[0, cols[2:]] = r[["median_abs_ratio_err_pct", "median_ratio_err_pct"]].to_numpy()[
            0
        ]
    if not len(fwd):
        return ratio
    s = validation_scheme_summary(fwd)
    s = s.loc[s["group"].isin([*sorted(fwd["vendor"].unique()), "overall"]), cols]
    return pd.concat([s, ratio], ignore_index=True)
