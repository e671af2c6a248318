"""The deterministic tables: cost per GPU-hour, the one price rule, coverage, cross-check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis import ids
from analysis.inputs import Inputs
from analysis.params import Scenario
from analysis.tco.costs import (
    NO_QUOTE,
    CostInputs,
    _id_columns,
    _point_params,
    cost_inputs,
    quote_ages,
)
from analysis.tco.formulas import cost_per_million_tokens, owned_cost_components, paid_gpu_hour_usd


# --- deterministic table ----------------------------------------------------------------
def gpu_hour_cost(
    sc: Scenario, inputs: CostInputs | None = None, *, tables: Inputs | None = None
) -> pd.DataFrame:
    """Point estimate of owned and rented $/GPU-hour per accelerator, with components.

    ``inputs``: precomputed :func:`cost_inputs`; else built from ``tables`` (default: the
    default inputs).

    Columns: accelerator, vendor, status, owned components (USD per paid GPU-hour),
    ``owned_gpu_hour_usd``, ``rented_gpu_hour_usd`` (median quote + platform),
    ``rent_quote_min``/``max``, ``n_quotes``, ``quote_note``, ``gpu_hour_usd`` (the
    scenario's mode), ``useful_gpu_hour_usd``.
    """
    inp = inputs or cost_inputs(sc, inputs=tables)
    p = _point_params(inp)
    comps = owned_cost_components(p, inp.fleet_gpus)
    df = pd.DataFrame({"accelerator": inp.accelerators, **_id_columns(inp.accelerators)})
    for k, v in comps.items():
        df[f"owned_{k}"] = np.broadcast_to(v, (len(df),))
    df["owned_gpu_hour_usd"] = paid_gpu_hour_usd(p, "buy", inp.fleet_gpus)
    df["rented_gpu_hour_usd"] = paid_gpu_hour_usd(p, "rent", inp.fleet_gpus)
    df["rent_quote_min"] = inp.per_acc["rental_usd_per_gpu_hour_low"].to_numpy()
    df["rent_quote_max"] = inp.per_acc["rental_usd_per_gpu_hour_high"].to_numpy()
    df["n_quotes"] = [inp.quotes[a].size for a in inp.accelerators]
    df["quote_note"] = [inp.quote_note[a] for a in inp.accelerators]
    col = "owned_gpu_hour_usd" if inp.mode == "buy" else "rented_gpu_hour_usd"
    df["gpu_hour_usd"] = df[col]
    df["useful_gpu_hour_usd"] = df[col] / p["utilization"]
    return df


def price_rule(
    sc: Scenario, inputs: CostInputs | None = None, *, tables: Inputs | None = None
) -> pd.DataFrame:
    """The one $/GPU-hour rule every chapter prints, per accelerator, in the scenario's mode.

    Point model (defaults, median quote of the pool): ``gpu_hour_usd`` per paid GPU-hour
    (owned all-in, or rent + porting), ``useful_gpu_hour_usd`` = paid / utilization (what a
    token costs), ``price_note`` ("no quote in this pool", stale quotes, missing purchase
    price or power). NaN where the mode's inputs are missing: such a part is left out of
    every cost comparison, never priced by default. ``inputs``/``tables``: as for
    :func:`gpu_hour_cost`.
    """
    inp = inputs or cost_inputs(sc, inputs=tables)
    df = gpu_hour_cost(sc, inp)
    notes = []
    for r in df.itertuples(index=False):
        if inp.mode == "rent":
            notes.append(r.quote_note)
        else:
            missing = [
                what
                for what, col in (("purchase price", "gpu_price_usd"), ("power", "server_power_kw"))
                if not np.isfinite(inp.per_acc.at[r.accelerator, col])
                and not (
                    col == "gpu_price_usd"
                    and np.isfinite(inp.per_acc.at[r.accelerator, "server_price_usd"])
                )
            ]
            notes.append(f"no {' or '.join(missing)}" if missing else "")
    return pd.DataFrame(
        {
            "accelerator": df["accelerator"],
            "mode": inp.mode,
            "gpu_hour_usd": df["gpu_hour_usd"],
            "useful_gpu_hour_usd": df["useful_gpu_hour_usd"],
            "price_note": notes,
        }
    )


def tier_cost_point(rule: pd.DataFrame, tiers: pd.DataFrame) -> np.ndarray:
    """$/M tokens of each tier row under :func:`price_rule` (NaN where infeasible or unpriced)."""
    useful = tiers["accelerator"].map(rule.set_index("accelerator")["useful_gpu_hour_usd"])
    tps = tiers["tokens_per_s_per_gpu"].to_numpy(dtype=float)
    with np.errstate(all="ignore"):
        c = cost_per_million_tokens(useful.to_numpy(dtype=float), tps)
    ok = tiers["feasible"].to_numpy(dtype=bool) & np.isfinite(tps) & (tps > 0)
    return np.where(ok, c, np.nan)


def mode_gaps(sc: Scenario, inp: CostInputs) -> list[str]:
    """What each shipping candidate lacks for the scenario's mode, one sentence each.

    Buy mode needs a purchase price and server power; rent mode a quote in the pool (or a
    ``cost.gpu_hour_usd`` override). Each sentence says what will be left out.
    """
    out = []
    for acc in ids.shipping(sc.candidates):
        pa = inp.per_acc.loc[acc]
        if inp.mode == "buy":
            lacks = []
            if not (np.isfinite(pa["gpu_price_usd"]) or np.isfinite(pa["server_price_usd"])):
                lacks.append("a purchase price (data/prices/purchase_prices.csv)")
            if not np.isfinite(pa["server_power_kw"]):
                lacks.append("server power (data/prices/facility.csv)")
            if lacks:
                out.append(
                    f"candidate {acc}: no {' and no '.join(lacks)}; it is left out of the "
                    "owned-cost comparison (give cost.server_price_usd to include it)"
                )
        elif inp.quotes[acc].size == 0:
            out.append(
                f"candidate {acc}: {NO_QUOTE} {sc.cost.rental_pool!r}; it is left out of the "
                "rented comparison (choose another cost.rental_pool or give "
                "cost.gpu_hour_usd)"
            )
    return out


def scenario_warnings(sc: Scenario, *, inputs: Inputs | None = None) -> list[str]:
    """:func:`mode_gaps` for the scenario's own mode, from ``inputs`` (default: ``data/``).

    For ``validate``.
    """
    return mode_gaps(sc, cost_inputs(sc, inputs=inputs))


def price_coverage(
    quotes: pd.DataFrame, purchases: pd.DataFrame, facility: pd.DataFrame
) -> pd.DataFrame:
    """Per accelerator: purchase price, power and dated quotes per pool (the coverage table).

    Columns: accelerator, status, purchase (basis of the per-GPU price, "" when none),
    power (``yes``/``no``), one column per pool holding any quote (the number of quotes;
    ``s`` marks how many are stale), and ``best_pool`` (a pool with at least two quotes).
    """
    q = quote_ages(quotes).assign(pool=lambda d: d["provider_class"] + "/" + d["term"])
    pools = [p for p in ids.RENTAL_POOLS if p in set(q["pool"])]
    rows = []
    for acc in ids.ACCELERATORS:
        pp = purchases[purchases["accelerator"] == acc]
        has_power = bool(
            ((facility["parameter"] == "server_power_kw") & (facility["accelerator"] == acc)).any()
        )
        rec: dict[str, Any] = {
            "accelerator": acc,
            "status": ids.status_of(acc),
            "purchase": ",".join(sorted(set(pp["basis"]))) if len(pp) else "",
            "power": "yes" if has_power else "no",
        }
        two = []
        for pool in pools:
            sel = q[(q["accelerator"] == acc) & (q["pool"] == pool)]
            n, stale = len(sel), int(sel["stale"].sum())
            rec[pool] = "" if n == 0 else (f"{n} ({stale} stale)" if stale else str(n))
            if n >= 2:
                two.append(pool)
        rec["best_pool"] = ", ".join(two)
        rows.append(rec)
    return pd.DataFrame(rows)


def coverage_markdown(cov: pd.DataFrame) -> str:
    """The coverage table as Markdown for ``data/README.md``."""
    head = "| " + " | ".join(f"`{c}`" if "/" in c else c for c in cov.columns) + " |"
    lines = [
        "## Price coverage",
        "",
        "<!-- Generated from data/prices/ by `python -m analysis data-readme`. -->",
        "",
        "Per accelerator: basis of the purchase price (`estimate`, `judgement` = ours,",
        "unsourced), server power, and the number of dated rental quotes per pool",
        "(provider class / term; stale = older than 9 months). `best_pool` lists the pools",
        "with at least two quotes. Shipping parts without two quotes in any pool, or",
        "without a sourced purchase price, are the data gaps to close next.",
        "",
        head,
        "|" + "---|" * len(cov.columns),
    ]
    for r in cov.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in r) + " |")
    return "\n".join(lines) + "\n"


#: Project figure each published SemiAnalysis tier is compared with, and why they differ.
_CROSSCHECK = {
    "owning-hyperscaler": (
        "owned",
        "SemiAnalysis' hyperscaler owns at its own cost of capital and PUE, with no "
        "porting cost; ours adds the scenario's facility inputs and AMD porting.",
    ),
    "owning-neocloud": (
        "owned",
        "A neocloud giant pays more for capital and colocation than a hyperscaler; ours "
        "uses the scenario's cost of capital and colocation price.",
    ),
    "rental-3y": (
        "rented",
        "A negotiated 3-year contract rate; ours is the median quote of the scenario's "
        "pool (plus porting), usually a list price of a shorter term.",
    ),
}


def tco_crosscheck(gpu_hour: pd.DataFrame, benchmarks: pd.DataFrame) -> pd.DataFrame:
    """SemiAnalysis/InferenceX published $/GPU-hour beside the project's owned and rented.

    Args:
        gpu_hour: :func:`gpu_hour_cost` output (``owned_gpu_hour_usd``, ``rented_gpu_hour_usd``).
        benchmarks: the ``tco_benchmarks`` table.

    Returns:
        One row per accelerator in ``gpu_hour`` and published tier: accelerator, tier,
        published (USD/GPU-h), estimate flag, revision, ours (the comparable project
        figure), ratio (ours / published) and why the two differ.
    """
    g = gpu_hour.set_index("accelerator")
    b = benchmarks[benchmarks["accelerator"].isin(g.index)]
    rows = []
    for r in b.itertuples(index=False):
        which, why = _CROSSCHECK[r.tier]
        ours = float(g.at[r.accelerator, f"{which}_gpu_hour_usd"])
        rows.append(
            {
                "accelerator": r.accelerator,
                "tier": r.tier,
                "published_usd": float(r.price_usd_per_gpu_hour),
                "estimate": r.estimate,
                "revision": r.revision,
                "ours": which,
                "ours_usd": ours,
                "ratio": ours / float(r.price_usd_per_gpu_hour) if np.isfinite(ours) else np.nan,
                "why": why,
            }
        )
    cols = ["accelerator", "tier", "published_usd", "estimate", "revision", "ours",
            "ours_usd", "ratio", "why"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)
