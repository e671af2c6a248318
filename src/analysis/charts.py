"""Figures: the report's Altair theme, a spec + static-image renderer, one function per figure.

Why a custom renderer (see the toolchain notes): altair's built-in renderers either write a
MIME key nbformat rejects, or emit HTML that loads Vega from a CDN with a random element id.
:func:`enable` registers ``gpu-report``, which returns the Vega-Lite spec (interactive HTML
and nbval compare it as a dict), a PNG (PDF routes, pandoc, Quarto) and an ``<img>`` with a
small upgrade script that swaps in the interactive chart when Vega is on the page.

Figure functions take tidy DataFrames and return ``alt.Chart`` objects; they never compute
analysis results. Every figure has a title, axis titles with units and a description
(used as alt text).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

import altair as alt

from analysis.tco import TORNADO_TOP_N
from analysis.textsafe import script_json_text

VEGALITE_MIME = "application/vnd.vegalite.v6+json"
#: What a chart says, independent of how a Vega-Lite release serializes it (see
#: :func:`chart_summary`); the nbval goldens compare this instead of the raw spec.
CHART_SUMMARY_MIME = "application/vnd.gpu-report.chart-summary+json"
#: Significant digits kept for chart data in the summary: finer than any axis, label or
#: tooltip shows, coarser than float noise between library releases.
SUMMARY_DIGITS = 4
RENDERER = "gpu-report"
THEME = "gpu-report"

#: Colour per vendor, used consistently in every figure (AMD red, NVIDIA green).
VENDOR_COLORS = {"AMD": "#c8102e", "NVIDIA": "#5a9a08"}
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "font": FONT,
            "view": {"continuousWidth": 560, "continuousHeight": 320, "stroke": None},
            "title": {
                "fontSize": 15,
                "anchor": "start",
                "subtitleFontSize": 12,
                "subtitleColor": "#555",
            },
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6"},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "right"},
            "range": {
                "category": [
                    "#c8102e",
                    "#5a9a08",
                    "#1f77b4",
                    "#ff7f0e",
                    "#9467bd",
                    "#8c564b",
                    "#e377c2",
                    "#7f7f7f",
                ]
            },
        }
    }


def _png(spec: dict[str, Any]) -> bytes:
    import vl_convert as vlc

    return vlc.vegalite_to_png(spec, scale=2)


def _element_id(spec: dict[str, Any]) -> str:
    # Deterministic (unlike altair's random ids) so nbval and diffs stay stable.
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return f"vega-{digest}"


def render_bundle(spec: dict[str, Any]) -> dict[str, Any]:
    """MIME bundle for one chart: Vega-Lite spec, PNG, and upgradeable HTML."""
    png = base64.b64encode(_png(spec)).decode()
    eid = _element_id(spec)
    desc = spec.get("description") or _title_text(spec)
    spec_json = _script_safe(json.dumps(spec, sort_keys=True))
    img = f'<img alt="{_escape(desc)}" src="data:image/png;base64,{png}" style="max-width:100%"/>'
    html = (
        f'<div class="gpu-chart" id="{eid}">{img}</div>'
        f'<script type="application/json" id="{eid}-spec">{spec_json}</script>'
        "<script>(function(){if(window.vegaEmbed){"
        f'var s=JSON.parse(document.getElementById("{eid}-spec").textContent);'
        f'window.vegaEmbed("#{eid}",s,{{actions:false,renderer:"svg"}});'
        "}})();</script>"
    )
    return {
        VEGALITE_MIME: spec,
        CHART_SUMMARY_MIME: chart_summary(spec),
        "image/png": png,
        "text/html": html,
        "text/plain": f"<chart: {_escape(desc)}>",
    }


#: Per encoding channel, the properties that change what a reader sees.
_ENCODING_KEYS = ("field", "type", "aggregate", "bin", "timeUnit", "title", "format", "sort")
#: View-composition keys whose values are charts (recursed into).
_COMPOSITION_KEYS = ("layer", "hconcat", "vconcat", "concat")


def _view_summary(node: dict[str, Any], dataset: Callable[[Any], Any]) -> dict[str, Any]:
    """One view's mark, data reference, encodings, transforms and facet (see chart_summary)."""
    view: dict[str, Any] = {}
    if "mark" in node:
        mark = node["mark"]
        view["mark"] = mark.get("type") if isinstance(mark, dict) else mark
    if node.get("data") is not None:
        view["data"] = dataset(node["data"])
    if "encoding" in node:
        view["encoding"] = {
            channel: _encoding_summary(enc) for channel, enc in sorted(node["encoding"].items())
        }
    if node.get("transform"):
        view["transform"] = _rounded(node["transform"])
    if "facet" in node:
        view["facet"] = _encoding_summary(node["facet"])
    return view


