"""Testing the seed article's claims against the project's data.

Analytical decisions taken here:

* The verdict set is closed (:data:`VERDICTS`): ``supported``, ``contradicted``,
  ``mixes generations`` (the quoted number is real but belongs to another product or
  generation than the one named: found by searching every accelerator in the spec table for
  the value within tolerance) and ``unverifiable``.
* Numbers are tested against the tables, never retyped: specs (:func:`data.load_specs`),
  MLPerf results, prices, and for model-output claims (latency tiers, training winner,
  cost) the chapters' key results passed in as ``chapter_results`` so the function stays
  pure and agrees with the chapters by construction. A claim that needs a chapter output
  that was not passed is ``unverifiable`` for that run, and says so.
* Paired comparisons (AMD part vs NVIDIA part of the same generation: MI300X/H100,
  MI325X/H200, MI355X/B200) are ``supported`` when the claimed direction holds in most
  pairs *and* in the newest pair: "typically" should still hold today.
* MLPerf comparisons use the best per-accelerator result (a derived, not official MLPerf
  metric) *within one round*: the newest round in ``data/benchmarks`` with results of both
  sides (rdi rows excluded). Rounds are never mixed (software, rules and datasets change
  between them); a pair no single round holds is ``unverifiable``.
* Price claims use the TCO chapter's one price rule: rental quotes of the scenario's pool
  only; purchase prices from sourced estimates only. A price that rests on the project's
  own judgement row can neither support nor contradict a claim: the pair is "no price".
* Statements no table can test are settled by a cited document (``source_fact``) or are
  ``unverifiable``; the claims table records which.
* A claimed *ratio* that no named (shipping) pair shows but the announced generation's pair
  does (MI455X vs VR200) is ``mixes generations``; a quoted number found in no spec row
  takes the row's ``fact_verdict`` and the products its cited ``fact`` names.
* A right number for a different quantity of the same part (e.g. a NIC bandwidth quoted as
  the scale-up link's) is ``contradicted``, not ``mixes generations``: no generation is mixed.
* The training-winner claim needs a win larger than the training model's MLPerf error: a
  margin inside it is a tie. Model-output verdicts cite the chapter and the spec/price
  sources its models read.
* What the reader sees is prose: claimed text, not its match pattern; field labels, not
  column names (those stay in ``observed``); "none of the 3 generation pairs", not "0 of 3".

A package (``from analysis import claims`` re-exports every name):
:mod:`~analysis.claims.base`, :mod:`~analysis.claims.specs`, :mod:`~analysis.claims.market`,
:mod:`~analysis.claims.outputs`, :mod:`~analysis.claims.evaluate`. This ``__init__`` is the
facade: the one module of the package that imports :mod:`analysis.data` (which registers
the default inputs the submodules resolve).
"""

from __future__ import annotations

from analysis import data  # noqa: F401 - registers the default inputs the submodules resolve
from analysis.claims.base import (
    FIELD_LABELS,
    INFERENCE_CHAPTER,
    OUTPUT_COLUMNS,
    PRICE_LABELS,
    TCO_CHAPTER,
    TRAINING_CHAPTER,
    Context,
    Outcome,
    _fmt,
    _label,
    _num,
    _regex_label,
    _resolve,
    _split,
    _status_of,
    _tol,
    _within,
)
from analysis.claims.evaluate import (
    EVALUATORS,
    MODEL_OUTPUT_CLAIMS,
    SEED_SOURCE_ID,
    VERDICT_QUOTE_CHARS,
    _claimed_text,
    _load_or_empty,
    eval_none,
    eval_source_fact,
    evaluate_claims,
    key_results,
    seed_article_markdown,
    select_claims,
    verdict_counts,
    verdict_table,
)
from analysis.claims.market import (
    _best_mlperf,
    _mlperf_rows,
    _pool,
    _price_per_acc,
    _round_key,
    eval_mlperf_ratio,
    eval_price_ratio,
)
from analysis.claims.outputs import (
    PERF_FIELDS,
    _best,
    _cost_per_mtok,
    _count,
    _mo_unverifiable,
    _need,
    _price_sources,
    _rent_cheapest,
    _shipping_candidates,
    _spec_sources,
    _tier_test,
    _tiers,
    _tok_s,
    eval_model_output,
)
from analysis.claims.specs import (
    _SEVERITY,
    _announced_pair,
    _combine,
    _describe,
    _fmt_val,
    _ids_in,
    _match_value,
    _paired_verdict,
    _ratio_holds,
    _ratio_what,
    _side,
    _spec_field_values,
    _spec_part,
    eval_memory_fit,
    eval_spec_ratio,
    eval_spec_value,
)
from analysis.tables.claims import VERDICTS

__all__ = [
    "VERDICTS",
    "Context",
    "EVALUATORS",
    "FIELD_LABELS",
    "INFERENCE_CHAPTER",
    "MODEL_OUTPUT_CLAIMS",
    "OUTPUT_COLUMNS",
    "Outcome",
    "PERF_FIELDS",
    "PRICE_LABELS",
    "SEED_SOURCE_ID",
    "TCO_CHAPTER",
    "TRAINING_CHAPTER",
    "VERDICT_QUOTE_CHARS",
    "_SEVERITY",
    "_announced_pair",
    "_best",
    "_best_mlperf",
    "_claimed_text",
    "_combine",
    "_cost_per_mtok",
    "_count",
    "_describe",
    "_fmt",
    "_fmt_val",
    "_ids_in",
    "_label",
    "_load_or_empty",
    "_match_value",
    "_mlperf_rows",
    "_mo_unverifiable",
    "_need",
    "_num",
    "_paired_verdict",
    "_pool",
    "_price_per_acc",
    "_price_sources",
    "_ratio_holds",
    "_ratio_what",
    "_regex_label",
    "_rent_cheapest",
    "_resolve",
    "_round_key",
    "_shipping_candidates",
    "_side",
    "_spec_field_values",
    "_spec_part",
    "_spec_sources",
    "_split",
    "_status_of",
    "_tier_test",
    "_tiers",
    "_tok_s",
    "_tol",
    "_within",
    "eval_memory_fit",
    "eval_mlperf_ratio",
    "eval_model_output",
    "eval_none",
    "eval_price_ratio",
    "eval_source_fact",
    "eval_spec_ratio",
    "eval_spec_value",
    "evaluate_claims",
    "key_results",
    "seed_article_markdown",
    "select_claims",
    "verdict_counts",
    "verdict_table",
]
