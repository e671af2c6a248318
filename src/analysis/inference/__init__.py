"""Inference: a calibrated LLM serving model, latency tiers, and the throughput frontier.

A package of focused modules (``from analysis import inference`` re-exports every
name; this facade is the one place that reaches the default inputs of :mod:`analysis.data`):
:mod:`~analysis.inference.roofline` (physics), :mod:`~analysis.inference.shape` (fitted
serving shape), :mod:`~analysis.inference.implied` (MLPerf rows as implied efficiencies),
:mod:`~analysis.inference.calibration` (the fit), :mod:`~analysis.inference.tables`,
:mod:`~analysis.inference.serving` (the public contract),
:mod:`~analysis.inference.validation`, :mod:`~analysis.inference.tiers`,
:mod:`~analysis.inference.latency` and :mod:`~analysis.inference.latency_validation`
(InferenceX sweeps), :mod:`~analysis.inference.benchmarks`,
:mod:`~analysis.inference.deployments` (disaggregated and expert-parallel options, issue
20; a worker's accounting in :mod:`~analysis.inference.worker`) and
:mod:`~analysis.inference.deployment_fit` (their InferenceX calibration; its
``validation_*`` and ``key_results`` names stay under the submodule, which this facade
exports as ``inference.deployment_fit``).

Analytical decisions taken here (the chapter ``30-inference-tiers`` explains them):

* **One replica = ``gpus`` accelerators in tensor parallel.** A decode step at concurrency
  B processes B decode tokens plus the prompts of the requests that join in steady state
  (B x ISL/OSL prefill tokens: continuous batching with chunked prefill, as vLLM,
  SGLang and TensorRT-LLM run by default). Its time is a per-operator roofline: linear
  layers max(weight bytes / bandwidth, FLOPs / peak), attention max(KV bytes / bandwidth,
  FLOPs / peak), plus two all-reduces per layer over the scale-up link (ring: 2(G-1)/G of
  the message at half the bidirectional bandwidth, plus a fixed latency), plus a fixed
  per-step overhead and a per-layer one in proportion to the layer's kernels (fitted on
  the DeepSeek-R1 sweeps, charged to every model: :mod:`~analysis.inference.layer_kernels`).
  TPOT = step time; throughput = B / step time.
* **TTFT** = prefill of one prompt alone on the replica + one decode step of waiting.
* **MoE** models read the experts their tokens touch (1-(1-k/E)^T of the expert weights
  for T tokens in the step: all of them at serving batch sizes) and compute with the active
  parameters; all parameters stay resident. **GQA** sets the KV size
  (2 x layers x kv_heads x head_dim); KV heads are split over tensor-parallel ranks and
  replicated when there are fewer heads than ranks. **MLA** (DeepSeek) uses the model
  table's ``kv_bytes_per_token_bf16`` and assumes data-parallel attention (latents split
  by sequence). A measured InferenceX sweep is modelled at its own engine layout
  (``_terms(..., ep=, dp_attention=)``): expert parallelism makes a step wait for the
  busiest GPU's experts (:func:`ep_imbalance`), and without data-parallel attention the
  MLA latent is replicated on every tensor-parallel rank, as SGLang does.
* **Precision**: weights at 2 / 1 / 0.5625 bytes (bf16 / fp8 / fp4 with block scales);
  KV cache bf16 for bf16 serving, fp8 otherwise; peak = the dense tensor FLOPS at that
  precision. An accelerator without fp4 hardware cannot serve at fp4 (an error, not a
  silent fallback).
* **Memory**: weights + KV cache of every sequence at its full context (ISL + OSL) must fit
  in 90 % of HBM (vLLM's default ``gpu_memory_utilization = 0.9``). A model that does not
  fit raises instead of returning a number.
* **Calibration**: one efficiency factor eta (the achieved fraction of the roofline; it
  scales bandwidth, FLOPS and link bandwidth, not the fixed overheads) per MLPerf row,
  solved exactly so that the model reproduces the measured result under that scenario's
  own dataset lengths and latency bounds, with the parallel layout (TP 1/2/4/8) the model
  finds best, as submitters tune theirs. A step takes ``fixed + scaled / eta``, so each
  layout's threshold eta is closed-form and the solution is the smallest threshold over
  layouts: all rows at once in numpy, deterministic (equal to a bracketing root-finder). Factors are
  the **medians** of these per-row values per vendor x architecture generation x round
  (falling back to vendor x generation, then vendor): medians rather than a least-squares
  fit because MLPerf mixes tuned vendor submissions with untuned partner ones, and a
  median is robust to them and reproducible to the last digit. Server and Interactive
  rows get a scenario scale (median of their eta over the same system's group Offline eta):
  the tail-latency and queueing headroom a mean-value model cannot see. It is pooled plus
  a **per-vendor deviation** (the serving stacks, TensorRT-LLM vs vLLM/ROCm, differ in
  scheduling and queueing), shrunk empirical-Bayes style by n / (n + 10) rows.
* **Compute ratio** (:mod:`~analysis.inference.compute_ratio`): the workload and
  precision-class scales act on FLOPs only, as kappa = eta_c / eta_b in every step
  (:func:`scaled_time`); weight, KV-cache and all-reduce bytes run at the calibrated
  efficiency itself. The calibration iterates until the scales left over are within 1 %
  (:func:`fit_calibration`; every validation fold does the same). Applied to the whole
  step, gpt-oss-120b's scale (about 0.1) made its weight reads 10x slower, and its
  latency-bounded throughput on B200 came out 4-8 % of InferenceX's measured (now about
  half); an FP8 part above its native FP4 read its bytes 1.7x faster than its FP4 runs.
* **Board power**: a lower-power bin of one silicon sustains lower clocks under load than
  its datasheet peak (MI300X at 750 W vs MI325X at 1000 W, MI350X at 1000 W vs MI355X at
  1400 W), so efficiency scales as (board power / the generation's top-bin TDP) ** beta.
  beta is measured per vendor, paired within vendor x generation x round x benchmark x
  scenario (parts at different power, or a run with a power cap stated in its MLPerf
  accelerator name), the median slope shrunk by n / (n + ``POWER_PRIOR_PAIRS`` = 10)
  pairs towards the DVFS prior ``POWER_PRIOR_EXPONENT`` = 1/3 (P ~ C V^2 f with V ~ f,
  so a compute-bound clock ~ P^(1/3)): today about 0.53 for AMD (10 pairs; MI300X at 0.86
  of MI325X, near AMD's measured max-achievable GEMM ratio 0.84, ``gemm_max_achievable``)
  and 0 for NVIDIA (29; NVIDIA's datasheet peaks already differ between its bins, and
  B300/GB300's FP4 power gap now sits in the roofline's same-node bound, so little
  elasticity is left: it was 0.21 before the bound, 0.03 before the compute ratio, and a
  negative median reads as none). A fold with few
  pairs (an accelerator holdout) keeps the prior instead of no power effect (leave one
  accelerator out, AMD: 16.8 % -> 10.0 %). MLPerf v6.0 holds a direct test: one MI355X
  system at 1400 W and capped at 1000 W, elasticity 0.52-0.59 (:func:`power_cap_runs`).
  All group factors are fitted as top-bin equivalents and moved to each part's power
  (:meth:`Calibration.power_factor`),
  so a part predicted from its sister parts, or a generation from the one before,
  carries the power difference.
* **Per-accelerator factors**: the roofline omits other part-specific effects (sustained
  vs spec bandwidth; B300's and GB300's FP4 rate is bounded in the roofline itself,
  :func:`sustained_tflops`), so each accelerator's own median is kept per round
  and shrunk towards its vendor x generation factor by n / (n + ``ACCELERATOR_PRIOR_ROWS``
  = 10) in log space. Fallbacks: vendor x generation, then the vendor's newest older
  generation, then the vendor.
* **Round and software drift**: a query takes the factors of its own round when calibrated
  (the latest for today's model); otherwise those of the nearest calibrated round on each
  side (one or two), each moved to the query's round by the vendor's measured **software
  drift** and combined as a row-weighted geometric mean. The drift is the per-vendor
  log-linear change of eta per MLPerf release (two a year: position 2 x major + minor),
  paired within accelerator x benchmark x scenario x precision class so that it is not
  confounded with each round's mix of parts and workloads nor with a submission changing
  format (B200 fp8 in v4.1, fp4 since: -35 % of its roofline fraction is a precision
  contrast); each benchmark x scenario votes once with its cells' median slope (DeepSeek-R1's
  +45..95 % from v5.1 to v6.0 on six cells is that workload's step, not the vendor's), and
  the median vote is shrunk towards no drift by n / (n + ``DRIFT_PRIOR_PAIRS`` = 10) pairs
  (``Calibration.drift_per_round``, shown by ``efficiency_trend``; today about +4.7 % per
  release NVIDIA from 27 pairs, +0.4 % AMD from 6). It never changes today's model (the
  report's queries take the latest round, which needs no shift; only a query naming an
  uncalibrated round is moved). A benchmark with no calibration data takes the median
  workload scale of its family (MoE or dense) in the API; validation does not score it.
  *Not adopted*: a per-vendor x workload drift (shrunk towards the vendor's by n / (n + 10)
  pairs, applied to the workload scale from its rows' median release, since a workload's
  own software gain is a property of its kernels, e.g. DeepSeek's MLA). It is identified
  in no fold that needs it: DeepSeek-R1 and llama3.1-405b are paired only across
  v5.1 -> v6.0, so holding either round out leaves none of their pairs and their drift falls
  back to the vendor's (leave-one-round-out median APE 15.7 % AMD / 14.9 % NVIDIA, against
  15.1 / 14.6 without it, both before the power exponent). The v6.0 NVIDIA fold
  (DeepSeek's roughly 2x gain) stays the largest error until a third round pairs those
  workloads.
* **Scope**: scenarios whose rules allow speculative decoding (DeepSeek-R1 Interactive,
  3 rows today) are neither fitted nor scored: one decode step emits one token per
  sequence in this model.
* **The calibrated model** uses each accelerator's latest-round factor as above (today's
  software); announced parts use their vendor's newest generation's factor. A latency-
  bounded query uses the Server scale.
* **Validation** uses four schemes, each fold predicting with exactly the rule above
  (nothing from the held-out rows: drift, power exponent, factors and scales are refitted
  per fold, the compute ratio too): leave one **round** out (issue 4's definition and the
  headline: median APE 8.6 % AMD / 10.4 % NVIDIA, AMD/NVIDIA ratio 8.9 %, 2026-12-06),
  leave one vendor x **workload** out (8.0 % / 8.7 %, ratio 14.5 %), leave one
  **accelerator** out (its factor from sister parts of its vendor x generation; 9.2 % /
  10.4 %, ratio 12.2 %), and leave one system out (round, submitter, system; 3.1 % /
  5.2 %, ratio 7.7 %). A held-out row
  whose benchmark has no calibration data in its fold (gpt-oss-120b, first run in v6.0:
  21 rows when v6.0 is held out) is **not predicted** (NaN, ``workload_fallback`` =
  :data:`NO_WORKLOAD_DATA`) and counted as ``unpredicted`` by ``validation_summary``: the
  family scale borrowed from other models missed those rows by 5-6x, a guess rather than
  a calibrated prediction, so scoring it would measure the guess, and dropping it silently
  would hide it. ``validation_fallbacks`` counts the factor level each held-out prediction
  used. A fold whose training rows hold no llama2-70b of a vendor (the vendor x workload
  holdout of the reference) levels that vendor only through **bridge workloads** another
  vendor ran (mixtral, gpt-oss-120b) at that vendor's measured scale; its own workload and
  latency-mode deviations are then unidentifiable and left at the pooled values, and its
  rows of workloads only it ran set no level (their scale and the level would trade off
  freely). Likewise a precision class's scale is read only inside groups that also hold
  native rows. The precision re-read of a software stack (:func:`implied_efficiency`) is
  decided per fold from the fold's training rows. ``key_results`` reports the round
  scheme as ``mlperf_mape_*``, with the
  accelerator and system schemes alongside. The implied efficiencies and model terms of
  every MLPerf row are computed once; each fold only refits the medians (vectorized group
  medians) and predicts its rows.
* **Latency tiers** bound TPOT (the article's "latency targets") and TTFT per the
  scenario; the tightest tier first. ``gpus_per_replica`` is the *maximum* tensor-parallel
  degree (one server): per tier and accelerator the best of TP 1/2/4/8 (within it) that
  fits and meets the bounds is chosen, as an operator would run several small replicas in
  one server when that serves more tokens per GPU. Winners are chosen among shipping
  parts only.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from analysis import data, params
from analysis.inference import deployment_fit, deployments
from analysis.inference.benchmarks import (
    BENCHMARKS,
    GPT_OSS_CONF_URL,
    MLPERF_CONF_URL,
    MLPERF_REPO_URL,
    BenchmarkDef,
    _readme,
    benchmark_def,
    benchmark_for_model,
    benchmark_table,
)
from analysis.inference.calibration import (
    ACCELERATOR_PRIOR_ROWS,
    FACTOR_LEVELS,
    PRECISION_PRIOR_ROWS,
    REFERENCE_BENCHMARK,
    SCENARIO_PRIOR_ROWS,
    WORKLOAD_PRIOR_ROWS,
    Calibration,
    _calibration,
    _default_implied,
    _fit_arrays,
    _log_power_rel,
    default_calibration,
    fit_calibration,
    fit_efficiency,
    power_reference,
    row_compute_ratio,
    row_power_w,
    rows_at_compute_ratio,
    usable_rows,
)
from analysis.inference.compute_ratio import ComputeScales, scaled_time
from analysis.inference.deployment_fit import DeploymentCalibration
from analysis.inference.deployments import (
    Factors,
    Layout,
    Request,
    apply_to_tiers,
    deployment_note,
    rack_scale_table,
)
from analysis.inference.experts import (
    chunked_expert_reads,
    ep_imbalance,
    expert_imbalance,
    expert_touched_fraction,
)
from analysis.inference.implied import (
    _HW_KEYS,
    _ROW_TERM_KEYS,
    POWER_CAP_PATTERN,
    _bounds_of,
    _candidates_ok,
    _dedupe_mlperf,
    _mlperf_grid,
    _needed_eta,
    _predict_one,
    _predict_terms,
    _row_inputs,
    _row_terms,
    _solve_rows,
    _terms_for_rows,
    _tp_options,
    implied_efficiency,
    stated_power_cap,
)
from analysis.inference.paired_effects import (
    DRIFT_PRIOR_PAIRS,
    POWER_PRIOR_EXPONENT,
    POWER_PRIOR_PAIRS,
    _drift_per_round,
    _paired_slopes,
    _power_exponent,
    _release_index,
    _round_key,
)
from analysis.inference.roofline import (
    ACT_BYTES,
    ALLREDUCE_LATENCY_S,
    BYTES_PER_PARAM,
    CONCURRENCY,
    ETA_BRACKET,
    ETA_PLAUSIBLE_MAX,
    GENERATION,
    GENERATION_ORDER,
    KV_BYTES,
    MEMORY_USABLE_FRACTION,
    MLPERF_TP,
    P99_Z,
    PEAK_COLUMN,
    PRECISION_CLASSES,
    PREFILL_CHUNK_TOKENS,
    ROOFLINE_SHAPE,
    SAME_NODE_RATE_PER_WATT_GAIN,
    SCENARIOS,
    STEP_OVERHEAD_S,
    Deployment,
    Prepared,
    ServingShape,
    Workload,
    _apply_eta,
    _best,
    _check_precision,
    _codes,
    _generation,
    _group_median,
    _kv_split,
    _lookup,
    _median,
    _models,
    _num,
    _specs,
    _supports,
    _terms,
    hardware_params_at,
    model_params,
    model_params_for,
    precision_class,
    serving_metrics,
    shared_weight_bytes,
    sustained_tflops,
)
from analysis.inference.serving import (
    _check_fit,
    _check_request,
    _deployment,
    _frontier,
    _prepare,
    _replica_metrics,
    _serving_eta,
    best_deployment,
    frontier,
    max_throughput_per_gpu,
    memory_headroom,
    predict_mlperf,
    sweep,
    tp_choices,
)
from analysis.inference.shape import (
    default_shape,
    hardware_params,
)
from analysis.inference.tables import (
    drift_pairs_table,
    efficiency_table,
    efficiency_trend,
    power_cap_runs,
    power_table,
)
from analysis.inference.tier_checks import tier_uncertainty
from analysis.inference.tiers import (
    MAPE_TARGET_PCT,
    _envelope,
    evaluate_tiers,
    frontiers,
    key_results,
    tier_bands,
    tier_winners,
    validation_verdict,
)
from analysis.inference.uncertainty import case_note, case_sigmas, prediction_cases
from analysis.inference.validation import (
    HOLDOUT_SCHEMES,
    NO_WORKLOAD_DATA,
    PARTNER_SCHEMES,
    RATIO_PAIR_KEYS,
    REPORTED_SCHEMES,
    HoldoutValidation,
    _row_etas,
    predicted_rows,
    ratio_pairs,
    same_fold_ratio_pairs,
    validate_against_mlperf,
    validation_breakdown,
    validation_fallbacks,
    validation_summaries,
    validation_summary,
)


def _cold_calibration() -> Calibration:
    """Calibration from scratch: tables re-read and validated, efficiencies re-solved."""
    data.clear_cache()
    return default_calibration()


def sweep_configurations(n: int = 10_000, calibration: Calibration | None = None) -> int:
    """Evaluate ``n`` serving configurations (``make bench``): sweeps at several lengths.

    Each :func:`sweep` call covers every accelerator x model x precision x 256
    concurrencies; lengths are repeated until ``n`` configurations (rows of the sweep,
    memory-feasible or not) are evaluated. Returns the number evaluated.
    """
    done = 0
    for isl, osl in ((1024, 1024), (8192, 1024), (1024, 8192), (2048, 256)) * 100:
        done += len(sweep(isl=isl, osl=osl, calibration=calibration))
        if done >= n:
            break
    return done


def _cold_tiers() -> pd.DataFrame:
    """``evaluate_tiers`` on the default scenario as another chapter's kernel runs it."""
    _cold_calibration()
    return evaluate_tiers(params.scenario_from_parameters({}))


