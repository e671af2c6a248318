"""The vectorized step-time model: every layout at every GPU count, the best feasible one.

Analytical decisions: a layout is TP x PP (interleaved 1F1B) x CP x DP with ZeRO-1 or FSDP
and selective or full recomputation, plus EP for MoE inside the scale-up domain or across
every DP rank; the step is compute / efficiency plus the exposed communication, bubble,
latency, optimizer, MoE-kernel and a fixed per-step term; collectives inside the scale-up
domain run at the share of its bandwidth their group can use (all of it behind a switch; on
AMD's Infinity Fabric mesh one link per member, a point-to-point hop one link:
:func:`analysis.hardware.scaleup_group_share`); memory (SwiGLU/GQA activations,
interleaving's extra in-flight microbatches) decides feasibility. The efficiency is the only
fitted number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from analysis.hardware import scaleup_group_share
from analysis.training.model import (
    BYTES_GRAD,
    BYTES_OPTIM,
    BYTES_WEIGHT,
    COLLECTIVE_LATENCY_OUT_S,
    COLLECTIVE_LATENCY_UP_S,
    CP_CHOICES,
    DP_BUCKET_BYTES,
    DP_OVERLAP,
    LINK_EFFICIENCY,
    LORA_TRAINABLE_FRACTION,
    MIN_CP_CHUNK_TOKENS,
    MOE_PERMUTE_PASSES,
    OPTIMIZER_BYTES_PER_PARAM,
    PP_CHOICES,
    PP_INTERLEAVE,
    PRECISION_BYTES,
    RECOMPUTE_CHOICES,
    REFERENCE_MICROBATCHES,
    STEP_OVERHEAD_S,
    TP_CHOICES,
    USABLE_MEMORY_FRACTION,
    ZERO_CHOICES,
    flops_per_token,
    peak_tflops,
)


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
    28671
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
    >>> round(activation_bytes_per_token(a, full_recompute=False) / 8192, 1)  # x h: 34 for GeLU
    33.5
    """
    h = arch["hidden_size"]
    if full_recompute:
        return 2.0 * h
    d_kv = arch.get("kv_heads", arch["attention_heads"]) * arch["head_dim"]
    f, k_act = ffn_width(arch)
    mlp = 4.0 * h + 6.0 * f if k_act <= 1 else 2.0 * h + k_act * (2.0 * h + 6.0 * f)
    return 8.0 * h + 4.0 * d_kv + mlp


