"""The recommendation: scoring the candidates of a scenario from the chapters' key results.

Analytical decisions taken here:

* **No recomputation.** Everything here reads the key results the chapters published
  (``chapter_results``: ``{chapter id: {key: value}}``, the keys of ``docs/contracts.md``),
  so the summary cannot disagree with the chapters.
* **Cost decides, performance breaks ties.** A workload's call is the platform with the
  lower cost per unit of work (per million tokens at the tier's latency bound; per training
  job). It is ``either`` when the TCO chapter's probability that AMD is cheaper lies inside
  :data:`P_EITHER` (0.35-0.65): the joint Monte Carlo cannot tell them apart. Without cost
  results the call falls back to performance, ``either`` when the winner's margin is inside
  the model's measured out-of-sample error (MLPerf median APE).
* **Shipping parts only.** Winners and cost comparisons use shipping candidates; announced
  parts (VR200, MI455X) are projections and only appear in caveats.
* A vendor with no feasible candidate in a tier loses that tier outright.
* **One definition per number.** The cost margin is ``1 - AMD/NVIDIA`` (median costs of
  the cheapest candidates; +25% = AMD 25% cheaper) in every table, sentence and figure;
  the interval drawn is the per-draw AMD/NVIDIA ratio's 5th-95th percentile (the draws
  are joint, so the ratio's interval is what the probability is about, not the two
  overlapping cost intervals). $/GPU-hour figures are the price rule's (``tco.price_rule``).
* **Flip conditions in negotiating units.** Each call names the break-even AMD server
  price (buying) or rental quote (renting) and the throughput factor at which it flips,
  as the TCO chapter solved them; nothing here is a fixed sentence.
* Checklist lines the data cannot test (ISV certification, team preference) say so rather
  than guess; lines the chapters can test are scored for the scenario.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis import data, ids, results
from analysis.textsafe import html_text, markdown_code, markdown_text

__all__ = [
    "P_EITHER",
    "appendix_key_results",
    "assumptions_register_html",
    "checklist",
    "cited_source_ids",
    "cited_sources",
    "compare_with_previous",
    "key_results",
    "load_cited_source_ids",
    "model_error",
    "model_error_table",
    "recommend",
    "recommendation_costs",
    "run_info_table",
    "changes_markdown",
    "summary_markdown",
]

INFERENCE = "30-inference-tiers"
TRAINING = "20-training-scaling"
TCO = "40-tco"
SUMMARY = "00-summary"
#: The verdict when no candidate of either vendor can run the workload (a tier no part can
#: meet, a model no layout fits): its own call, never "either" (a tie) or a crash.
INFEASIBLE = "infeasible"
#: P(AMD cheaper) inside this band = "either" (the cost difference is not resolved).
P_EITHER: tuple[float, float] = (0.35, 0.65)
#: The article's latency line ("Low-latency inference under 50 milliseconds matters
#: critically"): tiers with a TPOT bound at or below it are "low latency", the rest "medium".
LOW_LATENCY_MS = 50

Results = Mapping[str, Mapping[str, Any]]


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def model_error(chapter_results: Results) -> dict[str, float]:
    """The models' measured out-of-sample error (%), as published by the chapters."""
    inf = chapter_results.get(INFERENCE, {})
    tr = chapter_results.get(TRAINING, {})
    return {
        # Headline: each MLPerf round predicted from the others (the harshest check).
        "inference_mape_overall_pct": _num(inf.get("mlperf_mape_overall")),
        "inference_mape_amd_pct": _num(inf.get("mlperf_mape_AMD")),
        "inference_mape_nvidia_pct": _num(inf.get("mlperf_mape_NVIDIA")),
        # Each accelerator predicted from its sister parts (a part without MLPerf results).
        "inference_mape_accelerator_amd_pct": _num(inf.get("mlperf_mape_accelerator_AMD")),
        "inference_mape_accelerator_nvidia_pct": _num(inf.get("mlperf_mape_accelerator_NVIDIA")),
        "training_median_err_pct": _num(tr.get("mlperf_median_err_pct")),
    }


def model_error_table(chapter_results: Results) -> pd.DataFrame:
    """:func:`model_error` as a table: one row per measure, columns ``measure``, ``percent``.

    Measures the chapters did not publish are NaN (the appendix opened by hand shows them
    empty).

    >>> table = model_error_table({"20-training-scaling": {"mlperf_median_err_pct": 7.5}})
    >>> table.columns.tolist(), table.at[5, "measure"], float(table.at[5, "percent"])
    (['measure', 'percent'], 'training_median_err_pct', 7.5)
    """
    return pd.DataFrame(
        [{"measure": k, "percent": v} for k, v in model_error(chapter_results).items()],
        columns=["measure", "percent"],
    )


def _infeasible(inf: Mapping[str, Any], tier: int) -> set[str]:
    """Accelerators the inference chapter found infeasible in a tier (``tier{i}_infeasible``).

    >>> sorted(_infeasible({"tier0_infeasible": "H100-SXM,MI300X"}, 0)), _infeasible({}, 1)
    (['H100-SXM', 'MI300X'], set())
    """
    return {a for a in str(inf.get(f"tier{tier}_infeasible", "") or "").split(",") if a}


