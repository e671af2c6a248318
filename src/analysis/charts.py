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
from typing import Any

import altair as alt

VEGALITE_MIME = "application/vnd.vegalite.v6+json"
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
        "image/png": png,
        "text/html": html,
        "text/plain": f"<chart: {_escape(desc)}>",
    }


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
    return text.replace("</", "<\\/")


def _renderer(spec: dict[str, Any], **_: Any) -> dict[str, Any]:
    return render_bundle(spec)


def enable() -> None:
    """Register and enable the report theme and renderer (idempotent)."""
    alt.theme.register(THEME, enable=True)(_theme)
    alt.renderers.register(RENDERER, _renderer)
    alt.renderers.enable(RENDERER)
    alt.data_transformers.disable_max_rows()


# --- figure functions (one per figure; chapters append below) -------------------------
