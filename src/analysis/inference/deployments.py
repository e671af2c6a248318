"""Deployment options of a serving fleet: disaggregated prefill/decode and expert parallelism.

Analytical decisions taken here (the chapter ``30-inference-tiers`` explains them; the
aggregated, tensor-parallel-within-a-server option stays :mod:`analysis.inference`'s):

* **Three options per accelerator.** *Aggregated* (one engine prefills and decodes, TP
  within a server: :func:`analysis.inference.evaluate_tiers`); *disaggregated* (separate
  prefill and decode pools, the prompt's KV cache sent from one to the other); and, for
  MoE models, *expert-parallel* (aggregated, but the routed experts spread over EP GPUs
  with data-parallel attention). An operator picks, per tier, the option and layout that
  serve the most output tokens per second per GPU under the tier's bounds
  (:func:`best_options`).
* **Decode step** of a worker of ``g`` GPUs at ``b`` sequences: a per-GPU roofline like
  the aggregated model's. Tensor parallel (TP g): every weight split g ways, two
  all-reduces per layer, an MLA latent cache replicated on every rank (what SGLang does
  without DP attention), GQA KV split by head. Expert parallel (EP g + DP attention): the
  routed experts split g ways, the dense and attention weights replicated on each GPU,
  the KV cache split by sequence, and two all-to-alls per layer (dispatch and combine of
  each token to its k experts, (g-1)/g of them remote; one latency each, not growing
  with g) over the scale-up link while the
  worker fits in one scale-up domain (8 GPUs on a server, 72 on an NVL72 rack) and over
  the scale-out NIC beyond it. A disaggregated decode worker runs decode tokens only; an
  aggregated one also carries the prompts joining in steady state (b x ISL/OSL tokens).
* **Prefill** of one prompt on a prefill worker of ``gp`` GPUs: max(weight bytes / BW,
  FLOPs / peak) plus attention over the prompt and the layout's communication. A
  saturated prefill pool runs at the compute roofline: eta_p x peak / FLOPs per token.
  On a prefill worker MLA attends in the decompressed form (``attn_flops_pair_prefill``:
  81,920 FLOPs per pair and layer for DeepSeek-R1, decode's absorbed form 278,528), as
  engines prefill (vLLM ``vllm/v1/attention/backends/mla/common.py``: "compute friendly
  approach for prefill"); held out (2026-12-03) 23.3 -> 20.2 %. An aggregated engine's
  prompt keeps the absorbed form, which held out better there (``latency.fit_shape``).
  Sliding-window layers (gpt-oss) attend to at most ``window`` tokens and hold a fixed
  window of KV per sequence, in decode, prefill, memory and KV transfer alike.
* **Pool ratio**: prefill GPUs per decode GPU chosen so that the prefill pool's token
  rate equals the decode pool's request rate x ISL (balanced pools, a continuous ratio
  that a fleet of many workers approximates). Output tokens/s per GPU = the decode
  pool's rate / (1 + ratio).
* **KV transfer**: ISL x the model's KV bytes per token, over the scale-up link when the
  prefill and decode workers share a scale-up domain (an NVL72 rack), else over each
  prefill GPU's scale-out NIC. TTFT = prefill + transfer + one decode step.
* **Calibration** (:mod:`analysis.deployment_fit`): decode and prefill efficiencies per
  accelerator x precision x option kind, the medians of closed-form per-point values on
  measured InferenceX points (speculative decoding excluded), with vendor fallbacks, and
  a fixed time per layer per decode step per vendor x kind (kernel launches and
  synchronization the roofline's fixed part misses; per DeepSeek-R1 layer, a model's
  layers counted by kernels, ``overhead_layers``); the
  model is not used beyond the most sequences per decode GPU its calibration saw.
  Validation holds out whole configurations.
* **Labels**: an option is "measured-calibrated" when the accelerator has measured
  points of that option kind for the served model, else "modelled, no measurement"
  (its factors borrowed from the vendor's other parts or other models).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from analysis.inference.experts import chunked_expert_reads
from analysis.inference.racks import rack_scale_table as rack_scale_table  # re-exported
from analysis.inference.roofline import (
    ACT_BYTES,
    ALLREDUCE_LATENCY_S,
    KV_BYTES,
    MEMORY_USABLE_FRACTION,
    P99_Z,
    STEP_OVERHEAD_S,
    _generation,
    attention_flops,
    model_params,
    prefill_chunk,
    prompt_attention_flops,
)
from analysis.inference.shape import hardware_params
from analysis.inference.worker import Layout as Layout  # re-exported
from analysis.inference.worker import kv_bytes, link_bytes_s, resident_weights
from analysis.inputs import Inputs

#: Concurrency levels swept per decode worker (geometric 1 ... 8192).
BATCH = np.geomspace(1.0, 8192.0, 96)
#: Latency of one all-to-all (dispatch or combine) inside a scale-up domain and across the
#: network, seconds, whatever the EP size (the low-latency kernels write to every peer at
#: once). Assumption: DeepEP / MoRI report tens of microseconds per low-latency dispatch
#: inside a node and roughly twice that across nodes (register: A-deploy-a2a-latency).
a2a_latency_scaleup_s = 10.0e-6  # register: A-deploy-a2a-latency
A2A_LATENCY_S = {"scaleup": a2a_latency_scaleup_s, "scaleout": 2.0 * a2a_latency_scaleup_s}
#: Bytes per element moved by the all-to-all: fp8 dispatch and bf16 combine, averaged.
A2A_BYTES = 1.5
#: Decode-worker sizes an operator may run: TP within a server; EP up to the scale-up
#: domain, and beyond a server over the network (8-GPU parts, as the measured MoRI and
#: Dynamo runs do up to EP16-EP64).
WORKER_GPUS = (1, 2, 4, 8, 16, 32, 48, 64, 72)
#: Prefill-worker sizes (measured disaggregated runs use 1-8 GPUs per prefill worker).
PREFILL_GPUS = (1, 2, 4, 8, 16)
KINDS = ("disaggregated", "expert-parallel")
MEASURED = "measured-calibrated"
MODELLED = "modelled, no measurement"
#: Basis of an option that is a measured InferenceX point itself (analysis.inference.envelope).
MEASURED_POINT = "measured"


def _comm(
    hw: Mapping[str, float], mp: Mapping[str, float], lay: Layout, tokens: np.ndarray
) -> tuple[np.ndarray, float]:
    """(scaled seconds, fixed seconds) of one step's communication for ``tokens``."""
    g = float(lay.gpus)
    if g <= 1:
        return np.zeros_like(tokens), 0.0
    link, fabric = link_bytes_s(hw, g)
    layers = mp["layers"]
    if lay.ep and mp["experts"] > 0:
        k = mp["route_frac"] * mp["experts"]
        # Per GPU: its T/g tokens each sent to k experts, (g-1)/g remote, there and back.
        per_gpu = 2.0 * (tokens / g) * k * mp["hidden"] * A2A_BYTES * (g - 1.0) / g
        # One latency per dispatch and per combine: the low-latency kernels (DeepEP, MoRI)
        # write to every peer at once, so it does not grow with the number of peers
        # (InferenceX's low-concurrency GB200 TPOT is flat from TP4 / EP4 to EP16).
        return layers * per_gpu / link, 2.0 * layers * A2A_LATENCY_S[fabric]
    msg = tokens * mp["hidden"] * ACT_BYTES
    return (
        2.0 * layers * 2.0 * (g - 1.0) / g * msg / link,
        2.0 * layers * ALLREDUCE_LATENCY_S,
    )