def _best_cost(
    tco: Mapping[str, Any], prefix: str, accs: list[str]
) -> tuple[str, float, float, float]:
    """(accelerator, median, p05, p95) of the cheapest of ``accs`` for a cost key prefix."""
    best = ("", math.inf, math.nan, math.nan)
    for a in accs:
        med = _num(tco.get(f"{prefix}{a}"))
        if math.isfinite(med) and med < best[1]:
            best = (a, med, _num(tco.get(f"{prefix}{a}_p05")), _num(tco.get(f"{prefix}{a}_p95")))
    return best


def _call(
    p_amd: float,
    perf_vendor: str,
    perf_margin: float,
    err: float,
    amd_ok: bool,
    nv_ok: bool,
    cost_known: bool,
) -> tuple[str, str]:
    """(recommendation, basis) for one workload."""
    if not amd_ok and not nv_ok:
        # Not a tie: nothing can do the job. "either" would tell a reader to buy anything.
        return INFEASIBLE, "no candidate of either vendor meets the workload's bounds"
    if not amd_ok:
        return "NVIDIA", "no AMD candidate meets the workload's bounds"
    if not nv_ok:
        return "AMD", "no NVIDIA candidate meets the workload's bounds"
    lo, hi = P_EITHER
    if cost_known and math.isfinite(p_amd):
        if lo <= p_amd <= hi:
            return "either", f"P(AMD cheaper) = {p_amd:.2f} is inside {lo}-{hi}"
        return ("AMD" if p_amd > hi else "NVIDIA"), f"P(AMD cheaper) = {p_amd:.2f}"
    if perf_vendor and math.isfinite(perf_margin):
        if math.isfinite(err) and abs(perf_margin) <= err:
            return "either", (
                f"performance margin {perf_margin:.0f}% is inside the model's "
                f"measured error ({err:.0f}%)"
            )
        return perf_vendor, f"performance margin {perf_margin:.0f}% (no cost results)"
    return "either", "no cost or performance result to decide on"


def _usd(x: float) -> str:
    """Dollars for a sentence: cents below $100, whole dollars above.

    Large amounts are rounded to three significant digits: a break-even solved on a model
    with a 15% error is not known to the dollar.

    >>> _usd(1.6712), _usd(312456.2)
    ('$1.67', '$312,000')
    """
    if abs(x) < 100:
        return f"${x:,.2f}"
    return f"${float(f'{x:.3g}'):,.0f}"


def flip_text(
    rec: str, amd: str, be_hour: float, amd_hour: float, nums: Mapping[str, float], mode: str
) -> str:
    """What would flip a call, in the units a buyer negotiates (computed, never fixed).

    AMD calls flip when the AMD part gets dearer or slower than the break-even; NVIDIA
    calls when it gets cheaper or faster. The scenario's own unit (server price when
    buying, rental quote when renting) goes first, then the other mode's, then throughput;
    the all-in $/GPU-hour break-even only where neither price unit has one.
    """
    if rec == INFEASIBLE:
        return "a looser bound, a smaller model or a candidate that can meet the workload"
    if rec == "either":
        return f"a clearer cost gap: P(AMD cheaper) outside {P_EITHER[0]}-{P_EITHER[1]}"
    if not amd:
        return "an AMD candidate with a price in this mode"
    up = rec == "AMD"  # AMD wins now: it flips if AMD gets dearer / slower
    more, less = ("more", "less") if up else ("less", "more")
    parts = []
    srv, cur_srv = nums["breakeven_server_price_usd"], nums["current_server_price_usd"]
    quote, cur_q = nums["breakeven_rental_quote_usd"], nums["current_rental_quote_usd"]
    buy_part = (
        f"the 8-GPU {amd} server costs {more} than {_usd(srv)} (now {_usd(cur_srv)})"
        if math.isfinite(srv) and srv > 0 and math.isfinite(cur_srv)
        else ""
    )
    rent_part = (
        f"its rental quote is {'above' if up else 'below'} {_usd(quote)}/GPU-hour"
        + (f" (now {_usd(cur_q)})" if math.isfinite(cur_q) else "")
        if math.isfinite(quote) and quote > 0
        else ""
    )
    # The other mode's unit says which mode it belongs to (both rented / bought instead).
    if mode == "buy" and rent_part:
        rent_part += " if rented"
    if mode == "rent" and buy_part:
        buy_part += " if bought"
    parts = [buy_part, rent_part] if mode == "buy" else [rent_part, buy_part]
    rel = nums["breakeven_rel_throughput"]
    if math.isfinite(rel):
        parts.append(f"it delivers {'under' if up else 'over'} {rel:.2f}x the modelled throughput")
    parts = [x for x in parts if x]
    if math.isfinite(be_hour) and not (buy_part or rent_part):
        now = f", now {_usd(amd_hour)}" if math.isfinite(amd_hour) else ""
        parts.append(f"its all-in cost passes {_usd(be_hour)}/GPU-hour{now}")
    if not parts:
        return "no break-even was found in range"
    return ", ".join(parts[:-1]) + (" or " if len(parts) > 1 else "") + parts[-1]


