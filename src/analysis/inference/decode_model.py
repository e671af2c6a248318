"""Step-time physics of one aggregated replica along a concurrency sweep (InferenceX).

The MLPerf roofline (:func:`analysis.inference.roofline._terms`) carries every prompt's
tokens in the decode steps (``b (1 + ISL/OSL)`` tokens a step of FLOPs) and reads a
prompt's experts once per prefill chunk (:func:`analysis.inference.roofline.
chunked_expert_reads`): a prompt's ISL tokens arrive together and touch every expert once,
they do not each touch new experts step after step (spread over the steps, they made the
modelled step time of DeepSeek-R1, 256 experts and 8 routed per token, climb far too
steeply between concurrency 4 and 64). Here a decode step and the prefills it waits for
are apart:

* **Decode step** of ``b`` sequences: the weights of the distinct experts ``b`` tokens
  touch, ``E (1 - (1 - k/E)^b)`` (uniform routing), plus the dense/shared weights; the KV
  cache of every sequence's mean context ``ISL + OSL/2``; linear, routed-expert and
  attention FLOPs (absorbed MLA for DeepSeek: :func:`analysis.inference.model_params`);
  two tensor-parallel all-reduces per layer. Each operator costs the slower of its bytes
  at ``eta_b`` x bandwidth and its FLOPs at ``eta_c = kappa eta_b`` x peak; attention at
  the KV cache's format (fp8 for fp8/fp4 serving), linear layers at the weights' format.
* **MLA KV cache** is replicated on every tensor-parallel rank (the latent is shared by
  all heads) unless attention is data-parallel (``decode_dp_attention``), where each rank
  holds its own sequences: that is what a step reads and what bounds concurrency.
* **Expert parallelism** (``decode_ep`` > 1): each GPU holds whole experts and the step
  waits for the busiest (:func:`expert_imbalance`): 1.7x the mean expert reads at
  concurrency 4 on 8 GPUs, 1.1x at 64. Tensor-parallel experts are balanced.
* **Prefill stall**: in steady state ``b / OSL`` prompts join per step and each runs one
  prefill pass (all weights, ISL tokens of FLOPs, ISL^2/2 attention pairs) that the
  decoding sequences wait for: the measured TPOT includes it. Its MLA attention is
  counted in the absorbed form; the decompressed form a disaggregated prefill worker
  uses (:mod:`analysis.inference.deployments`) held out worse here (one-off experiment
  of 2026-12-03, patch not kept: 28.0 -> 30.0 %, FP8/FP4 ratio error B200 23.3 ->
  32.7 %, MI355X 31.7 -> 35.3 %).
* **Overheads**: per step (launch, scheduling, sampling: per MoE layer in this model,
  :class:`SweepShape`) and per sequence; they do not scale with efficiency.

Not modelled: the KV cache format per recipe (fp8 everywhere here; some SGLang recipes,
e.g. InferenceX ``benchmarks/dsr1_fp8_h200.sh`` at commit 1fc5d73c, leave it at bf16),
skewed expert routing, and date-to-date software changes within one configuration.

So a step takes ``fixed + scaled / eta_b`` with ``scaled`` depending on ``kappa``: the
closed form the calibration and :func:`analysis.inference.latency.throughput_at_tpot`
need.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analysis.inference.experts import expert_imbalance, expert_touched_fraction
from analysis.inference.roofline import (
    ACT_BYTES,
    ALLREDUCE_LATENCY_S,
    BYTES_PER_PARAM,
    KV_BYTES,
    MEMORY_USABLE_FRACTION,
    STEP_OVERHEAD_S,
    _kv_split,
    shared_weight_bytes,
)


@dataclass(frozen=True)
class SweepShape:
    """Per vendor: how a step departs from the bandwidth roofline (few, fitted parameters).

    ``overhead_layer_s``: seconds per MoE layer per step (router, permute, grouped-GEMM
    launches and the engine's per-step work, which one model cannot tell apart);
    ``overhead_seq_s``: seconds per sequence in the batch; ``kappa``: compute over
    bandwidth efficiency (``eta_c / eta_b``); ``expert_rows``: the fewest rows a touched
    expert's grouped GEMM costs (tile padding of small-M GEMMs), per vendor x precision
    class. Empty = the plain roofline with one efficiency.
    """

    overhead_layer_s: Mapping[str, float] = field(default_factory=dict)
    overhead_seq_s: Mapping[str, float] = field(default_factory=dict)
    kappa: Mapping[str, float] = field(default_factory=dict)
    expert_rows: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: group (vendor and generation) or vendor -> efficiency of a prefill pass (fraction
    #: of the peak), fitted on time to first token (:func:`analysis.inference.sweep_fit.
    #: fit_prefill_eta`). Where set, the prefill stall is ``pre_c / prefill_eta`` seconds
    #: (not scaled by eta_b); empty = prefill at eta_b like the decode operators.
    prefill_eta: Mapping[str, float] = field(default_factory=dict)
    #: What a prefill pass's FLOPs cost over the decode operators' (1 = the same), where
    #: the prefill passes are charged at eta_b; fitted across prompt lengths. Applied to
    #: any model: the sweep model only ever sees DeepSeek-R1 (the serving shape's cost is
    #: gated to MoE models).
    prefill_cost: float = 1.0

    def combine(
        self, parts: Mapping[str, np.ndarray], vendor: Any, klass: Any, group: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(fixed, scaled) seconds of a step from :func:`sweep_parts` (arrays broadcast).

        The overheads are the ``group``'s (vendor and generation) where fitted, else the
        vendor's.
        """
        v = np.asarray(vendor, dtype=object)
        kl = np.asarray(klass, dtype=object)
        gr = v if group is None else np.asarray(group, dtype=object)
        o_layer = _lookup(self.overhead_layer_s, gr, v)
        o_seq = _lookup(self.overhead_seq_s, gr, v)
        kappa = _lookup(self.kappa, v, default=1.0)
        rows = _lookup_pair(self.expert_rows, v, kl)
        fixed = parts["fixed"] + o_layer * parts["moe_layers"] * (1.0 + parts["joins"])
        fixed = fixed + o_seq * parts["seqs"]
        if not self.prefill_eta:
            return fixed, combine_scaled(parts, kappa, rows, pre_cost=self.prefill_cost)
        eta_pre = _lookup(self.prefill_eta, gr, v, default=1.0)
        fixed = fixed + parts["pre_c"] / eta_pre
        return fixed, combine_scaled(parts, kappa, rows, prefill=False)


def _lookup(
    table: Mapping[str, float], keys: np.ndarray, fallback: Any = None, default: float = 0.0
) -> np.ndarray:
    """``table[key]`` per item, else ``table[fallback item]``, else ``default``."""
    fb = keys if fallback is None else np.asarray(fallback, dtype=object)
    kb, fb = np.broadcast_arrays(keys, fb)
    flat = [
        float(table.get(str(k), table.get(str(f), default)))
        for k, f in zip(kb.ravel(), fb.ravel(), strict=True)
    ]
    return np.array(flat).reshape(kb.shape)


def _lookup_pair(
    table: Mapping[tuple[str, str], float], v: np.ndarray, kl: np.ndarray
) -> np.ndarray:
    vb, kb = np.broadcast_arrays(v, kl)
    flat = [
        float(table.get((str(a), str(b)), 0.0)) for a, b in zip(vb.ravel(), kb.ravel(), strict=True)
    ]
    return np.array(flat).reshape(vb.shape)


def combine_scaled(
    parts: Mapping[str, np.ndarray],
    kappa: Any,
    rows: Any,
    *,
    prefill: bool = True,
    pre_cost: float = 1.0,
) -> np.ndarray:
    """Scaled seconds (x 1/eta_b) of a step: per operator max(bytes, FLOPs / kappa).

    ``prefill``: whether the prefill passes are in it (else they are charged apart);
    ``pre_cost``: what their FLOPs cost over the decode operators' (the serving shape's
    prefill cost, :func:`analysis.inference.latency.fit_shape`).
    """
    k = np.asarray(kappa, dtype=float)
    r = np.asarray(rows, dtype=float)
    moe = np.maximum(parts["moe_c"], r * parts["moe_row_c"])
    out: np.ndarray = (
        np.maximum(parts["lin_bw"], (parts["lin_c"] + moe) / k)
        + np.maximum(parts["attn_bw"], parts["attn_c"] / k)
        + parts["comm"]
        + (np.maximum(parts["pre_bw"], pre_cost * parts["pre_c"] / k) if prefill else 0.0)
    )
    return out


def sweep_parts(
    hw: Mapping[str, Any],
    mp: Mapping[str, Any],
    *,
    precision: str,
    isl: Any,
    osl: Any,
    gpus: Any,
    concurrency: Any,
    dp_attention: Any = 0.0,
    ep: Any = 1.0,
) -> dict[str, np.ndarray]:
    """Per-operator bandwidth and compute seconds (at efficiency 1) of one decode step.

    Every input broadcasts (numpy). Keys: ``lin_bw``, ``lin_c``, ``moe_c``, ``moe_row_c``,
    ``attn_bw``, ``attn_c``, ``comm`` (decode), ``pre_bw``, ``pre_c`` (prefill passes per
    step), ``fixed`` (per-step overhead and all-reduce latency), ``joins`` (prefill passes
    per step), ``moe_layers``, ``seqs`` and ``in_memory`` (the KV cache fits).
    """
    bpw = BYTES_PER_PARAM[precision]
    g = np.asarray(gpus, dtype=float)
    b = np.asarray(concurrency, dtype=float)
    isl = np.asarray(isl, dtype=float)
    osl = np.asarray(osl, dtype=float)
    bw = float(hw["bw_tbps"]) * 1e12
    peak = float(hw["peak_tflops"]) * 1e12
    attn_peak = float(hw.get("attn_peak_tflops", hw["peak_tflops"])) * 1e12
    link = float(hw["link_gbps"]) * 1e9 / 2.0
    layers = float(mp["layers"])
    shared_bytes = float(shared_weight_bytes(mp, hw, precision))  # some kept in BF16
    routed = float(mp["routed_b"]) * 1e9
    r = float(mp["route_frac"])
    active = float(mp["active_b"]) * 1e9
    pair = float(mp["attn_flops_pair"])
    window = float(mp.get("window", 0.0))
    sliding = float(mp.get("sliding_layers", 0.0))
    full = layers - sliding
    kv_tok = float(mp["kv_tok_bf16"]) * KV_BYTES[precision] / 2.0 / _kv_split(mp, g, dp_attention)
    ctx = isl + osl / 2.0
    joins = b / osl

    experts = float(mp.get("experts", 0.0))
    e = np.asarray(ep, dtype=float)

    def linear(tokens: Any) -> dict[str, np.ndarray]:
        touched = expert_touched_fraction(r, tokens) if routed > 0 else 0.0 * tokens
        w_imb, t_imb = expert_imbalance(experts, r, tokens, e)
        return {
            "bw": (shared_bytes + routed * touched * w_imb * bpw) / g / bw,
            "c": 2.0 * (active - routed * r) * tokens / g / peak,
            "moe_c": 2.0 * routed * r * tokens * t_imb / g / peak,
            "moe_row_c": 2.0 * routed * touched * w_imb / g / peak,
        }

    dec = linear(b)
    pre = linear(isl)
    pairs_dec = full * ctx + sliding * np.minimum(ctx, window)
    pairs_pre = full * isl * isl / 2.0 + sliding * isl * np.minimum(isl / 2.0, window)
    msg = b * float(mp["hidden"]) * ACT_BYTES
    weights = (shared_bytes + routed * bpw) / g
    usable = float(hw["mem_gb"]) * 1e9 * MEMORY_USABLE_FRACTION
    max_conc = np.floor(np.maximum(usable - weights, 0.0) / (kv_tok * (isl + osl)))
    return {
        "lin_bw": dec["bw"],
        "lin_c": dec["c"],
        "moe_c": dec["moe_c"],
        "moe_row_c": dec["moe_row_c"],
        "attn_bw": b * ctx * kv_tok / bw,
        "attn_c": pair * b * pairs_dec / g / attn_peak,
        "comm": np.where(g > 1, 2.0 * layers * 2.0 * (g - 1.0) / g * msg / link, 0.0),
        # One prefill pass per joining prompt: every expert's weights (touched by ISL
        # tokens), its linear, expert and attention FLOPs, its KV written once.
        "pre_bw": joins * (pre["bw"] + isl * kv_tok / bw),
        "pre_c": joins * (pre["c"] + pre["moe_c"] + pair * pairs_pre / g / attn_peak),
        "fixed": (1.0 + joins)
        * (STEP_OVERHEAD_S + np.where(g > 1, 2.0 * layers * ALLREDUCE_LATENCY_S, 0.0)),
        "joins": joins + 0.0 * g,
        "moe_layers": np.asarray(layers if routed > 0 else 0.0) + 0.0 * b,
        "seqs": b + 0.0 * g,
        "in_memory": b <= max_conc,
    }
