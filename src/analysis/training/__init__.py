"""Training: step-time and scaling model, calibration, validation, time and cost to train.

A package of focused modules (``from analysis import training`` re-exports every name):

* :mod:`~analysis.training.model`: constants (cited; judgements registered in
  ``data/assumptions/assumptions.csv``), MLPerf benchmark definitions, spec and model
  lookups, work per token (PaLM accounting: ``6 N_active + 12 L d_attn s``; ``4 N`` for
  LoRA's frozen base; MFU is model FLOPs over peak at the training precision).
* :mod:`~analysis.training.step`: the vectorized step-time model over layouts x GPU counts
  (TP, interleaved PP, CP, DP with ZeRO-1/FSDP, selective/full recomputation, EP for MoE
  over scale-up or scale-out; exposed collectives, bubble, per-collective latency,
  optimizer, and the MoE kernel term: grouped-GEMM weight reads at the per-expert token
  count as a roofline, and token permutation traffic). The efficiency (fraction of peak the
  GEMMs reach when nothing waits) is the only fitted number.
* :mod:`~analysis.training.mlperf`: MLPerf Training rows with each run's logged batch and
  steady training rate (a batch policy where no log was read), tokens to converge from the
  reference convergence points, per accelerator x benchmark fits and predictions.
* :mod:`~analysis.training.calibration`: per-row efficiencies of every MLPerf and published
  pre-training row, pooled part -> vendor x generation -> vendor -> all and shrunk;
  precision factors from each part's own peaks and the vendor's measured compute-term
  speedup (dense pairs first).
* :mod:`~analysis.training.speedups`: the measured precision speedups (published pairs of
  one recipe at two precisions, compute term only).
* :mod:`~analysis.training.validation`: out-of-sample schemes (MLPerf leave one vendor x
  benchmark out, one GPU count out, one round out; published rows leave one source out;
  the MLPerf Training v5.1 rows, a round no fit reads) and the AMD/NVIDIA ratio error.
* :mod:`~analysis.training.scaling`: ``throughput_per_gpu`` / ``throughput_details``
  (public contract), the scaling curves and ``scaling_efficiency`` (public contract: capped
  at 1 against the one-node baseline), weak and strong scaling uncapped against an
  unconstrained per-GPU reference with the limiting term named.
* :mod:`~analysis.training.scenario`: the scenario's job (evaluation, winner, what-ifs,
  key results).

This ``__init__`` is the facade: the one module of the package that imports
:mod:`analysis.data` (which registers the default inputs the submodules resolve) and holds
the ``make bench`` cases.
"""

from __future__ import annotations

from collections.abc import Callable