def recommend(scenario: Any, chapter_results: Results) -> pd.DataFrame:
    """One row per workload (training job, then each inference tier) with the call and why.

    Columns: workload, label, recommendation (AMD/NVIDIA/either/infeasible), basis, perf_winner,
    perf_winner_vendor, perf_margin_pct, model_error_pct, amd_best, amd_cost, amd_cost_p05,
    amd_cost_p95, nvidia_best, nvidia_cost, nvidia_cost_p05, nvidia_cost_p95, cost_unit,
    cost_margin_pct (1 - AMD's best / NVIDIA's best median cost, %; > 0 = AMD cheaper),
    cost_ratio, cost_ratio_p05, cost_ratio_p95 (AMD/NVIDIA per joint draw), p_amd_cheaper,
    breakeven_amd_gpu_hour_usd, amd_gpu_hour_usd, breakeven_rel_throughput,
    breakeven_server_price_usd, current_server_price_usd, breakeven_rental_quote_usd,
    current_rental_quote_usd, flip (what would flip it, in words).
    """
    cands = ids.shipping(scenario.candidates)
    amd = [a for a in cands if ids.vendor_of(a) == "AMD"]
    nv = [a for a in cands if ids.vendor_of(a) == "NVIDIA"]
    inf = chapter_results.get(INFERENCE, {})
    tr = chapter_results.get(TRAINING, {})
    tco = chapter_results.get(TCO, {})
    err = model_error(chapter_results)
    rows = []

    def row(
        workload: str,
        case: str,
        label: str,
        prefix: str,
        unit: str,
        p_key: str,
        be_key: str,
        winner: Any,
        wvendor: Any,
        margin: Any,
        e: float,
        feasible: dict[str, bool],
    ) -> None:
        amd_feasible = [x for x in amd if feasible.get(x, True)]
        nv_feasible = [x for x in nv if feasible.get(x, True)]
        a = _best_cost(tco, prefix, amd_feasible)
        n = _best_cost(tco, prefix, nv_feasible)
        p = _num(tco.get(p_key))
        cost_known = math.isfinite(a[1]) and math.isfinite(n[1])
        p_known = math.isfinite(p)
        rec, basis = _call(
            p, str(wvendor or ""), _num(margin), e, bool(amd_feasible), bool(nv_feasible), p_known
        )
        ran = bool(tco) and bool(tr if workload == "training" else inf)
        if rec == "either" and ran and not winner and not cost_known and not p_known:
            # The chapters ran and priced nothing and named no winner: no candidate can run
            # this workload (e.g. no training layout fits any of them).
            rec, basis = INFEASIBLE, "no candidate has a feasible result for this workload"
        cost_margin = (1 - a[1] / n[1]) * 100 if cost_known and n[1] > 0 else math.nan
        be = _num(tco.get(be_key))
        amd_hour = _num(tco.get(f"gpu_hour_usd_{a[0]}")) if a[0] else math.nan
        nums = {
            "breakeven_rel_throughput": _num(tco.get(f"{case}_breakeven_amd_rel_throughput")),
            "breakeven_server_price_usd": _num(tco.get(f"{case}_breakeven_amd_server_price_usd")),
            "current_server_price_usd": _num(tco.get(f"{case}_current_amd_server_price_usd")),
            "breakeven_rental_quote_usd": _num(tco.get(f"{case}_breakeven_amd_rental_quote_usd")),
            "current_rental_quote_usd": _num(tco.get(f"{case}_current_amd_rental_quote_usd")),
        }
        flip = flip_text(rec, a[0], be, amd_hour, nums, str(getattr(scenario.cost, "mode", "")))
        rows.append(
            {
                "workload": workload,
                "label": label,
                "recommendation": rec,
                "basis": basis,
                "perf_winner": winner or "",
                "perf_winner_vendor": wvendor or "",
                "perf_margin_pct": _num(margin),
                "model_error_pct": e,
                "amd_best": a[0],
                "amd_cost": a[1] if a[0] else math.nan,
                "amd_cost_p05": a[2],
                "amd_cost_p95": a[3],
                "nvidia_best": n[0],
                "nvidia_cost": n[1] if n[0] else math.nan,
                "nvidia_cost_p05": n[2],
                "nvidia_cost_p95": n[3],
                "cost_unit": unit,
                "cost_margin_pct": cost_margin,
                "cost_ratio": _num(tco.get(f"{case}_cost_ratio")),
                "cost_ratio_p05": _num(tco.get(f"{case}_cost_ratio_p05")),
                "cost_ratio_p95": _num(tco.get(f"{case}_cost_ratio_p95")),
                "p_amd_cheaper": p,
                "breakeven_amd_gpu_hour_usd": be,
                "amd_gpu_hour_usd": amd_hour,
                **nums,
                "flip": flip,
            }
        )

    models = data.load_table("models")
    names = dict(zip(models["model"], models["name"], strict=True))
    t = scenario.training
    row(
        "training",
        "train",
        f"train {names.get(t.model, t.model)} on {t.cluster_gpus:,} GPUs",
        "train_cost_usd_",
        "USD per job",
        "train_p_amd_cheaper",
        "train_breakeven_amd_gpu_hour_usd",
        tr.get("train_winner"),
        tr.get("train_winner_vendor"),
        tr.get("train_margin_pct"),
        err["training_median_err_pct"],
        {},
    )
    for i, tier in enumerate(scenario.inference.tiers):
        infeasible = _infeasible(inf, i)
        row(
            f"tier{i}",
            f"tier{i}",
            f"serve {names.get(scenario.inference.model, scenario.inference.model)}, {tier.name}",
            f"tier{i}_cost_per_mtok_",
            "USD per million tokens",
            f"tier{i}_p_amd_cheaper",
            f"tier{i}_breakeven_amd_gpu_hour_usd",
            inf.get(f"tier{i}_winner"),
            inf.get(f"tier{i}_winner_vendor"),
            inf.get(f"tier{i}_margin_pct"),
            err["inference_mape_overall_pct"],
            {a: a not in infeasible for a in cands},
        )
    return pd.DataFrame(rows)


