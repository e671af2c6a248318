"""Outputs described like inputs: one registry of the columns the report's tables show.

:data:`OUTPUT_FIELDS` maps an output column name (``tokens_per_s_per_gpu``,
``cost_per_mtok_usd``, ``tpot_ms`` ...) to its :class:`Field`: the label a reader sees,
its unit and the decimals it is shown with. :func:`analysis.charts.table` reads it, so a
column is labelled and rounded the same way in every chapter; a table passes ``labels=``
(or ``columns=`` as a dict) and ``decimals=`` only where it means something else.

Analytical decisions taken here:

* The header is ``"<label> (<unit>)"``; a label that already says its unit in words
  ("Tokens/s per GPU") has an empty unit.
* ``decimals=None`` means "by magnitude" (:func:`analysis.charts.table`'s default); a
  column shown with different precisions in different tables (a ratio at 2 decimals here,
  3 there) keeps its per-table ``decimals=`` override.
* A column that is not here falls back to :func:`analysis.charts.human_header` (its unit
  suffix becomes "(unit)"); a test checks that no chapter table shows a raw snake_case
  name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """How one output column is shown: label, unit and decimals (None: by magnitude)."""

    label: str
    unit: str = ""
    decimals: int | None = None

    @property
    def header(self) -> str:
        """The column header: the label with the unit in parentheses.

        >>> Field("TPOT", "ms", 1).header, Field("Tokens/s per GPU", "", 0).header
        ('TPOT (ms)', 'Tokens/s per GPU')
        """
        return f"{self.label} ({self.unit})" if self.unit else self.label


def header_of(name: str) -> str | None:
    """The registry's header for column ``name`` (None: not in the registry)."""
    field = OUTPUT_FIELDS.get(name)
    return field.header if field else None


def title(name: str) -> str:
    """The header of a registered column, for chart axes and tooltips (KeyError if absent).

    >>> title("tokens_per_s_per_gpu")
    'Tokens/s per GPU'
    """
    return OUTPUT_FIELDS[name].header


def decimals_of(name: str) -> int | None:
    """The registry's decimals for column ``name`` (None: by magnitude or not registered)."""
    field = OUTPUT_FIELDS.get(name)
    return field.decimals if field else None


