"""``python -m analysis validate-models``: the models' out-of-sample error.

Prints, for the inference and the training model, the held-out predictions' error summary
per vendor and overall against MLPerf (the same tables the chapters show), and against the
InferenceX sweeps for both the report's serving model (what the tiers use) and the sweep
model (a validated candidate the tiers do not use), each table named by its model, so a
reviewer can check the figures the report quotes without rendering it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from rich.console import Console
from rich.table import Table

__all__ = [
    "print_inferencex_validation",
    "print_model_validation",
    "print_public_path_validation",
    "print_published_checks",
    "print_training_validation",
]


def _print_frame(console: Console, title: str, df: pd.DataFrame) -> None:
    table = Table(title=title)
    for col in df.columns:
        table.add_column(str(col))
    for row in df.itertuples(index=False):
        table.add_row(*(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row))
    console.print(table)


def print_model_validation(console: Console) -> None:
    """Run both validations and print their summaries."""
    from analysis import inference

    # The report's headline is leave-one-round-out (issue 4); the others sit alongside, in
    # the chapter's order (inference.REPORTED_SCHEMES).
    checks = inference.validation_summaries()
    for scheme, summary in checks.summaries.items():
        label = f"leave one {scheme} out"
        _print_frame(console, f"Inference model vs MLPerf Inference ({label})", summary)
    _print_frame(
        console,
        "Inference model vs MLPerf: AMD/NVIDIA ratio error per scheme, paired across folds "
        "and within a fold (a held-out vendor against the other vendor as the same fold "
        "fits it)",
        checks.ratio_table(),
    )
    print_inferencex_validation(console)
    print_public_path_validation(console)
    _print_frame(
        console,
        "Deployment model vs InferenceX disaggregated DeepSeek-R1 (leave one configuration "
        "out, tokens/s per GPU at the measured concurrency)",
        inference.deployment_fit.validation_summary(inference.deployment_fit.validation()),
    )
    # The other held-out checks a tier's figure can carry (inference.tier_uncertainty).
    for kind, unit, what in (
        ("aggregated", "configuration", "leave one configuration out"),
        ("disaggregated", "cell", "leave one accelerator x precision out"),
        ("aggregated", "cell", "leave one accelerator x precision out"),
    ):
        _print_frame(
            console,
            f"Deployment model vs InferenceX {kind} DeepSeek-R1 ({what}, tokens/s per GPU "
            "at the measured concurrency)",
            inference.deployment_fit.validation_summary(
                inference.deployment_fit.held_out(kind, unit)
            ),
        )
    # training: one GPU-count validation, the scheme table's "leave one GPU count out"
    # (each count refitted without it); the per-benchmark scaling check of chapter 20 is
    # not a validation and is not printed here
    print_training_validation(console)


def print_inferencex_validation(
    console: Console,
    runs: Mapping[str, pd.DataFrame] | None = None,
    fitted: pd.DataFrame | None = None,
) -> None:
    """Both models' InferenceX held-out error, each table named by its model.

    ``runs``: ``{"serving": validate_serving_model(), "sweep": validate_sweep_model()}``
    (computed when None). The report's serving model is the one the tiers use; the sweep
    model is a validated candidate they do not use (``inference_latency.MODEL_LABELS``).
    ``fitted``: the serving model fitted on every point and scored in-sample
    (``fit_serving_model()``, computed when None), printed after the held-out tables.
    """
    from analysis import inference_latency
    from analysis.inference import frontier_validation

    labels = inference_latency.MODEL_LABELS
    if runs is None:
        runs = {
            "serving": inference_latency.validate_serving_model(),
            "sweep": inference_latency.validate_sweep_model(),
        }
    for model, ix in runs.items():
        _print_frame(
            console,
            f"InferenceX DeepSeek-R1 sweeps, {labels[model]}: leave one accelerator x "
            "precision out, throughput at the measured median TPOT",
            inference_latency.summary(ix),
        )
        _print_frame(
            console,
            f"Same folds, {labels[model]}: median TPOT at the measured concurrency",
            inference_latency.tpot_summary(ix),
        )
        ratios = inference_latency.fp8_fp4_ratio(ix)
        _print_frame(
            console,
            f"FP8/FP4 throughput ratio at matched interactivity, {labels[model]}",
            inference_latency.ratio_summary(ratios),
        )
        _print_frame(
            console,
            f"Same ratios, {labels[model]}: its median error beside baselines from the "
            "measurements (the median ratio per accelerator and per configuration, in-sample; "
            "the same configuration's other run dates) (%)",
            inference_latency.ratio_baselines(ratios),
        )
        fronts = frontier_validation.held_out_frontiers(ix)
        _print_frame(
            console,
            f"Same folds, {labels[model]}: error of the held-out frontiers (per cell and TPOT "
            "bound, 15-80 ms, the best measured point and the best prediction over the same "
            "points) and the AMD/NVIDIA ratio of them (overall row; pairs at one precision, "
            "lengths and bound)",
            frontier_validation.summary(fronts),
        )
        _print_frame(
            console,
            f"Same frontiers, {labels[model]}: AMD/NVIDIA ratio per pair of parts",
            frontier_validation.ratio_pair_summary(fronts),
        )
        _print_frame(
            console,
            f"Same folds, {labels[model]}: per held-out cell, signed TPOT error at low "
            f"(<= {inference_latency.LOW_CONC_MAX}) and high "
            f"(>= {inference_latency.HIGH_CONC_MIN}) concurrency (level or slope)",
            inference_latency.cell_summary(ix),
        )
        _print_frame(
            console,
            f"Same folds, {labels[model]}: error budget, the median APE left when each "
            "group's efficiency level is given exactly (what a better level can and cannot "
            "remove)",
            inference_latency.error_budget(ix),
        )
    reference, per_cell = inference_latency.transfer_tables(
        runs["serving"], inference_latency.cross_fold_predictions()
    )
    _print_frame(
        console,
        f"Same folds, {labels['serving']}: transfer reference, each held-out point carried "
        "over from another cell's measured sweep of its engine configuration (within "
        f"{inference_latency.TRANSFER_DAYS} days) times the fold's ratio of the two parts; "
        "the model where none qualifies",
        reference,
    )
    _print_frame(
        console,
        "Same transfers per held-out cell: each predictor's median APE on the cell (%)",
        per_cell,
    )
    if fitted is None:
        fitted = inference_latency.fit_serving_model()
    _print_frame(
        console,
        f"InferenceX, {labels['serving']} fitted on every point and scored on the same "
        "points (in-sample: what holding cells out is measured against)",
        inference_latency.summary(fitted),
    )
    fronts = frontier_validation.held_out_frontiers(fitted)
    _print_frame(
        console,
        "Same fit: error of its frontiers (per cell and TPOT bound, as held out above) and "
        "the AMD/NVIDIA ratio of them (overall row)",
        frontier_validation.summary(fronts),
    )
    _print_frame(
        console,
        "Same fit: AMD/NVIDIA ratio of its frontiers per pair of parts",
        frontier_validation.ratio_pair_summary(fronts),
    )
    _print_frame(
        console,
        "Same fit: FP8/FP4 throughput ratio at matched interactivity",
        inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(fitted)),
    )
    _print_frame(
        console,
        "Same fit: error budget, the median APE left when each group's efficiency level is "
        "given exactly",
        inference_latency.error_budget(fitted),
    )
    _print_frame(
        console,
        "InferenceX measured prefill rate (a measurement no model reads): two-point TTFT "
        f"at concurrency <= {inference_latency.PREFILL_CONC_MAX}, 1k and 8k prompts, per "
        "GPU and as a fraction of the format's dense peak",
        inference_latency.measured_prefill_rates(),
    )
    repeat = inference_latency.date_repeatability()
    _print_frame(
        console,
        "InferenceX date-to-date repeatability (a reference, not a bound): each point "
        "predicted by its own configuration's other dates, throughput at the measured "
        "median TPOT (points outside the other dates' range: unpredicted)",
        inference_latency.summary(repeat),
    )
    _print_frame(
        console,
        "Same reference: median TPOT at the measured concurrency",
        inference_latency.tpot_summary(repeat),
    )
    _print_frame(
        console,
        "InferenceX held-out error, both models (the tiers use the report's serving model)",
        inference_latency.compare_models(runs["serving"], runs["sweep"]).drop(columns="model"),
    )


def print_public_path_validation(console: Console) -> None:
    """The report's serving path (what the tiers and ``max_throughput_per_gpu`` compute).

    Against InferenceX's measured frontiers of recent runs, per TPOT bound
    (:mod:`analysis.inference.frontier_validation`): per vendor, overall and the
    AMD/NVIDIA ratio, then per cell.
    """
    from analysis.inference import frontier_validation as fv

    df = fv.validate_public_path()
    _print_frame(
        console,
        "Report's serving path (MLPerf-calibrated efficiency, report layout) vs InferenceX "
        f"measured frontiers (last {fv.RECENT_DAYS} days of runs per cell), best tokens/s "
        f"per GPU at median TPOT <= {', '.join(f'{b:g}' for b in fv.TPOT_BOUNDS_MS)} ms",
        fv.summary(df),
    )
    _print_frame(console, "Same check, per cell", fv.cell_summary(df))
    print_published_checks(console)


def print_published_checks(console: Console) -> None:
    """The report's path against InferenceX's published pages (Llama 3.3 70B, gpt-oss-120b).

    :mod:`analysis.inference.published_checks`: each point, then the FP8/FP4 and
    AMD/NVIDIA ratios at matched interactivity.
    """
    from analysis.inference import published_checks as pc

    df = pc.published_checks()
    _print_frame(
        console,
        "Report's serving path vs InferenceX published pages (a check set no fit reads; "
        "output tokens/s per GPU at the page's interactivity; NaN: format refused)",
        df.drop(columns=["source_id", "isl", "osl", "tpot_ms"]),
    )
    _print_frame(console, "Same pages: FP8/FP4 at matched interactivity", pc.precision_ratios(df))
    _print_frame(console, "Same pages: AMD/NVIDIA at matched interactivity", pc.vendor_ratios(df))


def print_training_validation(console: Console) -> None:
    """The training model's out-of-sample schemes (issue 13): per scheme and vendor, ratio."""
    from analysis import training

    pred = training.validate_training_model()
    _print_frame(
        console,
        "Training model: out-of-sample error of tokens/s per GPU, per scheme and vendor",
        training.validation_scheme_summary(pred),
    )
    _print_frame(
        console,
        "Training model: AMD/NVIDIA throughput ratio error on matched pairs "
        "(MLPerf and published), per scheme",
        training.ratio_error_summary(training.ratio_errors(pred)),
    )
    _print_frame(
        console,
        f"Training model: {training.FORWARD_SCHEME} (fitted on MLPerf v4.0-v5.0 and the "
        "published tables), per vendor and AMD/NVIDIA ratio",
        training.forward_summary(pred),
    )
    _print_frame(
        console,
        "Training model: each MLPerf v5.1 row predicted (tokens/s per GPU)",
        training.forward_predictions(pred),
    )