def _shape_overhead(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    seqs_gpu: np.ndarray,
    touched: np.ndarray,
    layout: Layout,
) -> np.ndarray:
    """Unscaled per-step overheads of the serving shape (:class:`inference.ServingShape`).

    Per step, per layer (in DeepSeek-R1 layers by kernels, ``overhead_layers``), per
    sequence a GPU schedules, and per touched expert a GPU holds (its grouped-GEMM work
    item: E / g experts per GPU under EP, all E under TP).
    """
    experts_gpu = mp["experts"] / (layout.gpus if layout.ep else 1.0)
    return (
        STEP_OVERHEAD_S
        + mp["overhead_layers"] * hw["overhead_layer_s"]
        + seqs_gpu * hw["overhead_seq_s"]
        + mp["layers"] * experts_gpu * touched * hw["overhead_expert_s"]
    )


def decode_step(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    *,
    precision: str,
    isl: float,
    osl: float,
    layout: Layout,
    batch: np.ndarray,
    aggregated: bool,
) -> dict[str, np.ndarray]:
    """Decode-step terms of one worker at ``batch`` sequences: ``fixed + scaled / eta``.

    Returns ``fixed``, ``scaled`` (seconds at eta = 1), ``max_batch`` (sequences the
    worker's memory holds at full context) and ``fits`` (weights plus one sequence fit).
    ``aggregated`` adds the prompts joining per step (b x ISL / OSL prefill tokens).
    """
    b = np.asarray(batch, dtype=float)
    g = float(layout.gpus)
    bw = hw["bw_tbps"] * 1e12
    peak = hw["peak_tflops"] * 1e12
    attn_peak = hw["attn_peak_tflops"] * 1e12
    joins = b * isl / osl if aggregated else 0.0 * b
    tokens = b + joins
    # The joining prompts' FLOPs at the serving shape's prefill cost (MoE models), as in
    # the roofline's decode step; their bytes do not move. (A prefill worker's own pass,
    # prefill_terms, has its calibrated prefill efficiency instead.)
    k = hw.get("prefill_cost", 1.0) if mp["routed_b"] > 0 else 1.0
    flop_tokens = b + k * joins
    dense, routed = resident_weights(mp, precision, layout, hw)
    # the prompts' experts read once per prefill chunk, as in the roofline's decode step
    touched_frac = chunked_expert_reads(mp["route_frac"], b, joins, prefill_chunk(isl))
    touched = np.where(mp["routed_b"] > 0, touched_frac, 0.0)
    ctx = isl + osl / 2.0
    kv_tok, kv_win = kv_bytes(mp, precision, layout)
    # Per GPU: DP attention spreads the sequences over the g GPUs, TP reads its shard of all.
    seqs_gpu = b / g if layout.ep else b
    prompts = k * (joins / g if layout.ep else joins)  # joining prompts, at their FLOP cost
    win = mp["window"]
    full_pairs = seqs_gpu * ctx + prompts * isl / 2.0
    win_pairs = seqs_gpu * min(ctx, win) + prompts * min(isl / 2.0, win)
    # Dense and routed FLOPs apart: a touched expert's grouped GEMM costs at least the
    # fitted ``expert_rows`` rows (the aggregated model's serving shape, per vendor).
    routed_flops = 2.0 * mp["routed_b"] * 1e9 * mp["route_frac"] * flop_tokens
    lin_c = (2.0 * mp["active_b"] * 1e9 * flop_tokens - routed_flops) / g / peak
    moe_c = np.maximum(routed_flops, hw["expert_rows"] * 2.0 * mp["routed_b"] * 1e9 * touched) / g
    attn_c = attention_flops(
        mp["attn_flops_pair"], mp["layers"], mp["sliding_layers"], full_pairs, win_pairs
    ) / (1.0 if layout.ep else g)
    comm, comm_fixed = _comm(hw, mp, layout, tokens)
    scaled = (
        np.maximum((dense + routed * touched) / bw, lin_c + moe_c / peak)
        + np.maximum(seqs_gpu * (ctx * kv_tok + kv_win) / bw, attn_c / attn_peak)
        + comm
    )
    usable = hw["mem_gb"] * 1e9 * MEMORY_USABLE_FRACTION - dense - routed
    per_seq = kv_tok * (isl + osl) + kv_win
    max_batch = np.floor(max(usable, 0.0) / per_seq) * (g if layout.ep else 1.0)
    return {
        "fixed": _shape_overhead(hw, mp, seqs_gpu, touched, layout) + comm_fixed,
        "scaled": scaled,
        "max_batch": np.asarray(max_batch),
        "fits": np.asarray(usable >= per_seq),
    }


