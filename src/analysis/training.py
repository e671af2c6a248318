"""Training step-time and scaling model, time and cost to train, calibration on MLPerf Training.

Analytical decisions (each constant is cited where it is defined):

* **Work per token.** Model FLOPs per trained token follow the PaLM accounting (Chowdhery
  et al. 2022, App. B; the same as Narayanan et al. 2021, "Efficient Large-Scale Language
  Model Training on GPU Clusters using Megatron-LM", eq. 3 without the recomputation
  term): ``6 * N_active + 12 * layers * (heads * head_dim) * seq_len``. LoRA fine-tuning
  (MLPerf ``llama2_70b_lora``) has no weight-gradient GEMMs for the frozen base, so its
  dense term is ``4 * N`` instead of ``6 * N``. MFU is model FLOPs over peak dense FLOPs
  at the training precision; recomputation is hardware work, not model work.
* **Step time** for a layout (TP x PP x DP, ZeRO-1 or FSDP, selective or full
  recomputation) is ``compute / efficiency + TP collectives + pipeline bubble + PP
  point-to-point + exposed data-parallel gradient reduction + optimizer step``. The
  efficiency is the only fitted number: the fraction of peak the GEMMs and kernels reach
  when nothing waits for the network. TP stays inside the scale-up domain; the gradient
  reduction is hierarchical (reduce-scatter/all-gather inside the domain, all-reduce of the
  shard across the scale-out network); it overlaps with the backward pass of the last
  microbatch only (:data:`DP_OVERLAP`); TP collectives are not overlapped (Megatron's
  default). The pipeline bubble is ``(PP - 1) / microbatches`` of the per-microbatch time
  (1F1B schedule, Narayanan et al. 2021).
* **Memory** per GPU (mixed-precision Adam, 16 bytes per parameter before sharding:
  Rajbhandari et al. 2020, "ZeRO") decides which layouts are feasible; activations follow
  Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
  Models"): ``34 s h / t`` bytes per layer with sequence parallelism and selective
  recomputation, ``2 s h / t`` with full recomputation (which costs one extra forward pass).
  The best feasible layout per GPU count comes from a small exhaustive search, vectorized
  over layouts x GPU counts with numpy.
* **Calibration.** MLPerf Training reports time to train to a quality target, so the
  tokens processed come from MLCommons' reference convergence points (RCPs, the mean
  samples or tokens to converge at each reference global batch size); the global batch a
  submitter used is not in the results table, so :func:`mlperf_batch_size` applies a stated
  policy. The efficiency is fitted per accelerator and benchmark at the *smallest* GPU
  count of at least one node (median of the submissions there); every submission at another GPU
  count of the same accelerator and benchmark is held out and predicted. All v4.0-v5.0 LLM
  submissions are modelled at FP8 (NVIDIA's NeMo and AMD's v5.0 submissions train these
  benchmarks in FP8); the efficiency is therefore relative to FP8 peak.
* **Transfer.** A scenario's job uses the accelerator's ``llama2_70b_lora`` fit (the only
  benchmark with both vendors, single-node, many submitters: like for like), converted from
  FP8 to the scenario's precision (:data:`FP8_OVER_BF16_SPEEDUP`); parts without a fit use
  the nearest measured part of the same vendor (:data:`PROXY`) and say so in
  ``mfu_source``. Announced parts are therefore projections. The pre-training fits are
  used only to predict the pre-training benchmarks themselves.
* **Scaling efficiency** is per-GPU throughput at ``n`` over per-GPU throughput at the
  baseline: one node (:data:`NODE_GPUS`) when the model fits there, else the smallest
  feasible power-of-two count above it. A larger count can relieve memory (ZeRO shards the
  optimizer further, so a cheaper recomputation fits); such gains are not counted as
  "scaling": the ratio is capped at 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from analysis import hardware, ids

# --------------------------------------------------------------------------------------
# Constants (assumptions are labelled as such; data-derived ones cite their source)
# --------------------------------------------------------------------------------------

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
#: placeholder values of 1 are dropped). Batch policy (assumption, set on NVIDIA H100
#: submissions only): lora one sequence per two GPUs; pre-training a quarter of a sequence per
#: GPU; both clipped to the reference batch sizes that have convergence data.
BENCHMARKS: dict[str, Benchmark] = {
    "llama2_70b_lora": Benchmark(
        model="llama2-70b",
        seq_len=8192,
        lora=True,
        rcp_batch=(8, 16, 32, 128),
        rcp_tokens=tuple(s * 8192.0 for s in (3187.2, 4051.2, 6028.8, 11289.6)),
        seqs_per_gpu=0.5,
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

# --------------------------------------------------------------------------------------
# Lookups
# --------------------------------------------------------------------------------------


def _load_specs() -> pd.DataFrame:
    # The shared cached frame (no copy): this module only reads it.
    from analysis import data

    return data.shared_specs()


def _load_models() -> pd.DataFrame:
    from analysis import data

    return data.shared_models()


def _load_mlperf() -> pd.DataFrame:
    from analysis import data

    return data.load_mlperf_training()


def _generation() -> int:
    from analysis import data

    return data.cache_generation()


#: Per-process memo of row lookups in the shared default tables, keyed by table kind and
#: id; it holds the frame itself so that its id cannot be reused, and is only used for the
#: frames :mod:`analysis.data` shares (never mutated), not for frames callers pass in.
_ROW_MEMO: dict[tuple[str, str], tuple[pd.DataFrame, Any]] = {}


def _first_row(frame: pd.DataFrame, col: str, key: str) -> dict[str, Any] | None:
    pos = np.flatnonzero((frame[col] == key).to_numpy(dtype=bool, na_value=False))
    return frame.iloc[int(pos[0])].to_dict() if len(pos) else None


def _memo(kind: str, key: str, frame: pd.DataFrame, compute: Callable[[pd.DataFrame], Any]) -> Any:
    # ``compute(frame)`` once per (kind, key) while ``frame`` is the same shared object.
    hit = _ROW_MEMO.get((kind, key))
    if hit is not None and hit[0] is frame:
        return hit[1]
    value = compute(frame)
    _ROW_MEMO[(kind, key)] = (frame, value)
    return value


def spec_row(accelerator: str, specs: pd.DataFrame | None = None) -> dict[str, Any]:
    """The spec table's row for ``accelerator`` as a dict; ValueError for unknown ids."""
    if accelerator not in ids.ACCELERATORS:
        raise ValueError(ids.unknown_id_message("accelerator", accelerator, ids.ACCELERATORS))
    frame = _load_specs() if specs is None else specs
    if specs is None:
        row = _memo("spec", accelerator, frame, lambda f: _first_row(f, "accelerator", accelerator))
    else:
        row = _first_row(frame, "accelerator", accelerator)
    if row is None:
        known = tuple(frame["accelerator"])
        raise ValueError(ids.unknown_id_message("accelerator (no spec row)", accelerator, known))
    return dict(row)


def model_arch(model: str, models: pd.DataFrame | None = None) -> dict[str, float]:
    """Shape of ``model`` (parameters in billions, layers, widths, experts)."""
    if model == "gpt3-175b":
        return dict(GPT3_ARCH)
    if model not in ids.MODELS:
        raise ValueError(ids.unknown_id_message("model", model, ids.MODELS))
    if models is None:
        return dict(_memo("arch", model, _load_models(), lambda f: _model_arch(model, f)))
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


# --------------------------------------------------------------------------------------
# The vectorized step-time model
# --------------------------------------------------------------------------------------


@cache
def _layouts(domain: int) -> dict[str, np.ndarray]:
    # Cached per scale-up domain size; the arrays are read-only (shared between calls).
    grid = np.array(
        np.meshgrid(
            TP_CHOICES,
            PP_CHOICES,
            CP_CHOICES,
            ZERO_CHOICES,
            RECOMPUTE_CHOICES,
            (0, 1),
            indexing="ij",
        )
    ).reshape(6, -1)
    keep = grid[0] <= max(1, domain)
    out = {}
    for k, g in zip(("tp", "pp", "cp", "zero", "rc", "epw"), grid, strict=True):
        a = g[keep].astype(float)
        a.flags.writeable = False
        out[k] = a
    return out


def _as_float(spec: Mapping[str, Any], key: str) -> float:
    v = spec.get(key)
    if v is None or pd.isna(v):
        raise ValueError(f"{spec.get('accelerator')}: spec column {key!r} is missing")
    return float(v)


def ffn_width(arch: Mapping[str, float]) -> tuple[float, float]:
    """(FFN width per expert, experts active per token) implied by the parameter counts.

    Per layer a SwiGLU block holds ``3 h F`` weights and attention ``2 h d + 2 h d_kv``
    (query and output, key and value with grouped heads); embeddings and the output layer
    hold ``2 V h``. The FFN width is what is left, per active expert.

    >>> a = {"total_params_b": 70.55, "active_params_b": 70.55, "layers": 80,
    ...      "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8, "head_dim": 128,
    ...      "vocab_size": 128256}
    >>> round(ffn_width(a)[0])  # Llama 3.1 70B: 28,672 published
    28685
    """
    L, h = arch["layers"], arch["hidden_size"]
    d_q = arch["attention_heads"] * arch["head_dim"]
    d_kv = arch.get("kv_heads", arch["attention_heads"]) * arch["head_dim"]
    k_act = max(1.0, arch.get("active_experts", 1.0))
    per_layer = (arch["active_params_b"] * 1e9 - 2.0 * arch["vocab_size"] * h) / max(L, 1.0)
    mlp = max(per_layer - 2.0 * h * d_q - 2.0 * h * d_kv, h)
    return mlp / (3.0 * h * k_act), k_act


def activation_bytes_per_token(arch: Mapping[str, float], *, full_recompute: bool) -> float:
    """Activation bytes one layer keeps per token for the backward pass (bf16, before TP/CP).

    Korthikanti et al. 2022 (Table 2) count ``34 s h`` for a GeLU MLP of width ``4h`` with
    dropout and the ``5 a s^2`` attention scores. Llama-style blocks have no dropout, flash
    attention recomputes the scores (that is the "selective" recomputation), and the MLP is
    SwiGLU, so the same accounting gives, in bytes per token:

    * attention: norm input 2h, QKV input 2h, Q 2h, K and V 2 d_kv each, output 2h
      -> ``8 h + 4 d_kv``;
    * MLP: norm input 2h, FC1 input 2h, gate and up outputs 2F each, the product 2F
      -> ``4 h + 6 F`` (per active expert for MoE: ``k (2h + 6 F_e)`` plus 2h for the router).

    With sequence parallelism every term is divided by TP (and by CP, which splits the
    sequence). Full recomputation keeps only the layer input, ``2 h``.

    >>> a = {"total_params_b": 70.55, "active_params_b": 70.55, "layers": 80,
    ...      "hidden_size": 8192, "attention_heads": 64, "kv_heads": 8, "head_dim": 128,
    ...      "vocab_size": 128256}
    >>> round(activation_bytes_per_token(a, full_recompute=False) / 8192, 1)  # x h
    34.0
    """
    h = arch["hidden_size"]
    if full_recompute:
        return 2.0 * h
    d_kv = arch.get("kv_heads", arch["attention_heads"]) * arch["head_dim"]
    f, k_act = ffn_width(arch)
    mlp = 4.0 * h + 6.0 * f if k_act <= 1 else 2.0 * h + k_act * (2.0 * h + 6.0 * f)
    return 8.0 * h + 4.0 * d_kv + mlp


