"""Figures of the data chapter (10-data): the hardware at a glance."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analysis import outputs
from analysis.charts.theme import (
    _vendor_color,
)


def plot_memory_vs_bandwidth(specs: pd.DataFrame) -> alt.LayerChart:
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


def plot_peak_compute_by_precision(compute: pd.DataFrame) -> alt.FacetChart:
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
                alt.Tooltip("precision:N", title=outputs.title("precision")),
                alt.Tooltip("dense_tflops:Q", title="Dense TFLOPS", format=",.0f"),
                alt.Tooltip("launch_year:O", title="Launch year"),
                alt.Tooltip("basis:N", title=outputs.title("basis")),
            ],
        )
    )
    flags = alt.Chart().mark_text(dy=-6, fontSize=9).encode(x=x, y="dense_tflops:Q", text="flag:N")
    return (
        alt.layer(bars, flags, data=data)
        .properties(width=560, height=170)
        .facet(
            row=alt.Row(
                "precision:N", title=outputs.title("precision"), sort=["bf16", "fp8", "fp6", "fp4"]
            )
        )
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