def prefill_terms(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    *,
    precision: str,
    isl: float,
    layout: Layout,
    prefill_worker: bool,
) -> dict[str, float]:
    """One prompt's prefill on a ``layout`` worker: ``fixed + scaled / eta`` seconds.

    Also ``fits`` (1.0 when its weights and the prompt's KV fit in memory, else 0.0) and
    ``flops_time_per_token`` (seconds per token per GPU at peak: a saturated prefill
    pool's compute roofline). ``prefill_worker``: a disaggregated prefill worker's prompt
    (MLA's decompressed ``attn_flops_pair_prefill``), else an aggregated engine's
    (``attn_flops_pair``, absorbed; module docstring).
    """
    g = float(layout.gpus)
    dense, routed = resident_weights(mp, precision, layout, hw)
    peak = hw["peak_tflops"] * 1e12
    lin_flops = 2.0 * mp["active_b"] * 1e9
    attn_flops = float(prompt_attention_flops(mp, isl, prefill_form=prefill_worker))
    comm, comm_fixed = _comm(hw, mp, layout, np.asarray(isl, dtype=float))
    kv_tok, kv_win = kv_bytes(mp, precision, layout)
    compute = (lin_flops * isl / peak + attn_flops * isl / (hw["attn_peak_tflops"] * 1e12)) / g
    usable = hw["mem_gb"] * 1e9 * MEMORY_USABLE_FRACTION
    return {
        "fits": float(dense + routed + isl * kv_tok + kv_win <= usable),
        "fixed": STEP_OVERHEAD_S + comm_fixed,
        "scaled": float(max((dense + routed) / (hw["bw_tbps"] * 1e12), compute) + comm),
        "flops_time_per_token": float(
            lin_flops / peak + attn_flops / (hw["attn_peak_tflops"] * 1e12)
        ),
    }


