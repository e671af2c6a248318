"""The MLPerf Inference and Training tables and the published-training table.

The MLPerf vocabulary (benchmark ids, scenarios, availabilities), shared columns and checks.
"""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, Table

#: MLPerf Inference LLM benchmark ids kept in ``mlperf_inference`` (as MLPerf names them).
INFERENCE_BENCHMARKS: tuple[str, ...] = (
    "deepseek-r1",
    "gpt-oss-120b",
    "llama2-70b-99",
    "llama2-70b-99.9",
    "llama3.1-405b",
    "llama3.1-8b",
    "mixtral-8x7b",
)


#: MLPerf Training LLM benchmark ids kept in ``mlperf_training``.
TRAINING_BENCHMARKS: tuple[str, ...] = ("gpt3", "llama2_70b_lora", "llama31_405b", "llama31_8b")


INFERENCE_SCENARIOS: tuple[str, ...] = ("Offline", "Server", "Interactive")


#: MLPerf availability categories: available, preview, research/development/internal.
AVAILABILITIES: tuple[str, ...] = ("available", "preview", "rdi")


#: The access date of every MLPerf row: the day its source files were downloaded from the
#: MLCommons results repositories (given to the ingest as ``--accessed``).
ACCESSED_COL = Col(
    "accessed",
    "date",
    "Day the row's source files were downloaded from MLCommons (the ingest's `--accessed`)",
)


#: Where each round's raw file comes from (shared README); quoted in the table descriptions.
INFERENCE_PROVENANCE = (
    "Sources (Apache-2.0, MLCommons): v4.1 `mlcommons/inference_results_v4.1` "
    "`summary_results.json` at commit 1e5a50f0619832da57f1425c19a8ec3607eee91d; v5.1 "
    "`mlcommons/inference_results_v5.1` at 965182b03376a00fcae415c54e560e1c83937932; v6.0 "
    "`mlcommons/inference_results_v6.0`, added in ab33b2144a9f822f69d24f78569f993d195ee7e5."
)


TRAINING_PROVENANCE = (
    "Sources (Apache-2.0, MLCommons): compiled from the MLLOG result files of "
    "`mlcommons/training_results_v4.0` (6fe954378efe4a1a1bd665550b18ff8f26018def), `v4.1` "
    "(b87b9e396f771345d4ef122ba33456304f15228d) and `v5.0` "
    "(0fdc28f013256aea84fa36fdaf1e0fa46094b18c) and scored with MLCommons' "
    "`mlperf-logging` 4.1.68 result summarizer (shared file "
    "`training_llm_time_to_train_v4.0-v5.0.csv`)."
)


_ROUND = r"^v\d+\.\d+$"


_ACC_DESC = (
    "Canonical accelerator id (analysis.ids); empty when the raw name has no canonical id "
    "(e.g. H100-NVL, H100-PCIe, H200-NVL, GH200, L40S, RTX PRO 6000, mixed-accelerator "
    "clusters): such rows are kept and listed by the ingest, never dropped"
)


def _check_accelerator_vendor(df: pd.DataFrame) -> list[str]:
    """A canonical id must belong to the row's vendor (:func:`analysis.ids.vendor_of`)."""
    mapped = df["accelerator"].notna()
    expected = df["accelerator"].map(ids.vendor_of, na_action="ignore")
    bad = df.index[mapped & (df["vendor"] != expected)]
    return [
        f"row {i + 2}: accelerator {df.at[i, 'accelerator']!r} is not a {df.at[i, 'vendor']} part"
        for i in bad[:10]
    ]


def _check_total_accelerators(df: pd.DataFrame) -> list[str]:
    """``total_accelerators`` = ``nodes`` x ``accelerators_per_node`` (MLPerf's own count)."""
    bad = df.index[df["total_accelerators"] != df["nodes"] * df["accelerators_per_node"]]
    return [f"row {i + 2}: total_accelerators != nodes x accelerators_per_node" for i in bad[:10]]


def _check_duplicate_of(df: pd.DataFrame) -> list[str]:
    """``duplicate_of`` names a sibling row (same run, other accuracy target) that exists."""
    keys = set(zip(df["round"], df["mlperf_id"], df["benchmark"], df["scenario"], strict=True))
    problems = []
    for i in df.index[df["duplicate_of"].notna()]:
        sib = (
            df.at[i, "round"],
            df.at[i, "mlperf_id"],
            df.at[i, "duplicate_of"],
            df.at[i, "scenario"],
        )
        if sib not in keys:
            problems.append(f"row {i + 2}: duplicate_of {df.at[i, 'duplicate_of']!r} not found")
    return problems[:10]


