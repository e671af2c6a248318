"""The key-results schema: every chapter's ``results.json`` keys, defined once, in code.

A chapter's last cell records its key figures (:func:`analysis.results.show_key_results`);
the summary chapter, the version diff and external checks read them by name. This module
is the one definition of those names, and three things are built from it:

* ``docs/contracts.md``'s key-results section (``make contracts``; a test keeps the
  committed file equal to :func:`contracts_section`);
* the run's check (:func:`check_chapter`, called by :mod:`analysis.execute` as each chapter
  finishes, so the summary never reads a key that is not there): a required key that is
  missing, a NaN/None where a call or a required number is needed, a value of the wrong
  kind, or a key that matches no pattern of its chapter stops the run with a
  :class:`~analysis.errors.KeyResultsError` naming the chapter and the key;
* the flip rule's calls (:func:`is_decision_key`, behind :func:`analysis.results.is_flip`):
  the keys whose spec says ``decision=True``.

Analytical decisions taken here:

* A pattern's placeholders: ``{ACC}`` an accelerator id (:data:`analysis.ids.ACCELERATORS`),
  ``{i}`` a tier index (0 = tightest), ``{case}`` a cost case (``tier{i}`` or ``train``),
  ``{model}`` a model id, ``{precision}`` ``bf16``/``fp8``/``fp4``, ``{n}`` a GPU count.
* ``required``: the key is there for every tier, case and accelerator of the scenario
  (:class:`KeyContext`); a pattern with ``{model}``, ``{precision}`` or ``{n}`` is never
  required (which combinations exist depends on the data).
* ``nullable``: the key may hold None (a NaN made JSON-safe): an infeasible part's
  throughput, a margin without a part of the other vendor. Calls (``decision``) are never
  None: "no feasible part" is the empty text ``""``.
* A chapter the schema does not know (a fixture chapter, a user's own notebook folder) is
  not checked; a test keeps every bundled chapter in the schema.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import product
from typing import Literal

from analysis import ids
from analysis.errors import KeyResultsError

Kind = Literal["number", "text", "int", "bool"]


def _alternatives(values: Sequence[str]) -> str:
    return "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))


#: Placeholder -> regular expression of its values.
PLACEHOLDERS: dict[str, str] = {
    "ACC": f"(?:{_alternatives(ids.ACCELERATORS)})",
    "i": r"\d+",
    "case": r"(?:tier\d+|train)",
    "model": r"[a-z0-9][a-z0-9.\-]*",
    "precision": f"(?:{_alternatives(ids.PRECISIONS)})",
    "n": r"\d+",
}
#: Placeholders a required key is expanded over (the scenario says which values exist).
EXPANDED = frozenset({"ACC", "i", "case"})
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class KeySpec:
    """One key (or family of keys) of one chapter's key results."""

    pattern: str
    kind: Kind
    unit: str
    description: str
    chapter: str
    required: bool = True
    decision: bool = False
    nullable: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.placeholders) - set(PLACEHOLDERS)
        if unknown:
            raise ValueError(f"{self.pattern}: unknown placeholder(s) {sorted(unknown)}")
        if self.required and set(self.placeholders) - EXPANDED:
            raise ValueError(
                f"{self.pattern}: a required pattern can only use {{ACC}}, {{i}}, {{case}}"
            )
        if self.decision and (self.kind != "text" or self.nullable):
            raise ValueError(f"{self.pattern}: a call is text and never None")

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The placeholder names in the pattern, in order."""
        return tuple(_PLACEHOLDER.findall(self.pattern))

    @property
    def regex(self) -> re.Pattern[str]:
        """The pattern as an anchored regular expression."""
        return _compiled(self.pattern)

    def matches(self, key: str) -> bool:
        """Whether ``key`` is one of this spec's keys.

        >>> spec = KeySpec("tier{i}_tok_s_gpu_{ACC}", "number", "", "", "c")
        >>> spec.matches("tier0_tok_s_gpu_H100-SXM"), spec.matches("tier0_tok_s_gpu_H100")
        (True, False)
        """
        return self.regex.fullmatch(key) is not None

    def expand(self, context: KeyContext) -> Iterator[str]:
        """Every key the scenario must have for this (required) spec.

        >>> ctx = KeyContext(tiers=2, accelerators=("H200", "MI300X"))
        >>> list(KeySpec("tier{i}_winner", "text", "", "", "c").expand(ctx))
        ['tier0_winner', 'tier1_winner']
        """
        values = {
            "ACC": list(context.accelerators),
            "i": [str(i) for i in range(context.tiers)],
            "case": [*(f"tier{i}" for i in range(context.tiers)), "train"],
        }
        names = self.placeholders
        for combo in product(*(values[n] for n in names)):
            key = self.pattern
            for name, value in zip(names, combo, strict=True):
                key = key.replace(f"{{{name}}}", value, 1)
            yield key


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", pattern)
    body = "".join(
        PLACEHOLDERS[p[1:-1]] if p.startswith("{") and p.endswith("}") else re.escape(p)
        for p in parts
    )
    return re.compile(body)


@dataclass(frozen=True)
class KeyContext:
    """What a scenario says about which keys must exist: its tiers and accelerators."""

    tiers: int
    accelerators: tuple[str, ...] = field(default=())

    @classmethod
    def from_scenario(cls, scenario: object) -> KeyContext:
        """From an :class:`analysis.params.Scenario` (``inference.tiers``, ``accelerators``)."""
        inference = getattr(scenario, "inference", None)
        tiers = getattr(inference, "tiers", ())
        accelerators = getattr(scenario, "accelerators", ())
        return cls(tiers=len(tiers), accelerators=tuple(str(a) for a in accelerators))


def _k(
    pattern: str,
    kind: Kind,
    unit: str,
    description: str,
    *,
    required: bool = True,
    decision: bool = False,
    nullable: bool = False,
) -> KeySpec:
    """A spec whose chapter :func:`_chapter` fills in."""
    return KeySpec(pattern, kind, unit, description, "", required, decision, nullable)


def _chapter(chapter: str, *specs: KeySpec) -> tuple[KeySpec, ...]:
    return tuple(replace(s, chapter=chapter) for s in specs)


#: Every chapter's keys, chapter by chapter in report order.
# The registry is a table, one key per line: the formatter leaves it as written.
# fmt: off
KEYS: tuple[KeySpec, ...] = (
    *_chapter("00-summary",
        _k("rec_tier{i}", "text", "", "The call for tier i: `AMD`, `NVIDIA` or `either`", decision=True),
        _k("rec_training", "text", "", "The call for the training job: `AMD`, `NVIDIA` or `either`", decision=True),
        _k("rec_tier{i}_p_amd_cheaper", "number", "probability", "P(AMD cheaper) behind the tier's call", nullable=True),
        _k("rec_training_p_amd_cheaper", "number", "probability", "P(AMD cheaper) behind the training call", nullable=True),
        _k("rec_tier{i}_cost_margin_pct", "number", "%", "1 - AMD/NVIDIA median cost, the report's one margin definition", nullable=True),
        _k("rec_training_cost_margin_pct", "number", "%", "The same margin for the training job", nullable=True),
        _k("changes_since_previous", "int", "count", "Key figures changed since the previous version", required=False),
        _k("recommendations_flipped", "int", "count", "Calls that flipped since the previous version", required=False),
    ),
    *_chapter("10-data",
        _k("accelerators_in_scenario", "int", "count", "Accelerators the scenario compares (announced parts included)"),
        _k("announced_in_scenario", "int", "count", "Announced parts among them (projections)"),
        _k("models", "int", "count", "Models in data/models"),
        _k("sources_cited_by_specs_and_models", "int", "count", "Sources the spec and model tables cite"),
        _k("spec_values_estimated", "int", "count", "Spec values that are estimates, not published figures"),
        _k("max_memory_shipping_accelerator", "text", "", "Shipping candidate with the most HBM"),
        _k("max_memory_shipping_gb", "number", "GB", "Its HBM capacity"),
        _k("memory_gb_ratio_MI300X_over_H100-SXM", "number", "ratio", "HBM capacity, MI300X over H100-SXM (full table)"),
        _k("memory_bw_ratio_MI300X_over_H100-SXM", "number", "ratio", "HBM bandwidth, MI300X over H100-SXM (full table)"),
        _k("bf16_ridge_flop_per_byte_H100-SXM", "number", "FLOP/byte", "BF16 roofline ridge point of H100-SXM"),
        _k("bf16_ridge_flop_per_byte_MI300X", "number", "FLOP/byte", "BF16 roofline ridge point of MI300X"),
        _k("mlperf_accelerators_covered", "int", "count", "Accelerators with MLPerf rows"),
    ),
    *_chapter("15-claims",
        _k("claims_total", "int", "count", "Claims of the seed article tested"),
        _k("claims_supported", "int", "count", "Claims the data supports"),
        _k("claims_contradicted", "int", "count", "Claims the data contradicts"),
        _k("claims_mixes_generations", "int", "count", "Claims that compare parts of different generations"),
        _k("claims_unverifiable", "int", "count", "Claims no bundled data can test"),
        _k("disagg_amd_points", "int", "count", "Measured InferenceX disaggregated points, AMD (speculative decoding excluded)"),
        _k("disagg_nvidia_points", "int", "count", "The same, NVIDIA"),
        _k("disagg_gain_pct_AMD", "number", "%", "Median measured gain of disaggregated over aggregated serving at matched TPOT bounds, AMD (None: no part measured both ways)", nullable=True),
        _k("disagg_gain_pct_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
    ),
    *_chapter("20-training-scaling",
        _k("train_hours_{ACC}", "number", "h", "Time to train at the scenario's cluster size (None: infeasible)", nullable=True),
        _k("train_gpu_hours_{ACC}", "number", "GPU-h", "GPU-hours to train (None: infeasible)", nullable=True),
        _k("scaling_eff_{ACC}", "number", "fraction", "Scaling efficiency at the cluster size", nullable=True),
        _k("scaling_eff_{n}_{ACC}", "number", "fraction", "Strong-scaling efficiency at the largest GPU count n (16,384)", required=False, nullable=True),
        _k("train_winner", "text", "", "Fastest shipping candidate (empty text: none feasible)", decision=True),
        _k("train_winner_vendor", "text", "", "Its vendor", decision=True),
        _k("train_margin_pct", "number", "%", "Winner's lead over the best candidate of the other vendor", nullable=True),
        _k("mlperf_median_err_pct", "number", "%", "Median error of the training model against MLPerf Training, tokens/s per GPU, each accelerator x benchmark x GPU count predicted from a fit without it (the scheme `mlperf: leave one GPU count out`)", nullable=True),
        _k("mlperf_v51_median_err_pct", "number", "%", "Median absolute error of the training model on the MLPerf Training v5.1 rows, a newer round no fit reads (tokens/s per GPU, each row at its own precision, GPU count and global batch, the layout searched as for fitted rows)", nullable=True),
        _k("mlperf_v51_ratio_err_pct", "number", "%", "Median absolute error of the AMD/NVIDIA throughput ratio on the matched MLPerf Training v5.1 pairs (same benchmark and GPU count, each vendor's own precision; None: no pair)", nullable=True),
    ),
    *_chapter("30-inference-tiers",
        _k("tier{i}_name", "text", "", "The tier's name (scenario)"),
        _k("tier{i}_winner", "text", "", "Most tokens/s per GPU among shipping candidates (empty text: none feasible)", decision=True),
        _k("tier{i}_winner_vendor", "text", "", "Its vendor", decision=True),
        _k("tier{i}_margin_pct", "number", "%", "Winner's tokens/s/GPU over the best candidate of the other vendor", nullable=True),
        _k("tier{i}_tok_s_gpu_{ACC}", "number", "tokens/s/GPU", "Output tokens/s per GPU within the tier's bounds (None: infeasible)", nullable=True),
        _k("tier{i}_tp_{ACC}", "number", "GPUs", "Tensor parallelism chosen", required=False, nullable=True),
        _k("tier{i}_infeasible", "text", "", "Comma-separated ids of infeasible candidates (empty text if none)"),
        _k("mlperf_mape_AMD", "number", "%", "Out-of-sample median APE vs MLPerf, AMD (each round predicted from the others)", nullable=True),
        _k("mlperf_mape_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("mlperf_mape_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("mlperf_mape_scheme", "text", "", "The hold-out scheme of `mlperf_mape_*`: `round`"),
        _k("mlperf_round_unpredicted", "int", "count", "Held-out rows without calibration data"),
        _k("mlperf_mape_accelerator_AMD", "number", "%", "Median APE, each part predicted from its sister parts, AMD", nullable=True),
        _k("mlperf_mape_accelerator_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("mlperf_mape_accelerator_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("mlperf_mape_system_AMD", "number", "%", "Median APE, each system left out, AMD", nullable=True),
        _k("mlperf_mape_system_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("mlperf_mape_system_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("tier{i}_deployment_{ACC}", "text", "", "Deployment chosen, e.g. `aggregated TP8`, `disaggregated: prefill TP4, decode EP32 + DP attention, ...`, `expert-parallel EP8 + DP attention` (empty text: infeasible)"),
        _k("tier{i}_deployment_basis_{ACC}", "text", "", "What it stands on: `MLPerf-calibrated`, `measured` (an InferenceX point), `measured-calibrated`, `modelled, no measurement` (empty text: infeasible)"),
        _k("disagg_mape_AMD", "number", "%", "Held-out median APE of tokens/s per GPU on InferenceX disaggregated configurations (each predicted without its rows), AMD", nullable=True),
        _k("disagg_mape_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("disagg_mape_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("disagg_p90_AMD", "number", "%", "Its 90th-percentile APE, AMD", nullable=True),
        _k("disagg_p90_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("disagg_p90_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("disagg_configurations", "int", "count", "Held-out disaggregated configurations"),
        _k("inferencex_model_serving", "text", "", "Label of the model the `inferencex_mape_serving_*` figures validate: `report's serving model` (the roofline shape the tiers use)"),
        _k("inferencex_mape_serving_AMD", "number", "%", "Held-out median APE of output tokens/s per GPU at the measured median TPOT on the InferenceX DeepSeek-R1 sweeps (each accelerator x precision predicted from the others), report's serving model, AMD", nullable=True),
        _k("inferencex_mape_serving_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("inferencex_mape_serving_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("inferencex_model_sweep", "text", "", "Label of the model the `inferencex_mape_sweep_*` figures validate: `sweep model (validated candidate, not yet used by the tiers)`"),
        _k("inferencex_mape_sweep_AMD", "number", "%", "The same held-out InferenceX error, sweep model (a candidate the tiers do not use), AMD", nullable=True),
        _k("inferencex_mape_sweep_NVIDIA", "number", "%", "The same, NVIDIA", nullable=True),
        _k("inferencex_mape_sweep_overall", "number", "%", "The same, both vendors", nullable=True),
        _k("inferencex_ratio_err_serving", "number", "%", "Median error of the AMD/NVIDIA ratio of the held-out InferenceX frontiers (best point under each TPOT bound from 15 to 80 ms, each cell's last 60 days; AMD and NVIDIA cells paired at one precision, lengths and bound), report's serving model", nullable=True),
        _k("inferencex_ratio_err_sweep", "number", "%", "The same, sweep model (a candidate the tiers do not use)", nullable=True),
    ),
    *_chapter("35-your-measurements",
        _k("measured_points", "int", "count", "Measured points read"),
        _k("measured_points_used", "int", "count", "Points the calibration used"),
        _k("measured_combinations", "int", "count", "(accelerator, model, precision) combinations measured"),
        _k("measured_rms_log_error_before", "number", "log", "RMS log error of the public model on the points", nullable=True),
        _k("measured_rms_log_error_after", "number", "log", "RMS log error after the correction", nullable=True),
        _k("correction_{ACC}_{model}_{precision}", "number", "factor", "Throughput correction per measured combination", required=False, nullable=True),
        _k("sigma_{ACC}_{model}_{precision}", "number", "log", "Its uncertainty (log sigma)", required=False, nullable=True),
        _k("tier{i}_winner_public", "text", "", "The tier's winner on the public model"),
        _k("tier{i}_winner_measured", "text", "", "The tier's winner with the measurements"),
        _k("tier{i}_p_amd_cheaper_public", "number", "probability", "P(AMD cheaper), public model", nullable=True),
        _k("tier{i}_p_amd_cheaper_measured", "number", "probability", "P(AMD cheaper), with the measurements", nullable=True),
    ),
    *_chapter("40-tco",
        _k("mode", "text", "", "The scenario's cost mode: `buy` or `rent`"),
        _k("gpu_hour_usd_{ACC}", "number", "USD/GPU-h", "$/GPU-hour in the scenario's mode: the price rule's point figure (`tco.price_rule`)", nullable=True),
        _k("tier{i}_cost_per_mtok_{ACC}", "number", "USD/M tokens", "Cost per million output tokens, Monte Carlo median", nullable=True),
        _k("tier{i}_cost_per_mtok_{ACC}_p05", "number", "USD/M tokens", "Its 5th percentile", nullable=True),
        _k("tier{i}_cost_per_mtok_{ACC}_p95", "number", "USD/M tokens", "Its 95th percentile", nullable=True),
        _k("tier{i}_cheapest", "text", "", "Cheapest shipping candidate per token", decision=True),
        _k("tier{i}_p_amd_cheaper", "number", "probability", "P(cheapest AMD cheaper than cheapest NVIDIA), joint draws", nullable=True),
        _k("tier{i}_breakeven_amd_gpu_hour_usd", "number", "USD/GPU-h", "AMD $/GPU-hour at which the two cost the same", nullable=True),
        _k("train_cost_usd_{ACC}", "number", "USD", "Cost of the training job, Monte Carlo median", nullable=True),
        _k("train_cost_usd_{ACC}_p05", "number", "USD", "Its 5th percentile", nullable=True),
        _k("train_cost_usd_{ACC}_p95", "number", "USD", "Its 95th percentile", nullable=True),
        _k("train_cheapest", "text", "", "Cheapest shipping candidate for the training job", decision=True),
        _k("train_p_amd_cheaper", "number", "probability", "P(AMD cheaper) for the training job", nullable=True),
        _k("train_breakeven_amd_gpu_hour_usd", "number", "USD/GPU-h", "AMD $/GPU-hour at which the two cost the same", nullable=True),
        _k("{case}_cost_ratio", "number", "ratio", "AMD/NVIDIA cost ratio of the cheapest pair, median over joint draws", nullable=True),
        _k("{case}_cost_ratio_p05", "number", "ratio", "Its 5th percentile", nullable=True),
        _k("{case}_cost_ratio_p95", "number", "ratio", "Its 95th percentile", nullable=True),
        _k("{case}_breakeven_amd_rel_throughput", "number", "ratio", "AMD throughput (relative) at which the two cost the same", nullable=True),
        _k("{case}_breakeven_amd_server_price_usd", "number", "USD", "AMD 8-GPU server price at break-even (buy mode's terms)", nullable=True),
        _k("{case}_current_amd_server_price_usd", "number", "USD", "The current AMD 8-GPU server price", nullable=True),
        _k("{case}_breakeven_amd_rental_quote_usd", "number", "USD/GPU-h", "AMD rental quote at break-even (both vendors rented)", nullable=True),
        _k("{case}_current_amd_rental_quote_usd", "number", "USD/GPU-h", "The current AMD rental quote", nullable=True),
        _k("claim_hw_discount_pct_min", "number", "%", "Smallest AMD hardware discount over the generation pairs (claims)", required=False, nullable=True),
        _k("claim_hw_discount_pct_max", "number", "%", "Largest AMD hardware discount (claims)", required=False, nullable=True),
        _k("claim_rent_p_amd_cheaper_min", "number", "probability", "Lowest P(AMD cheaper) over the tiers when renting (claims)", required=False, nullable=True),
        _k("claim_hidden_costs_exceed_gap_any", "bool", "", "Whether hidden costs exceed the price gap for any pair (claims)", required=False),
        _k("plan_cheapest", "text", "", "Cheapest fleet plan: `all-AMD`, `all-NVIDIA` or `split` (empty text: a vendor has no feasible, priced candidate)", decision=True),
        _k("plan_p_cheapest", "number", "probability", "Its share of the joint draws", nullable=True),
        _k("plan_tier", "text", "", "The serving tier the plans price", required=False),
        _k("plan_flip", "text", "", "The split's extra cost at which the cheapest plan changes (a sentence)", required=False),
        _k("plan_serving_tokens_per_year", "number", "tokens/year", "The serving load every plan prices", required=False),
        _k("plan_cost_usd_all_amd", "number", "USD", "All-AMD: the training job plus a year of serving, median", required=False),
        _k("plan_cost_usd_all_nvidia", "number", "USD", "The same, all-NVIDIA", required=False),
        _k("plan_cost_usd_split", "number", "USD", "The same, the split (its extra costs included)", required=False),
        _k("plan_p_cheapest_all_amd", "number", "probability", "P(all-AMD cheapest), joint draws", required=False),
        _k("plan_p_cheapest_all_nvidia", "number", "probability", "P(all-NVIDIA cheapest)", required=False),
        _k("plan_p_cheapest_split", "number", "probability", "P(split cheapest)", required=False),
        _k("plan_split_extra_usd", "number", "USD/year", "The split's second stack (engineering, operations) and lost fungibility, median", required=False),
    ),
    *_chapter("90-appendix",
        _k("assumptions", "int", "count", "Entries of the assumptions register"),
        _k("sources_cited", "int", "count", "Sources the report cites"),
        _k("version", "text", "", "The report version id (empty text outside a run)"),
    ),
)
# fmt: on

#: Notes printed under a chapter's keys in docs/contracts.md.
CHAPTER_NOTES: dict[str, str] = {
    "30-inference-tiers": "Winners are chosen among shipping candidates only; announced parts "
    "appear as projections.",
    "35-your-measurements": "Only in reports whose scenario lists `measurements`. With "
    "measurements, the `30-inference-tiers` and `40-tco` keys are those of the corrected "
    "model (`measurements.apply_to_tiers`, `tco.with_throughput_sigmas`).",
    "40-tco": "Per case (`tier{i}`, `train`) the cost ratio and break-evens; buy and rent "
    "terms are both given whatever the mode. The fleet plan (`plan_*`, `analysis.fleet`) "
    "prices the training job plus a year of serving in tier `plan_tier`; `00-summary` prints "
    "it with `fleet.summary_line`.",
}


def chapters() -> tuple[str, ...]:
    """The chapter ids the schema defines, in report order."""
    return tuple(dict.fromkeys(s.chapter for s in KEYS))


def specs_of(chapter: str) -> tuple[KeySpec, ...]:
    """The chapter's specs (empty for a chapter the schema does not know)."""
    return tuple(s for s in KEYS if s.chapter == chapter)