def kv_transfer_s(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    *,
    precision: str,
    isl: float,
    prefill_gpus: int,
    same_domain: bool,
) -> float:
    """Seconds to move one prompt's KV cache from its prefill worker to its decode worker.

    >>> hw = {"link_gbps": 1800.0, "scaleout_gbps": 400.0}
    >>> mp = {"kv_tok_bf16": 70272.0, "kv_window_bf16": 0.0}
    >>> round(kv_transfer_s(hw, mp, precision="fp8", isl=1000, prefill_gpus=1,
    ...                     same_domain=False) * 1e3, 3)  # 35 MB over a 50 GB/s NIC
    0.703
    """
    nbytes = (isl * mp["kv_tok_bf16"] + mp["kv_window_bf16"]) * KV_BYTES[precision] / 2.0
    per_gpu = hw["link_gbps"] * 1e9 / 2.0 if same_domain else hw["scaleout_gbps"] * 1e9 / 8.0
    return nbytes / (per_gpu * prefill_gpus)


# --- calibrated factors (fitted by analysis.deployment_fit) ------------------------------


@dataclass(frozen=True)
class Factors:
    """One option's calibrated efficiencies: decode (batch-dependent), prefill, capacity."""

    log_eta_d: float  # log decode efficiency at one sequence per decode GPU
    #: d log(eta_d) / d log(sequences per decode GPU), / d log(decode worker GPUs), and the
    #: log-efficiency step of an expert-parallel (DP attention) worker over a TP one
    slope: tuple[float, float, float]
    eta_p: float
    eta_c: float
    label: str
    #: the most sequences per decode GPU measured at this level: the model is not used
    #: beyond the concurrency its calibration saw
    max_seqs_per_gpu: float = float("inf")
    #: fitted fixed time per (DeepSeek-R1) layer per decode step (kernel launches,
    #: synchronization) beyond the roofline's fixed part; charged ``overhead_layers`` times
    layer_overhead_s: float = 0.0

    def eta_d(self, seqs_per_gpu: np.ndarray | float, worker: Layout) -> np.ndarray:
        """Decode efficiency at ``seqs_per_gpu`` sequences per GPU on a ``worker``."""
        x = np.log(np.maximum(np.asarray(seqs_per_gpu, dtype=float), 1e-3))
        b, g, e = self.slope
        out: np.ndarray = np.exp(
            self.log_eta_d + b * x + g * np.log(worker.gpus) + e * float(worker.ep)
        )
        return out


class FactorSource(Protocol):
    """What :func:`apply_to_tiers` needs of a calibration (``deployment_fit``'s)."""

    def lookup(
        self,
        vendor: str,
        accelerator: str,
        precision: str,
        kind: str,
        model: str,
        *,
        generation: str | None = None,
    ) -> Factors:
        """The factors of one option kind for one accelerator (of ``generation``) and workload."""
        ...


class OptionBound(Protocol):
    """The measured envelope of one option kind (``envelope.Envelope``)."""

    def cap_at(self, tpot_ms: np.ndarray | float, ttft_max: float | None = None) -> np.ndarray:
        """The most tokens/s per GPU a modelled point may claim at a p99 TPOT (ms).

        ``ttft_max``: the tier's TTFT bound (ms; None = unbounded).
        """
        ...

    def best(self, tpot_max: float | None, ttft_max: float | None) -> dict[str, object] | None:
        """The best measured point meeting the bounds, as an option (None: none)."""
        ...


class LayoutRange(Protocol):
    """The measured worker sizes (``envelope.LayoutLimits``)."""

    def allows(self, dec: Layout, pre: Layout | None) -> bool:
        """Whether a (decode, prefill) pair stays within the measured sizes."""
        ...


# --- the operator's choice per tier ---------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """The served workload: model, precision, token lengths (what a tier bounds)."""

    model: str
    precision: str
    isl: float
    osl: float


