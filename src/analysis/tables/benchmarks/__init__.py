"""Schemas of the normalized MLPerf tables in ``data/benchmarks/`` (written by ``ingest mlperf``).

Provenance: MLCommons MLPerf Inference and Training results, Apache License 2.0. MLPerf is a
trademark of MLCommons; its results-messaging guidelines apply (cite the round and the
result id; say when a figure is derived). The raw files live in ``../shared/data/mlperf/``
(see its README for checksums) and are never copied into this repository; each row here
carries its source file and row, and the path of the result in the MLCommons repository.

The family is a package: :mod:`~analysis.tables.benchmarks.mlperf` (MLPerf vocabulary, the
MLPerf and published-training tables), :mod:`~analysis.tables.benchmarks.inferencex` and
:mod:`~analysis.tables.benchmarks.user` (a team's own runs); every name is importable from
``analysis.tables.benchmarks`` as before the split.
"""

from __future__ import annotations

from analysis.tables.benchmarks.gemm import GEMM_MAX_ACHIEVABLE, GEMM_PRECISIONS
from analysis.tables.benchmarks.inferencex import (
    INFERENCEX,
    INFERENCEX_ACCELERATORS,
    INFERENCEX_PUBLISHED,
)
from analysis.tables.benchmarks.mlperf import (
    ACCESSED_COL,
    AVAILABILITIES,
    HOLDOUT_RULE,
    HOLDOUT_TRAINING_SOURCES,
    INFERENCE_BENCHMARKS,
    INFERENCE_PROVENANCE,
    INFERENCE_SCENARIOS,
    MLPERF_INFERENCE,
    MLPERF_TRAINING,
    MLPERF_TRAINING_HOLDOUT,
    MLPERF_TRAINING_LOGS,
    PUBLISHED_TRAINING,
    PUBLISHED_TRAINING_SOURCES,
    TRAINING_BENCHMARKS,
    TRAINING_PROVENANCE,
)
from analysis.tables.benchmarks.user import (
    BENCH_TOOLS,
    USER_BENCHMARKS,
)

TABLES = (
    MLPERF_INFERENCE,
    MLPERF_TRAINING,
    MLPERF_TRAINING_LOGS,
    PUBLISHED_TRAINING,
    MLPERF_TRAINING_HOLDOUT,
    INFERENCEX,
    INFERENCEX_PUBLISHED,
    GEMM_MAX_ACHIEVABLE,
)


#: Tables a user writes (not bundled, so not in :data:`analysis.tables.ALL`); the data
#: dictionary documents them all the same.
USER_TABLES = (USER_BENCHMARKS,)

__all__ = [
    "ACCESSED_COL",
    "AVAILABILITIES",
    "BENCH_TOOLS",
    "GEMM_MAX_ACHIEVABLE",
    "GEMM_PRECISIONS",
    "HOLDOUT_RULE",
    "HOLDOUT_TRAINING_SOURCES",
    "INFERENCEX",
    "INFERENCEX_ACCELERATORS",
    "INFERENCEX_PUBLISHED",
    "INFERENCE_BENCHMARKS",
    "INFERENCE_PROVENANCE",
    "INFERENCE_SCENARIOS",
    "MLPERF_INFERENCE",
    "MLPERF_TRAINING",
    "MLPERF_TRAINING_HOLDOUT",
    "MLPERF_TRAINING_LOGS",
    "PUBLISHED_TRAINING",
    "PUBLISHED_TRAINING_SOURCES",
    "TABLES",
    "TRAINING_BENCHMARKS",
    "TRAINING_PROVENANCE",
    "USER_BENCHMARKS",
    "USER_TABLES",
]