def spec_for(chapter: str, key: str) -> KeySpec | None:
    """The spec of ``chapter`` that ``key`` matches (None: no pattern matches)."""
    return next((s for s in specs_of(chapter) if s.matches(key)), None)


def is_decision_key(key: str) -> bool:
    """Whether ``key`` is a call (a spec with ``decision=True``, in any chapter).

    >>> is_decision_key("rec_tier0"), is_decision_key("rec_tier0_p_amd_cheaper")
    (True, False)
    >>> is_decision_key("tier1_cheapest"), is_decision_key("tier1_winner_public")
    (True, False)
    """
    return any(s.decision and s.matches(key) for s in KEYS)


_ARTICLE_KIND: dict[str, str] = {
    "number": "a number",
    "int": "an integer",
    "text": "a text",
    "bool": "a yes/no",
}


def _is_none(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _kind_ok(kind: Kind, value: object) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "text":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, int | float)


def problems(chapter: str, results: Mapping[str, object], context: KeyContext) -> list[str]:
    """What breaks the schema in one chapter's key results (empty: nothing).

    >>> ctx = KeyContext(tiers=1, accelerators=())
    >>> for p in problems("90-appendix", {"assumptions": 3, "sources_cited": None, "versoin": ""}, ctx):
    ...     print(p)
    missing required key 'version' (The report version id (empty text outside a run))
    key 'sources_cited' is NaN/None where an integer is needed (Sources the report cites)
    unknown key 'versoin': it matches no key pattern of 90-appendix
    """
    specs = specs_of(chapter)
    if not specs:
        return []
    out = [
        f"missing required key {key!r} ({spec.description})"
        for spec in specs
        if spec.required
        for key in spec.expand(context)
        if key not in results
    ]
    for key, value in results.items():
        spec = spec_for(chapter, key)
        if spec is None:
            out.append(f"unknown key {key!r}: it matches no key pattern of {chapter}")
        elif _is_none(value):
            if not spec.nullable:
                what = "a call" if spec.decision else _ARTICLE_KIND[spec.kind]
                out.append(f"key {key!r} is NaN/None where {what} is needed ({spec.description})")
        elif not _kind_ok(spec.kind, value):
            out.append(f"key {key!r} should be {spec.kind}, got {type(value).__name__} {value!r}")
    return out


