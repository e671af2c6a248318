"""The Monte Carlo: joint draws of every ranged input and the cost comparisons."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from analysis.inputs import Inputs
from analysis.params import Scenario
from analysis.tco.costs import CostInputs, _id_columns, _point_params, cost_inputs
from analysis.tco.formulas import Z_95, cost_per_million_tokens, paid_gpu_hour_usd


# --- Monte Carlo -------------------------------------------------------------------------
def _triangular(rng: np.random.Generator, v: float, lo: float, hi: float, n: int) -> np.ndarray:
    if not np.isfinite(v):
        return np.full(n, np.nan)
    if hi - lo <= 1e-12 * max(1.0, abs(v)):
        return np.full(n, v)
    return rng.triangular(lo, min(max(v, lo), hi), hi, n)


def draw_inputs(inp: CostInputs, n: int, seed: int) -> dict[str, np.ndarray]:
    """Joint Monte Carlo draws: globals shape (n,), per-accelerator shape (n_acc, n)."""
    rng = np.random.default_rng(seed)
    d: dict[str, np.ndarray] = {}
    for name, row in inp.globals.iterrows():
        d[str(name)] = _triangular(rng, row["value"], row["low"], row["high"], n)
    pa = inp.per_acc
    for name in (
        "gpu_price_usd",
        "server_price_usd",
        "server_power_kw",
        "porting_engineer_months",
        "software_usd_per_gpu_year",
    ):
        d[name] = np.stack(
            [
                _triangular(
                    rng, pa.at[a, name], pa.at[a, f"{name}_low"], pa.at[a, f"{name}_high"], n
                )
                for a in inp.accelerators
            ]
        )
    rent = []
    for a in inp.accelerators:
        pool = inp.quotes[a]
        rent.append(pool[rng.integers(0, pool.size, n)] if pool.size else np.full(n, np.nan))
    d["rental_usd_per_gpu_hour"] = np.stack(rent)
    # One standard normal per accelerator and draw: the same "faster or slower than
    # modelled" world for serving and training; each scales it by its own sigma (serving:
    # narrower where the team measured). ``sigma * z`` equals ``rng.normal(0, sigma)``
    # draw for draw, so scenarios without measurements draw exactly what they drew before.
    z = rng.standard_normal((len(inp.accelerators), n))
    d["throughput_factor"] = np.exp(inp.throughput_log_sigma * z)
    sig = np.array(
        [inp.inference_log_sigma.get(a, inp.throughput_log_sigma) for a in inp.accelerators]
    )
    d["inference_throughput_factor"] = np.exp(sig[:, None] * z)
    d["throughput_z"] = z
    return d


def tier_throughput_factors(
    grp: pd.DataFrame, idx: list[int], d: dict[str, np.ndarray]
) -> np.ndarray:
    """Per tier row and draw: the factor its serving throughput is drawn with.

    A row with a finite ``throughput_log_sigma`` (the error of how its figure was made,
    :func:`analysis.inference.tier_uncertainty`) scales its accelerator's standard normal
    by that sigma; the others take the accelerator's serving factor. The same normal per
    accelerator keeps its tiers in one "faster or slower than modelled" world.
    """
    factor = d["inference_throughput_factor"][idx]
    if "throughput_log_sigma" not in grp.columns:
        return factor
    sig = grp["throughput_log_sigma"].to_numpy(dtype=float)
    own = np.isfinite(sig)
    return np.where(
        own[:, None], np.exp(np.where(own, sig, 0.0)[:, None] * d["throughput_z"][idx]), factor
    )


def with_throughput_sigmas(inp: CostInputs, sigmas: Mapping[str, float]) -> CostInputs:
    """``inp`` with the serving throughput sigma of some accelerators replaced.

    ``sigmas``: accelerator -> lognormal sigma (:func:`analysis.measurements.throughput_sigmas`:
    the residual of the team's own measurements around the corrected model). The tier
    Monte Carlo draws those accelerators' throughput error with it, and the tornado swings
    their ``throughput_factor`` over its 5-95 % range; accelerators not listed, and the
    training run, keep ``A-throughput-error``.
    """
    known = {a: float(v) for a, v in sigmas.items() if a in inp.accelerators}
    if not known:
        return inp
    per = inp.per_acc.copy()
    for a, sig in known.items():
        per.at[a, "throughput_factor_low"] = float(np.exp(-Z_95 * sig))
        per.at[a, "throughput_factor_high"] = float(np.exp(Z_95 * sig))
    return replace(inp, per_acc=per, inference_log_sigma={**inp.inference_log_sigma, **known})


@dataclass(frozen=True)
class Simulation:
    """Monte Carlo results: summaries plus the joint draws (for tests and charts)."""

    gpu_hour: pd.DataFrame
    #: per tier and accelerator: the cost quantiles, and ``throughput_log_sigma`` (the
    #: sigma the row drew with, NaN: its part's) where the tiers carried one
    tiers: pd.DataFrame
    tier_summary: pd.DataFrame
    training: pd.DataFrame
    training_summary: dict[str, Any]
    paid_draws: np.ndarray
    useful_draws: np.ndarray


def _nanmedian(x: np.ndarray) -> np.ndarray:
    """Median over the last axis; NaN (without a warning) where every draw is NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        median: np.ndarray = np.nanmedian(x, axis=-1)
    return median


def _q(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """5th, 50th and 95th percentiles over the last axis (NaN rows stay NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q = np.nanquantile(x, [0.05, 0.5, 0.95], axis=-1)
    return q[0], q[1], q[2]


def _compare(costs: np.ndarray, meta: pd.DataFrame) -> dict[str, Any]:
    """Cheapest shipping candidate overall and per vendor (by median), P(AMD cheaper)."""
    med = _nanmedian(costs) if costs.size else np.array([])
    ok = (
        (meta["status"].to_numpy() == "shipping")
        & meta["feasible"].to_numpy(dtype=bool)
        & np.isfinite(med)
    )
    out: dict[str, Any] = {
        "cheapest": "",
        "cheapest_amd": "",
        "cheapest_nvidia": "",
        "p_amd_cheaper": np.nan,
        "cost_ratio_p05": np.nan,
        "cost_ratio": np.nan,
        "cost_ratio_p95": np.nan,
    }
    best: dict[str, int] = {}
    for vendor in ("AMD", "NVIDIA"):
        idx = np.flatnonzero(ok & (meta["vendor"].to_numpy() == vendor))
        if idx.size:
            best[vendor] = int(idx[np.argmin(med[idx])])
            out[f"cheapest_{vendor.lower()}"] = meta["accelerator"].iloc[best[vendor]]
    if best:
        i = min(best.values(), key=lambda k: med[k])
        out["cheapest"] = meta["accelerator"].iloc[i]
    if len(best) == 2:
        a, n = costs[best["AMD"]], costs[best["NVIDIA"]]
        out["p_amd_cheaper"] = float(np.mean(a < n))
        # The ratio per draw, not the ratio of the two intervals: both vendors share most
        # inputs in one draw (utilization, power, cost of capital), so their costs move
        # together and the ratio's interval is much narrower than the two overlapping ones.
        with np.errstate(all="ignore"):
            lo, mid, hi = _q((a / n)[None, :])
        out["cost_ratio_p05"], out["cost_ratio"], out["cost_ratio_p95"] = (
            float(lo[0]),
            float(mid[0]),
            float(hi[0]),
        )
    return out


def simulate(
    sc: Scenario,
    tiers: pd.DataFrame | None = None,
    training: pd.DataFrame | None = None,
    *,
    inputs: CostInputs | None = None,
    n: int | None = None,
    tables: Inputs | None = None,
) -> Simulation:
    """Monte Carlo of $/GPU-hour, $/million tokens per tier and $ per training run.

    Args:
        sc: the scenario (mode, draws and seed from ``sc.cost``).
        tiers: ``inference.evaluate_tiers(sc)`` output (tier_index, tier, accelerator,
            feasible, tokens_per_s_per_gpu, ...); None skips the tier costs.
        training: ``training.evaluate_training(sc)`` output (accelerator, feasible,
            gpu_hours, ...); None skips the training costs.
        inputs: precomputed :func:`cost_inputs` (default: built from ``tables``).
        n: number of draws (default ``sc.cost.mc_draws``).
        tables: the tables ``cost_inputs`` reads when ``inputs`` is None (default: the
            default inputs, i.e. ``data/``). Named apart from ``inputs``, which is the
            cost model's own inputs here.
    """
    inp = inputs or cost_inputs(sc, inputs=tables)
    n = n or sc.cost.mc_draws
    d = draw_inputs(inp, n, sc.cost.seed)
    paid = np.asarray(paid_gpu_hour_usd(d, inp.mode, inp.fleet_gpus), dtype=float)
    paid = np.broadcast_to(paid, (len(inp.accelerators), n))
    useful = paid / d["utilization"]
    accs = list(inp.accelerators)
    p05, p50, p95 = _q(paid)
    gh = pd.DataFrame(
        {
            "accelerator": accs,
            **_id_columns(accs),
            "mode": inp.mode,
            "gpu_hour_usd_p05": p05,
            "gpu_hour_usd": p50,
            "gpu_hour_usd_p95": p95,
            "useful_gpu_hour_usd": _nanmedian(useful),
            "quote_note": [inp.quote_note[a] for a in accs],
        }
    )
    pos = {a: i for i, a in enumerate(accs)}
    pp = _point_params(inp)
    point_paid = np.broadcast_to(
        np.asarray(paid_gpu_hour_usd(pp, inp.mode, inp.fleet_gpus), dtype=float), (len(accs),)
    )
    # The price rule's figure (defaults, median quote): the $/GPU-hour every chapter prints.
    gh["gpu_hour_usd_point"] = point_paid
    point_useful = point_paid / pp["utilization"]
    point_useful = np.broadcast_to(point_useful, (len(accs),))
    tier_rows, summ = [], []
    if tiers is not None and not tiers.empty:
        for (ti, tname), grp in tiers.groupby(["tier_index", "tier"], sort=True):
            grp = grp[grp["accelerator"].isin(pos)].reset_index(drop=True)
            idx = [pos[a] for a in grp["accelerator"]]
            tps = grp["tokens_per_s_per_gpu"].to_numpy(dtype=float)[:, None]
            feas = grp["feasible"].to_numpy(dtype=bool)[:, None]
            with np.errstate(all="ignore"):
                c = cost_per_million_tokens(useful[idx], tps * tier_throughput_factors(grp, idx, d))
            c = np.where(feas & np.isfinite(tps), c, np.nan)
            lo, mid, hi = _q(c)
            meta = grp.assign(**_id_columns(grp["accelerator"]))
            tier_rows.append(
                pd.DataFrame(
                    {
                        "tier_index": ti,
                        "tier": tname,
                        "accelerator": grp["accelerator"],
                        "vendor": meta["vendor"],
                        "status": meta["status"],
                        "feasible": feas[:, 0],
                        "tokens_per_s_per_gpu": tps[:, 0],
                        "cost_per_mtok_p05": lo,
                        "cost_per_mtok": mid,
                        "cost_per_mtok_p95": hi,
                    }
                )
            )
            # The point figure of :func:`price_rule`, the one chapter 30 and the claims print.
            with np.errstate(all="ignore"):
                pt = cost_per_million_tokens(point_useful[idx], tps[:, 0])
            tier_rows[-1]["cost_per_mtok_point"] = np.where(
                feas[:, 0] & np.isfinite(tps[:, 0]), pt, np.nan
            )
            if "throughput_log_sigma" in grp.columns:  # the sigma a row drew with (NaN: its part's)
                tier_rows[-1]["throughput_log_sigma"] = grp["throughput_log_sigma"].astype(float)
            summ.append({"tier_index": ti, "tier": tname, **_compare(c, meta)})
    tier_df = pd.concat(tier_rows, ignore_index=True) if tier_rows else pd.DataFrame()
    tsum = pd.DataFrame(summ)
    train_df, train_sum = pd.DataFrame(), {}
    if training is not None and not training.empty:
        grp = training[training["accelerator"].isin(pos)].reset_index(drop=True)
        idx = [pos[a] for a in grp["accelerator"]]
        gh_need = grp["gpu_hours"].to_numpy(dtype=float)[:, None]
        feas = grp["feasible"].to_numpy(dtype=bool)[:, None]
        # Throughput error scales GPU-hours inversely.
        c = np.where(feas, useful[idx] * gh_need / d["throughput_factor"][idx], np.nan)
        lo, mid, hi = _q(c)
        meta = grp.assign(**_id_columns(grp["accelerator"]))
        train_df = pd.DataFrame(
            {
                "accelerator": grp["accelerator"],
                "vendor": meta["vendor"],
                "status": meta["status"],
                "feasible": feas[:, 0],
                "gpu_hours": gh_need[:, 0],
                "train_cost_usd_p05": lo,
                "train_cost_usd": mid,
                "train_cost_usd_p95": hi,
            }
        )
        train_sum = _compare(c, meta)
    return Simulation(gh, tier_df, tsum, train_df, train_sum, paid, useful)


def rent_simulation(
    sc: Scenario, sim: Simulation, tiers: pd.DataFrame | None, rent_inputs: CostInputs
) -> Simulation:
    """The Monte Carlo in rent mode, for the article's rental-market claim.

    A renting scenario's own simulation already is that, so it is returned as is (same
    draws, no second run). Otherwise the tiers are simulated again with the rent-mode
    inputs and the scenario's seed; the training run is skipped, as the claim is about
    cost per token only.

    Args:
        sc: the scenario.
        sim: :func:`simulate` output for the scenario's own mode.
        tiers: the tier throughputs ``sim`` was run on.
        rent_inputs: rent-mode :func:`cost_inputs` (e.g. :attr:`ScenarioInputs.rent`).
    """
    if sc.cost.mode == "rent":
        return sim
    return simulate(sc, tiers, None, inputs=rent_inputs)