_COMMON_SYSTEM_COLS: tuple[Col, ...] = (
    Col("round", "str", "MLPerf round, e.g. `v5.1`", pattern=_ROUND),
    Col("submitter", "str", "Submitting organization as published"),
    Col("system", "str", "System name as published"),
    Col("accelerator", "str", _ACC_DESC, required=False, isin=ids.ACCELERATORS),
    Col("accelerator_raw", "str", "Accelerator name exactly as published"),
    Col(
        "vendor", "str", "Accelerator vendor (only AMD and NVIDIA rows are kept)", isin=ids.VENDORS
    ),
)


MLPERF_INFERENCE = Table(
    name="mlperf_inference",
    path="benchmarks/mlperf_inference.csv",
    description=(
        "MLPerf Inference LLM results: closed division, datacenter suite (including systems "
        "submitted as `datacenter,edge`), AMD and NVIDIA accelerators, Offline/Server/Interactive "
        "scenarios, one row per published result. Built by `python -m analysis ingest mlperf` "
        "from the round summaries (`summary_results.json` or `summary.csv`); never edited by "
        "hand. `result` is the official MLPerf result; `result_per_accelerator` is derived "
        "(result / total accelerators) and is NOT an official MLPerf metric. For many systems "
        "the `llama2-70b-99` and `llama2-70b-99.9` rows are the same run: both rows are kept "
        "and the `-99` row names its `-99.9` sibling in `duplicate_of`; drop rows with "
        "`duplicate_of` set to count distinct runs. " + INFERENCE_PROVENANCE
    ),
    key=("round", "mlperf_id", "benchmark", "scenario"),
    columns=(
        *_COMMON_SYSTEM_COLS,
        # 1 to 10 in the tables (72 for an NVL72 node); NVL576 (announced) x 2.
        Col(
            "accelerators_per_node",
            "int",
            "Accelerators per node (MLPerf `a#`)",
            unit="accelerators",
            ge=1,
            le=1_152,
        ),
        # 1 to 1,452 nodes (MLPerf Training's largest system, 11,616 GPUs).
        Col("nodes", "int", "Number of nodes", unit="nodes", ge=1, le=100_000),
        # Up to 11,616 (MLPerf Training v5.0); the largest clusters are ~200k GPUs.
        Col(
            "total_accelerators",
            "int",
            "nodes x accelerators_per_node (MLPerf's count; the v6.0 AMD cluster named "
            "'(x87)' counts 11 x 8 = 88)",
            unit="accelerators",
            ge=1,
            le=1_000_000,
        ),
        Col(
            "benchmark",
            "str",
            "MLPerf benchmark id as MLPerf names it (`-99`/`-99.9` = "
            "accuracy target); interactive variants are normalized to scenario `Interactive`",
            isin=INFERENCE_BENCHMARKS,
        ),
        Col("model", "str", "Canonical model id (analysis.ids)", isin=ids.MODELS),
        Col(
            "scenario",
            "str",
            "MLPerf scenario (Interactive = Server with tighter latency bounds)",
            isin=INFERENCE_SCENARIOS,
        ),
        # Whole-system results: 203 to 2.5 M tokens/s; 1e9 is 400x the largest.
        Col(
            "result",
            "float",
            "Official MLPerf result (whole system)",
            unit="see `units`",
            gt=0,
            le=1e9,
        ),
        Col("units", "str", "Units of `result` as published (normally `Tokens/s`)"),
        # 25 to 21k tokens/s per accelerator; 1e7 is 500x.
        Col(
            "result_per_accelerator",
            "float",
            "DERIVED, not an official MLPerf metric: result / total_accelerators, rounded "
            "to 3 decimals",
            unit="`units` per accelerator",
            gt=0,
            le=1e7,
        ),
        # 143 to 3,818 tokens; at most a context length (<= 10 M).
        Col(
            "tokens_per_sample",
            "float",
            "Mean output length: TOKENS_PER_SAMPLE from the "
            "published Accuracy field (empty where the round does not report it)",
            unit="tokens",
            required=False,
            gt=0,
            le=10_000_000,
        ),
        Col(
            "weight_precision",
            "str",
            "Weight data types as published (`weight_data_types`)",
            required=False,
        ),
        Col(
            "precision",
            "str",
            "Canonical weight precision: fp16/bf16 -> bf16, fp8 -> fp8, "
            "fp4/mxfp4/nvfp4 -> fp4; empty for integer, UNSET or mixed",
            required=False,
            isin=ids.PRECISIONS,
        ),
        Col("software", "str", "Framework / software stack as published", required=False),
        Col(
            "availability",
            "str",
            "MLPerf availability category",
            isin=AVAILABILITIES,
        ),
        Col(
            "mlperf_id",
            "str",
            "MLPerf system id `suite/division/submitter/platform` (the "
            "`Unique ID (e.g. for Audit)` of summary_results.json; derived from the same "
            "fields in summary.csv)",
        ),
        Col(
            "result_id",
            "str",
            "Published result id (`ID`, e.g. `5.1-0001`) where the source "
            "has one (summary_results.json); empty from summary.csv",
            required=False,
        ),
        Col(
            "results_path",
            "str",
            "Path of the result in the MLCommons results repository (`Location`)",
        ),
        Col(
            "duplicate_of",
            "str",
            "Set on a `-99` row whose result equals its `-99.9` sibling "
            "(same system, round and scenario): the sibling's benchmark id",
            required=False,
            isin=INFERENCE_BENCHMARKS,
        ),
        Col(
            "caveat",
            "str",
            "What a reader must know about this row (power cap, "
            "virtualization, accelerator count in the name, mislabelled units, ...)",
            required=False,
        ),
        Col(
            "source_file",
            "str",
            "Raw file the row came from (stable relative path, e.g. "
            "`shared/data/mlperf/inference_v5.1_summary_results.json`)",
        ),
        # Row index in a compiled MLCommons table (< 1,000 today).
        Col(
            "source_row",
            "int",
            "0-based record index in `source_file` (JSON array index, "
            "or CSV data row without the header)",
            ge=0,
            le=10_000_000,
        ),
        ACCESSED_COL,
    ),
    checks=(_check_accelerator_vendor, _check_total_accelerators, _check_duplicate_of),
)