def evaluate_layouts(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    n_gpus: np.ndarray | list[int] | int,
    *,
    precision: str,
    seq_len: int,
    batch_seqs: np.ndarray | float,
    efficiency: float | np.ndarray,
    lora: bool = False,
    unconstrained: bool = False,
) -> dict[str, np.ndarray]:
    """Step time of every layout at every GPU count; the best feasible one per count.

    A layout is TP x PP x CP x DP with interleaved 1F1B (virtual stages), ZeRO-1 or FSDP,
    selective or full recomputation; MoE models add expert parallelism over the data-parallel
    ranks. ``efficiency`` may be an array with one value per GPU count (the calibration
    evaluates many candidate efficiencies at once). ``unconstrained=True`` drops the memory
    limit and the batch limit (each DP rank gets :data:`REFERENCE_MICROBATCHES`
    microbatches): the per-GPU reference of the scaling curves.

    Returns arrays over GPU counts: ``tokens_per_s_per_gpu`` (NaN when infeasible),
    ``step_s``, ``tp``, ``pp``, ``cp``, ``dp``, ``ep``, ``vp``, ``zero``, ``recompute``,
    ``memory_gb``, ``mfu``, ``reason`` ("" when feasible) and the chosen layout's step-time
    terms: ``t_compute`` (at the model's FLOPs), ``t_recompute``, ``t_tp`` (TP and CP
    collectives), ``t_moe`` (all-to-all), ``t_moe_kernels`` (grouped-GEMM weight reads
    beyond their compute and token permutation), ``t_bubble``, ``t_pp`` (point-to-point),
    ``t_dp_exposed``, ``t_latency`` (per-collective latency), ``t_optimizer``; ``t_other``
    is ``t_pp + t_optimizer`` (kept for older callers).
    """
    n = np.atleast_1d(np.asarray(n_gpus, dtype=float))[None, :]
    b = np.broadcast_to(np.asarray(batch_seqs, dtype=float), n.shape[1:])[None, :]
    domain = int(_as_float(spec, "scaleup_domain_gpus"))
    lay = _layouts(domain)
    tp, pp, cp, zero, rc, epw = (lay[k][:, None] for k in ("tp", "pp", "cp", "zero", "rc", "epw"))
    peak = peak_tflops(spec, precision) * 1e12
    mem_usable = _as_float(spec, "memory_gb") * 1e9 * USABLE_MEMORY_FRACTION
    hbm = _as_float(spec, "memory_bw_tbps") * 1e12
    # Bidirectional per-GPU scale-up bandwidth in GB/s -> one direction, bytes/s.
    bw_up = _as_float(spec, "scaleup_bw_gbps") / 2.0 * 1e9 * LINK_EFFICIENCY
    bw_out = _as_float(spec, "scaleout_gbps_per_gpu") / 8.0 * 1e9 * LINK_EFFICIENCY

    L, h = arch["layers"], arch["hidden_size"]
    d_attn = arch["attention_heads"] * arch["head_dim"]
    d_kv = arch.get("kv_heads", arch["attention_heads"]) * arch["head_dim"]
    n_total, n_active = arch["total_params_b"] * 1e9, arch["active_params_b"] * 1e9
    experts, k_act = arch.get("experts", 1.0), arch.get("active_experts", 1.0)
    moe = experts > 1
    # Split parameters into shared and per-expert parts from total and active counts.
    per_expert = (n_total - n_active) / (experts - k_act) if moe else 0.0
    shared = n_total - experts * per_expert
    act_sel = activation_bytes_per_token(arch, full_recompute=False)
    act_full = activation_bytes_per_token(arch, full_recompute=True)

    with np.errstate(divide="ignore", invalid="ignore"):
        mp = tp * pp * cp
        dp = n / mp
        dp_int = np.isclose(dp, np.round(dp)) & (dp >= 1)
        dp = np.where(dp_int, np.round(dp), np.nan)
        # Megatron shards the optimizer and reduces gradients over DP x CP (CP ranks hold
        # the same weights); experts are spread over the DP ranks.
        dpc = dp * cp
        # EP either stays inside the scale-up domain (a2a over NVLink/xGMI) or spans every
        # DP rank (fewer experts per GPU, a2a over the scale-out network): both are searched
        ep_in = np.maximum(1.0, np.minimum(dp, np.floor(domain / (tp * cp))))
        ep = np.minimum(experts, np.where(epw == 1, dp, ep_in)) if moe else np.ones_like(dp)
        params_local = (shared + experts * per_expert / ep) / (tp * pp)
        if unconstrained:
            m = np.full_like(dp, float(REFERENCE_MICROBATCHES))
            tokens_step = m * dp * seq_len
        else:
            m = np.ceil(b / dp)  # microbatches of one sequence per DP rank and step
            tokens_step = b * seq_len
        # interleaved 1F1B (Narayanan et al. 2021, sec. 2.2): v model chunks per stage
        v = np.where(pp > 1, np.clip(np.floor(L / pp), 1, PP_INTERLEAVE), 1.0)
        # ---- memory per GPU
        trainable = LORA_TRAINABLE_FRACTION if lora else 1.0
        shard = np.where(zero == 3, dpc, 1.0)
        weights = BYTES_WEIGHT * params_local / shard
        grads = BYTES_GRAD * trainable * params_local / shard
        optim = BYTES_OPTIM * trainable * params_local / dpc
        act_tok = np.where(rc == 1, act_full, act_sel) * seq_len / (tp * cp)
        # 1F1B keeps up to PP microbatches in flight on the first stage (L/PP layers each);
        # interleaving adds (PP - 1) / (PP v) of that (Narayanan et al. 2021, sec. 2.2.2).
        inflight = np.minimum(m, pp) * np.where(pp > 1, 1.0 + (pp - 1.0) / (pp * v), 1.0)
        acts = act_tok * L / pp * inflight
        # fp32 logits (4 bytes per vocabulary entry per token), vocabulary-parallel over TP
        logits = 4.0 * seq_len / cp * arch["vocab_size"] / tp
        # FSDP holds two layers' weights unsharded: the one computing and the one prefetched
        gathered = np.where(zero == 3, 2.0 * BYTES_WEIGHT * params_local / max(L, 1.0) * pp, 0.0)
        mem = weights + grads + optim + acts + logits + gathered
        # ---- compute (per GPU and step)
        f_model = flops_per_token(arch, seq_len, lora=lora)
        f_extra = 2.0 * n_active + 4.0 * L * d_attn * seq_len  # one more forward pass
        per_gpu_tokens = m * seq_len / (tp * pp * cp)
        t_comp = per_gpu_tokens * f_model / (peak * efficiency)
        t_recomp = rc * per_gpu_tokens * f_extra / (peak * efficiency)
        t_work = t_comp + t_recomp
        # backward share of the model FLOPs: 4N of 6N (LoRA: 2N of 4N, no weight gradients)
        bwd_frac = (2.0 if lora else 4.0) / (4.0 if lora else 6.0)
        tp_up = tp <= domain  # TP never leaves the scale-up domain (layout filter)
        cp_inside = tp * cp <= domain
        bw_cp = np.where(cp_inside, bw_up, bw_out)
        # ---- tensor parallel (sequence parallel): 4 all-gather/reduce-scatter pairs of
        # s h bf16 per layer and microbatch (2 forward, 2 backward; +2 when the forward is
        # recomputed); ring cost (t-1)/t per pass, so 2 (t-1)/t per pair.
        n_ar = 4.0 + 2.0 * rc
        s_loc = seq_len / cp
        t_tp = n_ar * (L / pp) * m * 2.0 * (tp - 1) / tp * s_loc * h * 2.0 / bw_up
        # ---- context parallel: ring attention passes K and V (2 d_kv bf16 per token) around
        # the CP ring, cp-1 steps forward and twice that backward (dK, dV), overlapped with
        # the attention compute of the same layer (Megatron CP, NVIDIA TE docs).
        kv_bytes = 2.0 * s_loc * d_kv * 2.0 / tp
        cp_comm = 3.0 * (cp - 1) * kv_bytes * (L / pp) * m / bw_cp
        attn_share = (12.0 * L * d_attn * seq_len) / f_model
        t_cp = np.maximum(0.0, cp_comm - attn_share * t_comp)
        # ---- MoE all-to-all (dispatch + combine, forward and backward) over EP ranks,
        # inside the scale-up domain when the EP group fits there, else over scale-out
        if moe:
            ep_inside = ep * tp * cp <= domain
            bw_ep = np.where(ep_inside, bw_up, bw_out)
            t_a2a = 4.0 * (L / pp) * m * s_loc * h * 2.0 * k_act / tp * (ep - 1) / ep / bw_ep
        else:
            ep_inside = np.ones_like(tp, dtype=bool)
            t_a2a = np.zeros_like(t_tp)
        # ---- MoE kernels (no fitted parameter). (1) Grouped expert GEMMs are a roofline:
        # each GPU's E/ep experts see m_e = s_loc * ep * k / E tokens per microbatch, and
        # their weights are read three times (forward, data and weight gradient); below
        # m_e ~ peak / HBM bandwidth the GEMMs wait on weight reads, the exposed part is
        # the excess over their compute. (2) Token permutation, all-to-all staging and the
        # combine stream the k routed copies through HBM (:data:`MOE_PERMUTE_PASSES`).
        if moe:
            expert_share = (6.0 if not lora else 4.0) * k_act * per_expert / f_model
            t_exp_comp = t_comp * expert_share
            w_bytes = 3.0 * PRECISION_BYTES[precision] * experts * per_expert / (ep * tp * pp)
            t_gg = np.maximum(0.0, m * w_bytes / hbm - t_exp_comp)
            tok_gpu = s_loc / tp
            t_perm = m * (L / pp) * tok_gpu * MOE_PERMUTE_PASSES * k_act * h * 2.0 / hbm
            t_moe_k = t_gg + t_perm
        else:
            t_moe_k = np.zeros_like(t_tp)
        # ---- pipeline: bubble (interleaved 1F1B divides it by v) and point-to-point
        # activations (v times the traffic)
        t_mb = (t_work + t_tp + t_cp + t_a2a + t_moe_k) / m
        t_bubble = (pp - 1) / v * t_mb
        bw_pp = np.where(n > domain, bw_out, bw_up)
        t_pp = np.where(pp > 1, 2.0 * v * m * s_loc * h * 2.0 / tp / bw_pp, 0.0)
        # ---- data parallel: hierarchical collectives (reduce-scatter / all-gather inside
        # the scale-up domain, the 1/d_in shard across the scale-out network).
        d_in = np.clip(np.floor(domain / (tp * cp)), 1, dpc)
        d_out = np.ceil(dpc / d_in)

        def ring_pass(nbytes: np.ndarray) -> np.ndarray:
            # one reduce-scatter or all-gather pass of nbytes per GPU (ring, per level)
            return (d_in - 1) / d_in * nbytes / bw_up + (d_out - 1) / d_out * nbytes / d_in / bw_out

        g = BYTES_GRAD * trainable * params_local
        w = BYTES_WEIGHT * params_local
        # ZeRO-1: gradients reduce-scattered and parameters all-gathered once per step, hidden
        # behind the backward pass of the last microbatch. FSDP: weights all-gathered for the
        # forward and the backward of every microbatch and gradients reduce-scattered after
        # every microbatch's backward (they are sharded, so they cannot be accumulated
        # unreduced), each hidden behind that microbatch's compute.
        t_grad = np.where(zero == 3, 0.0, 2.0 * ring_pass(g))
        window = DP_OVERLAP * bwd_frac * t_work / m
        t_fsdp = np.where(zero == 3, m * (2.0 * ring_pass(w) + ring_pass(g)), 0.0)
        t_dp_exp = np.maximum(0.0, t_grad - window) + np.maximum(0.0, t_fsdp - DP_OVERLAP * t_work)
        # ---- latency per collective (alpha): ring steps inside the domain, a tree across
        # nodes (NCCL/RCCL); counted for the TP/CP/EP collectives on the critical path, the
        # pipeline sends, the FSDP per-layer collectives and the step's gradient buckets
        a_up, a_out = COLLECTIVE_LATENCY_UP_S, COLLECTIVE_LATENCY_OUT_S
        lat_tp = n_ar * (L / pp) * m * 2.0 * (tp - 1) * a_up
        lat_cp = 3.0 * (cp - 1) * (L / pp) * m * np.where(cp_inside, a_up, a_out)
        lat_ep = (4.0 * (L / pp) * m * np.where(ep_inside, a_up, a_out)) if moe else 0.0
        lat_pp = np.where(pp > 1, 2.0 * v * m * np.where(n > domain, a_out, a_up), 0.0)
        lat_dp1 = 2.0 * (d_in - 1) * a_up + 2.0 * np.log2(np.maximum(d_out, 1.0)) * a_out
        n_buckets = np.ceil(g / DP_BUCKET_BYTES)
        lat_dp = np.where(zero == 3, 3.0 * (L / pp) * m, 2.0 * n_buckets) * lat_dp1
        t_lat = lat_tp + lat_cp + lat_ep + lat_pp + lat_dp
        # ---- optimizer step (memory bound)
        t_opt = OPTIMIZER_BYTES_PER_PARAM * trainable * params_local / shard / hbm
        step = t_work + t_tp + t_cp + t_a2a + t_moe_k + t_bubble + t_pp + t_dp_exp + t_lat + t_opt

        ok_batch = dp_int & ((dp <= b) | unconstrained)
        ok_heads = (tp <= arch["attention_heads"]) & tp_up
        ok_pp = pp <= L
        # CP splits the sequence into 2 cp chunks (load-balanced causal ring); keep >= 1K
        ok_cp = seq_len / cp >= MIN_CP_CHUNK_TOKENS
        ok_mem = (mem <= mem_usable) | unconstrained
        # dense models: the EP choice is moot, keep one copy of each layout
        shape_ok = dp_int & ok_heads & ok_pp & ok_cp & (moe | (epw == 0))
        feasible = shape_ok & ok_batch & ok_mem
        score = np.where(feasible, step, np.inf)

    best = np.argmin(score, axis=0)
    cols = np.arange(n.shape[1])
    any_ok = np.isfinite(score[best, cols])

    def pick(a: np.ndarray) -> np.ndarray:
        a = np.broadcast_to(a, score.shape)
        return np.where(any_ok, a[best, cols], np.nan)

    step_b = pick(step)
    tokens = pick(tokens_step)
    thr = tokens / (step_b * n[0])
    mfu = thr * f_model / peak
    reasons = []
    min_mem = np.nanmin(np.where(shape_ok & ok_batch, mem, np.inf), axis=0)
    for j in range(n.shape[1]):
        if any_ok[j]:
            reasons.append("")
        elif not shape_ok[:, j].any():
            reasons.append(f"{int(n[0, j])} GPUs cannot be split into TP x PP x CP x DP")
        elif not ok_batch[:, j].any():
            reasons.append(
                f"global batch of {b[0, j]:.0f} sequences is smaller than the "
                f"data-parallel degree at {int(n[0, j])} GPUs"
            )
        else:
            reasons.append(
                f"does not fit in memory with any layout: needs at least "
                f"{min_mem[j] / 1e9:.0f} GB per GPU, {mem_usable / 1e9:.0f} GB usable"
            )
    return {
        "n_gpus": n[0].astype(int),
        "tokens_per_s_per_gpu": thr,
        "step_s": step_b,
        "tp": pick(tp),
        "pp": pick(pp),
        "cp": pick(cp),
        "dp": pick(dp),
        "ep": pick(ep),
        "vp": pick(v),
        "zero": pick(zero),
        "recompute": pick(rc),
        "memory_gb": pick(mem) / 1e9,
        "mfu": mfu,
        "t_compute": pick(t_comp),
        "t_recompute": pick(t_recomp),
        "t_tp": pick(t_tp + t_cp),
        "t_moe": pick(t_a2a),
        "t_moe_kernels": pick(t_moe_k),
        "t_bubble": pick(t_bubble),
        "t_pp": pick(t_pp),
        "t_dp_exposed": pick(t_dp_exp),
        "t_latency": pick(t_lat),
        "t_optimizer": pick(t_opt),
        "t_other": pick(t_pp + t_opt),
        "feasible": any_ok,
        "reason": np.array(reasons, dtype=object),
    }