def key_results(recs: pd.DataFrame, changes: pd.DataFrame | None = None) -> dict[str, Any]:
    """The summary chapter's key results: ``rec_training``, ``rec_tier{i}`` and their numbers.

    Args:
        recs: :func:`recommend` output.
        changes: :func:`compare_with_previous` output. When given, two more keys follow:
            ``changes_since_previous`` (rows) and ``recommendations_flipped`` (rows whose
            ``flipped`` is true; 0 when nothing changed). ``None`` leaves them out, which is
            what the comparison itself needs (it diffs the summary's own recommendations).

    Returns:
        ``{key: value}`` in the order above.
    """
    out: dict[str, Any] = {}
    for _, r in recs.iterrows():
        k = r["workload"]
        out[f"rec_{k}"] = r["recommendation"]
        out[f"rec_{k}_p_amd_cheaper"] = r["p_amd_cheaper"]
        out[f"rec_{k}_cost_margin_pct"] = r["cost_margin_pct"]
    if changes is not None:
        out["changes_since_previous"] = len(changes)
        # An empty frame's "flipped" column has object dtype: its sum is not a count.
        out["recommendations_flipped"] = int(changes["flipped"].sum()) if len(changes) else 0
    return out


#: Columns of :func:`recommendation_costs`.
RECOMMENDATION_COST_COLUMNS = ("workload", "vendor", "accelerator", "relative_cost", "low", "high")


def recommendation_costs(recs: pd.DataFrame) -> pd.DataFrame:
    """Each vendor's cheapest candidate per workload, relative to NVIDIA's best median (= 1).

    Kept for callers that compare the two vendors' own intervals; the summary's figure
    plots :func:`cost_ratios` instead (the per-draw ratio, which the probability is about).

    Two rows per workload (AMD, then NVIDIA) with the median (``relative_cost``) and the
    5th/95th percentiles (``low``, ``high``) divided by NVIDIA's best median cost. Workloads
    without both vendors' costs (or with a zero NVIDIA cost) are left out: there is nothing
    to compare.

    Args:
        recs: :func:`recommend` output.

    Returns:
        Columns :data:`RECOMMENDATION_COST_COLUMNS`; ``workload`` is the workload's label.
    """
    rows = []
    for r in recs.itertuples(index=False):
        base = r.nvidia_cost
        if not (base and base == base and r.amd_cost == r.amd_cost):  # x != x: NaN
            continue
        for vendor, acc, med, lo, hi in (
            ("AMD", r.amd_best, r.amd_cost, r.amd_cost_p05, r.amd_cost_p95),
            ("NVIDIA", r.nvidia_best, r.nvidia_cost, r.nvidia_cost_p05, r.nvidia_cost_p95),
        ):
            rows.append(
                {
                    "workload": r.label,
                    "vendor": vendor,
                    "accelerator": acc,
                    "relative_cost": med / base,
                    "low": lo / base,
                    "high": hi / base,
                }
            )
    return pd.DataFrame(rows, columns=list(RECOMMENDATION_COST_COLUMNS))


#: Columns of :func:`cost_ratios`.
COST_RATIO_COLUMNS = (
    "workload", "call", "ratio", "low", "high", "margin_pct", "p_call", "amd", "nvidia"
)  # fmt: skip


def cost_ratios(recs: pd.DataFrame) -> pd.DataFrame:
    """The AMD/NVIDIA cost ratio per workload with its 5-95% interval (joint draws).

    ``margin_pct`` = (1 - ratio of the medians) x 100, the margin every sentence quotes;
    ``p_call`` the probability of the call's side (P(AMD cheaper) for AMD calls, its
    complement otherwise). Workloads without both vendors' costs are left out.
    """
    rows = []
    for r in recs.itertuples(index=False):
        if not math.isfinite(r.cost_ratio):
            continue
        p = r.p_amd_cheaper
        rows.append(
            {
                "workload": r.label,
                "call": r.recommendation,
                "ratio": r.cost_ratio,
                "low": r.cost_ratio_p05,
                "high": r.cost_ratio_p95,
                "margin_pct": r.cost_margin_pct,
                "p_call": (1 - p) if r.recommendation == "NVIDIA" else p,
                "amd": r.amd_best,
                "nvidia": r.nvidia_best,
            }
        )
    return pd.DataFrame(rows, columns=list(COST_RATIO_COLUMNS))


# --- the article's checklists, made quantitative --------------------------------------------

CHECKLIST: tuple[tuple[str, str], ...] = (
    ("NVIDIA", "You need the fastest path to production AI with broad framework support"),
    ("NVIDIA", "You’re training large models across multiple GPUs and nodes"),
    ("NVIDIA", "Team expertise centers on CUDA and NVIDIA tools"),
    ("NVIDIA", "Low-latency inference under 50 milliseconds matters critically"),
    ("NVIDIA", "You require ISV-certified drivers for regulated workflows"),
    ("NVIDIA", "Your organization values institutional knowledge and vendor support"),
    ("AMD", "Your teams prefer Linux-first, open-source tooling approaches"),
    ("AMD", "You’re serving large models to multiple users with medium-latency tolerance"),
    ("AMD", "Upfront hardware cost savings provide meaningful budget relief"),
    ("AMD", "Your workloads fit within single-node serving scenarios"),
    ("AMD", "You have direct purchasing power (not relying on cloud rental services)"),
    ("AMD", "Memory capacity limitations constrain your model serving options"),
)
CHECK_VERDICTS: tuple[str, ...] = ("supported", "contradicted", "not testable")