MLPERF_TRAINING = Table(
    name="mlperf_training",
    path="benchmarks/mlperf_training.csv",
    description=(
        "MLPerf Training LLM results (time to train), one row per system and benchmark, AMD "
        "and NVIDIA accelerators, all divisions present in the source (v4.0-v5.0: closed "
        "only; keep `division` in filters). `time_to_train_min` is the official result "
        "(MLCommons' summarizer score: olympic mean of the successful runs with scaling.json "
        "and RCP normalization); empty where no run log was readable. " + TRAINING_PROVENANCE
    ),
    key=("round", "results_path"),
    columns=(
        *_COMMON_SYSTEM_COLS,
        # 1 to 1,452 nodes (MLPerf Training's largest system, 11,616 GPUs).
        Col("nodes", "int", "Number of nodes", unit="nodes", ge=1, le=100_000),
        # 1 to 10 in the tables (72 for an NVL72 node); NVL576 (announced) x 2.
        Col(
            "accelerators_per_node",
            "int",
            "Accelerators per node",
            unit="accelerators",
            ge=1,
            le=1_152,
        ),
        # Up to 11,616 (MLPerf Training v5.0); the largest clusters are ~200k GPUs.
        Col(
            "total_accelerators",
            "int",
            "nodes x accelerators_per_node",
            unit="accelerators",
            ge=1,
            le=1_000_000,
        ),
        Col("benchmark", "str", "MLPerf Training benchmark id", isin=TRAINING_BENCHMARKS),
        Col(
            "model",
            "str",
            "Canonical model id of the benchmark (empty for gpt3, which has none)",
            required=False,
            isin=ids.MODELS,
        ),
        # 0.56 to 269 min; 100,000 min is ~70 days (MLPerf runs take hours).
        Col(
            "time_to_train_min",
            "float",
            "Official time to train (summarizer score)",
            unit="min",
            required=False,
            gt=0,
            le=100_000,
        ),
        # Same range as time_to_train_min.
        Col(
            "olympic_mean_min_raw",
            "float",
            "Olympic mean of the successful runs before scaling/RCP normalization",
            unit="min",
            required=False,
            gt=0,
            le=100_000,
        ),
        # MLPerf Training asks for up to 10 runs per submission (0-10 here).
        Col(
            "n_success_runs",
            "int",
            "Runs that reached the quality target",
            unit="runs",
            ge=0,
            le=100,
        ),
        Col("software", "str", "Framework as published", required=False),
        Col(
            "availability",
            "str",
            "Normalized availability (`preview` if published as Preview, else `available`)",
            isin=AVAILABILITIES,
        ),
        Col("availability_raw", "str", "Availability as published (on-premise / cloud ...)"),
        Col("division", "str", "MLPerf division", isin=("closed", "open")),
        Col("caveat", "str", "What a reader must know about this row", required=False),
        Col("source_file", "str", "Compiled table the row came from (stable relative path)"),
        # Row index in a compiled MLCommons table (< 1,000 today).
        Col("source_row", "int", "0-based data row index in `source_file`", ge=0, le=10_000_000),
        Col("results_path", "str", "Results folder in the MLCommons repository"),
        Col("repo", "str", "MLCommons results repository (`owner/name`)"),
        Col("commit", "str", "Commit of `repo` the logs were read at", pattern=r"^[0-9a-f]{40}$"),
        ACCESSED_COL,
    ),
    checks=(_check_accelerator_vendor, _check_total_accelerators),
)