def check_chapter(chapter: str, results: Mapping[str, object], context: KeyContext) -> None:
    """Raise :class:`KeyResultsError` naming the chapter and every key that breaks its schema."""
    found = problems(chapter, results, context)
    if found:
        raise KeyResultsError(
            f"chapter {chapter}: key results break the schema (analysis.keys): " + "; ".join(found)
        )


def check_results(found: Mapping[str, Mapping[str, object]], context: KeyContext) -> None:
    """:func:`check_chapter` for every chapter of an executed notebook's key results."""
    for chapter, results in found.items():
        check_chapter(chapter, results, context)


# --- docs/contracts.md ----------------------------------------------------------------

CONTRACTS_BEGIN = "<!-- key-results: generated from src/analysis/keys.py by `make contracts` -->"
CONTRACTS_END = "<!-- key-results: end -->"


def _flags(spec: KeySpec) -> str:
    flags = []
    if spec.decision:
        flags.append("call")
    flags.append("required" if spec.required else "optional")
    if spec.nullable:
        flags.append("may be None")
    return ", ".join(flags)


def contracts_section() -> str:
    """The key-results section of docs/contracts.md, markers included."""
    legend = ", ".join(f"`{{{p}}}`" for p in PLACEHOLDERS)
    lines = [
        CONTRACTS_BEGIN,
        "## Key results (chapter id -> keys)",
        "",
        f"Generated from `analysis.keys.KEYS`; edit that and run `make contracts`. Placeholders: "
        f"{legend} (`ACC` an accelerator id as in ids.py, `i` a tier index with 0 the tightest, "
        "`case` `tier{i}` or `train`, `n` a GPU count). The run checks every chapter's keys "
        "against this: a missing required key, a None in a call or a required number, or a key "
        "matching no pattern fails it. Calls are the keys the version diff and the summary "
        "report as flipped (`results.is_flip`).",
    ]
    for chapter in chapters():
        lines += ["", f"### `{chapter}`", ""]
        if chapter in CHAPTER_NOTES:
            lines += [CHAPTER_NOTES[chapter], ""]
        lines += ["| key | kind | unit | flags | meaning |", "|---|---|---|---|---|"]
        lines += [
            f"| `{s.pattern}` | {s.kind} | {s.unit} | {_flags(s)} | {s.description} |"
            for s in specs_of(chapter)
        ]
    lines.append(CONTRACTS_END)
    return "\n".join(lines) + "\n"


def contracts_with_keys(text: str) -> str:
    """``text`` (docs/contracts.md) with its key-results section regenerated.

    Raises:
        ValueError: the file lacks the markers.
    """
    start, end = text.find(CONTRACTS_BEGIN), text.find(CONTRACTS_END)
    if start < 0 or end < start:
        raise ValueError(f"docs/contracts.md has no key-results markers ({CONTRACTS_BEGIN!r})")
    tail = text[end + len(CONTRACTS_END) :].lstrip("\n")
    return text[:start] + contracts_section() + ("\n" + tail if tail else "")