def _rec_verdict(recs: pd.DataFrame, workloads: list[str], vendor: str) -> tuple[str, str]:
    sub = recs[recs["workload"].isin(workloads)]
    if sub.empty:
        return "not testable", "the scenario has no such workload"
    calls = ", ".join(f"{r.label}: {r.recommendation}" for r in sub.itertuples())
    if (sub["recommendation"] == INFEASIBLE).all():
        return "not testable", f"{calls} (no candidate can run it)"
    if (
        any(r == "either" for r in sub["recommendation"])
        and not (sub["recommendation"] == vendor).any()
    ):
        return "contradicted", f"{calls} (no clear {vendor} advantage)"
    ok = (sub["recommendation"] == vendor).all()
    return ("supported" if ok else "contradicted"), calls


def _tiers_verdict(
    recs: pd.DataFrame, workloads: list[str], vendor: str, label: str, none: str
) -> tuple[str, str]:
    """(evidence, verdict) of a checklist line about a group of tiers; ``none`` if empty."""
    if not workloads:
        return none, "not testable"
    verdict, calls = _rec_verdict(recs, workloads, vendor)
    return f"{label}: {calls}.", verdict


def checklist(
    scenario: Any,
    chapter_results: Results,
    recs: pd.DataFrame | None = None,
    claims: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The article's 12 "Choose NVIDIA/AMD when" lines, each with what this analysis says.

    Args:
        scenario: the Scenario.
        chapter_results: the chapters' key results.
        recs: :func:`recommend` output (computed when ``None``).
        claims: :func:`analysis.claims.evaluate_claims` output, for the lines a claim settles
            (drivers, memory capacity); optional.

    Returns:
        Columns: side ("Choose NVIDIA when" / "Choose AMD when"), line, evidence,
        verdict (one of :data:`CHECK_VERDICTS`).
    """
    recs = recommend(scenario, chapter_results) if recs is None else recs
    tiers = scenario.inference.tiers
    tight = [
        f"tier{i}"
        for i, t in enumerate(tiers)
        if t.tpot_ms_max is not None and t.tpot_ms_max <= LOW_LATENCY_MS
    ]
    medium = [f"tier{i}" for i in range(len(tiers)) if f"tier{i}" not in tight]
    inf = chapter_results.get(INFERENCE, {})
    tco = chapter_results.get(TCO, {})
    cands = ids.shipping(scenario.candidates)
    cost = scenario.cost
    porting = cost.porting_engineer_months.get("AMD", 0.0) * cost.engineer_month_usd
    verdicts = (
        claims.set_index("claim_id")["verdict"].to_dict()
        if claims is not None and not claims.empty
        else {}
    )
    out = []

    def add(side: str, line: str, evidence: str, verdict: str) -> None:
        out.append(
            {"side": f"Choose {side} when", "line": line, "evidence": evidence, "verdict": verdict}
        )

    lines = iter(CHECKLIST)
    side, line = next(lines)
    add(
        side,
        line,
        "Not measurable from our data; the TCO chapter prices AMD porting at "
        f"{cost.porting_engineer_months.get('AMD', 0):g} engineer-months (${porting:,.0f}, an "
        "assumption).",
        "not testable",
    )
    side, line = next(lines)
    v, ev = _rec_verdict(recs, ["training"], "NVIDIA")
    add(side, line, f"Training call for {scenario.training.cluster_gpus:,} GPUs: {ev}.", v)
    side, line = next(lines)
    add(
        side,
        line,
        f"Priced, not tested: porting/ramp-up ${porting:,.0f} spread over "
        f"{cost.fleet_gpus:,} GPUs in the TCO.",
        "not testable",
    )
    side, line = next(lines)
    add(
        side,
        line,
        *_tiers_verdict(
            recs,
            tight,
            "NVIDIA",
            f"Tiers <= {LOW_LATENCY_MS} ms",
            f"This scenario has no tier at or below {LOW_LATENCY_MS} ms per token.",
        ),
    )
    for _ in range(2):
        side, line = next(lines)
        add(side, line, "Organisational; no data in this report.", "not testable")
    side, line = next(lines)
    drv = [verdicts.get(c) for c in ("C41", "C42")]
    if all(drv):
        add(
            side,
            line,
            f"Claims audit: AMD in-kernel driver {drv[0]}; NVIDIA 'proprietary "
            f"driver' {drv[1]} (NVIDIA's kernel modules are open source too).",
            "contradicted" if "contradicted" in drv else "supported",
        )
    else:
        add(side, line, "Preference, not a measurable outcome.", "not testable")
    side, line = next(lines)
    add(
        side,
        line,
        *_tiers_verdict(
            recs,
            medium,
            "AMD",
            f"Tiers above {LOW_LATENCY_MS} ms",
            f"This scenario has no tier above {LOW_LATENCY_MS} ms.",
        ),
    )
    side, line = next(lines)
    hours = {a: _num(tco.get(f"gpu_hour_usd_{a}")) for a in cands}
    cheapest = {
        v: min(
            (h for a, h in hours.items() if ids.vendor_of(a) == v and math.isfinite(h)),
            default=math.nan,
        )
        for v in ids.VENDORS
    }
    amd_h, nv_h = cheapest["AMD"], cheapest["NVIDIA"]
    if math.isfinite(amd_h) and math.isfinite(nv_h):
        add(
            side,
            line,
            f"Cheapest GPU-hour ({tco.get('mode', cost.mode)}): AMD ${amd_h:.2f} vs "
            f"NVIDIA ${nv_h:.2f} ({(1 - amd_h / nv_h) * 100:+.0f}% AMD saving per GPU-hour, "
            "before throughput).",
            "supported" if amd_h < nv_h else "contradicted",
        )
    else:
        add(side, line, "Needs the TCO chapter's GPU-hour costs.", "not testable")
    side, line = next(lines)
    excluded = set().union(*(_infeasible(inf, i) for i in range(len(tiers))))
    nv_out = sorted(a for a in excluded if ids.vendor_of(a) == "NVIDIA")
    amd_out = sorted(a for a in excluded if ids.vendor_of(a) == "AMD")
    if inf:
        ev = (
            f"With {scenario.inference.gpus_per_replica} GPUs per replica, infeasible in some "
            f"tier: NVIDIA {', '.join(nv_out) or 'none'}; AMD {', '.join(amd_out) or 'none'}."
        )
        add(side, line, ev, "supported" if nv_out and not amd_out else "contradicted")
    else:
        add(side, line, "Needs the inference chapter's results.", "not testable")
    side, line = next(lines)
    if tco:
        ps = [_num(v) for k, v in tco.items() if k.endswith("_p_amd_cheaper")]
        ps = [p for p in ps if math.isfinite(p)]
        mode = tco.get("mode", cost.mode)
        share = sum(p > 0.5 for p in ps)
        ev = f"Mode {mode}: AMD likelier cheaper in {share} of {len(ps)} workloads."
        if mode == "buy":
            add(side, line, ev, "supported" if share > len(ps) / 2 else "contradicted")
        else:
            add(side, line, ev + " (Renting: run a buy scenario to test the line.)", "not testable")
    else:
        add(side, line, "Needs the TCO chapter's results.", "not testable")
    side, line = next(lines)
    if inf:
        add(
            side,
            line,
            f"Memory-bound exclusions in this scenario: NVIDIA "
            f"{', '.join(nv_out) or 'none'}, AMD {', '.join(amd_out) or 'none'}; claims audit "
            f"C12 (more memory per GPU, per generation): {verdicts.get('C12', 'n/a')}.",
            "supported" if nv_out and not amd_out else "contradicted",
        )
    else:
        add(side, line, "Needs the inference chapter's results.", "not testable")
    return pd.DataFrame(out)


# --- what changed since the previous version ------------------------------------------------


def compare_with_previous(
    current: Results,
    previous_results: Mapping[str, Any],
    tiers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Key figures that changed since the previous version of the same scenario.

    The same comparison as ``python -m analysis diff`` (:func:`analysis.results.compare_chapters`):
    values as displayed, the summary's own counters and the version id left out, tiers
    matched by name when both versions name them.

    Args:
        current: ``{chapter id: {key: value}}`` of this version (the other chapters' results
            plus this summary's own key results under ``00-summary``).
        previous_results: the previous version's ``results.json``
            (``{"scenario", "version", "tiers", "chapters": {chapter: {key: value}}}``);
            ``{}`` = none.
        tiers: this version's tier names, in order (to match the previous version's).

    Returns:
        Columns chapter, key, previous, current, change_pct (numbers only), flipped (a
        recommendation or winner changed). Empty when there is no previous version.
    """
    cols = ["chapter", "key", "previous", "current", "change_pct", "flipped"]
    prev = (previous_results or {}).get("chapters") or {}
    if not prev:
        return pd.DataFrame(columns=cols)
    rows = []
    for ch, key, va, vb in results.compare_chapters(
        prev, current, old_tiers=previous_results.get("tiers"), new_tiers=tiers
    ):
        change = math.nan
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (va, vb))
        if numbers and va:
            change = (vb / va - 1) * 100
        # A flip needs a decision in both versions; a key that appears or goes is a change.
        flipped = results.is_flip(key, va, vb)
        rows.append(
            {
                "chapter": ch,
                "key": key,
                "previous": va,
                "current": vb,
                "change_pct": change,
                "flipped": bool(flipped),
            }
        )
    return pd.DataFrame(rows, columns=cols)