def chart_summary(spec: dict[str, Any]) -> dict[str, Any]:
    """What a chart shows, as a small canonical dict: titles, marks, encodings, data.

    The nbval goldens compare this rather than the Vega-Lite spec, which a new altair or
    pandas release re-serializes (dataset names are content hashes, key order and default
    properties move) without anything on the page changing. Kept: title, description,
    each view's mark type, its encodings (field, type, aggregate, title, format, sort, axis
    format and scale type of every channel), filters and calculations, and the data rows
    with numbers rounded to :data:`SUMMARY_DIGITS` significant digits; datasets are named
    by order of first use. Dropped: theme/config, sizes, colours and the schema URL.

    >>> summary = chart_summary({
    ...     "title": "t", "mark": {"type": "bar"}, "data": {"name": "data-9f3e"},
    ...     "datasets": {"data-9f3e": [{"x": 1.23456}]},
    ...     "encoding": {"x": {"field": "x", "type": "quantitative", "axis": {"grid": False}}},
    ... })
    >>> summary["views"]
    [{'mark': 'bar', 'data': 'data-0', 'encoding': {'x': {'field': 'x', 'type': 'quantitative'}}}]
    >>> summary["data"]
    {'data-0': [{'x': 1.235}]}
    """
    names: dict[str, str] = {}
    datasets = spec.get("datasets", {})

    def dataset(ref: Any) -> Any:
        if isinstance(ref, dict) and "name" in ref:
            return names.setdefault(ref["name"], f"data-{len(names)}")
        if isinstance(ref, dict) and "values" in ref:
            return _rounded(ref["values"])
        return None

    views: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        view = _view_summary(node, dataset)
        if view:
            views.append(view)
        for key in _COMPOSITION_KEYS:
            for child in node.get(key, []):
                walk(child)
        if isinstance(node.get("spec"), dict):
            walk(node["spec"])

    walk(spec)
    out: dict[str, Any] = {"title": _title_text(spec)}
    if spec.get("description"):
        out["description"] = spec["description"]
    out["views"] = views
    out["data"] = {names[n]: _rounded(datasets.get(n, [])) for n in names}
    return out


def _encoding_summary(enc: Any) -> Any:
    if isinstance(enc, list):  # tooltip lists
        return [_encoding_summary(e) for e in enc]
    if not isinstance(enc, dict):
        return enc
    if "row" in enc or "column" in enc or "facet" in enc:  # facet mapping
        return {k: _encoding_summary(v) for k, v in sorted(enc.items())}
    out = {k: _rounded(enc[k]) for k in _ENCODING_KEYS if k in enc}
    axis = enc.get("axis") or enc.get("legend") or {}
    if isinstance(axis, dict) and "format" in axis:
        out["format"] = axis["format"]
    scale = enc.get("scale")
    if isinstance(scale, dict) and "type" in scale:
        out["scale"] = scale["type"]
    if "value" in enc and "field" not in enc:
        out["value"] = _rounded(enc["value"])
    if "condition" in enc:
        out["condition"] = _encoding_summary(enc["condition"])
    return out


