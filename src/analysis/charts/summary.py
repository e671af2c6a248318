"""A chart's MIME bundle (spec, PNG, upgradeable HTML) and its render-independent summary.

Why a custom renderer (see the toolchain notes): altair's built-in renderers either write a
MIME key nbformat rejects, or emit HTML that loads Vega from a CDN with a random element id.
:func:`render_bundle` returns the Vega-Lite spec (interactive HTML and nbval compare it as a
dict), a PNG (PDF routes, pandoc, Quarto) and an ``<img>`` with a small upgrade script that
swaps in the interactive chart when Vega is on the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from analysis.charts.theme import (
    CHART_SUMMARY_MIME,
    VEGALITE_MIME,
)
from analysis.textsafe import script_json_text

#: Significant digits kept for chart data in the summary: finer than any axis, label or
#: tooltip shows, coarser than float noise between library releases.
SUMMARY_DIGITS = 4


def _png(spec: dict[str, Any]) -> bytes:
    import vl_convert as vlc

    return vlc.vegalite_to_png(spec, scale=2)


def _element_id(spec: dict[str, Any]) -> str:
    # Deterministic (unlike altair's random ids) so nbval and diffs stay stable.
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    return f"vega-{digest}"


def render_bundle(spec: Mapping[str, object]) -> dict[str, object]:
    """MIME bundle for one chart: Vega-Lite spec, PNG, and upgradeable HTML."""
    return _bundle(dict(spec))


def _bundle(spec: dict[str, Any]) -> dict[str, object]:
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


def chart_summary(spec: Mapping[str, object]) -> dict[str, object]:
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
    return _summary(dict(spec))


def _summary(spec: dict[str, Any]) -> dict[str, object]:
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
