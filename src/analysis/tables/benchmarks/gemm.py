"""The sustained-GEMM table: vendor-measured max-achievable dense GEMM throughput.

A datasheet's peak is boost clock x units x ops per cycle; under a dense GEMM the power
limit holds the clock far lower, and two parts with the same die and the same published
peak (MI300X at 750 W, MI325X at 1,000 W) sustain different clocks. AMD measures and
publishes this as Max-Achievable FLOPs (MAF). The training model uses the ratio between
parts of one die measured in one campaign (:mod:`analysis.training.sustained`).
"""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, Table, csv_rows
from analysis.tables.sources import source_id_col

#: Formats a GEMM throughput is measured in (the tensor-core formats of the spec table).
GEMM_PRECISIONS: tuple[str, ...] = ("fp16", "bf16", "fp8", "fp4")
#: How the input matrices were filled; it sets the toggle rate, hence power and clock, so
#: rows of different initializations are not comparable (AMD says so).
INITIALIZATIONS: tuple[str, ...] = ("trig_float", "normal")


def _one_initialization_per_source(df: pd.DataFrame) -> list[str]:
    """A source is one measurement campaign: one input initialization throughout."""
    n = df.groupby("source_id")["initialization"].transform("nunique")
    return [
        f"row {r}, column 'initialization': source {df.at[r - 2, 'source_id']!r} mixes "
        "initializations; rows compared with each other must share one (split the source)"
        for r in csv_rows(n > 1)
    ]


GEMM_MAX_ACHIEVABLE = Table(
    name="gemm_max_achievable",
    path="benchmarks/gemm_max_achievable.csv",
    description=(
        "Max-achievable dense GEMM throughput (MAF) as the vendor measured it: the "
        "sustained TFLOPS of the GEMM shape the vendor found fastest (the note gives it), "
        "on a thermally stable device with cold caches, and the median clock during it. One "
        "`source_id` is one measurement campaign (same tool, shapes and input "
        "initialization); the training model compares parts of one die only within a "
        "campaign, against the die's top bin. AMD publishes MI300X and MI325X (same die and peak, "
        "750 W vs 1,000 W); no NVIDIA equivalent is in the stored sources."
    ),
    key=("accelerator", "precision", "source_id"),
    columns=(
        Col("accelerator", "str", "Canonical accelerator id", isin=ids.ACCELERATORS),
        Col("precision", "str", "GEMM input format", isin=GEMM_PRECISIONS),
        Col(
            "maf_tflops",
            "float",
            "Max-achievable dense GEMM throughput",
            unit="TFLOPS",
            gt=0,
            le=1_000_000,
        ),
        Col(
            "median_clock_mhz",
            "float",
            "Median compute clock during the GEMM (the lowest chiplet's where they differ)",
            unit="MHz",
            required=False,
            gt=0,
            le=10_000,
        ),
        Col(
            "board_power_w",
            "float",
            "Board power the part was configured at",
            unit="W",
            required=False,
            gt=0,
            le=10_000,
        ),
        Col("initialization", "str", "Input matrix initialization", isin=INITIALIZATIONS),
        source_id_col("Row of `sources.csv`: the campaign the figure comes from."),
        Col(
            "document_date",
            "str",
            "Publication date of the source document",
            pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        ),
        Col("note", "str", "Where in the source, the GEMM shape, caveats", required=False),
    ),
    checks=(_one_initialization_per_source,),
)
