"""MLPerf Inference LLM benchmark definitions: datasets, token lengths, latency bounds.

The performance model is calibrated against MLPerf under each scenario's *own* rules, so
the rules live here as data, each with its source. Analytical decisions taken here:

* **Latency bounds** are the LoadGen settings of ``loadgen/mlperf.conf`` in
  ``mlcommons/inference`` (TTFT and TPOT, 99th percentile, in ms). ``Offline`` has none;
  ``Interactive`` is the ``<model>-interactive`` Server configuration.
* **Mean output length (OSL)**: the ``tokens_per_sample`` column of each MLPerf row
  (TOKENS_PER_SAMPLE, measured on the submitter's own accuracy run) is used where present;
  the constant here is the fallback (the reference's value).
* **Mean input length (ISL)** is not published in the results, and no citable mean was
  found in the reference READMEs (``language/<benchmark>/README.md`` in
  ``mlcommons/inference``: they give sample counts, the llama2-70b input cap of 1,024
  tokens, and reference output lengths, but no mean input length) nor in the MLCommons
  benchmark blog posts searched. The values are therefore estimates from the dataset
  descriptions and carry ``isl_verified = False`` (every benchmark, today). Decode
  dominates these benchmarks (output tokens are what is counted), and the fitted efficiency
  absorbs a constant error in prefill cost, so an ISL error shifts the factors, not their
  trend.
* **Sample counts** match ``performance_sample_count_override`` in ``mlperf.conf``.
* **Speculative decoding**: the DeepSeek-R1 Interactive scenario allows it (MLCommons'
  v6.0 announcement) and DeepSeek-R1 ships a multi-token-prediction head for it; the
  serving model emits one token per sequence per step, so those rows are out of scope
  (``speculative_scenarios``): not calibrated on, not scored.
* **moe** marks the mixture-of-experts benchmarks: a benchmark with no calibration data
  borrows the median workload scale of its family (MoE or dense).
* **gpt-oss-120b** (new in v6.0): its bounds are in the benchmark's own LoadGen
  configuration, ``language/gpt-oss-120b/mlperf_gptoss.conf`` (Server: TTFT 3 s, TPOT
  80 ms; Interactive: TTFT 2 s, TPOT 15 ms, 99th percentile), so every scenario MLPerf
  defines for it is used; the reference ``mlperf/user.conf`` beside it (TTFT 2 s, TPOT
  20 ms) is a harness example, not the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported lazily (benchmark ids load without it)
    import pandas as pd

MLPERF_REPO_URL = "https://github.com/mlcommons/inference/blob/master"
MLPERF_CONF_URL = f"{MLPERF_REPO_URL}/loadgen/mlperf.conf"
#: The v6.0 LoadGen configuration that first carries gpt-oss-120b's latency bounds, read at
#: mlcommons/inference commit 8d6e250cf964ed8046ce74b27695e966b2a3ed12 (accessed 2026-12-01).
GPT_OSS_CONF_URL = (
    "https://github.com/mlcommons/inference/blob/8d6e250cf964ed8046ce74b27695e966b2a3ed12/"
    "language/gpt-oss-120b/mlperf_gptoss.conf"
)


def _readme(benchmark: str) -> str:
    """The reference README of an MLPerf LLM benchmark in ``mlcommons/inference``."""
    return f"{MLPERF_REPO_URL}/language/{benchmark}/README.md"


@dataclass(frozen=True)
class BenchmarkDef:
    """One MLPerf LLM benchmark: model, dataset, token lengths, latency bounds per scenario."""

    benchmark: str  #: MLPerf benchmark id without the accuracy suffix (llama2-70b, ...)
    model: str  #: canonical model id (analysis.ids)
    dataset: str
    isl_mean: float  #: mean input tokens (approximate, see isl_verified)
    osl_mean: float  #: mean output tokens (reference TOKENS_PER_SAMPLE)
    server_ttft_ms: float | None
    server_tpot_ms: float | None
    interactive_ttft_ms: float | None
    interactive_tpot_ms: float | None
    source: str
    isl_verified: bool = False
    #: Mixture-of-experts model (the family an uncalibrated workload borrows its scale from).
    moe: bool = False
    #: Scenarios whose rules allow speculative decoding: outside the model's scope (a decode
    #: step emits one token per sequence here), so their rows are neither fitted nor scored.
    speculative_scenarios: tuple[str, ...] = ()

    def bounds(self, scenario: str) -> tuple[float | None, float | None]:
        """(ttft_ms, tpot_ms) 99th-percentile bounds of ``scenario``; (None, None) = Offline.

        Raises:
            ValueError: the scenario is unknown or has no published bounds for this benchmark.
        """
        if scenario == "Offline":
            return None, None
        if scenario == "Server":
            pair = (self.server_ttft_ms, self.server_tpot_ms)
        elif scenario == "Interactive":
            pair = (self.interactive_ttft_ms, self.interactive_tpot_ms)
        else:
            raise ValueError(
                f"unknown MLPerf scenario {scenario!r}; allowed: Offline, Server, Interactive"
            )
        if pair[0] is None or pair[1] is None:
            raise ValueError(
                f"MLPerf benchmark {self.benchmark!r} has no {scenario} latency bounds in this "
                f"table (see {self.source})"
            )
        return pair


#: The benchmark table (bounds: mlperf.conf; datasets and lengths: the reference READMEs).
BENCHMARKS: dict[str, BenchmarkDef] = {
    b.benchmark: b
    for b in (
        BenchmarkDef(
            "llama2-70b",
            "llama2-70b",
            "OpenOrca (GPT-4 part, 24,576 samples, inputs <= 1,024)",
            isl_mean=300.0,
            osl_mean=294.45,
            server_ttft_ms=2000.0,
            server_tpot_ms=200.0,
            interactive_ttft_ms=450.0,
            interactive_tpot_ms=40.0,
            source=f"{MLPERF_CONF_URL}; {_readme('llama2-70b')} "
            "(OpenOrca; TOKENS_PER_SAMPLE 294.45)",
        ),
        BenchmarkDef(
            "llama3.1-405b",
            "llama3.1-405b",
            "LongBench, RULER, GovReport, LongDataCollections mix (8,313 samples)",
            isl_mean=9400.0,
            osl_mean=684.68,
            server_ttft_ms=6000.0,
            server_tpot_ms=175.0,
            interactive_ttft_ms=4500.0,
            interactive_tpot_ms=80.0,
            source=f"{MLPERF_CONF_URL}; {_readme('llama3.1-405b')} "
            "(accuracy target tokens_per_sample 684.68); "
            "https://mlcommons.org/2025/04/llm-inference-v5",
        ),
        BenchmarkDef(
            "llama3.1-8b",
            "llama3.1-8b",
            "CNN-DailyMail summarization (13,368 samples)",
            isl_mean=870.0,
            osl_mean=100.0,
            server_ttft_ms=2000.0,
            server_tpot_ms=100.0,
            interactive_ttft_ms=500.0,
            interactive_tpot_ms=30.0,
            source=f"{MLPERF_CONF_URL}; {_readme('llama3.1-8b')} "
            "(13,368 samples; its gen_len target counts characters, so the OSL fallback of "
            "100 tokens is an estimate); "
            "https://mlcommons.org/2025/09/small-llm-inference-5-1",
        ),
        BenchmarkDef(
            "mixtral-8x7b",
            "mixtral-8x7b",
            "OpenOrca + GSM8K + MBXP (15,000 samples)",
            isl_mean=300.0,
            osl_mean=144.84,
            server_ttft_ms=2000.0,
            server_tpot_ms=200.0,
            interactive_ttft_ms=None,
            interactive_tpot_ms=None,
            source=f"{MLPERF_CONF_URL}; {_readme('mixtral-8x7b')} "
            "(15,000 samples, 5,000 from each dataset; "
            "reference tokens_per_sample 144.84)",
            moe=True,
        ),
        BenchmarkDef(
            "deepseek-r1",
            "deepseek-r1",
            "AIME, MATH-500, GPQA, MMLU-Pro, LiveCodeBench mix (4,388 samples)",
            isl_mean=800.0,
            osl_mean=4043.45,
            server_ttft_ms=2000.0,
            server_tpot_ms=80.0,
            interactive_ttft_ms=1500.0,
            interactive_tpot_ms=15.0,
            source=f"{MLPERF_CONF_URL}; {_readme('deepseek-r1')} "
            "(reference mean-output-tok-len 4,043.45 over 4,388 "
            "samples); https://mlcommons.org/2026/03/mlperf-inference-gpt-oss"
            " (interactive: TTFT <= 1.5 s, TPOT <= 15 ms, speculative decoding allowed)",
            moe=True,
            speculative_scenarios=("Interactive",),
        ),
        BenchmarkDef(
            "gpt-oss-120b",
            "gpt-oss-120b",
            "performance set of routine low-reasoning-effort tasks (6,396 samples)",
            isl_mean=1000.0,
            osl_mean=1278.2,
            server_ttft_ms=3000.0,
            server_tpot_ms=80.0,
            interactive_ttft_ms=2000.0,
            interactive_tpot_ms=15.0,
            source=f"{_readme('gpt-oss-120b')} (TEST09 reference mean output 1,278.20 tokens); "
            f"{GPT_OSS_CONF_URL} (gpt-oss-120b.Server ttft_latency 3000, tpot_latency 80; "
            "gpt-oss-120b-interactive.Server ttft_latency 2000, tpot_latency 15); "
            "https://mlcommons.org/2026/03/mlperf-inference-gpt-oss",
            moe=True,
        ),
    )
}


def benchmark_def(benchmark: str) -> BenchmarkDef:
    """The definition of an MLPerf benchmark id as MLPerf names it (``-99``/``-99.9`` allowed).

    >>> benchmark_def("llama2-70b-99.9").server_tpot_ms
    200.0

    Raises:
        ValueError: unknown benchmark id (the message lists the known ones).
    """
    base = benchmark
    for suffix in ("-99.9", "-99"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    base = base.removesuffix("-interactive")
    if base not in BENCHMARKS:
        known = ", ".join(sorted(BENCHMARKS))
        raise ValueError(
            f"unknown MLPerf benchmark {benchmark!r}; known: {known} "
            "(with -99/-99.9 accuracy suffixes where MLPerf uses them)"
        )
    return BENCHMARKS[base]


def benchmark_for_model(model: str) -> str | None:
    """The MLPerf benchmark that serves ``model`` (its first in :data:`BENCHMARKS`), or None.

    >>> benchmark_for_model("llama2-70b"), benchmark_for_model("llama3.1-70b")
    ('llama2-70b', None)
    """
    return next((b for b, d in BENCHMARKS.items() if d.model == model), None)


def benchmark_table() -> pd.DataFrame:
    """The benchmark definitions as a DataFrame (for the chapter's methods table)."""
    import pandas as pd

    return pd.DataFrame([b.__dict__ for b in BENCHMARKS.values()])
