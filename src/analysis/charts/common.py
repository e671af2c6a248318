"""Helpers several figures share: price sliders, log bounds, the y = x line."""

from __future__ import annotations

from typing import Any

import altair as alt


def _price_params(prices: Any, utilization: float) -> tuple[list[Any], dict[str, float], str]:
    """Vega-Lite sliders for the AMD and NVIDIA $/GPU-hour and the utilization.

    Each vendor's slider sets the $/GPU-hour of its reference part (its cheapest by the
    price rule); the vendor's other parts move by the same factor. Returns the params,
    the reference prices and a Vega expression for the cost per million output tokens of
    a row with ``gpu_hour_usd``, ``vendor`` and ``tokens_per_s_per_gpu``.
    """
    ref: dict[str, float] = {}
    names: dict[str, str] = {}
    for vendor in ("AMD", "NVIDIA"):
        sel = prices[(prices["vendor"] == vendor) & prices["gpu_hour_usd"].notna()]
        sel = sel[sel["status"] == "shipping"] if (sel["status"] == "shipping").any() else sel
        if len(sel):
            i = sel["gpu_hour_usd"].idxmin()
            ref[vendor], names[vendor] = (
                float(sel.at[i, "gpu_hour_usd"]),
                str(sel.at[i, "accelerator"]),
            )
        else:
            ref[vendor], names[vendor] = 1.0, "none priced"
    params = []
    for vendor, pname in (("AMD", "amd_gpu_hour"), ("NVIDIA", "nvidia_gpu_hour")):
        v = round(ref[vendor], 2)
        params.append(
            alt.param(
                name=pname,
                value=v,
                bind=alt.binding_range(
                    min=round(v * 0.25, 2),
                    max=round(v * 3, 2),
                    step=0.01,
                    name=f"{vendor} $/GPU-hour ({names[vendor]}; its other parts scale with it) ",
                ),
            )
        )
    params.append(
        alt.param(
            name="utilization",
            value=round(float(utilization), 2),
            bind=alt.binding_range(min=0.2, max=1.0, step=0.01, name="Utilization "),
        )
    )
    expr = (
        "datum.gpu_hour_usd * (datum.vendor == 'AMD' ? amd_gpu_hour / "
        f"{ref['AMD']!r} : nvidia_gpu_hour / {ref['NVIDIA']!r}) / utilization "
        "/ (datum.tokens_per_s_per_gpu * 3600) * 1e6"
    )
    return params, ref, expr


def _log_bounds(*columns: Any) -> tuple[float, float]:
    """Shared log-axis domain for a predicted-vs-measured scatter.

    A factor of 1.25 of margin either side (0.8 = 1 / 1.25: symmetric on a log axis).
    """
    lo = float(min(c.min() for c in columns)) * 0.8
    hi = float(max(c.max() for c in columns)) * 1.25
    return lo, hi


def _identity_line(lo: float, hi: float, color: str) -> alt.Chart:
    """The dashed y = x line of a predicted-vs-measured scatter (perfect prediction)."""
    return (
        alt.Chart(alt.Data(values=[{"x": lo, "y": lo}, {"x": hi, "y": hi}]))
        .mark_line(color=color, strokeDash=[4, 4])
        .encode(x="x:Q", y="y:Q")
    )
