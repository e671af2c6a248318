"""Total cost of ownership: $/GPU-hour, $/million tokens, $/training run, and their risks.

Owned and rented cost per GPU-hour, cost per million tokens and per training run, their
uncertainty (Monte Carlo), break-even points and sensitivity.

Analytical decisions taken here:

* **Owned cost per GPU-hour** = capital (server price plus cluster networking, recovered
  over the depreciation life at the cost of capital with the capital recovery factor, net
  of the present value of the residual value) + maintenance + electricity (server draw at
  the scenario's utilization x PUE x price) + colocation (per kW of provisioned server
  power) + software licences + the one-off platform cost (porting and ramp-up
  engineer-months x loaded cost) spread over every GPU-hour of the fleet's life.
* **Useful hours.** The fleet is held whether it is bought or rented; cost per *useful*
  GPU-hour divides by utilization. ``gpu_hour_usd`` is per paid (wall-clock) GPU-hour.
* **Rented cost** is the empirical distribution of the published quotes of the scenario's
  rental pool (``cost.rental_pool``: one provider class and one term; resampled, not one
  pick), plus the same platform cost: porting is needed whether the GPUs are rented or
  bought. Only quotes of that one pool are compared, because hyperscaler list prices run
  2-4x neocloud rates and a mixed pool measures the provider mix rather than the hardware.
  A part without a quote in the pool has no rented cost ("no quote in this pool"): it is
  left out of every rented comparison, never priced from another pool or treated as free.
  Quotes older than :data:`STALE_QUOTE_DAYS` are kept but flagged.
* **One price rule.** :func:`price_rule` is the $/GPU-hour of the scenario's mode that
  every chapter prints (the inference chapter's $/M tokens, this chapter's point costs and
  the claims all call it): owned all-in cost, or the pool's median quote plus porting, per
  *paid* GPU-hour; $/M tokens divide the *useful* GPU-hour (paid / utilization).
* **Purchase prices.** The midpoint of the sourced low/high range; a rack-scale system's
  price per GPU of the rack (``rack_per_gpu``) stands for one eighth of an 8-GPU "server"
  with nothing added, since the rack price already holds CPUs, switches and chassis.
* **Uncertainty.** Every ranged input is drawn from a triangular distribution (low, default,
  high) taken from the assumptions register and the price tables, re-centred on the
  scenario's value; throughput carries the performance models' relative error as a
  lognormal factor per accelerator. Draws are joint (one draw = one consistent world), so
  P(AMD cheaper) compares the two vendors' cheapest-by-median candidates draw by draw.
* **Break-even** values are solved on the point model (defaults, median quotes) with
  Brent's method (:func:`scipy.optimize.brentq`, imported where it is used: importing
  ``scipy.optimize`` costs about half a second, which only the break-even cells pay),
  so they plug back into equal costs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from analysis import ids
from analysis.params import Scenario

HOURS_PER_YEAR = 8760.0  # 365 x 24
#: GPUs per server: the 8-GPU HGX (NVIDIA) and OAM (AMD Instinct) baseboard that the price
#: and facility tables are quoted for (``server_8gpu``; ``kW per 8 GPUs``, rack-scale parts
#: included).
GPUS_PER_SERVER = 8
SECONDS_PER_HOUR = 3600.0
#: Standard normal 95th percentile: a lognormal factor's 5-95% range is exp(+/-1.645 sigma).
Z_95 = 1.645

Mode = Literal["buy", "rent"]

#: Global (not per accelerator) inputs: name -> (Scenario cost attribute or None, register id).
GLOBAL_INPUTS: dict[str, tuple[str | None, str]] = {
    "utilization": ("utilization", "A-utilization"),
    "pue": ("pue", "A-pue"),
    "electricity_usd_per_kwh": ("electricity_usd_per_kwh", "A-electricity-price"),
    "colocation_usd_per_kw_month": ("colocation_usd_per_kw_month", "A-colocation-price"),
    "depreciation_years": ("depreciation_years", "A-depreciation-years"),
    "cost_of_capital": ("cost_of_capital", "A-cost-of-capital"),
    "engineer_month_usd": ("engineer_month_usd", "A-engineer-month-cost"),
    "residual_frac": (None, "A-residual-value"),
    "maintenance_frac_per_year": (None, "A-maintenance"),
    "networking_frac": (None, "A-networking-share"),
    "idle_power_frac": (None, "A-idle-power"),
    "load_power_frac": (None, "A-load-power"),
    "server_platform_usd": (None, "A-server-platform-cost"),
}
#: Per-accelerator inputs (arrays with one row per accelerator).
ACC_INPUTS = (
    "gpu_price_usd",
    "server_price_usd",
    "server_power_kw",
    "porting_engineer_months",
    "software_usd_per_gpu_year",
    "rental_usd_per_gpu_hour",
    "throughput_factor",
)
# Bounds by definition, not estimates: PUE >= 1, fractions <= 1, utilization > 0 (we divide
# by it).
_LOWER = {"utilization": 1e-3, "pue": 1.0}
_UPPER = {"utilization": 1.0, "idle_power_frac": 1.0, "load_power_frac": 1.0}


# --- small formulas --------------------------------------------------------------------
def capital_recovery_factor(rate: Any, years: Any) -> Any:
    """Annual payment per dollar of capital repaid over ``years`` at ``rate``.

    CRF = r(1+r)^n / ((1+r)^n - 1); 1/n when r = 0.

    >>> round(float(capital_recovery_factor(0.08, 5)), 5)
    0.25046
    >>> float(capital_recovery_factor(0.0, 4))
    0.25
    """
    r = np.asarray(rate, dtype=float)
    n = np.asarray(years, dtype=float)
    growth = (1.0 + r) ** n
    with np.errstate(divide="ignore", invalid="ignore"):
        crf = np.where(r > 0, r * growth / (growth - 1.0), 1.0 / n)
    return crf if crf.ndim else float(crf)


def cost_per_million_tokens(gpu_hour_usd: Any, tokens_per_s_per_gpu: Any) -> Any:
    """Dollars per million output tokens for one GPU running flat out.

    The formula InferenceX and NVIDIA's TCO guide both use: hourly cost spread over the
    tokens one GPU produces in an hour. Works element-wise on arrays.

    >>> round(cost_per_million_tokens(2.0, 1000.0), 4)
    0.5556
    """
    out = (
        np.asarray(gpu_hour_usd, dtype=float)
        / (np.asarray(tokens_per_s_per_gpu, dtype=float) * SECONDS_PER_HOUR)
        * 1e6
    )
    return out if out.ndim else float(out)


def owned_cost_components(p: Mapping[str, Any], fleet_gpus: float) -> dict[str, Any]:
    """Owned cost per paid GPU-hour, by component (element-wise over arrays).

    Args:
        p: inputs by name (see :data:`GLOBAL_INPUTS` and :data:`ACC_INPUTS`); arrays
            broadcast. ``server_price_usd`` NaN means 8 x ``gpu_price_usd`` +
            ``server_platform_usd``.
        fleet_gpus: GPUs over which the one-off platform cost is spread.

    Returns:
        ``capital``, ``maintenance``, ``power``, ``colocation``, ``software``, ``platform``
        in USD per paid GPU-hour.
    """
    server = np.where(
        np.isnan(p["server_price_usd"]),
        GPUS_PER_SERVER * np.asarray(p["gpu_price_usd"]) + p["server_platform_usd"],
        p["server_price_usd"],
    )
    capex = server * (1.0 + p["networking_frac"])
    r, n = p["cost_of_capital"], p["depreciation_years"]
    pv_residual = p["residual_frac"] * capex * (1.0 + r) ** (-n)
    per_server_hour = 1.0 / (HOURS_PER_YEAR * GPUS_PER_SERVER)
    u = p["utilization"]
    avg_kw = p["server_power_kw"] * (
        p["idle_power_frac"] + (p["load_power_frac"] - p["idle_power_frac"]) * u
    )
    return {
        "capital": (capex - pv_residual) * capital_recovery_factor(r, n) * per_server_hour,
        "maintenance": p["maintenance_frac_per_year"] * capex * per_server_hour,
        "power": avg_kw * p["pue"] * p["electricity_usd_per_kwh"] / GPUS_PER_SERVER,
        "colocation": p["server_power_kw"]
        * p["colocation_usd_per_kw_month"]
        * 12.0
        * per_server_hour,
        "software": np.asarray(p["software_usd_per_gpu_year"]) / HOURS_PER_YEAR,
        "platform": platform_cost_per_gpu_hour(p, fleet_gpus),
    }


def platform_cost_per_gpu_hour(p: Mapping[str, Any], fleet_gpus: float) -> Any:
    """One-off porting/ramp-up cost spread over every paid GPU-hour of the fleet's life.

    >>> p = {"porting_engineer_months": 12.0, "engineer_month_usd": 25000.0,
    ...      "depreciation_years": 5.0}
    >>> round(float(platform_cost_per_gpu_hour(p, 1024)), 4)
    0.0067
    """
    return (
        np.asarray(p["porting_engineer_months"])
        * p["engineer_month_usd"]
        / (fleet_gpus * HOURS_PER_YEAR * np.asarray(p["depreciation_years"]))
    )


def paid_gpu_hour_usd(p: Mapping[str, Any], mode: Mode, fleet_gpus: float) -> Any:
    """All-in cost per paid GPU-hour: owned components, or rent + platform cost."""
    if mode == "buy":
        return sum(owned_cost_components(p, fleet_gpus).values())
    return np.asarray(p["rental_usd_per_gpu_hour"]) + platform_cost_per_gpu_hour(p, fleet_gpus)


def useful_gpu_hour_usd(p: Mapping[str, Any], mode: Mode, fleet_gpus: float) -> Any:
    """Cost per useful GPU-hour (paid cost / utilization)."""
    return paid_gpu_hour_usd(p, mode, fleet_gpus) / p["utilization"]


# --- inputs ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CostInputs:
    """Every input of the cost model for one scenario: default value and range.

    ``globals`` has one row per global input (value, low, high, assumption_id);
    ``per_acc`` one row per accelerator with ``<input>``, ``<input>_low``, ``<input>_high``;
    ``quotes`` the rental quotes used per accelerator.
    """

    accelerators: tuple[str, ...]
    mode: Mode
    fleet_gpus: int
    globals: pd.DataFrame
    per_acc: pd.DataFrame
    quotes: dict[str, np.ndarray] = field(default_factory=dict)
    quote_note: dict[str, str] = field(default_factory=dict)
    # Register A-throughput-error's default; cost_inputs always sets it from the register.
    throughput_log_sigma: float = 0.15
    #: Per-accelerator sigma of the *inference* throughput where the team measured
    #: (:func:`with_throughput_sigmas`); the others, and training, keep the register's.
    inference_log_sigma: Mapping[str, float] = field(default_factory=dict)


def _recentre(value: float, reg_value: float, low: float, high: float) -> tuple[float, float]:
    """Shift a register range to a scenario value (proportionally; additively at zero)."""
    if value == reg_value:
        return low, high
    if reg_value == 0:
        return low + value, high + value
    return low * value / reg_value, high * value / reg_value


def _register(assumptions: pd.DataFrame) -> dict[str, pd.Series]:
    return {row.id: row for row in assumptions.itertuples(index=False)}


#: A quote older than this many days is flagged in the report (9 months, ~274 days): GPU
#: rental rates moved by a third or more within a year in 2025-26 (H100 on-demand fell from
#: above $7 in early 2024 to about $3 in 2026, aimultiple's index), so an old quote may no
#: longer be offered at that price.
STALE_QUOTE_DAYS = 274
NO_QUOTE = "no quote in this pool"


def split_pool(pool: str) -> tuple[str, str]:
    """``'neocloud-list/on-demand'`` -> ``('neocloud-list', 'on-demand')``.

    >>> split_pool("hyperscaler-list/1-year")
    ('hyperscaler-list', '1-year')
    """
    provider_class, _, term = pool.partition("/")
    return provider_class, term


def quote_ages(quotes: pd.DataFrame) -> pd.DataFrame:
    """Quotes with ``age_days`` and ``stale`` (older than :data:`STALE_QUOTE_DAYS`).

    Age is counted to the latest access date in the table, not to today's clock, so the
    same data gives the same report next year.
    """
    q = quotes.copy()
    if q.empty:
        return q.assign(age_days=pd.Series(dtype=float), stale=pd.Series(dtype=bool))
    as_of = pd.to_datetime(q["access_date"]).max()
    q["age_days"] = (as_of - pd.to_datetime(q["quote_date"])).dt.days
    q["stale"] = q["age_days"] > STALE_QUOTE_DAYS
    return q


def pool_quotes(quotes: pd.DataFrame, pool: str) -> pd.DataFrame:
    """The quotes of one pool (provider class and term), with their age and stale flag."""
    provider_class, term = split_pool(pool)
    q = quotes[(quotes["provider_class"] == provider_class) & (quotes["term"] == term)]
    return quote_ages(q.reset_index(drop=True))


def _rental_pool(quotes: pd.DataFrame, acc: str, pool: str) -> tuple[np.ndarray, str]:
    """Prices of ``acc`` in ``pool`` and a note (``NO_QUOTE``, or how many are stale)."""
    q = pool_quotes(quotes[quotes["accelerator"] == acc], pool)
    if q.empty:
        return np.array([], dtype=float), NO_QUOTE
    stale = int(q["stale"].sum())
    note = f"{stale} of {len(q)} quotes older than 9 months" if stale else ""
    return q["price_usd_per_gpu_hour"].to_numpy(dtype=float), note


def rental_medians(quotes: pd.DataFrame, pool: str) -> tuple[pd.Series, pd.Series]:
    """Median $/GPU-hour per accelerator within one pool, and the source ids behind each.

    The rented price rule of :func:`cost_inputs` (before porting), for callers that only
    need the market price (the claims). Accelerators without a quote in the pool are absent.
    """
    q = pool_quotes(quotes, pool)
    price = q.groupby("accelerator")["price_usd_per_gpu_hour"].median()
    srcs = q.groupby("accelerator")["source_id"].agg(lambda v: ";".join(sorted(set(v))))
    return price, srcs


def purchase_per_gpu(
    purchases: pd.DataFrame, *, sourced_only: bool = False
) -> tuple[pd.DataFrame, pd.Series]:
    """Purchase price per GPU (midpoint, low, high) per accelerator, and its source ids.

    One rule for every caller: GPU-module rows where they exist, else an 8-GPU server / 8,
    else a rack's price per GPU. ``sourced_only`` drops the project's own judgement rows
    (``basis = judgement``): an unsourced price can neither support nor contradict a claim.
    """
    df = purchases
    if sourced_only:
        df = df[df["basis"] != "judgement"]
    if df.empty:
        return pd.DataFrame(columns=["price", "low", "high"]), pd.Series(dtype=object)
    div = np.where(df["unit"] == "server_8gpu", GPUS_PER_SERVER, 1.0)
    rank = df["unit"].map({"gpu": 0, "server_8gpu": 1, "rack_per_gpu": 2})
    df = df.assign(low=df["price_usd_low"] / div, high=df["price_usd_high"] / div, rank=rank)
    best = df[df["rank"] == df.groupby("accelerator")["rank"].transform("min")]
    g = best.groupby("accelerator")
    out = pd.DataFrame({"low": g["low"].min(), "high": g["high"].max()})
    out["price"] = (out["low"] + out["high"]) / 2
    srcs = g["source_id"].agg(lambda v: ";".join(sorted(set(v))))
    return out[["price", "low", "high"]], srcs


def cost_inputs(
    sc: Scenario,
    *,
    mode: Mode | None = None,
    quotes: pd.DataFrame | None = None,
    purchases: pd.DataFrame | None = None,
    facility: pd.DataFrame | None = None,
    assumptions: pd.DataFrame | None = None,
) -> CostInputs:
    """Assemble the cost model's inputs for a scenario (tables default to ``data/``)."""
    from analysis import data

    quotes = data.load_table("rental_quotes") if quotes is None else quotes
    purchases = data.load_table("purchase_prices") if purchases is None else purchases
    facility = data.load_table("facility") if facility is None else facility
    assumptions = data.load_table("assumptions") if assumptions is None else assumptions
    reg = _register(assumptions)
    cost = sc.cost
    rows = []
    for name, (attr, aid) in GLOBAL_INPUTS.items():
        entry = reg[aid]
        value = float(getattr(cost, attr)) if attr else float(entry.value)
        low, high = _recentre(value, float(entry.value), float(entry.low), float(entry.high))
        low = max(min(low, value), _LOWER.get(name, 0.0))
        high = min(max(high, value), _UPPER.get(name, np.inf))
        rows.append({"input": name, "value": value, "low": low, "high": high, "assumption_id": aid})
    glob = pd.DataFrame(rows).set_index("input")

    accs = tuple(sc.accelerators)
    per: dict[str, list[float]] = {}

    def put(name: str, v: float, lo: float, hi: float) -> None:
        per.setdefault(name, []).append(v)
        per.setdefault(f"{name}_low", []).append(lo)
        per.setdefault(f"{name}_high", []).append(hi)

    qpools: dict[str, np.ndarray] = {}
    qnotes: dict[str, str] = {}
    sw = reg.get("A-software-nvidia")
    sigma = float(reg["A-throughput-error"].value)
    for acc in accs:
        vendor = ids.vendor_of(acc)
        pp = purchases[purchases["accelerator"] == acc]
        gpu = pp[pp["unit"] == "gpu"]
        srv = pp[pp["unit"] == "server_8gpu"]
        rack = pp[pp["unit"] == "rack_per_gpu"]
        if gpu.empty:
            put("gpu_price_usd", np.nan, np.nan, np.nan)
        else:
            lo, hi = gpu["price_usd_low"].min(), gpu["price_usd_high"].max()
            put("gpu_price_usd", (lo + hi) / 2, lo, hi)
        if acc in cost.server_price_usd:
            v = float(cost.server_price_usd[acc])
            put("server_price_usd", v, v, v)
        elif not srv.empty:
            lo, hi = srv["price_usd_low"].min(), srv["price_usd_high"].max()
            put("server_price_usd", (lo + hi) / 2, lo, hi)
        elif not rack.empty:
            # Eight GPUs' share of the rack: CPUs, NVLink switches, chassis already inside.
            lo = GPUS_PER_SERVER * rack["price_usd_low"].min()
            hi = GPUS_PER_SERVER * rack["price_usd_high"].max()
            put("server_price_usd", (lo + hi) / 2, lo, hi)
        else:
            put("server_price_usd", np.nan, np.nan, np.nan)
        fk = facility[
            (facility["parameter"] == "server_power_kw") & (facility["accelerator"] == acc)
        ]
        if fk.empty:
            put("server_power_kw", np.nan, np.nan, np.nan)
        else:
            put("server_power_kw", fk["value"].mean(), fk["low"].min(), fk["high"].max())
        pm = float(cost.porting_engineer_months.get(vendor, 0.0))
        entry = reg.get(f"A-porting-effort-{vendor.lower()}")
        if entry is None:
            put("porting_engineer_months", pm, pm, pm)
        else:
            lo, hi = _recentre(pm, float(entry.value), float(entry.low), float(entry.high))
            put("porting_engineer_months", pm, min(lo, pm), max(hi, pm))
        if vendor == "NVIDIA" and sw is not None:
            put("software_usd_per_gpu_year", float(sw.value), float(sw.low), float(sw.high))
        else:
            put("software_usd_per_gpu_year", 0.0, 0.0, 0.0)
        if acc in cost.gpu_hour_usd:
            pool, note = np.array([float(cost.gpu_hour_usd[acc])]), "scenario override"
        else:
            pool, note = _rental_pool(quotes, acc, cost.rental_pool)
        qpools[acc], qnotes[acc] = pool, note
        med = float(np.median(pool)) if pool.size else np.nan
        put(
            "rental_usd_per_gpu_hour",
            med,
            float(pool.min()) if pool.size else np.nan,
            float(pool.max()) if pool.size else np.nan,
        )
        put("throughput_factor", 1.0, float(np.exp(-Z_95 * sigma)), float(np.exp(Z_95 * sigma)))
    per_acc = pd.DataFrame(per, index=pd.Index(accs, name="accelerator"))
    return CostInputs(
        accelerators=accs,
        mode=mode or cost.mode,
        fleet_gpus=cost.fleet_gpus,
        globals=glob,
        per_acc=per_acc,
        quotes=qpools,
        quote_note=qnotes,
        throughput_log_sigma=sigma,
    )