# The registry is a table, one column per line: the formatter leaves it as written.
# fmt: off
OUTPUT_FIELDS: Mapping[str, Field] = {
    "accelerator": Field("Accelerator", "", None),
    "active_experts": Field("Active experts", "", None),
    "active_params_b": Field("Active", "B", 1),
    "amd": Field("AMD", "", None),
    "amd_best": Field("AMD best", "", None),
    "amd_cost": Field("AMD median", "", 3),
    "amd_cost_p05": Field("AMD p5", "", 3),
    "amd_cost_p95": Field("AMD p95", "", 3),
    "amd_gpu_hour_usd": Field("All-in now", "USD/GPU-h", 2),
    "amd_owned_gpu_hour_usd": Field("AMD owned", "USD/GPU-h", 3),
    "amd_porting_per_gpu_hour_usd": Field("AMD porting", "USD/GPU-h", 3),
    "amd_price_per_gpu_usd": Field("AMD price per GPU", "USD", None),
    "amd_rent_median_usd": Field("AMD rent", "USD/GPU-h", 3),
    "architecture": Field("Architecture", "", None),
    "assumption_id": Field("Assumption", "", None),
    "attention_heads": Field("Heads", "", None),
    "attention_type": Field("Attention", "", None),
    "basis": Field("Basis", "", None),
    "benchmark": Field("Benchmark", "", None),
    "bf16_dense_tflops": Field("BF16 dense", "TFLOPS", None),
    "breakeven_amd_gpu_hour_usd": Field("Break-even all-in", "USD/GPU-h", 2),
    "breakeven_rel_throughput": Field("Break-even throughput", "x model", 2),
    "breakeven_rental_quote_usd": Field("Break-even quote", "USD/GPU-h", 2),
    "breakeven_server_price_usd": Field("Break-even server price", "USD", 0),
    "change_pct": Field("Change", "%", None),
    "chapter": Field("Chapter", "", None),
    "cheapest": Field("Cheapest", "", None),
    "cheapest_amd": Field("Cheapest AMD", "", None),
    "cheapest_measured": Field("Cheapest", "with yours", None),
    "cheapest_nvidia": Field("Cheapest NVIDIA", "", None),
    "cheapest_public": Field("Cheapest", "public data", None),
    "claim": Field("What the article says", "", None),
    "claim_id": Field("Claim", "", None),
    "claimed": Field("Claimed", "", None),
    "concurrency": Field("Concurrency", "", 0),
    "context_length": Field("Context", "tokens", None),
    "correction": Field("Correction", "", 3),
    "cost_margin_pct": Field("Cost margin", "%", 0),
    "cost_per_mtok": Field("Median", "USD/M tokens", 3),
    "cost_per_mtok_p05": Field("p5", "USD/M tokens", 3),
    "cost_per_mtok_p95": Field("p95", "USD/M tokens", 3),
    "cost_per_mtok_point": Field("Point", "USD/M tokens", 3),
    "cost_per_mtok_usd": Field("Cost", "USD/M tokens", 3),
    "cost_ratio": Field("AMD/NVIDIA cost", "", 2),
    "cost_ratio_p05": Field("Ratio p5", "", 2),
    "cost_ratio_p95": Field("Ratio p95", "", 2),
    "current": Field("Current", "", None),
    "current_rental_quote_usd": Field("Quote now", "USD/GPU-h", 2),
    "current_server_price_usd": Field("Server price now", "USD", 0),
    "data_sources": Field("Sources", "", None),
    "derived": Field("Derived", "", None),
    "diff_high": Field("Difference at high", "USD/M tokens", 4),
    "diff_low": Field("Difference at low", "USD/M tokens", 4),
    "efficiency": Field("Efficiency", "", 3),
    "efficiency_vs_reference": Field("Efficiency vs reference", "", None),
    "elasticity": Field("Elasticity", "", 2),
    "estimate": Field("Estimate", "", None),
    "eta": Field("Fraction of roofline", "", None),
    "evidence": Field("Evidence", "", None),
    "experts": Field("Experts", "", None),
    "factor": Field("Efficiency multiplier", "", 3),
    "feasible": Field("Feasible", "", None),
    "field": Field("Field", "", None),
    "flipped": Field("Flipped", "", None),
    "fp4_dense_tflops": Field("FP4 dense", "TFLOPS", None),
    "fp8_dense_tflops": Field("FP8 dense", "TFLOPS", None),
    "generation": Field("Generation", "", None),
    "gpu_hour_usd": Field("GPU-hour", "USD", 2),
    "gpu_hour_usd_p05": Field("p5", "USD/GPU-h", None),
    "gpu_hour_usd_p95": Field("p95", "USD/GPU-h", None),
    "gpu_hours": Field("GPU-hours", "", 0),
    "group": Field("Group", "", None),
    "hardware_discount_pct": Field("Hardware discount", "%", 1),
    "hardware_saving_per_gpu_hour_usd": Field("AMD hardware saving", "USD/GPU-h", 3),
    "hidden_costs_exceed_gap": Field("Porting exceeds saving", "", None),
    "hidden_size": Field("Hidden", "", None),
    "high": Field("High", "", None),
    "infeasible": Field("Cannot meet the tier", "", None),
    "input": Field("Input", "", None),
    "instance": Field("Instance", "", None),
    "interactive_tpot_ms": Field("Interactive TPOT", "ms", None),
    "interactive_ttft_ms": Field("Interactive TTFT", "ms", None),
    "isl_mean": Field("Mean input", "tokens", None),
    "isl_tokens": Field("Input", "tokens", 0),
    "isl_verified": Field("Input length cited", "", None),
    "item": Field("Item", "", None),
    "joules_per_token": Field("J per output token", "", 3),
    "key": Field("Key figure", "", None),
    "kind": Field("Kind of source", "", None),
    "kv_heads": Field("KV heads", "", None),
    "kv_kib_per_token": Field("KV cache BF16", "KiB/token", 1),
    "kv_window_mib": Field("KV window", "MiB/seq.", 1),
    "label": Field("Workload", "", None),
    "launch_year": Field("Launch", "", 0),
    "layers": Field("Layers", "", None),
    "layout": Field("Layout", "", None),
    "level": Field("Level", "", None),
    "limit": Field("Limiting term", "", None),
    "line": Field("Line", "", None),
    "low": Field("Low", "", None),
    "margin_pct": Field("Margin", "%", 1),
    "measure": Field("Measure", "", None),
    "measured": Field("Tokens/s per accelerator", "", 0),
    "measured_min": Field("Measured", "min", 2),
    "measured_tok_s_gpu": Field("Measured tokens/s per GPU", "", 0),
    "median_abs_err_pct": Field("Median abs. error", "%", None),
    "median_abs_ratio_err_pct": Field("Median abs. ratio error", "%", None),
    "median_ape_pct": Field("Median APE", "%", None),
    "median_err_pct": Field("Median signed error", "%", None),
    "median_ratio_err_pct": Field("Median signed ratio error", "%", None),
    "median_signed_pct": Field("Median signed error", "%", None),
    "median_tpot_ms": Field("Median TPOT", "ms", 1),
    "memory_bw_tbps": Field("HBM bandwidth", "TB/s", None),
    "memory_gb": Field("HBM", "GB", None),
    "memory_gb_per_kw": Field("HBM per kW", "GB/kW", None),
    "mfu": Field("MFU", "", 3),
    "mfu_source": Field("Efficiency from", "", None),
    "mode": Field("Scaling", "", None),
    "model": Field("Model", "", None),
    "model_error_pct": Field("Model error", "%", 0),
    "modelled_tok_s_gpu": Field("Model tokens/s per GPU", "", 0),
    "n": Field("Held-out rows", "", 0),
    "n_gpus": Field("GPUs", "", None),
    "n_quotes": Field("Quotes", "", None),
    "n_submissions": Field("Submissions", "", None),
    "note": Field("How it was set", "", None),
    "nvidia": Field("NVIDIA", "", None),
    "nvidia_best": Field("NVIDIA best", "", None),
    "nvidia_cost": Field("NVIDIA median", "", 3),
    "nvidia_owned_gpu_hour_usd": Field("NVIDIA owned", "USD/GPU-h", 3),
    "nvidia_price_per_gpu_usd": Field("NVIDIA price per GPU", "USD", None),
    "nvidia_rent_median_usd": Field("NVIDIA rent", "USD/GPU-h", 3),
    "observed": Field("Observed", "", None),
    "osl_mean": Field("Mean output", "tokens", None),
    "osl_tokens": Field("Output", "tokens", 0),
    "ours": Field("Ours", "", None),
    "ours_usd": Field("Ours", "USD/GPU-h", 2),
    "owned_capital": Field("Capital", "", None),
    "owned_colocation": Field("Colocation", "", None),
    "owned_discount_pct": Field("Owned discount", "%", 1),
    "owned_gpu_hour_usd": Field("Owned, all-in", "", None),
    "owned_maintenance": Field("Maintenance", "", None),
    "owned_platform": Field("Platform", "", None),
    "owned_power": Field("Power", "", None),
    "p90_ape_pct": Field("90th pct. APE", "%", None),
    "p_amd_cheaper": Field("P(AMD cheaper)", "", 2),
    "p_amd_cheaper_change": Field("Change", "", None),
    "p_amd_cheaper_measured": Field("P(AMD cheaper), with yours", "", None),
    "p_amd_cheaper_public": Field("P(AMD cheaper), public data", "", None),
    "package": Field("Package", "", None),
    "pairs": Field("Pairs", "", None),
    "percent": Field("Error", "%", None),
    "perf_margin_pct": Field("Perf. margin", "%", 0),
    "perf_winner": Field("Faster", "", None),
    "power_basis": Field("Power basis", "", None),
    "power_exponent": Field("Power exponent", "", 3),
    "power_pairs": Field("Pairs", "", 0),
    "power_w": Field("Board power", "W", 0),
    "power_w_per_gpu": Field("Power per GPU", "W", 0),
    "precision": Field("Precision", "", None),
    "predictions": Field("Predictions", "", None),
    "previous": Field("Previous", "", None),
    "price_usd_per_gpu_hour": Field("USD/GPU-h", "", 2),
    "products": Field("Products", "", None),
    "provider": Field("Provider", "", None),
    "published": Field("Published", "", None),
    "published_usd": Field("Published", "USD/GPU-h", 2),
    "quote": Field("Quote", "", None),
    "quote_date": Field("Price date", "", None),
    "quote_note": Field("Note", "", None),
    "ratio": Field("Measured / model", "", 3),
    "raw_ratio": Field("Measured / model", "", 3),
    "reason": Field("Why infeasible", "", None),
    "reasoning": Field("Reasoning", "", None),
    "recommendation": Field("Call", "", None),
    "rent_discount_pct": Field("Rent discount", "%", 1),
    "rent_quote_max": Field("Highest quote", "", 2),
    "rent_quote_min": Field("Lowest quote", "", 2),
    "rented_gpu_hour_usd": Field("Rented, median + porting", "", 3),
    "residual_sigma": Field("Residual", "log RMS", 3),
    "ridge_flop_per_byte_bf16": Field("Ridge BF16", "FLOP/byte", None),
    "ridge_flop_per_byte_fp8": Field("Ridge FP8", "FLOP/byte", None),
    "rms_log_error_before": Field("Error before", "log RMS", 3),
    "round": Field("Round", "", None),
    "rows": Field("Rows", "", None),
    "run_date": Field("Run date", "", None),
    "runner_up_other_vendor": Field("Other vendor's best", "", None),
    "scaleout_gbps_per_gpu": Field("Scale-out per GPU", "Gb/s", None),
    "scaleup_bw_gbps": Field("Scale-up bandwidth", "GB/s", None),
    "scaleup_domain_gpus": Field("Scale-up domain", "GPUs", None),
    "scaleup_domain_memory_tb": Field("Scale-up domain HBM", "TB", None),
    "scaling_efficiency": Field("Scaling efficiency", "", None),
    "scenario": Field("Scenario", "", None),
    "scheme": Field("Scheme", "", None),
    "server_tpot_ms": Field("Server TPOT", "ms", None),
    "server_ttft_ms": Field("Server TTFT", "ms", None),
    "side": Field("Side", "", None),
    "sigma": Field("Monte Carlo sigma", "", 3),
    "source_file": Field("File", "", None),
    "source_id": Field("Source", "", None),
    "sources": Field("Sources", "", None),
    "sparse_halved": Field("Sparse halved", "", None),
    "stack": Field("Stack", "", None),
    "stale": Field("Older than 9 months", "", None),
    "statement": Field("AMD wins if ...", "", None),
    "status": Field("Status", "", None),
    "submitter": Field("Submitter", "", None),
    "tdp_w": Field("TDP", "W", None),
    "tflops_per_w_bf16": Field("BF16", "TFLOPS/W", None),
    "tflops_per_w_fp8": Field("FP8", "TFLOPS/W", None),
    "throughput_ratio": Field("vs full power", "", 3),
    "tier": Field("Tier", "", None),
    "time_to_train_hours": Field("Time to train", "h", 1),
    "tokens_per_s_per_gpu": Field("Tokens/s per GPU", "", 0),
    "tokens_per_s_per_kw": Field("Tokens/s per kW", "", 0),
    "tokens_per_s_per_user": Field("Tokens/s per user", "", None),
    "tool": Field("Tool", "", None),
    "top_bin_w": Field("Generation's top bin", "W", 0),
    "topic": Field("Topic", "", None),
    "total_params_b": Field("Params", "B", 1),
    "tp": Field("TP", "", 0),
    "tpot_ms": Field("TPOT", "ms", 1),
    "train_cost_usd": Field("Median", "USD", None),
    "train_cost_usd_p05": Field("p5", "USD", None),
    "train_cost_usd_p95": Field("p95", "USD", None),
    "ttft_ms": Field("TTFT", "ms", 0),
    "unit": Field("Unit", "", None),
    "unpredicted": Field("Not predicted", "", None),
    "used": Field("In the fit", "", None),
    "useful_gpu_hour_usd": Field("Useful GPU-hour", "USD", None),
    "value": Field("Value", "", None),
    "vendor": Field("Vendor", "", None),
    "verdict": Field("Verdict", "", None),
    "weight": Field("Weight", "", 2),
    "why": Field("Why they differ", "", None),
    "winner": Field("Winner", "", None),
    "winner_changed": Field("Changed", "", None),
    "winner_measured": Field("Winner", "with yours", None),
    "winner_public": Field("Winner", "public data", None),
    "winner_tok_s_gpu": Field("Tokens/s per GPU", "", 0),
    "winner_vendor": Field("Vendor", "", None),
    "within_15_pct": Field("Within 15%", "% of rows", None),
    "workload": Field("Workload", "", None),
}
# fmt: on
