"""Figures: the report's Altair theme, a spec + static-image renderer, one function per figure.

Why a custom renderer (see the toolchain notes): altair's built-in renderers either write a
MIME key nbformat rejects, or emit HTML that loads Vega from a CDN with a random element id.
:func:`enable` registers ``gpu-report``, which returns the Vega-Lite spec (interactive HTML
and nbval compare it as a dict), a PNG (PDF routes, pandoc, Quarto) and an ``<img>`` with a
small upgrade script that swaps in the interactive chart when Vega is on the page.

Figure functions take tidy DataFrames and return ``alt.Chart`` objects; they never compute
analysis results. Every figure has a title, axis titles with units and a description
(used as alt text).

The package: :mod:`~analysis.charts.theme` (theme, MIME types, colours),
:mod:`~analysis.charts.summary` (MIME bundle and chart summary),
:mod:`~analysis.charts.tables` (report tables), and one module of figures per chapter
(:mod:`~analysis.charts.data`, ``claims``, ``training``, ``inference``, ``tco``). Every
name is importable from ``analysis.charts`` as before the split.
"""

from __future__ import annotations

from typing import Any

import altair as alt

from analysis.charts.claims import VERDICT_COLORS, plot_claim_verdicts
from analysis.charts.data import plot_memory_vs_bandwidth, plot_peak_compute_by_precision
from analysis.charts.inference import (
    plot_efficiency_trend,
    plot_inference_frontier,
    plot_memory_headroom,
    plot_mlperf_validation,
    plot_tier_table,
)
from analysis.charts.summary import SUMMARY_DIGITS, chart_summary, render_bundle
from analysis.charts.tables import ReportTable, human_header, table
from analysis.charts.tco import (
    plot_buy_vs_rent,
    plot_cost_per_mtok,
    plot_cost_tornado,
    plot_recommendation_costs,
)
from analysis.charts.theme import (
    AMD_REDS,
    ANNOUNCED_GREYS,
    CHART_SUMMARY_MIME,
    FONT,
    NVIDIA_GREENS,
    RENDERER,
    THEME,
    VEGALITE_MIME,
    VENDOR_COLORS,
    _theme,
    accelerator_colors,
)
from analysis.charts.training import (
    plot_training_scaling,
    plot_training_validation,
    plot_training_what_ifs,
)

__all__ = [
    "AMD_REDS",
    "ANNOUNCED_GREYS",
    "CHART_SUMMARY_MIME",
    "FONT",
    "NVIDIA_GREENS",
    "RENDERER",
    "SUMMARY_DIGITS",
    "THEME",
    "VEGALITE_MIME",
    "VENDOR_COLORS",
    "VERDICT_COLORS",
    "ReportTable",
    "accelerator_colors",
    "chart_summary",
    "enable",
    "human_header",
    "plot_buy_vs_rent",
    "plot_claim_verdicts",
    "plot_cost_per_mtok",
    "plot_cost_tornado",
    "plot_efficiency_trend",
    "plot_inference_frontier",
    "plot_memory_headroom",
    "plot_memory_vs_bandwidth",
    "plot_mlperf_validation",
    "plot_peak_compute_by_precision",
    "plot_recommendation_costs",
    "plot_tier_table",
    "plot_training_scaling",
    "plot_training_validation",
    "plot_training_what_ifs",
    "render_bundle",
    "table",
]


def _renderer(spec: dict[str, Any], **_: Any) -> dict[str, Any]:
    # Looked up on the package at call time: a patched ``analysis.charts.render_bundle``
    # (the goldens' re-serialization test) is the one the renderer uses.
    return render_bundle(spec)


def enable() -> None:
    """Register and enable the report theme and renderer (idempotent)."""
    alt.theme.register(THEME, enable=True)(_theme)
    alt.renderers.register(RENDERER, _renderer)
    alt.renderers.enable(RENDERER)
    alt.data_transformers.disable_max_rows()