class ScenarioInputs(NamedTuple):
    """The cost model's inputs in both modes, and the one the scenario's mode selects.

    Both share every value and range; only ``mode`` differs. The chapter needs both: its
    tables follow the scenario's mode, while the article's claims are about buying
    (hardware discount) and renting (per-tier comparison) whatever the scenario chose.
    """

    selected: CostInputs
    buy: CostInputs
    rent: CostInputs


def scenario_inputs(sc: Scenario, *, assumptions: pd.DataFrame | None = None) -> ScenarioInputs:
    """Buy-mode and rent-mode :func:`cost_inputs`, and the one for the scenario's mode.

    Args:
        sc: the scenario (``sc.cost.mode`` picks ``selected``).
        assumptions: the assumptions register (default: ``data/``), read once for both.

    Returns:
        ``(selected, buy, rent)``; ``selected`` is the ``buy`` or the ``rent`` object itself.
    """
    if assumptions is None:
        from analysis import data

        assumptions = data.load_table("assumptions")
    buy = cost_inputs(sc, mode="buy", assumptions=assumptions)
    rent = cost_inputs(sc, mode="rent", assumptions=assumptions)
    return ScenarioInputs(buy if sc.cost.mode == "buy" else rent, buy, rent)


def _id_columns(accelerators: Any) -> dict[str, list[str]]:
    """``vendor`` and ``status`` columns for a sequence of accelerator ids.

    >>> _id_columns(["MI300X", "VR200"])
    {'vendor': ['AMD', 'NVIDIA'], 'status': ['shipping', 'announced']}
    """
    accs = list(accelerators)
    return {"vendor": [ids.vendor_of(a) for a in accs], "status": [ids.status_of(a) for a in accs]}


