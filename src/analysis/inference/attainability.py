"""How low the InferenceX held-out error can go: the serving model with its level given.

The held-out validation (:mod:`analysis.inference.latency_validation`) asks the serving
model for a whole accelerator x precision cell it never saw. :func:`attainable_floor`
asks what the same model scores when it is *told* more and more about the efficiency
level of the points it is scored on, every piece fitted on every point (in-sample, so
each row is optimistic): its own level fit, then the level of each cell, each serving
stack, each engine configuration and each sweep (one configuration on one run date)
given as that group's median implied efficiency. One row instead takes each cell's own
level and carries the engine-configuration effects (stack, lengths, TP, expert
parallelism, attention layout) over from the *other* cells: the most a model that
predicts a held-out cell from the rest could know about it. Each row gives the median
APE of throughput at the measured median TPOT (the held-out metric) per vendor and
overall, and the median FP8/FP4 ratio error at matched interactivity on the points
:func:`analysis.inference.latency_validation.fp8_fp4_ratio` pairs (each fp8 point's
modelled fp4 twin at the twin's own group level).

Read on the bundled sweeps (2026-12-06; ``validate-models``), overall median APE (AMD /
NVIDIA); FP8/FP4 ratio error MI355X / B200:

* the model fitted on every point: 27.3 % (36.2 / 23.0); 24.2 / 21.0 %;
* each cell's level given: 28.0 % (37.2 / 23.0); 19.3 / 21.0 %;
* ... with the configuration effects of the other cells: 28.1 % (34.4 / 22.3); 25.4 /
  20.2 %: the effects do not carry from cell to cell;
* each cell x serving stack's level given: 27.9 % (35.2 / 24.4); 25.2 / 13.2 %;
* each engine configuration's level given, over its run dates: 16.9 % (27.8 / 8.8);
  29.0 / 14.8 %;
* each sweep's level given: 7.6 % (18.0 / 4.3); 23.2 / 13.2 %.

So for NVIDIA the shape is right along a sweep once its level is known (4.3 %), and
what is left above that is the level of each engine configuration and run date. Told
each held-out cell's own level, the model is at 28 %: a held-out median of 20 % needs the
level of the engine configurations inside a cell the model did not see, which the other
cells do not carry, and for AMD even every configuration's level leaves 27.8 % (its run
dates move it; :func:`analysis.inference.latency_validation.date_repeatability`). No
row brings the MI355X FP8/FP4 ratio error under 19 %, each sweep's own level included:
at matched interactivity the ratio is read where the fp8 or fp4 curve is flat, so a few
per cent of TPOT move it by tens of per cent. These are diagnostics: no model reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from analysis.inference import sweep_fit
from analysis.inference.latency import (
    RATIO_ACCELERATORS,
    SWEEP_KEYS,
    _load,
    fitted_shape,
    point_terms,
    prepare,
    throughput_at_tpot,
)
from analysis.inference.latency_validation import (
    _frame,
    _point_arrays,
    _twins,
    fp8_fp4_matches,
    fp8_fp4_ratio,
)
from analysis.inputs import Inputs

#: The engine configuration of a point: a sweep without its run date.
CONFIG_COLUMNS: tuple[str, ...] = tuple(c for c in SWEEP_KEYS if c != "date")
#: Configuration effects a held-out cell could take from the other cells (transfer row).
TRANSFER_COLUMNS: tuple[str, ...] = (
    "framework",
    "isl",
    "osl",
    "decode_tp",
    "decode_ep",
    "decode_dp_attention",
)
#: Backfitting passes of the transferred configuration effects (converged well before).
TRANSFER_ITERATIONS = 10
#: The rows of :func:`attainable_floor`, least told first: (label, what the model is told,
#: how the level is given). ``"fit"``: the model's own level fit; ``"transfer"``: each
#: cell's level with the other cells' configuration effects; a tuple: each group's median.
FLOOR_LEVELS: tuple[tuple[str, str, Any], ...] = (
    ("model fitted on every point (level from its fit)", "its own fit", "fit"),
    (
        "level given per accelerator x precision",
        "each cell's level",
        ("accelerator", "precision"),
    ),
    (
        "... with configuration effects from the other cells",
        "each cell's level and the other cells' configuration effects",
        "transfer",
    ),
    (
        "level given per accelerator x precision x stack",
        "each cell and stack's level",
        ("accelerator", "precision", "framework"),
    ),
    (
        "level given per engine configuration (over its run dates)",
        "each engine configuration's level",
        CONFIG_COLUMNS,
    ),
    (
        "level given per sweep (engine configuration on one run date)",
        "each sweep's level",
        tuple(SWEEP_KEYS),
    ),
)


def _keys(frame: pd.DataFrame, cols: Sequence[str]) -> pd.Series:
    """One string per combination of ``cols`` (missing values spelled out)."""
    return frame[list(cols)].astype(str).agg("|".join, axis=1)


def _group_levels(
    pts: pd.DataFrame, twins: pd.DataFrame, cols: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each point's and each twin's group median implied efficiency (geometric)."""
    key = _keys(pts, cols)
    ok = pts["eta"].notna()
    med = np.exp(np.log(pts.loc[ok, "eta"]).groupby(key[ok]).median())
    return key.map(med).to_numpy(float), _keys(twins, cols).map(med).to_numpy(float)