from analysis import data, ids, params
from analysis.training.calibration import (
    _EVAL_KEYS,
    _FIT_POINTS_V2,
    _FIT_ROUNDS_V2,
    KINDS,
    MOE_LEVEL_WEIGHT,
    OTHER_KIND_WEIGHT,
    SHRINK_CELLS,
    SPILL_WEIGHT,
    _fitted_cached,
    _fp8_equivalent,
    _load_published,
    _predict_tps,
    dominated_siblings,
    estimate_efficiency,
    expert_gemm_size,
    fit_row_efficiencies,
    fitted_observations,
    generation_of,
    precision_factor,
    predict_mlperf,
    pretrain_efficiency,
    resolve_efficiency,
    training_observations,
    workload_effects,
)
from analysis.training.mlperf import (
    _FIT_POINTS,
    _FIT_ROUNDS,
    _fit_efficiencies,
    _fit_one,
    _fits_cached,
    _mlperf_layouts,
    _mlperf_minutes,
    _precision_factor,
    fit_efficiencies,
    mlperf_batch_size,
    mlperf_rows,
    mlperf_tokens,
    one_rate_basis,
    overall_error,
    validate_against_mlperf,
    validation_detail,
    validation_summary,
)
from analysis.training.model import (
    ACT_BYTES_FULL,
    ACT_BYTES_SELECTIVE,
    BENCHMARKS,
    BYTES_GRAD,
    BYTES_OPTIM,
    BYTES_WEIGHT,
    COLLECTIVE_LATENCY_OUT_S,
    COLLECTIVE_LATENCY_UP_S,
    CP_CHOICES,
    CURVE_GPU_COUNTS,
    DP_BUCKET_BYTES,
    DP_OVERLAP,
    FP4_OVER_FP8_SPEEDUP,
    FP8_OVER_BF16_SPEEDUP,
    GPT3_ARCH,
    LINK_EFFICIENCY,
    LORA_TRAINABLE_FRACTION,
    MAX_EFFICIENCY,
    MIN_CP_CHUNK_TOKENS,
    MLPERF_PRECISION,
    MOE_PERMUTE_PASSES,
    NODE_GPUS,
    OPTIMIZER_BYTES_PER_PARAM,
    PP_CHOICES,
    PP_INTERLEAVE,
    PRECISION_BYTES,
    PRETRAIN_BENCHMARKS,
    PROXY,
    RECOMPUTE_CHOICES,
    REFERENCE_MICROBATCHES,
    STEP_OVERHEAD_S,
    TP_CHOICES,
    USABLE_MEMORY_FRACTION,
    ZERO_CHOICES,
    Benchmark,
    _benchmark,
    _check_precision,
    _first_row,
    _load_mlperf,
    _load_models,
    _load_specs,
    _memo,
    _model_arch,
    flops_per_token,
    model_arch,
    peak_tflops,
    spec_row,
)
from analysis.training.scaling import (
    LIMIT_TERMS,
    _apply_overrides,
    _baseline_counts,
    _limit_names,
    cost_to_train_usd,
    gpu_hours,
    reference_throughput,
    scaling_curve,
    scaling_efficiency,
    scaling_study,
    throughput_details,
    throughput_per_gpu,
    time_to_train_hours,
)
from analysis.training.scenario import (
    WHAT_IFS,
    evaluate_training,
    key_results,
    scaling_curves,
    scaling_studies,
    throughput_ratio_table,
    training_winner,
    what_if_matrix,
    what_if_table,
)
from analysis.training.speedups import AMD_FP8_SPEEDUP_RELATIVE, measured_speedups
from analysis.training.step import (
    _as_float,
    _layouts,
    activation_bytes_per_token,
    evaluate_layouts,
    ffn_width,
    layout_label,
)
from analysis.training.sustained import die_of, sustained_factor, sustained_factors
from analysis.training.validation import (
    FORWARD_SCHEME,
    ROUND_SCHEME,
    VALIDATION_SCHEMES,
    forward_predictions,
    forward_summary,
    gpu_count_summary,
    holdout_observations,
    ratio_error_summary,
    ratio_errors,
    validate_training_model,
    validation_scheme_summary,
)


def clear_caches() -> None:
    """Forget the cached calibration and table lookups (benchmarks of cold runs use it).

    They live on the default inputs, so this is :func:`analysis.data.clear_cache`.
    """
    data.clear_cache()


def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """``make bench`` cases: (name, callable, target seconds)."""
    inputs = data.default_inputs()
    sc = params.scenario_from_parameters({})  # params/default.yaml
    specs, models, fits = _load_specs(inputs), _load_models(inputs), _fits_cached(inputs)
    present = set(specs["accelerator"])
    accs = tuple(a for a in ids.ACCELERATORS if a in present)

    def curves_all() -> object:
        return [
            scaling_curve(
                a,
                sc.training.model,
                precision=sc.training.precision,
                specs=specs,
                models=models,
                fits=fits,
                inputs=inputs,
            )
            for a in accs
        ]

    def cold(fn: Callable[[], object]) -> Callable[[], object]:
        # What a fresh chapter kernel pays: calibration and lookups recomputed.
        def run() -> object:
            clear_caches()
            return fn()

        return run

    return [
        ("training: scaling curves, all accelerators x 12 GPU counts", curves_all, 0.5),
        (
            "training: evaluate_training(default scenario)",
            lambda: evaluate_training(sc, specs=specs, models=models, fits=fits, inputs=inputs),
            0.5,
        ),
        # Truly cold: the default inputs are rebuilt, so data loading and the whole
        # calibration are included (passing the captured ``inputs`` would reuse its memo).
        (
            "training: evaluate_training(default scenario), cold (data and calibration included)",
            cold(lambda: evaluate_training(sc)),
            2.0,
        ),
        ("training: fit_efficiencies() (MLPerf calibration), cold", cold(fit_efficiencies), 0.5),
        # v2: per-row fits of every MLPerf and published row, then the hold-out schemes
        # (four refits and the v5.1 forward set)
        ("training: fitted_observations(), cold (v2 calibration)", cold(fitted_observations), 2.0),
        ("training: validate_training_model(), calibration cached", validate_training_model, 2.0),
        (
            "training: validate_against_mlperf(), cold (calibration included)",
            cold(validate_against_mlperf),
            0.5,
        ),
        ("training: validate_against_mlperf(), calibration cached", validate_against_mlperf, 0.2),
        (
            "training: what_if_table(default scenario)",
            lambda: what_if_table(sc, specs=specs, models=models, fits=fits, inputs=inputs),
            0.5,
        ),
    ]


