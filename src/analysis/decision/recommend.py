"""The recommendation per workload: the call, its margin, likelihood and flip point."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import ids
from analysis.inputs import Inputs, resolve
from analysis.params import Scenario

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
        # InferenceX sweeps, each accelerator x precision predicted from the others: the
        # report's serving model (what the tiers use) and the sweep model (a validated
        # candidate the tiers do not use), named apart so neither passes for the other.
        "inferencex_mape_overall_pct (report's serving model)": _num(
            inf.get("inferencex_mape_serving_overall")
        ),
        "inferencex_mape_overall_pct (sweep model, validated candidate, not yet used by the "
        "tiers)": _num(inf.get("inferencex_mape_sweep_overall")),
        # What the decision rests on: the AMD/NVIDIA ratio of the same held-out predictions,
        # best point under each TPOT bound per cell, AMD and NVIDIA cells paired.
        "inferencex_amd_nvidia_ratio_err_pct (report's serving model)": _num(
            inf.get("inferencex_ratio_err_serving")
        ),
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


def recommend(
    scenario: Scenario, chapter_results: Results, *, inputs: Inputs | None = None
) -> pd.DataFrame:
    """One row per workload (training job, then each inference tier) with the call and why.

    Columns: workload, label, recommendation (AMD/NVIDIA/either/infeasible), basis, perf_winner,
    perf_winner_vendor, perf_margin_pct, model_error_pct, amd_best, amd_cost, amd_cost_p05,
    amd_cost_p95, nvidia_best, nvidia_cost, nvidia_cost_p05, nvidia_cost_p95, cost_unit,
    cost_margin_pct (1 - AMD's best / NVIDIA's best median cost, %; > 0 = AMD cheaper),
    cost_ratio, cost_ratio_p05, cost_ratio_p95 (AMD/NVIDIA per joint draw), p_amd_cheaper,
    breakeven_amd_gpu_hour_usd, amd_gpu_hour_usd, breakeven_rel_throughput,
    breakeven_server_price_usd, current_server_price_usd, breakeven_rental_quote_usd,
    current_rental_quote_usd, flip (what would flip it, in words). The model names come
    from ``inputs`` (default: the default inputs).
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
        # One decimal, the precision every sentence and table quotes it at: results.json's
        # four significant digits would otherwise round 35.497 to 35.50, and the memo
        # ("about 35% cheaper") and the stored key (36 %) disagree.
        cost_margin = round((1 - a[1] / n[1]) * 100, 1) if cost_known and n[1] > 0 else math.nan
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

    models = resolve(inputs).table("models")
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


def key_results(recs: pd.DataFrame, changes: pd.DataFrame | None = None) -> dict[str, object]:
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
