"""Small cost formulas: capital recovery, $/M tokens, owned and paid GPU-hour costs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, overload

import numpy as np
import numpy.typing as npt

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


#: A scalar or an array of them: every formula works element-wise.
FloatOrArray = float | np.ndarray
#: Cost inputs by name (:data:`GLOBAL_INPUTS` scalars, :data:`ACC_INPUTS` arrays).
CostParams = Mapping[str, float | np.ndarray]


# --- small formulas --------------------------------------------------------------------
def capital_recovery_factor(rate: npt.ArrayLike, years: npt.ArrayLike) -> FloatOrArray:
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


@overload
def cost_per_million_tokens(gpu_hour_usd: float, tokens_per_s_per_gpu: float) -> float: ...
@overload
def cost_per_million_tokens(
    gpu_hour_usd: npt.ArrayLike, tokens_per_s_per_gpu: npt.ArrayLike
) -> FloatOrArray: ...
def cost_per_million_tokens(
    gpu_hour_usd: npt.ArrayLike, tokens_per_s_per_gpu: npt.ArrayLike
) -> FloatOrArray:
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


def owned_cost_components(p: CostParams, fleet_gpus: float) -> dict[str, FloatOrArray]:
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


def platform_cost_per_gpu_hour(p: CostParams, fleet_gpus: float) -> FloatOrArray:
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


def paid_gpu_hour_usd(p: CostParams, mode: Mode, fleet_gpus: float) -> FloatOrArray:
    """All-in cost per paid GPU-hour: owned components, or rent + platform cost."""
    if mode == "buy":
        return sum(owned_cost_components(p, fleet_gpus).values())
    return np.asarray(p["rental_usd_per_gpu_hour"]) + platform_cost_per_gpu_hour(p, fleet_gpus)


def useful_gpu_hour_usd(p: CostParams, mode: Mode, fleet_gpus: float) -> FloatOrArray:
    """Cost per useful GPU-hour (paid cost / utilization)."""
    return paid_gpu_hour_usd(p, mode, fleet_gpus) / p["utilization"]
