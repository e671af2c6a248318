"""Training model inputs: constants, MLPerf benchmark definitions and table lookups.

Analytical decisions: every modelling constant is defined here once, cited where it is
defined and registered in ``data/assumptions/assumptions.csv`` when it is a judgement; work
per token follows the PaLM accounting (``6 N_active + 12 L d_attn s``; ``4 N`` for LoRA's
frozen base); MLPerf's tokens to converge come from MLCommons' reference convergence points.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis import hardware, ids
from analysis.inputs import Inputs, resolve

#: GPUs per server node: HGX/DGX and AMD OAM platforms are 8-GPU nodes (vendor datasheets).
NODE_GPUS = 8
#: Powers of two from one node to 16,384 GPUs: the scaling curves' x axis (issue 5).
CURVE_GPU_COUNTS: tuple[int, ...] = tuple(2**k for k in range(3, 15))
#: Layout search space (issue 5): TP inside the scale-up domain, PP up to 16.
TP_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
PP_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16)
#: Virtual pipeline stages per GPU (interleaved 1F1B, Narayanan et al. 2021; NeMo's
#: large-model recipes use 2-8; assumption: up to 4, limited by layers per stage).
PP_INTERLEAVE = 4  # register: A-training-pp-interleave
#: 1 = ZeRO-1 (optimizer state sharded over DP); 3 = FSDP / ZeRO-3 (weights, gradients and
#: optimizer state sharded; 1.5x the gradient traffic: Rajbhandari et al. 2020, sec. 7).
ZERO_CHOICES: tuple[int, ...] = (1, 3)
#: Context-parallel sizes (Megatron CP / ring attention; Llama 3 used CP 16 at 131K context).
CP_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16)
#: Shortest sequence chunk per CP rank worth splitting for (assumption: below about 1K
#: tokens the ring steps cannot hide behind the attention compute).
MIN_CP_CHUNK_TOKENS = 1024
#: Microbatches per DP rank of the unconstrained per-GPU reference (enough that the
#: pipeline bubble and the once-per-step gradient traffic amortize).
REFERENCE_MICROBATCHES = 64
#: 0 = selective recomputation (Korthikanti et al. 2022), 1 = full recomputation.
RECOMPUTE_CHOICES: tuple[int, ...] = (0, 1)

#: Bytes per parameter: bf16 weights 2, bf16 gradients 2, fp32 master + Adam m, v 12
#: (Rajbhandari et al. 2020, "ZeRO", sec. 3.1: 2 + 2 + 12 = 16 bytes per parameter).
BYTES_WEIGHT, BYTES_GRAD, BYTES_OPTIM = 2.0, 2.0, 12.0
#: Activation bytes per layer per token (x hidden): sequence parallel + selective
#: recomputation 34 / t, full recomputation 2 / t (Korthikanti et al. 2022, Table 2).
ACT_BYTES_SELECTIVE, ACT_BYTES_FULL = 34.0, 2.0
#: Assumption: fraction of HBM usable for the training state (allocator fragmentation,
#: workspaces, communication buffers take the rest).
USABLE_MEMORY_FRACTION = 0.90  # register: A-training-memory-usable
#: Assumption: achieved collective bus bandwidth over the nominal link rate (NCCL/RCCL
#: all-reduce bus bandwidth on NVLink/xGMI and 400G RDMA is typically 75-85% of line rate).
LINK_EFFICIENCY = 0.80  # register: A-training-link-efficiency
#: Assumption: fraction of the last microbatch's backward pass that hides the gradient
#: reduction (bucketed, overlapped reduce as in PyTorch DDP / Megatron distributed optimizer).
DP_OVERLAP = 0.8  # register: A-training-dp-overlap
#: Assumption: latency of one collective step on the scale-up fabric and across nodes
#: (NCCL/RCCL small-message latency: a few microseconds per NVLink/xGMI ring step, about
#: 10-20 us per inter-node tree level on 400G RDMA).
COLLECTIVE_LATENCY_UP_S = 5e-6  # register: A-training-latency-up
COLLECTIVE_LATENCY_OUT_S = 15e-6  # register: A-training-latency-out
#: Assumption: fixed cost of one optimizer step beyond the optimizer's HBM pass and the
#: gradient reduction: the gradient-norm and loss all-reduces (two small collectives over
#: every GPU), the optimizer's and the step's kernel launches (each "on the order of
#: microseconds", NVIDIA, docs.nvidia.com/dl-cuda-graph; MLPerf recipes capture the step
#: in CUDA graphs) and the host's step bookkeeping. A per-layer launch cost per microbatch
#: was tried and left out: on the fit rows any value above zero raises the in-sample error.
STEP_OVERHEAD_S = 2e-3  # register: A-training-step-overhead
#: Gradient bucket of the data-parallel reduction (PyTorch DDP's default bucket is 25 MB,
#: Megatron's distributed optimizer uses about 40M parameters per bucket); one collective
#: per bucket.
DP_BUCKET_BYTES = 40e6
#: Optimizer step: bytes of HBM traffic per locally held parameter (read + write of the
#: 16-byte state plus the gradient), assumption.
OPTIMIZER_BYTES_PER_PARAM = 36.0  # register: A-training-optimizer-bytes
#: Bytes per GEMM operand element at each training precision (the tensor-core input format:
#: FP8 recipes feed 1-byte copies of the weights, NVFP4/MXFP4 half a byte plus scales).
PRECISION_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5}
#: Assumption: HBM passes over the ``k`` routed copies of each token's hidden vector in one
#: MoE layer, forward and backward together, outside the GEMMs: the permutation into
#: per-expert order, staging and receiving the all-to-all buffers, the un-permutation and
#: the weighted combine (about 6 forward, mirrored in the backward pass; Megatron-Core
#: ``moe_permute``/``moe_unpermute`` and DeepEP buffers). Memory-bound, so precision does not
#: speed it up.
MOE_PERMUTE_PASSES = 12.0  # register: A-training-moe-permute-passes
#: LoRA trainable fraction (rank 16 adapters on the attention projections of Llama 2 70B,
#: MLPerf reference: about 0.1% of the parameters).
LORA_TRAINABLE_FRACTION = 0.001
#: Assumption: realized FP8 speedup over BF16 at the same layout (NVIDIA NeMo performance
#: tables show about 1.3-1.5x for 70B-class pre-training on H100); used to carry an
#: FP8-relative efficiency to BF16. FP4 over FP8 assumed 1.3x.
FP8_OVER_BF16_SPEEDUP = 1.4  # register: A-training-fp8-speedup
FP4_OVER_FP8_SPEEDUP = 1.3  # register: A-training-fp4-speedup
#: Precision of every MLPerf Training LLM submission v4.0-v5.0 (see module docstring).
MLPERF_PRECISION = "fp8"
#: Highest efficiency the fit may return (above it the model, not the hardware, is wrong).
MAX_EFFICIENCY = 1.0

#: Nearest measured part of the same vendor, for parts without MLPerf Training results.
PROXY: dict[str, str] = {
    "H200": "H100-SXM",
    "B300": "B200",
    "GB300": "GB200",
    "VR200": "GB200",
    "B200": "GB200",
    "GB200": "B200",
    "MI325X": "MI300X",
    "MI350X": "MI325X",
    "MI355X": "MI325X",
    "MI455X": "MI355X",
    "MI300X": "MI325X",
    "H100-SXM": "H200",
}

PRETRAIN_BENCHMARKS = ("llama31_405b", "gpt3", "llama31_8b")


@dataclass(frozen=True)
class Benchmark:
    """One MLPerf Training LLM benchmark: model, sequence length, RCP table, batch policy."""

    model: str
    seq_len: int
    lora: bool
    #: Reference global batch sizes (sequences) with their mean work to converge.
    rcp_batch: tuple[int, ...]
    #: Mean tokens to converge at each reference batch size.
    rcp_tokens: tuple[float, ...]
    #: Batch policy: sequences per GPU before clipping to the RCP range.
    seqs_per_gpu: float
    description: str


#: MLPerf Training LLM benchmarks. Work to converge: means of MLCommons' reference
#: convergence points, ``mlcommons/logging`` ``mlperf_logging/rcp_checker``:
#: ``training_5.0.0/rcps_llama2_70b_lora.json`` (samples of 8,192 tokens, GovReport/SCROLLS),
#: ``training_5.0.0/rcps_llama31_405b.json`` (counted in tokens, C4),
#: ``training_5.1.0/rcps_llama31_8b.json`` (samples of 8,192 tokens, C4) and
#: ``training_4.1.0/rcps_gpt3.json`` (tokens, C4, sequence 2,048; the BS 6144 entry's
#: placeholder values of 1 are dropped). Batch policy (assumption): lora one sequence per
#: eight GPUs, the logs' pattern (8 sequences on 4 to 64 GPUs, 16 on 128, 48 on 384, 64 on
#: 512, 128 on 1,024, with a few 16-64 exceptions at 32-64 GPUs); pre-training a quarter of
#: a sequence per GPU (set on NVIDIA H100 submissions); both clipped to the reference batch
#: sizes that have convergence data. It stands in only where a submission's run log states
#: no batch (9 of 137; ``mlperf_training_logs`` holds the logged ones) and for counts nobody
#: submitted.
BENCHMARKS: dict[str, Benchmark] = {
    "llama2_70b_lora": Benchmark(
        model="llama2-70b",
        seq_len=8192,
        lora=True,
        rcp_batch=(8, 16, 32, 128),
        rcp_tokens=tuple(s * 8192.0 for s in (3187.2, 4051.2, 6028.8, 11289.6)),
        seqs_per_gpu=0.125,
        description="LoRA fine-tuning of Llama 2 70B on GovReport (SCROLLS), seq 8,192",
    ),
    "llama31_8b": Benchmark(
        model="llama3.1-8b",
        seq_len=8192,
        lora=False,
        rcp_batch=(32, 64, 96, 128),
        rcp_tokens=tuple(s * 8192.0 for s in (179404.8, 226713.6, 278640.0, 345907.2)),
        seqs_per_gpu=1.0,
        description="Pre-training Llama 3.1 8B on C4, seq 8,192",
    ),
    "llama31_405b": Benchmark(
        model="llama3.1-405b",
        seq_len=8192,
        lora=False,
        rcp_batch=(1152, 2304),
        rcp_tokens=(2642411520.0, 3145728000.0),
        seqs_per_gpu=0.25,
        description="Continued pre-training of Llama 3.1 405B on C4, seq 8,192",
    ),
    "gpt3": Benchmark(
        model="gpt3-175b",
        seq_len=2048,
        lora=False,
        rcp_batch=(1536, 2048, 3072, 4096, 6144, 8192),
        rcp_tokens=(
            1199570944.0,
            1182793728.0,
            1216348160.0,
            1266679808.0,
            1409286144.0,
            1627389952.0,
        ),
        seqs_per_gpu=0.25,
        description="GPT-3 175B pre-training from a checkpoint on C4, seq 2,048",
    ),
}

#: GPT-3 175B is not in the report's model table (no one buys hardware to train it now);
#: its shape from Brown et al. 2020, Table 2.1 (96 layers, d_model 12,288, 96 heads).
GPT3_ARCH: dict[str, float] = {
    "total_params_b": 175.0,
    "active_params_b": 175.0,
    "layers": 96,
    "hidden_size": 12288,
    "attention_heads": 96,
    "kv_heads": 96,
    "head_dim": 128,
    "vocab_size": 50257,
    "experts": 1,
    "active_experts": 1,
}


# Leaves read the inputs they are given; each public function resolves ``inputs=None`` to
# the default inputs (``analysis.inputs.resolve``) once, at its entry, and passes it down.
def _load_specs(inputs: Inputs) -> pd.DataFrame:
    return inputs.specs


def _load_models(inputs: Inputs) -> pd.DataFrame:
    return inputs.models


def _load_mlperf(inputs: Inputs) -> pd.DataFrame:
    return inputs.table("mlperf_training")


def _first_row(frame: pd.DataFrame, col: str, key: str) -> dict[str, Any] | None:
    pos = np.flatnonzero((frame[col] == key).to_numpy(dtype=bool, na_value=False))
    return frame.iloc[int(pos[0])].to_dict() if len(pos) else None


def _memo(inputs: Inputs, kind: str, key: str, compute: Callable[[pd.DataFrame], Any]) -> Any:
    # ``compute(frame)`` once per inputs and (kind, key); frame = its specs/models.
    def build() -> Any:
        return compute(inputs.specs if kind == "spec" else inputs.models)

    return inputs.derived(("training.row", kind, key), build)


def spec_row(
    accelerator: str, specs: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> dict[str, object]:
    """The spec table's row for ``accelerator`` as a dict; ValueError for unknown ids.

    From ``specs`` when given, else from ``inputs.specs`` (default: the default inputs).
    """
    if accelerator not in ids.ACCELERATORS:
        raise ValueError(ids.unknown_id_message("accelerator", accelerator, ids.ACCELERATORS))
    if specs is None:
        inp = resolve(inputs)
        row = _memo(
            inp,
            "spec",
            accelerator,
            lambda f: _first_row(f, "accelerator", accelerator),
        )
    else:
        row = _first_row(specs, "accelerator", accelerator)
    if row is None:
        # the frame only for the message (a copy of the inputs' specs costs a lookup's time)
        frame = _load_specs(resolve(inputs)) if specs is None else specs
        known = tuple(frame["accelerator"])
        raise ValueError(ids.unknown_id_message("accelerator (no spec row)", accelerator, known))
    return dict(row)


def model_arch(
    model: str, models: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> dict[str, float]:
    """Shape of ``model`` (parameters in billions, layers, widths, experts).

    From ``models`` when given, else from ``inputs.models`` (default: the default inputs).
    """
    if model == "gpt3-175b":
        return dict(GPT3_ARCH)
    if model not in ids.MODELS:
        raise ValueError(ids.unknown_id_message("model", model, ids.MODELS))
    if models is None:
        return dict(_memo(resolve(inputs), "arch", model, lambda f: _model_arch(model, f)))
    return _model_arch(model, models)


def _model_arch(model: str, models: pd.DataFrame) -> dict[str, float]:
    row = _first_row(models, "model", model)
    if row is None:
        raise ValueError(
            ids.unknown_id_message("model (no row in data/models)", model, tuple(models["model"]))
        )
    arch = {
        k: float(row[k])
        for k in (
            "total_params_b",
            "active_params_b",
            "layers",
            "hidden_size",
            "attention_heads",
            "head_dim",
            "vocab_size",
        )
    }
    for k, default in (("kv_heads", row["attention_heads"]), ("experts", 1), ("active_experts", 1)):
        v = row.get(k, default)
        arch[k] = float(default if v is None or pd.isna(v) or v == 0 else v)
    return arch


def _benchmark(benchmark: str) -> Benchmark:
    if benchmark not in BENCHMARKS:
        raise ValueError(
            ids.unknown_id_message("MLPerf Training benchmark", benchmark, tuple(BENCHMARKS))
        )
    return BENCHMARKS[benchmark]


def _check_precision(precision: str) -> None:
    if precision not in ids.PRECISIONS:
        raise ValueError(ids.unknown_id_message("precision", precision, ids.PRECISIONS))


def peak_tflops(spec: Mapping[str, Any], precision: str) -> float:
    """Peak dense TFLOP/s of a spec row at ``precision``; ValueError when not supported."""
    _check_precision(precision)
    v = spec.get(hardware.PRECISION_COLUMNS[precision])
    if v is None or pd.isna(v) or float(v) <= 0:
        raise ValueError(
            f"{spec.get('accelerator')} has no {precision} dense TFLOP/s in the "
            "spec table; choose another precision"
        )
    return float(v)


def flops_per_token(arch: Mapping[str, float], seq_len: int, *, lora: bool = False) -> float:
    """Model FLOPs per trained token (PaLM App. B accounting; 4N instead of 6N for LoRA).

    >>> a = {"active_params_b": 1.0, "layers": 2, "attention_heads": 4, "head_dim": 64}
    >>> flops_per_token(a, 1024) == 6e9 + 12 * 2 * 256 * 1024
    True
    """
    dense = (4.0 if lora else 6.0) * arch["active_params_b"] * 1e9
    attn = 12.0 * arch["layers"] * arch["attention_heads"] * arch["head_dim"] * seq_len
    return dense + attn