def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """Speed targets for ``make bench``.

    The full sweep must take under a second; a cold calibration (tables read, every MLPerf
    row solved, medians fitted) under 2 s and a cold ``evaluate_tiers`` (what the TCO
    chapter's kernel pays) under 1.75 s; leave-one-system-out validation under 10 s, the
    round and accelerator schemes (a few folds each) under 1 and 1.5 s. The calibration
    and each fold fit the compute ratio (:mod:`~analysis.inference.compute_ratio`: about
    five rounds of re-solving the rows and refitting; a fold reads the rows' efficiencies
    from one table per inputs), so a fold costs about five fits where it cost one (the
    targets were 1.5 s for the cold tiers, 1.5 / 0.5 / 0.5 s for the schemes, before
    2026-12-06).
    """
    cal = default_calibration()
    sc = params.scenario_from_parameters({})
    return [
        (
            "inference: full sweep (acc x model x precision x 256 concurrency)",
            lambda: sweep(isl=2048, osl=256, calibration=cal),
            1.0,
        ),
        (
            "inference: one max_throughput_per_gpu",
            lambda: max_throughput_per_gpu(
                "H200",
                "llama2-70b",
                precision="fp8",
                isl=2048,
                osl=256,
                tpot_ms=50,
                calibration=cal,
            ),
            0.05,
        ),
        (
            "inference: calibration (cold: tables, InferenceX shape fit, implied efficiencies, "
            "fit)",
            _cold_calibration,
            2.0,
        ),
        (
            "inference: 10,000-configuration sweep (acc x model x precision x concurrency)",
            lambda: sweep_configurations(10_000, calibration=cal),
            1.0,
        ),
        (
            "inference: evaluate_tiers, default scenario (cold, incl. calibration)",
            _cold_tiers,
            1.75,
        ),
        (
            "inference: evaluate_tiers, default scenario (calibrated)",
            lambda: evaluate_tiers(sc, calibration=cal),
            0.3,
        ),
        (
            "inference: leave-one-system-out validation (efficiencies cached)",
            lambda: validate_against_mlperf("system"),
            10.0,
        ),
        (
            "inference: leave-one-round-out validation (efficiencies cached)",
            lambda: validate_against_mlperf("round"),
            1.0,
        ),
        (
            "inference: leave-one-accelerator-out validation (efficiencies cached)",
            lambda: validate_against_mlperf("accelerator"),
            1.5,
        ),
    ]