def _shape_memory(
    lay: Mapping[str, np.ndarray],
    n: np.ndarray,
    b: np.ndarray,
    domain: int,
    arch: Mapping[str, float],
    seq_len: int,
    lora: bool,
    unconstrained: bool,
    mem_usable: float,
) -> dict[str, np.ndarray]:
    # Layouts (rows) x GPU counts (columns): the DP degree, EP, microbatches and memory per
    # GPU, and which are feasible (none of it depends on the efficiency).
    tp, pp, cp, zero, rc, epw = (lay[k][:, None] for k in ("tp", "pp", "cp", "zero", "rc", "epw"))
    L = arch["layers"]
    n_total, n_active = arch["total_params_b"] * 1e9, arch["active_params_b"] * 1e9
    experts, k_act = arch.get("experts", 1.0), arch.get("active_experts", 1.0)
    moe = experts > 1
    # Split parameters into shared and per-expert parts from total and active counts.
    per_expert = (n_total - n_active) / (experts - k_act) if moe else 0.0
    shared = n_total - experts * per_expert
    act_sel = activation_bytes_per_token(arch, full_recompute=False)
    act_full = activation_bytes_per_token(arch, full_recompute=True)
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
    # interleaved 1F1B (Narayanan et al. 2021, sec. 2.2): v model chunks per stage; it needs
    # at least PP microbatches in flight (Megatron), so with fewer a microbatch crosses
    # the stages one after the other and the bubble is the plain (PP - 1) microbatch times
    v = np.where((pp > 1) & (m >= pp), np.clip(np.floor(L / pp), 1, PP_INTERLEAVE), 1.0)
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
    ok_batch = dp_int & ((dp <= b) | unconstrained)
    tp_up = tp <= domain  # TP never leaves the scale-up domain (layout filter)
    ok_heads = (tp <= arch["attention_heads"]) & tp_up
    ok_pp = pp <= L
    # CP splits the sequence into 2 cp chunks (load-balanced causal ring); keep >= 1K
    ok_cp = seq_len / cp >= MIN_CP_CHUNK_TOKENS
    ok_mem = (mem <= mem_usable) | unconstrained
    # dense models: the EP choice is moot, keep one copy of each layout
    shape_ok = dp_int & ok_heads & ok_pp & ok_cp & (moe | (epw == 0))
    return {
        "dp": dp,
        "dpc": dpc,
        "ep": ep,
        "params_local": params_local,
        "m": m,
        "tokens_step": tokens_step,
        "v": v,
        "shard": shard,
        "mem": mem,
        "shape_ok": shape_ok,
        "ok_batch": ok_batch,
        "feasible": shape_ok & ok_batch & ok_mem,
    }


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
    ``t_dp_exposed``, ``t_latency`` (per-collective latency), ``t_optimizer`` (the HBM pass
    over the rank's shard of the optimizer state), ``t_step_fixed``
    (:data:`STEP_OVERHEAD_S`); ``t_other`` is ``t_pp + t_optimizer`` (kept for older callers).
    """
    n = np.atleast_1d(np.asarray(n_gpus, dtype=float))[None, :]
    b = np.broadcast_to(np.asarray(batch_seqs, dtype=float), n.shape[1:])[None, :]
    domain = int(_as_float(spec, "scaleup_domain_gpus"))
    lay = _layouts(domain)
    peak = peak_tflops(spec, precision) * 1e12
    mem_usable = _as_float(spec, "memory_gb") * 1e9 * USABLE_MEMORY_FRACTION
    hbm = _as_float(spec, "memory_bw_tbps") * 1e12
    # Bidirectional per-GPU scale-up bandwidth in GB/s -> one direction, bytes/s.
    bw_up = _as_float(spec, "scaleup_bw_gbps") / 2.0 * 1e9 * LINK_EFFICIENCY
    bw_out = _as_float(spec, "scaleout_gbps_per_gpu") / 8.0 * 1e9 * LINK_EFFICIENCY
    mesh = str(spec.get("scaleup_topology", "switch")) == "mesh"

    def bw_group(k: Any) -> np.ndarray:
        # scale-up bandwidth (bytes/s, one direction) of a collective among k GPUs of a domain
        out: np.ndarray = bw_up * scaleup_group_share(mesh, k, domain)
        return out

    # a point-to-point hop inside the domain (a pipeline send, a ring-attention step)
    bw_p2p = bw_group(2.0)

    L, h = arch["layers"], arch["hidden_size"]
    d_attn = arch["attention_heads"] * arch["head_dim"]
    d_kv = arch.get("kv_heads", arch["attention_heads"]) * arch["head_dim"]
    n_total, n_active = arch["total_params_b"] * 1e9, arch["active_params_b"] * 1e9
    experts, k_act = arch.get("experts", 1.0), arch.get("active_experts", 1.0)
    moe = experts > 1
    per_expert = (n_total - n_active) / (experts - k_act) if moe else 0.0
    # shape and memory once per distinct GPU count and batch (the calibration's candidate
    # efficiencies repeat each), then spread over the columns
    cols, inv = np.unique(np.concatenate([n, b]), axis=1, return_inverse=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        sm = _shape_memory(
            lay, cols[:1], cols[1:], domain, arch, seq_len, lora, unconstrained, mem_usable
        )
    # only the layouts feasible at some column (a layout infeasible at every one never
    # wins the search), when every column has one (else the reasons need them all)
    ok = sm["feasible"]
    if ok.any(axis=0).all() and not (keep := ok.any(axis=1)).all():
        lay = {k: a[keep] for k, a in lay.items()}
        sm = {k: a[keep] if a.shape[0] == keep.size else a for k, a in sm.items()}
    tp, pp, cp, zero, rc, epw = (lay[k][:, None] for k in ("tp", "pp", "cp", "zero", "rc", "epw"))
    with np.errstate(divide="ignore", invalid="ignore"):
        sm = {k: a if a.shape[1] == 1 else a[:, inv.ravel()] for k, a in sm.items()}
        dp, dpc, ep, params_local = sm["dp"], sm["dpc"], sm["ep"], sm["params_local"]
        m, tokens_step, v, mem = sm["m"], sm["tokens_step"], sm["v"], sm["mem"]
        trainable = LORA_TRAINABLE_FRACTION if lora else 1.0
        # ---- compute (per GPU and step)
        f_model = flops_per_token(arch, seq_len, lora=lora)
        f_extra = 2.0 * n_active + 4.0 * L * d_attn * seq_len  # one more forward pass
        per_gpu_tokens = m * seq_len / (tp * pp * cp)
        t_comp = per_gpu_tokens * f_model / (peak * efficiency)
        t_recomp = rc * per_gpu_tokens * f_extra / (peak * efficiency)
        t_work = t_comp + t_recomp
        # backward share of the model FLOPs: 4N of 6N (LoRA: 2N of 4N, no weight gradients)
        bwd_frac = (2.0 if lora else 4.0) / (4.0 if lora else 6.0)
        cp_inside = tp * cp <= domain
        # the CP ring's hops are point-to-point sends (one link on a mesh)
        bw_cp = np.where(cp_inside, bw_p2p, bw_out)
        # ---- tensor parallel (sequence parallel): 4 all-gather/reduce-scatter pairs of
        # s h bf16 per layer and microbatch (2 forward, 2 backward; +2 when the forward is
        # recomputed); ring cost (t-1)/t per pass, so 2 (t-1)/t per pair.
        n_ar = 4.0 + 2.0 * rc
        s_loc = seq_len / cp
        t_tp = n_ar * (L / pp) * m * 2.0 * (tp - 1) / tp * s_loc * h * 2.0 / bw_group(tp)
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
            # the EP group's peers inside the caller's scale-up domain take the local links,
            # the rest the network, concurrently: the slower share sets the time
            ep_inside = ep * tp * cp <= domain
            ep_local = np.clip(np.floor(domain / (tp * cp)), 1.0, ep)
            a2a_bytes = 4.0 * (L / pp) * m * s_loc * h * 2.0 * k_act / tp
            t_a2a = a2a_bytes * np.maximum(
                (ep_local - 1.0) / ep / bw_group(ep_local), (ep - ep_local) / ep / bw_out
            )
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
        bw_pp = np.where(n > domain, bw_out, bw_p2p)
        t_pp = np.where(pp > 1, 2.0 * v * m * s_loc * h * 2.0 / tp / bw_pp, 0.0)
        # ---- data parallel: hierarchical collectives (reduce-scatter / all-gather inside
        # the scale-up domain, the 1/d_in shard across the scale-out network).
        d_in = np.clip(np.floor(domain / (tp * cp)), 1, dpc)
        d_out = np.ceil(dpc / d_in)

        def ring_pass(nbytes: np.ndarray) -> np.ndarray:
            # one reduce-scatter or all-gather pass of nbytes per GPU (ring, per level)
            t: np.ndarray = (d_in - 1) / d_in * nbytes / bw_group(d_in) + (
                d_out - 1
            ) / d_out * nbytes / d_in / bw_out
            return t

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
        # ---- optimizer step: memory bound over the rank's shard of the state (ZeRO-1 and
        # FSDP both shard it over DP x CP), plus the fixed cost of a step
        t_opt = OPTIMIZER_BYTES_PER_PARAM * trainable * params_local / dpc / hbm
        step = t_work + t_tp + t_cp + t_a2a + t_moe_k + t_bubble + t_pp + t_dp_exp + t_lat + t_opt
        step = step + STEP_OVERHEAD_S

        shape_ok, ok_batch = sm["shape_ok"], sm["ok_batch"]
        score = np.where(sm["feasible"], step, np.inf)

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
        "t_step_fixed": np.where(any_ok, STEP_OVERHEAD_S, np.nan),
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