# --- appendix helpers -----------------------------------------------------------------------


def cited_source_ids(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Every ``sources.csv`` id cited by the given tables, sorted.

    Reads columns ``source_id``, ``*_source_id``, ``*_source`` and ``fact_sources``.
    """
    found: set[str] = set()
    for df in tables.values():
        for col in df.columns:
            if col == "source_id" or col.endswith(("_source_id", "_source", "fact_sources")):
                for v in df[col].dropna().astype(str):
                    found |= {s.strip() for s in v.split(";") if s.strip()}
    return sorted(found)


def load_cited_source_ids() -> list[str]:
    """:func:`cited_source_ids` of every registered data table except ``sources`` itself."""
    return cited_source_ids(
        {name: data.load_table(name) for name in data.table_names() if name != "sources"}
    )


def cited_sources(sources: pd.DataFrame, cited: list[str]) -> pd.DataFrame:
    """The rows of the ``sources`` table whose ``source_id`` is in ``cited``, in table order.

    The original index is kept. Cited ids missing from ``sources`` (e.g. MLPerf result
    paths) have no row.

    >>> src = pd.DataFrame({"source_id": ["a", "b", "c"], "url": ["u1", "u2", "u3"]})
    >>> cited_sources(src, ["c", "a", "mlperf/x"])["source_id"].tolist()
    ['a', 'c']
    """
    return sources.loc[sources["source_id"].isin(cited)]


#: What the appendix's version table shows when the orchestrator passed no ``run_info``.
RUN_INFO_MISSING: dict[str, str] = {"version": "not run by the orchestrator"}


def run_info_table(run_info: Mapping[str, Any] | None) -> pd.DataFrame:
    """The orchestrator's ``run_info`` as rows ``item``, ``value`` (values as strings).

    An empty or missing ``run_info`` (the notebook opened by hand) gives one row saying so
    (:data:`RUN_INFO_MISSING`).

    >>> run_info_table({"version": "v0001", "dirty": False})["value"].tolist()
    ['v0001', 'False']
    >>> run_info_table({}).to_numpy().tolist()
    [['version', 'not run by the orchestrator']]
    """
    return pd.DataFrame(
        [{"item": k, "value": str(v)} for k, v in (run_info or RUN_INFO_MISSING).items()]
    )


def appendix_key_results(
    register: pd.DataFrame, cited: list[str], run_info: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The appendix's key results: ``assumptions``, ``sources_cited`` and ``version``.

    ``version`` is ``run_info["version"]`` as a string, ``""`` when the orchestrator passed
    none.

    >>> appendix_key_results(pd.DataFrame({"id": ["A-x"]}), ["s1", "s2"], {})
    {'assumptions': 1, 'sources_cited': 2, 'version': ''}
    """
    return {
        "assumptions": len(register),
        "sources_cited": len(cited),
        "version": str(run_info.get("version", "")) if run_info else "",
    }


def _esc(text: Any) -> str:
    s = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    return html_text(s)


def assumptions_register_html(
    register: pd.DataFrame, sources: pd.DataFrame, *, compact: bool = False, anchors: bool = True
) -> str:
    """The assumptions register as an HTML table, one anchor per entry.

    Each row starts with ``<a id="A-..."></a>`` (the TCO chapter links ``#A-...``) and links
    its source. ``compact`` leaves out the rationale and date (the PDF's version: one line
    per entry); ``anchors=False`` leaves out the anchors (a second, full copy of the
    register in the same page must not repeat the ids).
    """
    urls = dict(zip(sources["source_id"], sources["url"], strict=True))
    head = ["id", "parameter", "value", "range", "unit", "quality", "source", "date", "rationale"]
    if compact:
        head = head[:7]
    body = []
    for r in register.itertuples(index=False):
        rid = str(r.id) if str(r.id).startswith("A-") else f"A-{r.id}"
        url = urls.get(r.source_id)
        src = (
            f'<a href="{_esc(url)}">{_esc(r.source_id)}</a>'
            if isinstance(url, str)
            else _esc(r.source_id)
        )
        anchor = f'<a id="{_esc(rid)}"></a>' if anchors else ""
        cells = [
            f"{anchor}<code>{_esc(rid)}</code>",
            f"<code>{_esc(r.parameter)}</code>",
            f"{r.value:g}",
            f"{r.low:g} to {r.high:g}",
            _esc(r.unit),
            _esc(r.quality),
            src,
            _esc(r.value_date),
            _esc(r.rationale),
        ][: len(head)]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        '<table class="assumptions-register"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


def sources_list_bundle(sources: pd.DataFrame) -> dict[str, str]:
    """The cited sources as a compact list: HTML (linked titles) and Typst (one paragraph).

    One entry per source, "id: title, publisher, read on date", in table order. The HTML is
    an ordered list (two columns on paper); the Typst form is a small-print paragraph, so
    about 90 sources take one page rather than five. All text is escaped.
    """
    from analysis.typst_tables import typst_text

    items, typ = [], []
    for r in sources.itertuples(index=False):
        url = r.url if isinstance(r.url, str) and r.url else ""
        title = _esc(r.title)
        linked = f'<a href="{_esc(url)}">{title}</a>' if url else title
        items.append(
            f"<li><code>{_esc(r.source_id)}</code>: {linked}, {_esc(r.publisher)}, "
            f"read {_esc(r.accessed)}</li>"
        )
        t = typst_text(str(r.title))
        if url:
            t = f"#link({_typst_str(url)})[{t}]"
        typ.append(
            f"*{typst_text(str(r.source_id))}*: {t}, {typst_text(str(r.publisher))}, "
            f"read {typst_text(str(r.accessed))}"
        )
    html = '<ol class="sources-list">' + "".join(items) + "</ol>"
    typst = "#text(size: 7pt)[" + " · ".join(typ) + "]"
    fence = "`" * 4
    return {"text/html": html, "text/markdown": f"{fence}{{=typst}}\n{typst}\n{fence}\n"}


def _typst_str(text: str) -> str:
    from analysis.typst_tables import typst_string

    return typst_string(text)


#: The glossary (appendix): every abbreviation and term the chapters use.
GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "TPOT",
        "Time per output token: the gap between two generated tokens of one request "
        "(ms). A tier's bound; 1000 / TPOT is the tokens per second each user sees.",
    ),
    (
        "TTFT",
        "Time to first token: from a request's arrival to its first output token "
        "(prefill plus queueing).",
    ),
    ("ISL / OSL", "Input / output sequence length: tokens in the prompt and in the answer."),
    (
        "APE",
        "Absolute percentage error of a prediction against a measured result; the "
        "models' error is quoted as the median APE out of sample.",
    ),
    (
        "MFU",
        "Model FLOPs utilization: the share of the GPU's peak FLOP/s that training's "
        "model arithmetic uses.",
    ),
    (
        "Roofline",
        "The bound a kernel cannot beat: bytes moved over memory bandwidth or "
        "FLOPs over peak compute, whichever is slower.",
    ),
    (
        "TP / PP / DP",
        "Tensor, pipeline and data parallelism: splitting each layer across GPUs, "
        "splitting the layers into stages, or replicating the model over batches.",
    ),
    (
        "FSDP",
        "Fully sharded data parallelism: data parallelism with weights, gradients and "
        "optimizer state sharded across the GPUs.",
    ),
    (
        "Paid vs useful GPU-hour",
        "A paid GPU-hour is what the owner or provider charges for; "
        "a useful one does work. Useful cost = paid cost / utilization: at 70% "
        "utilization, a token costs 1 / 0.7 of the paid hour.",
    ),
    ("Cost margin", "1 - AMD/NVIDIA cost: +25% means AMD costs a quarter less."),
    (
        "Break-even",
        "The value of one input (server price, rental quote, throughput, "
        "utilization) at which the two vendors cost the same, all else held.",
    ),
    (
        "Announced part",
        "A product with vendor figures but no shipping systems (projections, never winners).",
    ),
)


