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


def recommend(scenario: Any, chapter_results: Results) -> pd.DataFrame:
    """One row per workload (training job, then each inference tier) with the call and why.

    Columns: workload, label, recommendation (AMD/NVIDIA/either/infeasible), basis, perf_winner,
    perf_winner_vendor, perf_margin_pct, model_error_pct, amd_best, amd_cost, amd_cost_p05,
    amd_cost_p95, nvidia_best, nvidia_cost, nvidia_cost_p05, nvidia_cost_p95, cost_unit,
    cost_margin_pct (NVIDIA's best over AMD's best median cost - 1, %; > 0 = AMD cheaper),
    p_amd_cheaper, breakeven_amd_gpu_hour_usd, amd_gpu_hour_usd, flip (what would flip it).
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
        cost_margin = (n[1] / a[1] - 1) * 100 if cost_known and a[1] > 0 else math.nan
        be = _num(tco.get(be_key))
        amd_hour = _num(tco.get(f"gpu_hour_usd_{a[0]}")) if a[0] else math.nan
        if rec == INFEASIBLE:
            flip = "A looser bound, a smaller model or a candidate that can meet the workload."
        elif rec == "either":
            flip = f"A clearer cost gap: P(AMD cheaper) outside {P_EITHER[0]}-{P_EITHER[1]}."
        elif rec == "AMD":
            flip = "NVIDIA wins if AMD's all-in GPU-hour rises above the break-even."
        else:
            flip = "AMD wins if its all-in GPU-hour falls below the break-even."
        if math.isfinite(be):
            flip += f" Break-even AMD GPU-hour: ${be:.2f}"
            flip += f" (now ${amd_hour:.2f} for {a[0]})." if math.isfinite(amd_hour) else "."
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
                "p_amd_cheaper": p,
                "breakeven_amd_gpu_hour_usd": be,
                "amd_gpu_hour_usd": amd_hour,
                "flip": flip,
            }
        )

    t = scenario.training
    row(
        "training",
        f"train {t.model} on {t.cluster_gpus:,} GPUs",
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
            f"serve {scenario.inference.model}, {tier.name}",
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
        flipped = results.is_decision_key(key) and va is not None and vb is not None
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


def assumptions_register_html(register: pd.DataFrame, sources: pd.DataFrame) -> str:
    """The assumptions register as an HTML table, one anchor per entry.

    Each row starts with ``<a id="A-..."></a>`` (the TCO chapter links ``#A-...``) and links
    its source.
    """
    urls = dict(zip(sources["source_id"], sources["url"], strict=True))
    head = ["id", "parameter", "value", "range", "unit", "quality", "source", "date", "rationale"]
    body = []
    for r in register.itertuples(index=False):
        rid = str(r.id) if str(r.id).startswith("A-") else f"A-{r.id}"
        url = urls.get(r.source_id)
        src = (
            f'<a href="{_esc(url)}">{_esc(r.source_id)}</a>'
            if isinstance(url, str)
            else _esc(r.source_id)
        )
        cells = [
            f'<a id="{_esc(rid)}"></a><code>{_esc(rid)}</code>',
            f"<code>{_esc(r.parameter)}</code>",
            f"{r.value:g}",
            f"{r.low:g} to {r.high:g}",
            _esc(r.unit),
            _esc(r.quality),
            src,
            _esc(r.value_date),
            _esc(r.rationale),
        ]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        '<table class="assumptions-register"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
    )


# --- plain-language text for the summary page -----------------------------------------------


def _money(x: float, unit: str) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"${x:,.0f}" if unit.startswith("USD per job") else f"${x:,.3g}"


def _interval(lo: float, hi: float, unit: str) -> str:
    if math.isfinite(lo) and math.isfinite(hi):
        return f" (5-95%: {_money(lo, unit)}-{_money(hi, unit)})"
    return ""


def summary_markdown(scenario: Any, recs: pd.DataFrame, chapter_results: Results) -> str:
    """The first screen: one line per workload with call, margin, interval, probability, flip.

    Without chapter results (the notebook opened by hand) it says what is missing instead.
    """
    # User text (title, tier names in the labels) is escaped: shown as text, never as
    # Markdown or HTML (a <script> in a title must not run in the report).
    head = f"**Scenario:** {markdown_text(scenario.title)} ({scenario.cost.mode} mode).\n\n"
    if not chapter_results:
        return head + (
            "> **No chapter results were passed.** This summary only reads the other chapters' "
            "key results, which the orchestrator injects (`python -m analysis run --params "
            "FILE`). Opened by hand, every workload shows as *either* with no numbers."
        )
    lines = []
    for r in recs.itertuples(index=False):
        txt = f"- **{markdown_text(r.label)}: {r.recommendation}**"
        if math.isfinite(r.cost_margin_pct):
            txt += (
                f". Cheapest AMD {r.amd_best} {_money(r.amd_cost, r.cost_unit)}"
                f"{_interval(r.amd_cost_p05, r.amd_cost_p95, r.cost_unit)} vs NVIDIA "
                f"{r.nvidia_best} {_money(r.nvidia_cost, r.cost_unit)}"
                f"{_interval(r.nvidia_cost_p05, r.nvidia_cost_p95, r.cost_unit)} "
                f"({r.cost_unit}): AMD costs {r.amd_cost / r.nvidia_cost:.2f}x NVIDIA"
            )
        if math.isfinite(r.p_amd_cheaper):
            txt += f"; P(AMD cheaper) = {r.p_amd_cheaper:.2f}"
        if r.perf_winner:
            txt += (
                f". Fastest: {r.perf_winner} (+{r.perf_margin_pct:.0f}% over the other "
                "vendor's best"
            )
            txt += (
                f", model error {r.model_error_pct:.0f}%)"
                if math.isfinite(r.model_error_pct)
                else ")"
            )
        txt += f". *Flips if:* {markdown_text(r.flip)}"
        lines.append(txt)
    err = model_error(chapter_results)
    caveats = [
        "- Announced parts (VR200, MI455X) carry vendors' preliminary figures: projections, "
        "never winners.",
        f"- Measured model error (out-of-sample vs MLPerf): inference median APE "
        f"{err['inference_mape_overall_pct']:.1f}% (AMD {err['inference_mape_amd_pct']:.1f}%, "
        f"NVIDIA {err['inference_mape_nvidia_pct']:.1f}%) predicting each MLPerf round from "
        f"the others, AMD {err['inference_mape_accelerator_amd_pct']:.1f}% and NVIDIA "
        f"{err['inference_mape_accelerator_nvidia_pct']:.1f}% predicting each accelerator "
        f"from its sister parts; training median error "
        f"{err['training_median_err_pct']:.0f}%.",
        "- Porting effort, utilization and prices are assumptions with ranges (appendix).",
    ]
    return head + "\n".join(lines) + "\n\n**Caveats**\n\n" + "\n".join(caveats)


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