def layout_label(
    tp: float, pp: float, dp: float, zero: float, recompute: float, cp: float = 1.0
) -> str:
    """Human-readable layout, e.g. ``"TP8 PP4 DP32 ZeRO-1 sel-recompute"``.

    CP appears only when the sequence is split (``cp > 1``).

    >>> layout_label(8, 4, 32, 1, 0)
    'TP8 PP4 DP32 ZeRO-1 sel-recompute'
    >>> layout_label(8, 16, 8, 1, 0, cp=16)
    'TP8 PP16 CP16 DP8 ZeRO-1 sel-recompute'
    """
    if any(math.isnan(float(x)) for x in (tp, pp, dp)):
        return ""
    zero_s = "FSDP" if int(zero) == 3 else "ZeRO-1"
    rc_s = "full-recompute" if int(recompute) == 1 else "sel-recompute"
    cp_s = f" CP{int(cp)}" if not math.isnan(float(cp)) and int(cp) > 1 else ""
    return f"TP{int(tp)} PP{int(pp)}{cp_s} DP{int(dp)} {zero_s} {rc_s}"


# --------------------------------------------------------------------------------------
# Efficiency: calibration on MLPerf Training and its transfer to other workloads
# --------------------------------------------------------------------------------------


def mlperf_batch_size(benchmark: str, n_gpus: int | np.ndarray) -> np.ndarray:
    """Global batch (sequences) assumed for an MLPerf submission on ``n_gpus`` GPUs.

    >>> [int(mlperf_batch_size("llama2_70b_lora", n)[0]) for n in (8, 1024)]
    [8, 128]
    >>> int(mlperf_batch_size("llama2_70b_lora", 64)[0])
    32
    """
    bm = _benchmark(benchmark)
    raw = np.atleast_1d(np.asarray(n_gpus, dtype=float)) * bm.seqs_per_gpu
    return np.clip(np.round(raw), bm.rcp_batch[0], bm.rcp_batch[-1])


def mlperf_tokens(benchmark: str, batch_seqs: np.ndarray | float) -> np.ndarray:
    """Tokens to converge at a global batch: log-log interpolation of the RCP means."""
    bm = _benchmark(benchmark)
    x = np.log(np.atleast_1d(np.asarray(batch_seqs, dtype=float)))
    return np.exp(np.interp(x, np.log(bm.rcp_batch), np.log(bm.rcp_tokens)))


