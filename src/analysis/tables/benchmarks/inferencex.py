"""The InferenceX table: SemiAnalysis InferenceX serving measurements."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from analysis import ids
from analysis.schema import Col, Table
from analysis.tables.benchmarks.mlperf import ACCESSED_COL
from analysis.tables.sources import source_id_col

#: Prompt and answer lengths, the same in the sweeps and on the published pages.
ISL_COL = Col(
    "isl",
    "int",
    "Nominal input length (real lengths vary around it)",
    unit="tokens",
    gt=0,
    le=1_000_000,
)
OSL_COL = Col("osl", "int", "Nominal output length", unit="tokens", gt=0, le=1_000_000)

#: Access date of a page read by hand (its stored copy).
ACCESSED_ON_PAGE_COL = Col("accessed", "date", "Day the page's stored copy was read")

#: InferenceX accelerator ids (the hardware InferenceX measures).
INFERENCEX_ACCELERATORS: tuple[str, ...] = (
    "H100-SXM",
    "H200",
    "B200",
    "B300",
    "GB200",
    "GB300",
    "MI300X",
    "MI325X",
    "MI355X",
)


INFERENCEX = Table(
    name="inferencex",
    path="benchmarks/inferencex.csv",
    description=(
        "SemiAnalysis InferenceX serving measurements (third-party facts: cite as "
        "'SemiAnalysis InferenceX' with the row's `run_url` and `date`): DeepSeek-R1-0528 "
        "concurrency sweeps on NVIDIA and AMD systems, one row per measured point. Built by "
        "`python -m analysis ingest inferencex` from the InferenceX-app e2e fixtures "
        "(`SemiAnalysisAI/InferenceX-app` commit 528c4146b8f502fcbce8df7870a935a970cbae25, "
        "`packages/app/cypress/fixtures/api/benchmarks.json` and `benchmarks-history.json`; "
        "raw copy and checksums in `../shared/data/inferencex/`); duplicates across the two "
        "files dropped, every other row kept with its flags. The fixtures are a sample "
        "(at most 3-5 concurrencies per configuration), not complete sweeps."
    ),
    key=(
        "run_url",
        "date",
        "accelerator",
        "framework",
        "precision",
        "spec_method",
        "disagg",
        "prefill_tp",
        "prefill_ep",
        "decode_tp",
        "decode_ep",
        "decode_dp_attention",
        "num_prefill_gpu",
        "num_decode_gpu",
        "isl",
        "osl",
        "conc",
    ),
    # Upper bounds (plausibility, issue 15): 10-100x the 2026 fixtures' extremes (TP/EP 72,
    # 88 GPUs, 8k tokens, 16k concurrency, 27k tokens/s/GPU, 564 s TTFT, 380 tokens/s/user),
    # so a unit slip or a garbled row is refused while larger future sweeps still fit.
    columns=(
        Col("date", "date", "Date of the run (the document date of the measurement)"),
        Col("accelerator", "str", "Canonical accelerator id", isin=INFERENCEX_ACCELERATORS),
        Col("vendor", "str", "Accelerator vendor", isin=ids.VENDORS),
        Col(
            "framework",
            "str",
            "Serving stack: sglang, trt (TensorRT-LLM), atom (AMD ATOM), dynamo-sglang, "
            "dynamo-trt, mori-sglang (disaggregated)",
        ),
        Col("model", "str", "Canonical model id", isin=ids.MODELS),
        Col("precision", "str", "Weight precision as InferenceX labels it", isin=("fp8", "fp4")),
        Col("spec_method", "str", "Speculative decoding: none or mtp", isin=("none", "mtp")),
        Col(
            "disagg", "int", "Prefill and decode on separate workers (1 = yes, 0 = no)", ge=0, le=1
        ),
        Col("multinode", "int", "The run spans more than one node (1 = yes, 0 = no)", ge=0, le=1),
        Col("prefill_tp", "int", "Tensor-parallel size of the prefill phase", ge=1, le=576),
        Col("prefill_ep", "int", "Expert-parallel size of the prefill phase", ge=1, le=576),
        Col(
            "prefill_dp_attention",
            "int",
            "Data-parallel attention in prefill (1 = yes, 0 = no)",
            ge=0,
            le=1,
        ),
        Col("decode_tp", "int", "Tensor-parallel size of the decode phase", ge=1, le=576),
        Col("decode_ep", "int", "Expert-parallel size of the decode phase", ge=1, le=576),
        Col(
            "decode_dp_attention",
            "int",
            "Data-parallel attention in decode (1 = yes, 0 = no)",
            ge=0,
            le=1,
        ),
        Col("num_prefill_gpu", "int", "GPUs of the prefill phase", unit="GPUs", ge=0, le=4096),
        Col(
            "num_decode_gpu",
            "int",
            "GPUs of the decode phase (an aggregated expert-parallel run: tp x ep as recorded, "
            "though it ran on max(tp, ep); see aggregated_run_gpus)",
            unit="GPUs",
            ge=1,
            le=4096,
        ),
        ISL_COL,
        OSL_COL,
        Col("conc", "int", "Maximum concurrent requests of the load generator", ge=1, le=1_000_000),
        Col(
            "tput_per_gpu",
            "float",
            "Total (input + output) tokens/s per GPU",
            unit="tokens/s/GPU",
            gt=0,
            le=1_000_000,
        ),
        Col(
            "output_tput_per_gpu",
            "float",
            "Generated tokens/s per GPU (per decode GPU when disaggregated)",
            unit="tokens/s/GPU",
            required=False,
            gt=0,
            le=1_000_000,
        ),
        Col(
            "input_tput_per_gpu",
            "float",
            "Prefill tokens/s per GPU (per prefill GPU when disaggregated)",
            unit="tokens/s/GPU",
            required=False,
            ge=0,
            le=1_000_000,
        ),
        Col(
            "median_tpot_ms", "float", "Median time per output token", unit="ms", gt=0, le=3_600_000
        ),
        Col(
            "p99_tpot_ms",
            "float",
            "99th-percentile time per output token",
            unit="ms",
            gt=0,
            le=3_600_000,
        ),
        Col("median_ttft_ms", "float", "Median time to first token", unit="ms", gt=0, le=3_600_000),
        Col(
            "p99_ttft_ms",
            "float",
            "99th-percentile time to first token",
            unit="ms",
            gt=0,
            le=3_600_000,
        ),
        Col(
            "median_intvty",
            "float",
            "Interactivity: 1000 / median_tpot_ms",
            unit="tokens/s/user",
            gt=0,
            le=100_000,
        ),
        Col("run_url", "str", "GitHub Actions run of SemiAnalysisAI/InferenceX (the source)"),
        Col("source_file", "str", "Fixture file the row was read from"),
        Col("source_line", "int", "Line of the row in that file (1-based)", ge=1, le=10_000_000),
        Col("source_commit", "str", "InferenceX-app commit of the fixture files"),
        ACCESSED_COL,
    ),
)


INFERENCEX_PUBLISHED = Table(
    name="inferencex_published",
    path="benchmarks/inferencex_published.csv",
    description=(
        "Points read off SemiAnalysis InferenceX's published comparison pages "
        "(inferencex.semianalysis.com, third-party facts: cite the row's `source_id` page), "
        "a CHECK SET no fit reads: workloads the bundled sweeps do not have (Llama 3.3 70B, "
        "gpt-oss-120b) at 1k/1k, each page's frontier value at the interactivities its text "
        "quotes ('interpolated from real benchmark data', their words), transcribed by hand "
        "from stored copies of the pages read on the access date (the pages show no date of "
        "their own); table-cell quotes are the page's cell verbatim "
        "(`FP4:5971.1FP8:4431.4`). `total_tok_s_gpu` is the pages' "
        "'tok/s/GPU', input plus output tokens (it equals the InferenceX sweeps' total "
        "`tput_per_gpu` where both give DeepSeek-R1); the check takes `osl / (isl + osl)` of "
        "it as output. Llama 3.3 70B rows use `llama3.1-70b` (the same architecture)."
    ),
    key=("source_id", "accelerator", "precision", "interactivity_tok_s_user"),
    columns=(
        source_id_col("The page the row is read from (`sources.csv`)"),
        Col("model", "str", "Canonical model id", isin=ids.MODELS),
        Col("page_model", "str", "The model as the page names it"),
        Col("accelerator", "str", "Canonical accelerator id", isin=INFERENCEX_ACCELERATORS),
        Col("vendor", "str", "Accelerator vendor", isin=ids.VENDORS),
        Col("precision", "str", "Weight precision as the page labels it", isin=("fp8", "fp4")),
        ISL_COL,
        OSL_COL,
        # 55-139 tokens/s per user on the pages; 10x headroom.
        Col(
            "interactivity_tok_s_user",
            "float",
            "Interactivity the page quotes the value at (1000 / median TPOT)",
            unit="tokens/s/user",
            gt=0,
            le=2_000,
        ),
        # 525-25,320 on the pages; 40x headroom.
        Col(
            "total_tok_s_gpu",
            "float",
            "The page's frontier throughput there, input + output tokens",
            unit="tokens/s/GPU",
            gt=0,
            le=1_000_000,
        ),
        Col(
            "may_include_speculative",
            "int",
            "1 = the page's frontier may include speculative-decoding runs (the pages: "
            "'may include speculative decoding such as MTP where recipes exist'); the "
            "model emits one token per step",
            ge=0,
            le=1,
        ),
        Col("quote", "str", "The page's words the numbers are read from"),
        ACCESSED_ON_PAGE_COL,
    ),
)


def aggregated_run_gpus(
    tp: float | Iterable[float], ep: float | Iterable[float], recorded: float | Iterable[float]
) -> np.ndarray:
    """GPUs an aggregated InferenceX run ran on, from its decode tp, ep and recorded GPUs.

    InferenceX records an aggregated expert-parallel run's GPUs as tp x ep (TP8 EP8: 64,
    TP4 EP4: 16), though it ran on one worker of max(tp, ep) GPUs. Little's law on the
    rows themselves says so: concurrency / (OSL x TPOT + TTFT) x (ISL + OSL) /
    ``tput_per_gpu`` is a median 8.22 GPUs for TP8 EP8 rows (8.27 with DP attention) and
    4.13 for TP4 EP4, as for TP8 and TP4 EP1 rows (8.21, 4.10), not 64 or 16
    (2026-12-06, the bundled sweeps; every aggregated row is single-node).
    ``tput_per_gpu`` is per GPU used; read with the recorded count, an expert-parallel
    row's batch per GPU was 8x (4x) too small and its request rate 8x (4x) too large,
    and the deployment model under-predicted NVIDIA's held-out aggregated configurations
    by a median 70 %. Only a count recorded as tp x ep with ep > 1 is replaced; any
    other (a multi-replica run) stands. Integer array, one per row.
    """
    t, e, r = (np.asarray(v, dtype=float) for v in (tp, ep, recorded))
    gpus: np.ndarray = np.where((e > 1) & (r == t * e), np.maximum(t, e), r).astype(int)
    return gpus
