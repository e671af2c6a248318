"""The cost model's inputs: the register, rental pools, purchase prices, :class:`CostInputs`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from analysis import ids
from analysis.inputs import Inputs, resolve
from analysis.params import Scenario
from analysis.tco.formulas import (
    _LOWER,
    _UPPER,
    ACC_INPUTS,
    GLOBAL_INPUTS,
    GPUS_PER_SERVER,
    Z_95,
    Mode,
)


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
    inputs: Inputs | None = None,
) -> CostInputs:
    """Assemble the cost model's inputs for a scenario.

    A table argument that is ``None`` comes from ``inputs`` (default: the default inputs,
    i.e. ``data/``).
    """
    tables = resolve(inputs)
    quotes = tables.table("rental_quotes") if quotes is None else quotes
    purchases = tables.table("purchase_prices") if purchases is None else purchases
    facility = tables.table("facility") if facility is None else facility
    assumptions = tables.table("assumptions") if assumptions is None else assumptions
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


def scenario_inputs(
    sc: Scenario, *, assumptions: pd.DataFrame | None = None, inputs: Inputs | None = None
) -> ScenarioInputs:
    """Buy-mode and rent-mode :func:`cost_inputs`, and the one for the scenario's mode.

    Args:
        sc: the scenario (``sc.cost.mode`` picks ``selected``).
        assumptions: the assumptions register (default: from ``inputs``), read once for both.
        inputs: the tables (default: the default inputs, i.e. ``data/``).

    Returns:
        ``(selected, buy, rent)``; ``selected`` is the ``buy`` or the ``rent`` object itself.
    """
    inputs = resolve(inputs)
    if assumptions is None:
        assumptions = inputs.table("assumptions")
    buy = cost_inputs(sc, mode="buy", assumptions=assumptions, inputs=inputs)
    rent = cost_inputs(sc, mode="rent", assumptions=assumptions, inputs=inputs)
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