#: Sources of ``published_training`` (one hold-out group each in the validation).
PUBLISHED_TRAINING_SOURCES: tuple[str, ...] = (
    "amd-rocm-blog-primus-projection",
    "meta-llama3-herd",
    "nvidia-automodel-perf",
    "nvidia-megatron-bridge-perf",
    "nvidia-nemo-framework-perf",
)

#: Sources of ``mlperf_training_holdout``: MLPerf Training v5.1, one per submitter.
HOLDOUT_TRAINING_SOURCES: tuple[str, ...] = (
    "mlperf-training-v5.1-amd",
    "mlperf-training-v5.1-nvidia",
    "mlperf-training-v5.1-university-of-florida",
)

#: Why the newer round sits in its own table (the shared MLPerf README's rule).
HOLDOUT_RULE = (
    "The shared MLPerf data (`../shared/data/mlperf/README.md`) holds MLPerf Training v4.0 to "
    'v5.0 only: "Newer rounds exist and are deliberately not here: they are kept aside to '
    "validate the project's models on results the models were not fitted to.\" "
)


def _check_published_tokens(df: pd.DataFrame) -> list[str]:
    """A measured row has its tokens/s; a derived one has TFLOPs and no tokens/s."""
    derived = df["tokens_derived"] == "yes"
    bad = df.index[
        (~derived & df["tokens_per_s_per_gpu"].isna())
        | (derived & (df["tokens_per_s_per_gpu"].notna() | df["model_tflops_per_gpu"].isna()))
    ]
    return [
        f"row {i + 2}: tokens_per_s_per_gpu must be given unless tokens_derived is 'yes' "
        "(then model_tflops_per_gpu is the published figure)"
        for i in bad[:10]
    ]


def _check_published_batch(df: pd.DataFrame) -> list[str]:
    """Each row states its global batch or, failing that, its micro batch per GPU."""
    bad = df.index[df["global_batch_seqs"].isna() & df["micro_batch_seqs"].isna()]
    return [f"row {i + 2}: give global_batch_seqs or micro_batch_seqs" for i in bad[:10]]


