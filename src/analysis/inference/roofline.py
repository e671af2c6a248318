"""Serving physics: the roofline terms of one replica.

The hardware and model numbers the terms need, and the lookups every module of
:mod:`analysis.inference` shares.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis import ids
from analysis.inference.compute_ratio import scaled_time
from analysis.inference.experts import chunked_expert_reads, ep_imbalance, expert_touched_fraction
from analysis.inference.layer_kernels import overhead_layers
from analysis.inputs import Inputs, resolve

#: Bytes per weight: bf16, fp8, fp4 with one 8-bit scale per 16 values (NVFP4; MXFP4 is
#: 4.25 bits). https://docs.nvidia.com/cuda/cublas/#d-block-scaling-factors-layout
BYTES_PER_PARAM: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}

#: KV-cache bytes per element: serving stacks keep fp8 KV with fp8/fp4 weights.
KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 1.0}

#: Peak-FLOPS column of ``load_specs()`` per precision.
PEAK_COLUMN: dict[str, str] = {
    "bf16": "bf16_dense_tflops",
    "fp8": "fp8_dense_tflops",
    "fp4": "fp4_dense_tflops",
}

#: Fraction of HBM the serving engine may use (vLLM ``gpu_memory_utilization`` default 0.9,
#: https://docs.vllm.ai/en/latest/configuration/engine_args.html); the rest is reserve.
MEMORY_USABLE_FRACTION = 0.9  # register: A-inference-memory-usable

#: Rate per watt a refresh on its predecessors' process node reaches at full tensor load,
#: relative to the best of those predecessors (spec rate / TDP; ``<format>_node_tflops_per_w``
#: of :attr:`analysis.inputs.Inputs.specs`). On one node the energy of an operation in a
#: format is the node's and the datapath's, so a part whose spec rate rises faster than its
#: power (B300: 1.5x B200's FP4 at 1.1x the TDP) cannot sustain it under a dense GEMM: its
#: compute roofline is min(spec rate, TDP x this x the predecessors' rate per watt). 1 = no
#: gain in energy per operation. Nothing is fitted, but the rule was chosen after seeing
#: MLPerf v6.0's B300/GB300 rows (the register row says what that does to the validation).
SAME_NODE_RATE_PER_WATT_GAIN = 1.0  # register: A-inference-same-node-rate-per-watt

#: Fixed per-decode-step overhead (scheduling, sampling, launch), seconds. Assumption.
STEP_OVERHEAD_S = 1.0e-3  # register: A-inference-step-overhead

#: Latency of one all-reduce on the scale-up fabric, seconds. Assumption (NCCL/RCCL
#: small-message all-reduce within a node is ~5-20 us).
ALLREDUCE_LATENCY_S = 10.0e-6  # register: A-inference-allreduce-latency

#: Activation bytes in tensor-parallel all-reduces (bf16).
ACT_BYTES = 2.0

#: Prefill tokens one step may carry with chunked prefill (vLLM ``max_num_batched_tokens``
#: and SGLang ``chunked_prefill_size`` are 8192 on large-memory GPUs): a prompt of ISL
#: tokens waits ISL / budget chunked steps before its first token, and a decode step reads
#: a chunk's (min(ISL, budget) tokens) experts once per chunk: :func:`chunked_expert_reads`.
PREFILL_CHUNK_TOKENS = 8192.0  # register: A-inference-prefill-chunk

#: Standard-normal quantile of MLPerf's 99th-percentile latency bounds. Under Poisson
#: arrivals (MLPerf Server/Interactive) the number of sequences in flight at mean B
#: fluctuates with standard deviation sqrt(B), so the p99 step runs at B + z sqrt(B).
P99_Z = 2.326

#: Concurrency levels swept per replica (256, geometric 1 ... 4096).
CONCURRENCY = np.geomspace(1.0, 4096.0, 256)

#: Tensor-parallel degrees an MLPerf submitter may choose inside an 8-GPU node.
MLPERF_TP = (1, 2, 4, 8)

#: Efficiency search interval for calibration (fraction of roofline).
ETA_BRACKET = (1.0e-3, 3.0)

#: Architecture generation per accelerator (fallback when the spec table has none).
GENERATION: dict[str, str] = {
    "H100-SXM": "Hopper",
    "H200": "Hopper",
    "B200": "Blackwell",
    "GB200": "Blackwell",
    "B300": "Blackwell Ultra",
    "GB300": "Blackwell Ultra",
    "VR200": "Rubin",
    "MI300X": "CDNA 3",
    "MI325X": "CDNA 3",
    "MI350X": "CDNA 4",
    "MI355X": "CDNA 4",
    "MI455X": "CDNA 5",
}

#: Generation order per vendor (newest last), for announced parts' fallback factor.
GENERATION_ORDER: dict[str, tuple[str, ...]] = {
    "NVIDIA": ("Hopper", "Blackwell", "Blackwell Ultra", "Rubin"),
    "AMD": ("CDNA 3", "CDNA 4", "CDNA 5"),
}

SCENARIOS = ("Offline", "Server", "Interactive")


def _lookup(frame: pd.DataFrame, key: str, value: str) -> pd.Series:
    """The first row of ``frame`` whose ``key`` column is ``value`` (clear error if none)."""
    hit = frame.loc[frame[key] == value]
    if hit.empty:
        raise ValueError(ids.unknown_id_message(key, value, tuple(frame[key])))
    return hit.iloc[0]


def _num(row: pd.Series, col: str, default: float = float("nan")) -> float:
    if col not in row.index:
        return default
    v = row[col]
    try:
        v = float(v)
    except (TypeError, ValueError):
        return default
    return default if math.isnan(v) else v


def _check_precision(precision: str) -> None:
    if precision not in BYTES_PER_PARAM:
        raise ValueError(f"unknown precision {precision!r}; allowed: {', '.join(BYTES_PER_PARAM)}")


@dataclass(frozen=True)
class ServingShape:
    """How a step's time departs from the bandwidth roofline, per vendor (few parameters).

    Fitted on latency-resolved sweeps (InferenceX: the same configuration at many
    concurrencies, :func:`analysis.inference.latency.fit_shape`), where low-concurrency
    points pin the overheads and bandwidth, high-concurrency ones the compute: a step
    takes ``overheads + sum over operators of max(bytes / (eta_b BW), FLOPs / (eta_b
    peak))``; the level eta_b is the calibrated efficiency (:class:`Calibration`).
    Every model pays the per-layer overhead; the rest belong to MoE layers only:

    * ``expert_rows``: the fewest rows a touched expert's grouped GEMM costs. A routed
      expert that receives m tokens (m = k T / touched experts) is a small-M GEMM; tile
      padding and the under-occupancy of many small work items make it cost as much as
      max(m, ``expert_rows``) rows. Fine-grained MoE at serving batches (DeepSeek-R1, 256
      experts, a few tokens each) pays it in full; Mixtral at MLPerf Offline batches
      (8 experts, hundreds of tokens each) not at all. Per vendor: one value for the
      vendor's grouped-GEMM kernels in every format (see :func:`fit_shape`).
    * Unscaled overheads: per layer (each kernel's floor at small batches, a model's layers
      counted in DeepSeek-R1 layers by kernels, :mod:`analysis.inference.layer_kernels`),
      per sequence in the batch (sampling, scheduling, metadata) and per touched expert
      of each MoE layer (its own work item; the expected touched count, prompts read once
      per prefill chunk, :func:`chunked_expert_reads`, grows with the batch). Per vendor
      (the serving stacks differ); a ``"<vendor> <generation>"`` key, where the fit made
      one (``fit_shape(..., by_generation=True)``), is taken before the vendor's.
    * ``prefill_cost``: what a prompt token's FLOPs cost in a decode step (and in the
      prompt's own prefill pass) over a decode token's; 1 = the same. Fitted on the
      sweeps across prompt lengths; MoE models only.

    Empty = the plain roofline (no overheads beyond :data:`STEP_OVERHEAD_S`).
    """

    #: vendor -> seconds per DeepSeek-R1 layer's kernels per step (``layer_kernels``).
    overhead_layer_s: Mapping[str, float] = field(default_factory=dict)
    overhead_seq_s: Mapping[str, float] = field(default_factory=dict)  #: vendor -> s/sequence
    #: vendor -> minimum rows a touched expert's grouped GEMM costs.
    expert_rows: Mapping[str, float] = field(default_factory=dict)
    points: Mapping[str, int] = field(default_factory=dict)  #: vendor -> points fitted
    #: vendor -> seconds per touched expert per MoE layer (grouped-GEMM work item).
    overhead_expert_s: Mapping[str, float] = field(default_factory=dict)
    #: vendor -> cost of a prompt token's FLOPs over a decode token's (1 = the same).
    prefill_cost: Mapping[str, float] = field(default_factory=dict)

    def params(self, vendor: str, generation: str | None = None) -> dict[str, float]:
        """The shape keys :func:`_terms` reads from ``hw`` for one vendor (and generation)."""
        key = f"{vendor} {generation}" if generation else vendor

        def get(table: Mapping[str, float]) -> float:
            return float(table.get(key, table.get(vendor, 0.0)))

        return {
            "expert_rows": get(self.expert_rows),
            "overhead_layer_s": get(self.overhead_layer_s),
            "overhead_seq_s": get(self.overhead_seq_s),
            "overhead_expert_s": get(self.overhead_expert_s),
            "prefill_cost": float(self.prefill_cost.get(key, self.prefill_cost.get(vendor, 1.0))),
        }


#: The plain roofline shape (no fitted overheads): what the shape fit itself starts from.
ROOFLINE_SHAPE = ServingShape()


def model_params(m: pd.Series) -> dict[str, float]:
    """The numbers the model needs from one ``load_models()`` row (MoE split derived)."""
    total = _num(m, "total_params_b")
    active = _num(m, "active_params_b", total)
    experts = _num(m, "experts", 0.0)
    k = _num(m, "active_experts", 0.0)
    if experts > 1 and 0 < k < experts and active < total:
        r = k / experts
        # total = shared + routed; active = shared + routed * k/E  ->  solve for shared.
        shared = max((active - total * r) / (1.0 - r), 0.0)
        routed = total - shared
    else:
        r, shared, routed = 0.0, total, 0.0
    heads = _num(m, "attention_heads")
    head_dim = _num(m, "head_dim", _num(m, "hidden_size") / heads if heads else float("nan"))
    kv_heads = _num(m, "kv_heads", heads)
    layers = _num(m, "layers")
    kv_tok = _num(m, "kv_bytes_per_token_bf16", 2.0 * layers * kv_heads * head_dim * 2.0)
    mla = "attention_type" in m.index and str(m["attention_type"]).lower() == "mla"
    if mla:
        # MLA with absorbed projections (DeepSeek-V3 paper, sec. 2.1.2; FlashMLA): every
        # head scores against the cached latent (kv_lora_rank) plus the rotary key
        # (qk_rope_head_dim), then mixes the latent: 2 x heads x (2 x rank + rope) FLOPs
        # per (query, context) pair and layer, 4.25x the 4 x heads x head_dim of MHA.
        rank = _num(m, "kv_lora_rank", 512.0)
        rope = _num(m, "qk_rope_head_dim", 64.0)
        attn_flops = 2.0 * heads * (2.0 * rank + rope)
        # A prefill worker's fresh prompt attends in the compute-friendly form instead
        # (vLLM's MLA backend, ``vllm/v1/attention/backends/mla/common.py``: "compute
        # friendly approach for prefill", the absorbed one for decode): the latent
        # decompressed to per-head keys (head_dim + rope) and values (head_dim), as MHA
        # (the models table's one head_dim is both qk_nope_head_dim and v_head_dim).
        attn_flops_prefill = 2.0 * heads * (2.0 * head_dim + rope)
    else:
        attn_flops = attn_flops_prefill = 4.0 * heads * head_dim
    window = _num(m, "sliding_window", 0.0)
    sliding = _num(m, "sliding_window_layers", 0.0) if window > 0 else 0.0
    out = {
        "total_b": total,
        "active_b": active,
        "shared_b": shared,
        "routed_b": routed,
        "route_frac": r,
        "experts": experts if routed > 0 else 0.0,
        "layers": layers,
        "hidden": _num(m, "hidden_size"),
        "heads": heads,
        "head_dim": head_dim,
        "kv_heads": kv_heads,
        "kv_tok_bf16": kv_tok,  # KV bytes per token of context (full-attention layers, bf16)
        "kv_window_bf16": _num(m, "kv_window_bytes_bf16", 0.0),  # fixed per sequence
        "mla": 1.0 if mla else 0.0,
        # Attention FLOPs per (query, context) token pair per layer, and how many layers
        # attend to a sliding window (their pairs per query are capped at ``window``).
        "attn_flops_pair": attn_flops,
        "attn_flops_pair_prefill": attn_flops_prefill,
        "sliding_layers": sliding,
        "window": window,
        # Parameters the served checkpoints keep in BF16 (``shared_weight_bytes``).
        "bf16_fp8_b": _num(m, "fp8_bf16_params_b", 0.0),
        "bf16_fp4_nvidia_b": _num(m, "fp4_bf16_params_nvidia_b", 0.0),
        "bf16_fp4_amd_b": _num(m, "fp4_bf16_params_amd_b", 0.0),
        "dense_layers": _num(m, "dense_layers", 0.0) if routed > 0 else 0.0,
        "shared_experts": _num(m, "shared_experts", 0.0) if routed > 0 else 0.0,
    }
    out["overhead_layers"] = overhead_layers(out)  # in DeepSeek-R1 layers, by kernels
    return out


def shared_weight_bytes(
    mp: Mapping[str, npt.ArrayLike], hw: Mapping[str, npt.ArrayLike], precision: str
) -> np.ndarray:
    """Bytes of a replica's dense (shared) weights at ``precision``'s served checkpoint.

    Every weight at the format's width (:data:`BYTES_PER_PARAM`), except the parameters
    the vendors' checkpoints keep in BF16 (``models.csv``'s ``fp8_bf16_params_b``,
    ``fp4_bf16_params_nvidia_b``, ``fp4_bf16_params_amd_b``; empty = none). They are
    dense weights (attention projections, output head, router), so each step reads them
    whole: DeepSeek-R1's FP4 checkpoints keep 5.3 B (NVIDIA) and 12.4 B (AMD) of its
    16.5 B shared parameters in BF16, which a step reads at 2 bytes, not 0.56. ``hw``
    says whose checkpoint (``amd`` = 1 for AMD, from :func:`hardware_params_at`).

    >>> mp = {"shared_b": 16.0, "bf16_fp4_nvidia_b": 4.0, "bf16_fp4_amd_b": 12.0}
    >>> float(shared_weight_bytes(mp, {"amd": 0.0}, "fp4")) / 1e9  # 12 x 0.5625 + 4 x 2
    14.75
    >>> float(shared_weight_bytes(mp, {"amd": 1.0}, "bf16")) / 1e9
    32.0
    """
    bpw = BYTES_PER_PARAM[precision]
    kept: npt.ArrayLike = 0.0
    if precision == "fp8":
        kept = mp.get("bf16_fp8_b", 0.0)
    elif precision == "fp4":
        amd = np.asarray(hw.get("amd", 0.0), dtype=float) > 0
        kept = np.where(amd, mp.get("bf16_fp4_amd_b", 0.0), mp.get("bf16_fp4_nvidia_b", 0.0))
    shared = np.asarray(mp["shared_b"], dtype=float)
    bf16 = np.minimum(np.asarray(kept, dtype=float), shared)
    out: np.ndarray = (shared * bpw + bf16 * (2.0 - bpw)) * 1e9
    return out


def attention_flops(pair: Any, layers: Any, sliding: Any, pairs: Any, window_pairs: Any) -> Any:
    """Attention FLOPs of a step's (query, context) pairs, full and sliding-window layers.

    ``pairs`` per full-attention layer and ``window_pairs`` per sliding-window layer (a
    query there sees at most the window); ``pair``: the FLOPs of one pair on one layer;
    ``sliding`` of the ``layers`` attend to a window.

    >>> attention_flops(1000.0, 10.0, 4.0, 500.0, 100.0)  # 1,000 x (6 x 500 + 4 x 100)
    3400000.0
    """
    return pair * ((layers - sliding) * pairs + sliding * window_pairs)


def prompt_attention_flops(mp: Mapping[str, Any], isl: Any, *, prefill_form: bool) -> Any:
    """Attention FLOPs per token of an ``isl``-token prompt (``mp``: :func:`model_params`).

    A causal prompt's token attends to ``isl / 2`` tokens on average (at most the window on
    sliding-window layers), at ``attn_flops_pair_prefill`` per pair where a prefill runs
    its own form (MLA decompressed, ``prefill_form``), else ``attn_flops_pair`` (absorbed).

    >>> mp = {"attn_flops_pair": 300.0, "attn_flops_pair_prefill": 100.0, "layers": 10.0,
    ...       "sliding_layers": 4.0, "window": 128.0}
    >>> float(prompt_attention_flops(mp, 1000.0, prefill_form=True))  # 100 x (6x500 + 4x128)
    351200.0
    """
    half = np.asarray(isl, dtype=float) / 2.0
    pair = mp["attn_flops_pair_prefill"] if prefill_form else mp["attn_flops_pair"]
    return attention_flops(
        pair, mp["layers"], mp["sliding_layers"], half, np.minimum(half, mp["window"])
    )


def _kv_split(mp: Mapping[str, Any], gpus: Any, dp_attention: Any = None) -> Any:
    """How many ways a replica of ``gpus`` splits each sequence's KV cache.

    ``dp_attention`` (data-parallel attention: each rank holds its own sequences) splits
    it ``gpus`` ways. Without it, GQA splits by KV head over tensor-parallel ranks
    (replicated beyond the number of KV heads) and MLA's one latent, shared by every head,
    is replicated on each rank. ``None`` (the report's serving layout): data-parallel
    attention for MLA, tensor-parallel for GQA; so is a NaN entry (layout not recorded),
    as a NaN expert-parallel width counts as balanced.
    """
    g = np.asarray(gpus, dtype=float)
    mla = np.asarray(mp["mla"]) > 0
    by_head = np.minimum(g, np.asarray(mp["kv_heads"], dtype=float))
    default = np.where(mla, g, by_head)
    if dp_attention is None:
        return default
    flag = np.asarray(dp_attention, dtype=float)
    recorded = np.where(flag > 0, g, np.where(mla, 1.0, by_head))
    return np.where(np.isnan(flag), default, recorded)


def prefill_chunk(isl: npt.ArrayLike) -> np.ndarray:
    """Tokens of one prefill chunk: the budget, or the whole prompt when it is shorter.

    A prompt under :data:`PREFILL_CHUNK_TOKENS` is prefilled as one chunk of its own ISL
    tokens (at b / OSL < 1 prompts a step they arrive apart, not packed to the budget).

    >>> prefill_chunk([1024, 20000]).tolist()
    [1024.0, 8192.0]
    """
    out: np.ndarray = np.minimum(PREFILL_CHUNK_TOKENS, np.asarray(isl, dtype=float))
    return out


def _terms(
    hw: Mapping[str, Any],
    mp: Mapping[str, Any],
    *,
    precision: str,
    isl: Any,
    osl: Any,
    gpus: Any,
    concurrency: Any = CONCURRENCY,
    ep: Any = 1.0,
    dp_attention: Any = None,
) -> dict[str, np.ndarray]:
    """The efficiency-independent parts of the model; every input broadcasts (numpy).

    A step's time is ``fixed + scaled / eta``: ``step_fixed``/``step_scaled`` for the
    decode step at each concurrency, ``prefill_fixed``/``prefill_scaled`` for one prompt
    alone. ``scaled`` times each operator's FLOPs at ``hw["compute_ratio"]`` (kappa =
    eta_c / eta_b, default 1) times its bytes' efficiency; ``step_pieces``,
    ``tail_pieces`` and ``prefill_pieces`` hold the operator pieces at kappa 1, to re-time
    at another ratio (:func:`analysis.inference.compute_ratio.scaled_time`). Also
    ``max_concurrency``, ``in_memory``, ``fits``, ``weights_gb_per_gpu`` and ``gpus``
    (broadcast). Splitting the terms lets the calibration solve for eta in closed
    form and lets validation reuse them for every fold.

    The engine layout: ``ep`` > 1 places whole experts on each of ``ep`` GPUs (expert
    parallelism; the replica's ``gpus`` still split the dense weights), so a step waits
    for the busiest GPU's expert reads and routed FLOPs (:func:`ep_imbalance`) and each GPU
    runs the grouped GEMMs of its own experts only; ``dp_attention`` splits the KV cache
    by sequence (:func:`_kv_split`; ``None``, the report's layout, does for MLA). A
    measured sweep passes its own (InferenceX ``decode_ep``, ``decode_dp_attention``); the
    tiers keep tensor-parallel experts. The expert-parallel all-to-all is charged as the
    tensor-parallel all-reduce it replaces (same messages per layer).
    """
    bpw = BYTES_PER_PARAM[precision]
    g = np.asarray(gpus, dtype=float)
    b = np.asarray(concurrency, dtype=float)
    isl = np.asarray(isl, dtype=float)
    osl = np.asarray(osl, dtype=float)
    bw = np.asarray(hw["bw_tbps"], dtype=float) * 1e12
    peak = np.asarray(hw["peak_tflops"], dtype=float) * 1e12
    attn_peak = np.asarray(hw.get("attn_peak_tflops", hw["peak_tflops"]), dtype=float) * 1e12
    link_bidir = np.asarray(hw["link_gbps"], dtype=float) * 1e9
    scaleout = np.asarray(hw["scaleout_gbps"], dtype=float) * 1e9 / 8.0
    domain = np.asarray(hw["domain"], dtype=float)
    link = np.where(g <= domain, link_bidir / 2.0, np.minimum(link_bidir / 2.0, scaleout))
    layers = np.asarray(mp["layers"], dtype=float)
    hidden = np.asarray(mp["hidden"], dtype=float)
    heads_dim = np.asarray(mp["heads"], dtype=float) * np.asarray(mp["head_dim"], dtype=float)
    attn_pair = np.asarray(mp.get("attn_flops_pair", 4.0 * heads_dim), dtype=float)
    sliding = np.asarray(mp.get("sliding_layers", 0.0), dtype=float)
    window = np.asarray(mp.get("window", 0.0), dtype=float)
    routed = np.asarray(mp["routed_b"], dtype=float) * 1e9
    r = np.asarray(mp["route_frac"], dtype=float)
    active = np.asarray(mp["active_b"], dtype=float) * 1e9

    # Serving shape (:class:`ServingShape`): the per-layer overhead in every model (by
    # kernels, :mod:`analysis.inference.layer_kernels`), the other terms MoE mechanisms.
    moe = routed > 0
    m_rows = np.asarray(hw.get("expert_rows", 0.0), dtype=float)
    o_layer = np.asarray(hw.get("overhead_layer_s", 0.0), dtype=float)
    o_layers = np.asarray(mp["overhead_layers"], dtype=float)
    o_seq = np.asarray(hw.get("overhead_seq_s", 0.0), dtype=float)
    o_expert = np.asarray(hw.get("overhead_expert_s", 0.0), dtype=float)
    # Fitted on MoE sweeps like the overheads, so a dense model's prompts cost their FLOPs.
    pre_cost = np.where(moe, np.asarray(hw.get("prefill_cost", 1.0), dtype=float), 1.0)
    n_experts = np.asarray(mp.get("experts", 0.0), dtype=float)

    ep = np.asarray(ep, dtype=float)
    kv_scale = KV_BYTES[precision] / 2.0 / _kv_split(mp, g, dp_attention)
    kv_tok = np.asarray(mp["kv_tok_bf16"], dtype=float) * kv_scale  # per GPU per token
    kv_fixed = np.asarray(mp["kv_window_bf16"], dtype=float) * kv_scale  # per GPU per sequence
    usable = np.asarray(hw["mem_gb"], dtype=float) * 1e9 * MEMORY_USABLE_FRACTION
    shared_bytes = shared_weight_bytes(mp, hw, precision)
    weights_gpu = (shared_bytes + routed * bpw) / g
    kv_room = usable - weights_gpu
    kv_seq = kv_tok * (isl + osl) + kv_fixed
    max_conc = np.floor(np.maximum(kv_room, 0.0) / kv_seq)

    def step(
        tokens: Any,
        kv_tokens: Any,
        seqs: Any,
        attn_pairs: Any,
        window_pairs: Any,
        touched: Any = None,
        flop_tokens: Any = None,
    ) -> dict[str, np.ndarray]:
        """One step's bandwidth and compute parts per operator (seconds at eta = 1).

        ``touched``: the fraction of routed weights the step reads (default: the
        distinct experts of its ``tokens``, :func:`expert_touched_fraction`).
        ``flop_tokens``: the tokens its linear FLOPs are charged for (default ``tokens``;
        more where prompt tokens carry the prefill cost). Bytes moved, weights read and
        all-reduced activations, stay those of ``tokens``.
        """
        flop_tokens = tokens if flop_tokens is None else flop_tokens
        if touched is None:
            touched = expert_touched_fraction(r, tokens)
        touched = np.where(routed > 0, touched, 0.0)
        # Expert parallelism: the busiest GPU's share of the touched experts and of the
        # routed token-activations, over the mean (ones for tensor-parallel experts).
        w_imb, t_imb = ep_imbalance(n_experts, touched, tokens * r * n_experts, ep)
        w_read = (shared_bytes + routed * touched * w_imb * bpw) / g
        # Grouped-GEMM work items: each touched expert of each layer is a small-M GEMM
        # with its own tile scheduling, whatever its few tokens; an expert-parallel GPU
        # runs those of its own experts only.
        expert_gemms = layers * n_experts * touched * np.where(ep > 1, w_imb / ep, 1.0)
        kv_read = kv_tokens * kv_tok + seqs * kv_fixed
        attn_flops = attention_flops(attn_pair, layers, sliding, attn_pairs, window_pairs)
        msg = tokens * hidden * ACT_BYTES
        return {
            "lin_bw": w_read / bw,
            # Dense (shared) and routed-expert FLOPs apart: only the latter run as
            # small-M grouped GEMMs. ``moe_row_c``: the FLOPs of one row in every touched
            # expert, what each touched expert costs at least ``expert_rows`` times.
            "lin_c": 2.0 * (active - routed * r) * flop_tokens / g / peak,
            "moe_c": 2.0 * routed * r * flop_tokens * t_imb / g / peak,
            "moe_row_c": 2.0 * routed * touched * w_imb / g / peak,
            "attn_bw": kv_read / bw,
            "attn_c": attn_flops / g / attn_peak,
            "comm": np.where(g > 1, 2.0 * layers * (2.0 * (g - 1.0) / g * msg / link), 0.0),
            "fixed": STEP_OVERHEAD_S
            + np.where(g > 1, 2.0 * layers * ALLREDUCE_LATENCY_S, 0.0)
            + o_layers * o_layer
            + seqs * o_seq
            + expert_gemms * o_expert,
            "expert_gemms": expert_gemms + 0.0 * tokens,
        }

    kappa = np.asarray(hw.get("compute_ratio", 1.0), dtype=float)

    def pieces(parts: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ...]:
        # (linear bytes, linear FLOPs, attention bytes, attention FLOPs, all-reduce bytes),
        # each touched expert's grouped GEMM at max(its rows, expert_rows).
        moe = np.maximum(parts["moe_c"], m_rows * parts["moe_row_c"])
        return (
            parts["lin_bw"],
            parts["lin_c"] + moe,
            parts["attn_bw"],
            parts["attn_c"],
            parts["comm"],
        )

    def combine(parts: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        # Per operator the slower of its bytes at eta_b and its FLOPs at kappa x eta_b
        # (the compute ratio: the workload's and format's compute-side scale): scaled time
        # x 1 / eta_b.
        return parts["fixed"], scaled_time(pieces(parts), kappa)

    def decode(b_: Any) -> dict[str, np.ndarray]:
        joins = b_ * isl / osl  # prompt tokens entering per step in steady state
        ctx = isl + osl / 2.0  # mean context of a decoding sequence
        # Sliding-window layers: a query attends to at most ``window`` tokens.
        win_dec = np.minimum(ctx, window)
        win_pre = np.minimum(isl / 2.0, window)
        # The prompt tokens' FLOPs cost ``pre_cost`` times their count (prefill at
        # 1 / pre_cost of the decode operators' efficiency); their bytes do not move, and
        # their expert reads are the chunks' own.
        return step(
            b_ * (1.0 + isl / osl),
            b_ * ctx,
            b_,
            b_ * ctx + pre_cost * joins * isl / 2.0,
            b_ * win_dec + pre_cost * joins * win_pre,
            touched=chunked_expert_reads(r, b_, joins, prefill_chunk(isl)),
            flop_tokens=b_ * (1.0 + pre_cost * isl / osl),
        )

    win_pre = np.minimum(isl / 2.0, window)
    parts = decode(b)
    s_fixed, s_scaled = combine(parts)
    # The 99th-percentile step under Poisson arrivals: B + z sqrt(B) sequences in flight.
    tail_parts = decode(b + P99_Z * np.sqrt(b))
    t_fixed, t_scaled = combine(tail_parts)
    prefill_parts = step(
        isl,
        isl,
        1.0,
        pre_cost * isl * isl / 2.0,
        pre_cost * isl * win_pre,
        flop_tokens=pre_cost * isl,
    )
    p_fixed, p_scaled = combine(prefill_parts)
    return {
        # The scaled times' operator pieces at compute ratio 1, so a calibration can
        # re-time them at another ratio without re-deriving them (:func:`scaled_time`).
        "step_pieces": pieces(parts),
        "tail_pieces": pieces(tail_parts),
        "prefill_pieces": pieces(prefill_parts),
        "step_fixed": s_fixed,
        "step_scaled": s_scaled,
        "tail_fixed": t_fixed,
        "tail_scaled": t_scaled,
        "prefill_fixed": p_fixed,
        "prefill_scaled": p_scaled,
        # Chunked steps a new prompt waits before its first token (one at least).
        "ttft_steps": 1.0 + np.floor(isl / PREFILL_CHUNK_TOKENS) + 0.0 * b,
        "parts": parts,
        "layers": layers,
        "concurrency": b,
        "gpus": g,
        "max_concurrency": max_conc,
        "in_memory": b <= max_conc,
        "fits": kv_room >= kv_seq,
        "weights_gb_per_gpu": weights_gpu / 1e9,
    }


def _apply_eta(t: Mapping[str, np.ndarray], eta: Any) -> dict[str, np.ndarray]:
    """Serving metrics from :func:`_terms` at efficiency ``eta`` (broadcasts)."""
    eta = np.asarray(eta, dtype=float)
    t_step = t["step_fixed"] + t["step_scaled"] / eta
    t_tail = t["tail_fixed"] + t["tail_scaled"] / eta
    t_prefill = t["prefill_fixed"] + t["prefill_scaled"] / eta
    out = {
        "tpot_s": t_step,
        "tpot_p99_s": t_tail,
        "ttft_s": t_prefill + t["ttft_steps"] * t_tail,
        "tok_s_gpu": t["concurrency"] / t_step / t["gpus"],
        "tok_s_user": 1.0 / t_step,
    }
    out.update(
        {k: t[k] for k in ("max_concurrency", "in_memory", "fits", "weights_gb_per_gpu") if k in t}
    )
    return out


def serving_metrics(
    hw: Mapping[str, Any],
    mp: Mapping[str, Any],
    *,
    precision: str,
    isl: Any,
    osl: Any,
    gpus: Any,
    eta: Any,
    concurrency: Any = CONCURRENCY,
) -> dict[str, np.ndarray]:
    """Step time, TTFT, throughput and memory limits; every input broadcasts (numpy).

    ``hw``/``mp`` hold scalars or arrays (see :func:`hardware_params`, :func:`model_params`);
    ``concurrency`` is the replica's number of sequences in flight. Returns arrays of the
    broadcast shape: ``tpot_s``, ``ttft_s``, ``tok_s_gpu`` (output tokens/s per GPU),
    ``tok_s_user``, ``max_concurrency`` (memory bound), ``in_memory`` (concurrency fits),
    ``fits`` (weights + one sequence fit) and ``weights_gb_per_gpu``.
    """
    t = _terms(hw, mp, precision=precision, isl=isl, osl=osl, gpus=gpus, concurrency=concurrency)
    return _apply_eta(t, eta)


def _best(
    metrics: dict[str, np.ndarray], tpot_ms: float | None, ttft_ms: float | None, axis: int = -1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best throughput over the concurrency axis under the bounds: (value, index, ok-mask)."""
    ok = metrics["in_memory"] & np.ones_like(metrics["tok_s_gpu"], dtype=bool)
    if tpot_ms is not None:
        ok = ok & (metrics["tpot_p99_s"] * 1e3 <= tpot_ms)
    if ttft_ms is not None:
        ok = ok & (metrics["ttft_s"] * 1e3 <= ttft_ms)
    val = np.where(ok, metrics["tok_s_gpu"], -np.inf)
    idx = np.argmax(val, axis=axis)
    best = np.take_along_axis(val, np.expand_dims(idx, axis), axis).squeeze(axis)
    return np.where(np.isfinite(best), best, np.nan), idx, ok


def _specs(specs: pd.DataFrame | None, *, inputs: Inputs | None = None) -> pd.DataFrame:
    return resolve(inputs).specs if specs is None else specs


def _models(models: pd.DataFrame | None, *, inputs: Inputs | None = None) -> pd.DataFrame:
    return resolve(inputs).models if models is None else models


def _generation(spec: pd.Series) -> str:
    acc = str(spec.get("accelerator", spec.name))
    arch = spec.get("architecture") if "architecture" in spec.index else None
    if isinstance(arch, str) and arch:
        return arch
    return GENERATION.get(acc, "unknown")


def _supports(spec: pd.Series, precision: str) -> bool:
    return precision in PEAK_COLUMN and _num(spec, PEAK_COLUMN[precision]) > 0


def precision_class(spec: pd.Series, precision: str) -> str:
    """Where ``precision`` sits above the part's native (lowest) tensor format.

    "native" for fp4 on a part with fp4 tensor cores and for fp8 on one without;
    "one above native" for fp8 on an fp4 part and bf16 on an fp8 part; "two above native"
    for bf16 on an fp4 part. The efficiency of a format is keyed by this class, so that
    a part's fp8 factor is not its fp4 one (:meth:`Calibration.precision`).

    >>> precision_class(pd.Series({"fp4_dense_tflops": 9000.0}), "fp8")
    'one above native'
    >>> precision_class(pd.Series({"fp4_dense_tflops": float("nan")}), "fp8")
    'native'
    """
    order = ("fp4", "fp8", "bf16")
    native = next((p for p in order if _supports(spec, p)), "bf16")
    steps = order.index(precision) - order.index(native) if precision in order else 0
    return PRECISION_CLASSES[min(max(steps, 0), len(PRECISION_CLASSES) - 1)]


def model_params_for(model_by: Mapping[str, dict[str, float]], model: str) -> dict[str, float]:
    """``model_params`` of a model id from a prepared mapping (clear error if unknown)."""
    if model not in model_by:
        raise ValueError(ids.unknown_id_message("model", model, tuple(model_by)))
    return model_by[model]


def _median(values: pd.Series) -> float:
    v = values.dropna()
    return float(np.exp(np.median(np.log(v)))) if len(v) else float("nan")


#: Rows whose implied efficiency exceeds this are above the hardware roofline at the
#: published precision (e.g. a run published as fp16 that used fp8): excluded, flagged.
ETA_PLAUSIBLE_MAX = 1.0

#: Precision classes relative to a part's native (lowest-precision) tensor format: fp4 on
#: CDNA 4 / Blackwell, fp8 on CDNA 3 / Hopper (see :func:`precision_class`).
PRECISION_CLASSES = ("native", "one above native", "two above native")


def _codes(keys: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Distinct keys in order of first appearance, and each item's index into them."""
    uniq: dict[Any, int] = {}
    codes = np.array([uniq.setdefault(k, len(uniq)) for k in keys], dtype=np.intp)
    return list(uniq), codes


def _group_median(codes: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of ``values`` per group code (every group non-empty), equal to ``np.median``."""
    order = np.lexsort((values, codes))
    v = values[order]
    counts = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    median: np.ndarray = (v[starts + (counts - 1) // 2] + v[starts + counts // 2]) / 2.0
    return median


def hardware_params_at(spec: pd.Series, precision: str, shape: ServingShape) -> dict[str, float]:
    """The numbers the model needs from one ``load_specs()`` row at one precision.

    ``shape``: the serving shape whose compute ratio and overheads apply
    (:data:`ROOFLINE_SHAPE` for the plain roofline; ``shape.hardware_params`` defaults it to
    the fitted shape).

    Raises:
        ValueError: unknown precision, or the accelerator has no tensor-core support for it.
    """
    _check_precision(precision)
    peak = _num(spec, PEAK_COLUMN[precision])
    if not peak > 0:
        raise ValueError(
            f"{spec['accelerator']} has no {precision} tensor-core support in the spec table "
            f"(column {PEAK_COLUMN[precision]} is empty); choose another precision"
        )
    peak = sustained_tflops(spec, precision)
    # Attention runs at the KV cache's format (fp8 for fp8/fp4 serving, bf16 for bf16):
    # FlashAttention-style kernels do not compute QK^T and PV in fp4, so charging them at
    # the fp4 peak would halve their time.
    attn_fmt = "bf16" if precision == "bf16" else "fp8"
    attn_peak = sustained_tflops(spec, attn_fmt) if _supports(spec, attn_fmt) else peak
    return {
        "bw_tbps": _num(spec, "memory_bw_tbps"),
        "peak_tflops": peak,
        "attn_peak_tflops": attn_peak if attn_peak > 0 else peak,
        "mem_gb": _num(spec, "memory_gb"),
        "link_gbps": _num(spec, "scaleup_bw_gbps", 0.0),
        # Assumed where a spec row leaves them empty (every bundled row has both): an 8-GPU
        # baseboard (HGX / OAM) and a 400 Gb/s NIC per GPU, the bundled table's commonest.
        "domain": _num(spec, "scaleup_domain_gpus", 8.0),
        "scaleout_gbps": _num(spec, "scaleout_gbps_per_gpu", 400.0),
        # Whose checkpoint the part serves (:func:`shared_weight_bytes`): 1 = AMD's.
        "amd": 1.0 if str(spec.get("vendor", "")) == "AMD" else 0.0,
        **shape.params(str(spec.get("vendor", "")), _generation(spec)),
    }


def sustained_tflops(spec: pd.Series, precision: str) -> float:
    """The dense rate the part sustains in ``precision`` at full tensor load, TFLOPS.

    The spec rate, bounded by the part's TDP times its same-node predecessors' rate per
    watt (``<precision>_node_tflops_per_w``) times :data:`SAME_NODE_RATE_PER_WATT_GAIN`;
    the spec rate where the row has no predecessor (or no such column).

    >>> sustained_tflops(pd.Series({"fp4_dense_tflops": 13500.0, "tdp_w": 1100.0,
    ...                             "fp4_node_tflops_per_w": 9.0}), "fp4")
    9900.0
    >>> sustained_tflops(pd.Series({"fp4_dense_tflops": 9000.0, "tdp_w": 1000.0}), "fp4")
    9000.0
    """
    peak = _num(spec, PEAK_COLUMN[precision])
    cap = _num(spec, "tdp_w") * _num(spec, f"{precision}_node_tflops_per_w")
    cap *= SAME_NODE_RATE_PER_WATT_GAIN
    return float(min(peak, cap)) if cap > 0 else peak


@dataclass(frozen=True)
class Workload:
    """What is served: a model at a precision with input and output lengths (tokens)."""

    model: str
    precision: str
    isl: float
    osl: float


@dataclass(frozen=True)
class Deployment:
    """Where it is served: an accelerator, the GPUs of one replica (TP), latency bounds.

    ``gpus`` is the replica's tensor-parallel degree for one evaluation, or the largest
    degree a search may choose (:func:`analysis.inference.best_deployment`). ``tpot_ms`` /
    ``ttft_ms`` are the bounds (``None`` = unbounded); ``bounded`` selects the Server-scale
    efficiency (default: whether a bound is given).
    """

    accelerator: str
    gpus: int
    tpot_ms: float | None = None
    ttft_ms: float | None = None
    bounded: bool | None = None

    @property
    def is_bounded(self) -> bool:
        """Whether the latency-bounded (Server-scale) efficiency applies."""
        if self.bounded is not None:
            return self.bounded
        return self.tpot_ms is not None or self.ttft_ms is not None


class Prepared(NamedTuple):
    """One accelerator and model, ready for the model: spec row, hardware and model numbers."""

    spec: pd.Series
    hw: dict[str, float]
    mp: dict[str, float]