def _point_params(inp: CostInputs) -> dict[str, Any]:
    """Default inputs as arrays: globals scalar, per-accelerator shape (n_acc,)."""
    p: dict[str, Any] = {k: float(v) for k, v in inp.globals["value"].items()}
    for name in ACC_INPUTS:
        p[name] = inp.per_acc[name].to_numpy(dtype=float)
    return p


# --- deterministic table ----------------------------------------------------------------
def gpu_hour_cost(sc: Scenario, inputs: CostInputs | None = None) -> pd.DataFrame:
    """Point estimate of owned and rented $/GPU-hour per accelerator, with components.

    Columns: accelerator, vendor, status, owned components (USD per paid GPU-hour),
    ``owned_gpu_hour_usd``, ``rented_gpu_hour_usd`` (median quote + platform),
    ``rent_quote_min``/``max``, ``n_quotes``, ``quote_note``, ``gpu_hour_usd`` (the
    scenario's mode), ``useful_gpu_hour_usd``.
    """
    inp = inputs or cost_inputs(sc)
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


def price_rule(sc: Scenario, inputs: CostInputs | None = None) -> pd.DataFrame:
    """The one $/GPU-hour rule every chapter prints, per accelerator, in the scenario's mode.

    Point model (defaults, median quote of the pool): ``gpu_hour_usd`` per paid GPU-hour
    (owned all-in, or rent + porting), ``useful_gpu_hour_usd`` = paid / utilization (what a
    token costs), ``price_note`` ("no quote in this pool", stale quotes, missing purchase
    price or power). NaN where the mode's inputs are missing: such a part is left out of
    every cost comparison, never priced by default.
    """
    df = gpu_hour_cost(sc, inputs)
    notes = []
    inp = inputs or cost_inputs(sc)
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