def _rounded(value: Any) -> Any:
    """``value`` with every non-integral float at :data:`SUMMARY_DIGITS` significant digits.

    >>> _rounded({"b": [1234.5678, 16384.0, 7], "a": "x"})
    {'a': 'x', 'b': [1235.0, 16384.0, 7]}
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value  # counts and years exactly (an integral float equals them too)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer():
            return value
        return float(f"{value:.{SUMMARY_DIGITS}g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _title_text(spec: dict[str, Any]) -> str:
    title = spec.get("title", "chart")
    if isinstance(title, dict):
        title = title.get("text", "chart")
    if isinstance(title, list):
        title = " ".join(title)
    return str(title)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    )


def _script_safe(text: str) -> str:
    return script_json_text(text)


def _renderer(spec: dict[str, Any], **_: Any) -> dict[str, Any]:
    return render_bundle(spec)


def enable() -> None:
    """Register and enable the report theme and renderer (idempotent)."""
    alt.theme.register(THEME, enable=True)(_theme)
    alt.renderers.register(RENDERER, _renderer)
    alt.renderers.enable(RENDERER)
    alt.data_transformers.disable_max_rows()


# --- figure functions (one per figure; chapters append below) -------------------------


def _vendor_scale() -> alt.Scale:
    return alt.Scale(domain=list(VENDOR_COLORS), range=list(VENDOR_COLORS.values()))


def _vendor_color() -> alt.Color:
    """The vendor colour channel every figure shares (AMD red, NVIDIA green)."""
    return alt.Color("vendor:N", title="Vendor", scale=_vendor_scale())


#: Per-vendor hue families (ColorBrewer Reds / Greens, dark to light): one colour per
#: accelerator, its vendor still readable at a glance. Announced parts take greys: they
#: are projections and stay outside the shipping parts' scale.
AMD_REDS = ("#99000d", "#cb181d", "#ef3b2c", "#fb6a4a", "#fc9272", "#67000d")
NVIDIA_GREENS = ("#00441b", "#006d2c", "#238b45", "#41ab5d", "#74c476", "#a1d99b")
ANNOUNCED_GREYS = ("#525252", "#969696", "#737373", "#bdbdbd")


def accelerator_colors(accelerators: Any) -> dict[str, str]:
    """One colour per accelerator: AMD reds, NVIDIA greens, announced parts grey.

    Colours are given in the order the accelerators come (the scenario's candidate order),
    so a part keeps its colour across the report's figures.

    >>> accelerator_colors(["B300", "MI355X", "VR200", "H200"])
    {'B300': '#00441b', 'MI355X': '#99000d', 'VR200': '#525252', 'H200': '#006d2c'}
    """
    from analysis import ids

    out: dict[str, str] = {}
    used = {"AMD": 0, "NVIDIA": 0, "announced": 0}
    fam: tuple[str, ...]
    for acc in dict.fromkeys(accelerators):
        if ids.status_of(acc) == "announced":
            fam, key = ANNOUNCED_GREYS, "announced"
        else:
            key = ids.vendor_of(acc)
            fam = AMD_REDS if key == "AMD" else NVIDIA_GREENS
        out[acc] = fam[used[key] % len(fam)]
        used[key] += 1
    return out


def _accelerator_color(accs: list[str], legend_title: str = "Accelerator") -> alt.Color:
    """Colour by accelerator (shipping parts first, announced last) with a clickable legend."""
    from analysis import ids

    order = [a for a in accs if ids.status_of(a) != "announced"] + [
        a for a in accs if ids.status_of(a) == "announced"
    ]
    colors = accelerator_colors(accs)
    return alt.Color(
        "accelerator:N",
        title=legend_title,
        sort=order,
        scale=alt.Scale(domain=order, range=[colors[a] for a in order]),
        legend=alt.Legend(symbolStrokeWidth=3),
    )


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


# --- 20-training-scaling --------------------------------------------------------------
def plot_training_scaling(curves: Any) -> alt.Chart:
    """Scaling efficiency vs GPU count (log2 axis), one line per accelerator.

    ``curves``: :func:`analysis.training.scaling_curves` output (accelerator, vendor,
    status, n_gpus, scaling_efficiency).
    """
    df = curves.loc[
        curves["scaling_efficiency"].notna(),
        ["accelerator", "vendor", "status", "n_gpus", "scaling_efficiency", "layout"],
    ]
    return (
        alt.Chart(df, title="Training scaling efficiency from one node to 16,384 GPUs")
        .mark_line(point=True)
        .encode(
            x=alt.X("n_gpus:Q", scale=alt.Scale(type="log", base=2), title="GPUs (log scale)"),
            y=alt.Y(
                "scaling_efficiency:Q",
                scale=alt.Scale(domain=[0, 1.05]),
                title="Scaling efficiency (per-GPU throughput vs baseline)",
            ),
            color=alt.Color("accelerator:N", title="Accelerator"),
            strokeDash=alt.StrokeDash("status:N", title="Status"),
            tooltip=[
                "accelerator",
                "n_gpus",
                alt.Tooltip("scaling_efficiency:Q", format=".3f"),
                "layout",
            ],
        )
        .properties(
            description="Line chart of modelled training scaling efficiency against "
            "GPU count for each candidate accelerator."
        )
    )


def plot_training_validation(val: Any) -> alt.Chart:
    """Predicted vs measured MLPerf Training time to train (log-log), held-out rows."""
    df = val.loc[
        val["holdout"] & val["predicted_min"].notna(),
        [
            "accelerator",
            "vendor",
            "benchmark",
            "n_gpus",
            "measured_min",
            "predicted_min",
            "err_pct",
        ],
    ]
    lo, hi = _log_bounds(df["measured_min"], df["predicted_min"])
    diag = _identity_line(lo, hi, color="#888")
    pts = (
        alt.Chart(df)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X(
                "measured_min:Q",
                scale=alt.Scale(type="log", domain=[lo, hi]),
                title="Measured time to train (min, log scale)",
            ),
            y=alt.Y(
                "predicted_min:Q",
                scale=alt.Scale(type="log", domain=[lo, hi]),
                title="Predicted time to train (min, log scale)",
            ),
            color=_vendor_color(),
            shape=alt.Shape("benchmark:N", title="Benchmark"),
            tooltip=[
                "accelerator",
                "benchmark",
                "n_gpus",
                alt.Tooltip("measured_min:Q", format=".2f"),
                alt.Tooltip("predicted_min:Q", format=".2f"),
                alt.Tooltip("err_pct:Q", format=".1f"),
            ],
        )
    )
    return (diag + pts).properties(
        title="Training model vs MLPerf Training (held-out GPU counts)",
        description="Scatter plot of predicted against measured MLPerf Training time to "
        "train for held-out submissions; the dashed diagonal is a perfect "
        "prediction.",
    )


def plot_training_what_ifs(wi: Any) -> alt.Chart:
    """Change in training throughput per GPU under each interconnect what-if."""
    df = wi.loc[wi["what_if"] != "as shipped", ["accelerator", "vendor", "what_if", "change_pct"]]
    return (
        alt.Chart(df, title="Interconnect what-ifs: change in training throughput per GPU")
        .mark_bar()
        .encode(
            y=alt.Y("accelerator:N", title=None),
            x=alt.X("change_pct:Q", title="Change vs as shipped (%)"),
            color=_vendor_color(),
            row=alt.Row(
                "what_if:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")
            ),
            tooltip=["accelerator", "what_if", alt.Tooltip("change_pct:Q", format=".1f")],
        )
        .properties(
            width=420,
            height=110,
            description="Bar charts of the modelled change in tokens per second per "
            "GPU for each interconnect what-if and candidate.",
        )
    )


def plot_memory_vs_bandwidth(specs: Any) -> alt.LayerChart:
    """HBM capacity against HBM bandwidth per GPU; announced parts are hollow squares.

    Parts of one vendor at (nearly) the same point share one label ("B300 / GB300"); AMD
    labels sit left of the points, NVIDIA labels right, so the two never overlap.

    Args:
        specs: frame with ``accelerator, label, vendor, status, memory_gb, memory_bw_tbps``
            (e.g. :func:`analysis.data.load_specs`).
    """
    data = specs[["accelerator", "label", "vendor", "status", "memory_gb", "memory_bw_tbps"]]
    # Label groups: same vendor and bandwidth, capacity within ~20 GB (B200 180 / GB200 186).
    groups = data.assign(_bucket=(data["memory_gb"] / 20).round()).groupby(
        ["vendor", "memory_bw_tbps", "_bucket"], as_index=False
    )
    label_data = groups.agg(text=("label", " / ".join), memory_gb=("memory_gb", "mean"))
    x = alt.X("memory_bw_tbps:Q", title="HBM bandwidth per GPU (TB/s)")
    y = alt.Y("memory_gb:Q", title="HBM capacity per GPU (GB)")
    announced = alt.datum.status == "announced"
    points = (
        alt.Chart(data)
        .mark_point(size=120, strokeWidth=2)
        .encode(
            x=x,
            y=y,
            color=_vendor_color(),
            fill=alt.condition(announced, alt.value("white"), _vendor_color()),
            # The subtitle and the "(announced)" labels explain the shapes; Vega-Lite draws
            # this legend's symbols without a stroke, so it is left out.
            shape=alt.Shape("status:N", sort=["shipping", "announced"], legend=None),
            tooltip=[
                alt.Tooltip("label:N", title="Accelerator"),
                alt.Tooltip("memory_gb:Q", title="Memory (GB)"),
                alt.Tooltip("memory_bw_tbps:Q", title="Bandwidth (TB/s)"),
            ],
        )
    )
    text = alt.Chart(label_data).encode(x=x, y=y, text="text:N", color=_vendor_color())
    amd_labels = text.mark_text(align="right", dx=-10, fontSize=10).transform_filter(
        alt.datum.vendor == "AMD"
    )
    nvidia_labels = text.mark_text(align="left", dx=10, fontSize=10).transform_filter(
        alt.datum.vendor != "AMD"
    )
    return (points + amd_labels + nvidia_labels).properties(
        title=alt.Title(
            "HBM capacity vs bandwidth per GPU",
            subtitle="Hollow squares: announced parts (vendor preliminary figures)",
        ),
        description=(
            "Scatter of HBM capacity (GB) against HBM bandwidth (TB/s) per GPU for each "
            "accelerator, coloured by vendor; announced parts are drawn as hollow squares."
        ),
    )


def plot_peak_compute_by_precision(compute: Any) -> alt.FacetChart:
    """Dense peak TFLOPS per precision, accelerators ordered by launch year.

    Announced parts are drawn as pale, dashed bars; estimated values are marked "est.".

    Args:
        compute: long frame from :func:`analysis.hardware.compute_by_precision`.
    """
    data = compute[
        [
            "accelerator",
            "label",
            "vendor",
            "status",
            "launch_year",
            "precision",
            "dense_tflops",
            "basis",
        ]
    ].copy()
    data["launch_year"] = data["launch_year"].astype(int)
    data["flag"] = data["basis"].map({"estimate": "est."}).fillna("")
    order = (
        data.drop_duplicates("label").sort_values(["launch_year", "vendor", "accelerator"])["label"]
    ).tolist()
    announced = alt.datum.status == "announced"
    x = alt.X("label:N", sort=order, title="Accelerator (ordered by launch year)")
    bars = (
        alt.Chart()
        .mark_bar(strokeWidth=1.5)
        .encode(
            x=x,
            y=alt.Y("dense_tflops:Q", title="Dense peak (TFLOPS)"),
            color=_vendor_color(),
            stroke=_vendor_color(),
            fillOpacity=alt.condition(announced, alt.value(0.25), alt.value(0.9)),
            strokeDash=alt.condition(announced, alt.value([4, 3]), alt.value([1, 0])),
            tooltip=[
                alt.Tooltip("label:N", title="Accelerator"),
                alt.Tooltip("precision:N", title="Precision"),
                alt.Tooltip("dense_tflops:Q", title="Dense TFLOPS", format=",.0f"),
                alt.Tooltip("launch_year:O", title="Launch year"),
                alt.Tooltip("basis:N", title="Basis"),
            ],
        )
    )
    flags = alt.Chart().mark_text(dy=-6, fontSize=9).encode(x=x, y="dense_tflops:Q", text="flag:N")
    return (
        alt.layer(bars, flags, data=data)
        .properties(width=560, height=170)
        .facet(row=alt.Row("precision:N", title="Precision", sort=["bf16", "fp8", "fp6", "fp4"]))
        .resolve_scale(y="independent")
        .properties(
            title=alt.Title(
                "Dense peak compute per GPU by precision and generation",
                subtitle=(
                    "Pale dashed bars: announced parts; 'est.' = estimate. No bar: format "
                    "not supported (e.g. FP4 on Hopper, CDNA 3) or not yet published."
                ),
            ),
            description=(
                "Bar charts, one per precision (BF16, FP8, FP6, FP4), of dense peak TFLOPS "
                "per GPU for each accelerator ordered by launch year and coloured by vendor; "
                "announced parts are pale with dashed outlines."
            ),
        )
    )


def plot_cost_per_mtok(tiers: Any, prices: Any = None, utilization: float = 0.7) -> alt.Chart:
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
        alt.Tooltip("accelerator:N", title="Accelerator"),
        alt.Tooltip("tier:N", title="Tier"),
        alt.Tooltip("point:Q", title="USD per M output tokens", format="$.3f"),
        alt.Tooltip("lo:Q", title="p5", format="$.3f"),
        alt.Tooltip("hi:Q", title="p95", format="$.3f"),
        alt.Tooltip("tokens_per_s_per_gpu:Q", title="Tokens/s per GPU", format=",.0f"),
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
    if data["group"].nunique() > 1:
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


def plot_cost_tornado(sens: Any, title: str) -> alt.LayerChart | alt.FacetChart:
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


def plot_buy_vs_rent(costs: Any) -> alt.Chart:
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


# --- 30-inference-tiers ------------------------------------------------------------------


def plot_inference_frontier(
    front: Any,
    tiers: Any,
    prices: Any = None,
    utilization: float = 0.7,
    measured: Any = None,
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
            tooltip=[alt.Tooltip("tier:N", title="Tier")],
        )
    )
    color = _accelerator_color(accs)
    dash = alt.StrokeDash(
        "status:N",
        title="Status",
        scale=alt.Scale(domain=["shipping", "announced"], range=[[1, 0], [5, 3]]),
    )
    tooltip = [
        alt.Tooltip("accelerator:N", title="Accelerator"),
        *([alt.Tooltip("tp:Q", title="TP", format="d")] if "tp" in df else []),
        alt.Tooltip("concurrency:Q", title="Concurrency", format=",d"),
        alt.Tooltip("tokens_per_s_per_gpu:Q", title="Tokens/s per GPU", format=",.0f"),
        alt.Tooltip("tokens_per_s_per_user:Q", title="Tokens/s per user", format=",.1f"),
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
                # Read at run time, `scale` is the Scale (the stubs type it as a setter).
                fill=alt.Fill("accelerator:N", scale=color.scale, legend=None),  # type: ignore[arg-type]
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


def plot_memory_headroom(head: Any) -> alt.Chart:
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


def plot_tier_table(tiers: Any) -> alt.LayerChart | alt.FacetChart:
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
        y=alt.Y("accelerator:N", title="Accelerator", sort=None),
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
    val: Any, held_out: str = "its MLPerf round"
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
            shape=alt.Shape("scenario:N", title="Scenario"),
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


def plot_efficiency_trend(trend: Any) -> alt.LayerChart | alt.FacetChart:
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


#: Colour per claim verdict (claims chapter).
VERDICT_COLORS = {
    "supported": "#2a7f3f",
    "contradicted": "#b2182b",
    "mixes generations": "#e08214",
    "unverifiable": "#8c8c8c",
}


def plot_claim_verdicts(counts: Any) -> alt.Chart:
    """Bar chart of the article's claims per verdict (``claims.verdict_counts`` output)."""
    total = int(counts["claims"].sum())
    return (
        alt.Chart(counts)
        .mark_bar()
        .encode(
            x=alt.X("claims:Q", title="Claims (count)"),
            y=alt.Y("verdict:N", title="Verdict", sort=list(VERDICT_COLORS)),
            color=alt.Color(
                "verdict:N",
                scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
                legend=None,
            ),
            tooltip=["verdict:N", "claims:Q"],
        )
        .properties(
            title=f"The article's {total} claims, by verdict",
            description=(
                f"Horizontal bars: number of the seed article's {total} claims per verdict "
                "(supported, contradicted, mixes generations, unverifiable)."
            ),
            height=160,
        )
    )


def plot_recommendation_costs(ratios: Any) -> alt.LayerChart | alt.FacetChart:
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
        alt.Tooltip("workload:N", title="Workload"),
        alt.Tooltip("amd:N", title="AMD"),
        alt.Tooltip("nvidia:N", title="NVIDIA"),
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


# --- tables (presentation only: never changes a value, only how it is shown) -------------

#: Unit suffixes of column names (CONTRIBUTING: names carry their unit) -> header unit.
_UNIT_SUFFIXES = (
    ("_usd_per_gpu_hour", "USD/GPU-h"),
    ("_gpu_hour_usd", "USD/GPU-h"),
    ("_per_mtok", "USD/M tokens"),
    ("_usd", "USD"),
    ("_pct", "%"),
    ("_ms", "ms"),
    ("_tbps", "TB/s"),
    ("_gbps", "GB/s"),
    ("_tflops", "TFLOPS"),
    ("_gb", "GB"),
    ("_tb", "TB"),
    ("_kib", "KiB"),
    ("_mib", "MiB"),
    ("_min", "min"),
    ("_hours", "h"),
    ("_w", "W"),
)
_WORDS = {
    "bw": "bandwidth",
    "tp": "TP",
    "mfu": "MFU",
    "kv": "KV",
    "id": "id",
    "isl": "ISL",
    "osl": "OSL",
    "ttft": "TTFT",
    "tpot": "TPOT",
    "amd": "AMD",
    "nvidia": "NVIDIA",
    "gpu": "GPU",
    "gpus": "GPUs",
    "bf16": "BF16",
    "fp8": "FP8",
    "fp4": "FP4",
    "fp6": "FP6",
    "p05": "p5",
    "mtok": "M tokens",
    "tdp": "TDP",
    "hbm": "HBM",
    "mlperf": "MLPerf",
    "ape": "APE",
    "url": "URL",
    "flop": "FLOP",
}


def human_header(name: Any) -> str:
    """A readable column header from a column name with its unit suffix.

    >>> human_header("memory_bw_tbps")
    'Memory bandwidth (TB/s)'
    >>> human_header("cost_per_mtok_p95")
    'Cost per M tokens p95'
    """
    if isinstance(name, tuple):
        return " / ".join(human_header(n) for n in name if str(n))
    text = str(name)
    unit = ""
    for suffix, label in _UNIT_SUFFIXES:
        if text.endswith(suffix) and len(text) > len(suffix):
            text, unit = text[: -len(suffix)], label
            break
    words = [_WORDS.get(w.lower(), w) for w in text.split("_") if w]
    if len(words) > 1 and words[0] == "n":  # n_gpus -> GPUs
        words = words[1:]
    head = " ".join(words)
    head = head[:1].upper() + head[1:] if head and not head[:1].isupper() else head
    return f"{head} ({unit})" if unit else head


def _fmt_number(value: Any, decimals: int | None) -> str:
    if value is None or isinstance(value, str):
        return "" if value is None else value
    if isinstance(value, bool):
        return "yes" if value else "no"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "–"
    if decimals is None:
        decimals = _decimals_for([x])
    return f"{x:,.{decimals}f}"


def _fmt_label_int(value: Any) -> str:
    """An integer shown as a label: no separator, no decimals ("2024", "2"); "–" if NaN.

    >>> _fmt_label_int(2024.0), _fmt_label_int(2), _fmt_label_int(float("nan"))
    ('2024', '2', '–')
    """
    if value is None or isinstance(value, str):
        return "" if value is None else value
    x = float(value)
    return "–" if math.isnan(x) else f"{x:.0f}"


def _decimals_for(values: list[float]) -> int:
    """Decimals that suit a set of numbers: 319,300 | 12.3 | 1.93 | 0.506."""
    finite = [abs(v) for v in values if v == v and abs(v) != float("inf")]
    if not finite or all(v == int(v) for v in finite):
        return 0
    top = max(finite)
    return 0 if top >= 1000 else 1 if top >= 100 else 2 if top >= 1 else 3


def _is_number(v: Any) -> bool:
    return (
        isinstance(v, int | float)
        and not isinstance(v, bool)
        or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iuf")
    )


class ReportTable:
    """A DataFrame shown for reading: curated columns, human headers, formatted numbers.

    HTML (``_repr_html_``) is a pandas Styler with a fixed uuid (deterministic output), no
    index unless it means something, text left-aligned and wrapped, numbers right-aligned
    with thousands separators; the plain-text repr is the same formatted table (no object
    address), for nbval and renderers that do not take HTML.
    """

    def __init__(
        self,
        frame: Any,
        uuid: str,
        numeric: set[str],
        caption: str | None = None,
        wide_text: tuple[str, ...] = (),
    ) -> None:
        self.frame = frame
        self.uuid = uuid
        self.numeric = numeric
        self.caption = caption
        self.wide_text = wide_text

    def styler(self) -> Any:
        """The pandas Styler behind the HTML (cells classed ``num``, ``text`` or ``long``)."""
        import pandas as pd

        df = self.frame
        classes = pd.DataFrame("", index=df.index, columns=df.columns)
        for c in df.columns:
            if c in self.numeric:
                classes[c] = "num"
            elif df[c].map(lambda v: max((len(w) for w in v.split()), default=0)).max() > 24:
                classes[c] = "text url"  # long unbreakable tokens (URLs, paths): wrap anywhere
            elif c in self.wide_text or df[c].map(len).max() > 40:
                classes[c] = "text long"
            elif df[c].map(len).max() <= 12:
                classes[c] = "text short"
            else:
                classes[c] = "text"
        st = (
            df.style.set_uuid(self.uuid)
            .hide(axis="index")
            .set_td_classes(classes)
            .format(escape="html")
            .map_index(
                lambda h: "text-align: right" if h in self.numeric else "text-align: left",
                axis="columns",
            )
            .set_table_attributes('class="report-table"')
        )
        if self.caption:
            st = st.set_caption(self.caption)
        return st

    def csv_text(self) -> str:
        """The table as displayed (headers and formatted values), as CSV."""
        return self.frame.to_csv(index=False)

    def download_link(self) -> str:
        """A link that saves the table as CSV, offline: the data travels in a data: URI.

        Percent-encoded, so no cell text (user text included) can close the attribute.
        """
        from urllib.parse import quote

        href = "data:text/csv;charset=utf-8," + quote(self.csv_text(), safe="")
        name = _escape(f"{self.uuid}.csv")
        return f'<a class="table-download" download="{name}" href="{href}">Download CSV</a>'

    def _repr_html_(self) -> str:
        return self.styler().to_html() + self.download_link()

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


def table(
    df: Any,
    uuid: str,
    *,
    columns: Any = None,
    decimals: Any = None,
    caption: str | None = None,
    wide_text: tuple[str, ...] = (),
) -> ReportTable:
    """Show ``df`` as a readable report table (values unchanged, formatting only).

    Args:
        df: the frame. A meaningful index (not a plain RangeIndex) becomes the first column.
        uuid: fixed id of the table (determinism; unique per table in the report).
        columns: column names to show, in order; a dict also renames (name -> header).
            Other headers come from :func:`human_header` (unit suffix -> "(unit)").
        decimals: decimals for every number column, or a dict per column name; by
            default one count per column from its magnitude (per value where a column
            spans more than three orders of magnitude), thousands separators always.
        caption: a short line above the table.
        wide_text: text columns that get a minimum width (long notes, quotes).
    """
    import pandas as pd

    frame = df.copy()
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex):
        frame.columns = [tuple(str(p) for p in c if str(p)) for c in frame.columns]
    rename: dict[Any, str] = {}
    if columns is not None:
        frame = frame[list(columns)]
        if isinstance(columns, dict):
            rename = {k: v for k, v in columns.items() if v}
    out = pd.DataFrame(index=range(len(frame)))
    numeric: set[str] = set()
    for col in frame.columns:
        header = rename.get(col) or human_header(col)
        values = frame[col].tolist()
        nums = [float(v) for v in values if _is_number(v)]
        dec = decimals.get(col) if isinstance(decimals, dict) else decimals
        if getattr(frame[col].dtype, "kind", "") in "iu":
            dec = 0
        if str(col).endswith("year") or str(col) in {"year", "tp", "pp", "dp"}:
            # years and parallelism degrees are labels, not quantities: 2024, TP 2
            out[header] = [_fmt_label_int(v) for v in values]
            numeric.add(header)
            continue
        if dec is None and nums:
            finite = [abs(v) for v in nums if v == v and v != 0 and abs(v) != float("inf")]
            spread = max(finite) / min(finite) if finite else 1.0
            dec = None if spread > 1000 else _decimals_for(nums)
        if nums and not any(isinstance(v, str) and v for v in values):
            numeric.add(header)
        out[header] = [_fmt_number(v, dec) for v in values]
    wide = tuple(rename.get(c) or human_header(c) for c in wide_text)
    return ReportTable(out, uuid, numeric, caption=caption, wide_text=wide)