def glossary_bundle() -> dict[str, str]:
    """:data:`GLOSSARY` as a definition list (HTML) and a Markdown list (Typst path)."""
    html = (
        '<dl class="glossary">'
        + "".join(f"<dt>{_esc(t)}</dt><dd>{_esc(d)}</dd>" for t, d in GLOSSARY)
        + "</dl>"
    )
    md = "\n".join(f"- **{markdown_text(t)}**: {markdown_text(d)}" for t, d in GLOSSARY)
    return {"text/html": html, "text/markdown": md}


#: ISL/OSL at or above which prefill dominates a request's FLOPs (the model does the
#: arithmetic; this only decides which sentence describes it): prefill does ISL tokens of
#: work per request in one pass, decode OSL tokens, so at 4x the prompt's work is most of it.
PREFILL_HEAVY_RATIO = 4.0


def inference_reading_note(scenario: Any, mape_pct: float) -> str:
    """How to read the tier results, computed from the scenario (Markdown).

    The measured error bounds what counts as a clear win; the request shape (ISL/OSL)
    decides whether prefill or decode limits throughput, which says how much a looser
    TPOT bound can buy.
    """
    inf = scenario.inference
    ratio = inf.isl / inf.osl
    err = f"{mape_pct:.0f}%" if math.isfinite(mape_pct) else "not measured in this run"
    txt = (
        f"**Reading the result with its error.** The model's out-of-sample median error "
        f"(MLPerf rounds held out) is {err}; a tier margin smaller than that is not a clear "
        f"win. The model chooses tensor parallelism (1 to {inf.gpus_per_replica}) per tier "
        "and assumes continuous batching with chunked prefill; disaggregated prefill, "
        "speculative decoding, pipeline and expert parallelism are not modelled. "
    )
    if ratio >= PREFILL_HEAVY_RATIO:
        txt += (
            f"This scenario's requests carry {ratio:g} input tokens per output token "
            f"(ISL {inf.isl:,}, OSL {inf.osl:,}): prefill FLOPs bound throughput, so a looser "
            "TPOT bound adds little and the tiers differ less than a decode-only view suggests."
        )
    else:
        txt += (
            f"This scenario's requests carry {ratio:g} input tokens per output token "
            f"(ISL {inf.isl:,}, OSL {inf.osl:,}): decode dominates, so a looser TPOT bound "
            "buys larger batches and more tokens per GPU."
        )
    return txt