def scenario_warnings(sc: Scenario) -> list[str]:
    """:func:`mode_gaps` for the scenario's own mode, built from ``data/`` (for ``validate``)."""
    return mode_gaps(sc, cost_inputs(sc))


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
    return d


def with_throughput_sigmas(inp: CostInputs, sigmas: Mapping[str, float]) -> CostInputs:
    """``inp`` with the serving throughput sigma of some accelerators replaced.

    ``sigmas``: accelerator -> lognormal sigma (:func:`analysis.measurements.throughput_sigmas`:
    the residual of the team's own measurements around the corrected model). The tier
    Monte Carlo draws those accelerators' throughput error with it, and the tornado swings
    their ``throughput_factor`` over its 5-95 % range; accelerators not listed, and the
    training run, keep ``A-throughput-error``.
    """
    import dataclasses

    known = {a: float(v) for a, v in sigmas.items() if a in inp.accelerators}
    if not known:
        return inp
    per = inp.per_acc.copy()
    for a, sig in known.items():
        per.at[a, "throughput_factor_low"] = float(np.exp(-Z_95 * sig))
        per.at[a, "throughput_factor_high"] = float(np.exp(Z_95 * sig))
    return dataclasses.replace(
        inp, per_acc=per, inference_log_sigma={**inp.inference_log_sigma, **known}
    )


@dataclass(frozen=True)
class Simulation:
    """Monte Carlo results: summaries plus the joint draws (for tests and charts)."""

    gpu_hour: pd.DataFrame
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
        return np.nanmedian(x, axis=-1)


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
) -> Simulation:
    """Monte Carlo of $/GPU-hour, $/million tokens per tier and $ per training run.

    Args:
        sc: the scenario (mode, draws and seed from ``sc.cost``).
        tiers: ``inference.evaluate_tiers(sc)`` output (tier_index, tier, accelerator,
            feasible, tokens_per_s_per_gpu, ...); None skips the tier costs.
        training: ``training.evaluate_training(sc)`` output (accelerator, feasible,
            gpu_hours, ...); None skips the training costs.
        inputs: precomputed :func:`cost_inputs` (default: built from ``data/``).
        n: number of draws (default ``sc.cost.mc_draws``).
    """
    inp = inputs or cost_inputs(sc)
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
                c = cost_per_million_tokens(
                    useful[idx], tps * d["inference_throughput_factor"][idx]
                )
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


