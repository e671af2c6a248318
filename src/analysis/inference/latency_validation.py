"""Validation on the InferenceX sweeps (held-out accelerator x precision), two models.

:func:`validate_serving_model` (also :func:`validate`) scores the report's serving model,
the roofline shape the tiers use; :func:`validate_sweep_model` the sweep physics, a
validated candidate the tiers do not use yet; :func:`fit_serving_model` the serving model
fitted on every point and scored in-sample, what holding cells out is measured against.
:data:`MODEL_LABELS` names both models wherever they are printed (:func:`compare_models`,
:func:`comparison_note`, :func:`key_results`).
See :mod:`analysis.inference.latency` for the analytical decisions.

Examined (one-off experiment of 2026-12-06, patch not kept): validating on each engine
configuration's latest run date only (accelerator, precision, framework, lengths, TP, EP,
attention layout; 486 of 1,667 points, the "one round" rule the MLPerf comparisons follow)
gives the serving model 32.9 % held out (AMD 30.6, NVIDIA 36.2; median TPOT error 11.0 %)
against 32.2 % on every date: older software dates are not what the error is made of.

Examined (one-off experiment of 2026-12-06, patch not kept, so its numbers are not
reproducible from this tree): the prompt work of each decode step timed at the prefill
rate the times to first token measure
(:func:`analysis.inference.latency_diagnostics.measured_prefill_rates`) instead of at the
fitted ``prefill_cost`` (its FLOPs taken out of the decode step), ``isl / osl x F(isl) /
(TP x rate)`` per decoding sequence and step. With each held-out cell's rate from its own
accelerator's other precision (else its generation's, else every other cell's): 32.2 ->
28.7 % (AMD 37.8 -> 29.6, NVIDIA 27.7 -> 26.8), but the FP8/FP4 ratio error on B200 7.8
-> 35.4 % (MI355X 21.4 -> 19.4): B200's FP4 prefill runs at 4.6x its FP8 one (1.5
against 0.33 PFLOP/s with SGLang), so each B200 format's rate borrowed from the other is
wrong by that factor. Taking the rate first from the same generation's other part at the
same precision (as a share of peak) instead: 28.7 % (AMD 33.1, NVIDIA 27.1), B200 ratio
33.6 %, MI355X 54.0 %. With each cell's own measured rate (not a held-out prediction:
what the mechanism gives when the rate is known): 25.8 % (AMD 28.8, NVIDIA 23.5), B200
ratio 34.5 %. Not taken while it breaks a bar the model meets; a prefill rate per stack
and format that a held-out cell can be given is the next step.

Also examined (one-off experiments of 2026-12-06 on the serving model, same folds, patches
not kept; held out 32.2 %, FP8/FP4 ratio error B200 7.8 %, MI355X 21.4 % as the baseline):

* A prefill cost per vendor x precision class (each class with 40 points or more choosing
  its own on the grid by the same rule): Blackwell FP8 and MI355X FP8 take 6, the native
  classes 2.5 and 4; 32.5 % (AMD 36.3, NVIDIA 31.1), B200 ratio 30.9 %.
* The prefill cost fixed at 1.5 or 2 instead of the rule's 3: 34.4 / 33.6 %. Fixed
  higher, in every fold, at 2.5 / 3 / 4 / 5 / 6 / 8: 32.7 / 30.3 / 27.7 / 27.9 / 27.9 /
  30.8 % (AMD 39.1 / 37.8 / 35.9 / 33.2 / 32.4 / 32.3), B200 FP8/FP4 ratio error 15.7 /
  9.1 / 19.8 / 24.7 / 15.7 / 49.9 %, frontier AMD/NVIDIA ratio 30.7 / 27.2 / 30.3 / 26.4
  / 28.7 / 36.7 %; the 8k/1k points' median log error falls from +0.26 to +0.03 by 6.
  Up to 4.5 points off the median, none near the bar, and the ratios the decision reads
  move erratically; picking the cost by held-out error would tune it on the cells it
  is scored on.
* An expert-parallel dispatch latency per MoE layer when ``decode_ep`` > 1 (0-120 us,
  fitted like the other overheads): the fit takes 0. A constant within each sweep only
  tilts its slope, and the within-sweep flatness does not ask for it, though B200 FP8
  TRT-LLM at concurrency 4 measures 14.6 ms with EP 8 against 8.7-10.3 ms without.
* A level per run date from the other cells' points that day (vendor x framework x date,
  unshrunk; a date's software shared across a vendor's parts): 34.4 % (vendor x date
  35.6 %; with the lengths too 30.8 %): a date's offset does not carry across parts.
* Where the error sits: concurrency <= 4 holds a third of the points (318 of 924) at
  114 % (AMD, modelled TPOT 32 % low) and 43 % (NVIDIA, 4 % low); there a TPOT error is
  divided by a slope of TPOT in concurrency of about 0.2-0.3. Concurrency 16-128 is 5-13 %
  slow in TPOT on both vendors. The date repeatability below, with each configuration's
  other-date curve extended log-log from its end segments so that every point with another
  date is scored (804 points): AMD 26.4 %, NVIDIA 3.8 %.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.inference import frontier_validation, sweep_fit
from analysis.inference.latency import (
    RATIO_ACCELERATORS,
    _load,
    fit_shape,
    implied_eta,
    point_terms,
    select,
    stored_frame,
    throughput_at_tpot,
)
from analysis.inference.latency_diagnostics import IN_SAMPLE, error_budget
from analysis.inference.roofline import (
    ROOFLINE_SHAPE,
    precision_class,
)
from analysis.inference.validation import ratio_medians, validation_summary
from analysis.inputs import Inputs, resolve

#: What makes a day's fp4 sweep of an fp8 point's engine (:func:`fp8_fp4_matches`).
RATIO_KEYS = ("accelerator", "framework", "isl", "osl", "decode_tp", "date")
#: The engine configuration within those keys: one fp4 sweep each.
RATIO_CONFIG = ("decode_ep", "decode_dp_attention")


def fp8_fp4_matches(
    frame: pd.DataFrame, value: str, accelerators: Sequence[str] = RATIO_ACCELERATORS
) -> pd.DataFrame:
    """Each fp8 point's measured fp4 counterpart at its interactivity, and its configuration.

    For each fp8 point of ``accelerators``, the same day's fp4 sweeps of its engine
    (:data:`RATIO_KEYS`; one sweep per :data:`RATIO_CONFIG` with at least two points)
    are interpolated at its interactivity (log-log, within each sweep's range); the match
    is its own configuration's where that day ran it at fp4, else the best there. Indexed
    like ``frame``; columns ``fp4`` (the ``value`` there) and the matched configuration's
    :data:`RATIO_CONFIG` (fp8 points without a match are absent). The measured side of
    :func:`fp8_fp4_ratio` and the modelled fp4 twins (:func:`_twins`) both read it, so
    the two describe one engine configuration.
    """
    config = [c for c in RATIO_CONFIG if c in frame.columns]
    sel = frame[frame["accelerator"].isin(list(accelerators))]
    cfg = sel[config].astype(float).fillna(-1.0) if config else pd.DataFrame(index=sel.index)
    out = []
    for _, g in sel.groupby(list(RATIO_KEYS)):
        f4 = g[(g["precision"] == "fp4") & g[value].notna()]
        curves = {}
        for c, f in f4.groupby([cfg.loc[f4.index, k] for k in config]) if config else [((), f4)]:
            if len(f) >= 2:
                curves[c if isinstance(c, tuple) else (c,)] = _log_curve(f, value)
        f8 = g[g["precision"] == "fp8"]
        if f8.empty or not curves:
            continue
        x = np.log(1000.0 / f8["median_tpot_ms"].to_numpy(float))
        own = cfg.loc[f8.index].to_numpy(float)
        # Per fp8 point: its own configuration's value where that curve covers it, else
        # the first largest among the covering curves (curves in group order).
        val = np.full(len(f8), np.nan)
        pick = np.full((len(f8), len(config)), np.nan)
        found = np.zeros(len(f8), dtype=bool)
        is_own = np.zeros(len(f8), dtype=bool)
        for c, (cx, cy) in curves.items():
            inside = (cx[0] <= x) & (x <= cx[-1])
            v = np.interp(x, cx, cy)
            mine = inside & np.all(own == np.asarray(c, dtype=float), axis=1)
            take = mine | (inside & ~is_own & (~found | (v > val)))
            val[take], pick[take] = v[take], c
            found |= take
            is_own |= mine
        out.append(
            pd.DataFrame(
                {"fp4": np.exp(val[found]), **dict(zip(config, pick[found].T, strict=True))},
                index=f8.index[found],
            )
        )
    cols = ["fp4", *config]
    if not out:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="row"))
    frame = pd.concat(out)
    frame.index.name = "row"
    return frame[cols]


def _twins(pts: pd.DataFrame, specs: pd.DataFrame) -> pd.DataFrame:
    """The model's fp4 twin of each matched fp8 point of :data:`RATIO_ACCELERATORS`.

    The fp8 point's engine at fp4, in the configuration it is scored against
    (:func:`fp8_fp4_matches`: its own, else the day's best).
    """
    match = fp8_fp4_matches(pts, "output_tput_per_gpu")
    tw = pts.loc[match.index].copy()
    tw["precision"] = "fp4"
    for c in RATIO_CONFIG:
        if c in match.columns:
            tw[c] = pd.array(match[c].to_numpy(), dtype=tw[c].dtype)
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    tw["precision_class"] = [precision_class(spec_by[a], "fp4") for a in tw["accelerator"]]
    return tw


#: What each validated model is, as every printout labels it. ``serving``: the roofline
#: shape (:func:`analysis.inference.latency.fitted_shape`) the tiers and the MLPerf
#: calibration use; ``sweep``: :mod:`analysis.inference.decode_model`, validated here but
#: not (yet) behind any tier.
MODEL_LABELS: dict[str, str] = {
    "serving": "report's serving model",
    "sweep": "sweep model (validated candidate, not yet used by the tiers)",
}


def _frame(
    pts: pd.DataFrame, holdout: np.ndarray, pred: np.ndarray, eta: np.ndarray, tpot: np.ndarray
) -> pd.DataFrame:
    """The per-point output columns shared by both validations (``holdout``: each fold's name)."""
    cols = ["accelerator", "vendor", "model", "precision", "framework", "isl", "osl", "conc"]
    cols += ["decode_tp", "decode_ep", "decode_dp_attention", "median_tpot_ms", "date", "run_url"]
    out = pts[cols].copy()
    out["measured"] = pts["output_tput_per_gpu"].to_numpy(float)
    out["predicted"] = pred
    out["ape_pct"] = (out["predicted"] / out["measured"] - 1.0).abs() * 100.0
    out["holdout"] = holdout
    out["eta"] = eta
    out["predicted_tpot_ms"] = tpot
    out["tpot_ape_pct"] = (out["predicted_tpot_ms"] / out["median_tpot_ms"] - 1.0).abs() * 100.0
    return out


def validate_serving_model(
    ix: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """The report's serving model, leave one accelerator x precision out (matched TPOT).

    The model the tiers use: the roofline point terms (:func:`point_terms`) with the serving
    shape (:func:`fit_shape`) and the level fitted on every other cell's points only; each
    held-out point predicted at its measured median TPOT (:func:`throughput_at_tpot`). The
    level is the sweep model's (:func:`analysis.inference.sweep_fit.fit_level`: the
    precision effect per vendor x generation, never carried from one vendor's kernels to
    the other's, with the physics prior of equal efficiency where a fold leaves a vendor
    without both formats). Columns as
    :func:`validate_sweep_model` (``predicted_fp4``: each fp8 point's engine at fp4, at the
    shape and level of the fold that held the fp4 cell out).
    """
    return stored_frame(
        "serving_held_out",
        (ix, specs, models),
        inputs,
        lambda: _serving_folds(ix, specs, models, inputs).held_out(),
    )


def fit_serving_model(
    ix: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """The report's serving model fitted on every point and scored on the same points.

    The in-sample counterpart of :func:`validate_serving_model` (same columns; ``holdout``
    is :data:`analysis.inference.latency_diagnostics.IN_SAMPLE`): one fit of the shape
    and the level on every cell, each point then predicted at its measured median TPOT.
    A held-out fold sees less than this fit, so it is seldom better on the whole: the gap
    says how much of the held-out error comes from holding cells out and how much is the
    model's own. :func:`analysis.inference.latency_diagnostics.error_budget` takes it
    apart as it does the held-out frame.

    On the bundled sweeps (validate-models, 2026-12-06): 27.3 % (AMD 36.2, NVIDIA 23.0)
    against 32.2 % held out; FP8/FP4 ratio error MI355X 24.2 %, B200 21.0 % (held out 21.4
    and 7.8: a fold's level can land nearer a ratio than the fit of every point does).
    Its error budget (the same function as the held-out one's): a level per accelerator x
    precision from the cell's other points 27.7 %, per lengths 24.3 %, per engine
    configuration over its run dates 20.1 % (AMD 30.7, NVIDIA 12.4). The in-sample fit
    scores 926 points, held out 924 (two low-concurrency fp4 points only the full fit
    reaches). An observation, not a bound: this fit (its shape, and a level by median
    polish on implied efficiencies) misses the held-out bar of 20 % on the points it was
    fitted on, and even each engine configuration's level from its other points leaves
    20.1 %; it is not the best fit the structure admits (held out does better on the B200
    ratio and on NVIDIA's 90th percentile, 86.6 against 117.8 %).
    Examined (one-off, 2026-12-06, not kept): each held-out cell given its own level plus
    configuration effects (stack, lengths, TP, expert parallelism, attention layout)
    estimated on the other cells lands at 25.4-29.9 % depending on the estimator (median
    backfitting at 1 to 200 passes, least squares), against 28.2 % with the cell's level
    alone (both on the in-sample shape, levels from implied efficiencies): not a robust
    gain.
    """
    return stored_frame(
        "serving_in_sample",
        (ix, specs, models),
        inputs,
        lambda: _serving_folds(ix, specs, models, inputs).in_sample(),
    )


def cross_fold_predictions(
    ix: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Every point of :func:`validate_serving_model` as each of its folds predicts it.

    Rows as that frame's; one column per held-out accelerator x precision cell
    (``"<accelerator> x <precision>"``): the point's throughput at its measured median
    TPOT by the fold that held that cell out (a point's own cell's column is its held-out
    prediction). What :func:`analysis.inference.latency_diagnostics.transfer_reference`
    reads, so that a ratio of two parts comes from one fold. The folds are the held-out
    validation's, fitted once per inputs.
    """
    return stored_frame(
        "serving_cross_fold",
        (ix, specs, models),
        inputs,
        lambda: _serving_folds(ix, specs, models, inputs).cross_predicted(),
    )


def _serving_folds(
    ix: pd.DataFrame | None,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    inputs: Inputs | None,
) -> _ServingFolds:
    """The points, twins and terms both serving-model scorings share; built once per inputs.

    With no frame given they come from ``inputs`` and are memoized on it, so the held-out
    folds and the in-sample fit (chapter 30, ``validate-models``) select the points, match
    the fp4 twins and time the roofline terms once.
    """
    if ix is None and specs is None and models is None:
        inp = resolve(inputs)
        return inp.derived(
            "inference.serving_folds", lambda: _ServingFolds(*_load(None, None, None, inp))
        )
    return _ServingFolds(*_load(ix, specs, models, inputs))


def _holdout_labels(cell: np.ndarray) -> np.ndarray:
    """The ``holdout`` label of each point of a held-out accelerator x precision cell."""
    return np.array(["accelerator x precision: " + k for k in cell], dtype=object)


class _ServingFolds:
    """The serving model's points, fp4 twins and terms, fitted and scored fold by fold."""

    def __init__(self, ix: pd.DataFrame, specs: pd.DataFrame, models: pd.DataFrame) -> None:
        self.specs, self.models = specs, models
        self.pts = select(ix, specs, models)
        self.twins = _twins(self.pts, specs)
        self.base = point_terms(self.pts, specs, models, ROOFLINE_SHAPE)
        self.cell = (self.pts["accelerator"] + " x " + self.pts["precision"]).to_numpy()
        self.cell_tw = (self.twins["accelerator"] + " x " + self.twins["precision"]).to_numpy()
        self._fits: dict[str, tuple[Any, dict[str, np.ndarray], dict[str, dict[Any, float]]]] = {}

    def held_out(self) -> pd.DataFrame:
        """Each accelerator x precision cell predicted from the others."""
        scored = self._scored()
        for key in sorted(set(self.cell)):
            self._fold(scored, key, self.cell == key, self.cell_tw == key)
        return self._out(scored, _holdout_labels(self.cell))

    def in_sample(self) -> pd.DataFrame:
        """Every point (and every fp4 twin) predicted from one fit of every point."""
        scored = self._scored()
        every = np.ones(len(self.pts), dtype=bool)
        self._fold(scored, IN_SAMPLE, every, np.ones(len(self.twins), dtype=bool))
        return self._out(scored, np.full(len(self.pts), IN_SAMPLE, dtype=object))

    def cross_predicted(self) -> pd.DataFrame:
        """Every point at its measured median TPOT, as each held-out fold predicts it.

        One column per held-out cell (``"<accelerator> x <precision>"``), rows as
        :meth:`held_out`'s; a point's own cell's column is its held-out prediction.
        """
        tau = self.pts["median_tpot_ms"].to_numpy(float)
        cols = {}
        for key in sorted(set(self.cell)):
            _, flat, fitted = self._fit(key)
            eta = sweep_fit.predict_level(self.pts, fitted)
            cols[key] = throughput_at_tpot(flat, eta, tau)
        return pd.DataFrame(cols)

    def _fit(self, key: str) -> tuple[Any, dict[str, np.ndarray], dict[str, dict[Any, float]]]:
        """The shape, every point's terms under it and the level of the fold ``key``.

        ``key``: the held-out cell (trained on every other cell), or :data:`IN_SAMPLE`
        (trained on every cell). Fitted once per key.
        """
        if key not in self._fits:
            pts, specs, models = self.pts, self.specs, self.models
            train = np.ones(len(pts), dtype=bool) if key == IN_SAMPLE else self.cell != key
            sub = {
                k: ({q: a[train] for q, a in v.items()} if isinstance(v, dict) else v[train])
                for k, v in self.base.items()
            }
            shape = fit_shape(pts[train].reset_index(drop=True), sub)
            flat = _point_arrays(point_terms(pts, specs, models, shape))
            tr = pts[train].copy()
            tr["eta"] = implied_eta(tr, {k: v[train] for k, v in flat.items()})
            self._fits[key] = (shape, flat, sweep_fit.fit_level(tr))
        return self._fits[key]

    def _scored(self) -> dict[str, np.ndarray]:
        """Empty (NaN) per-point and per-twin results, filled fold by fold."""
        n = len(self.pts)
        return {
            "eta": np.full(n, np.nan),
            "pred": np.full(n, np.nan),
            "tpot": np.full(n, np.nan),
            "pred_tw": np.full(len(self.twins), np.nan),
        }

    def _fold(
        self,
        scored: dict[str, np.ndarray],
        key: str,
        test: np.ndarray,
        twin_test: np.ndarray,
    ) -> None:
        """Predict ``test`` and ``twin_test`` with the fold ``key`` (:meth:`_fit`)."""
        pts, specs, models = self.pts, self.specs, self.models
        tau = pts["median_tpot_ms"].to_numpy(float)
        shape, flat, fitted = self._fit(key)
        eta = sweep_fit.predict_level(pts[test], fitted)
        t_test = {k: v[test] for k, v in flat.items()}
        scored["eta"][test] = eta
        scored["pred"][test] = throughput_at_tpot(t_test, eta, tau[test])
        scored["tpot"][test] = (t_test["own_fixed"] + t_test["own_scaled"] / eta) * 1e3
        if twin_test.any():
            # The fp8 points' engines at fp4, from the fit that did not see the fp4 cell
            # (held out) or saw every cell (in-sample).
            sub_tw = self.twins[twin_test].reset_index(drop=True)
            flat_tw = _point_arrays(point_terms(sub_tw, specs, models, shape))
            e_tw = sweep_fit.predict_level(sub_tw, fitted)
            tau_tw = sub_tw["median_tpot_ms"].to_numpy(float)
            scored["pred_tw"][twin_test] = throughput_at_tpot(flat_tw, e_tw, tau_tw)

    def _out(self, scored: dict[str, np.ndarray], holdout: np.ndarray) -> pd.DataFrame:
        out = _frame(self.pts, holdout, scored["pred"], scored["eta"], scored["tpot"])
        out["predicted_fp4"] = np.nan
        out.loc[self.twins.index, "predicted_fp4"] = scored["pred_tw"]
        return out.reset_index(drop=True)


def validate(
    ix: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """The InferenceX validation of the report's serving model: :func:`validate_serving_model`.

    The error the report's tiers carry; the sweep physics' own is
    :func:`validate_sweep_model` (see :data:`MODEL_LABELS`).
    """
    return validate_serving_model(ix, specs, models, inputs=inputs)


def validate_sweep_model(
    ix: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """The sweep model, leave one accelerator x precision out (matched interactivity).

    Validated here but not used by the tiers (:data:`MODEL_LABELS`). The model is the
    sweep physics (:mod:`analysis.inference.decode_model`). Each fold fits the serving
    shape (:func:`analysis.inference.sweep_fit.fit_sweep_shape`) and the level
    (:func:`analysis.inference.sweep_fit.fit_level`: the precision effect per vendor x
    generation, and a physics prior, not the other vendor's gain, where
    the fold leaves a vendor without both formats) on every other cell's points only, and
    predicts the held-out cell's points at their measured median TPOT
    (:func:`throughput_at_tpot`). Columns:
    accelerator, vendor, precision, framework, isl, osl, conc, decode_tp, median_tpot_ms,
    measured (output tokens/s per GPU), predicted, ape_pct, holdout, run_url, eta,
    ``predicted_tpot_ms`` and ``tpot_ape_pct`` (the modelled median TPOT at the point's own
    concurrency, same fold: the well-conditioned companion of ``ape_pct``, which divides a
    TPOT error by the slope of TPOT in concurrency, small at low concurrency), and
    ``predicted_fp4`` (fp8 points of :data:`RATIO_ACCELERATORS` only: the model's fp4
    throughput of the same engine at the point's TPOT, from the fold that held the fp4
    cell out; what :func:`fp8_fp4_ratio` compares).
    """
    return stored_frame(
        "sweep_held_out",
        (ix, specs, models),
        inputs,
        lambda: _sweep_held_out(ix, specs, models, inputs),
    )


def _sweep_held_out(
    ix: pd.DataFrame | None,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    inputs: Inputs | None,
) -> pd.DataFrame:
    ix, specs, models = _load(ix, specs, models, inputs)
    pts = select(ix, specs, models)
    twins = _twins(pts, specs)
    raw = sweep_fit.raw_terms(pts, specs, models)
    raw_tw = sweep_fit.raw_terms(twins.reset_index(drop=True), specs, models)
    cell = (pts["accelerator"] + " x " + pts["precision"]).to_numpy()
    cell_tw = (twins["accelerator"] + " x " + twins["precision"]).to_numpy()
    eta = np.full(len(pts), np.nan)
    pred = np.full(len(pts), np.nan)
    pred_tw = np.full(len(twins), np.nan)
    tpot = np.full(len(pts), np.nan)
    tau = pts["median_tpot_ms"].to_numpy(float)
    tau_tw = twins["median_tpot_ms"].to_numpy(float)
    for key in sorted(set(cell)):
        test = cell == key
        train = ~test
        # The shape and the level both from the other cells only.
        tr = pts[train].reset_index(drop=True)
        shape = sweep_fit.fit_sweep_shape(tr, sweep_fit.subset(raw, train))
        terms = sweep_fit.shaped_terms(raw, shape)
        tr["eta"] = implied_eta(tr, {k: v[train] for k, v in terms.items()})
        fitted = sweep_fit.fit_level(tr)
        eta[test] = sweep_fit.predict_level(pts[test], fitted)
        t_test = {k: v[test] for k, v in terms.items()}
        pred[test] = throughput_at_tpot(t_test, eta[test], tau[test])
        tpot[test] = (t_test["own_fixed"] + t_test["own_scaled"] / eta[test]) * 1e3
        tw = cell_tw == key
        if tw.any():
            t_tw = sweep_fit.shaped_terms(sweep_fit.subset(raw_tw, tw), shape)
            e_tw = sweep_fit.predict_level(twins[tw], fitted)
            pred_tw[tw] = throughput_at_tpot(t_tw, e_tw, tau_tw[tw])
    out = _frame(pts, _holdout_labels(cell), pred, eta, tpot)
    out["predicted_fp4"] = np.nan
    out.loc[twins.index, "predicted_fp4"] = pred_tw
    return out.reset_index(drop=True)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Median and 90th-percentile APE per vendor and overall (like the MLPerf summary)."""
    return validation_summary(df[["vendor", "predicted", "measured", "ape_pct"]])


def tpot_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Held-out APE of the median TPOT at the measured concurrency, per vendor and overall.

    ``df`` is either validation's output. The same folds as :func:`summary`; the error of the
    step time itself, before the division by the TPOT-concurrency slope that the
    throughput at matched interactivity carries.
    """
    cols = {"vendor": df["vendor"], "ape": df["tpot_ape_pct"]}
    frame = pd.DataFrame(cols)
    rows = []
    for name, g in [*frame.groupby("vendor"), ("overall", frame)]:
        ape = g["ape"].dropna()
        rows.append(
            {
                "vendor": name,
                "predictions": int(len(ape)),
                "median_tpot_ape_pct": float(ape.median()) if len(ape) else float("nan"),
                "p90_tpot_ape_pct": float(ape.quantile(0.9)) if len(ape) else float("nan"),
                "within_10_pct": float((ape <= 10.0).mean() * 100.0) if len(ape) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


#: Concurrency bands of :func:`cell_summary`: where the fixed step cost dominates the
#: TPOT (at most 8 sequences) and where the per-sequence work does (32 and more).
LOW_CONC_MAX = 8
HIGH_CONC_MIN = 32


def cell_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per held-out accelerator x precision cell: where its error sits (level or slope).

    ``df`` is either validation's output. Per cell: ``points``, ``median_ape_pct``
    (throughput at the measured median TPOT), ``median_err_pct`` (signed, predicted over
    measured), ``median_tpot_err_pct`` (signed TPOT error at the measured concurrency) and
    the same at low (``conc`` <= :data:`LOW_CONC_MAX`) and high (>= :data:`HIGH_CONC_MIN`)
    concurrency. A level (efficiency) error moves both bands' TPOT error one way; a slope
    error (fixed step cost against per-sequence work) moves them apart: a modelled TPOT too
    low at low concurrency and too high at high concurrency is consistent with a fixed cost
    too small against a per-sequence cost too large (the level fit then splits the
    difference).
    """
    tpot_err = (df["predicted_tpot_ms"] / df["median_tpot_ms"] - 1.0) * 100.0
    frame = pd.DataFrame(
        {
            "cell": df["holdout"].str.replace("accelerator x precision: ", "", regex=False),
            "vendor": df["vendor"],
            "ape": df["ape_pct"],
            "err": (df["predicted"] / df["measured"] - 1.0) * 100.0,
            "tpot_err": tpot_err,
            "low": tpot_err.where(df["conc"] <= LOW_CONC_MAX),
            "high": tpot_err.where(df["conc"] >= HIGH_CONC_MIN),
        }
    )
    out = frame.groupby(["cell", "vendor"], sort=True).agg(
        points=("ape", "size"),
        median_ape_pct=("ape", "median"),
        median_err_pct=("err", "median"),
        median_tpot_err_pct=("tpot_err", "median"),
        low_conc_tpot_err_pct=("low", "median"),
        high_conc_tpot_err_pct=("high", "median"),
    )
    return out.reset_index()


def fp8_fp4_ratio(
    df: pd.DataFrame, accelerators: Sequence[str] = RATIO_ACCELERATORS
) -> pd.DataFrame:
    """FP8/FP4 throughput ratio at matched interactivity, measured and modelled.

    ``df`` is a validation's output or the in-sample fit's (:func:`validate_serving_model`,
    :func:`validate_sweep_model`, :func:`fit_serving_model`). For
    each fp8 point of an accelerator in ``accelerators``, each fp4 sweep (one engine
    configuration) of the same framework, lengths, TP and run date is interpolated at the
    fp8 point's interactivity (log-log, within that sweep's range); the measured fp4
    throughput there is the fp8 point's own configuration's (expert parallelism, DP
    attention) where that day ran it at fp4, else the best of the day's
    (:func:`fp8_fp4_matches`; the model's fp4 twin is that configuration). Same date, because
    InferenceX re-runs each configuration on many dates with the serving software of the
    day: pooled over dates the fp4 points are no curve (MI355X's measured ratio then swung
    from 0.06 to 5.3 between neighbouring interactivities, median 0.95, 67 matched points);
    matched by date the median is 0.51 (22 points; single days still range 0.14-2.6), fp4
    about twice fp8. The model's fp4 throughput at that TPOT is the frame's
    ``predicted_fp4`` (the same engine configuration at fp4, from the fold that held the
    fp4 cell out, or from the fit of every cell); a point without it is skipped. Rows in
    the order of their :data:`RATIO_KEYS` group, then of the frame. Columns: accelerator,
    framework, isl, osl, decode_tp, date, interactivity, measured_ratio, predicted_ratio,
    ratio_err_pct.

    Raises:
        ValueError: ``df`` has no ``predicted_fp4`` column (not a validation's output).
    """
    if "predicted_fp4" not in df.columns:
        raise ValueError(
            "fp8_fp4_ratio reads the model's fp4 twins from a 'predicted_fp4' column, which "
            "validate_serving_model, validate_sweep_model and fit_serving_model write; "
            "this frame has none"
        )
    match = fp8_fp4_matches(df, "measured", accelerators)
    keys = list(RATIO_KEYS)
    sel = df[
        df["accelerator"].isin(list(accelerators))
        & (df["precision"] == "fp8")
        & df.index.isin(match.index)
    ].dropna(subset=keys)
    sel = sel[np.isfinite(sel["predicted_fp4"].to_numpy(float))]
    if sel.empty:
        return pd.DataFrame()
    # Plain column types (lists, not the frame's extension dtypes), then the group order.
    out = pd.DataFrame({k: sel[k].tolist() for k in keys}, index=sel.index)
    out["interactivity"] = 1000.0 / sel["median_tpot_ms"].astype(float)
    out["measured_ratio"] = sel["measured"].astype(float) / match.loc[sel.index, "fp4"]
    out["predicted_ratio"] = sel["predicted"].astype(float) / sel["predicted_fp4"].astype(float)
    out = out.sort_values(keys, kind="stable").reset_index(drop=True)
    out["ratio_err_pct"] = (out["predicted_ratio"] / out["measured_ratio"] - 1.0).abs() * 100
    return out


def _point_arrays(terms: dict[str, Any]) -> dict[str, np.ndarray]:
    """:func:`point_terms` without its per-operator dicts (what the throughput reads)."""
    return {k: v for k, v in terms.items() if not isinstance(v, dict)}


def _log_curve(sweep: pd.DataFrame, value: str) -> tuple[np.ndarray, np.ndarray]:
    """(log interactivity, log ``value``) of one sweep, increasing in interactivity."""
    f = sweep.sort_values("median_tpot_ms")
    x = np.log(1000.0 / f["median_tpot_ms"].to_numpy(float))[::-1]
    y = np.log(f[value].to_numpy(float))[::-1]
    return x, y


def ratio_summary(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per accelerator: matched points, median measured and modelled FP8/FP4, median error."""
    return ratio_medians(ratios, ("accelerator",), "points")


def compare_models(
    serving: pd.DataFrame | None = None,
    sweep: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Both models' held-out InferenceX error side by side, each row labelled.

    ``serving`` / ``sweep`` are :func:`validate_serving_model` / :func:`validate_sweep_model`
    outputs (computed from ``inputs`` when None). One row per model and vendor (and
    ``overall``): ``model`` (the :data:`MODEL_LABELS` key), ``label``, ``vendor``,
    ``predictions``, ``median_ape_pct``, ``p90_ape_pct`` (throughput at the measured median
    TPOT), ``median_tpot_ape_pct`` (the step time at the measured concurrency), and on each
    model's ``overall`` row the FP8/FP4 ratio error per :data:`RATIO_ACCELERATORS` entry
    (``ratio_err_<accelerator>_pct``) and the AMD/NVIDIA ratio of the held-out frontiers
    (``amd_nvidia_pairs``, ``amd_nvidia_ratio_err_pct``: the best point under each TPOT
    bound, measured and predicted, per cell;
    :func:`analysis.inference.frontier_validation.held_out_frontiers`), NaN on the vendor
    rows.
    """
    frames = {
        "serving": serving if serving is not None else validate_serving_model(inputs=inputs),
        "sweep": sweep if sweep is not None else validate_sweep_model(inputs=inputs),
    }
    rows = []
    for model, df in frames.items():
        s = summary(df).set_index("vendor")
        t = tpot_summary(df).set_index("vendor")
        ratio = ratio_summary(fp8_fp4_ratio(df)).set_index("accelerator")
        pairs = frontier_validation.summary(frontier_validation.held_out_frontiers(df))
        pairs = pairs.set_index("vendor").loc["overall"]
        for vendor in s.index:
            row: dict[str, Any] = {
                "model": model,
                "label": MODEL_LABELS[model],
                "vendor": vendor,
                "predictions": int(s.at[vendor, "predictions"]),
                "median_ape_pct": float(s.at[vendor, "median_ape_pct"]),
                "p90_ape_pct": float(s.at[vendor, "p90_ape_pct"]),
                "median_tpot_ape_pct": float(t["median_tpot_ape_pct"].get(vendor, np.nan)),
            }
            overall = vendor == "overall"
            for acc in RATIO_ACCELERATORS:
                err = ratio["ratio_err_pct"].get(acc, np.nan) if overall else np.nan
                row[f"ratio_err_{acc}_pct"] = float(err)
            row["amd_nvidia_pairs"] = float(pairs["ratio_pairs"]) if overall else np.nan
            row["amd_nvidia_ratio_err_pct"] = (
                float(pairs["ratio_median_err_pct"]) if overall else np.nan
            )
            rows.append(row)
    return pd.DataFrame(rows)


def key_results(comparison: pd.DataFrame) -> dict[str, float | str]:
    """``inferencex_mape_{serving,sweep}_{AMD,NVIDIA,overall}``, their labels and ratios.

    ``inferencex_ratio_err_{serving,sweep}``: the median error of the AMD/NVIDIA ratio of
    the held-out frontiers (:func:`compare_models`' ``amd_nvidia_ratio_err_pct``).

    ``comparison`` is :func:`compare_models`' output. ``inferencex_model_{serving,sweep}``
    hold the :data:`MODEL_LABELS` text, so a reader of ``results.json`` knows that the
    ``serving`` figures are the error of the model behind the tiers and the ``sweep`` ones
    of a candidate the tiers do not use. The figures are rounded to one decimal.
    """
    out: dict[str, float | str] = {}
    for model, label in MODEL_LABELS.items():
        s = comparison[comparison["model"] == model].set_index("vendor")
        out[f"inferencex_model_{model}"] = label
        for v in ("AMD", "NVIDIA", "overall"):
            # One decimal, as every table prints it: results.json's four significant
            # digits would otherwise round 55.946 to 55.95 and the appendix show 56.0.
            value = round(float(s["median_ape_pct"].get(v, np.nan)), 1)
            out[f"inferencex_mape_{model}_{v}"] = value
        ratio = float(s["amd_nvidia_ratio_err_pct"].get("overall", np.nan))
        out[f"inferencex_ratio_err_{model}"] = round(ratio, 1)
    return out


def comparison_note(comparison: pd.DataFrame) -> str:
    """One Markdown paragraph: both models' held-out InferenceX error, each named.

    ``comparison`` is :func:`compare_models`' output. The first figure scores the shape
    the tiers use (:data:`MODEL_LABELS` ``serving``) at an efficiency fitted on the sweeps,
    not the tiers' MLPerf-calibrated one (their own path:
    :mod:`analysis.inference.frontier_validation`); the sweep model's is said to be a
    candidate the tiers do not use.
    """
    s = comparison.set_index(["model", "vendor"])

    def part(model: str) -> str:
        def med(v: str) -> float:
            return float(s["median_ape_pct"].get((model, v), np.nan))

        return f"{med('overall'):.1f}% (AMD {med('AMD'):.1f}%, NVIDIA {med('NVIDIA'):.1f}%)"

    ratio = float(s["amd_nvidia_ratio_err_pct"].get(("serving", "overall"), np.nan))
    pairs = float(s["amd_nvidia_pairs"].get(("serving", "overall"), np.nan))
    return (
        "**Predicting each InferenceX accelerator x precision cell from the others (output "
        "tokens/s per GPU at the measured median TPOT), the median APE of the "
        f"{MODEL_LABELS['serving']} is {part('serving')}**, its efficiency fitted on the "
        "other cells' sweeps (the tiers take theirs from MLPerf: their own path is scored "
        "next). The AMD/NVIDIA ratio of its best point under each bound, what a tier "
        f"decides on, is off by a median {ratio:.1f}% over {pairs:.0f} matched pairs. "
        f"The {MODEL_LABELS['sweep']} scores {part('sweep')} on the same folds."
    )


def in_sample_note(fitted: pd.DataFrame, held_out: pd.DataFrame) -> str:
    """One sentence: the serving model's error fitted on every point beside held out.

    ``fitted``: :func:`fit_serving_model`; ``held_out``: :func:`validate_serving_model`.
    Also the in-sample error left with each engine configuration's level from its other
    points (:func:`analysis.inference.latency_diagnostics.error_budget`'s last row).
    """

    def overall(df: pd.DataFrame) -> tuple[float, int]:
        s = summary(df).set_index("vendor")
        return float(s.at["overall", "median_ape_pct"]), int(s.at["overall", "predictions"])

    (fit, n_fit), (held, n_held) = overall(fitted), overall(held_out)
    budget = error_budget(fitted)
    config = float(budget["overall_median_ape_pct"].iloc[-1])
    return (
        f"Fitted on every point and scored on the same points, the serving model's median "
        f"error is {fit:.1f}% over {n_fit} points (held out: {held:.1f}% over {n_held}); "
        f"with each engine configuration's level taken from its other points it is "
        f"{config:.1f}%."
    )
