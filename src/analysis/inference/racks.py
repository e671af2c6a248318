"""Rack-scale candidates (GB200/GB300 NVL72, announced racks) priced and powered per rack and GPU.

Issue 20: a rack-scale system is its own candidate. Its price is the sourced per-GPU rack
range times the scale-up domain, its power the facility table's server power per 8 GPUs
scaled to the rack, and its $/GPU-hour the TCO price rule's (the one every chapter prints).
:mod:`analysis.inference.deployments` re-exports :func:`rack_scale_table`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def rack_scale_table(
    specs: pd.DataFrame,
    purchase_prices: pd.DataFrame,
    facility: pd.DataFrame,
    rule: pd.DataFrame,
    accelerators: Sequence[str],
) -> pd.DataFrame:
    """Rack-scale candidates (scale-up domain > 8 GPUs) priced and powered per rack and GPU.

    The rack price is the sourced ``rack_per_gpu`` range x the domain's GPUs; power is
    ``facility.csv``'s server power per 8 GPUs scaled to the rack; ``gpu_hour_usd`` is the
    price rule's (``tco.price_rule``) figure, the one every chapter prints. Empty when
    the scenario has no rack-scale candidate.
    """
    dom = specs.set_index("accelerator")["scaleup_domain_gpus"]
    racks = [a for a in accelerators if a in dom.index and float(dom[a]) > 8]
    rows = []
    for acc in racks:
        n = float(dom[acc])
        pp = purchase_prices[
            (purchase_prices["accelerator"] == acc) & (purchase_prices["unit"] == "rack_per_gpu")
        ]
        kw = facility[
            (facility["parameter"] == "server_power_kw") & (facility["accelerator"] == acc)
        ]
        lo, hi = (
            (float(pp["price_usd_low"].min()), float(pp["price_usd_high"].max()))
            if len(pp)
            else (np.nan, np.nan)
        )
        kw8 = float(kw["value"].iloc[0]) if len(kw) else np.nan
        gh = rule.set_index("accelerator")["gpu_hour_usd"].get(acc, np.nan)
        rows.append(
            {
                "accelerator": acc,
                "scaleup_domain_gpus": int(n),
                "rack_price_usd_low": lo * n,
                "rack_price_usd_high": hi * n,
                "price_per_gpu_usd": (lo + hi) / 2.0,
                "rack_power_kw": kw8 * n / 8.0,
                "power_per_gpu_kw": kw8 / 8.0,
                "gpu_hour_usd": float(gh),
                "rack_hour_usd": float(gh) * n,
            }
        )
    return pd.DataFrame(rows)
