"""Break-even values on the point model (Brent's method) and their statements."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from analysis.tco.costs import CostInputs, _point_params
from analysis.tco.formulas import GPUS_PER_SERVER, cost_per_million_tokens, paid_gpu_hour_usd
from analysis.tco.montecarlo import Simulation

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
    if var is not None and x is None:
        raise ValueError(f"_pair_cost: variable {var!r} needs its value x")
    u_a = p["utilization"]
    tf_a = 1.0
    if var == "amd_utilization" and x is not None:
        u_a = x
    if var == "amd_rel_throughput" and x is not None:
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

        def f(x: float, v: str = var) -> float:
            return _pair_cost(inp, amd, nv, work_amd, work_nv, kind, v, x)

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
    cases: list[tuple[str, Literal["tier", "training"], str, str, float, float]] = []
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
        be = breakeven(inp, amd, nv, wa, wn, kind)
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
