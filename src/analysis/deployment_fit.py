"""Calibration and validation of the deployment options on measured InferenceX points.

Analytical decisions taken here (the physics is in :mod:`analysis.deployments`):

* **Points**: every bundled InferenceX row without speculative decoding (MTP rows are
  excluded: one step emits one token per sequence in the model), aggregated and
  disaggregated, each at its own layout (prefill and decode workers from the tp / ep /
  dp-attention columns) and concurrency.
* **Factors**: per row, the decode efficiency that reproduces its median TPOT, and the
  prefill efficiency that reproduces its median TTFT less transfer and one decode step
  (closed form, like the aggregated model's calibration). A stack's factor is the median
  of its rows (accelerator x framework x precision x kind x model), falling back to the
  accelerator (any framework), then the vendor. One free factor per vendor x kind: the
  log-efficiency step of an expert-parallel (DP attention) decode worker over a TP one,
  fitted within stacks (the roofline misses the all-to-all's overlap with compute). The
  prefill factor is the upper quartile of the rows' (TTFT mixes queueing into it), and a
  prefill pool's capacity the upper decile of the rows' lower bounds (the pool served at
  least the measured request rate). Batch and worker-size slopes were tried and dropped
  (``SLOPE_COVARIATES``): they moved the held-out error by under one point and
  extrapolated beyond the measured concurrencies.
* **Prediction**: InferenceX's ``tput_per_gpu`` (input + output tokens/s per GPU of all
  the configuration's GPUs) by Little's law at the point's concurrency: requests/s =
  concurrency / (OSL x TPOT + TTFT), capped by the prefill pool's capacity.
* **Validation** holds out whole configurations (framework x accelerator x precision x
  kind x prefill layout x decode layout x pool sizes): every row of one is predicted from
  factors refitted without any of its rows (the vendor step included).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import inference
from analysis.deployments import (
    MEASURED,
    MODELLED,
    Factors,
    Layout,
    decode_step,
    kv_transfer_s,
    prefill_terms,
)

#: Quantiles of the per-row prefill efficiencies kept as the factor (see fit_calibration).
PREFILL_QUANTILE = 0.75
#: Covariates of the per-vendor efficiency regression (fit_slopes): x1 log batch per GPU,
#: x2 log decode-worker size, x3 expert-parallel worker.
SLOPE_COVARIATES = ("x3",)
#: Batch multiples searched when a measured point is predicted at its own TPOT.
MATCH_SCALES = np.geomspace(1.0 / 256.0, 256.0, 161)
CAPACITY_QUANTILE = 0.9


# --- measured points: layouts, implied efficiencies, calibration ----------------------------

#: Columns that name one measured configuration (the unit held out in validation).
CONFIG_KEYS = (
    "framework",
    "accelerator",
    "precision",
    "kind",
    "prefill_tp",
    "prefill_ep",
    "prefill_dp_attention",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
    "num_prefill_gpu",
    "num_decode_gpu",
)


def _layout(tp: float, ep: float, dp: float, pool: float) -> Layout:
    """A worker from InferenceX's tp / ep / dp-attention columns (size = max(tp, ep)).

    A pool recorded as TP1 EP1 with DP attention is one wide-EP worker over the whole
    pool (Dynamo-SGLang's GB200 runs: DeepSeek-R1 does not fit on one GPU).
    """
    if max(tp, ep) <= 1 and dp:
        return Layout(gpus=int(pool), ep=True)
    gpus = int(max(tp, ep, 1))
    return Layout(gpus=gpus, ep=bool(dp) or ep > tp)


def measured_points(inferencex: pd.DataFrame) -> pd.DataFrame:
    """The InferenceX rows this module fits: no speculative decoding, with a ``kind``.

    ``kind`` is "disaggregated" for separate prefill/decode pools, "aggregated" otherwise.
    """
    df = inferencex[inferencex["spec_method"].astype(str) == "none"].copy()
    df["kind"] = np.where(df["disagg"].astype(int) == 1, "disaggregated", "aggregated")
    for col in ("median_tpot_ms", "median_ttft_ms", "tput_per_gpu", "conc"):
        df = df[pd.to_numeric(df[col], errors="coerce") > 0]
    return df.reset_index(drop=True)


def _row_terms(
    row: pd.Series, hw: Mapping[str, float], mp: Mapping[str, float]
) -> dict[str, float]:
    """Model terms of one measured point at its own layout and concurrency."""
    dec = _layout(
        row["decode_tp"], row["decode_ep"], row["decode_dp_attention"], row["num_decode_gpu"]
    )
    pre = _layout(
        row["prefill_tp"], row["prefill_ep"], row["prefill_dp_attention"], row["num_prefill_gpu"]
    )
    disagg = row["kind"] == "disaggregated"
    n_dec = float(row["num_decode_gpu"])
    total = n_dec + float(row["num_prefill_gpu"]) if disagg else max(n_dec, dec.gpus)
    workers = max(n_dec / dec.gpus, 1.0)
    # The point's own batch first, then the same layout at MATCH_SCALES x that batch (for
    # the prediction at matched interactivity).
    step = decode_step(
        hw,
        mp,
        precision=str(row["precision"]),
        isl=float(row["isl"]),
        osl=float(row["osl"]),
        layout=dec,
        batch=float(row["conc"]) / workers * np.concatenate([[1.0], MATCH_SCALES]),
        aggregated=not disagg,
    )
    pf = prefill_terms(
        hw,
        mp,
        precision=str(row["precision"]),
        isl=float(row["isl"]),
        layout=pre if disagg else dec,
    )
    kv = (
        kv_transfer_s(
            hw,
            mp,
            precision=str(row["precision"]),
            isl=float(row["isl"]),
            prefill_gpus=pre.gpus,
            same_domain=total <= hw["domain"],
        )
        if disagg
        else 0.0
    )
    return {
        "ft": pf["flops_time_per_token"],
        "worker_gpus": float(dec.gpus),
        "seqs_per_gpu": float(row["conc"]) / (n_dec if disagg else total),
        "worker_ep": float(dec.ep),
        "prefill_gpus": float(row["num_prefill_gpu"]) if disagg else np.nan,
        "d_fixed": float(step["fixed"][0]),
        "d_scaled": float(step["scaled"][0]),
        "grid_fixed": step["fixed"][1:],
        "grid_scaled": step["scaled"][1:],
        "p_fixed": pf["fixed"] + kv,
        "p_scaled": pf["scaled"],
        "total_gpus": total,
    }


def implied_efficiencies(
    points: pd.DataFrame, specs: pd.DataFrame, models: pd.DataFrame
) -> pd.DataFrame:
    """Per measured point: the decode and prefill efficiencies that reproduce it.

    ``eta_d`` solves TPOT = fixed + scaled / eta_d at the point's batch per decode
    worker; ``eta_p`` solves TTFT - TPOT = prefill fixed + transfer + scaled / eta_p.
    Rows whose measured time is below the model's fixed part get NaN (not fitted).
    """
    spec_by = specs.set_index("accelerator")
    model_by = models.set_index("model")
    recs = []
    for _, row in points.iterrows():
        spec = spec_by.loc[row["accelerator"]].copy()
        spec["accelerator"] = row["accelerator"]
        hw = inference.hardware_params(spec, str(row["precision"]))
        mp = inference.model_params(model_by.loc[row["model"]])
        t = _row_terms(row, hw, mp)
        tpot = float(row["median_tpot_ms"]) / 1e3
        ttft = float(row["median_ttft_ms"]) / 1e3 - tpot
        rate = (
            float(row["tput_per_gpu"]) * t["total_gpus"] / (float(row["isl"]) + float(row["osl"]))
        )
        recs.append(
            {
                **t,
                # The prefill pool served at least the measured request rate: a lower bound
                # of its compute efficiency (tight where the pool was the bottleneck).
                "eta_c": rate * float(row["isl"]) * t["ft"] / t["prefill_gpus"],
                "eta_d": t["d_scaled"] / (tpot - t["d_fixed"]) if tpot > t["d_fixed"] else np.nan,
                "eta_p": t["p_scaled"] / (ttft - t["p_fixed"]) if ttft > t["p_fixed"] else np.nan,
            }
        )
    return pd.concat([points.reset_index(drop=True), pd.DataFrame(recs)], axis=1)


@dataclass(frozen=True)
class DeploymentCalibration:
    """Median efficiencies per level, finest first.

    Levels: ``stack`` (accelerator x framework x precision x kind x model),
    ``accelerator`` (any framework) and ``vendor`` (x kind).
    """

    #: columns: level, the level's keys, log_eta_d, eta_p, eta_c, n
    eta: pd.DataFrame
    #: (vendor, kind) -> slopes of log eta_d on log batch per GPU and log worker size
    slopes: Mapping[tuple[str, str], tuple[float, float, float]]

    def _pick(self, level: str, **keys: str) -> pd.DataFrame:
        e = self.eta[self.eta["level"] == level]
        for k, v in keys.items():
            e = e[e[k] == v]
        return e

    def lookup(
        self,
        vendor: str,
        accelerator: str,
        precision: str,
        kind: str,
        model: str,
        framework: str | None = None,
    ) -> Factors:
        """The finest level with data; its label says whether it was measured.

        "measured-calibrated" when the accelerator has measured points of this kind for
        this model (at this precision), else "modelled, no measurement".
        """
        base = {"accelerator": accelerator, "precision": precision, "kind": kind}
        tries = [
            ("stack", {**base, "model": model, "framework": framework or ""}, MEASURED),
            ("accelerator", {**base, "model": model}, MEASURED),
            ("accelerator", base, MODELLED),
            ("vendor", {"vendor": vendor, "kind": kind}, MODELLED),
            ("vendor", {"vendor": vendor}, MODELLED),
        ]
        for level, keys, label in tries:
            hit = self._pick(level, **keys)
            if len(hit):
                r = hit.iloc[0]
                slope = self.slopes.get(
                    (vendor, kind), self.slopes.get((vendor, "aggregated"), (0.0, 0.0, 0.0))
                )
                return Factors(
                    float(r["log_eta_d"]),
                    slope,
                    float(r["eta_p"]),
                    float(r["eta_c"]),
                    label,
                    float(r["max_seqs_per_gpu"]),
                )
        raise ValueError(f"no calibrated deployment efficiency for vendor {vendor}")


_LEVELS = {
    "stack": ["vendor", "accelerator", "framework", "precision", "kind", "model"],
    "accelerator": ["vendor", "accelerator", "precision", "kind", "model"],
    "vendor": ["vendor", "kind"],
}


def _batch_x(df: pd.DataFrame) -> pd.Series:
    """log(sequences in flight per decode GPU) of measured points."""
    return np.log(df["conc"].astype(float) / df["num_decode_gpu"].astype(float).clip(lower=1.0))


def fit_slopes(implied: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float, float]]:
    """Per vendor x kind: within-stack least squares of log eta_d on log batch and log size.

    Demeaned per stack (accelerator x framework x precision x kind x model) so that it
    measures how one stack's efficiency moves with its batch per GPU and its decode
    worker's size (what the roofline misses: amortized overheads, the all-to-all's
    overlap with compute), not the differences between stacks.
    """
    ok = implied.dropna(subset=["eta_d"]).assign(
        x1=_batch_x,
        x2=lambda d: np.log(d["worker_gpus"]),
        x3=lambda d: d["worker_ep"],
        y=lambda d: np.log(d["eta_d"]),
    )
    keys = _LEVELS["stack"]
    cen = {c: ok[c] - ok.groupby(keys)[c].transform("mean") for c in ("x1", "x2", "x3", "y")}
    out = {}
    for (vendor, kind), idx in ok.groupby(["vendor", "kind"]).groups.items():
        x = np.column_stack([cen[c][idx] for c in SLOPE_COVARIATES])
        coef, *_ = np.linalg.lstsq(x, cen["y"][idx].to_numpy(), rcond=None)
        fitted = dict(zip(SLOPE_COVARIATES, coef, strict=True))
        out[(str(vendor), str(kind))] = tuple(float(fitted.get(c, 0.0)) for c in ("x1", "x2", "x3"))
    return out


def fit_calibration(implied: pd.DataFrame) -> DeploymentCalibration:
    """Group medians of :func:`implied_efficiencies` (NaN rows ignored per factor)."""
    slopes = fit_slopes(implied)
    ok = implied.dropna(subset=["eta_d"]).copy()
    slope = np.array([slopes[(v, k)] for v, k in ok[["vendor", "kind"]].itertuples(index=False)])
    ok["log_eta_d"] = (
        np.log(ok["eta_d"])
        - slope[:, 0] * _batch_x(ok)
        - slope[:, 1] * np.log(ok["worker_gpus"])
        - slope[:, 2] * ok["worker_ep"]
    )
    frames = []
    for level, keys in _LEVELS.items():
        g = ok.groupby(keys, as_index=False).agg(
            log_eta_d=("log_eta_d", "median"),
            # TTFT mixes queueing into the unloaded prefill: its upper quartile is the
            # efficiency of a prompt that did not wait.
            eta_p=("eta_p", lambda x: x.quantile(PREFILL_QUANTILE)),
            # A prefill pool's capacity: the lower bounds' upper decile (the pool was the
            # bottleneck in those runs).
            eta_c=("eta_c", lambda x: x.quantile(CAPACITY_QUANTILE)),
            max_seqs_per_gpu=("seqs_per_gpu", "max"),
            n=("eta_d", "size"),
        )
        frames.append(g.assign(level=level))
    eta = pd.concat(frames, ignore_index=True)
    # A group whose prefill rows all failed borrows its vendor's prefill factor.
    for col in ("eta_p", "eta_c"):
        fill = frames[-1].set_index(["vendor", "kind"])[col]
        miss = eta[col].isna()
        eta.loc[miss, col] = [
            fill.get((v, k), np.nan)
            for v, k in eta.loc[miss, ["vendor", "kind"]].itertuples(index=False)
        ]
    order = ["level", *_LEVELS["stack"]]
    return DeploymentCalibration(eta=eta.sort_values(order).reset_index(drop=True), slopes=slopes)


def _point_factors(r: object, cal: DeploymentCalibration) -> Factors:
    return cal.lookup(r.vendor, r.accelerator, r.precision, r.kind, r.model, framework=r.framework)


def predict_points(
    implied: pd.DataFrame, cal: DeploymentCalibration, *, matched: bool = False
) -> np.ndarray:
    """Predicted tokens/s per GPU (input + output, InferenceX's ``tput_per_gpu``) per row.

    ``matched=True`` (a harder test: errors in TPOT become errors in batch): at the point's measured
    TPOT, the model's throughput of the same layout (the batch whose modelled step takes
    that TPOT). ``matched=False`` (the headline): at the point's concurrency. Both by Little's law,
    requests/s = concurrency / (OSL x TPOT + TTFT), capped by the prefill pool.
    """
    out = np.full(len(implied), np.nan)
    for i, r in enumerate(implied.itertuples(index=False)):
        f = _point_factors(r, cal)
        worker = Layout(gpus=int(r.worker_gpus), ep=bool(r.worker_ep))
        bpg = float(r.conc) / max(r.num_decode_gpu, 1)
        if matched:
            tpots = r.grid_fixed + r.grid_scaled / f.eta_d(bpg * MATCH_SCALES, worker)
            tpot = float(r.median_tpot_ms) / 1e3
            if not tpots[0] <= tpot <= tpots[-1]:
                continue  # the layout cannot reach the measured TPOT in the model
            conc = float(r.conc) * float(np.exp(np.interp(tpot, tpots, np.log(MATCH_SCALES))))
        else:
            tpot = r.d_fixed + r.d_scaled / float(f.eta_d(bpg, worker))
            conc = float(r.conc)
        ttft = r.p_fixed + r.p_scaled / f.eta_p + tpot
        rate = conc / (float(r.osl) * tpot + ttft)
        if r.kind == "disaggregated":  # the prefill pool's capacity caps the request rate
            rate = min(rate, r.prefill_gpus * f.eta_c / (float(r.isl) * r.ft))
        out[i] = rate * (float(r.isl) + float(r.osl)) / r.total_gpus
    return out


def validate_by_configuration(
    implied: pd.DataFrame, kind: str = "disaggregated", *, matched: bool = False
) -> pd.DataFrame:
    """Leave one configuration out: each ``kind`` configuration predicted without its rows.

    Returns the held-out rows with ``predicted``, ``measured`` (``tput_per_gpu``),
    ``ape_pct`` and ``config`` (the held-out key); factors are refitted per fold from
    every other row (both kinds), so nothing of the held-out configuration is used.
    """
    keys = list(CONFIG_KEYS)
    codes = implied[keys].astype(str).agg(" | ".join, axis=1)
    parts = []
    for cfg in sorted(codes[implied["kind"] == kind].unique()):
        held = implied[codes == cfg]
        cal = fit_calibration(implied[codes != cfg])
        pred = predict_points(held, cal, matched=matched)
        parts.append(held.assign(config=cfg, predicted=pred))
    out = pd.concat(parts, ignore_index=True)
    out["measured"] = out["tput_per_gpu"].astype(float)
    out["ape_pct"] = (out["predicted"] / out["measured"] - 1.0).abs() * 100.0
    return out


def validation_summary(held: pd.DataFrame) -> pd.DataFrame:
    """Median and p90 APE per vendor and overall (rows, configurations) of a held-out frame."""
    rows = []
    for vendor, g in [*held.groupby("vendor", sort=True), ("overall", held)]:
        ape = g["ape_pct"].dropna()
        rows.append(
            {
                "vendor": vendor,
                "rows": int(len(ape)),
                "configurations": int(g["config"].nunique()),
                "median_ape_pct": float(ape.median()) if len(ape) else np.nan,
                "p90_ape_pct": float(ape.quantile(0.9)) if len(ape) else np.nan,
            }
        )
    return pd.DataFrame(rows)
