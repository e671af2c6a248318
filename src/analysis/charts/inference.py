"""Figures of the inference chapter (30-inference-tiers)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analysis import outputs
from analysis.charts.common import _identity_line, _log_bounds, _price_params
from analysis.charts.theme import (
    _accelerator_color,
    _vendor_color,
)


def plot_inference_frontier(
    front: pd.DataFrame,
    tiers: pd.DataFrame,
    prices: pd.DataFrame | None = None,
    utilization: float = 0.7,
    measured: pd.DataFrame | None = None,
) -> alt.VConcatChart:
    """Throughput per GPU vs tokens/s per user per accelerator, tier bands shaded.

    ``front``: inference.frontiers(); ``tiers``: rows with tier, lo, hi in tokens/s per
    user (1000 / TPOT bound). The x axis spans the data (bands are clipped to it, not the
    other way round); one colour per accelerator (vendor hue families, announced parts
    grey and dashed); clicking a legend entry shows that part alone. With ``prices``
    (``tco.price_rule`` rows: accelerator, gpu_hour_usd) a second panel shows the cost per
    million output tokens along the same frontier, recomputed in the browser from the
    precomputed throughputs when the sliders (AMD and NVIDIA $/GPU-hour, utilization)
    move; the lowest cost of each part is labelled. The title names the leader of the
    tightest bounded tier (computed from ``front``). ``measured``: the team's own points
    (:func:`analysis.measurements.scenario_points`: accelerator, vendor,
    tokens_per_s_per_user, tokens_per_s_per_gpu, tp, tool), drawn as filled diamonds; points
    without TPOT (MLPerf Offline) have no interactivity and are left off the chart.
    """
    from analysis import ids

    df = front.dropna(subset=["tokens_per_s_per_user", "tokens_per_s_per_gpu"]).copy()
    df["status"] = [ids.status_of(a) for a in df["accelerator"]]
    accs = list(dict.fromkeys(df["accelerator"]))
    lo_x = float(df["tokens_per_s_per_user"].min()) * 0.8
    hi_x = float(df["tokens_per_s_per_user"].max()) * 1.25
    bands = tiers.copy()
    bands["lo"] = bands["lo"].clip(lower=lo_x, upper=hi_x)
    bands["hi"] = bands["hi"].clip(lower=lo_x, upper=hi_x)
    bands = bands[bands["hi"] > bands["lo"]]
    title = "Throughput-interactivity frontier per accelerator (calibrated model)"
    bounded = tiers[tiers["lo"] > 0.1].sort_values("lo", ascending=False)
    if len(bounded):
        t = bounded.iloc[0]
        ok = df[(df["tokens_per_s_per_user"] >= t["lo"]) & (df["status"] == "shipping")]
        if len(ok):
            lead = ok.loc[ok["tokens_per_s_per_gpu"].idxmax(), "accelerator"]
            title = (
                f"{lead} serves the most tokens per GPU at {t['tier']} "
                f"(at least {t['lo']:.0f} tokens/s per user)"
            )
    x = alt.X(
        "tokens_per_s_per_user:Q",
        title="Interactivity (output tokens/s per user, log scale)",
        scale=alt.Scale(type="log", domain=[lo_x, hi_x], nice=False),
    )
    pick = alt.selection_point(name="part", fields=["accelerator"], bind="legend")
    band_layer = (
        alt.Chart(bands)
        .mark_rect(opacity=0.55, clip=True)
        .encode(
            x=alt.X("lo:Q", scale=alt.Scale(type="log", domain=[lo_x, hi_x], nice=False)),
            x2="hi:Q",
            color=alt.Color(
                "tier:N",
                title="Latency tier",
                sort=None,
                scale=alt.Scale(range=["#9ecae1", "#c6dbef", "#e6eef7", "#f2f2f2"]),
            ),
            tooltip=[alt.Tooltip("tier:N", title=outputs.title("tier"))],
        )
    )
    color = _accelerator_color(accs)
    dash = alt.StrokeDash(
        "status:N",
        title="Status",
        scale=alt.Scale(domain=["shipping", "announced"], range=[[1, 0], [5, 3]]),
    )
    tooltip = [
        alt.Tooltip("accelerator:N", title=outputs.title("accelerator")),
        *([alt.Tooltip("tp:Q", title=outputs.title("tp"), format="d")] if "tp" in df else []),
        alt.Tooltip("concurrency:Q", title=outputs.title("concurrency"), format=",d"),
        alt.Tooltip(
            "tokens_per_s_per_gpu:Q", title=outputs.title("tokens_per_s_per_gpu"), format=",.0f"
        ),
        alt.Tooltip(
            "tokens_per_s_per_user:Q", title=outputs.title("tokens_per_s_per_user"), format=",.1f"
        ),
    ]
    lines = (
        alt.Chart(df)
        .mark_line(point=alt.OverlayMarkDef(size=18))
        .encode(
            x=x,
            y=alt.Y("tokens_per_s_per_gpu:Q", title="Throughput (output tokens/s per GPU)"),
            color=color,
            strokeDash=dash,
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.12)),
            tooltip=tooltip,
        )
        .add_params(pick)
    )
    layers = [band_layer, lines]
    description = (
        "Lines: output tokens/s per GPU against tokens/s per user as concurrency grows, one "
        "colour per accelerator (AMD reds, NVIDIA greens, announced parts grey and dashed); "
        "shaded bands mark the interactivity each latency tier requires."
    )
    if measured is not None and len(measured):
        pts = measured[measured["tokens_per_s_per_user"].notna()]
        cols = [
            "accelerator",
            "vendor",
            "tp",
            "tool",
            "tokens_per_s_per_user",
            "tokens_per_s_per_gpu",
        ]
        pts = pts[cols].assign(point="measured (yours)")
        layers.append(
            alt.Chart(pts)
            .mark_point(shape="diamond", filled=True, size=90, opacity=0.9)
            .encode(
                x=x,
                y="tokens_per_s_per_gpu:Q",
                # The accelerator colours of the lines. ``color["scale"]`` is the Scale;
                # ``color.scale`` is altair's method-style setter, which does not serialize.
                fill=alt.Fill("accelerator:N", scale=color["scale"], legend=None),
                shape=alt.Shape("point:N", title="Your runs", scale=alt.Scale(range=["diamond"])),
                tooltip=[
                    "accelerator",
                    "tool",
                    "tp",
                    "tokens_per_s_per_gpu",
                    "tokens_per_s_per_user",
                ],
            )
        )
        title = f"{title}; diamonds: your measured runs (model corrected by them)"
        description += " Filled diamonds: the team's own measured runs."
    top = alt.layer(*layers).resolve_scale(color="independent").properties(width=520, height=280)
    if prices is None:
        return alt.vconcat(top).properties(title=title, description=description)
    pr = prices[["accelerator", "gpu_hour_usd"]]
    cdf = df.merge(pr, on="accelerator", how="left").dropna(subset=["gpu_hour_usd"])
    cdf["vendor"] = [ids.vendor_of(a) for a in cdf["accelerator"]]
    pinfo = pr.assign(
        vendor=[ids.vendor_of(a) for a in pr["accelerator"]],
        status=[ids.status_of(a) for a in pr["accelerator"]],
    )
    params, _, expr = _price_params(pinfo, utilization)
    cost_base = (
        alt.Chart(cdf)
        .transform_calculate(cost=expr)
        .encode(
            x=x,
            y=alt.Y(
                "cost:Q",
                title="USD per million output tokens",
                scale=alt.Scale(type="log", nice=False),
            ),
            color=_accelerator_color(accs).legend(None),
        )
    )
    cost_lines = cost_base.mark_line().encode(
        strokeDash=dash,
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.12)),
        tooltip=[*tooltip, alt.Tooltip("cost:Q", title="USD per M output tokens", format="$.3f")],
    )
    cheapest = (
        cost_base.transform_joinaggregate(min_cost="min(cost)", groupby=["accelerator"])
        .transform_filter("datum.cost == datum.min_cost")
        .mark_text(align="left", dx=5, dy=-6, fontSize=10)
        .encode(text=alt.Text("cost:Q", format="$.3f"))
    )
    bottom = alt.layer(cost_lines, cheapest).add_params(*params).properties(width=520, height=200)
    return alt.vconcat(top, bottom).properties(
        title=title,
        description=description
        + " Below: the cost per million output tokens along each frontier, recomputed "
        "from the sliders (AMD and NVIDIA $/GPU-hour, utilization).",
    )


def plot_memory_headroom(head: pd.DataFrame) -> alt.Chart:
    """Maximum concurrency per replica at the scenario's context (memory bound)."""
    return (
        alt.Chart(head)
        .mark_bar()
        .encode(
            x=alt.X("max_concurrency:Q", title="Maximum concurrent sequences per replica"),
            y=alt.Y("accelerator:N", sort="-x", title=None),
            color=_vendor_color(),
            tooltip=["accelerator", "weights_gb_per_gpu", "kv_room_gb_per_gpu", "max_concurrency"],
        )
        .properties(
            title="Memory headroom: sequences that fit at the scenario's context length",
            description=(
                "Bars: the largest number of sequences a replica can hold in HBM after "
                "the weights and a 10 % reserve, per accelerator, coloured by vendor."
            ),
        )
    )