def _mlperf_layouts(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n_gpus: np.ndarray,
    efficiency: float | np.ndarray,
    precision: str,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    # The benchmark's global batch (:func:`mlperf_batch_size`) and its best layouts.
    bm = _benchmark(benchmark)
    b = mlperf_batch_size(benchmark, n_gpus)
    res = evaluate_layouts(
        spec,
        arch,
        n_gpus,
        precision=precision,
        seq_len=bm.seq_len,
        batch_seqs=b,
        efficiency=efficiency,
        lora=bm.lora,
    )
    return b, res


def _mlperf_minutes(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n_gpus: np.ndarray,
    efficiency: float | np.ndarray,
    precision: str,
) -> np.ndarray:
    b, res = _mlperf_layouts(spec, arch, benchmark, n_gpus, efficiency, precision)
    thr = res["tokens_per_s_per_gpu"] * np.asarray(n_gpus, dtype=float)
    return mlperf_tokens(benchmark, b) / thr / 60.0


#: Root search of the calibration: candidate efficiencies per vectorized call and rounds.
#: Each round narrows the bracket 64-fold; 9 rounds reach 64**-9 = 2**-54 of the initial
#: log-space bracket (as fine as 50+ bisection steps) in 10 model calls instead of 51.
_FIT_POINTS, _FIT_ROUNDS = 63, 9


def _fit_one(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    benchmark: str,
    n: int,
    minutes: float,
    precision: str,
) -> float:
    """Efficiency at which the model reproduces ``minutes`` (bracketing search in log space).

    Predicted time falls strictly monotonically with efficiency, so the root is unique; each
    round evaluates :data:`_FIT_POINTS` efficiencies across the bracket in one vectorized
    call and keeps the sub-interval where the prediction crosses ``minutes``. Roots outside
    [0.01, 3] converge to the nearer bound.
    """
    lo, hi = math.log(0.01), math.log(3.0)
    counts = np.full(_FIT_POINTS, int(n))

    def pred(log_e: np.ndarray) -> np.ndarray:
        v = _mlperf_minutes(spec, arch, benchmark, counts[: len(log_e)], np.exp(log_e), precision)
        return np.where(np.isfinite(v), v, math.inf)

    if not math.isfinite(pred(np.array([hi]))[0]):
        return math.nan  # infeasible at this count whatever the efficiency
    steps = np.arange(1, _FIT_POINTS + 1) / (_FIT_POINTS + 1)
    for _ in range(_FIT_ROUNDS):
        grid = lo + (hi - lo) * steps
        above = pred(grid) > minutes  # True below the root (too slow), then False
        k = int(np.argmin(above)) if not above.all() else _FIT_POINTS
        lo, hi = (grid[k - 1] if k > 0 else lo), (grid[k] if k < _FIT_POINTS else hi)
    return math.exp(0.5 * (lo + hi))


def mlperf_rows(mlperf: pd.DataFrame | None = None) -> pd.DataFrame:
    """MLPerf Training rows the model uses: canonical accelerator, known benchmark, a time."""
    df = _load_mlperf() if mlperf is None else mlperf
    keep = (
        df["accelerator"].notna()
        & (df["accelerator"].astype(str) != "")
        & df["benchmark"].isin(list(BENCHMARKS))
        & df["time_to_train_min"].notna()
    )
    if "division" in df.columns:
        keep &= df["division"] == "closed"
    out = df.loc[
        keep,
        [
            "round",
            "submitter",
            "system",
            "accelerator",
            "vendor",
            "benchmark",
            "total_accelerators",
            "time_to_train_min",
        ],
    ].copy()
    out = out.rename(columns={"total_accelerators": "n_gpus", "time_to_train_min": "measured_min"})
    out["n_gpus"] = out["n_gpus"].astype(int)
    out["measured_min"] = out["measured_min"].astype(float)
    return out.reset_index(drop=True)


def fit_efficiencies(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Fitted compute efficiency per accelerator and benchmark at its calibration count.

    The calibration count is the smallest submitted count of at least one node
    (:data:`NODE_GPUS`), else the smallest submitted count. With every argument ``None``
    (the project's own tables) the fit runs once per process (until
    :func:`analysis.data.clear_cache`) and callers get a copy.

    Columns: accelerator, vendor, benchmark, n_gpus, n_submissions, measured_min (median
    there), efficiency (fraction of FP8 peak while computing), mfu (achieved end-to-end
    model FLOPs utilization at that point, FP8 peak).
    """
    if mlperf is None and specs is None and models is None:
        return _fits_cached().copy()
    return _fit_efficiencies(mlperf, specs, models)


def _fit_efficiencies(
    mlperf: pd.DataFrame | None, specs: pd.DataFrame | None, models: pd.DataFrame | None
) -> pd.DataFrame:
    rows = mlperf_rows(mlperf)
    specs = _load_specs() if specs is None else specs
    out = []
    for (acc, bench), grp in rows.groupby(["accelerator", "benchmark"], sort=True):
        counts = grp["n_gpus"]
        n0 = int(counts[counts >= NODE_GPUS].min() if (counts >= NODE_GPUS).any() else counts.min())
        at = grp.loc[grp["n_gpus"] == n0, "measured_min"]
        spec = spec_row(str(acc), specs)
        arch = model_arch(_benchmark(str(bench)).model, models)
        t = float(at.median())
        e = _fit_one(spec, arch, str(bench), n0, t, MLPERF_PRECISION)
        mfu = math.nan
        if math.isfinite(e):
            _, res = _mlperf_layouts(spec, arch, str(bench), np.array([n0]), e, MLPERF_PRECISION)
            mfu = float(res["mfu"][0])
        out.append(
            {
                "accelerator": acc,
                "vendor": grp["vendor"].iloc[0],
                "benchmark": bench,
                "n_gpus": n0,
                "n_submissions": len(at),
                "measured_min": t,
                "efficiency": e,
                "mfu": mfu,
            }
        )
    return pd.DataFrame(out)


def _precision_factor(precision: str) -> float:
    """Efficiency at ``precision`` relative to the FP8-relative fitted efficiency."""
    _check_precision(precision)
    if precision == "bf16":
        return 2.0 / FP8_OVER_BF16_SPEEDUP
    if precision == "fp4":
        return FP4_OVER_FP8_SPEEDUP / 2.0
    return 1.0


def resolve_efficiency(
    accelerator: str,
    *,
    kind: str = "lora",
    precision: str = "bf16",
    fits: pd.DataFrame | None = None,
) -> tuple[float, str]:
    """Compute efficiency (fraction of ``precision`` peak) for an accelerator, and its source.

    ``kind="lora"`` (the default, used for every scenario) takes the accelerator's
    ``llama2_70b_lora`` fit: the one benchmark both vendors submitted, on one node, by many
    submitters, so the comparison is like for like. Pre-training fits (``kind="pretrain"``)
    come from 256-512 GPU submissions whose memory-forced layouts the model does not capture
    well (see the chapter), so they are used only to predict those benchmarks. Parts without
    a fit take their :data:`PROXY`'s (recursively), and say so.
    """
    if accelerator not in ids.ACCELERATORS:
        raise ValueError(ids.unknown_id_message("accelerator", accelerator, ids.ACCELERATORS))
    if kind not in {"pretrain", "lora"}:
        raise ValueError(f"unknown workload kind {kind!r}; allowed: 'pretrain', 'lora'")
    if fits is None:
        return pretrain_efficiency(accelerator, precision, kind=kind)
    fits = fits.loc[np.isfinite(fits["efficiency"])]
    pre = fits.loc[fits["benchmark"].isin(PRETRAIN_BENCHMARKS)]
    lor = fits.loc[fits["benchmark"] == "llama2_70b_lora"]
    factor = _precision_factor(precision)
    # a pre-training request falls back to the LoRA fit of the same part before a proxy
    order = ((pre, "pretrain"), (lor, "lora")) if kind == "pretrain" else ((lor, "lora"),)
    seen: list[str] = []
    acc = accelerator
    while acc not in seen:
        tag = "" if acc == accelerator else f"proxy {acc}: "
        for frame, name in order:
            mine = frame.loc[frame["accelerator"] == acc, "efficiency"]
            if len(mine):
                return min(MAX_EFFICIENCY, float(mine.median()) * factor), f"{tag}{name} fit"
        seen.append(acc)
        acc = PROXY.get(acc, acc)
    raise ValueError(f"no MLPerf Training fit for {accelerator} or any proxy of it")


#: Per-process cache of the default calibration: (data cache generation, fits).
_FITS: dict[str, tuple[int, pd.DataFrame]] = {}


def _fits_cached() -> pd.DataFrame:
    """The default calibration (shared frame: do not modify), fitted once per process."""
    gen = _generation()
    hit = _FITS.get("default")
    if hit is None or hit[0] != gen:
        hit = (gen, _fit_efficiencies(None, None, None))
        _FITS["default"] = hit
    return hit[1]


def clear_caches() -> None:
    """Forget the cached calibration and table lookups (benchmarks of cold runs use it)."""
    _FITS.clear()
    _FITTED.clear()
    _ROW_MEMO.clear()


# --------------------------------------------------------------------------------------
# Efficiency v2: per-row fits on pre-training and LoRA, pooled per vendor x generation x
# kind, shrunk; precision factors from each part's peaks and a per-vendor measured speedup
# --------------------------------------------------------------------------------------

KINDS = ("pretrain", "lora")
#: Pseudo-cells of the shrinkage prior (assumption): a vendor x generation x kind group
#: with one fitted cell sits halfway between that cell and its vendor's mean.
SHRINK_CELLS = 1.0  # register: A-training-shrink-cells
#: Weight of a same vendor x generation cell of the other kind (LoRA for pre-training and
#: back), after the measured kind offset (assumption: it informs, but less than own kind).
OTHER_KIND_WEIGHT = 0.5  # register: A-training-other-kind-weight
#: AMD's FP8-over-BF16 speedup relative to NVIDIA's, from AMD's own MI355X vs B200
#: training ratios (ROCm 7 training blog, 2025-12-02: Llama 3 70B BF16 1.16x, FP8 1.00x;
#: Llama 3 8B BF16 1.02x, FP8 1.08x): sqrt((1.00/1.16) x (1.08/1.02)) = 0.955.
AMD_FP8_SPEEDUP_RELATIVE = 0.955  # register: A-training-amd-fp8-speedup-relative
#: Per-row root search: 15 candidates per round, 6 rounds narrow the log bracket 16**6-fold
#: (1.7e7, finer than the data); fewer, narrower calls than the 63 x 4 of the old search.
_FIT_POINTS_V2, _FIT_ROUNDS_V2 = 15, 6


def generation_of(spec: Mapping[str, Any]) -> str:
    """The part's architecture generation (spec column ``architecture``), e.g. ``Hopper``."""
    g = spec.get("architecture")
    return str(g) if g is not None and not pd.isna(g) else str(spec.get("accelerator"))


def precision_factor(
    spec: Mapping[str, Any], precision: str, speedups: Mapping[str, float] | None = None
) -> float:
    """Efficiency at ``precision`` over the FP8-relative efficiency of the same part.

    The realized speedup over FP8 (``speedups[precision]``: ``bf16`` below 1, ``fp4`` above)
    divided by the part's own peak ratio: a part whose FP4 peak is 3x its FP8 peak and that
    runs FP4 1.3x faster keeps 1.3 / 3 of its FP8 efficiency. ``speedups`` defaults to the
    registered assumptions (:data:`FP8_OVER_BF16_SPEEDUP`, :data:`FP4_OVER_FP8_SPEEDUP`).

    >>> spec = {"bf16_dense_tflops": 2500.0, "fp8_dense_tflops": 5000.0,
    ...         "fp4_dense_tflops": 15000.0}
    >>> round(precision_factor(spec, "fp4", {"fp4": 1.3}), 4)
    0.4333
    """
    _check_precision(precision)
    if precision == "fp8":
        return 1.0
    s = dict(speedups or {})
    default = 1.0 / FP8_OVER_BF16_SPEEDUP if precision == "bf16" else FP4_OVER_FP8_SPEEDUP
    ratio = float(s.get(precision, default))
    return ratio * peak_tflops(spec, "fp8") / peak_tflops(spec, precision)


def training_observations(
    mlperf: pd.DataFrame | None = None,
    published: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every measured training throughput the model is fitted and checked on, one row each.

    MLPerf Training submissions become tokens/s per GPU with the RCP tokens to converge at
    the policy batch (:func:`mlperf_batch_size`); published rows keep their own batch and
    precision (Meta's TFLOPs/GPU become tokens/s with :func:`flops_per_token`).
    Columns: origin, source, round, benchmark, accelerator, vendor, generation, kind, model,
    precision, n_gpus, seq_len, batch_seqs, measured_tps (tokens/s per GPU), measured_min.
    """
    specs = _load_specs() if specs is None else specs
    rows = mlperf_rows(mlperf)
    out = []
    for r in rows.itertuples(index=False):
        bm = _benchmark(str(r.benchmark))
        b = float(mlperf_batch_size(str(r.benchmark), r.n_gpus)[0])
        tokens = float(mlperf_tokens(str(r.benchmark), b)[0])
        out.append(
            {
                "origin": "mlperf",
                "source": f"mlperf-training-{r.round}",
                "round": r.round,
                "benchmark": r.benchmark,
                "accelerator": r.accelerator,
                "model": bm.model,
                "kind": "lora" if bm.lora else "pretrain",
                "precision": MLPERF_PRECISION,
                "n_gpus": int(r.n_gpus),
                "seq_len": bm.seq_len,
                "batch_seqs": b,
                "measured_tps": tokens / (r.measured_min * 60.0) / r.n_gpus,
                "measured_min": float(r.measured_min),
            }
        )
    pub = _load_published() if published is None else published
    for r in pub.itertuples(index=False):
        tps = r.tokens_per_s_per_gpu
        if r.tokens_derived == "yes":
            tps = r.model_tflops_per_gpu * 1e12 / flops_per_token(model_arch(r.model), r.seq_len)
        out.append(
            {
                "origin": "published",
                "source": r.source,
                "round": "",
                "benchmark": "",
                "accelerator": r.accelerator,
                "model": r.model,
                "kind": "pretrain",
                "precision": r.precision,
                "n_gpus": int(r.n_gpus),
                "seq_len": int(r.seq_len),
                "batch_seqs": float(r.global_batch_seqs),
                "measured_tps": float(tps),
                "measured_min": math.nan,
            }
        )
    df = pd.DataFrame(out)
    df["moe"] = [model_arch(m).get("experts", 1.0) > 1 for m in df["model"]]
    meta = {a: spec_row(a, specs) for a in df["accelerator"].unique()}
    df.insert(5, "vendor", df["accelerator"].map(lambda a: meta[a]["vendor"]))
    df.insert(6, "generation", df["accelerator"].map(lambda a: generation_of(meta[a])))
    return df


def _load_published() -> pd.DataFrame:
    from analysis import data

    return data.load_published_training()


_EVAL_KEYS = ["accelerator", "model", "seq_len", "precision", "kind"]


def _predict_tps(
    obs: pd.DataFrame,
    efficiency: np.ndarray,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
) -> np.ndarray:
    """Modelled tokens/s per GPU for each observation at its own efficiency (vectorized)."""
    out = np.full(len(obs), np.nan)
    eff = np.asarray(efficiency, dtype=float)
    for key, idx in obs.groupby(_EVAL_KEYS, sort=False).indices.items():
        acc, model, seq, prec, kind = key
        sub = obs.iloc[idx]
        res = evaluate_layouts(
            spec_row(acc, specs),
            model_arch(model, models),
            sub["n_gpus"].to_numpy(),
            precision=prec,
            seq_len=int(seq),
            batch_seqs=sub["batch_seqs"].to_numpy(),
            efficiency=eff[idx],
            lora=kind == "lora",
        )
        out[idx] = res["tokens_per_s_per_gpu"]
    return out


def fit_row_efficiencies(
    obs: pd.DataFrame, specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None
) -> pd.DataFrame:
    """``obs`` plus ``efficiency``: the fraction of peak at which the model reproduces each row.

    Throughput rises strictly with efficiency, so each root is unique; all rows of one
    accelerator x model x precision are searched together, :data:`_FIT_POINTS_V2`
    candidates per row and round in one vectorized call (each round narrows the log bracket
    16-fold; six rounds reach 6e-8 of it). Rows infeasible at any efficiency get NaN.
    """
    eff = np.full(len(obs), np.nan)
    k = _FIT_POINTS_V2
    steps = np.arange(1, k + 1) / (k + 1)
    for key, idx in obs.groupby(_EVAL_KEYS, sort=False).indices.items():
        acc, model, seq, prec, kind = key
        sub = obs.iloc[idx]
        spec, arch = spec_row(acc, specs), model_arch(model, models)
        target = sub["measured_tps"].to_numpy()
        lo = np.full(len(idx), math.log(0.01))
        hi = np.full(len(idx), math.log(3.0))
        counts = np.repeat(sub["n_gpus"].to_numpy(), k)
        batch = np.repeat(sub["batch_seqs"].to_numpy(), k)
        for _ in range(_FIT_ROUNDS_V2):
            grid = lo[:, None] + (hi - lo)[:, None] * steps[None, :]
            res = evaluate_layouts(
                spec,
                arch,
                counts,
                precision=prec,
                seq_len=int(seq),
                batch_seqs=batch,
                efficiency=np.exp(grid).ravel(),
                lora=kind == "lora",
            )
            thr = np.nan_to_num(res["tokens_per_s_per_gpu"], nan=0.0).reshape(len(idx), k)
            slow = thr < target[:, None]  # True below the root, then False
            j = np.where(slow.all(axis=1), k, np.argmin(slow, axis=1))
            rows = np.arange(len(idx))
            new_lo = np.where(j > 0, grid[rows, np.maximum(j - 1, 0)], lo)
            new_hi = np.where(j < k, grid[rows, np.minimum(j, k - 1)], hi)
            lo, hi = new_lo, new_hi
        e = np.exp(0.5 * (lo + hi))
        feasible = np.isfinite(
            evaluate_layouts(
                spec,
                arch,
                sub["n_gpus"].to_numpy(),
                precision=prec,
                seq_len=int(seq),
                batch_seqs=sub["batch_seqs"].to_numpy(),
                efficiency=3.0,
                lora=kind == "lora",
            )["tokens_per_s_per_gpu"]
        )
        eff[idx] = np.where(feasible, e, np.nan)
    return obs.assign(efficiency=eff)


def measured_speedups(obs: pd.DataFrame, vendor: str) -> tuple[dict[str, float], str]:
    """Realized GEMM speedup over FP8 per precision for ``vendor``, and where it comes from.

    Measured from published rows of the same source, system, model, GPU count and sequence
    at two precisions (the best recipe at each precision: FP8-CS vs MXFP8 take the faster).
    When ``obs`` carries fitted efficiencies the speedup is that of the *compute term*:
    ``(eff_p x peak_p) / (eff_fp8 x peak_fp8)``, so the precision-independent parts of the
    step (communication, bubble, MoE token permutation) do not dilute it; otherwise the raw
    throughput ratio. Dense pairs are used where the vendor has any (a dense step is almost
    all GEMM, the cleanest measurement); only without them the MoE pairs. A vendor without
    pairs takes NVIDIA's speedup (AMD's FP8/BF16 scaled by :data:`AMD_FP8_SPEEDUP_RELATIVE`);
    without any pairs, the registered assumptions.
    """
    pub = obs.loc[obs["origin"] == "published"].copy()
    if "efficiency" in pub:
        peaks = {
            (a, p): peak_tflops(spec_row(a), p)
            for a, p in set(zip(pub["accelerator"], pub["precision"], strict=True))
        }
        pk = [peaks[(a, p)] for a, p in zip(pub["accelerator"], pub["precision"], strict=True)]
        pub["rate"] = pub["efficiency"].to_numpy(dtype=float) * np.asarray(pk)
    else:
        pub["rate"] = pub["measured_tps"]
    moe = pub["moe"] if "moe" in pub else pd.Series(False, index=pub.index)
    pub["family"] = np.where(moe.to_numpy(dtype=bool), "MoE", "dense")
    keys = ["source", "accelerator", "model", "n_gpus", "seq_len", "family", "vendor"]
    best = pub.groupby([*keys, "precision"], as_index=False)["rate"].max()
    wide = best.pivot_table(index=keys, columns="precision", values="rate")
    out: dict[str, float] = {}
    notes = []

    def pick(r: pd.Series, who: str) -> tuple[pd.Series, str]:
        r = r[r.index.get_level_values("vendor") == who]
        fam = r.index.get_level_values("family")
        dense = r[fam == "dense"]
        return (dense, "dense") if len(dense) else (r, "MoE")

    for prec, num, den in (("bf16", "bf16", "fp8"), ("fp4", "fp4", "fp8")):
        ratios = (
            (wide[num] / wide[den]).dropna()
            if num in wide and den in wide
            else pd.Series(dtype=float, index=pd.MultiIndex.from_tuples([], names=keys))
        )
        mine, fam_m = pick(ratios, vendor)
        nv, fam_n = pick(ratios, "NVIDIA")
        if len(mine):
            out[prec] = float(np.exp(np.log(mine).mean()))
            notes.append(f"{prec} measured ({len(mine)} {fam_m} pairs)")
        elif len(nv):
            r = float(np.exp(np.log(nv).mean()))
            if prec == "bf16" and vendor == "AMD":
                r = 1.0 / (AMD_FP8_SPEEDUP_RELATIVE / r)
            out[prec] = r
            notes.append(f"{prec} from NVIDIA's {len(nv)} {fam_n} pairs")
        else:
            notes.append(f"{prec} assumed")
    return out, "; ".join(notes)


def _fp8_equivalent(fitted: pd.DataFrame, specs: pd.DataFrame | None) -> pd.DataFrame:
    # log efficiency converted to FP8-relative terms with each vendor's speedups
    ok = fitted.loc[np.isfinite(fitted["efficiency"])].copy()
    speed = {v: measured_speedups(fitted, v)[0] for v in ok["vendor"].unique()}
    factors = [
        precision_factor(spec_row(a, specs), p, speed[v])
        for a, p, v in zip(ok["accelerator"], ok["precision"], ok["vendor"], strict=True)
    ]
    ok["x"] = np.log(ok["efficiency"].to_numpy() / np.asarray(factors))
    # one cell per accelerator x model x kind x origin: many submissions of one cell (H100
    # LoRA has dozens) must not outweigh a cell with one published row
    return ok.groupby(
        ["vendor", "generation", "kind", "accelerator", "model", "origin"], as_index=False
    )["x"].mean()


def estimate_efficiency(
    fitted: pd.DataFrame,
    spec: Mapping[str, Any],
    *,
    kind: str,
    precision: str,
    specs: pd.DataFrame | None = None,
) -> tuple[float, str]:
    """Efficiency (fraction of ``precision`` peak) for a part from fitted rows, and its source.

    In FP8-equivalent log efficiency: the part's own cells shrunk toward its vendor x
    generation mean, that toward the vendor's mean, that toward the mean of all cells
    (:data:`SHRINK_CELLS` pseudo-cells at each level); cells of the other kind count with
    :data:`OTHER_KIND_WEIGHT` after the measured pre-training/LoRA offset (the mean gap of the
    vendor x generation groups that have both). Then converted to ``precision`` with
    :func:`precision_factor` and the vendor's :func:`measured_speedups`.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown workload kind {kind!r}; allowed: 'pretrain', 'lora'")
    cells = _fp8_equivalent(fitted, specs)
    if cells.empty:
        raise ValueError("no fitted training rows to estimate an efficiency from")
    vendor, gen = spec.get("vendor"), generation_of(spec)
    by = cells.groupby(["vendor", "generation", "kind"])["x"].mean().unstack("kind")
    gaps = (by.get("pretrain") - by.get("lora")).dropna() if set(KINDS) <= set(by) else []
    offset = float(np.mean(gaps)) if len(gaps) else 0.0
    sign = np.where(cells["kind"] == kind, 0.0, np.where(kind == "pretrain", 1.0, -1.0))
    x_adj = cells["x"].to_numpy() + sign * offset
    w = np.where(cells["kind"] == kind, 1.0, OTHER_KIND_WEIGHT)
    k = SHRINK_CELLS
    m0 = float(np.average(x_adj, weights=w))
    mv_mask = (cells["vendor"] == vendor).to_numpy()
    m_v = (np.sum(w[mv_mask] * x_adj[mv_mask]) + k * m0) / (w[mv_mask].sum() + k)
    g_mask = mv_mask & (cells["generation"] == gen).to_numpy()
    m_g = (np.sum(w[g_mask] * x_adj[g_mask]) + k * m_v) / (w[g_mask].sum() + k)
    # the part itself last: MI325X is an MI300X with more HBM and power, and runs faster
    a_mask = g_mask & (cells["accelerator"] == spec.get("accelerator")).to_numpy()
    x = (np.sum(w[a_mask] * x_adj[a_mask]) + k * m_g) / (w[a_mask].sum() + k)
    speed, speed_note = measured_speedups(fitted, str(vendor))
    e = math.exp(x) * precision_factor(spec, precision, speed)
    n_own = int((g_mask & (cells["kind"] == kind).to_numpy()).sum())
    n_oth = int(g_mask.sum()) - n_own
    n_v = int(mv_mask.sum())
    source = (
        f"{vendor} {gen} {kind}: {n_own} own cells, {n_oth} of the other kind, shrunk to "
        f"{n_v} {vendor} cells; {speed_note}"
    )
    return min(MAX_EFFICIENCY, e), source


#: Per-process cache of the default v2 calibration: (data cache generation, fitted rows).
_FITTED: dict[str, tuple[int, pd.DataFrame]] = {}


def fitted_observations() -> pd.DataFrame:
    """The project's observations with fitted efficiencies (cached per process; a copy)."""
    return _fitted_cached().copy()


def _fitted_cached() -> pd.DataFrame:
    gen = _generation()
    hit = _FITTED.get("default")
    if hit is None or hit[0] != gen:
        hit = (gen, fit_row_efficiencies(training_observations()))
        _FITTED["default"] = hit
    return hit[1]


VALIDATION_SCHEMES: tuple[str, ...] = (
    "mlperf: leave one vendor x benchmark out",
    "mlperf: leave one GPU count out",
    "published: leave one source out",
)


def validate_training_model(
    fitted: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Out-of-sample predictions of every observation under each validation scheme.

    Each fold refits the pooled efficiency without the held-out rows (the per-row fits are
    local to their rows, so only the pooling changes) and predicts those rows:
    MLPerf rows leaving out a whole vendor x benchmark, or one accelerator x benchmark x GPU
    count; published rows leaving out one source (publisher) at a time, fitted on MLPerf and
    the other sources. ``err_pct`` is on throughput: 100 x (predicted / measured - 1),
    negative when the model is too slow. ``fold_rows`` counts the rows the fold fitted on
    (never including the predicted one).
    """
    fitted = _fitted_cached() if fitted is None else fitted
    folds: list[tuple[str, str, np.ndarray]] = []
    ml = (fitted["origin"] == "mlperf").to_numpy()
    for (v, bm), idx in fitted.loc[ml].groupby(["vendor", "benchmark"]).indices.items():
        held = np.flatnonzero(ml)[idx]
        folds.append((VALIDATION_SCHEMES[0], f"{v} x {bm}", held))
    for (a, bm, n), idx in (
        fitted.loc[ml].groupby(["accelerator", "benchmark", "n_gpus"]).indices.items()
    ):
        folds.append((VALIDATION_SCHEMES[1], f"{a} x {bm} x {n}", np.flatnonzero(ml)[idx]))
    pub = (fitted["origin"] == "published").to_numpy()
    for s, idx in fitted.loc[pub].groupby("source").indices.items():
        folds.append((VALIDATION_SCHEMES[2], str(s), np.flatnonzero(pub)[idx]))
    rows, effs, meta = [], [], []
    for scheme, fold, held in folds:
        train = fitted.drop(index=fitted.index[held])
        cache: dict[tuple[str, str, str], tuple[float, str]] = {}
        for i in held:
            r = fitted.iloc[i]
            key = (r["accelerator"], r["kind"], r["precision"])
            if key not in cache:
                cache[key] = estimate_efficiency(
                    train,
                    spec_row(r["accelerator"], specs),
                    kind=r["kind"],
                    precision=r["precision"],
                    specs=specs,
                )
            rows.append(i)
            effs.append(cache[key][0])
            meta.append((scheme, fold, len(train), cache[key][1]))
    out = fitted.iloc[rows].reset_index(drop=True)
    pred = _predict_tps(out, np.asarray(effs), specs, models)
    out.insert(0, "scheme", [m[0] for m in meta])
    out.insert(1, "fold", [m[1] for m in meta])
    out["fold_rows"] = [m[2] for m in meta]
    out["predicted_efficiency"] = effs
    out["efficiency_from"] = [m[3] for m in meta]
    out["predicted_tps"] = pred
    out["err_pct"] = 100.0 * (pred / out["measured_tps"] - 1.0)
    return out


def validation_scheme_summary(pred: pd.DataFrame) -> pd.DataFrame:
    """Median absolute and signed error (%) per scheme and vendor, and over each scheme."""
    ok = pred.loc[pred["err_pct"].notna()]
    out = []
    for scheme, g in ok.groupby("scheme", sort=False):
        fam = [("dense", g.loc[~g["moe"]]), ("MoE", g.loc[g["moe"]])] if g["moe"].any() else []
        for name, gg in [*g.groupby("vendor", sort=True), *fam, ("overall", g)]:
            out.append(
                {
                    "scheme": scheme,
                    "group": name,
                    "n": len(gg),
                    "median_abs_err_pct": float(gg["err_pct"].abs().median()),
                    "median_err_pct": float(gg["err_pct"].median()),
                }
            )
    return pd.DataFrame(out)


def ratio_errors(pred: pd.DataFrame) -> pd.DataFrame:
    """Error of the AMD/NVIDIA throughput ratio, per scheme, benchmark and GPU count.

    For every MLPerf benchmark and GPU count where both vendors have held-out predictions,
    each AMD part is paired with each NVIDIA part: measured ratio of the median throughputs
    against the predicted ratio; ``ratio_err_pct`` = 100 x (predicted / measured - 1).
    """
    ok = pred.loc[(pred["origin"] == "mlperf") & pred["err_pct"].notna()]
    med = ok.groupby(["scheme", "benchmark", "n_gpus", "vendor", "accelerator"], as_index=False)[
        ["measured_tps", "predicted_tps"]
    ].median()
    amd, nv = med.loc[med["vendor"] == "AMD"], med.loc[med["vendor"] == "NVIDIA"]
    pair = amd.merge(nv, on=["scheme", "benchmark", "n_gpus"], suffixes=("_amd", "_nv"))
    pair["measured_ratio"] = pair["measured_tps_amd"] / pair["measured_tps_nv"]
    pair["predicted_ratio"] = pair["predicted_tps_amd"] / pair["predicted_tps_nv"]
    pair["ratio_err_pct"] = 100.0 * (pair["predicted_ratio"] / pair["measured_ratio"] - 1.0)
    return pair[
        [
            "scheme",
            "benchmark",
            "n_gpus",
            "accelerator_amd",
            "accelerator_nv",
            "measured_ratio",
            "predicted_ratio",
            "ratio_err_pct",
        ]
    ].reset_index(drop=True)


def ratio_error_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Median absolute and signed AMD/NVIDIA ratio error (%) per scheme."""
    return pairs.groupby("scheme", as_index=False, sort=False).agg(
        pairs=("ratio_err_pct", "size"),
        median_abs_ratio_err_pct=("ratio_err_pct", lambda s: float(s.abs().median())),
        median_ratio_err_pct=("ratio_err_pct", "median"),
    )


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def _apply_overrides(spec: Mapping[str, Any], overrides: Mapping[str, float] | None) -> dict:
    out = dict(spec)
    for k, v in (overrides or {}).items():
        if k not in {
            "scaleup_domain_gpus",
            "scaleup_bw_gbps",
            "scaleout_gbps_per_gpu",
            "memory_gb",
            "memory_bw_tbps",
        }:
            raise ValueError(f"cannot override spec column {k!r}")
        out[k] = float(v)
    return out


def scaling_curve(
    accelerator: str,
    model: str,
    *,
    precision: str = "bf16",
    gpu_counts: tuple[int, ...] | list[int] = CURVE_GPU_COUNTS,
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    efficiency: float | None = None,
    spec_overrides: Mapping[str, float] | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Best layout, tokens/s per GPU and scaling efficiency at each GPU count.

    Scaling efficiency is relative to the first feasible count of ``gpu_counts`` at or above
    one node (capped at 1, see the module docstring); NaN where infeasible.
    ``throughput_ratio`` is the same ratio uncapped: above 1 where a larger count relieves
    memory pressure (a cheaper recomputation or sharding fits) rather than scaling.
    """
    spec = _apply_overrides(spec_row(accelerator, specs), spec_overrides)
    arch = model_arch(model, models)
    if efficiency is None:
        efficiency, _ = resolve_efficiency(
            accelerator, kind="pretrain", precision=precision, fits=fits
        )
    counts = np.asarray(sorted({int(c) for c in gpu_counts}), dtype=float)
    b = global_batch_tokens / seq_len
    res = evaluate_layouts(
        spec,
        arch,
        counts,
        precision=precision,
        seq_len=seq_len,
        batch_seqs=b,
        efficiency=efficiency,
    )
    thr = res["tokens_per_s_per_gpu"]
    base_mask = res["feasible"] & (counts >= min(NODE_GPUS, counts.max()))
    eff = np.full_like(thr, np.nan)
    ratio = np.full_like(thr, np.nan)
    if base_mask.any():
        j0 = int(np.argmax(base_mask))
        ratio = np.where(counts >= counts[j0], thr / thr[j0], np.nan)
        eff = np.minimum(1.0, ratio)
    df = pd.DataFrame(
        {
            "accelerator": accelerator,
            "model": model,
            "n_gpus": counts.astype(int),
            "feasible": res["feasible"],
            "tokens_per_s_per_gpu": thr,
            "scaling_efficiency": eff,
            "throughput_ratio": ratio,
            "mfu": res["mfu"],
            "memory_gb": res["memory_gb"],
            "step_s": res["step_s"],
            "t_compute": res["t_compute"],
            "t_tp": res["t_tp"],
            "t_bubble": res["t_bubble"],
            "t_dp_exposed": res["t_dp_exposed"],
            "t_other": res["t_other"],
            "t_recompute": res["t_recompute"],
            "t_moe": res["t_moe"],
            "t_moe_kernels": res["t_moe_kernels"],
            "t_pp": res["t_pp"],
            "t_latency": res["t_latency"],
            "t_optimizer": res["t_optimizer"],
            "reason": res["reason"],
        }
    )
    df["layout"] = [
        layout_label(*v)
        for v in zip(
            res["tp"], res["pp"], res["dp"], res["zero"], res["recompute"], res["cp"], strict=True
        )
    ]
    return df


def _baseline_counts(n_gpus: int) -> list[int]:
    counts = [c for c in (1, 2, 4) if c < NODE_GPUS] + [NODE_GPUS]
    c = NODE_GPUS
    while c < n_gpus:
        c *= 2
        counts.append(c)
    return sorted({x for x in counts if x >= min(NODE_GPUS, n_gpus)} | {int(n_gpus)})


def scaling_efficiency(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str = "bf16",
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    spec_overrides: Mapping[str, float] | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> float:
    """Throughput per GPU at ``n_gpus`` / throughput per GPU at the smallest feasible count.

    The baseline is one node when the model fits there, else the smallest feasible power of
    two above it. In (0, 1]. Raises ValueError for unknown ids, for a count below the
    baseline, and when no layout is feasible at ``n_gpus`` (the message says why).

    With ``spec_overrides`` (a what-if interconnect), the baseline stays the part as
    shipped: the result is the share of the shipping node's per-GPU throughput that a
    cluster with the changed interconnect keeps. Otherwise a cut in scale-up bandwidth
    would also slow the one-node baseline (its tensor parallelism runs over that link) and
    the ratio could rise while every GPU got slower; against a fixed baseline, cutting
    bandwidth never raises efficiency.
    """
    if int(n_gpus) < 1:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    counts = _baseline_counts(int(n_gpus))
    kwargs = {
        "precision": precision,
        "gpu_counts": counts,
        "seq_len": seq_len,
        "global_batch_tokens": global_batch_tokens,
        "specs": specs,
        "models": models,
        "fits": fits,
    }
    df = scaling_curve(accelerator, model, **kwargs)
    if spec_overrides:
        changed = scaling_curve(accelerator, model, spec_overrides=spec_overrides, **kwargs)
        j0 = df["scaling_efficiency"].first_valid_index()
        base = df.at[j0, "tokens_per_s_per_gpu"] if j0 is not None else np.nan
        df = changed.assign(
            scaling_efficiency=np.where(
                df["scaling_efficiency"].notna(),
                np.minimum(1.0, changed["tokens_per_s_per_gpu"] / base),
                np.nan,
            )
        )
    row = df.loc[df["n_gpus"] == int(n_gpus)].iloc[0]
    if not row["feasible"]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {row['reason']}"
        )
    if not np.isfinite(row["scaling_efficiency"]):
        base = int(df.loc[df["feasible"], "n_gpus"].min())
        raise ValueError(
            f"{n_gpus} GPUs is below the baseline of {base} GPUs (one node or "
            f"the smallest feasible count) for {model} on {accelerator}"
        )
    return float(row["scaling_efficiency"])


def predict_mlperf(
    accelerator: str,
    benchmark: str,
    n_gpus: int,
    *,
    precision: str = MLPERF_PRECISION,
    fits: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> float:
    """Predicted MLPerf Training time to train in minutes on ``n_gpus`` accelerators."""
    bm = _benchmark(benchmark)
    spec = spec_row(accelerator, specs)
    arch = model_arch(bm.model, models)
    fits = _fits_cached() if fits is None else fits
    own = fits.loc[
        (fits["accelerator"] == accelerator)
        & (fits["benchmark"] == benchmark)
        & np.isfinite(fits["efficiency"]),
        "efficiency",
    ]
    if len(own):
        eff = float(own.iloc[0]) * _precision_factor(precision)
    else:
        eff, _ = resolve_efficiency(
            accelerator, kind="lora" if bm.lora else "pretrain", precision=precision, fits=fits
        )
    counts = np.array([int(n_gpus)])
    minutes = _mlperf_minutes(spec, arch, benchmark, counts, eff, precision)[0]
    if not np.isfinite(minutes):
        _, res = _mlperf_layouts(spec, arch, benchmark, counts, eff, precision)
        raise ValueError(
            f"{benchmark} on {n_gpus} x {accelerator} is infeasible: {res['reason'][0]}"
        )
    return float(minutes)


def validate_against_mlperf(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Held-out predictions: every submission at a GPU count other than the calibration one.

    Columns: round, accelerator, vendor, benchmark, n_gpus, measured_min, predicted_min,
    err_pct (signed, predicted vs measured), holdout (True for held-out rows; the
    calibration rows are included with holdout=False for reference), submitter, system,
    measured_scaling / predicted_scaling (per-GPU throughput relative to the calibration
    point).
    """
    rows = mlperf_rows(mlperf)
    fits = fit_efficiencies(mlperf=mlperf, specs=specs, models=models)
    # One vectorized model call per (accelerator, benchmark): every submitted count and the
    # calibration count at the fitted efficiency (what predict_mlperf computes one by one).
    fitted = {
        (f.accelerator, f.benchmark): f
        for f in fits.itertuples(index=False)
        if np.isfinite(f.efficiency)
    }
    predicted: dict[tuple[str, str], dict[int, float]] = {}
    for (acc, bench), grp in rows.groupby(["accelerator", "benchmark"], sort=False):
        fr = fitted.get((acc, bench))
        if fr is None:
            continue
        counts = np.array(sorted(set(grp["n_gpus"].astype(int)) | {int(fr.n_gpus)}))
        eff = float(fr.efficiency) * _precision_factor(MLPERF_PRECISION)
        minutes = _mlperf_minutes(
            spec_row(str(acc), specs),
            model_arch(_benchmark(str(bench)).model, models),
            str(bench),
            counts,
            eff,
            MLPERF_PRECISION,
        )
        predicted[(acc, bench)] = {
            int(c): float(m) if np.isfinite(m) else math.nan
            for c, m in zip(counts, minutes, strict=True)
        }
    out = []
    for r in rows.itertuples(index=False):
        fr = fitted.get((r.accelerator, r.benchmark))
        if fr is None:
            continue
        by_n = predicted[(r.accelerator, r.benchmark)]
        pred = by_n[int(r.n_gpus)]
        t0_pred = by_n[int(fr.n_gpus)]
        n_ratio = r.n_gpus / fr.n_gpus
        out.append(
            {
                "round": r.round,
                "accelerator": r.accelerator,
                "vendor": r.vendor,
                "benchmark": r.benchmark,
                "n_gpus": r.n_gpus,
                "measured_min": r.measured_min,
                "predicted_min": pred,
                "err_pct": 100.0 * (pred - r.measured_min) / r.measured_min,
                "holdout": bool(r.n_gpus != fr.n_gpus),
                "submitter": r.submitter,
                "system": r.system,
                "calibration_n_gpus": int(fr.n_gpus),
                "measured_scaling": fr.measured_min / (r.measured_min * n_ratio),
                "predicted_scaling": t0_pred / (pred * n_ratio),
            }
        )
    df = pd.DataFrame(out)
    return df.sort_values(["benchmark", "accelerator", "n_gpus", "round"]).reset_index(drop=True)


def validation_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Median absolute error (%) of the held-out predictions, per vendor and overall."""
    held = df.loc[df["holdout"] & df["err_pct"].notna()]
    groups = [*held.groupby("vendor", sort=True), ("overall", held)]
    # the median of no rows is NaN, so an empty hold-out set gives an overall row of NaN
    return pd.DataFrame(
        [
            {
                "group": name,
                "n": len(g),
                "median_abs_err_pct": float(g["err_pct"].abs().median()),
                "median_err_pct": float(g["err_pct"].median()),
            }
            for name, g in groups
        ]
    )


def overall_error(summary: pd.DataFrame) -> float:
    """The overall median absolute error (%) of a :func:`validation_summary` table.

    The headline figure quoted next to the training winner; NaN when the table has no
    ``overall`` row.

    >>> s = pd.DataFrame({"group": ["AMD", "overall"], "median_abs_err_pct": [20.0, 12.5]})
    >>> overall_error(s)
    12.5
    """
    overall = summary.loc[summary["group"] == "overall", "median_abs_err_pct"]
    return float(overall.iloc[0]) if len(overall) else math.nan


def validation_detail(df: pd.DataFrame) -> pd.DataFrame:
    """Held-out errors per benchmark and accelerator: rows, median signed and absolute error.

    Signed error is positive when the model is too slow (predicted time above measured).
    """
    held = df.loc[df["holdout"] & df["err_pct"].notna()]
    return held.groupby(["benchmark", "accelerator", "vendor"], as_index=False).agg(
        rows=("err_pct", "size"),
        median_err_pct=("err_pct", "median"),
        median_abs_err_pct=("err_pct", lambda s: s.abs().median()),
    )


def time_to_train_hours(
    accelerator: str,
    model: str,
    tokens: float,
    n_gpus: int,
    *,
    precision: str = "bf16",
    seq_len: int = 8192,
    global_batch_tokens: float = 16.0e6,
    spec_overrides: Mapping[str, float] | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> float:
    """Wall-clock hours to train ``model`` on ``tokens`` tokens with ``n_gpus`` GPUs."""
    df = scaling_curve(
        accelerator,
        model,
        precision=precision,
        gpu_counts=[int(n_gpus)],
        seq_len=seq_len,
        global_batch_tokens=global_batch_tokens,
        spec_overrides=spec_overrides,
        specs=specs,
        models=models,
        fits=fits,
    )
    row = df.iloc[0]
    if not row["feasible"]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {row['reason']}"
        )
    return float(tokens / (row["tokens_per_s_per_gpu"] * n_gpus) / 3600.0)


def gpu_hours(accelerator: str, model: str, tokens: float, n_gpus: int, **kwargs: Any) -> float:
    """GPU-hours to train: :func:`time_to_train_hours` x ``n_gpus``."""
    return time_to_train_hours(accelerator, model, tokens, n_gpus, **kwargs) * n_gpus


def cost_to_train_usd(gpu_hours_: float, gpu_hour_usd: float) -> float:
    """Dollars to train: GPU-hours x $/GPU-hour (the TCO chapter supplies the price).

    >>> cost_to_train_usd(1000.0, 2.5)
    2500.0
    """
    return float(gpu_hours_) * float(gpu_hour_usd)


def evaluate_training(
    sc: Any,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per accelerator in ``sc.accelerators`` for the scenario's training job.

    Columns (contracts.md): accelerator, vendor, status, n_gpus, feasible, layout, mfu,
    scaling_efficiency, tokens_per_s_per_gpu, time_to_train_hours, gpu_hours, reason; plus
    efficiency and mfu_source (where the efficiency comes from).
    """
    tr = sc.training
    specs = _load_specs() if specs is None else specs
    counts = _baseline_counts(tr.cluster_gpus)
    out = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs)
        eff, source = resolve_efficiency(acc, kind="pretrain", precision=tr.precision, fits=fits)
        df = scaling_curve(
            acc,
            tr.model,
            precision=tr.precision,
            gpu_counts=counts,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            efficiency=eff,
            specs=specs,
            models=models,
            fits=fits,
        )
        at = df.loc[df["n_gpus"] == tr.cluster_gpus]
        row = at.iloc[0]
        thr = float(row["tokens_per_s_per_gpu"]) if row["feasible"] else math.nan
        # scaling efficiency against the unconstrained per-GPU reference (uncapped), and the
        # overhead term that costs the most there
        ref = reference_throughput(
            spec,
            model_arch(tr.model, models),
            precision=tr.precision,
            seq_len=tr.seq_len,
            efficiency=eff,
        )
        limit = _limit_names(at, 1.0 / ref)[0]
        hours = tr.tokens / (thr * tr.cluster_gpus) / 3600.0 if row["feasible"] else math.nan
        out.append(
            {
                "accelerator": acc,
                "vendor": spec.get("vendor"),
                "status": spec.get("status"),
                "n_gpus": tr.cluster_gpus,
                "feasible": bool(row["feasible"]),
                "layout": row["layout"],
                "mfu": float(row["mfu"]),
                "scaling_efficiency": thr / ref,
                "limit": limit if row["feasible"] else "",
                "tokens_per_s_per_gpu": thr,
                "time_to_train_hours": hours,
                "gpu_hours": hours * tr.cluster_gpus,
                "reason": row["reason"],
                "efficiency": eff,
                "mfu_source": source,
            }
        )
    return pd.DataFrame(out)


def training_winner(ev: pd.DataFrame) -> dict[str, Any]:
    """Shipping winner (shortest time to train) and its margin over the other vendor's best.

    ``margin_pct`` = winner's tokens/s per GPU over the best feasible shipping part of the
    other vendor, minus 100 (NaN when the other vendor has none).
    """
    ship = ev.loc[(ev["status"] == "shipping") & ev["feasible"]]
    if ship.empty:
        return {"winner": "", "vendor": "", "margin_pct": math.nan}
    best = ship.sort_values(["time_to_train_hours", "accelerator"]).iloc[0]
    other = ship.loc[ship["vendor"] != best["vendor"]]
    margin = (
        100.0 * (best["tokens_per_s_per_gpu"] / other["tokens_per_s_per_gpu"].max() - 1.0)
        if len(other)
        else math.nan
    )
    return {"winner": best["accelerator"], "vendor": best["vendor"], "margin_pct": margin}


#: What-ifs that isolate the article's interconnect claims (seed article): NVLink 6
#: "3.6 TB/s per GPU" belongs to Vera Rubin (announced), "UALink 300 GB/s" is not a shipping
#: MI3xx figure; scale-up domain 8 vs 72; scale-out 400 vs 800 Gb/s per GPU.
WHAT_IFS: tuple[tuple[str, dict[str, float]], ...] = (
    ("as shipped", {}),
    ("scale-up domain 8", {"scaleup_domain_gpus": 8}),
    ("scale-up domain 72", {"scaleup_domain_gpus": 72}),
    ("scale-up 3.6 TB/s (NVLink 6 claim)", {"scaleup_bw_gbps": 3600}),
    ("scale-up 300 GB/s (article's UALink figure)", {"scaleup_bw_gbps": 300}),
    ("scale-out 400 Gb/s", {"scaleout_gbps_per_gpu": 400}),
    ("scale-out 800 Gb/s", {"scaleout_gbps_per_gpu": 800}),
)


def what_if_table(
    sc: Any,
    *,
    n_gpus: int | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Tokens/s per GPU and time to train under each interconnect what-if, per candidate.

    Columns: accelerator, vendor, what_if, feasible, tokens_per_s_per_gpu,
    time_to_train_hours, change_pct (throughput vs as shipped), layout.
    """
    tr = sc.training
    n = int(n_gpus or tr.cluster_gpus)
    specs = _load_specs() if specs is None else specs
    out = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs)
        eff, _ = resolve_efficiency(acc, kind="pretrain", precision=tr.precision, fits=fits)
        base = math.nan
        for name, ov in WHAT_IFS:
            df = scaling_curve(
                acc,
                tr.model,
                precision=tr.precision,
                gpu_counts=[n],
                seq_len=tr.seq_len,
                global_batch_tokens=tr.global_batch_tokens,
                efficiency=eff,
                spec_overrides=ov,
                specs=specs,
                models=models,
            )
            r = df.iloc[0]
            thr = float(r["tokens_per_s_per_gpu"])
            if not ov:
                base = thr
            out.append(
                {
                    "accelerator": acc,
                    "vendor": spec.get("vendor"),
                    "what_if": name,
                    "feasible": bool(r["feasible"]),
                    "tokens_per_s_per_gpu": thr,
                    "time_to_train_hours": tr.tokens / (thr * n) / 3600.0,
                    "change_pct": 100.0 * (thr / base - 1.0),
                    "layout": r["layout"],
                }
            )
    return pd.DataFrame(out)


def scaling_curves(
    sc: Any,
    *,
    gpu_counts: tuple[int, ...] = CURVE_GPU_COUNTS,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fits: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Scaling curves (one node to 16,384 GPUs) for every accelerator of the scenario."""
    tr = sc.training
    specs = _load_specs() if specs is None else specs
    frames = []
    for acc in sc.accelerators:
        eff, _ = resolve_efficiency(acc, kind="pretrain", precision=tr.precision, fits=fits)
        df = scaling_curve(
            acc,
            tr.model,
            precision=tr.precision,
            gpu_counts=gpu_counts,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            efficiency=eff,
            specs=specs,
            models=models,
        )
        spec = spec_row(acc, specs)
        df.insert(1, "vendor", spec.get("vendor"))
        df.insert(2, "status", spec.get("status"))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def throughput_ratio_table(curves: pd.DataFrame) -> pd.DataFrame:
    """The uncapped throughput ratio of :func:`scaling_curves`: GPU counts x accelerators.

    One row per GPU count (ascending), one column per accelerator (alphabetical); a part
    with no feasible count at all has no column. Values above 1 are memory relief, not
    scaling (the plotted efficiency is min(1, ratio)).

    >>> c = pd.DataFrame({"n_gpus": [8, 16, 8, 16], "accelerator": ["B", "B", "A", "A"],
    ...                   "throughput_ratio": [1.0, 0.9, 1.0, 1.1]})
    >>> throughput_ratio_table(c).to_dict("index")
    {8: {'A': 1.0, 'B': 1.0}, 16: {'A': 1.1, 'B': 0.9}}
    """
    return curves.pivot_table(index="n_gpus", columns="accelerator", values="throughput_ratio")


def what_if_matrix(what_ifs: pd.DataFrame) -> pd.DataFrame:
    """Throughput change (%) vs as shipped of :func:`what_if_table`: accelerators x what-ifs.

    One row per accelerator, one column per what-if (both alphabetical).

    >>> w = pd.DataFrame({"accelerator": ["H200", "H200"],
    ...                   "what_if": ["as shipped", "scale-out 400 Gb/s"],
    ...                   "change_pct": [0.0, -2.5]})
    >>> what_if_matrix(w).to_dict("index")
    {'H200': {'as shipped': 0.0, 'scale-out 400 Gb/s': -2.5}}
    """
    return what_ifs.pivot_table(index="accelerator", columns="what_if", values="change_pct")


# --------------------------------------------------------------------------------------
# Public API v2: throughput per GPU, its details, and scaling against a reference
# --------------------------------------------------------------------------------------

#: Step-time overhead terms and the limit each one names (the chapter's "which limit bites").
LIMIT_TERMS: tuple[tuple[str, str], ...] = (
    ("t_recompute", "memory (recomputation forced by HBM capacity)"),
    ("t_tp", "exposed tensor/context-parallel communication"),
    ("t_moe", "exposed MoE all-to-all"),
    ("t_moe_kernels", "MoE grouped GEMMs and token permutation"),
    ("t_bubble", "pipeline bubble (too few microbatches per rank: the batch)"),
    ("t_pp", "pipeline point-to-point traffic"),
    ("t_dp_exposed", "exposed data-parallel communication"),
    ("t_latency", "collective latency"),
    ("t_optimizer", "optimizer step"),
)


def pretrain_efficiency(
    accelerator: str,
    precision: str,
    *,
    kind: str = "pretrain",
    fitted: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
) -> tuple[float, str]:
    """Pooled efficiency for a part's pre-training (or LoRA) at ``precision``, and its source."""
    fitted = _fitted_cached() if fitted is None else fitted
    return estimate_efficiency(
        fitted, spec_row(accelerator, specs), kind=kind, precision=precision, specs=specs
    )


def throughput_details(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str,
    seq_len: int = 8192,
    global_batch_tokens: float,
    efficiency: float | None = None,
    spec_overrides: Mapping[str, float] | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    fitted: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """:func:`throughput_per_gpu` with its layout, MFU, memory and step-time terms.

    Keys: accelerator, model, n_gpus, precision, tokens_per_s_per_gpu, layout, tp, pp, cp,
    dp, ep, vp, zero, recompute, memory_gb, mfu, step_s, the ``t_*`` terms of
    :func:`evaluate_layouts` (seconds per step), efficiency and efficiency_from; raises
    ValueError with the reason when no layout is feasible.
    """
    if int(n_gpus) < 1:
        raise ValueError(f"n_gpus must be a positive integer, got {n_gpus!r}")
    if not global_batch_tokens or global_batch_tokens <= 0:
        raise ValueError(f"global_batch_tokens must be positive, got {global_batch_tokens!r}")
    spec = _apply_overrides(spec_row(accelerator, specs), spec_overrides)
    arch = model_arch(model, models)
    source = "given"
    if efficiency is None:
        efficiency, source = pretrain_efficiency(accelerator, precision, fitted=fitted, specs=specs)
    res = evaluate_layouts(
        spec,
        arch,
        [int(n_gpus)],
        precision=precision,
        seq_len=int(seq_len),
        batch_seqs=global_batch_tokens / seq_len,
        efficiency=efficiency,
    )
    if not res["feasible"][0]:
        raise ValueError(
            f"{model} on {n_gpus} x {accelerator} ({precision}) is infeasible: {res['reason'][0]}"
        )
    out: dict[str, Any] = {
        "accelerator": accelerator,
        "model": model,
        "n_gpus": int(n_gpus),
        "precision": precision,
    }
    for k, v in res.items():
        if k not in {"n_gpus", "feasible", "reason"}:
            out[k] = float(v[0])
    out["layout"] = layout_label(
        res["tp"][0], res["pp"][0], res["dp"][0], res["zero"][0], res["recompute"][0], res["cp"][0]
    )
    out["efficiency"] = float(efficiency)
    out["efficiency_from"] = source
    return out


def throughput_per_gpu(
    accelerator: str,
    model: str,
    n_gpus: int,
    *,
    precision: str,
    seq_len: int = 8192,
    global_batch_tokens: float,
    **kwargs: Any,
) -> float:
    """Tokens/s per GPU of pre-training at the best feasible layout (public contract).

    The efficiency is the part's pooled pre-training fit (:func:`pretrain_efficiency`);
    ValueError with the reason when no layout fits (memory, batch, GPU count).
    """
    return float(
        throughput_details(
            accelerator,
            model,
            n_gpus,
            precision=precision,
            seq_len=seq_len,
            global_batch_tokens=global_batch_tokens,
            **kwargs,
        )["tokens_per_s_per_gpu"]
    )


def reference_throughput(
    spec: Mapping[str, Any],
    arch: Mapping[str, float],
    *,
    precision: str,
    seq_len: int,
    efficiency: float,
) -> float:
    """Unconstrained per-GPU reference: best layout on one node, memory and batch unlimited.

    The ceiling the scaling curves are measured against: one node's scale-up domain,
    :data:`REFERENCE_MICROBATCHES` microbatches per rank, no HBM limit (so no forced
    recomputation). A curve below it has lost to batch, bubble, communication or memory.
    """
    res = evaluate_layouts(
        spec,
        arch,
        [NODE_GPUS],
        precision=precision,
        seq_len=seq_len,
        batch_seqs=1.0,
        efficiency=efficiency,
        unconstrained=True,
    )
    return float(res["tokens_per_s_per_gpu"][0])


def _limit_names(df: pd.DataFrame, ref_step_per_token: float) -> list[str]:
    # the overhead term with the largest share of the step (per token, over the reference)
    terms = np.column_stack([df[t].to_numpy(dtype=float) for t, _ in LIMIT_TERMS])
    tokens = (df["tokens_per_s_per_gpu"] * df["step_s"]).to_numpy(dtype=float)
    per_tok = terms / tokens[:, None]
    out = []
    for j in range(len(df)):
        if not np.isfinite(per_tok[j]).all():
            out.append("infeasible")
            continue
        out.append(LIMIT_TERMS[int(np.argmax(per_tok[j]))][1])
    return out


def scaling_study(
    accelerator: str,
    model: str,
    *,
    precision: str,
    seq_len: int,
    global_batch_tokens: float,
    cluster_gpus: int,
    gpu_counts: tuple[int, ...] = CURVE_GPU_COUNTS,
    efficiency: float | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Weak and strong scaling of one part against its unconstrained per-GPU reference.

    ``strong``: the scenario's global batch at every count (fewer microbatches per rank as
    the count grows). ``weak``: tokens per GPU held at the scenario's
    (``global_batch_tokens / cluster_gpus``), so the global batch grows with the count.
    ``efficiency_vs_reference`` = tokens/s per GPU over :func:`reference_throughput`,
    uncapped; ``limit`` names the overhead term with the largest share of the step there.
    """
    spec = spec_row(accelerator, specs)
    arch = model_arch(model, models)
    if efficiency is None:
        efficiency, _ = pretrain_efficiency(accelerator, precision, specs=specs)
    counts = np.asarray(sorted({int(c) for c in gpu_counts} | {int(cluster_gpus)}), dtype=float)
    ref = reference_throughput(
        spec, arch, precision=precision, seq_len=seq_len, efficiency=efficiency
    )
    per_gpu = global_batch_tokens / cluster_gpus
    frames = []
    for mode, batch in (
        ("strong", np.full_like(counts, global_batch_tokens / seq_len)),
        ("weak", np.maximum(1.0, np.round(per_gpu * counts / seq_len))),
    ):
        res = evaluate_layouts(
            spec,
            arch,
            counts,
            precision=precision,
            seq_len=seq_len,
            batch_seqs=batch,
            efficiency=efficiency,
        )
        df = pd.DataFrame({k: v for k, v in res.items() if k != "n_gpus"})
        df.insert(0, "n_gpus", counts.astype(int))
        df.insert(0, "mode", mode)
        df.insert(0, "accelerator", accelerator)
        df["global_batch_seqs"] = batch
        df["reference_tps"] = ref
        df["efficiency_vs_reference"] = df["tokens_per_s_per_gpu"] / ref
        df["limit"] = _limit_names(df, 1.0 / ref)
        df["layout"] = [
            layout_label(*v)
            for v in zip(
                df["tp"], df["pp"], df["dp"], df["zero"], df["recompute"], df["cp"], strict=True
            )
        ]
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def scaling_studies(
    sc: Any, *, specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None
) -> pd.DataFrame:
    """:func:`scaling_study` for every accelerator of the scenario (vendor and status added)."""
    tr = sc.training
    frames = []
    for acc in sc.accelerators:
        spec = spec_row(acc, specs)
        df = scaling_study(
            acc,
            tr.model,
            precision=tr.precision,
            seq_len=tr.seq_len,
            global_batch_tokens=tr.global_batch_tokens,
            cluster_gpus=tr.cluster_gpus,
            specs=specs,
            models=models,
        )
        df.insert(1, "vendor", spec.get("vendor"))
        df.insert(2, "status", spec.get("status"))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """``make bench`` cases: (name, callable, target seconds)."""
    from analysis import params, paths

    sc = params.load_scenario(paths.DEFAULT_PARAMS)
    specs, models, fits = _load_specs(), _load_models(), _fits_cached()
    present = set(specs["accelerator"])
    accs = tuple(a for a in ids.ACCELERATORS if a in present)

    def curves_all() -> object:
        return [
            scaling_curve(
                a,
                sc.training.model,
                precision=sc.training.precision,
                specs=specs,
                models=models,
                fits=fits,
            )
            for a in accs
        ]

    def cold(fn: Callable[[], object]) -> Callable[[], object]:
        # What a fresh chapter kernel pays: calibration and lookups recomputed.
        def run() -> object:
            clear_caches()
            return fn()

        return run

    return [
        ("training: scaling curves, all accelerators x 12 GPU counts", curves_all, 0.5),
        (
            "training: evaluate_training(default scenario)",
            lambda: evaluate_training(sc, specs=specs, models=models, fits=fits),
            0.5,
        ),
        (
            "training: evaluate_training(default scenario), cold (calibration included)",
            cold(lambda: evaluate_training(sc)),
            0.5,
        ),
        ("training: fit_efficiencies() (MLPerf calibration), cold", cold(fit_efficiencies), 0.5),
        # v2: per-row fits of every MLPerf and published row, then three hold-out schemes
        ("training: fitted_observations(), cold (v2 calibration)", cold(fitted_observations), 2.0),
        ("training: validate_training_model(), calibration cached", validate_training_model, 2.0),
        (
            "training: validate_against_mlperf(), cold (calibration included)",
            cold(validate_against_mlperf),
            0.5,
        ),
        ("training: validate_against_mlperf(), calibration cached", validate_against_mlperf, 0.2),
        (
            "training: what_if_table(default scenario)",
            lambda: what_if_table(sc, specs=specs, models=models, fits=fits),
            0.5,
        ),
    ]


def key_results(
    ev: pd.DataFrame,
    summary: pd.DataFrame,
    curves: pd.DataFrame | None = None,
    studies: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The chapter's key results (contracts.md, ``20-training-scaling``).

    ``ev`` from :func:`evaluate_training`, ``summary`` from :func:`validation_summary`.
    ``scaling_eff_{N}_{ACC}`` is the efficiency at the largest count N (16,384 GPUs) so the
    report shows the scale-out gap beyond the scenario's cluster. With ``studies``
    (:func:`scaling_studies`) it is the *strong-scaling* efficiency against the part's
    unconstrained per-GPU reference, uncapped (the same definition as ``scaling_eff_{ACC}``
    at the cluster size); otherwise, for older callers, the capped ratio of ``curves``
    (:func:`scaling_curves`). Infeasible candidates get None for their numbers.
    """
    out: dict[str, Any] = {}
    top = None
    col = "scaling_efficiency"
    if studies is not None and len(studies):
        strong = studies.loc[studies["mode"] == "strong"]
        n_max = int(strong["n_gpus"].max())
        top = strong.loc[strong["n_gpus"] == n_max].set_index("accelerator")
        col = "efficiency_vs_reference"
    elif curves is not None and len(curves):
        n_max = int(curves["n_gpus"].max())
        top = curves.loc[curves["n_gpus"] == n_max].set_index("accelerator")
    for r in ev.itertuples(index=False):
        ok = bool(r.feasible)
        out[f"train_hours_{r.accelerator}"] = float(r.time_to_train_hours) if ok else None
        out[f"train_gpu_hours_{r.accelerator}"] = float(r.gpu_hours) if ok else None
        out[f"scaling_eff_{r.accelerator}"] = float(r.scaling_efficiency) if ok else None
        if top is not None:
            eff = (
                float(top.at[r.accelerator, col])
                if r.accelerator in top.index and bool(top.at[r.accelerator, "feasible"])
                else math.nan
            )
            out[f"scaling_eff_{n_max}_{r.accelerator}"] = eff if math.isfinite(eff) else None
    win = training_winner(ev)
    out["train_winner"] = win["winner"]
    out["train_winner_vendor"] = win["vendor"]
    out["train_margin_pct"] = float(win["margin_pct"])
    overall = summary.loc[summary["group"] == "overall", "median_abs_err_pct"]
    out["mlperf_median_err_pct"] = float(overall.iloc[0]) if len(overall) else None
    return out
