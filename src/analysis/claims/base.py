"""What every claim evaluator shares: the outcome, the context, small helpers."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis import ids
from analysis.params import Scenario

INFERENCE_CHAPTER = "30-inference-tiers"

TRAINING_CHAPTER = "20-training-scaling"

TCO_CHAPTER = "40-tco"

OUTPUT_COLUMNS = (
    "claim_id",
    "quote",
    "topic",
    "kind",
    "test_method",
    "verdict",
    "claimed",
    "observed",
    "products",
    "data_sources",
    "data_urls",
    "reasoning",
)


@dataclass
class Outcome:
    """What an evaluator found for one claim."""

    verdict: str
    observed: str = ""
    products: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    reasoning: str = ""
    unmatched: bool = False  # a quoted number found in no spec row at all
    fact_used: bool = False  # the row's cited fact is already in the reasoning


@dataclass
class Context:
    """The data an evaluator may use (all optional: missing data = unverifiable)."""

    specs: pd.DataFrame
    mlperf_inference: pd.DataFrame
    mlperf_training: pd.DataFrame
    rental_quotes: pd.DataFrame
    purchase_prices: pd.DataFrame
    chapter_results: Mapping[str, Mapping[str, object]]
    scenario: Scenario | None = None


def _split(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return []
    return [v.strip() for v in str(value).split(";") if v.strip()]


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


def _resolve(names: list[str], pool: list[str]) -> list[str]:
    """Accelerator ids named directly, or every id of a named vendor within ``pool``."""
    out: list[str] = []
    for n in names:
        if n in ids.VENDORS:
            out += [a for a in pool if ids.vendor_of(a) == n and a not in out]
        elif n not in out:
            out.append(n)
    return out


#: Reader-facing names of the spec fields the claims test (the raw column stays in `observed`).
FIELD_LABELS: dict[str, str] = {
    "memory_gb": "HBM capacity",
    "memory_bw_tbps": "memory bandwidth",
    "process_node": "process node",
    "package": "package",
    "bf16_dense_tflops": "peak dense BF16 throughput",
    "fp8_dense_tflops": "peak dense FP8 throughput",
    "fp4_dense_tflops": "peak dense FP4 throughput",
    "tdp_w": "board power",
    "scaleup_bw_gbps": "scale-up (GPU-to-GPU) bandwidth per GPU",
    "scaleout_gbps_per_gpu": "scale-out (NIC) bandwidth per GPU",
    "scaleout_gbps_per_gpu*0.125": "scale-out (NIC) bandwidth per GPU",
    "fp8_dense_tflops/tdp_w": "peak dense FP8 TFLOPS per watt of board power",
}

#: Reader-facing names of the price tables.
PRICE_LABELS: dict[str, str] = {
    "rental_quotes": "median rental price per GPU-hour",
    "purchase_prices": "median purchase price per GPU (mid-point of the quoted range)",
}


def _label(spec: str) -> str:
    """A spec field as a reader reads it: ``memory_bw_tbps`` -> ``memory bandwidth (TB/s)``."""
    spec = spec.strip()
    return FIELD_LABELS.get(spec, spec.replace("_", " "))


def _regex_label(pattern: str) -> str:
    r"""The claimed text behind a match pattern: ``\\b3 ?nm|N3`` -> ``3 nm``.

    The claims table stores a case-insensitive regular expression for text properties; the
    reader sees its first alternative without anchors and optional-space markers.
    """
    first = pattern.split("|")[0]
    first = first.replace(r"\b", "").replace(" ?", " ").strip("^$")
    return re.sub(r"\\(.)", r"\1", first).strip()


def _status_of(ctx: Context, acc: str) -> str:
    if ctx.specs.empty or "status" not in ctx.specs:
        return "?"
    st = ctx.specs.set_index("accelerator")["status"]
    return str(st.get(acc, "?"))


def _within(value: float, target: float, tol_pct: float) -> bool:
    if not (math.isfinite(value) and math.isfinite(target)):
        return False
    return abs(value - target) <= abs(target) * tol_pct / 100.0 + 1e-9


def _tol(row: Mapping[str, Any], default: float = 2.0) -> float:
    t = _num(row.get("tolerance_pct"))
    return t if math.isfinite(t) else default