# --- plain-language text for the summary page -----------------------------------------------


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


def _workload_text(scenario: Any, workload: str, model_names: Mapping[str, str]) -> str:
    """The workload in words, its latency tier by its real bounds (not the user's label)."""
    if workload == "training":
        t = scenario.training
        return f"training {model_names.get(t.model, t.model)} on {t.cluster_gpus:,} GPUs"
    tier = scenario.inference.tiers[int(workload.removeprefix("tier"))]
    m = scenario.inference.model
    return f"serving {model_names.get(m, m)} {tier.bounds_text()}"


def _unit_text(workload: str) -> str:
    return "per training run" if workload == "training" else "per million output tokens"


def memo_line(scenario: Any, r: Any, model_names: Mapping[str, str]) -> str:
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
    scenario: Any,
    recs: pd.DataFrame,
    chapter_results: Results,
    *,
    data_as_of: str = "",
    model_names: Mapping[str, str] | None = None,
) -> str:
    """The memo (first screen, PDF page 1): one line per workload, the caveat, the date.

    Every number comes from ``recs`` (:func:`recommend`) and the chapters' key results;
    without chapter results (the notebook opened by hand) it says what is missing instead.
    """
    if model_names is None:
        models = data.load_table("models")
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


def changes_markdown(changes: pd.DataFrame, previous_results: Mapping[str, Any]) -> str:
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