def _published_columns(sources: tuple[str, ...], source_doc: str) -> tuple[Col, ...]:
    # the columns of the published table and its held-aside MLPerf twin (same provenance)
    return (
        Col("source", "str", source_doc, isin=sources),
        Col("url", "str", "Where the table is published", pattern=r"^https://"),
        Col("document", "str", "Document and section (e.g. the NeMo container release)"),
        Col("publisher", "str", "Who published the figure"),
        Col(
            "document_date",
            "str",
            "Date of the document: the paper's arXiv date, the month of the NeMo container "
            "release the table is labelled with (26.02 = 2026-02), the day a repository "
            "document was committed, or the MLPerf results publication day",
            pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        ),
        Col("accessed", "date", "Day the source was read"),
        Col("framework", "str", "Training framework and release as published"),
        Col("system", "str", "System as published"),
        Col("accelerator", "str", "Canonical accelerator id", isin=ids.ACCELERATORS),
        Col("vendor", "str", "Accelerator vendor", isin=ids.VENDORS),
        Col("model", "str", "Canonical model id (architecture trained)", isin=ids.MODELS),
        Col("precision", "str", "Canonical training precision", isin=ids.PRECISIONS),
        Col("precision_raw", "str", "Precision recipe as published (FP8-CS, MXFP8, NVFP4, BF16)"),
        # 8 to 16,384 GPUs published; the largest clusters are ~200k GPUs.
        Col("n_gpus", "int", "GPUs in the run", unit="GPUs", ge=1, le=1_000_000),
        # 64 to 4,096 sequences; Llama 3 405B's 16M tokens is 2,048 x 8k.
        Col(
            "global_batch_seqs",
            "int",
            "Global batch size (empty when the document states only the micro batch)",
            unit="sequences",
            required=False,
            ge=1,
            le=1_000_000,
        ),
        # 1 to 4 sequences per GPU and microbatch where a document states only that.
        Col(
            "micro_batch_seqs",
            "int",
            "Micro batch per GPU, where the document states it instead of the global batch",
            unit="sequences",
            required=False,
            ge=1,
            le=100_000,
        ),
        # 4,096 to 8,192 tokens; at most a context length (<= 10 M).
        Col("seq_len", "int", "Sequence length", unit="tokens", ge=1, le=10_000_000),
        # 1 to 8; at most a scale-up domain (<= 1,152, see the spec ranges).
        Col("tp", "int", "Tensor-parallel size as published", ge=1, le=1_152),
        # 1 to 16 stages; at most the layers (<= 1,000 in models.csv).
        Col("pp", "int", "Pipeline-parallel size as published", ge=1, le=1_024),
        # 1 to 2 published; Llama 3 used 16 for long context.
        Col("cp", "int", "Context-parallel size as published", ge=1, le=1_024),
        # 4 to 8 virtual stages; at most the layers.
        Col("vp", "int", "Virtual pipeline stages as published", required=False, ge=1, le=1_024),
        # 1 to 64; at most the experts (<= 4,096 in models.csv).
        Col("ep", "int", "Expert-parallel size as published", required=False, ge=1, le=4_096),
        Col(
            "fsdp",
            "int",
            "1 = FSDP, 0 = data parallel with distributed optimizer",
            isin=None,
            ge=0,
            le=1,
        ),
        # 311 to 37,556 tokens/s per GPU; 1e7 is 250x the largest.
        Col(
            "tokens_per_s_per_gpu",
            "float",
            "Published training throughput per GPU (empty when only TFLOPs are published)",
            unit="tokens/s/GPU",
            required=False,
            gt=0,
            le=1e7,
        ),
        # 163 to 3,365 TFLOP/s per GPU; never above a part's peak (FP4 range: <= 200,000).
        Col(
            "model_tflops_per_gpu",
            "float",
            "Published model TFLOP/s per GPU (the publisher's own FLOPs accounting)",
            unit="TFLOP/s/GPU",
            required=False,
            gt=0,
            le=200_000,
        ),
        Col(
            "tokens_derived",
            "str",
            "'yes' when tokens/s must be derived from TFLOPs; 'samples' when tokens/s was "
            "computed from a logged samples/s (samples/s x seq_len / GPUs, MLPerf result logs); "
            "'no' when tokens/s is published",
            isin=("yes", "no", "samples"),
        ),
        Col("note", "str", "What a reader must know about this row", required=False),
    )