def _transfer_levels(pts: pd.DataFrame, twins: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's own median level, moved by configuration effects of the other cells.

    Per held-out cell, log eta of the other cells' points less their cell's median is
    backfitted on :data:`TRANSFER_COLUMNS` (alternating medians); the held-out cell's
    points take their own cell's median plus the effects, centred within the cell so
    the cell's level stays the one given. Twins take their cell's level and effects.
    """
    cell = (pts["accelerator"] + " x " + pts["precision"]).to_numpy(object)
    cell_tw = (twins["accelerator"] + " x " + twins["precision"]).to_numpy(object)
    log_eta = np.log(pts["eta"].to_numpy(float))
    cols = list(TRANSFER_COLUMNS)
    key = {c: pts[c].astype(str).to_numpy(object) for c in cols}
    key_tw = {c: twins[c].astype(str).to_numpy(object) for c in cols}
    out, out_tw = np.full(len(pts), np.nan), np.full(len(twins), np.nan)
    for c_name in sorted(set(cell.tolist())):
        test, tw = cell == c_name, cell_tw == c_name
        train = ~test & np.isfinite(log_eta)
        res = pd.Series(log_eta[train]) - (
            pd.Series(log_eta[train]).groupby(cell[train]).transform("median").to_numpy()
        )
        effects: dict[str, pd.Series] = {c: pd.Series(dtype=float) for c in cols}
        for _ in range(TRANSFER_ITERATIONS):
            for c in cols:
                step = res.groupby(key[c][train]).median()
                effects[c] = effects[c].add(step, fill_value=0.0)
                res = res - pd.Series(key[c][train]).map(step).to_numpy()
        own = np.log(pts.loc[test & np.isfinite(log_eta), "eta"]).median()
        adj = sum(pd.Series(key[c][test]).map(effects[c]).fillna(0.0).to_numpy() for c in cols)
        adj_tw = sum(pd.Series(key_tw[c][tw]).map(effects[c]).fillna(0.0).to_numpy() for c in cols)
        centre = float(np.median(adj))
        out[test] = np.exp(own + adj - centre)
        out_tw[tw] = np.exp(own + adj_tw - centre)
    return out, out_tw


def attainable_floor(inputs: Inputs | None = None) -> pd.DataFrame:
    """The serving model's InferenceX error as its level is given more detail (in-sample).

    One row per :data:`FLOOR_LEVELS` entry: ``level``, ``groups`` (levels given; the fit
    row 1), ``<vendor>_median_ape_pct`` and ``overall_median_ape_pct`` (throughput at the
    measured median TPOT, points the model reaches), and ``ratio_err_<accelerator>_pct``
    for :data:`RATIO_ACCELERATORS` (median FP8/FP4 ratio error at matched interactivity).
    The shape is fitted on every sweep, as in the report; see the module docstring.
    """
    ix, specs, models = _load(None, None, None, inputs)
    shape = fitted_shape(inputs)
    pts, terms = prepare(ix, specs, models, shape)
    flat = _point_arrays(terms)
    # The measured side of every row's FP8/FP4 ratios and the fp4 twins it names
    # (measurements only: computed once).
    matches = fp8_fp4_matches(pts.assign(measured=pts["output_tput_per_gpu"]), "measured")
    twins = _twins(pts, specs, matches)
    tw_frame = twins.reset_index(drop=True)
    flat_tw = _point_arrays(point_terms(tw_frame, specs, models, shape))
    tau = pts["median_tpot_ms"].to_numpy(float)
    tau_tw = tw_frame["median_tpot_ms"].to_numpy(float)
    fitted = sweep_fit.fit_level(pts)
    cell = (pts["accelerator"] + " x " + pts["precision"]).to_numpy()
    rows = []
    for label, _, how in FLOOR_LEVELS:
        if how == "fit":
            eta, eta_tw, groups = (
                sweep_fit.predict_level(pts, fitted),
                sweep_fit.predict_level(tw_frame, fitted),
                1,
            )
        elif how == "transfer":
            eta, eta_tw = _transfer_levels(pts, tw_frame)
            groups = len(set(cell.tolist()))
        else:
            eta, eta_tw = _group_levels(pts, tw_frame, how)
            groups = int(_keys(pts, how).nunique())
        pred = throughput_at_tpot(flat, eta, tau)
        tpot = (flat["own_fixed"] + flat["own_scaled"] / eta) * 1e3
        frame = _frame(pts, cell, pred, eta, tpot)
        frame["predicted_fp4"] = np.nan
        frame.loc[twins.index, "predicted_fp4"] = throughput_at_tpot(flat_tw, eta_tw, tau_tw)
        scores = _scores(frame.reset_index(drop=True), matches)
        rows.append({"level": label, "groups": groups, **scores})
    return pd.DataFrame(rows)


def _scores(frame: pd.DataFrame, matches: pd.DataFrame) -> dict[str, float]:
    """Median APE per vendor and overall, and the FP8/FP4 ratio error per accelerator."""
    ok = frame[np.isfinite(frame["predicted"])]
    out = {
        f"{v}_median_ape_pct": float(g["ape_pct"].median())
        for v, g in ok.groupby("vendor", sort=True)
    }
    out["overall_median_ape_pct"] = float(ok["ape_pct"].median())
    ratios = fp8_fp4_ratio(frame, matches=matches)
    for acc in RATIO_ACCELERATORS:
        sel = ratios[ratios["accelerator"] == acc] if len(ratios) else ratios
        out[f"ratio_err_{acc}_pct"] = float(sel["ratio_err_pct"].median()) if len(sel) else np.nan
    return out


def floor_note(floor: pd.DataFrame, bar_pct: float = 20.0) -> str:
    """One sentence on :func:`attainable_floor`'s frame: where the held-out bar is reached.

    Names the error with each cell's level given, the least the model must be told for
    its median error to reach ``bar_pct``, and the lowest MI355X FP8/FP4 ratio error.
    """
    told = {label: short for label, short, _ in FLOOR_LEVELS}
    cell = float(floor.loc[floor["level"] == FLOOR_LEVELS[1][0], "overall_median_ape_pct"].iloc[0])
    under = floor[floor["overall_median_ape_pct"] <= bar_pct]
    first = (
        f"it is under {bar_pct:g} % only when told {told[under['level'].iloc[0]]}"
        if len(under)
        else f"no row brings it under {bar_pct:g} %"
    )
    ratio = float(floor["ratio_err_MI355X_pct"].min())
    return (
        f"Told each cell's own level, the model's median error is {cell:.1f} %; {first}; "
        f"the lowest MI355X FP8/FP4 ratio error of any row is {ratio:.1f} %."
    )
