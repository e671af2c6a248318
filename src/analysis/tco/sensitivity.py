"""Sensitivity of the cost comparison to each input (the tornado)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from analysis import ids
from analysis.tco.costs import CostInputs, _point_params
from analysis.tco.formulas import cost_per_million_tokens, useful_gpu_hour_usd
from analysis.tco.montecarlo import Simulation, with_throughput_sigmas

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
    why, instead of comparing against a missing candidate. A tier row with its own
    ``throughput_log_sigma`` (the error of how its figure was made,
    :func:`analysis.inference.tier_uncertainty`) swings that accelerator's throughput over
    that sigma's 5-95 % range, as the Monte Carlo draws it
    (:func:`analysis.tco.montecarlo.tier_throughput_factors`).
    """
    summary = sim.tier_summary
    both = summary[(summary["cheapest_amd"] != "") & (summary["cheapest_nvidia"] != "")]
    if both.empty:
        empty = pd.DataFrame(columns=list(SENSITIVITY_COLUMNS))
        return "No latency tier has a feasible candidate of both vendors: nothing to compare", empty
    pair = both.sort_values("tier_index", kind="stable").iloc[0]
    tt = sim.tiers[sim.tiers["tier_index"] == pair["tier_index"]].set_index("accelerator")
    amd, nv = pair["cheapest_amd"], pair["cheapest_nvidia"]
    if "throughput_log_sigma" in tt.columns:
        own = tt.loc[[amd, nv], "throughput_log_sigma"].astype(float)
        inp = with_throughput_sigmas(inp, own[np.isfinite(own)].to_dict())
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