# --- break-even --------------------------------------------------------------------------
# Search ranges for Brent's method, not estimates: wide enough to hold any plausible
# break-even; a variable whose range holds no sign change has no break-even (NaN).
_BRACKETS = {
    "amd_gpu_hour_usd": (1e-6, 1e4),
    "amd_utilization": (1e-3, 1.0),
    "amd_rel_throughput": (1e-3, 1e3),
    "amd_porting_engineer_months": (0.0, 1e6),
    "amd_server_price_usd": (0.0, 1e8),
    "amd_rental_quote_usd": (0.0, 1e4),
}
#: The units a buyer negotiates in: the 8-GPU server's price when buying, the provider's
#: $/GPU-hour quote when renting. Each is solved only in its own mode (in the other mode
#: it does not enter the cost); :func:`breakeven_table` can add the other mode's one.
NATIVE_VARIABLE: dict[str, str] = {"buy": "amd_server_price_usd", "rent": "amd_rental_quote_usd"}
BREAKEVEN_VARIABLES = tuple(v for v in _BRACKETS if v not in NATIVE_VARIABLE.values())


def _pair_cost(
    inp: CostInputs,
    amd: str,
    nv: str,
    work_amd: float,
    work_nv: float,
    kind: str,
    var: str | None = None,
    x: float | None = None,
) -> float:
    """AMD minus NVIDIA cost (per Mtok or per run) on the point model, with AMD's ``var`` = x."""
    p = _point_params(inp)
    ia, inv = inp.accelerators.index(amd), inp.accelerators.index(nv)
    u_a = p["utilization"]
    tf_a = 1.0
    if var == "amd_utilization":
        u_a = x
    if var == "amd_rel_throughput":
        tf_a = x
    if var == "amd_porting_engineer_months":
        p["porting_engineer_months"] = p["porting_engineer_months"].copy()
        p["porting_engineer_months"][ia] = x
    if var == "amd_server_price_usd":
        p["server_price_usd"] = p["server_price_usd"].copy()
        p["server_price_usd"][ia] = x
    if var == "amd_rental_quote_usd":
        p["rental_usd_per_gpu_hour"] = p["rental_usd_per_gpu_hour"].copy()
        p["rental_usd_per_gpu_hour"][ia] = x
    pa = dict(p, utilization=u_a)
    paid_a = np.asarray(paid_gpu_hour_usd(pa, inp.mode, inp.fleet_gpus))[ia]
    if var == "amd_gpu_hour_usd":
        paid_a = x
    paid_n = np.asarray(paid_gpu_hour_usd(p, inp.mode, inp.fleet_gpus))[inv]
    ua, un = paid_a / u_a, paid_n / p["utilization"]
    if kind == "tier":
        return float(
            cost_per_million_tokens(ua, work_amd * tf_a) - cost_per_million_tokens(un, work_nv)
        )
    return float(ua * work_amd / tf_a - un * work_nv)


def breakeven(
    inp: CostInputs,
    amd: str,
    nv: str,
    work_amd: float,
    work_nv: float,
    kind: Literal["tier", "training"] = "tier",
) -> dict[str, float]:
    """Values of each AMD-side variable at which the pair costs the same.

    ``work`` is tokens/s per GPU (``kind="tier"``) or GPU-hours per run
    (``kind="training"``). ``amd_rel_throughput`` is the factor on AMD's throughput (or
    1/factor on its GPU-hours). NaN where no break-even exists in the variable's range.
    The mode's negotiating unit comes last: ``amd_server_price_usd`` (the 8-GPU server's
    price) when buying, ``amd_rental_quote_usd`` (the provider's quote before porting) when
    renting.
    """
    from scipy.optimize import brentq

    out: dict[str, float] = {}
    for var in (*BREAKEVEN_VARIABLES, NATIVE_VARIABLE[inp.mode]):
        lo, hi = _BRACKETS[var]
        f = lambda x, v=var: _pair_cost(inp, amd, nv, work_amd, work_nv, kind, v, x)  # noqa: E731
        try:
            flo, fhi = f(lo), f(hi)
        except (ValueError, ZeroDivisionError):  # pragma: no cover - defensive
            out[var] = np.nan
            continue
        if not (np.isfinite(flo) and np.isfinite(fhi)) or flo * fhi > 0:
            out[var] = np.nan
        else:
            out[var] = float(brentq(f, lo, hi, xtol=1e-12, rtol=1e-10))
    return out


def _current_server_price(p: Mapping[str, Any], ia: int) -> float:
    """The AMD server price the point model uses (sourced server price, else 8 GPUs + platform)."""
    srv = float(np.asarray(p["server_price_usd"])[ia])
    if np.isfinite(srv):
        return srv
    return float(GPUS_PER_SERVER * np.asarray(p["gpu_price_usd"])[ia] + p["server_platform_usd"])