def plot_tier_table(tiers: pd.DataFrame) -> alt.LayerChart | alt.FacetChart:
    """Heat-map table: tokens/s per GPU per tier and accelerator (blank = infeasible).

    With a ``tp`` column (``inference.evaluate_tiers``), each cell also names the chosen
    tensor-parallel degree.
    """
    data = tiers.copy()
    has_tp = "tp" in data
    data["label"] = [
        "" if v != v else (f"{v:.0f} (TP{t:.0f})" if has_tp and t == t else f"{v:.0f}")
        for v, t in zip(
            data["tokens_per_s_per_gpu"],
            data["tp"] if has_tp else data["tokens_per_s_per_gpu"],
            strict=True,
        )
    ]
    base = alt.Chart(data).encode(
        x=alt.X(
            "tier:N",
            title="Latency tier (TPOT bound)",
            sort=None,
            axis=alt.Axis(labelAngle=0, orient="top"),
        ),
        y=alt.Y("accelerator:N", title=outputs.title("accelerator"), sort=None),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(
            "tokens_per_s_per_gpu:Q", title="tokens/s per GPU", scale=alt.Scale(scheme="blues")
        ),
    )
    text = base.mark_text(fontSize=11).encode(
        text=alt.Text("label:N"),
        color=alt.condition(
            alt.datum.tokens_per_s_per_gpu > data["tokens_per_s_per_gpu"].max() * 0.6,
            alt.value("white"),
            alt.value("black"),
        ),
    )
    return alt.layer(cells, text).properties(
        width=alt.Step(120),
        height=alt.Step(24),
        title="Best output tokens/s per GPU per latency tier (chosen tensor parallelism)",
        description=(
            "Table as heat map: rows are accelerators, columns latency tiers, cells the "
            "best output tokens/s per GPU that meets the tier and the tensor-parallel "
            "degree that reaches it; blank cells cannot meet it."
        ),
    )