__all__ = [
    "ACCELERATOR_PRIOR_ROWS",
    "ACT_BYTES",
    "ALLREDUCE_LATENCY_S",
    "BENCHMARKS",
    "BYTES_PER_PARAM",
    "CONCURRENCY",
    "DRIFT_PRIOR_PAIRS",
    "ETA_BRACKET",
    "ETA_PLAUSIBLE_MAX",
    "FACTOR_LEVELS",
    "GENERATION",
    "GENERATION_ORDER",
    "GPT_OSS_CONF_URL",
    "HOLDOUT_SCHEMES",
    "KV_BYTES",
    "MAPE_TARGET_PCT",
    "MEMORY_USABLE_FRACTION",
    "MLPERF_CONF_URL",
    "MLPERF_REPO_URL",
    "MLPERF_TP",
    "NO_WORKLOAD_DATA",
    "P99_Z",
    "PEAK_COLUMN",
    "POWER_CAP_PATTERN",
    "POWER_PRIOR_EXPONENT",
    "POWER_PRIOR_PAIRS",
    "PRECISION_CLASSES",
    "PRECISION_PRIOR_ROWS",
    "PREFILL_CHUNK_TOKENS",
    "PARTNER_SCHEMES",
    "RATIO_PAIR_KEYS",
    "REFERENCE_BENCHMARK",
    "REPORTED_SCHEMES",
    "ROOFLINE_SHAPE",
    "SAME_NODE_RATE_PER_WATT_GAIN",
    "SCENARIOS",
    "SCENARIO_PRIOR_ROWS",
    "STEP_OVERHEAD_S",
    "WORKLOAD_PRIOR_ROWS",
    "_HW_KEYS",
    "_ROW_TERM_KEYS",
    "BenchmarkDef",
    "Calibration",
    "ComputeScales",
    "Deployment",
    "DeploymentCalibration",
    "Factors",
    "HoldoutValidation",
    "Layout",
    "Prepared",
    "Request",
    "ServingShape",
    "Workload",
    "_apply_eta",
    "_best",
    "_bounds_of",
    "_calibration",
    "_candidates_ok",
    "_check_fit",
    "_check_precision",
    "_check_request",
    "_codes",
    "_cold_calibration",
    "_cold_tiers",
    "_dedupe_mlperf",
    "_default_implied",
    "_deployment",
    "_drift_per_round",
    "_envelope",
    "_fit_arrays",
    "_frontier",
    "_generation",
    "_group_median",
    "_kv_split",
    "_log_power_rel",
    "_lookup",
    "_median",
    "_mlperf_grid",
    "_models",
    "_needed_eta",
    "_num",
    "_paired_slopes",
    "_power_exponent",
    "_predict_one",
    "_predict_terms",
    "_prepare",
    "_readme",
    "_release_index",
    "_replica_metrics",
    "_round_key",
    "_row_etas",
    "_row_inputs",
    "_row_terms",
    "_serving_eta",
    "_solve_rows",
    "_specs",
    "_supports",
    "_terms",
    "_terms_for_rows",
    "_tp_options",
    "apply_to_tiers",
    "bench_cases",
    "benchmark_def",
    "benchmark_for_model",
    "benchmark_table",
    "best_deployment",
    "case_note",
    "case_sigmas",
    "chunked_expert_reads",
    "default_calibration",
    "default_shape",
    "deployment_fit",
    "deployment_note",
    "deployments",
    "drift_pairs_table",
    "efficiency_table",
    "efficiency_trend",
    "ep_imbalance",
    "expert_imbalance",
    "evaluate_tiers",
    "expert_touched_fraction",
    "fit_calibration",
    "fit_efficiency",
    "frontier",
    "frontiers",
    "hardware_params",
    "hardware_params_at",
    "implied_efficiency",
    "key_results",
    "max_throughput_per_gpu",
    "memory_headroom",
    "model_params",
    "model_params_for",
    "power_cap_runs",
    "power_reference",
    "power_table",
    "precision_class",
    "predict_mlperf",
    "predicted_rows",
    "prediction_cases",
    "rack_scale_table",
    "ratio_pairs",
    "same_fold_ratio_pairs",
    "row_compute_ratio",
    "row_power_w",
    "rows_at_compute_ratio",
    "scaled_time",
    "serving_metrics",
    "shared_weight_bytes",
    "stated_power_cap",
    "sustained_tflops",
    "sweep",
    "sweep_configurations",
    "tier_bands",
    "tier_uncertainty",
    "tier_winners",
    "tp_choices",
    "usable_rows",
    "validate_against_mlperf",
    "validation_breakdown",
    "validation_fallbacks",
    "validation_summaries",
    "validation_summary",
    "validation_verdict",
]