def breakeven_table(
    sim: Simulation, inp: CostInputs, other: CostInputs | None = None
) -> pd.DataFrame:
    """Break-even values for the cheapest AMD vs NVIDIA pair of every tier and training.

    One row per (case, variable) with the current value and an "AMD wins if ..." statement;
    ``workload`` names the case for readers (the tier's name, or "training run").
    ``other``: the cost inputs of the other mode (rent when the scenario buys, and vice
    versa); when given, the same pair's break-even in that mode's negotiating unit is added
    (``mode`` column), so a buyer also sees the rental quote that would match, and a renter
    the server price.
    """
    rows = []
    p = _point_params(inp)
    paid = np.asarray(paid_gpu_hour_usd(p, inp.mode, inp.fleet_gpus))
    cases: list[tuple[str, str, str, str, float, float]] = []
    names = {"train": "training run"}
    for s in sim.tier_summary.to_dict("records"):
        names[f"tier{s['tier_index']}"] = str(s["tier"])
        if s["cheapest_amd"] and s["cheapest_nvidia"]:
            t = sim.tiers[sim.tiers["tier_index"] == s["tier_index"]].set_index("accelerator")
            cases.append(
                (
                    f"tier{s['tier_index']}",
                    "tier",
                    s["cheapest_amd"],
                    s["cheapest_nvidia"],
                    float(t.at[s["cheapest_amd"], "tokens_per_s_per_gpu"]),
                    float(t.at[s["cheapest_nvidia"], "tokens_per_s_per_gpu"]),
                )
            )
    ts = sim.training_summary
    if ts.get("cheapest_amd") and ts.get("cheapest_nvidia"):
        t = sim.training.set_index("accelerator")
        cases.append(
            (
                "train",
                "training",
                ts["cheapest_amd"],
                ts["cheapest_nvidia"],
                float(t.at[ts["cheapest_amd"], "gpu_hours"]),
                float(t.at[ts["cheapest_nvidia"], "gpu_hours"]),
            )
        )
    for case, kind, amd, nv, wa, wn in cases:
        be = breakeven(inp, amd, nv, wa, wn, kind)  # type: ignore[arg-type]
        ia = inp.accelerators.index(amd)
        cur = {
            "amd_gpu_hour_usd": float(paid[ia]),
            "amd_utilization": float(p["utilization"]),
            "amd_rel_throughput": 1.0,
            "amd_porting_engineer_months": float(p["porting_engineer_months"][ia]),
            "amd_server_price_usd": _current_server_price(p, ia),
            "amd_rental_quote_usd": float(p["rental_usd_per_gpu_hour"][ia]),
        }
        diff = _pair_cost(inp, amd, nv, wa, wn, kind)
        solved = [(inp.mode, var, val) for var, val in be.items()]
        if other is not None and other.mode != inp.mode:
            var = NATIVE_VARIABLE[other.mode]
            solved.append((other.mode, var, breakeven(other, amd, nv, wa, wn, kind)[var]))
        for mode, var, val in solved:
            rows.append(
                {
                    "case": case,
                    "workload": names.get(case, case),
                    "amd": amd,
                    "nvidia": nv,
                    "mode": mode,
                    "variable": var,
                    "current": cur[var],
                    "breakeven": val,
                    "amd_cheaper_now": diff < 0,
                    "statement": _statement(var, amd, nv, cur[var], val, kind),
                }
            )
    # Columns even without a pair (e.g. renting with no AMD quote in the pool).
    cols = ["case", "workload", "amd", "nvidia", "mode", "variable", "current", "breakeven",
            "amd_cheaper_now", "statement"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


#: Reader-facing names of the break-even variables (no internal keys in the report).
BREAKEVEN_LABELS = {
    "amd_gpu_hour_usd": "the AMD all-in $/GPU-hour",
    "amd_utilization": "AMD's utilization",
    "amd_rel_throughput": "AMD's relative throughput",
    "amd_porting_engineer_months": "the porting effort",
    "amd_server_price_usd": "the AMD 8-GPU server price",
    "amd_rental_quote_usd": "the AMD rental quote",
}


def _statement(var: str, amd: str, nv: str, cur: float, val: float, kind: str) -> str:
    what = "per million tokens" if kind == "tier" else "per training run"
    if not np.isfinite(val):
        return f"{amd} vs {nv}: no break-even in range for {BREAKEVEN_LABELS.get(var, var)}"
    if var == "amd_gpu_hour_usd":
        return (
            f"{amd} wins {what} over {nv} if its all-in cost is below ${val:,.2f}/GPU-hour "
            f"(now ${cur:,.2f})"
        )
    if var == "amd_utilization":
        return (
            f"{amd} wins over {nv} if its utilization stays above {val:.0%} (NVIDIA at {cur:.0%})"
        )
    if var == "amd_rel_throughput":
        return f"{amd} wins over {nv} if it delivers at least {val:.2f}x the modelled throughput"
    if var == "amd_server_price_usd":
        return (
            f"{amd} wins {what} over {nv} if its 8-GPU server costs less than ${val:,.0f} "
            f"to buy (now ${cur:,.0f})"
        )
    if var == "amd_rental_quote_usd":
        return (
            f"{amd} wins {what} over {nv} if its rental quote is below ${val:,.2f}/GPU-hour "
            f"(now ${cur:,.2f}, both rented)"
        )
    return (
        f"{amd} wins over {nv} if porting/ramp-up costs less than {val:,.0f} "
        f"engineer-months (assumed {cur:,.0f})"
    )


# --- sensitivity ------------------------------------------------------------------------
#: Inputs shown in the sensitivity table and the tornado chart (largest swings first):
#: enough to show every input that moves the result, few enough to read at a glance.
TORNADO_TOP_N = 12
SENSITIVITY_COLUMNS = (
    "input",
    "assumption_id",
    "low",
    "high",
    "diff_low",
    "diff_high",
    "swing",
    "base_diff",
)


def sensitivity(
    inp: CostInputs,
    amd: str,
    nv: str,
    work_amd: float,
    work_nv: float,
    kind: Literal["tier", "training"] = "tier",
) -> pd.DataFrame:
    """Tornado data: AMD minus NVIDIA cost with each input swung to its low and high.

    Returns one row per input (sorted by swing, largest first) with
    :data:`SENSITIVITY_COLUMNS`.
    """
    base = _point_params(inp)
    ia, inv = inp.accelerators.index(amd), inp.accelerators.index(nv)

    def diff(p: dict[str, Any]) -> float:
        useful = np.asarray(useful_gpu_hour_usd(p, inp.mode, inp.fleet_gpus))
        tf = p["throughput_factor"]
        if kind == "tier":
            ca = cost_per_million_tokens(useful[ia], work_amd * tf[ia])
            cn = cost_per_million_tokens(useful[inv], work_nv * tf[inv])
        else:
            ca, cn = useful[ia] * work_amd / tf[ia], useful[inv] * work_nv / tf[inv]
        return float(ca - cn)

    b = diff(base)
    rows = []
    for name, row in inp.globals.iterrows():
        if row["low"] == row["high"]:
            continue
        dl, dh = diff(dict(base, **{name: row["low"]})), diff(dict(base, **{name: row["high"]}))
        rows.append(
            {
                "input": str(name),
                "assumption_id": row["assumption_id"],
                "low": row["low"],
                "high": row["high"],
                "diff_low": dl,
                "diff_high": dh,
            }
        )
    relevant = [
        "server_price_usd" if np.isfinite(base["server_price_usd"][i]) else "gpu_price_usd"
        for i in (ia, inv)
    ]
    names = {
        "server_power_kw",
        "porting_engineer_months",
        "software_usd_per_gpu_year",
        "throughput_factor",
    }
    names |= {"rental_usd_per_gpu_hour"} if inp.mode == "rent" else set(relevant)
    for name in sorted(names):
        for i, acc in ((ia, amd), (inv, nv)):
            lo = inp.per_acc.at[acc, f"{name}_low"]
            hi = inp.per_acc.at[acc, f"{name}_high"]
            if not (np.isfinite(lo) and np.isfinite(hi)) or lo == hi:
                continue
            vals = []
            for v in (lo, hi):
                arr = base[name].copy()
                arr[i] = v
                vals.append(diff(dict(base, **{name: arr})))
            rows.append(
                {
                    "input": f"{name} [{acc}]",
                    "assumption_id": _acc_assumption(name, acc),
                    "low": lo,
                    "high": hi,
                    "diff_low": vals[0],
                    "diff_high": vals[1],
                }
            )
    df = pd.DataFrame(rows)
    df["swing"] = (df["diff_high"] - df["diff_low"]).abs()
    df["base_diff"] = b
    return df.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)


