"""Tables and trends of a calibration (efficiency per level, power, drift per round)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import ids
from analysis.inference.benchmarks import benchmark_def
from analysis.inference.calibration import (
    Calibration,
    _calibration,
    _default_implied,
    default_calibration,
    fit_calibration,
    rows_at_compute_ratio,
    usable_rows,
)
from analysis.inference.paired_effects import _release_index, _round_key
from analysis.inference.roofline import _median
from analysis.inputs import Inputs


def efficiency_table(
    calibration: Calibration | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """The fitted factors as a tidy table: level, vendor, generation, round, eta."""
    cal = _calibration(calibration, inputs=inputs)
    rows = (
        [
            {
                "level": "vendor x generation x round",
                "vendor": v,
                "generation": g,
                "round": r,
                "eta": e,
            }
            for (v, g, r), e in cal.by_group.items()
        ]
        + [
            {"level": "vendor x generation", "vendor": v, "generation": g, "round": "all", "eta": e}
            for (v, g), e in cal.by_generation.items()
        ]
        + [
            {"level": "vendor", "vendor": v, "generation": "all", "round": "all", "eta": e}
            for v, e in cal.by_vendor.items()
        ]
        + [
            {
                "level": f"accelerator x round: {a}",
                "vendor": ids.vendor_of(a),
                "generation": "",
                "round": r,
                "eta": e,
            }
            for (a, r), e in cal.by_accelerator.items()
        ]
        + [
            {
                "level": f"scenario scale: {k}",
                "vendor": "all",
                "generation": "all",
                "round": "all",
                "eta": s,
            }
            for k, s in cal.scenario_scale.items()
        ]
        + [
            {
                "level": f"vendor scenario deviation: {k}",
                "vendor": v,
                "generation": "all",
                "round": "all",
                "eta": s,
            }
            for (v, k), s in cal.vendor_scenario_scale.items()
        ]
        + [
            {
                "level": "power exponent",
                "vendor": v,
                "generation": "all",
                "round": "all",
                "eta": b,
            }
            for v, b in sorted(cal.power_exponent.items())
        ]
        + [
            {
                "level": f"compute ratio, workload: {k}",
                "vendor": "all",
                "generation": "all",
                "round": "all",
                "eta": s,
            }
            for k, s in sorted(cal.compute.workload.items())
        ]
        + [
            {
                "level": f"compute ratio, precision: {k}",
                "vendor": "all",
                "generation": "all",
                "round": "all",
                "eta": s,
            }
            for k, s in sorted(cal.compute.precision.items())
        ]
    )
    return pd.DataFrame(rows)


def power_table(
    calibration: Calibration | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """Per accelerator: the efficiency multiplier of running below its generation's top bin.

    Columns: accelerator, vendor, tdp_w, top_bin_w (the highest TDP of its vendor x
    generation), power_exponent (the vendor's, :func:`_power_exponent`), power_pairs and
    factor = (tdp_w / top_bin_w) ** power_exponent (1 for a top bin).
    """
    cal = _calibration(calibration, inputs=inputs)
    rows = [
        {
            "accelerator": a,
            "vendor": ids.vendor_of(a),
            "tdp_w": tdp,
            "top_bin_w": top,
            "power_exponent": cal.power_exponent.get(ids.vendor_of(a), 0.0),
            "power_pairs": int(cal.power_pairs.get(ids.vendor_of(a), 0)),
            "factor": cal.power_factor(ids.vendor_of(a), a),
        }
        for a, (tdp, top) in cal.power_ref.items()
    ]
    return pd.DataFrame(rows)


def power_cap_runs(
    rows: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """MLPerf runs of one part by one submitter at more than one board power (direct tests).

    Per (round, submitter, accelerator, benchmark, scenario) with a stated power cap next
    to an uncapped run: each power level's median measured tokens/s per accelerator, its
    ratio to the highest level, and the elasticity log(ratio) / log(power ratio).
    """
    rows = _default_implied(inputs=inputs) if rows is None else rows
    keys = ["round", "submitter", "accelerator", "benchmark", "scenario"]
    cols = [*keys, "power_w", "measured", "throughput_ratio", "elasticity"]
    if "power_w" not in rows or rows.empty:
        return pd.DataFrame(columns=cols)
    df = rows.groupby([*keys, "power_w"], as_index=False)["measured"].median()
    levels = df.groupby(keys)["power_w"].transform("nunique")
    df = df[levels > 1].copy()
    top = df.groupby(keys)["power_w"].transform("max")
    top_tps = df.loc[df["power_w"] == top].set_index(keys)["measured"]
    ref = top_tps.reindex(pd.MultiIndex.from_frame(df[keys])).to_numpy(dtype=float)
    df["throughput_ratio"] = df["measured"].to_numpy(dtype=float) / ref
    with np.errstate(divide="ignore", invalid="ignore"):
        el = np.log(df["throughput_ratio"]) / np.log(df["power_w"] / top)
    df["elasticity"] = np.where(df["power_w"] < top, el, np.nan)
    return df[cols].sort_values([*keys, "power_w"]).reset_index(drop=True)


def efficiency_trend(
    rows: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Achieved fraction of the roofline per vendor per round (llama2-70b Offline basis).

    Each usable MLPerf run's eta at the calibration's compute ratio (the bytes' efficiency,
    :func:`rows_at_compute_ratio`) divided by its workload and scenario scales, then the
    median per vendor and round, with the number of runs behind it; and the vendor's
    measured software drift (:attr:`Calibration.drift_per_round`, percent per MLPerf
    release, paired on the same accelerator x benchmark x scenario x precision class, each
    benchmark x scenario voting once; :func:`drift_pairs_table` lists the pairs) with its
    pair count.
    """
    if calibration is None:  # the fit of these rows (the bundled rows' fit is cached)
        cal = (
            default_calibration(inputs=inputs)
            if rows is None
            else fit_calibration(rows, inputs=inputs)
        )
    else:
        cal = calibration
    rows = _default_implied(inputs=inputs) if rows is None else rows
    ok = usable_rows(rows_at_compute_ratio(rows, cal, inputs=inputs)).copy()
    scale = [
        cal.workload(b)[0] * cal.scenario(v, sc)
        for b, sc, v in zip(ok["benchmark"], ok["scenario"], ok["vendor"], strict=True)
    ]
    ok["eta_normalized"] = ok["eta"].to_numpy() / np.asarray(scale)
    out = (
        ok.groupby(["vendor", "round"])["eta_normalized"]
        .agg(eta=_median, runs="count")
        .reset_index()
    )
    out["drift_pct_per_round"] = [
        (cal.drift_per_round.get(v, 1.0) - 1.0) * 100.0 for v in out["vendor"]
    ]
    out["drift_pairs"] = [int(cal.drift_pairs.get(v, 0)) for v in out["vendor"]]
    out["round_order"] = out["round"].map(_round_key)
    return (
        out.sort_values(["vendor", "round_order"])
        .drop(columns="round_order")
        .reset_index(drop=True)
    )


#: Keys of a drift pair's cell (:func:`drift_pairs_table`).
DRIFT_CELL = ("vendor", "benchmark", "scenario", "accelerator", "precision_class")


def drift_pairs_table(
    rows: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """The pairs behind the software drift: one cell seen in two consecutive rounds.

    Per cell of :data:`DRIFT_CELL` (the benchmark without its accuracy suffix) and round,
    the median eta of its usable runs; each pair of consecutive rounds of a cell gives
    ``change_pct`` (eta ratio - 1) and ``pct_per_release`` (the log-linear change per
    MLPerf release, :func:`analysis.inference.calibration._release_index`). Data, not a
    fit: the median polish's drift (:attr:`Calibration.drift_per_round`) reads the same
    pairs after its power adjustment, each benchmark x scenario voting once. By default
    the bundled runs at the calibration's compute ratio (:func:`rows_at_compute_ratio`,
    the efficiencies the drift is fitted on).
    """
    if rows is None:
        rows = rows_at_compute_ratio(
            _default_implied(inputs=inputs), default_calibration(inputs=inputs), inputs=inputs
        )
    cols = [*DRIFT_CELL, "round_from", "round_to", "releases", "change_pct", "pct_per_release"]
    ok = usable_rows(rows)
    if ok.empty or "accelerator" not in ok:
        return pd.DataFrame(columns=cols)
    ok = ok.assign(
        benchmark=[benchmark_def(b).benchmark for b in ok["benchmark"]],
        precision_class=ok.get("precision_class", "native"),
        log_eta=np.log(ok["eta"].to_numpy(dtype=float)),
    )
    cell = ok.groupby([*DRIFT_CELL, "round"])["log_eta"].median().reset_index()
    cell["release"] = cell["round"].map(_release_index)
    cell = cell.sort_values([*DRIFT_CELL, "release"]).reset_index(drop=True)
    prev = cell.groupby(list(DRIFT_CELL))[["round", "release", "log_eta"]].shift(1)
    pairs = cell.assign(
        round_from=prev["round"],
        round_to=cell["round"],
        releases=cell["release"] - prev["release"],
        d=cell["log_eta"] - prev["log_eta"],
    )
    pairs = pairs[pairs["round_from"].notna()].copy()
    pairs["change_pct"] = (np.exp(pairs["d"]) - 1.0) * 100.0
    pairs["pct_per_release"] = (np.exp(pairs["d"] / pairs["releases"]) - 1.0) * 100.0
    return pairs[cols].reset_index(drop=True)