def decode_layouts(hw: Mapping[str, float], mp: Mapping[str, float]) -> list[Layout]:
    """Decode workers an operator may run.

    TP within one server (at most 8 GPUs, or the scale-up domain if smaller), and for MoE
    models EP 8 and up: within the scale-up domain (72 on NVL72) or, on 8-GPU servers,
    across servers over the network.
    """
    tp_max = min(8.0, hw["domain"])
    out = [Layout(g, ep=False) for g in WORKER_GPUS if g <= tp_max]
    if mp["experts"] > 0:
        ep_max = hw["domain"] if hw["domain"] > 8 else max(WORKER_GPUS[:-1])
        out += [Layout(g, ep=True) for g in WORKER_GPUS if 8 <= g <= ep_max]
    return out


def _option_rows(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    req: Request,
    dec: Layout,
    f: Factors,
    pre: Layout | None,
) -> dict[str, np.ndarray]:
    """Throughput per GPU, p99 TPOT and TTFT over :data:`BATCH` for one layout pair.

    ``pre`` None = aggregated expert-parallel (no prefill pool).
    """
    agg = pre is None
    b = BATCH
    mean, tail = (
        decode_step(
            hw,
            mp,
            precision=req.precision,
            isl=req.isl,
            osl=req.osl,
            layout=dec,
            batch=batch,
            aggregated=agg,
        )
        for batch in (b, b + P99_Z * np.sqrt(b))
    )
    eta = f.eta_d(b / dec.gpus, dec)
    extra = mp["overhead_layers"] * f.layer_overhead_s
    tpot = mean["fixed"] + extra + mean["scaled"] / eta
    tpot_p99 = tail["fixed"] + extra + tail["scaled"] / eta
    pf = prefill_terms(
        hw,
        mp,
        precision=req.precision,
        isl=req.isl,
        layout=pre or dec,
        prefill_worker=pre is not None,
    )
    kv = 0.0
    ratio = 0.0 * b
    if pre is not None:
        kv = kv_transfer_s(
            hw,
            mp,
            precision=req.precision,
            isl=req.isl,
            prefill_gpus=pre.gpus,
            same_domain=pre.gpus + dec.gpus <= hw["domain"],
        )
        # Prefill GPUs per decode GPU that keep up with the decode pool's request rate.
        req_rate_gpu = b / (req.osl * tpot + pf["fixed"]) / dec.gpus
        ratio = req_rate_gpu * req.isl * pf["flops_time_per_token"] / f.eta_c
    ok = (b <= mean["max_batch"]) & bool(mean["fits"]) & (b / dec.gpus <= f.max_seqs_per_gpu)
    ok &= pf["fits"] > 0
    return {
        "tok_s_gpu": np.where(ok, b / tpot / dec.gpus / (1.0 + ratio), np.nan),
        "tpot_ms": tpot * 1e3,
        "tpot_p99_ms": tpot_p99 * 1e3,
        "ttft_ms": (pf["fixed"] + pf["scaled"] / f.eta_p + kv + tpot_p99) * 1e3,
        "ratio": ratio,
    }


def _label(kind: str, dec: Layout, pre: Layout | None, ratio: float) -> str:
    if pre is None:
        return f"expert-parallel {dec.label}"
    return (
        f"disaggregated: prefill {pre.label}, decode {dec.label}, "
        f"{ratio:.2f} prefill GPU per decode GPU"
    )


def _combos(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    factors: Mapping[str, Factors],
    limits: LayoutRange | None,
) -> list[tuple[str, Layout, Layout | None]]:
    """(kind, decode, prefill) layouts offered: calibrated kinds, within measured sizes."""
    combos: list[tuple[str, Layout, Layout | None]] = []
    for dec in decode_layouts(hw, mp):
        if "disaggregated" in factors:
            combos += [("disaggregated", dec, Layout(g, ep=False)) for g in PREFILL_GPUS]
        if dec.ep and "aggregated" in factors:
            combos.append(("expert-parallel", dec, None))
    return [c for c in combos if limits is None or limits.allows(c[1], c[2])]


def _measured_best(
    bounds: Sequence[tuple[float | None, float | None]],
    envelopes: Mapping[str, OptionBound],
) -> list[dict[str, object] | None]:
    """Per tier: the best measured point of any bounded kind (None: none meets the tier)."""
    best: list[dict[str, object] | None] = [None] * len(bounds)
    for kind, env in envelopes.items():
        for ti, (tpot_max, ttft_max) in enumerate(bounds):
            hit, held = env.best(tpot_max, ttft_max), best[ti]
            if hit is not None and (
                held is None
                or _num(hit["tokens_per_s_per_gpu"]) > _num(held["tokens_per_s_per_gpu"])
            ):
                best[ti] = {**hit, "kind": kind}
    return best


#: The option families a reader compares (:func:`best_options`' ``by_family``).
FAMILIES: tuple[str, ...] = (
    "expert-parallel",
    "disaggregated, TP decode",
    "disaggregated, EP decode",
)