def tier_sensitivity(sim: Simulation, inp: CostInputs) -> tuple[str, pd.DataFrame]:
    """Tornado data for the tightest tier where both vendors have a feasible candidate.

    Returns ``(title, frame)``: the frame is :func:`sensitivity` for that tier's cheapest
    AMD and NVIDIA pair; when no tier has a feasible candidate of each vendor (e.g. a model
    no AMD part can serve under the tightest bound), the frame is empty and the title says
    why, instead of comparing against a missing candidate.
    """
    summary = sim.tier_summary
    both = summary[(summary["cheapest_amd"] != "") & (summary["cheapest_nvidia"] != "")]
    if both.empty:
        empty = pd.DataFrame(columns=list(SENSITIVITY_COLUMNS))
        return "No latency tier has a feasible candidate of both vendors: nothing to compare", empty
    pair = both.sort_values("tier_index", kind="stable").iloc[0]
    tt = sim.tiers[sim.tiers["tier_index"] == pair["tier_index"]].set_index("accelerator")
    amd, nv = pair["cheapest_amd"], pair["cheapest_nvidia"]
    sens = sensitivity(
        inp,
        amd,
        nv,
        float(tt.at[amd, "tokens_per_s_per_gpu"]),
        float(tt.at[nv, "tokens_per_s_per_gpu"]),
    )
    return f"{amd} minus {nv}: USD per million tokens ({pair['tier']})", sens


def _acc_assumption(name: str, acc: str) -> str:
    if name == "porting_engineer_months":
        return f"A-porting-effort-{ids.vendor_of(acc).lower()}"
    if name == "software_usd_per_gpu_year":
        return "A-software-nvidia"
    if name == "throughput_factor":
        return "A-throughput-error"
    return ""


# --- key results --------------------------------------------------------------------------
def key_results(
    sim: Simulation,
    be: pd.DataFrame,
    mode: str,
    claims: pd.DataFrame | None = None,
    sim_rent: Simulation | None = None,
) -> dict[str, Any]:
    """The chapter's key results (names fixed in docs/contracts.md).

    Args:
        sim: :func:`simulate` output for the scenario's mode.
        be: :func:`breakeven_table` output.
        mode: the scenario's cost mode.
        claims: :func:`claim_numbers` output; adds ``claim_hw_discount_pct_min``/``max``
            (None without any generation pair) and ``claim_hidden_costs_exceed_gap_any``.
        sim_rent: :func:`rent_simulation` output; adds ``claim_rent_p_amd_cheaper_min``,
            the lowest P(AMD cheaper) over the tiers when renting.

    Returns:
        Key name -> value, in display order (the claim keys last).
    """
    out: dict[str, Any] = {"mode": mode}
    for r in sim.gpu_hour.itertuples(index=False):
        # The price rule's point figure (the one every chapter prints), not the MC median.
        out[f"gpu_hour_usd_{r.accelerator}"] = getattr(r, "gpu_hour_usd_point", r.gpu_hour_usd)
    for r in sim.tiers.itertuples(index=False):
        key = f"tier{r.tier_index}_cost_per_mtok_{r.accelerator}"
        out[key], out[f"{key}_p05"], out[f"{key}_p95"] = (
            r.cost_per_mtok,
            r.cost_per_mtok_p05,
            r.cost_per_mtok_p95,
        )
    for s in sim.tier_summary.to_dict("records"):
        i = s["tier_index"]
        out[f"tier{i}_cheapest"] = s["cheapest"]
        out[f"tier{i}_p_amd_cheaper"] = s["p_amd_cheaper"]
        out[f"tier{i}_breakeven_amd_gpu_hour_usd"] = _breakeven_price(be, f"tier{i}")
        _add_ratio_and_breakevens(out, f"tier{i}", s, be)
    for r in sim.training.itertuples(index=False):
        out[f"train_cost_usd_{r.accelerator}"] = r.train_cost_usd
        out[f"train_cost_usd_{r.accelerator}_p05"] = r.train_cost_usd_p05
        out[f"train_cost_usd_{r.accelerator}_p95"] = r.train_cost_usd_p95
    if sim.training_summary:
        out["train_cheapest"] = sim.training_summary["cheapest"]
        out["train_p_amd_cheaper"] = sim.training_summary["p_amd_cheaper"]
        out["train_breakeven_amd_gpu_hour_usd"] = _breakeven_price(be, "train")
        _add_ratio_and_breakevens(out, "train", sim.training_summary, be)
    # An empty claims table (no generation pair in the scenario) has no columns at all.
    has_claims = claims is not None and len(claims) > 0
    if claims is not None:
        hw = claims["hardware_discount_pct"] if has_claims else None
        out["claim_hw_discount_pct_min"] = None if hw is None else float(hw.min())
        out["claim_hw_discount_pct_max"] = None if hw is None else float(hw.max())
    if sim_rent is not None:
        rent = sim_rent.tier_summary
        out["claim_rent_p_amd_cheaper_min"] = (
            float(rent["p_amd_cheaper"].min()) if len(rent) else None
        )
    if claims is not None:
        out["claim_hidden_costs_exceed_gap_any"] = (
            bool(claims["hidden_costs_exceed_gap"].any()) if has_claims else False
        )
    return out


def _breakeven_price(be: pd.DataFrame, case: str, var: str = "amd_gpu_hour_usd") -> float | None:
    if be.empty:
        return None
    sel = be[(be["case"] == case) & (be["variable"] == var)]
    return float(sel["breakeven"].iloc[0]) if len(sel) else None


def _breakeven_current(be: pd.DataFrame, case: str, var: str) -> float | None:
    if be.empty:
        return None
    sel = be[(be["case"] == case) & (be["variable"] == var)]
    return float(sel["current"].iloc[0]) if len(sel) else None


def _add_ratio_and_breakevens(
    out: dict[str, Any], case: str, summary: Mapping[str, Any], be: pd.DataFrame
) -> None:
    """Add the cost ratio and the break-evens in the summary's units to ``out``.

    The AMD/NVIDIA ratio is the median, p05 and p95 of the per-draw ratio; the
    break-evens are in relative throughput, server price and rental quote, with the
    current server price and quote beside them.
    """
    for q in ("", "_p05", "_p95"):
        out[f"{case}_cost_ratio{q}"] = summary.get(f"cost_ratio{q}", np.nan)
    out[f"{case}_breakeven_amd_rel_throughput"] = _breakeven_price(be, case, "amd_rel_throughput")
    for var in ("amd_server_price_usd", "amd_rental_quote_usd"):
        out[f"{case}_breakeven_{var}"] = _breakeven_price(be, case, var)
        out[f"{case}_current_{var}"] = _breakeven_current(be, case, var)


