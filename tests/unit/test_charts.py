"""The chart summary that nbval goldens compare: what a chart shows, nothing else."""

from __future__ import annotations

import copy

import altair as alt
import pandas as pd

from analysis import charts


def _spec() -> dict:
    frame = pd.DataFrame({"part": ["MI355X", "B300"], "tok_s": [1234.5678, 2345.6789]})
    chart = (
        alt.Chart(frame, title="Tokens per second", description="bars")
        .mark_bar()
        .encode(
            x=alt.X("part:N", title="Accelerator"),
            y=alt.Y("tok_s:Q", title="Tokens/s", axis=alt.Axis(format=",.0f")),
        )
    )
    return chart.to_dict()


def test_summary_keeps_titles_encodings_and_rounded_data() -> None:
    s = charts.chart_summary(_spec())
    assert s["title"] == "Tokens per second"
    (view,) = s["views"]
    assert view["mark"] == "bar"
    assert view["encoding"]["y"] == {
        "field": "tok_s",
        "type": "quantitative",
        "title": "Tokens/s",
        "format": ",.0f",
    }
    assert s["data"] == {
        "data-0": [{"part": "MI355X", "tok_s": 1235.0}, {"part": "B300", "tok_s": 2346.0}]
    }


def test_summary_ignores_serialization_details() -> None:
    spec = _spec()
    other = copy.deepcopy(spec)
    (name,) = other["datasets"]
    other["datasets"] = {"data-renamed": other["datasets"].pop(name)}
    other["data"] = {"name": "data-renamed"}
    other["$schema"] = "https://vega.github.io/schema/vega-lite/v9.json"
    other["config"] = {"autosize": "fit", "font": "Other"}
    other = dict(reversed(list(other.items())))
    other["datasets"]["data-renamed"][0]["tok_s"] += 1e-9  # float noise between releases
    assert charts.chart_summary(other) == charts.chart_summary(spec)


def test_summary_changes_with_what_the_reader_sees() -> None:
    spec = _spec()
    changed = copy.deepcopy(spec)
    (name,) = changed["datasets"]
    changed["datasets"][name][0]["tok_s"] *= 1.01
    assert charts.chart_summary(changed) != charts.chart_summary(spec)
    retitled = copy.deepcopy(spec)
    retitled["encoding"]["y"]["title"] = "Tokens/s per GPU"
    assert charts.chart_summary(retitled) != charts.chart_summary(spec)


def test_summary_walks_layers_and_keeps_integers_exact() -> None:
    frame = pd.DataFrame({"gpus": [8, 16384], "eff": [1.0, 0.87654]})
    base = alt.Chart(frame).encode(x="gpus:Q", y="eff:Q")
    s = charts.chart_summary((base.mark_line() + base.mark_point()).to_dict())
    assert [v.get("mark") for v in s["views"] if "mark" in v] == ["line", "point"]
    assert s["data"]["data-0"] == [
        {"eff": 1.0, "gpus": 8},
        {"eff": 0.8765, "gpus": 16384},
    ]


def test_render_bundle_carries_the_summary() -> None:
    bundle = charts.render_bundle(_spec())
    assert bundle[charts.CHART_SUMMARY_MIME] == charts.chart_summary(_spec())


def test_frontier_with_measured_points_serializes() -> None:
    # The own-measurements scenario draws the team's runs as diamonds in the accelerator
    # colours; the chart must still serialize (it failed in Vega-Lite validation before).
    front = pd.DataFrame(
        {
            "accelerator": ["H200", "H200", "MI300X", "MI300X"],
            "vendor": ["NVIDIA", "NVIDIA", "AMD", "AMD"],
            "tokens_per_s_per_user": [10.0, 50.0, 12.0, 40.0],
            "tokens_per_s_per_gpu": [900.0, 300.0, 800.0, 350.0],
            "concurrency": [64, 8, 64, 8],
        }
    )
    tiers = pd.DataFrame({"tier": ["<50 ms", "no bound"], "lo": [20.0, 0.0], "hi": [1e9, 20.0]})
    measured = pd.DataFrame(
        {
            "accelerator": ["H200"],
            "vendor": ["NVIDIA"],
            "tokens_per_s_per_user": [30.0],
            "tokens_per_s_per_gpu": [500.0],
            "tp": [1],
            "tool": ["vllm"],
        }
    )
    spec = charts.plot_inference_frontier(front, tiers, None, 0.7, measured).to_dict()
    fills = [
        v["encoding"]["fill"]
        for v in charts.chart_summary(spec)["views"]
        if "fill" in v.get("encoding", {})
    ]
    assert fills, "the measured points' layer is missing"
    diamonds = [lay for lay in spec["vconcat"][0]["layer"] if "fill" in lay.get("encoding", {})]
    assert diamonds[0]["encoding"]["fill"]["scale"]["domain"] == ["H200", "MI300X"]