def plot_mlperf_validation(
    val: pd.DataFrame, held_out: str = "its MLPerf round"
) -> alt.LayerChart | alt.FacetChart:
    """Predicted vs measured MLPerf results (held out), log-log with the y = x line.

    ``held_out`` names what each point's fold left out of the calibration (for the
    chart's description).
    """
    lo, hi = _log_bounds(val["measured"], val["predicted"])
    diag = _identity_line(lo, hi, color="#777")
    pts = (
        alt.Chart(val)
        .mark_point(filled=True, opacity=0.6)
        .encode(
            x=alt.X(
                "measured:Q",
                title="Measured MLPerf result (tokens/s per accelerator)",
                scale=alt.Scale(type="log", domain=[lo, hi]),
            ),
            y=alt.Y(
                "predicted:Q",
                title="Predicted, held out (tokens/s per accelerator)",
                scale=alt.Scale(type="log", domain=[lo, hi]),
            ),
            color=_vendor_color(),
            shape=alt.Shape("scenario:N", title=outputs.title("scenario")),
            tooltip=[
                "round",
                "submitter",
                "system",
                "benchmark",
                "scenario",
                "measured",
                "predicted",
                "ape_pct",
            ],
        )
    )
    return alt.layer(diag, pts).properties(
        title="Inference model vs MLPerf: out-of-sample predictions",
        description=(
            "Scatter, log-log: each point is one MLPerf result predicted with "
            f"{held_out} left out of the calibration; the dashed line is perfect "
            "prediction; colour = vendor, shape = scenario."
        ),
    )


def plot_efficiency_trend(trend: pd.DataFrame) -> alt.LayerChart | alt.FacetChart:
    """Achieved fraction of the roofline per vendor per MLPerf round."""
    base = alt.Chart(trend).encode(
        x=alt.X("round:N", title="MLPerf Inference round", sort=None),
        y=alt.Y(
            "eta:Q", title="Achieved fraction of roofline (median)", scale=alt.Scale(domain=[0, 1])
        ),
        color=_vendor_color(),
    )
    return alt.layer(
        base.mark_line(point=True),
        base.mark_text(dy=-10, fontSize=10).encode(text=alt.Text("runs:Q", format="d")),
    ).properties(
        title="Software maturity: fitted efficiency per vendor per round",
        description=(
            "Lines per vendor: median fraction of the memory/compute roofline that "
            "MLPerf runs achieve (llama2-70b Offline basis), per round; labels give "
            "the number of runs."
        ),
    )