PUBLISHED_TRAINING = Table(
    name="published_training",
    path="benchmarks/published_training.csv",
    description=(
        "Published pre-training throughput from the framework vendors' own performance tables "
        "and papers, one row per published configuration, each citing its document, URL, "
        "document date and access date. Transcribed by hand from the sources (numbers as "
        "published, or computed from MLPerf logs by the rule in the row's note; nothing "
        "estimated). NVIDIA: Megatron Bridge performance summary archive "
        "(NeMo 25.11 and 26.02 containers; Llama 3 8B/70B, Llama 3.1 405B, DeepSeek-V3, "
        "GPT-OSS 120B on DGX H100, B200, B300, GB200, GB300); NeMo Framework performance summary "
        "(NeMo 25.02 and 25.04 containers: Mixtral 8x7B at FP8 on DGX B200 and GB200); NeMo "
        "AutoModel performance summary (PyTorch backend, 2026-04-17: DeepSeek-V3, GPT-OSS 120B "
        "and Llama 3 70B at BF16 on DGX H100). Meta: The Llama 3 Herd of Models "
        "(Grattafiori et al. 2024), Table 4, the 8K-context stage of the 405B run on 8,192 and "
        "16,384 H100 (tokens/s per GPU DERIVED from the published TFLOPs/GPU with the model's "
        "FLOPs per token; see `tokens_derived`). AMD: the ROCm blog 'Primus Projection' "
        "(2026-04-24), which quotes the measured 8-node MI325X Llama 3.1 8B and 70B figures "
        "of AMD's ROCm performance-results page (rocm/primus:v26.1, released 2026-01-21) and "
        "its own 1-node 8B figure; it states the micro batch per GPU, not the global batch "
        "(`micro_batch_seqs`; the fit then takes one microbatch per data-parallel rank). "
        "AMD's MLPerf Training v5.1 rows are in `mlperf_training_v5.1_holdout.csv`, which no "
        "fit reads (no `mlperf-training-*` source is allowed in this table). The stored "
        "copies of AMD's performance-results page itself hold only its inference tables, "
        "and AMD's ROCm 7 MI355X training blog states ratios to B200, not throughput. "
        "Llama 3 8B/70B "
        "rows use the Llama 3.1 ids (same architecture); "
        "DeepSeek-V3 rows use `deepseek-r1` (same architecture)."
    ),
    key=("source", "document", "system", "model", "precision_raw", "n_gpus", "seq_len"),
    columns=_published_columns(
        PUBLISHED_TRAINING_SOURCES,
        "Hold-out group: one publisher's document (no MLPerf Training source: the v5.1 "
        "rows are the forward validation set, `mlperf_training_v5.1_holdout.csv`)",
    ),
    checks=(_check_published_tokens, _check_published_batch),
)


MLPERF_TRAINING_HOLDOUT = Table(
    name="mlperf_training_holdout",
    path="benchmarks/mlperf_training_v5.1_holdout.csv",
    description=(
        "MLPerf Training v5.1 pre-training throughput, a FORWARD VALIDATION SET: no "
        "calibration, fold or scenario reads it; the training validation predicts each row "
        "from the model fitted on everything else. "
        + HOLDOUT_RULE
        + "The columns are `published_training`'s, one row per submission, read from the "
        "result logs (mlcommons/training_results_v5.1, 2025-11-12; one source per "
        "submitter): the llama31_8b runs on 8 GPUs of AMD (MI355X and MI350X, FP8) and "
        "NVIDIA (GB300 and GB200, NVFP4), NVIDIA's llama31_8b runs on 72 and 512 GB300 and "
        "GB200 (FP8) and NVIDIA's llama31_405b runs on 512 GB300 and GB200, 2,560 and 5,120 "
        "GB200 (NVFP4), and the University of Florida's llama31_405b runs on 256 and 448 DGX "
        "B200 GPUs (FP8); tokens/s per GPU computed from the logged steady-state samples/s "
        "(`tokens_derived` = 'samples'; the note states the rule and the runs read)."
    ),
    key=("source", "document", "system", "model", "precision_raw", "n_gpus", "seq_len"),
    columns=_published_columns(
        HOLDOUT_TRAINING_SOURCES, "Submitter's MLPerf Training v5.1 results (one per submitter)"
    ),
    checks=(_check_published_tokens, _check_published_batch),
)


#: Publication day of each MLPerf Training round the logs table covers (the ``document_date``
#: of every row of that round): v5.0 from MLCommons' release "New MLPerf Training v5.0
#: Benchmark Results Reflect Rapid Growth and Evolution of the Field of AI" (GlobeNewswire,
#: San Francisco, June 04, 2025; https://mlcommons.org/2025/06/mlperf-training-v5-0-results/,
#: accessed 2026-12-06); v4.0 and v4.1 are MLCommons' announcement days as recalled, not
#: re-read against a stored page (the rows' provenance rests on the logs, not on this date).
TRAINING_ROUND_DATES: dict[str, str] = {
    "v4.0": "2024-06-12",
    "v4.1": "2024-11-13",
    "v5.0": "2025-06-04",
}