def option_family(kind: str, dec: Layout) -> str:
    """The family of an offered option: expert-parallel or disaggregated (TP / EP decode)."""
    if kind == "expert-parallel":
        return FAMILIES[0]
    return FAMILIES[2] if dec.ep else FAMILIES[1]


def _tier_mask(
    rows: dict[str, np.ndarray],
    tpot_max: float | None,
    ttft_max: float | None,
    env: OptionBound | None,
) -> np.ndarray:
    """Batches of one layout that meet a tier's bounds (and stay under the measured envelope)."""
    ok: np.ndarray = np.isfinite(rows["tok_s_gpu"])
    if env is not None:  # not above the measured envelope at the tier's bounds
        ok &= rows["tok_s_gpu"] <= env.cap_at(rows["tpot_p99_ms"], ttft_max)
    if tpot_max is not None:
        ok &= rows["tpot_p99_ms"] <= tpot_max
    if ttft_max is not None:
        ok &= rows["ttft_ms"] <= ttft_max
    return ok


def _option(
    rows: dict[str, np.ndarray], i: int, kind: str, dec: Layout, pre: Layout | None, f: Factors
) -> dict[str, object]:
    """The record of batch ``i`` of one layout pair (what a tiers row takes)."""
    return {
        "tokens_per_s_per_gpu": float(rows["tok_s_gpu"][i]),
        "tpot_ms": float(rows["tpot_ms"][i]),
        "ttft_ms": float(rows["ttft_ms"][i]),
        "concurrency": float(np.floor(BATCH[i])),
        "tokens_per_s_per_user": 1e3 / float(rows["tpot_ms"][i]),
        "kind": kind,
        "deployment": _label(kind, dec, pre, float(rows["ratio"][i])),
        "basis": f.label,
        "tp": float(dec.gpus),
    }


def _better(opt: dict[str, object], held: dict[str, object] | None) -> bool:
    return held is None or _num(opt["tokens_per_s_per_gpu"]) > _num(held["tokens_per_s_per_gpu"])


def best_options(
    hw: Mapping[str, float],
    mp: Mapping[str, float],
    req: Request,
    bounds: Sequence[tuple[float | None, float | None]],
    factors: Mapping[str, Factors],
    envelopes: Mapping[str, OptionBound] | None = None,
    limits: LayoutRange | None = None,
    by_family: dict[str, list[dict[str, object] | None]] | None = None,
) -> list[dict[str, object] | None]:
    """Per tier (TPOT, TTFT bounds in ms, None = unbounded): the best option.

    ``factors``: kind ("disaggregated", "aggregated") -> :class:`Factors`; the
    aggregated factors drive the expert-parallel option (absent = not offered).
    ``envelopes``: option kind -> its measured envelope (:mod:`analysis.inference.envelope`):
    a modelled layout of that kind may not claim more than its ``cap``, and the best
    measured point is a candidate itself (basis "measured"). ``limits``: layouts wider than
    the measured ones are not offered. Returns, per tier, a dict (tokens_per_s_per_gpu,
    tpot_ms, ttft_ms, concurrency, tokens_per_s_per_user, kind, deployment, basis, tp) or
    None when no option fits and meets the bounds. Ties go to the first layout
    (deterministic order), and between a modelled layout and a measured point to the
    measured point. ``by_family``, when given, is filled with the best modelled option of
    each of :data:`FAMILIES` per tier (None where the family is not offered or none of its
    layouts meets the tier), so a reader sees the options that lost too.
    """
    envelopes = {k: e for k, e in (envelopes or {}).items() if k in KINDS}
    best = _measured_best(bounds, envelopes)
    fam = by_family if by_family is not None else {}
    for name in FAMILIES:
        fam[name] = [None] * len(bounds)
    for kind, dec, pre in _combos(hw, mp, factors, limits):
        f = factors["aggregated" if pre is None else "disaggregated"]
        rows = _option_rows(hw, mp, req, dec, f, pre)
        family = fam[option_family(kind, dec)]
        for ti, (tpot_max, ttft_max) in enumerate(bounds):
            ok = _tier_mask(rows, tpot_max, ttft_max, envelopes.get(kind))
            if not ok.any():
                continue
            opt = _option(
                rows, int(np.argmax(np.where(ok, rows["tok_s_gpu"], -np.inf))), kind, dec, pre, f
            )
            if _better(opt, family[ti]):
                family[ti] = opt
            if _better(opt, best[ti]):
                best[ti] = opt
    return best


