"""The hybrid plan: all-AMD, all-NVIDIA, or a split fleet (training and serving apart).

Analytical decisions taken here (the TCO chapter itemizes them, the summary states the
result):

* **What a plan buys, per year**: the scenario's training job once, and one year of the
  scenario's serving load in one tier (the tightest by default, the article's latency
  target). The serving load is what ``cost.fleet_gpus`` GPUs at the scenario's
  utilization serve with the cheapest AMD and the cheapest NVIDIA part of the tier
  (their geometric mean of tokens/s per GPU): a load the report can size from the
  scenario alone, the same for every plan.
* **Plans**: *all-AMD* and *all-NVIDIA* run both workloads on that vendor's cheapest
  shipping candidate (by median cost); the *split* runs each workload on its cheaper
  vendor, or, when one vendor is cheaper for both, the article's split (training on
  NVIDIA, serving on AMD), so that its price is always shown.
* **What a split adds** (register entries ``A-split-*``, each drawn from its range):
  a second software stack's engineering (engineers keeping kernels, frameworks, drivers
  and CI current on the second vendor) and operations (SRE and on-call skills for a
  second fleet), priced at the register's loaded engineer-month; and the **lost
  fungibility**: a one-vendor fleet re-uses a share of the training cluster's idle hours
  (1 - utilization) for serving, a split fleet cannot, so the split pays for those
  hours' serving again at the serving part's paid $/GPU-hour.
* **Uncertainty**: the TCO chapter's joint draws (same inputs, same seed) for $/GPU-hour,
  throughput and the engineer-month; the split's own assumptions drawn triangular with
  the scenario's seed + 1. P(cheapest) is each plan's share of draws in which it costs
  least. The flip condition is the split's extra cost at which the cheapest plan
  changes (a break-even in dollars per year).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import tco
from analysis.params import Scenario

SECONDS_PER_YEAR = 365.0 * 24.0 * 3600.0
#: Register ids of the split's assumptions (value, low, high read from the register).
SPLIT_ASSUMPTIONS = {
    "engineers": "A-split-stack-engineers",
    "ops": "A-split-ops-engineers",
    "recovery": "A-split-fungibility-recovery",
}
PLANS = ("all-AMD", "all-NVIDIA", "split")


@dataclass(frozen=True)
class PlanResult:
    """The plan comparison: a table per plan, itemized split costs, P(cheapest)."""

    plans: pd.DataFrame  # plan, training_on, serving_on, cost_usd (+ _p05, _p95), p_cheapest
    split_items: pd.DataFrame  # item, cost_usd, cost_usd_p05, cost_usd_p95, basis
    cheapest: str
    p_cheapest: float
    flip: str
    serving_tokens_per_year: float
    tier: str


def split_assumptions(assumptions: pd.DataFrame) -> dict[str, tuple[float, float, float]]:
    """(value, low, high) of each split assumption from the register frame.

    Raises:
        ValueError: an ``A-split-*`` entry is missing from the register.
    """
    reg = assumptions.set_index("id")
    out = {}
    for key, aid in SPLIT_ASSUMPTIONS.items():
        if aid not in reg.index:
            raise ValueError(f"assumptions register lacks {aid} (needed by the split plan)")
        r = reg.loc[aid]
        out[key] = (float(r["value"]), float(r["low"]), float(r["high"]))
    return out


def _draw(rng: np.random.Generator, v: tuple[float, float, float], n: int) -> np.ndarray:
    value, lo, hi = v
    return rng.triangular(lo, min(max(value, lo), hi), hi, n) if hi > lo else np.full(n, value)


def _cheapest(costs: np.ndarray, frame: pd.DataFrame, vendor: str) -> int | None:
    """Row of ``frame`` (shipping, feasible, this vendor) with the lowest median cost."""
    finite = np.isfinite(costs)
    med = np.full(len(costs), np.nan)
    rows = finite.any(axis=1) if len(costs) else np.zeros(0, dtype=bool)
    med[rows] = np.nanmedian(np.where(finite[rows], costs[rows], np.nan), axis=1)
    ok = (
        (frame["vendor"].to_numpy() == vendor)
        & (frame["status"].to_numpy() == "shipping")
        & frame["feasible"].to_numpy(dtype=bool)
        & np.isfinite(med)
    )
    idx = np.flatnonzero(ok)
    return int(idx[np.argmin(med[idx])]) if idx.size else None


def _draw_costs(
    sc: Scenario, inp: tco.CostInputs, tier: pd.DataFrame, train: pd.DataFrame
) -> dict[str, np.ndarray]:
    """Per-draw costs drawn as the TCO chapter draws them (same inputs and seed).

    $/M tokens per tier candidate, $ per training job per candidate, paid $/GPU-hour,
    utilization and the engineer-month.
    """
    n = sc.cost.mc_draws
    d = tco.draw_inputs(inp, n, sc.cost.seed)
    paid = np.broadcast_to(
        np.asarray(tco.paid_gpu_hour_usd(d, inp.mode, inp.fleet_gpus), dtype=float),
        (len(inp.accelerators), n),
    )
    useful = paid / d["utilization"]
    pos = {a: i for i, a in enumerate(inp.accelerators)}
    ti = [pos[a] for a in tier["accelerator"]]
    tr = [pos[a] for a in train["accelerator"]]
    tps = tier["tokens_per_s_per_gpu"].to_numpy(dtype=float)[:, None]
    with np.errstate(all="ignore"):
        mtok = tco.cost_per_million_tokens(
            useful[ti], tps * tco.tier_throughput_factors(tier, ti, d)
        )
        job = useful[tr] * train["gpu_hours"].to_numpy(dtype=float)[:, None]
        job = job / d["throughput_factor"][tr]
    return {
        "mtok": np.where(tier["feasible"].to_numpy(dtype=bool)[:, None], mtok, np.nan),
        "job": np.where(train["feasible"].to_numpy(dtype=bool)[:, None], job, np.nan),
        "paid_tier": paid[ti],
        "paid_train": paid[tr],
        "utilization": d["utilization"],
        "engineer_month": d["engineer_month_usd"],
    }


def _quantiles(x: np.ndarray) -> tuple[float, float, float]:
    """(median, p05, p95) of draws."""
    if not np.isfinite(x).any():
        return np.nan, np.nan, np.nan
    q = np.nanquantile(x, [0.05, 0.5, 0.95])
    return float(q[1]), float(q[0]), float(q[2])


def _choose(
    c: Mapping[str, np.ndarray], tier: pd.DataFrame, train: pd.DataFrame
) -> dict[str, tuple[int, int]] | None:
    """Per vendor: (tier row, training row) of its cheapest candidates; None if missing."""
    out = {}
    for v in ("AMD", "NVIDIA"):
        s, t = _cheapest(c["mtok"], tier, v), _cheapest(c["job"], train, v)
        if s is None or t is None:
            return None
        out[v] = (s, t)
    return out


def compare_plans(
    sc: Scenario,
    tiers: pd.DataFrame,
    train: pd.DataFrame,
    assumptions: pd.DataFrame,
    *,
    inputs: tco.CostInputs | None = None,
    tier_index: int = 0,
) -> PlanResult | None:
    """All-AMD, all-NVIDIA and the split for the scenario's training job and serving load.

    ``tiers``: ``inference.evaluate_tiers(sc)``; ``train``: ``training.evaluate_training
    (sc)``; ``assumptions``: the register (``data.load_assumptions()``). Returns None
    when a vendor has no feasible, priced shipping candidate for either workload (the
    plan cannot be priced; the caller says so).
    """
    inp = inputs or tco.cost_inputs(sc)
    tier = tiers[tiers["tier_index"] == tier_index].reset_index(drop=True)
    train = train.reset_index(drop=True)
    c = _draw_costs(sc, inp, tier, train)
    pick = _choose(c, tier, train)
    if pick is None:
        return None
    u = float(sc.cost.utilization)
    tps = [float(tier["tokens_per_s_per_gpu"].iloc[pick[v][0]]) for v in ("AMD", "NVIDIA")]
    tokens = float(sc.cost.fleet_gpus) * u * SECONDS_PER_YEAR * float(np.sqrt(tps[0] * tps[1]))
    serve = {v: c["mtok"][pick[v][0]] * tokens / 1e6 for v in pick}
    job = {v: c["job"][pick[v][1]] for v in pick}
    med = {
        k: float(np.nanmedian(x))
        for k, x in {**{f"s{v}": serve[v] for v in serve}, **{f"t{v}": job[v] for v in job}}.items()
    }
    train_on = "AMD" if med["tAMD"] < med["tNVIDIA"] else "NVIDIA"
    serve_on = "AMD" if med["sAMD"] < med["sNVIDIA"] else "NVIDIA"
    if train_on == serve_on:  # one vendor wins both: price the article's split instead
        train_on, serve_on = "NVIDIA", "AMD"
    items = _split_items(sc, c, pick, train, train_on, serve_on, assumptions)
    extra = sum(items.values())
    totals = {
        "all-AMD": job["AMD"] + serve["AMD"],
        "all-NVIDIA": job["NVIDIA"] + serve["NVIDIA"],
        "split": job[train_on] + serve[serve_on] + extra,
    }
    return _result(
        totals, items, tier, train, pick, train_on, serve_on, tokens, str(tier["tier"].iloc[0])
    )


def _split_items(
    sc: Scenario,
    c: Mapping[str, np.ndarray],
    pick: Mapping[str, tuple[int, int]],
    train: pd.DataFrame,
    train_on: str,
    serve_on: str,
    assumptions: pd.DataFrame,
) -> dict[str, np.ndarray]:
    """Per-draw yearly cost of each thing a split adds (USD)."""
    a = split_assumptions(assumptions)
    n = sc.cost.mc_draws
    rng = np.random.default_rng(sc.cost.seed + 1)
    year = 12.0 * c["engineer_month"]
    gpu_hours = float(train["gpu_hours"].iloc[pick[train_on][1]])
    idle = gpu_hours * (1.0 / c["utilization"] - 1.0)  # paid, idle training GPU-hours
    return {
        "second stack: engineering": _draw(rng, a["engineers"], n) * year,
        "second stack: operations": _draw(rng, a["ops"], n) * year,
        "lost fungibility": _draw(rng, a["recovery"], n) * idle * c["paid_tier"][pick[serve_on][0]],
    }


def _result(
    totals: Mapping[str, np.ndarray],
    items: Mapping[str, np.ndarray],
    tier: pd.DataFrame,
    train: pd.DataFrame,
    pick: Mapping[str, tuple[int, int]],
    train_on: str,
    serve_on: str,
    tokens: float,
    tier_name: str,
) -> PlanResult:
    stack = np.vstack([totals[p] for p in PLANS])
    valid = np.all(np.isfinite(stack), axis=0)
    win = np.argmin(np.where(np.isfinite(stack), stack, np.inf), axis=0)
    p = {
        plan: float(np.mean(win[valid] == i)) if valid.any() else np.nan
        for i, plan in enumerate(PLANS)
    }
    on = {
        "all-AMD": ("AMD", "AMD"),
        "all-NVIDIA": ("NVIDIA", "NVIDIA"),
        "split": (train_on, serve_on),
    }
    rows = []
    for plan in PLANS:
        mid, lo, hi = _quantiles(totals[plan])
        t, s = on[plan]
        rows.append(
            {
                "plan": plan,
                "training_on": str(train["accelerator"].iloc[pick[t][1]]),
                "serving_on": str(tier["accelerator"].iloc[pick[s][0]]),
                "cost_usd": mid,
                "cost_usd_p05": lo,
                "cost_usd_p95": hi,
                "p_cheapest": p[plan],
            }
        )
    plans = pd.DataFrame(rows)
    item_rows = []
    for name, x in items.items():
        mid, lo, hi = _quantiles(x)
        item_rows.append({"item": name, "cost_usd": mid, "cost_usd_p05": lo, "cost_usd_p95": hi})
    cheapest = str(plans.sort_values(["cost_usd", "plan"]).iloc[0]["plan"])
    return PlanResult(
        plans=plans,
        split_items=pd.DataFrame(item_rows),
        cheapest=cheapest,
        p_cheapest=p[cheapest],
        flip=_flip(plans, pd.DataFrame(item_rows)),
        serving_tokens_per_year=tokens,
        tier=tier_name,
    )


def _flip(plans: pd.DataFrame, items: pd.DataFrame) -> str:
    """What changes the cheapest plan, in one sentence (medians)."""
    cost = plans.set_index("plan")["cost_usd"]
    extra = float(items["cost_usd"].sum())
    single = cost.drop("split")
    best_single = str(single.idxmin())
    gap = float(single.min() - (cost["split"] - extra))  # split's saving before its extras
    if gap <= 0:
        return (
            f"The split saves nothing before its extra costs ({_usd(-gap)} a year more than "
            f"{best_single}), so no saving on the second stack makes it cheapest; a cheaper "
            "vendor for one workload would."
        )
    if cost["split"] < single.min():
        return (
            f"The split stays cheapest while its extra costs stay below {_usd(gap)} a year "
            f"(today {_usd(extra)}: second stack and lost fungibility)."
        )
    return (
        f"The split would be cheapest if its extra costs fell below {_usd(gap)} a year "
        f"(today {_usd(extra)}), e.g. with fewer second-stack engineers or a fleet that "
        "re-uses little idle training capacity."
    )


def _usd(x: float) -> str:
    """Dollars for readers: $1.2M, $350k, $900.

    >>> _usd(1_234_567), _usd(350_000), _usd(900)
    ('$1.2M', '$350k', '$900')
    """
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.1f}M"
    if abs(x) >= 1e3:
        return f"${x / 1e3:,.0f}k"
    return f"${x:,.0f}"


def summary_line(keys: Mapping[str, object]) -> str:
    """One Markdown sentence for the memo from the TCO chapter's ``plan_*`` key results."""
    if not keys.get("plan_cheapest"):
        return (
            "**Fleet plan**: not priced: a vendor has no feasible, priced shipping candidate "
            "for the training job or the serving tier."
        )
    costs = ", ".join(
        f"{p} {_usd(float(keys[f'plan_cost_usd_{_key(p)}']))}"  # type: ignore[arg-type]
        for p in PLANS
    )
    return (
        f"**Fleet plan (the training job plus a year of serving in tier {keys['plan_tier']})**: "
        f"{keys['plan_cheapest']} is cheapest (P = {float(keys['plan_p_cheapest']):.0%}; "  # type: ignore[arg-type]
        f"median cost: {costs}). {keys['plan_flip']}"
    )


