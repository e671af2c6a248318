"""Figures of the training chapter (20-training-scaling)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from analysis import outputs
from analysis.charts.common import _identity_line, _log_bounds
from analysis.charts.theme import (
    _vendor_color,
)


def plot_training_scaling(curves: pd.DataFrame) -> alt.Chart:
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
            color=alt.Color("accelerator:N", title=outputs.title("accelerator")),
            strokeDash=alt.StrokeDash("status:N", title=outputs.title("status")),
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


def plot_training_validation(val: pd.DataFrame) -> alt.Chart:
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
            shape=alt.Shape("benchmark:N", title=outputs.title("benchmark")),
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
        title="Scaling check: one calibration count per part x benchmark vs MLPerf's other counts",
        description="Scatter plot of predicted against measured MLPerf Training time to "
        "train at counts other than each part x benchmark's calibration count; the dashed "
        "diagonal is a perfect prediction.",
    )


def plot_training_what_ifs(wi: pd.DataFrame) -> alt.Chart:
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