def _check_log_round_dates(df: pd.DataFrame) -> list[str]:
    """Each row's ``document_date`` is its round's publication day."""
    want = df["round"].map(TRAINING_ROUND_DATES)
    bad = df.index[want.notna() & (df["document_date"] != want)]
    return [
        f"row {i + 2}: document_date must be {want[i]} for round {df.at[i, 'round']}"
        for i in bad[:10]
    ]


MLPERF_TRAINING_LOGS = Table(
    name="mlperf_training_logs",
    path="benchmarks/mlperf_training_logs.csv",
    description=(
        "What the MLPerf Training v4.0-v5.0 run logs (MLLOG `result_N.txt`) state about each "
        "`mlperf_training` submission: the global batch the run used (`global_batch_size`), "
        "its gradient accumulation and, where the log has them, the steady-state training "
        "rate (`tracked_stats` throughput, samples/s over the training blocks after the "
        "first, evaluation excluded; GPT-3 and DeepSpeed logs print none) and the samples "
        "at `run_stop`. One row per submission "
        "(`round`, `results_path`: the key of `mlperf_training`), read from one run log of "
        "that submission; the log's repository, commit and path are the row's source "
        "(public copies of the MLCommons results repositories at, or after, the commit the "
        "compiled time-to-train table names; result files are not changed after a round is "
        "published). Submissions whose logs could not be read are absent and keep the "
        "modelled batch policy. Transcribed from the logs, nothing estimated (Apache-2.0, "
        "MLCommons; the rows' submissions are those of `mlperf_training`)."
    ),
    key=("round", "results_path"),
    columns=(
        Col("round", "str", "MLPerf Training round", isin=tuple(TRAINING_ROUND_DATES)),
        Col("results_path", "str", "Results folder in the MLCommons repository"),
        Col("benchmark", "str", "MLPerf Training benchmark id", isin=TRAINING_BENCHMARKS),
        # Up to 11,616 (MLPerf Training v5.0); the largest clusters are ~200k GPUs.
        Col(
            "total_accelerators",
            "int",
            "Accelerators of the submission",
            unit="accelerators",
            ge=1,
            le=1_000_000,
        ),
        # 8 to 2,904 sequences in these rounds; a global batch is at most a few million.
        Col(
            "global_batch_seqs",
            "int",
            "Global batch of the run (MLLOG `global_batch_size`)",
            unit="sequences",
            ge=1,
            le=10_000_000,
        ),
        Col(
            "batch_from",
            "str",
            "Where the batch was read: the MLLOG `global_batch_size` line, or the framework's "
            "configuration printout at the top of the same log (`model.global_batch_size`)",
            isin=("mllog", "config-echo"),
        ),
        # 1 to 512 as logged.
        Col(
            "gradient_accumulation_steps",
            "int",
            "Microbatches per optimizer step and data-parallel rank, as logged",
            required=False,
            ge=1,
            le=100_000,
        ),
        # 0.3 to 291 samples/s in these logs (LoRA on 4 GPUs to 405B on 8,192).
        Col(
            "steady_samples_per_s",
            "float",
            "Logged training rate, global samples/s (`tracked_stats` throughput; evaluation "
            "excluded): the median over the blocks after the first (warm-up) block, or the "
            "last block's where only the log's tail was read (`steady_blocks` = 1, the note "
            "says so)",
            unit="samples/s",
            required=False,
            gt=0,
            le=1_000_000,
        ),
        # 1 to ~30 blocks per run.
        Col(
            "steady_blocks",
            "int",
            "Blocks the steady rate is the median of",
            unit="blocks",
            required=False,
            ge=1,
            le=100_000,
        ),
        # 2,688 to ~14,000 samples for the LoRA benchmark.
        Col(
            "run_stop_samples",
            "int",
            "Samples trained when the run reached its target (`run_stop` samples_count)",
            unit="samples",
            required=False,
            ge=1,
            le=10_000_000_000,
        ),
        Col("log_repo", "str", "Repository the log was read from (`owner/name`)"),
        Col("log_commit", "str", "Commit of `log_repo` read", pattern=r"^[0-9a-f]{40}$"),
        Col("log_path", "str", "Run log read (path in `log_repo`)"),
        Col(
            "document_date",
            "str",
            "Publication day of the round's results",
            pattern=r"^\d{4}-\d{2}-\d{2}$",
        ),
        Col("accessed", "date", "Day the log was read"),
        Col("note", "str", "How the values were read (pages, numbering quirks)", required=False),
    ),
    checks=(_check_log_round_dates,),
)
