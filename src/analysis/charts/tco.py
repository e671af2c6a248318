"""Figures of the cost chapter (40-tco) and the summary's recommendation costs."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from analysis import outputs
from analysis.charts.common import _price_params
from analysis.charts.theme import (
    VENDOR_COLORS,
    _accelerator_color,
    _vendor_color,
)
from analysis.tco import TORNADO_TOP_N


def plot_cost_per_mtok(
    tiers: pd.DataFrame, prices: pd.DataFrame | None = None, utilization: float = 0.7
) -> alt.Chart:
    """Cost per million output tokens per accelerator and tier: point, median and interval.

    ``tiers``: :attr:`analysis.tco.Simulation.tiers` (accelerator, vendor, status, tier,
    tokens_per_s_per_gpu, cost_per_mtok, _p05, _p95, cost_per_mtok_point). Rows are
    ordered by cost within each tier (cheapest on top), one colour per accelerator; announced
    parts sit in a panel of their own (projections, outside the shipping parts' scale).
    With ``prices`` (``tco.price_rule`` rows) sliders for the AMD and NVIDIA $/GPU-hour and
    the utilization recompute the point cost in the browser from the precomputed
    throughputs; the Monte Carlo interval moves with it by the same factor. Each point is
    labelled with its $/M tokens. The title names the cheapest part of the tightest tier.
    """
    from analysis import ids

    data = tiers.dropna(subset=["cost_per_mtok"]).copy()
    data["group"] = [
        "announced (projection)" if s == "announced" else "shipping" for s in data["status"]
    ]
    if "cost_per_mtok_point" not in data:
        data["cost_per_mtok_point"] = data["cost_per_mtok"]
    accs = list(dict.fromkeys(data["accelerator"]))
    title = "Cost per million output tokens by latency tier"
    ship = data[data["status"] == "shipping"]
    if len(ship):
        first = ship[ship["tier_index"] == ship["tier_index"].min()]
        best = first.loc[first["cost_per_mtok_point"].idxmin()]
        title = (
            f"{best['accelerator']} is the cheapest per million output tokens at {best['tier']}"
            f" (${best['cost_per_mtok_point']:.3f})"
        )
    params: list[Any] = []
    if prices is not None:
        pr = prices[["accelerator", "gpu_hour_usd"]]
        data = data.merge(pr, on="accelerator", how="left")
        pinfo = pr.assign(
            vendor=[ids.vendor_of(a) for a in pr["accelerator"]],
            status=[ids.status_of(a) for a in pr["accelerator"]],
        )
        params, _, expr = _price_params(pinfo, utilization)
        calc = {
            "point": expr,
            "scale": f"({expr}) / datum.cost_per_mtok_point",
        }
    else:
        calc = {"point": "datum.cost_per_mtok_point", "scale": "1"}
    pick = alt.selection_point(name="part_cost", fields=["accelerator"], bind="legend")
    base = (
        alt.Chart(data)
        .transform_calculate(**calc)
        .transform_calculate(
            lo="datum.cost_per_mtok_p05 * datum.scale", hi="datum.cost_per_mtok_p95 * datum.scale"
        )
        .encode(
            y=alt.Y(
                "accelerator:N",
                title=None,
                sort=alt.EncodingSortField(field="cost_per_mtok_point", order="ascending"),
            ),
            color=_accelerator_color(accs),
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.15)),
        )
    )
    xt = "USD per million output tokens (dot: price rule; bar: 5-95% of the Monte Carlo)"
    bars = base.mark_rule(strokeWidth=4).encode(
        x=alt.X("lo:Q", title=xt, scale=alt.Scale(zero=False)), x2="hi:Q"
    )
    tooltip = [
        alt.Tooltip("accelerator:N", title=outputs.title("accelerator")),
        alt.Tooltip("tier:N", title=outputs.title("tier")),
        alt.Tooltip("point:Q", title="USD per M output tokens", format="$.3f"),
        alt.Tooltip("lo:Q", title="p5", format="$.3f"),
        alt.Tooltip("hi:Q", title="p95", format="$.3f"),
        alt.Tooltip(
            "tokens_per_s_per_gpu:Q", title=outputs.title("tokens_per_s_per_gpu"), format=",.0f"
        ),
    ]
    dots = base.mark_point(filled=True, size=70, stroke="black", strokeWidth=0.6).encode(
        x="point:Q", tooltip=tooltip
    )
    labels = base.mark_text(align="left", dx=7, fontSize=9, color="#333").encode(
        x="hi:Q", text=alt.Text("point:Q", format="$.3f")
    )
    layered = alt.layer(bars, dots, labels).add_params(pick, *params)
    tier_order = list(dict.fromkeys(data.sort_values("tier_index")["tier"]))
    facets: dict[str, Any] = {
        "row": alt.Row(
            "tier:N",
            title=None,
            sort=tier_order,
            header=alt.Header(labelAngle=0, labelAlign="left"),
        )
    }
    if data["group"].nunique() > 1:  # noqa: PD101 (NaN-blind, as intended)
        facets["column"] = alt.Column(
            "group:N", title=None, sort=["shipping", "announced (projection)"]
        )
    return (
        layered.properties(width=440, height=alt.Step(16))
        .facet(**facets)
        .resolve_scale(y="independent", x="independent")
        .properties(
            title=title,
            description=(
                "Per latency tier and accelerator: a dot at the cost per million output "
                "tokens under the price rule (recomputed from the sliders), a bar for the "
                "5th-95th percentile of the Monte Carlo, and the value as a label; announced "
                "parts in their own column."
            ),
        )
    )


def plot_cost_tornado(sens: pd.DataFrame, title: str) -> alt.LayerChart | alt.FacetChart:
    """Tornado chart: AMD-minus-NVIDIA cost difference as each input swings low to high.

    ``sens``: :func:`analysis.tco.sensitivity` output (input, diff_low, diff_high,
    base_diff, swing), largest swing first; the first :data:`analysis.tco.TORNADO_TOP_N`
    rows are drawn.
    """
    data = sens.head(TORNADO_TOP_N).copy()
    data["lo"] = data[["diff_low", "diff_high"]].min(axis=1)
    data["hi"] = data[["diff_low", "diff_high"]].max(axis=1)
    order = list(data["input"])
    base = float(data["base_diff"].iloc[0]) if len(data) else 0.0
    bars = (
        alt.Chart(data)
        .mark_bar(color="#7f7f7f")
        .encode(
            y=alt.Y("input:N", sort=order, title=None),
            x=alt.X(
                "lo:Q",
                title="AMD minus NVIDIA cost (USD per million tokens; negative = AMD cheaper)",
            ),
            x2="hi:Q",
            tooltip=[
                "input",
                "assumption_id",
                alt.Tooltip("low:Q", format=".4g"),
                alt.Tooltip("high:Q", format=".4g"),
                alt.Tooltip("diff_low:Q", format=".4g"),
                alt.Tooltip("diff_high:Q", format=".4g"),
            ],
        )
    )
    rule = alt.Chart(alt.Data(values=[{"x": base}])).mark_rule(color="black").encode(x="x:Q")
    zero = (
        alt.Chart(alt.Data(values=[{"x": 0.0}]))
        .mark_rule(color="#c8102e", strokeDash=[4, 3])
        .encode(x="x:Q")
    )
    return alt.layer(bars, rule, zero).properties(
        width=480,
        height=alt.Step(22),
        title=title,
        description=(
            "Tornado chart: for each input, a bar spans the AMD-minus-NVIDIA cost difference "
            "at the input's low and high value; the black line is the default difference and "
            "the dashed red line marks parity."
        ),
    )


def plot_buy_vs_rent(costs: pd.DataFrame) -> alt.Chart:
    """Owned versus rented $/GPU-hour per accelerator (point estimates).

    ``costs``: :func:`analysis.tco.gpu_hour_cost` output.
    """
    data = costs.melt(
        id_vars=["accelerator", "vendor"],
        value_vars=["owned_gpu_hour_usd", "rented_gpu_hour_usd"],
        var_name="how",
        value_name="usd",
    ).dropna(subset=["usd"])
    data["how"] = data["how"].map(
        {
            "owned_gpu_hour_usd": "buy (owned, all-in)",
            "rented_gpu_hour_usd": "rent (median quote + porting)",
        }
    )
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("usd:Q", title="USD per paid GPU-hour"),
            y=alt.Y("how:N", title=None),
            row=alt.Row("accelerator:N", title=None, sort=None),
            color=_vendor_color(),
            opacity=alt.Opacity("how:N", legend=None),
            tooltip=["accelerator", "how", alt.Tooltip("usd:Q", format=".2f")],
        )
        .properties(
            width=420,
            height=40,
            title="Buy or rent: USD per GPU-hour",
            description=(
                "Paired bars per accelerator: all-in owned cost and median rental quote "
                "(plus porting cost) per paid GPU-hour, coloured by vendor."
            ),
        )
    )


def plot_recommendation_costs(ratios: pd.DataFrame) -> alt.LayerChart | alt.FacetChart:
    """AMD/NVIDIA cost ratio per workload (median of the joint draws, 5-95% interval).

    Takes ``decision.cost_ratios(decision.recommend(...))`` (charts draw, they do not
    decide: the caller computes the ratios). The ratio is plotted rather than the two vendors'
    intervals: the draws are joint (shared utilization, power, capital cost), so two wide
    intervals can overlap while the ratio stays clearly below 1 (which is what P(AMD
    cheaper) measures). The title states the conclusion, counted from the data.
    """
    df = ratios
    cheaper = int((df["ratio"] < 1).sum())
    title = (
        f"AMD is cheaper in {cheaper} of {len(df)} workloads (AMD/NVIDIA cost ratio below 1)"
        if len(df)
        else "No workload has both vendors' costs"
    )
    df = df.assign(
        label=[f"{m:+.0f}% margin" for m in df["margin_pct"]],
        side=["AMD cheaper" if x < 1 else "NVIDIA cheaper" for x in df["ratio"]],
    )
    lo = float(min(df["low"].min(), 1.0)) if len(df) else 0.5
    hi = float(max(df["high"].max(), 1.0)) if len(df) else 1.5
    pad = (hi - lo) * 0.08
    scale = alt.Scale(domain=[lo - pad, hi + pad], zero=False)
    axis_title = "AMD / NVIDIA cost (median, 5-95% of joint draws; below 1 = AMD cheaper)"
    x = alt.X("ratio:Q", title=axis_title, scale=scale)
    y = alt.Y("workload:N", title=None, sort=None, axis=alt.Axis(labelLimit=300))
    color = alt.Color(
        "side:N",
        title=None,
        scale=alt.Scale(
            domain=["AMD cheaper", "NVIDIA cheaper"],
            range=[VENDOR_COLORS["AMD"], VENDOR_COLORS["NVIDIA"]],
        ),
        legend=alt.Legend(orient="bottom"),
    )
    tooltip = [
        alt.Tooltip("workload:N", title=outputs.title("workload")),
        alt.Tooltip("amd:N", title=outputs.title("amd")),
        alt.Tooltip("nvidia:N", title=outputs.title("nvidia")),
        alt.Tooltip("ratio:Q", title="Cost ratio", format=".2f"),
        alt.Tooltip("low:Q", title="p5", format=".2f"),
        alt.Tooltip("high:Q", title="p95", format=".2f"),
        alt.Tooltip("margin_pct:Q", title="Cost margin (%)", format=".0f"),
        alt.Tooltip("p_call:Q", title="P(call)", format=".2f"),
    ]
    base = alt.Chart(df).encode(y=y)
    parity = (
        alt.Chart(alt.Data(values=[{"x": 1.0}]))
        .mark_rule(color="#555", strokeDash=[4, 3])
        .encode(x="x:Q")
    )
    rules = base.mark_rule(strokeWidth=3).encode(
        x=alt.X("low:Q", title=axis_title, scale=scale), x2="high:Q", color=color, tooltip=tooltip
    )
    dots = base.mark_point(filled=True, size=90).encode(x=x, color=color, tooltip=tooltip)
    text = base.mark_text(align="left", dx=8, dy=-9, fontSize=10, color="#333").encode(
        x=x, text="label:N"
    )
    return alt.layer(parity, rules, dots, text).properties(
        width=460,
        height=alt.Step(30),
        title=title,
        description=(
            "For each workload, a dot at the median ratio of the cheapest AMD to the cheapest "
            "NVIDIA candidate's cost over the joint Monte Carlo draws, a line from its 5th to "
            "its 95th percentile, and the dashed parity line at 1."
        ),
    )
