"""Plain-language text for the summary page: the memo line, caveat and changes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import ids
from analysis.decision.recommend import INFEASIBLE, Results, _num, model_error
from analysis.inputs import Inputs, resolve
from analysis.params import Scenario
from analysis.textsafe import markdown_code, markdown_text


def _money(x: float, unit: str) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"${x:,.0f}" if unit.startswith("USD per job") else f"${x:,.3g}"


def _interval(lo: float, hi: float, unit: str) -> str:
    if math.isfinite(lo) and math.isfinite(hi):
        return f" (5-95%: {_money(lo, unit)}-{_money(hi, unit)})"
    return ""


def data_date(sources: pd.DataFrame) -> str:
    """The data's date: the latest day any cited source was read (``accessed``), ISO.

    >>> data_date(pd.DataFrame({"accessed": ["2026-10-01", "2026-11-30", None]}))
    '2026-11-30'
    """
    days = pd.to_datetime(sources["accessed"], errors="coerce").dropna()
    return days.max().strftime("%Y-%m-%d") if len(days) else "unknown"


def _workload_text(scenario: Scenario, workload: str, model_names: Mapping[str, str]) -> str:
    """The workload in words, its latency tier by its real bounds (not the user's label)."""
    if workload == "training":
        t = scenario.training
        return f"training {model_names.get(t.model, t.model)} on {t.cluster_gpus:,} GPUs"
    tier = scenario.inference.tiers[int(workload.removeprefix("tier"))]
    m = scenario.inference.model
    return f"serving {model_names.get(m, m)} {tier.bounds_text()}"


def _unit_text(workload: str) -> str:
    return "per training run" if workload == "training" else "per million output tokens"


def memo_line(scenario: Scenario, r: Any, model_names: Mapping[str, str]) -> str:
    """One line of the memo: the call, its margin, how likely, what flips it (Markdown).

    The margin is :func:`recommend`'s ``cost_margin_pct`` (1 - AMD/NVIDIA) and the
    probability the call side's share of the joint draws; both say "about" because they
    are medians of a Monte Carlo.
    """
    what = markdown_text(_workload_text(scenario, r.workload, model_names))
    unit = _unit_text(r.workload)
    verb = "Rent" if scenario.cost.mode == "rent" else "Buy"
    flip = markdown_text(r.flip)
    if r.recommendation == INFEASIBLE:
        return f"- **No candidate** can do {what}: it needs {flip}."
    m, p = r.cost_margin_pct, r.p_amd_cheaper
    if r.recommendation == "either":
        gap = (
            f"{r.amd_best} and {r.nvidia_best} cost the same within the uncertainty "
            f"(cost margin {m:+.0f}%, P(AMD cheaper) = {p:.2f})"
            if math.isfinite(m) and math.isfinite(p)
            else markdown_text(r.basis)
        )
        return f"- **Either vendor** for {what}: {gap}; a call needs {flip}."
    best = r.amd_best if r.recommendation == "AMD" else r.nvidia_best
    if not math.isfinite(m):
        return f"- **{verb} {best or r.recommendation}** for {what}: {markdown_text(r.basis)}."
    if r.recommendation == "AMD":
        how = f"about {m:.0f}% cheaper {unit} than {r.nvidia_best}"
        p_call = p
    else:
        how = f"{r.amd_best} costs about {-m:.0f}% more {unit}"
        p_call = 1 - p if math.isfinite(p) else p
    likely = f", {p_call:.0%} likely" if math.isfinite(p_call) else ""
    return f"- **{verb} {best}** for {what}: {how}{likely}; flips if {flip}."


def main_caveat(recs: pd.DataFrame, chapter_results: Results) -> str:
    """The caveat that matters most, computed: the call closest to flipping on throughput.

    Throughput is the model's output, and its measured out-of-sample error is known; the
    decided call whose throughput break-even lies nearest to 1 is the one a benchmark of
    your own should confirm first. Without such a call, the price assumptions are named.
    """
    err = model_error(chapter_results)
    best: tuple[float, Any, float] | None = None
    for r in recs.itertuples(index=False):
        rel = r.breakeven_rel_throughput
        if r.recommendation not in ("AMD", "NVIDIA") or not math.isfinite(rel):
            continue
        headroom = abs(1 - rel) * 100
        e = (
            err["training_median_err_pct"]
            if r.workload == "training"
            else err["inference_mape_overall_pct"]
        )
        if best is None or headroom < best[0]:
            best = (headroom, r, e)
    if best is None:
        return (
            "Prices, utilization and porting effort are assumptions with ranges (appendix); "
            "no call has a throughput break-even to compare with the models' error."
        )
    headroom, r, e = best
    side = r.amd_best
    txt = (
        f"the closest call ({r.workload if r.workload == 'training' else 'serving'}, "
        f"{r.amd_best} vs {r.nvidia_best}) flips if {side}'s real throughput is "
        f"{headroom:.0f}% {'below' if r.recommendation == 'AMD' else 'above'} the model's"
    )
    if math.isfinite(e):
        verdict = (
            "inside that error: benchmark your own workload before committing"
            if headroom <= e
            else "beyond it, so the calls survive an error of the measured size"
        )
        txt += f"; the models' measured out-of-sample error is {e:.0f}% (median), {verdict}"
    return txt[:1].upper() + txt[1:] + "."


def summary_markdown(
    scenario: Scenario,
    recs: pd.DataFrame,
    chapter_results: Results,
    *,
    data_as_of: str = "",
    model_names: Mapping[str, str] | None = None,
    inputs: Inputs | None = None,
) -> str:
    """The memo (first screen, PDF page 1): one line per workload, the caveat, the date.

    Every number comes from ``recs`` (:func:`recommend`) and the chapters' key results;
    without chapter results (the notebook opened by hand) it says what is missing instead.
    ``model_names`` default: the ``models`` table of ``inputs`` (default: the default inputs).
    """
    if model_names is None:
        models = resolve(inputs).table("models")
        model_names = dict(zip(models["model"], models["name"], strict=True))
    # User text (title, tier names in the labels) is escaped: shown as text, never as
    # Markdown or HTML (a <script> in a title must not run in the report).
    mode = "buying" if scenario.cost.mode == "buy" else "renting"
    head = (
        f"**The calls**, {mode} among {len(ids.shipping(scenario.candidates))} shipping "
        "candidates" + (f" (data as of {data_as_of})" if data_as_of else "") + ":\n\n"
    )
    if not chapter_results:
        return head + (
            "> **No chapter results were passed.** This summary only reads the other chapters' "
            "key results, which the orchestrator injects (`python -m analysis run --params "
            "FILE`). Opened by hand, every workload shows as *either* with no numbers."
        )
    lines = [memo_line(scenario, r, model_names) for r in recs.itertuples(index=False)]
    return (
        head
        + "\n".join(lines)
        + "\n\n**The caveat that matters most:** "
        + main_caveat(recs, chapter_results)
        + " Cost margin = 1 - AMD/NVIDIA (median cost of each vendor's cheapest shipping "
        "candidate); likelihood = share of the joint Monte Carlo draws on the call's side."
    )


def changes_markdown(changes: pd.DataFrame, previous_results: Mapping[str, object]) -> str:
    """One paragraph on the version diff (an empty-state sentence when there is none)."""
    if not (previous_results or {}).get("chapters"):
        return (
            "This is the first published version of this scenario: there is no previous "
            "version to compare with."
        )
    prev = previous_results.get("version", "the previous version")
    if changes.empty:
        return f"No key figure changed since {prev}."
    flipped = changes[changes["flipped"]]
    txt = f"{len(changes)} key figures changed since {prev}. "
    if flipped.empty:
        txt += "No recommendation, winner or cheapest part flipped."
    else:
        txt += (
            "**Flipped:** "
            + "; ".join(
                f"{markdown_text(r.chapter)} {markdown_text(r.key)}: "
                f"{_md_value(r.previous)} -> {_md_value(r.current)}"
                for r in flipped.itertuples()
            )
            + "."
        )
    return txt + "\n\n" + _largest_changes(changes[~changes["flipped"]])


#: How many changed figures the summary names (the table below it lists all of them).
MAX_NAMED_CHANGES = 6


def _change_value(v: Any) -> str:
    if v is None:
        return "(none)"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _md_value(v: Any) -> str:
    """A changed value for the summary's Markdown: strings (user text) escaped."""
    return markdown_text(v) if isinstance(v, str) else _change_value(v)


def _largest_changes(changes: pd.DataFrame) -> str:
    """The changed inputs (per-GPU-hour prices) first, then the largest relative changes."""
    if changes.empty:
        return ""
    rank = changes.assign(
        _input=~changes["key"].str.startswith("gpu_hour_usd_"),
        _size=-changes["change_pct"].abs().fillna(0.0),
    ).sort_values(["_input", "_size", "chapter", "key"], kind="stable")
    named = rank.head(MAX_NAMED_CHANGES)
    items = []
    for r in named.itertuples():
        rel = f" ({r.change_pct:+.1f}%)" if math.isfinite(_num(r.change_pct)) else ""
        items.append(
            f"{markdown_code(r.chapter)} {markdown_code(r.key)}: "
            f"{_md_value(r.previous)} -> {_md_value(r.current)}{rel}"
        )
    more = len(changes) - len(named)
    tail = f" ({more} more in the table below)" if more > 0 else ""
    return "Changed" + tail + ": " + "; ".join(items) + "."
