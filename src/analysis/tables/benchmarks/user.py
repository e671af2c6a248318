"""A team's own benchmark runs (``ingest bench``): the ``user_benchmarks`` table."""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, Table
from analysis.tables.benchmarks.mlperf import INFERENCE_SCENARIOS

#: Benchmark tools ``ingest bench`` reads (``tool`` column).
BENCH_TOOLS: tuple[str, ...] = ("vllm", "sglang", "inferencex", "mlperf-loadgen")


_SHA256 = r"^[0-9a-f]{64}$"


def _check_user_vendor(df: pd.DataFrame) -> list[str]:
    """The vendor column is the accelerator's (:func:`analysis.ids.vendor_of`)."""
    bad = df.index[df["vendor"] != df["accelerator"].map(ids.vendor_of)]
    return [
        f"row {i + 2}: accelerator {df.at[i, 'accelerator']!r} is not a {df.at[i, 'vendor']} part"
        for i in bad[:10]
    ]


def _check_user_gpus(df: pd.DataFrame) -> list[str]:
    """A run's GPUs are whole replicas: ``gpus`` is a multiple of ``tp``."""
    bad = df.index[(df["gpus"] % df["tp"]) != 0]
    return [f"row {i + 2}: gpus is not a multiple of tp (whole replicas)" for i in bad[:10]]


USER_BENCHMARKS = Table(
    name="user_benchmarks",
    path="benchmarks/user/<run>-<sha256[:12]>.csv",
    description=(
        "A team's own serving benchmark runs, one row per measured point, one file per "
        "ingested result file (written by `python -m analysis ingest bench`, default folder "
        "`data/benchmarks/user/`, not bundled). Read from vLLM `vllm bench serve` / "
        "`benchmark_serving.py --save-result` JSON, SGLang `bench_serving` JSONL, InferenceX "
        "result rows and MLPerf loadgen `mlperf_log_summary.txt`; the accelerator, model, "
        "precision and tensor parallelism a file does not carry come from the ingest's flags "
        "(`flags`). A scenario lists such files or folders under `measurements:`; the report "
        "then calibrates its inference model on them (chapter `35-your-measurements`). "
        "Throughput per GPU is the run's output tokens/s divided by `gpus`; latencies are "
        "the file's own percentiles, converted to ms; power is measured GPU board power "
        "where the file (InferenceX) or a `--power` log (nvidia-smi / amd-smi CSV) has it."
    ),
    key=("source_sha256", "source_row"),
    columns=(
        Col("tool", "str", "Benchmark tool that wrote the file", isin=BENCH_TOOLS),
        Col(
            "tool_version",
            "str",
            "Tool or stack version where the file says it (SGLang server_info.version, "
            "the InferenceX container image); empty otherwise",
            required=False,
        ),
        Col(
            "stack",
            "str",
            "Serving stack (`--stack`, or the file's backend/framework field)",
            required=False,
        ),
        Col("served_model", "str", "Model name as the file gives it", required=False),
        Col("accelerator", "str", "Canonical accelerator id", isin=ids.ACCELERATORS),
        Col("vendor", "str", "Accelerator vendor", isin=ids.VENDORS),
        Col("model", "str", "Canonical model id", isin=ids.MODELS),
        Col("precision", "str", "Canonical serving precision", isin=ids.PRECISIONS),
        Col("tp", "int", "Tensor-parallel GPUs per replica", unit="GPUs", ge=1),
        Col("gpus", "int", "GPUs the run used (all replicas)", unit="GPUs", ge=1),
        Col(
            "scenario",
            "str",
            "MLPerf scenario of a loadgen summary (empty for the serving tools)",
            required=False,
            isin=INFERENCE_SCENARIOS,
        ),
        Col("isl_tokens", "float", "Mean input tokens per request", unit="tokens", gt=0),
        Col("osl_tokens", "float", "Mean output tokens per request", unit="tokens", gt=0),
        Col(
            "concurrency",
            "float",
            "Maximum concurrent requests of the load generator (empty = unlimited)",
            unit="requests",
            required=False,
            gt=0,
        ),
        Col(
            "request_rate_per_s",
            "float",
            "Configured request rate (empty = unlimited / not set)",
            unit="requests/s",
            required=False,
            gt=0,
        ),
        Col(
            "completed_requests",
            "int",
            "Requests completed (empty where the file does not say)",
            required=False,
            ge=1,
        ),
        Col("duration_s", "float", "Benchmark duration", unit="s", required=False, gt=0),
        Col(
            "output_tokens_per_s",
            "float",
            "Output tokens/s of the whole run (all GPUs)",
            unit="tokens/s",
            gt=0,
        ),
        Col(
            "output_tokens_per_s_per_gpu",
            "float",
            "output_tokens_per_s / gpus",
            unit="tokens/s/GPU",
            gt=0,
        ),
        Col(
            "median_ttft_ms", "float", "Median time to first token", unit="ms", required=False, ge=0
        ),
        Col("p99_ttft_ms", "float", "99th percentile TTFT", unit="ms", required=False, ge=0),
        Col(
            "median_tpot_ms",
            "float",
            "Median time per output token after the first",
            unit="ms",
            required=False,
            gt=0,
        ),
        Col("p99_tpot_ms", "float", "99th percentile TPOT", unit="ms", required=False, gt=0),
        Col(
            "median_itl_ms", "float", "Median inter-token latency", unit="ms", required=False, ge=0
        ),
        Col(
            "median_e2el_ms",
            "float",
            "Median end-to-end request latency",
            unit="ms",
            required=False,
            ge=0,
        ),
        Col(
            "avg_power_w_per_gpu",
            "float",
            "Measured average GPU board power per GPU during the run",
            unit="W",
            required=False,
            gt=0,
        ),
        Col(
            "power_source",
            "str",
            "Where avg_power_w_per_gpu comes from (InferenceX metrics.avg_power_w, or the "
            "`--power` log and its sample count)",
            required=False,
        ),
        Col(
            "caveat",
            "str",
            "What a reader must know (speculative decoding, disaggregated serving, an "
            "INVALID loadgen run, ...)",
            required=False,
        ),
        Col(
            "run_date",
            "date",
            "Day of the run where the file says it (or `--run-date`)",
            required=False,
        ),
        Col("source_file", "str", "File name of the ingested result file"),
        Col("source_sha256", "str", "sha256 of the ingested file", pattern=_SHA256),
        Col("source_row", "int", "0-based record index in the file", ge=0),
        Col("power_file", "str", "File name of the `--power` log", required=False),
        Col("power_sha256", "str", "sha256 of the `--power` log", required=False, pattern=_SHA256),
        Col("flags", "str", "The ingest flags given (accelerator, model, precision, tp, ...)"),
        Col("ingested", "date", "Day the file was ingested"),
    ),
    checks=(_check_user_vendor, _check_user_gpus),
)