# --- benchmarks -------------------------------------------------------------------------
def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """Speed targets for ``make bench``: the 100k-draw Monte Carlo in under 2 s."""
    sc = Scenario(name="bench", title="bench")
    inp = cost_inputs(sc)
    tiers = example_tiers(sc)
    training = example_training(sc)
    return [
        (
            "tco monte carlo 100k draws",
            lambda: simulate(sc, tiers, training, inputs=inp, n=100_000),
            2.0,
        ),
    ]


def example_tiers(sc: Scenario) -> pd.DataFrame:
    """Synthetic tier throughputs (for tests and benchmarks only, never for results).

    Tokens/s per GPU scale with memory bandwidth in the tightest tier and with a generic
    per-generation factor otherwise; announced parts are infeasible.
    """
    base = {
        "H100-SXM": 1.0,
        "H200": 1.4,
        "B200": 2.6,
        "B300": 3.0,
        "GB200": 3.0,
        "GB300": 3.4,
        "MI300X": 1.3,
        "MI325X": 1.5,
        "MI350X": 2.3,
        "MI355X": 2.5,
    }
    rows = []
    for ti, tier in enumerate(sc.inference.tiers):
        scale = 600.0 * (ti + 1)
        for acc in sc.accelerators:
            f = base.get(acc)
            rows.append(
                {
                    "tier_index": ti,
                    "tier": tier.name,
                    "accelerator": acc,
                    "vendor": ids.vendor_of(acc),
                    "status": ids.status_of(acc),
                    "feasible": f is not None,
                    "tokens_per_s_per_gpu": scale * f if f is not None else np.nan,
                }
            )
    return pd.DataFrame(rows)


def example_training(sc: Scenario) -> pd.DataFrame:
    """Synthetic training GPU-hours (for tests and benchmarks only, never for results)."""
    base = {
        "H100-SXM": 1.0,
        "H200": 0.9,
        "B200": 0.45,
        "B300": 0.4,
        "GB200": 0.4,
        "GB300": 0.35,
        "MI300X": 1.1,
        "MI325X": 1.0,
        "MI350X": 0.6,
        "MI355X": 0.55,
    }
    rows = []
    for acc in sc.accelerators:
        f = base.get(acc)
        rows.append(
            {
                "accelerator": acc,
                "vendor": ids.vendor_of(acc),
                "status": ids.status_of(acc),
                "feasible": f is not None,
                "gpu_hours": 4.0e5 * f if f else np.nan,
            }
        )
    return pd.DataFrame(rows)


#: Like-for-like generation pairs used to test the article's cost claims.
CLAIM_PAIRS: tuple[tuple[str, str], ...] = (
    ("MI300X", "H100-SXM"),
    ("MI325X", "H200"),
    ("MI355X", "B200"),
    # The current generation of both vendors (8-GPU servers on each side).
    ("MI355X", "B300"),
)
CLAIM_COLUMNS = (
    "amd", "nvidia", "amd_price_per_gpu_usd", "nvidia_price_per_gpu_usd",
    "hardware_discount_pct", "amd_owned_gpu_hour_usd", "nvidia_owned_gpu_hour_usd",
    "owned_discount_pct", "amd_rent_median_usd", "nvidia_rent_median_usd", "rent_discount_pct",
    "hardware_saving_per_gpu_hour_usd", "amd_porting_per_gpu_hour_usd",
    "hidden_costs_exceed_gap",
)  # fmt: skip


def claim_numbers(
    buy: pd.DataFrame, inp: CostInputs, pairs: tuple[tuple[str, str], ...] = CLAIM_PAIRS
) -> pd.DataFrame:
    """Numbers behind the article's cost claims, per AMD/NVIDIA generation pair.

    ``buy`` is :func:`gpu_hour_cost` output, in either mode (only its ``owned_*`` columns
    are read, and those do not depend on the mode). Columns: amd, nvidia, gpu price midpoints and
    the AMD discount (claim: 20-30% cheaper hardware), owned and rented $/GPU-hour and
    their AMD discounts, the AMD hardware saving per GPU-hour (capital + maintenance) and
    the AMD porting cost per GPU-hour (claim: hidden costs can outweigh the gap).
    """
    b = buy.set_index("accelerator")
    pa = inp.per_acc

    def price(a: str) -> float:
        # Per-GPU purchase price; per-server price / 8 only where no GPU price exists.
        g, s = pa.at[a, "gpu_price_usd"], pa.at[a, "server_price_usd"]
        return float(g if np.isfinite(g) else s / GPUS_PER_SERVER)

    rows = []
    for amd, nv in pairs:
        if amd not in b.index or nv not in b.index:
            continue
        price_amd, price_nv = price(amd), price(nv)
        hw = {a: b.at[a, "owned_capital"] + b.at[a, "owned_maintenance"] for a in (amd, nv)}
        rows.append(
            {
                "amd": amd,
                "nvidia": nv,
                "amd_price_per_gpu_usd": price_amd,
                "nvidia_price_per_gpu_usd": price_nv,
                "hardware_discount_pct": 100 * (1 - price_amd / price_nv),
                "amd_owned_gpu_hour_usd": b.at[amd, "owned_gpu_hour_usd"],
                "nvidia_owned_gpu_hour_usd": b.at[nv, "owned_gpu_hour_usd"],
                "owned_discount_pct": 100
                * (1 - b.at[amd, "owned_gpu_hour_usd"] / b.at[nv, "owned_gpu_hour_usd"]),
                "amd_rent_median_usd": pa.at[amd, "rental_usd_per_gpu_hour"],
                "nvidia_rent_median_usd": pa.at[nv, "rental_usd_per_gpu_hour"],
                "rent_discount_pct": 100
                * (
                    1 - pa.at[amd, "rental_usd_per_gpu_hour"] / pa.at[nv, "rental_usd_per_gpu_hour"]
                ),
                "hardware_saving_per_gpu_hour_usd": hw[nv] - hw[amd],
                "amd_porting_per_gpu_hour_usd": b.at[amd, "owned_platform"],
                "hidden_costs_exceed_gap": bool(b.at[amd, "owned_platform"] > hw[nv] - hw[amd]),
            }
        )
    # The same columns without any pair, so the chapter's table shows an empty table.
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