def _factors_for(cal: FactorSource, spec: pd.Series, req: Request) -> dict[str, Factors]:
    out = {}
    vendor, accelerator = str(spec["vendor"]), str(spec["accelerator"])
    for kind in ("disaggregated", "aggregated"):
        try:
            out[kind] = cal.lookup(
                vendor, accelerator, req.precision, kind, req.model, generation=_generation(spec)
            )
        except ValueError:
            continue
    return out


def _bounded_aggregated(
    rec: dict[str, object], env: OptionBound | None
) -> dict[str, object] | None:
    """The measured aggregated point replacing ``rec`` when ``rec`` exceeds its envelope."""
    if env is None or not bool(rec["feasible"]):
        return None
    cap = float(env.cap_at(_num(rec["tpot_ms"]), _bound(rec["ttft_ms_max"]))[0])
    if _num(rec["tokens_per_s_per_gpu"]) <= cap:
        return None
    hit = env.best(_bound(rec["tpot_ms_max"]), _bound(rec["ttft_ms_max"]))
    return None if hit is None else {**hit, "kind": "aggregated"}


def _merge(
    rec: dict[str, object], opt: dict[str, object] | None, agg_env: OptionBound | None = None
) -> dict[str, object]:
    """A tiers row with its deployment named.

    The modelled option replaces the aggregated one when it serves more tokens per GPU
    (or the aggregated one is infeasible). An aggregated row above its stack's measured
    envelope gives way to the best measured aggregated point first.
    """
    agg_ok = bool(rec["feasible"])
    rec["deployment_kind"] = "aggregated" if agg_ok else ""
    rec["deployment"] = f"aggregated TP{int(_num(rec['tp']))}" if agg_ok else ""
    rec["deployment_basis"] = "MLPerf-calibrated" if agg_ok else ""
    measured = _bounded_aggregated(rec, agg_env)
    if measured is not None:
        rec = _take(rec, measured)
    agg_col, agg_name = FAMILY_COLUMNS["aggregated TP"]
    rec[agg_col] = _num(rec["tokens_per_s_per_gpu"]) if agg_ok else np.nan
    rec[agg_name] = str(rec["deployment"]) if agg_ok else ""
    if opt is None:
        return rec
    if agg_ok and _num(opt["tokens_per_s_per_gpu"]) <= _num(rec["tokens_per_s_per_gpu"]):
        return rec
    return _take(rec, opt)


def _take(rec: dict[str, object], opt: dict[str, object]) -> dict[str, object]:
    """``rec`` with the figures and names of ``opt``."""
    rec = dict(rec)
    for k in (
        "tokens_per_s_per_gpu",
        "tpot_ms",
        "ttft_ms",
        "concurrency",
        "tokens_per_s_per_user",
        "tp",
    ):
        rec[k] = opt[k]
    rec.update(
        feasible=True,
        reason="",
        deployment_kind=opt["kind"],
        deployment=opt["deployment"],
        deployment_basis=opt["basis"],
    )
    return rec


def apply_to_tiers(
    tiers: pd.DataFrame,
    req: Request,
    *,
    specs: pd.DataFrame,
    models: pd.DataFrame,
    calibration: FactorSource,
    inputs: Inputs | None = None,
    envelopes: Mapping[str, Mapping[str, OptionBound]] | None = None,
    limits: Mapping[str, LayoutRange] | None = None,
) -> pd.DataFrame:
    """``inference.evaluate_tiers`` rows with each accelerator's best deployment option.

    Adds ``deployment`` (e.g. "aggregated TP8", "disaggregated: prefill TP8, decode EP32
    + DP attention, 0.31 prefill GPU per decode GPU", "expert-parallel EP16 + DP
    attention"), ``deployment_kind`` and ``deployment_basis`` ("MLPerf-calibrated",
    "measured" (an InferenceX point), "measured-calibrated" or "modelled, no
    measurement"). Throughput, latencies, concurrency and ``tp`` (the decode worker's
    GPUs) are the chosen option's. ``envelopes`` and ``limits`` (per accelerator, from
    :mod:`analysis.inference.envelope`) bound the modelled options by the measurements.
    """
    envelopes, limits = envelopes or {}, limits or {}
    if "deployment" in tiers.columns:
        return tiers  # already chosen (idempotent: callers may pass evaluate_tiers' output)
    spec_by = specs.set_index("accelerator")
    mrow = models.set_index("model").loc[req.model]
    mp = model_params(mrow)
    out = []
    for acc, g in tiers.groupby("accelerator", sort=False):
        opts: list[dict[str, object] | None] = [None] * len(g)
        fam: dict[str, list[dict[str, object] | None]] = {}
        try:
            spec = spec_by.loc[acc].copy()
            spec["accelerator"] = acc
            hw = hardware_params(spec, req.precision, inputs=inputs)
            factors = _factors_for(calibration, spec, req)
            bounds = list(zip(g["tpot_ms_max"], g["ttft_ms_max"], strict=True))
            bounds = [(_bound(a), _bound(b)) for a, b in bounds]
            opts = best_options(
                hw, mp, req, bounds, factors, envelopes.get(str(acc)), limits.get(str(acc)), fam
            )
        except (KeyError, ValueError):
            pass  # no spec or no support for the precision: the aggregated row's reason stands
        agg_env = envelopes.get(str(acc), {}).get("aggregated")
        for i, (rec, o) in enumerate(zip(g.to_dict("records"), opts, strict=True)):
            out.append(_merge(_with_families(rec, fam, i), o, agg_env))
    return pd.DataFrame(out).sort_values(["tier_index"], kind="mergesort").reset_index(drop=True)


