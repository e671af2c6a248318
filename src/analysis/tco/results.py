"""The chapter's key results, the synthetic examples and the claims' cost numbers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from analysis import ids
from analysis.params import Scenario
from analysis.tco.costs import CostInputs
from analysis.tco.formulas import GPUS_PER_SERVER
from analysis.tco.montecarlo import Simulation


# --- key results --------------------------------------------------------------------------
def key_results(
    sim: Simulation,
    be: pd.DataFrame,
    mode: str,
    claims: pd.DataFrame | None = None,
    sim_rent: Simulation | None = None,
) -> dict[str, object]:
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
