"""A team's own measurements as a thin calibration layer over the inference model.

The scenario key ``measurements`` lists ingested benchmark rows (``ingest bench``). This
module compares each with the model and corrects the model where the team measured. It uses
only the public inference API (:func:`analysis.inference.max_throughput_per_gpu`, and the
frames of :func:`~analysis.inference.evaluate_tiers` and
:func:`~analysis.inference.frontiers`), so it works whatever the model computes inside.
Analytical decisions taken here:

* **The measured configuration.** A point is compared with the model on its own
  accelerator, model, precision, tensor parallelism and mean input/output lengths, at its
  own interactivity: the model's best tokens/s per GPU with TPOT at most the point's median
  TPOT (``max_throughput_per_gpu(tpot_ms=...)``). A point without TPOT (an MLPerf Offline
  run) is compared with the model's unbounded best. Interactivity rather than concurrency,
  because that is the axis the tiers and the frontier chart use and the one a load generator
  reports the same way in every tool.
* **Left out of the fit, and listed with the reason**: points whose caveat says speculative
  decoding, disaggregated serving or an INVALID loadgen run (the model has none of them),
  and points the model cannot place (too fast for it at concurrency 1, or the model does not
  fit).
* **The correction** per (accelerator, model, precision) is the shrunk geometric mean of
  measured / modelled: log c = sum(log ratio) / (n + k), i.e. n points against k pseudo-points
  at ratio 1 (no correction), with the prior weight k from the assumptions register
  (:data:`PRIOR_WEIGHT_ID`). The more points, the more they count; one point moves the model
  n / (n + k) of the way. It multiplies the modelled throughput of that combination
  everywhere the report uses it (tiers, frontier, costs).
* **The throughput sigma** of a corrected combination in the TCO Monte Carlo is the root
  mean square of the points' log residuals around the corrected model, never below the
  register's repeatability floor (:data:`SIGMA_FLOOR_ID`): a benchmark rerun does not agree
  with itself better than that. Other combinations keep the register's public-data sigma
  (``A-throughput-error``). A noisy set of measurements can therefore widen the spread; it
  says so rather than hiding it.
* **"Measured" in a tier**: a point of the scenario's model and precision whose median TPOT
  and TTFT meet the tier's bounds, at input and output lengths within
  :data:`WORKLOAD_TOLERANCE` of the scenario's.
* **Energy per token**: measured GPU board power / measured output tokens/s per GPU where a
  measured point meeting the tier has power; otherwise the provisioned server power per GPU
  (``facility.csv`` ``server_power_kw`` / 8) over the tier's modelled throughput. The two are
  labelled: board power leaves out CPUs, fans and networking, provisioned power is a ceiling.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis import inference, tco
from analysis.inputs import Inputs, resolve
from analysis.textsafe import markdown_text

#: Register ids of this layer's two assumptions (``data/assumptions/assumptions.csv``).
PRIOR_WEIGHT_ID = "A-measurement-prior-weight"
SIGMA_FLOOR_ID = "A-measurement-sigma-floor"
PUBLIC_SIGMA_ID = "A-throughput-error"
#: A point counts for a tier when its mean input and output lengths are within this
#: relative distance of the scenario's (a 1,000-token prompt is the same workload as a
#: 1,024-token one; a 128-token prompt is not). A display rule, not a model parameter.
WORKLOAD_TOLERANCE = 0.25
#: Caveat fragments that keep a point out of the fit (effects the serving model lacks).
NOT_MODELLED = ("speculative decoding", "disaggregated", "INVALID")
#: GPUs per server behind ``server_power_kw`` (the price and facility tables' 8-GPU server).
GPUS_PER_SERVER = 8
_COMBO = ["accelerator", "model", "precision"]

POINT_COLUMNS = (
    "accelerator",
    "vendor",
    "model",
    "precision",
    "tp",
    "isl_tokens",
    "osl_tokens",
    "median_tpot_ms",
    "median_ttft_ms",
    "measured_tok_s_gpu",
    "modelled_tok_s_gpu",
    "ratio",
    "used",
    "reason",
)


@dataclass(frozen=True)
class MeasuredCalibration:
    """The measurements, their comparison with the model and the fitted corrections.

    ``rows``: the ingested rows as loaded; ``points``: one row each with the modelled
    value, the ratio and whether it entered the fit (``used``, ``reason``); ``corrections``:
    one row per measured (accelerator, model, precision) with ``n``, ``raw_ratio`` (plain
    geometric mean), ``correction`` (shrunk), ``residual_sigma`` (RMS log residual after
    the correction), ``sigma`` (the Monte Carlo's, floored) and ``rms_log_error_before``.
    """

    rows: pd.DataFrame
    points: pd.DataFrame
    corrections: pd.DataFrame
    prior_weight: float
    sigma_floor: float
    public_sigma: float
    notes: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """True when no measurement was given."""
        return self.rows.empty

    def factors(self, model: str, precision: str) -> dict[str, float]:
        """Accelerator -> correction of the throughput for one model and precision."""
        c = self.corrections
        sel = c[(c["model"] == model) & (c["precision"] == precision)]
        return dict(zip(sel["accelerator"], sel["correction"].astype(float), strict=True))

    def sigmas(self, model: str, precision: str) -> dict[str, float]:
        """Accelerator -> Monte Carlo throughput sigma where measured (others: the default)."""
        c = self.corrections
        sel = c[(c["model"] == model) & (c["precision"] == precision)]
        return dict(zip(sel["accelerator"], sel["sigma"].astype(float), strict=True))


def _register_values(
    assumptions: pd.DataFrame | None, inputs: Inputs
) -> tuple[float, float, float]:
    if assumptions is None:
        assumptions = inputs.table("assumptions")
    reg = assumptions.set_index("id")["value"]
    return float(reg[PRIOR_WEIGHT_ID]), float(reg[SIGMA_FLOOR_ID]), float(reg[PUBLIC_SIGMA_ID])


def _optional(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def compare_points(
    rows: pd.DataFrame,
    *,
    calibration: inference.Calibration | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Each ingested row beside the model's throughput at its configuration.

    Columns :data:`POINT_COLUMNS`; ``ratio`` = measured / modelled (NaN where the model
    cannot place the point); ``used`` = the point enters the fit; ``reason`` says why not.
    One model call per point (a team measures tens of points, not thousands). The model
    reads ``inputs`` (default: the default inputs).
    """
    inputs = resolve(inputs)
    out = []
    for r in rows.itertuples(index=False):
        caveat = str(r.caveat) if isinstance(r.caveat, str) else ""
        tpot = _optional(r.median_tpot_ms)
        rec = {
            "accelerator": r.accelerator,
            "vendor": r.vendor,
            "model": r.model,
            "precision": r.precision,
            "tp": int(r.tp),
            "isl_tokens": float(r.isl_tokens),
            "osl_tokens": float(r.osl_tokens),
            "median_tpot_ms": tpot,
            "median_ttft_ms": _optional(r.median_ttft_ms),
            "measured_tok_s_gpu": float(r.output_tokens_per_s_per_gpu),
            "modelled_tok_s_gpu": np.nan,
            "ratio": np.nan,
            "used": False,
            "reason": "",
        }
        skip = next((c for c in NOT_MODELLED if c in caveat), None)
        try:
            modelled = inference.max_throughput_per_gpu(
                r.accelerator,
                r.model,
                precision=r.precision,
                isl=max(1, round(float(r.isl_tokens))),
                osl=max(1, round(float(r.osl_tokens))),
                tpot_ms=tpot,
                gpus=int(r.tp),
                calibration=calibration,
                inputs=inputs,
            )
        except ValueError as err:
            rec["reason"] = f"the model cannot place it: {err}"
        else:
            rec["modelled_tok_s_gpu"] = modelled
            rec["ratio"] = rec["measured_tok_s_gpu"] / modelled
            if skip:
                rec["reason"] = f"not in the serving model ({caveat})"
            else:
                rec["used"] = True
        out.append(rec)
    return pd.DataFrame(out, columns=list(POINT_COLUMNS))


def fit_corrections(
    points: pd.DataFrame, *, prior_weight: float, sigma_floor: float
) -> pd.DataFrame:
    """Shrunk geometric-mean correction and residual sigma per measured combination.

    >>> pts = pd.DataFrame({"accelerator": ["MI300X"] * 2, "model": ["llama2-70b"] * 2,
    ...                     "precision": ["fp8"] * 2, "ratio": [1.2, 1.3], "used": [True] * 2})
    >>> c = fit_corrections(pts, prior_weight=0.25, sigma_floor=0.03)
    >>> round(float(c["correction"].iloc[0]), 4), int(c["n"].iloc[0])
    (1.2185, 2)
    """
    cols = [
        *_COMBO,
        "n",
        "raw_ratio",
        "correction",
        "weight",
        "residual_sigma",
        "sigma",
        "rms_log_error_before",
    ]
    used = points[points["used"].astype(bool)]
    if used.empty:
        return pd.DataFrame(columns=cols)
    logr = np.log(used["ratio"].to_numpy(dtype=float))
    frame = used[_COMBO].assign(logr=logr)
    g = frame.groupby(_COMBO, sort=True)["logr"]
    n = g.size()
    s = g.sum()
    log_c = s / (n + prior_weight)
    resid = frame["logr"].to_numpy() - frame.set_index(_COMBO).index.map(log_c).to_numpy(float)
    rms_after = np.sqrt(frame.assign(r2=resid**2).groupby(_COMBO, sort=True)["r2"].mean())
    rms_before = np.sqrt(frame.assign(r2=logr**2).groupby(_COMBO, sort=True)["r2"].mean())
    out = pd.DataFrame(
        {
            "n": n,
            "raw_ratio": np.exp(s / n),
            "correction": np.exp(log_c),
            "weight": n / (n + prior_weight),
            "residual_sigma": rms_after,
            "sigma": np.maximum(rms_after, sigma_floor),
            "rms_log_error_before": rms_before,
        }
    ).reset_index()
    return out[cols]


def calibrate(
    rows: pd.DataFrame,
    *,
    assumptions: pd.DataFrame | None = None,
    calibration: inference.Calibration | None = None,
    inputs: Inputs | None = None,
) -> MeasuredCalibration:
    """Compare ingested rows with the model and fit the corrections.

    ``rows``: :func:`analysis.data.load_measurements` output; the rules are in the module
    docstring. The register and the model read ``inputs`` (default: the default inputs).
    """
    inputs = resolve(inputs)
    k, floor, public = _register_values(assumptions, inputs)
    points = compare_points(rows, calibration=calibration, inputs=inputs)
    corr = fit_corrections(points, prior_weight=k, sigma_floor=floor)
    return MeasuredCalibration(rows, points, corr, k, floor, public)


# --------------------------------------------------------------------------- applying it
def _scenario_factor(mc: MeasuredCalibration, sc: Any, accelerators: pd.Series) -> np.ndarray:
    f = mc.factors(sc.inference.model, sc.inference.precision)
    return accelerators.map(f).fillna(1.0).to_numpy(dtype=float)


def _workload_ok(pts: pd.DataFrame, sc: Any) -> pd.Series:
    inf = sc.inference
    return ((pts["isl_tokens"] / inf.isl - 1).abs() <= WORKLOAD_TOLERANCE) & (
        (pts["osl_tokens"] / inf.osl - 1).abs() <= WORKLOAD_TOLERANCE
    )


def scenario_points(mc: MeasuredCalibration, sc: Any) -> pd.DataFrame:
    """The measured points of the scenario's model and precision on its candidates.

    Adds ``tokens_per_s_per_user`` (1000 / median TPOT) and ``tokens_per_s_per_gpu``
    (measured), the frontier chart's axes, and ``same_workload`` (lengths within
    :data:`WORKLOAD_TOLERANCE`); with the raw rows' power columns.
    """
    inf = sc.inference
    pts = mc.points.join(mc.rows[["avg_power_w_per_gpu", "power_source", "tool"]])
    sel = pts[
        (pts["model"] == inf.model)
        & (pts["precision"] == inf.precision)
        & pts["accelerator"].isin(list(sc.accelerators))
    ].copy()
    sel["tokens_per_s_per_gpu"] = sel["measured_tok_s_gpu"]
    sel["tokens_per_s_per_user"] = 1000.0 / sel["median_tpot_ms"].astype(float)
    sel["same_workload"] = _workload_ok(sel, sc)
    return sel.reset_index(drop=True)


def apply_to_tiers(tiers: pd.DataFrame, mc: MeasuredCalibration, sc: Any) -> pd.DataFrame:
    """``evaluate_tiers`` output with the corrections applied and the evidence labelled.

    Multiplies ``tokens_per_s_per_gpu`` (and ``tokens_per_s_per_user`` is unchanged: the
    correction is on throughput at a given latency) by each accelerator's correction and
    divides ``cost_per_mtok_usd`` by it (cost per token is inverse in throughput). Adds
    ``correction``, ``basis`` ("measured" where a measured point meets the tier,
    "model, corrected" where the combination was measured, "model" otherwise) and
    ``measured_tok_s_gpu`` (the best measured point meeting the tier, NaN otherwise).
    """
    out = tiers.copy()
    factor = _scenario_factor(mc, sc, out["accelerator"])
    out["tokens_per_s_per_gpu"] = out["tokens_per_s_per_gpu"] * factor
    if "cost_per_mtok_usd" in out:
        out["cost_per_mtok_usd"] = out["cost_per_mtok_usd"] / factor
    out["correction"] = factor
    best = _best_measured(out, scenario_points(mc, sc)) if not mc.empty else None
    measured = np.full(len(out), np.nan) if best is None else best
    out["measured_tok_s_gpu"] = measured
    out["basis"] = np.where(
        np.isfinite(measured), "measured", np.where(factor != 1.0, "model, corrected", "model")
    )
    return out


def _meets(pts: pd.DataFrame, tpot_max: Any, ttft_max: Any) -> pd.Series:
    """Points of the scenario's workload whose median TPOT and TTFT meet the bounds.

    A bound a point cannot show (no TPOT in an MLPerf Offline summary) is not met; an
    unbounded one always is.
    """
    ok = pts["same_workload"].astype(bool)
    if tpot_max is not None and pd.notna(tpot_max):
        tpot = pts["median_tpot_ms"].astype(float)
        ok &= tpot.notna() & (tpot <= float(tpot_max))
    if ttft_max is not None and pd.notna(ttft_max):
        ttft = pts["median_ttft_ms"].astype(float)
        ok &= ttft.notna() & (ttft <= float(ttft_max))
    return ok


def _best_measured(tiers: pd.DataFrame, pts: pd.DataFrame) -> np.ndarray:
    """Per tier row: the highest measured tokens/s per GPU among points meeting the tier."""
    out = np.full(len(tiers), np.nan)
    for i, t in enumerate(tiers.itertuples(index=False)):
        mine = pts[pts["accelerator"] == t.accelerator]
        ok = mine[_meets(mine, t.tpot_ms_max, t.ttft_ms_max)]
        if len(ok):
            out[i] = float(ok["measured_tok_s_gpu"].max())
    return out


def apply_to_frontier(front: pd.DataFrame, mc: MeasuredCalibration, sc: Any) -> pd.DataFrame:
    """``frontiers`` output with each measured accelerator's throughput corrected."""
    if front.empty:
        return front
    out = front.copy()
    out["tokens_per_s_per_gpu"] = out["tokens_per_s_per_gpu"] * _scenario_factor(
        mc, sc, out["accelerator"]
    )
    return out


def throughput_sigmas(mc: MeasuredCalibration, sc: Any) -> dict[str, float]:
    """Accelerator -> the Monte Carlo throughput sigma of the scenario's combination."""
    return mc.sigmas(sc.inference.model, sc.inference.precision)


def case_sigmas(
    sc: Any, *, inputs: Inputs | None = None, cases: pd.DataFrame | None = None
) -> dict[str, float]:
    """Accelerator -> serving sigma of its prediction case (:func:`inference.prediction_cases`).

    ``cases``: that function's output when the caller has it already.
    """
    if cases is None:
        cases = inference.prediction_cases(sc.accelerators, sc.inference.model, inputs=inputs)
    return inference.case_sigmas(cases)


def serving_sigmas(
    mc: MeasuredCalibration,
    sc: Any,
    *,
    inputs: Inputs | None = None,
    cases: pd.DataFrame | None = None,
) -> dict[str, float]:
    """Accelerator -> the serving-throughput sigma the Monte Carlo draws with.

    Its prediction case's held-out error (:func:`case_sigmas`), replaced by the residual
    of the team's own runs where it measured the scenario's combination
    (:func:`throughput_sigmas`). A tier row may draw with its own sigma
    (:func:`with_tier_sigmas`); this is the one its accelerator's other uses draw with.
    """
    return {**case_sigmas(sc, inputs=inputs, cases=cases), **throughput_sigmas(mc, sc)}


def tier_errors(
    tiers: pd.DataFrame,
    mc: MeasuredCalibration,
    sc: Any,
    *,
    inputs: Inputs | None = None,
    cases: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per tier x accelerator: the error its figure carries and the sigma the Monte Carlo draws.

    :func:`analysis.inference.tier_uncertainty` (the larger of the accelerator's
    prediction case and the latency-resolved check of how the tier's figure was made);
    where the team measured the scenario's combination, its runs' residual
    (:func:`throughput_sigmas`) replaces both, as in :func:`serving_sigmas`
    (``error_source`` "your measurements", ``median_ape_pct`` NaN). ``cases``: the
    chapter's :func:`analysis.inference.prediction_cases`, so they are not recomputed.
    """
    if cases is None:
        cases = inference.prediction_cases(sc.accelerators, sc.inference.model, inputs=inputs)
    out = inference.tier_uncertainty(tiers, cases, sc.inference.model, inputs=inputs)
    own = throughput_sigmas(mc, sc)
    hit = out["accelerator"].isin(list(own))
    out.loc[hit, "throughput_log_sigma"] = out.loc[hit, "accelerator"].map(own).astype(float)
    out.loc[hit, "median_ape_pct"] = np.nan
    out.loc[hit, "error_source"] = "your measurements"
    return out


def with_tier_sigmas(tiers: pd.DataFrame, errors: pd.DataFrame) -> pd.DataFrame:
    """``tiers`` with each row's ``throughput_log_sigma`` from :func:`tier_errors`."""
    keys = ["tier_index", "accelerator"]
    sig = errors[[*keys, "throughput_log_sigma"]]
    return tiers.drop(columns=["throughput_log_sigma"], errors="ignore").merge(
        sig, on=keys, how="left", validate="one_to_one"
    )


# --------------------------------------------------------------------------- energy
def energy_per_token(
    tiers: pd.DataFrame, mc: MeasuredCalibration, sc: Any, facility: pd.DataFrame
) -> pd.DataFrame:
    """J per output token and output tokens/s per kW per tier and accelerator.

    ``tiers``: :func:`apply_to_tiers` output. Measured power (the best measured point
    meeting the tier that has power) where there is one, else provisioned power
    (``server_power_kw`` / 8 per GPU, :data:`GPUS_PER_SERVER`) over the tier's throughput.
    ``power_basis`` names which.
    """
    kw = facility[facility["parameter"] == "server_power_kw"].groupby("accelerator")["value"].mean()
    pts = scenario_points(mc, sc) if not mc.empty else None
    rows = []
    for t in tiers.itertuples(index=False):
        rec = {
            "tier_index": t.tier_index,
            "tier": t.tier,
            "accelerator": t.accelerator,
            "vendor": t.vendor,
            "tokens_per_s_per_gpu": t.tokens_per_s_per_gpu,
            "power_w_per_gpu": np.nan,
            "joules_per_token": np.nan,
            "tokens_per_s_per_kw": np.nan,
            "power_basis": "",
        }
        watts, tps = np.nan, float(t.tokens_per_s_per_gpu)
        if pts is not None:
            mine = pts[(pts["accelerator"] == t.accelerator) & pts["avg_power_w_per_gpu"].notna()]
            ok = mine[_meets(mine, t.tpot_ms_max, t.ttft_ms_max)]
            if len(ok):
                best = ok.sort_values("measured_tok_s_gpu", ascending=False).iloc[0]
                watts, tps = float(best["avg_power_w_per_gpu"]), float(best["measured_tok_s_gpu"])
                rec["tokens_per_s_per_gpu"] = tps
                rec["power_basis"] = f"measured ({best['power_source']})"
        if not np.isfinite(watts) and t.accelerator in kw.index:
            watts = float(kw[t.accelerator]) * 1000.0 / GPUS_PER_SERVER
            rec["power_basis"] = "provisioned (server power / 8)"
        if np.isfinite(watts) and np.isfinite(tps) and tps > 0:
            rec["power_w_per_gpu"] = watts
            rec["joules_per_token"] = watts / tps
            rec["tokens_per_s_per_kw"] = tps / watts * 1000.0
        rows.append(rec)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the section
def points_table(mc: MeasuredCalibration) -> pd.DataFrame:
    """Every ingested point with its provenance, the model's value and the ratio."""
    cols = ["tool", "source_file", "source_row", "stack", "run_date", "ingested"]
    return mc.rows[cols].join(mc.points.drop(columns=["vendor"]))


def fit_summary(mc: MeasuredCalibration) -> dict[str, Any]:
    """Counts and the overall fit residual (RMS log error of the used points)."""
    used = mc.points[mc.points["used"].astype(bool)]
    if used.empty:
        before = after = float("nan")
    else:
        logr = np.log(used["ratio"].to_numpy(float))
        key = used.set_index(_COMBO).index
        log_c = np.log(mc.corrections.set_index(_COMBO)["correction"].astype(float))
        after_r = logr - key.map(log_c).to_numpy(float)
        before, after = float(np.sqrt(np.mean(logr**2))), float(np.sqrt(np.mean(after_r**2)))
    return {
        "points": len(mc.points),
        "files": int(mc.rows["source_sha256"].nunique()) if not mc.empty else 0,
        "used": len(used),
        "combinations": len(mc.corrections),
        "rms_log_error_before": before,
        "rms_log_error_after": after,
    }


def decision_shift(
    sc: Any,
    mc: MeasuredCalibration,
    *,
    public_tiers: pd.DataFrame,
    inputs: Any,
    cases: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per tier: winner and P(AMD cheaper) on public data only vs with the measurements.

    ``public_tiers``: ``inference.evaluate_tiers(sc)``; ``inputs``: the scenario's
    :func:`analysis.tco.cost_inputs`, with the prediction-case sigmas as chapter 40 draws
    them (``tco.with_throughput_sigmas(inputs, case_sigmas(sc))``). Each tier row draws
    with its own error as chapter 40 does (:func:`tier_errors`); the measured run
    replaces the measured accelerators' sigma with the runs' residual. Both Monte Carlo
    runs use the scenario's seed and draws, so the difference is the measurements' alone.
    ``cases``: :func:`analysis.inference.prediction_cases` when the caller has it.
    """
    if cases is None:
        cases = inference.prediction_cases(sc.accelerators, sc.inference.model)
    measured = apply_to_tiers(public_tiers, mc, sc)
    public = with_tier_sigmas(
        public_tiers, inference.tier_uncertainty(public_tiers, cases, sc.inference.model)
    )
    measured = with_tier_sigmas(measured, tier_errors(measured, mc, sc, cases=cases))
    sim_pub = tco.simulate(sc, public, None, inputs=inputs)
    inp_meas = tco.with_throughput_sigmas(inputs, throughput_sigmas(mc, sc))
    sim_meas = tco.simulate(sc, measured, None, inputs=inp_meas)
    win_pub = inference.tier_winners(public_tiers).set_index("tier_index")
    win_meas = inference.tier_winners(measured).set_index("tier_index")
    p_pub = sim_pub.tier_summary.set_index("tier_index")
    p_meas = sim_meas.tier_summary.set_index("tier_index")
    rows = []
    for ti in win_pub.index:
        rows.append(
            {
                "tier_index": int(ti),
                "tier": win_pub.at[ti, "tier"],
                "winner_public": win_pub.at[ti, "winner"],
                "winner_measured": win_meas.at[ti, "winner"],
                "winner_changed": win_pub.at[ti, "winner"] != win_meas.at[ti, "winner"],
                "cheapest_public": p_pub.at[ti, "cheapest"] if ti in p_pub.index else "",
                "cheapest_measured": p_meas.at[ti, "cheapest"] if ti in p_meas.index else "",
                "p_amd_cheaper_public": _p(p_pub, ti),
                "p_amd_cheaper_measured": _p(p_meas, ti),
            }
        )
    out = pd.DataFrame(rows)
    out["p_amd_cheaper_change"] = out["p_amd_cheaper_measured"] - out["p_amd_cheaper_public"]
    return out


def _p(summary: pd.DataFrame, ti: Any) -> float:
    if ti not in summary.index:
        return float("nan")
    return float(summary.at[ti, "p_amd_cheaper"])


def shift_markdown(shift: pd.DataFrame, fit: Mapping[str, Any]) -> str:
    """Two sentences for the section: what was measured and what it changed."""
    if not fit["points"]:
        return "No measurements were given (scenario key `measurements`)."
    head = (
        f"**{fit['points']} measured point(s) from {fit['files']} file(s); {fit['used']} "
        f"entered the fit ({fit['combinations']} accelerator/model/precision "
        f"combination(s)).**"
    )
    if np.isfinite(fit["rms_log_error_before"]):
        head += (
            f" The model missed them by {fit['rms_log_error_before']:.1%} (RMS of the log "
            f"error) before the correction and by {fit['rms_log_error_after']:.1%} after."
        )
    flips = shift[shift["winner_changed"]]
    if flips.empty:
        moved = "No tier winner changed."
    else:
        moved = (
            "Tier winners that changed: "
            + "; ".join(
                f"{markdown_text(r.tier)}: {r.winner_public} -> {r.winner_measured}"
                for r in flips.itertuples(index=False)
            )
            + "."
        )
    p = shift.dropna(subset=["p_amd_cheaper_public", "p_amd_cheaper_measured"])
    if len(p):
        moved += (
            " P(AMD cheaper) moved "
            + "; ".join(
                f"{markdown_text(r.tier)}: {r.p_amd_cheaper_public:.2f} -> "
                f"{r.p_amd_cheaper_measured:.2f}"
                for r in p.itertuples(index=False)
            )
            + "."
        )
    return head + "\n\n" + moved


def key_results(mc: MeasuredCalibration, shift: pd.DataFrame) -> dict[str, Any]:
    """The section's key results: counts, residuals, per-tier winners and P(AMD cheaper)."""
    fit = fit_summary(mc)
    out: dict[str, Any] = {
        "measured_points": fit["points"],
        "measured_points_used": fit["used"],
        "measured_combinations": fit["combinations"],
        "measured_rms_log_error_before": fit["rms_log_error_before"],
        "measured_rms_log_error_after": fit["rms_log_error_after"],
    }
    for r in mc.corrections.itertuples(index=False):
        out[f"correction_{r.accelerator}_{r.model}_{r.precision}"] = float(r.correction)
        out[f"sigma_{r.accelerator}_{r.model}_{r.precision}"] = float(r.sigma)
    for r in shift.itertuples(index=False):
        i = r.tier_index
        out[f"tier{i}_winner_public"] = r.winner_public
        out[f"tier{i}_winner_measured"] = r.winner_measured
        out[f"tier{i}_p_amd_cheaper_public"] = r.p_amd_cheaper_public
        out[f"tier{i}_p_amd_cheaper_measured"] = r.p_amd_cheaper_measured
    return out


__all__ = [
    "MeasuredCalibration",
    "apply_to_frontier",
    "apply_to_tiers",
    "calibrate",
    "compare_points",
    "decision_shift",
    "energy_per_token",
    "fit_corrections",
    "fit_summary",
    "key_results",
    "points_table",
    "scenario_points",
    "shift_markdown",
    "throughput_sigmas",
]
