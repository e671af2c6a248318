"""The report's look: the Altair theme, MIME types, and the vendor and accelerator colours."""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt

from analysis import outputs

VEGALITE_MIME = "application/vnd.vegalite.v6+json"
#: What a chart says, independent of how a Vega-Lite release serializes it (see
#: :func:`chart_summary`); the nbval goldens compare this instead of the raw spec.
CHART_SUMMARY_MIME = "application/vnd.gpu-report.chart-summary+json"
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


def _vendor_scale() -> alt.Scale:
    return alt.Scale(domain=list(VENDOR_COLORS), range=list(VENDOR_COLORS.values()))


def _vendor_color() -> alt.Color:
    """The vendor colour channel every figure shares (AMD red, NVIDIA green)."""
    return alt.Color("vendor:N", title=outputs.title("vendor"), scale=_vendor_scale())


#: Per-vendor hue families (ColorBrewer Reds / Greens, dark to light): one colour per
#: accelerator, its vendor still readable at a glance. Announced parts take greys: they
#: are projections and stay outside the shipping parts' scale.
AMD_REDS = ("#99000d", "#cb181d", "#ef3b2c", "#fb6a4a", "#fc9272", "#67000d")
NVIDIA_GREENS = ("#00441b", "#006d2c", "#238b45", "#41ab5d", "#74c476", "#a1d99b")
ANNOUNCED_GREYS = ("#525252", "#969696", "#737373", "#bdbdbd")


def accelerator_colors(accelerators: Iterable[str]) -> dict[str, str]:
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