def _key(plan: str) -> str:
    return plan.replace("-", "_").lower()


def key_results(res: PlanResult | None) -> dict[str, object]:
    """``plan_*`` keys (docs/contracts.md)."""
    if res is None:
        return {"plan_cheapest": "", "plan_p_cheapest": float("nan")}
    out: dict[str, object] = {
        "plan_cheapest": res.cheapest,
        "plan_p_cheapest": res.p_cheapest,
        "plan_tier": res.tier,
        "plan_flip": res.flip,
        "plan_serving_tokens_per_year": res.serving_tokens_per_year,
    }
    for r in res.plans.itertuples(index=False):
        out[f"plan_cost_usd_{_key(r.plan)}"] = float(r.cost_usd)
        out[f"plan_p_cheapest_{_key(r.plan)}"] = float(r.p_cheapest)
    out["plan_split_extra_usd"] = float(res.split_items["cost_usd"].sum())
    return out


def empty_plans() -> pd.DataFrame:
    """The plan table's columns with no rows (a scenario whose plans cannot be priced)."""
    cols = ["plan", "training_on", "serving_on", "cost_usd", "cost_usd_p05", "cost_usd_p95"]
    return pd.DataFrame(columns=[*cols, "p_cheapest"])


def empty_items() -> pd.DataFrame:
    """The split-cost table's columns with no rows."""
    return pd.DataFrame(columns=["item", "cost_usd", "cost_usd_p05", "cost_usd_p95"])