__all__ = [
    "ACT_BYTES_FULL",
    "ACT_BYTES_SELECTIVE",
    "AMD_FP8_SPEEDUP_RELATIVE",
    "BENCHMARKS",
    "BYTES_GRAD",
    "BYTES_OPTIM",
    "BYTES_WEIGHT",
    "Benchmark",
    "COLLECTIVE_LATENCY_OUT_S",
    "COLLECTIVE_LATENCY_UP_S",
    "CP_CHOICES",
    "CURVE_GPU_COUNTS",
    "DP_BUCKET_BYTES",
    "DP_OVERLAP",
    "FP4_OVER_FP8_SPEEDUP",
    "FP8_OVER_BF16_SPEEDUP",
    "GPT3_ARCH",
    "KINDS",
    "LIMIT_TERMS",
    "LINK_EFFICIENCY",
    "LORA_TRAINABLE_FRACTION",
    "MAX_EFFICIENCY",
    "MIN_CP_CHUNK_TOKENS",
    "MLPERF_PRECISION",
    "MOE_PERMUTE_PASSES",
    "NODE_GPUS",
    "OPTIMIZER_BYTES_PER_PARAM",
    "OTHER_KIND_WEIGHT",
    "PP_CHOICES",
    "PP_INTERLEAVE",
    "PRECISION_BYTES",
    "PRETRAIN_BENCHMARKS",
    "PROXY",
    "RECOMPUTE_CHOICES",
    "REFERENCE_MICROBATCHES",
    "SHRINK_CELLS",
    "STEP_OVERHEAD_S",
    "TP_CHOICES",
    "USABLE_MEMORY_FRACTION",
    "FORWARD_SCHEME",
    "ROUND_SCHEME",
    "VALIDATION_SCHEMES",
    "WHAT_IFS",
    "ZERO_CHOICES",
    "_EVAL_KEYS",
    "_FIT_POINTS",
    "_FIT_POINTS_V2",
    "_FIT_ROUNDS",
    "_FIT_ROUNDS_V2",
    "_apply_overrides",
    "_as_float",
    "_baseline_counts",
    "_benchmark",
    "_check_precision",
    "_first_row",
    "_fit_efficiencies",
    "_fit_one",
    "_fits_cached",
    "_fitted_cached",
    "_fp8_equivalent",
    "_layouts",
    "_limit_names",
    "_load_mlperf",
    "_load_models",
    "_load_published",
    "_load_specs",
    "_memo",
    "_mlperf_layouts",
    "_mlperf_minutes",
    "_model_arch",
    "_precision_factor",
    "_predict_tps",
    "activation_bytes_per_token",
    "bench_cases",
    "clear_caches",
    "cost_to_train_usd",
    "dominated_siblings",
    "estimate_efficiency",
    "expert_gemm_size",
    "workload_effects",
    "evaluate_layouts",
    "evaluate_training",
    "ffn_width",
    "fit_efficiencies",
    "fit_row_efficiencies",
    "fitted_observations",
    "flops_per_token",
    "generation_of",
    "die_of",
    "sustained_factor",
    "sustained_factors",
    "MOE_LEVEL_WEIGHT",
    "SPILL_WEIGHT",
    "gpu_hours",
    "key_results",
    "layout_label",
    "measured_speedups",
    "mlperf_batch_size",
    "mlperf_rows",
    "mlperf_tokens",
    "one_rate_basis",
    "model_arch",
    "overall_error",
    "peak_tflops",
    "precision_factor",
    "predict_mlperf",
    "pretrain_efficiency",
    "ratio_error_summary",
    "ratio_errors",
    "reference_throughput",
    "resolve_efficiency",
    "scaling_curve",
    "scaling_curves",
    "scaling_efficiency",
    "scaling_studies",
    "scaling_study",
    "spec_row",
    "throughput_details",
    "throughput_per_gpu",
    "throughput_ratio_table",
    "time_to_train_hours",
    "training_observations",
    "training_winner",
    "validate_against_mlperf",
    "validate_training_model",
    "validation_detail",
    "forward_predictions",
    "forward_summary",
    "gpu_count_summary",
    "holdout_observations",
    "validation_scheme_summary",
    "validation_summary",
    "what_if_matrix",
    "what_if_table",
]
