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

A package (``from analysis import decision`` re-exports every name):
:mod:`~analysis.decision.recommend`, :mod:`~analysis.decision.checklist`,
:mod:`~analysis.decision.changes`, :mod:`~analysis.decision.appendix`,
:mod:`~analysis.decision.summary`. This ``__init__`` is the facade: the one module of the
package that imports :mod:`analysis.data` (:func:`load_cited_source_ids` reads every table).
"""

from __future__ import annotations

from analysis import data
from analysis.decision.appendix import (
    GLOSSARY,
    PREFILL_HEAVY_RATIO,
    RUN_INFO_MISSING,
    _esc,
    _typst_str,
    appendix_key_results,
    assumptions_register_html,
    cited_source_ids,
    cited_sources,
    glossary_bundle,
    inference_reading_note,
    run_info_table,
    sources_list_bundle,
)
from analysis.decision.changes import (
    compare_with_previous,
)
from analysis.decision.checklist import (
    CHECK_VERDICTS,
    CHECKLIST,
    _rec_verdict,
    _tiers_verdict,
    checklist,
)
from analysis.decision.recommend import (
    COST_RATIO_COLUMNS,
    INFEASIBLE,
    INFERENCE,
    LOW_LATENCY_MS,
    P_EITHER,
    RECOMMENDATION_COST_COLUMNS,
    SUMMARY,
    TCO,
    TRAINING,
    Results,
    _best_cost,
    _call,
    _infeasible,
    _num,
    _usd,
    cost_ratios,
    flip_text,
    key_results,
    model_error,
    model_error_table,
    recommend,
    recommendation_costs,
)
from analysis.decision.summary import (
    MAX_NAMED_CHANGES,
    _change_value,
    _interval,
    _largest_changes,
    _md_value,
    _money,
    _unit_text,
    _workload_text,
    changes_markdown,
    data_date,
    main_caveat,
    memo_line,
    summary_markdown,
)


def load_cited_source_ids() -> list[str]:
    """:func:`cited_source_ids` of every registered data table except ``sources`` itself."""
    return cited_source_ids(
        {name: data.load_table(name) for name in data.table_names() if name != "sources"}
    )


__all__ = [
    "CHECKLIST",
    "CHECK_VERDICTS",
    "COST_RATIO_COLUMNS",
    "GLOSSARY",
    "INFEASIBLE",
    "INFERENCE",
    "LOW_LATENCY_MS",
    "MAX_NAMED_CHANGES",
    "PREFILL_HEAVY_RATIO",
    "P_EITHER",
    "RECOMMENDATION_COST_COLUMNS",
    "RUN_INFO_MISSING",
    "Results",
    "SUMMARY",
    "TCO",
    "TRAINING",
    "_best_cost",
    "_call",
    "_change_value",
    "_esc",
    "_infeasible",
    "_interval",
    "_largest_changes",
    "_md_value",
    "_money",
    "_num",
    "_rec_verdict",
    "_tiers_verdict",
    "_typst_str",
    "_unit_text",
    "_usd",
    "_workload_text",
    "appendix_key_results",
    "assumptions_register_html",
    "changes_markdown",
    "checklist",
    "cited_source_ids",
    "cited_sources",
    "compare_with_previous",
    "cost_ratios",
    "data_date",
    "flip_text",
    "glossary_bundle",
    "inference_reading_note",
    "key_results",
    "load_cited_source_ids",
    "main_caveat",
    "memo_line",
    "model_error",
    "model_error_table",
    "recommend",
    "recommendation_costs",
    "run_info_table",
    "sources_list_bundle",
    "summary_markdown",
]