#: Tiers columns with each family's best option (tokens/s per GPU, NaN = none) and its name.
FAMILY_COLUMNS: dict[str, tuple[str, str]] = {
    "aggregated TP": ("option_aggregated_tok_s_gpu", "option_aggregated"),
    FAMILIES[0]: ("option_ep_tok_s_gpu", "option_ep"),
    FAMILIES[1]: ("option_disagg_tp_tok_s_gpu", "option_disagg_tp"),
    FAMILIES[2]: ("option_disagg_ep_tok_s_gpu", "option_disagg_ep"),
}


def _with_families(
    rec: dict[str, object], fam: Mapping[str, Sequence[dict[str, object] | None]], i: int
) -> dict[str, object]:
    """``rec`` (a tiers row) with the best option of each of :data:`FAMILIES` at its tier."""
    rec = dict(rec)
    for family in FAMILIES:
        col, name = FAMILY_COLUMNS[family]
        opt = fam.get(family, [None] * (i + 1))[i]
        rec[col] = np.nan if opt is None else _num(opt["tokens_per_s_per_gpu"])
        rec[name] = "" if opt is None else str(opt["deployment"])
    return rec


def _bound(v: object) -> float | None:
    """A tier bound from a frame cell: None/NaN = unbounded."""
    if v is None:
        return None
    x = _num(v)
    return None if np.isnan(x) else x


def _num(v: object) -> float:
    """A number from a record or frame cell (int, float, numpy scalar or numeric string)."""
    if isinstance(v, (int, float, str, np.integer, np.floating)):
        return float(v)
    raise TypeError(f"not a number: {v!r}")


def deployment_note(tiers: pd.DataFrame) -> str:
    """One Markdown line per tier: which deployment option each feasible part runs."""
    ok = tiers[tiers["feasible"]]
    kinds = ok["deployment_kind"].to_numpy()
    if len(kinds) and (kinds == kinds[0]).all():  # one kind everywhere: one line says it
        return f"Every feasible part runs {ok['deployment_kind'].iloc[0]} in every tier."
    lines = []
    for (_, name), g in ok.groupby(["tier_index", "tier"], sort=True):
        kinds = g.groupby("deployment_kind")["accelerator"].apply(", ".join)
        lines.append(f"- **{name}**: " + "; ".join(f"{k}: {v}" for k, v in kinds.items()))
    return "\n".join(lines)


def options_offered(tiers: pd.DataFrame) -> pd.DataFrame:
    """Per tier and accelerator: each option family's best tokens/s per GPU (NaN = none).

    Only accelerators with some option beyond aggregated TP; empty when the scenario's
    model and stacks offer none (a dense model without calibrated disaggregation).
    """
    cols = [c for c, _ in FAMILY_COLUMNS.values()]
    if not set(cols) <= set(tiers.columns):
        return tiers.iloc[0:0]
    extra = tiers[cols[1:]].notna().any(axis=1)
    return tiers.loc[extra, ["tier", "accelerator", "vendor", *cols, "deployment"]].reset_index(
        drop=True
    )


def key_results(tiers: pd.DataFrame) -> dict[str, str]:
    """``tier{i}_deployment_{ACC}`` and ``tier{i}_deployment_basis_{ACC}`` (contracts.md)."""
    out = {}
    for r in tiers.itertuples(index=False):
        out[f"tier{int(r.tier_index)}_deployment_{r.accelerator}"] = str(r.deployment)
        out[f"tier{int(r.tier_index)}_deployment_basis_{r.accelerator}"] = str(r.deployment_basis)
    return out
