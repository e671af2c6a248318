"""Inference: a calibrated LLM serving model, latency tiers, and the throughput frontier.

Analytical decisions taken here (the chapter ``30-inference-tiers`` explains them):

* **One replica = ``gpus`` accelerators in tensor parallel.** A decode step at concurrency
  B processes B decode tokens plus the prompts of the requests that join in steady state
  (B x ISL/OSL prefill tokens: continuous batching with chunked prefill, as vLLM,
  SGLang and TensorRT-LLM run by default). Its time is a per-operator roofline: linear
  layers max(weight bytes / bandwidth, FLOPs / peak), attention max(KV bytes / bandwidth,
  FLOPs / peak), plus two all-reduces per layer over the scale-up link (ring: 2(G-1)/G of
  the message at half the bidirectional bandwidth, plus a fixed latency), plus a fixed
  per-step overhead. TPOT = step time; throughput = B / step time.
* **TTFT** = prefill of one prompt alone on the replica + one decode step of waiting.
* **MoE** models read the experts their tokens touch (1-(1-k/E)^T of the expert weights
  for T tokens in the step: all of them at serving batch sizes) and compute with the active
  parameters; all parameters stay resident. **GQA** sets the KV size
  (2 x layers x kv_heads x head_dim); KV heads are split over tensor-parallel ranks and
  replicated when there are fewer heads than ranks. **MLA** (DeepSeek) uses the model
  table's ``kv_bytes_per_token_bf16`` and assumes data-parallel attention (latents split
  by sequence).
* **Precision**: weights at 2 / 1 / 0.5625 bytes (bf16 / fp8 / fp4 with block scales);
  KV cache bf16 for bf16 serving, fp8 otherwise; peak = the dense tensor FLOPS at that
  precision. An accelerator without fp4 hardware cannot serve at fp4 (an error, not a
  silent fallback).
* **Memory**: weights + KV cache of every sequence at its full context (ISL + OSL) must fit
  in 90 % of HBM (vLLM's default ``gpu_memory_utilization = 0.9``). A model that does not
  fit raises instead of returning a number.
* **Calibration**: one efficiency factor eta (the achieved fraction of the roofline; it
  scales bandwidth, FLOPS and link bandwidth, not the fixed overheads) per MLPerf row,
  solved exactly (Brent's method, deterministic) so that the model reproduces the
  measured result under that scenario's own dataset lengths and latency bounds, with the
  parallel layout (TP 1/2/4/8) the model finds best, as submitters tune theirs. Factors are
  the **medians** of these per-row values per vendor x architecture generation x round
  (falling back to vendor x generation, then vendor): medians rather than a least-squares
  fit because MLPerf mixes tuned vendor submissions with untuned partner ones, and a
  median is robust to them and reproducible to the last digit. Server and Interactive
  rows get a scenario scale (median of their eta over the same system's group Offline eta):
  the tail-latency and queueing headroom a mean-value model cannot see.
* **The calibrated model** uses each vendor x generation's latest-round factor (today's
  software); announced parts use their vendor's newest generation's factor. A latency-
  bounded query uses the Server scale.
* **Validation** is leave-one-system-out: every row of one MLPerf system (round,
  submitter, system) is predicted from factors fitted without that system. A second,
  harsher scheme (leave-one-round-out) is reported beside it.
* **Latency tiers** bound TPOT (the article's "latency targets") and TTFT per the
  scenario; the tightest tier first. Winners are chosen among shipping parts only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from analysis import ids
from analysis.inference_benchmarks import BENCHMARKS, BenchmarkDef, benchmark_def

# --- constants (each with its reason) ----------------------------------------------------

#: Bytes per weight: bf16, fp8, fp4 with one 8-bit scale per 16 values (NVFP4; MXFP4 is
#: 4.25 bits). https://docs.nvidia.com/cuda/cublas/#d-block-scaling-factors-layout
BYTES_PER_PARAM: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}
#: KV-cache bytes per element: serving stacks keep fp8 KV with fp8/fp4 weights.
KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 1.0}
#: Peak-FLOPS column of ``load_specs()`` per precision.
PEAK_COLUMN: dict[str, str] = {
    "bf16": "bf16_dense_tflops", "fp8": "fp8_dense_tflops", "fp4": "fp4_dense_tflops",
}
#: Fraction of HBM the serving engine may use (vLLM ``gpu_memory_utilization`` default 0.9,
#: https://docs.vllm.ai/en/latest/configuration/engine_args.html); the rest is reserve.
MEMORY_USABLE_FRACTION = 0.9
#: Fixed per-decode-step overhead (scheduling, sampling, launch), seconds. Assumption.
STEP_OVERHEAD_S = 1.0e-3
#: Latency of one all-reduce on the scale-up fabric, seconds. Assumption (NCCL/RCCL
#: small-message all-reduce within a node is ~5-20 us).
ALLREDUCE_LATENCY_S = 10.0e-6
#: Activation bytes in tensor-parallel all-reduces (bf16).
ACT_BYTES = 2.0
#: Concurrency levels swept per replica (256, geometric 1 ... 4096).
CONCURRENCY = np.geomspace(1.0, 4096.0, 256)
#: Tensor-parallel degrees an MLPerf submitter may choose inside an 8-GPU node.
MLPERF_TP = (1, 2, 4, 8)
#: Efficiency search interval for calibration (fraction of roofline).
ETA_BRACKET = (1.0e-3, 3.0)
#: Architecture generation per accelerator (fallback when the spec table has none).
GENERATION: dict[str, str] = {
    "H100-SXM": "Hopper", "H200": "Hopper", "B200": "Blackwell", "GB200": "Blackwell",
    "B300": "Blackwell Ultra", "GB300": "Blackwell Ultra", "VR200": "Rubin",
    "MI300X": "CDNA 3", "MI325X": "CDNA 3", "MI350X": "CDNA 4", "MI355X": "CDNA 4",
    "MI455X": "CDNA 5",
}
#: Generation order per vendor (newest last), for announced parts' fallback factor.
GENERATION_ORDER: dict[str, tuple[str, ...]] = {
    "NVIDIA": ("Hopper", "Blackwell", "Blackwell Ultra", "Rubin"),
    "AMD": ("CDNA 3", "CDNA 4", "CDNA 5"),
}
SCENARIOS = ("Offline", "Server", "Interactive")


# --- hardware and model parameters --------------------------------------------------------


def _vendor_of(acc: str) -> str:
    return "AMD" if acc.startswith("MI") else "NVIDIA"


def _lookup(frame: pd.DataFrame, key: str, value: str, kind: str,
            known: Sequence[str]) -> pd.Series:
    hit = frame.loc[frame[key] == value]
    if hit.empty:
        raise ValueError(ids.unknown_id_message(kind, value, tuple(known)))
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


def hardware_params(spec: pd.Series, precision: str) -> dict[str, float]:
    """The numbers the model needs from one ``load_specs()`` row at one precision.

    Raises:
        ValueError: unknown precision, or the accelerator has no tensor-core support for it.
    """
    if precision not in BYTES_PER_PARAM:
        raise ValueError(f"unknown precision {precision!r}; allowed: {', '.join(BYTES_PER_PARAM)}")
    peak = _num(spec, PEAK_COLUMN[precision])
    if not peak > 0:
        raise ValueError(
            f"{spec['accelerator']} has no {precision} tensor-core support in the spec table "
            f"(column {PEAK_COLUMN[precision]} is empty); choose another precision"
        )
    return {
        "bw_tbps": _num(spec, "memory_bw_tbps"),
        "peak_tflops": peak,
        "mem_gb": _num(spec, "memory_gb"),
        "link_gbps": _num(spec, "scaleup_bw_gbps", 0.0),
        "domain": _num(spec, "scaleup_domain_gpus", 8.0),
        "scaleout_gbps": _num(spec, "scaleout_gbps_per_gpu", 400.0),
    }


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
    return {
        "total_b": total, "active_b": active, "shared_b": shared, "routed_b": routed,
        "route_frac": r, "layers": layers, "hidden": _num(m, "hidden_size"),
        "heads": heads, "head_dim": head_dim, "kv_heads": kv_heads,
        "kv_tok_bf16": kv_tok,  # KV bytes per token of context (all layers, bf16)
        "kv_window_bf16": _num(m, "kv_window_bytes_bf16", 0.0),  # fixed per sequence
        "mla": 1.0 if mla else 0.0,
    }


def _kv_split(mp: Mapping[str, Any], gpus: Any) -> Any:
    """How many ways a replica of ``gpus`` splits each sequence's KV cache.

    GQA: by KV head over tensor-parallel ranks (replicated beyond the number of KV heads);
    MLA: by sequence (data-parallel attention), i.e. ``gpus`` ways.
    """
    g = np.asarray(gpus, dtype=float)
    return np.where(np.asarray(mp["mla"]) > 0, g, np.minimum(g, np.asarray(mp["kv_heads"])))


# --- the vectorized core --------------------------------------------------------------------


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
    ``fits`` (weights + one sequence fit), and the roofline terms.
    """
    bpw = BYTES_PER_PARAM[precision]
    g = np.asarray(gpus, dtype=float)
    b = np.asarray(concurrency, dtype=float)
    isl = np.asarray(isl, dtype=float)
    osl = np.asarray(osl, dtype=float)
    eta = np.asarray(eta, dtype=float)
    bw = np.asarray(hw["bw_tbps"], dtype=float) * 1e12
    peak = np.asarray(hw["peak_tflops"], dtype=float) * 1e12
    link_bidir = np.asarray(hw["link_gbps"], dtype=float) * 1e9
    scaleout = np.asarray(hw["scaleout_gbps"], dtype=float) * 1e9 / 8.0
    domain = np.asarray(hw["domain"], dtype=float)
    link = np.where(g <= domain, link_bidir / 2.0, np.minimum(link_bidir / 2.0, scaleout))
    layers = np.asarray(mp["layers"], dtype=float)
    hidden = np.asarray(mp["hidden"], dtype=float)
    attn_width = np.asarray(mp["heads"], dtype=float) * np.asarray(mp["head_dim"], dtype=float)
    shared = np.asarray(mp["shared_b"], dtype=float) * 1e9
    routed = np.asarray(mp["routed_b"], dtype=float) * 1e9
    r = np.asarray(mp["route_frac"], dtype=float)
    active = np.asarray(mp["active_b"], dtype=float) * 1e9

    kv_scale = KV_BYTES[precision] / 2.0 / _kv_split(mp, g)
    kv_tok = np.asarray(mp["kv_tok_bf16"], dtype=float) * kv_scale  # per GPU per token
    kv_fixed = np.asarray(mp["kv_window_bf16"], dtype=float) * kv_scale  # per GPU per sequence
    usable = np.asarray(hw["mem_gb"], dtype=float) * 1e9 * MEMORY_USABLE_FRACTION
    weights_gpu = (shared + routed) * bpw / g
    kv_room = usable - weights_gpu
    kv_seq = kv_tok * (isl + osl) + kv_fixed
    max_conc = np.floor(np.maximum(kv_room, 0.0) / kv_seq)

    def step(tokens: Any, kv_tokens: Any, seqs: Any, attn_pairs: Any) -> np.ndarray:
        touched = np.where(routed > 0, 1.0 - np.power(1.0 - r, tokens), 0.0)
        w_read = (shared + routed * touched) * bpw / g
        t_lin = np.maximum(w_read / bw, 2.0 * active * tokens / g / peak)
        kv_read = kv_tokens * kv_tok + seqs * kv_fixed
        t_attn = np.maximum(kv_read / bw, 4.0 * layers * attn_width * attn_pairs / g / peak)
        msg = tokens * hidden * ACT_BYTES
        t_comm = np.where(g > 1, 2.0 * layers * (2.0 * (g - 1.0) / g * msg / link), 0.0)
        t_lat = np.where(g > 1, 2.0 * layers * ALLREDUCE_LATENCY_S, 0.0)
        return STEP_OVERHEAD_S + t_lat + (t_lin + t_attn + t_comm) / eta

    joins = b * isl / osl  # prompt tokens entering per step in steady state
    ctx = isl + osl / 2.0  # mean context of a decoding sequence
    t_step = step(b * (1.0 + isl / osl), b * ctx, b, b * ctx + joins * isl / 2.0)
    t_prefill = step(isl, isl, 1.0, isl * isl / 2.0)
    tok_s_gpu = b / t_step / g
    return {
        "tpot_s": t_step,
        "ttft_s": t_prefill + t_step,
        "tok_s_gpu": tok_s_gpu,
        "tok_s_user": 1.0 / t_step,
        "max_concurrency": max_conc,
        "in_memory": b <= max_conc,
        "fits": kv_room >= kv_seq,
        "weights_gb_per_gpu": weights_gpu / 1e9,
    }


def _best(metrics: dict[str, np.ndarray], tpot_ms: float | None, ttft_ms: float | None,
          axis: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Best throughput over the concurrency axis under the bounds: (value, index, ok-mask)."""
    ok = metrics["in_memory"] & np.ones_like(metrics["tok_s_gpu"], dtype=bool)
    if tpot_ms is not None:
        ok = ok & (metrics["tpot_s"] * 1e3 <= tpot_ms)
    if ttft_ms is not None:
        ok = ok & (metrics["ttft_s"] * 1e3 <= ttft_ms)
    val = np.where(ok, metrics["tok_s_gpu"], -np.inf)
    idx = np.argmax(val, axis=axis)
    best = np.take_along_axis(val, np.expand_dims(idx, axis), axis).squeeze(axis)
    return np.where(np.isfinite(best), best, np.nan), idx, ok


# --- data access (defaults from the loaders) ---------------------------------------------


def _specs(specs: pd.DataFrame | None) -> pd.DataFrame:
    if specs is not None:
        return specs
    from analysis import data

    return data.load_specs()


def _models(models: pd.DataFrame | None) -> pd.DataFrame:
    if models is not None:
        return models
    from analysis import data

    return data.load_models()


def _generation(spec: pd.Series) -> str:
    acc = str(spec["accelerator"])
    arch = spec.get("architecture") if "architecture" in spec.index else None
    if isinstance(arch, str) and arch:
        return arch
    return GENERATION.get(acc, "unknown")


# --- calibration -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """Fitted efficiency factors (fraction of the roofline achieved) and their scales.

    eta(query) = group factor (vendor x generation x round, on the llama2-70b Offline basis)
    x workload scale (per MLPerf benchmark; 1 for llama2-70b and unmeasured models)
    x scenario scale (1 for Offline).
    """

    by_group: Mapping[tuple[str, str, str], float]  #: (vendor, generation, round) -> eta
    by_generation: Mapping[tuple[str, str], float]  #: (vendor, generation) -> eta
    by_vendor: Mapping[str, float]  #: vendor -> eta
    scenario_scale: Mapping[str, float] = field(default_factory=dict)  #: scenario -> scale
    workload_scale: Mapping[str, float] = field(default_factory=dict)  #: benchmark -> scale
    rounds: tuple[str, ...] = ()

    def workload_for_model(self, model: str) -> float:
        """Workload scale of the MLPerf benchmark that uses ``model`` (1.0 if none)."""
        for bench, bdef in BENCHMARKS.items():
            if bdef.model == model:
                return self.workload_scale.get(bench, 1.0)
        return 1.0

    def base_eta(self, vendor: str, generation: str,
                 round_: str | None = None) -> tuple[float, str]:
        """Group factor for a vendor x generation (latest round unless ``round_``)."""
        if round_ is None:
            for rnd in reversed(self.rounds):  # latest round that has this group
                if (vendor, generation, rnd) in self.by_group:
                    return self.by_group[(vendor, generation, rnd)], f"{generation} {rnd}"
        elif (vendor, generation, round_) in self.by_group:
            return self.by_group[(vendor, generation, round_)], f"{generation} {round_}"
        if (vendor, generation) in self.by_generation:
            return self.by_generation[(vendor, generation)], f"{generation} (all rounds)"
        order = GENERATION_ORDER.get(vendor, ())
        if generation in order:  # newer, unmeasured generation: newest measured one
            for gen in reversed(order[: order.index(generation)]):
                if (vendor, gen) in self.by_generation:
                    return self.base_eta(vendor, gen, None)
        if vendor in self.by_vendor:
            return self.by_vendor[vendor], f"{vendor} (all)"
        raise ValueError(f"no calibration data for vendor {vendor!r}")

    def eta(self, vendor: str, generation: str, scenario: str = "Offline",
            round_: str | None = None, model: str | None = None,
            benchmark: str | None = None) -> tuple[float, str]:
        """Efficiency for a query, and the factor level it came from."""
        base, source = self.base_eta(vendor, generation, round_)
        scale = 1.0 if scenario == "Offline" else self.scenario_scale.get(scenario, 1.0)
        if benchmark is not None:
            work = self.workload_scale.get(benchmark_def(benchmark).benchmark, 1.0)
        elif model is not None:
            work = self.workload_for_model(model)
        else:
            work = 1.0
        return base * scale * work, source


def _dedupe_mlperf(mlperf: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Rows the calibration can use: one per distinct run, known accelerator/model/precision."""
    df = mlperf.copy()
    if "duplicate_of" in df:
        df = df[df["duplicate_of"].isna() | (df["duplicate_of"].astype(str) == "")]
    df = df[df["accelerator"].notna() & (df["accelerator"].astype(str) != "")]
    if "units" in df:
        df = df[df["units"].astype(str).str.lower().str.startswith("tokens")]
    df = df[df["precision"].isin(list(BYTES_PER_PARAM))]
    df = df[df["model"].isin(set(models["model"]))]
    df = df[df["scenario"].isin(SCENARIOS)]
    keep = []
    for bench, scen in zip(df["benchmark"], df["scenario"], strict=True):
        try:
            benchmark_def(bench).bounds(scen)
            keep.append(True)
        except ValueError:
            keep.append(False)
    df = df[np.array(keep, dtype=bool)] if len(df) else df
    # -99 / -99.9 reruns with identical results that the ingest did not link: keep one.
    df = df.drop_duplicates(["round", "submitter", "system", "model", "scenario", "result"])
    return df.reset_index(drop=True)


def _row_inputs(row: pd.Series, bdef: BenchmarkDef) -> tuple[float, float]:
    osl = row.get("tokens_per_sample")
    osl = float(osl) if osl is not None and pd.notna(osl) and float(osl) > 0 else bdef.osl_mean
    return bdef.isl_mean, osl


def _mlperf_grid(hw: dict[str, float], mp: dict[str, float], precision: str, isl: float,
                 osl: float, tps: Sequence[int], eta: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics on a (eta, tp, concurrency) grid."""
    g = np.asarray(tps, dtype=float)[None, :, None]
    return serving_metrics(hw, mp, precision=precision, isl=isl, osl=osl, gpus=g,
                           eta=np.asarray(eta, dtype=float)[:, None, None],
                           concurrency=CONCURRENCY[None, None, :])


def _predict_one(hw: dict[str, float], mp: dict[str, float], precision: str, isl: float,
                 osl: float, ttft: float | None, tpot: float | None, tps: Sequence[int],
                 eta: float) -> float:
    """Best tokens/s per GPU over the TP choices (NaN if nothing fits the bounds)."""
    m = _mlperf_grid(hw, mp, precision, isl, osl, tps, np.array([eta]))
    best, _, _ = _best(m, tpot, ttft)
    return float(np.nanmax(best)) if np.isfinite(best).any() else float("nan")


def _tp_options(hw: dict[str, float], gpus: int) -> tuple[int, ...]:
    return tuple(t for t in MLPERF_TP if t <= gpus and t <= max(hw["domain"], 1.0)) or (1,)


def implied_efficiency(
    mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per MLPerf run: the efficiency eta at which the model reproduces the measured result.

    Returns the deduplicated calibration rows with ``generation``, ``isl``, ``osl``,
    ``measured`` (tokens/s per accelerator) and ``eta`` (NaN where no eta in
    ``ETA_BRACKET`` reproduces it, e.g. a latency bound the model cannot meet, or
    speculative decoding beyond 3x the roofline; ``eta_note`` says which).
    """
    if mlperf is None:
        from analysis import data

        mlperf = data.load_table("mlperf_inference")
    specs, models = _specs(specs), _models(models)
    df = _dedupe_mlperf(mlperf, models)
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    model_by = {r["model"]: model_params(r) for _, r in models.iterrows()}
    out = []
    for _, row in df.iterrows():
        acc = row["accelerator"]
        rec = row.to_dict()
        rec["measured"] = float(row["result_per_accelerator"])
        if acc not in spec_by:
            continue
        spec = spec_by[acc]
        rec["generation"] = _generation(spec)
        bdef = benchmark_def(row["benchmark"])
        isl, osl = _row_inputs(row, bdef)
        rec["isl"], rec["osl"] = isl, osl
        ttft, tpot = bdef.bounds(row["scenario"])
        rec["eta"], rec["eta_note"] = float("nan"), ""
        try:
            hw = hardware_params(spec, row["precision"])
        except ValueError as err:
            rec["eta_note"] = str(err)
            out.append(rec)
            continue
        mp = model_params_for(model_by, row["model"])
        rec["precision_published"] = row["precision"]
        rec["eta"], rec["eta_note"] = _solve_eta(hw, mp, row["precision"], isl, osl, ttft, tpot,
                                                 rec["measured"])
        rec["_ctx"] = (spec, mp, isl, osl, ttft, tpot)
        out.append(rec)
    # A run above the roofline at its published precision used a lower one (v4.1 NVIDIA
    # TensorRT runs publish fp16 weights but ran FP8). The same software stack in the same
    # round with the same published precision ran the same way: re-read all its rows.
    lower = {"bf16": "fp8", "fp8": "fp4"}
    def above(r: dict[str, Any]) -> bool:
        return r["eta"] > 1.0 or r["eta_note"].startswith("above")

    stacks = {
        (r["round"], r.get("software"), r["precision"]) for r in out
        if "_ctx" in r and r["precision"] in lower and above(r)
    }
    for r in out:
        ctx = r.pop("_ctx", None)
        if ctx is None or (r["round"], r.get("software"), r["precision_published"]) not in stacks:
            continue
        spec, mp, isl, osl, ttft, tpot = ctx
        low = lower[r["precision_published"]]
        if not _num(spec, PEAK_COLUMN[low]) > 0:
            continue
        eta2, note2 = _solve_eta(hardware_params(spec, low), mp, low, isl, osl, ttft, tpot,
                                 r["measured"])
        r["eta"], r["precision"] = eta2, low
        r["eta_note"] = note2 or (f"precision re-read as {low}: this stack's runs in this round "
                                  f"exceed the {r['precision_published']} roofline")
    return pd.DataFrame(out)


def _solve_eta(hw: dict[str, float], mp: dict[str, float], precision: str, isl: float,
               osl: float, ttft: float | None, tpot: float | None,
               measured: float) -> tuple[float, str]:
    """The efficiency at which the model reproduces ``measured`` (NaN + note if none)."""
    tps = _tp_options(hw, 8)

    def f(log_eta: float) -> float:
        p = _predict_one(hw, mp, precision, isl, osl, ttft, tpot, tps, math.exp(log_eta))
        return (math.log(p) if p > 0 and np.isfinite(p) else -50.0) - math.log(measured)

    lo, hi = math.log(ETA_BRACKET[0]), math.log(ETA_BRACKET[1])
    if f(hi) < 0:
        return float("nan"), "above the model at 3x roofline (or latency bound unreachable)"
    if f(lo) > 0:
        return float("nan"), "below the model at the lowest efficiency"
    return math.exp(brentq(f, lo, hi, xtol=1e-4)), ""


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
#: Reference workload of the group factors (the chapter's default model).
REFERENCE_BENCHMARK = "llama2-70b"


def usable_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Calibration rows with a plausible implied efficiency (0 < eta <= 1)."""
    ok = rows["eta"].notna() & (rows["eta"] > 0) & (rows["eta"] <= ETA_PLAUSIBLE_MAX)
    return rows[ok]


def fit_efficiency(rows: pd.DataFrame, iterations: int = 12) -> Calibration:
    """Calibration from per-run efficiencies (:func:`implied_efficiency` rows).

    A robust additive fit in log space (Tukey's median polish, deterministic):
    log eta = group(vendor, generation, round) + workload(benchmark) + scenario, with the
    llama2-70b workload and the Offline scenario as zero references. Medians rather than
    least squares because MLPerf mixes tuned vendor runs with untuned partner runs.
    """
    ok = usable_rows(rows).copy()
    if ok.empty:
        raise ValueError("no usable MLPerf rows to calibrate on")
    y = np.log(ok["eta"].to_numpy(dtype=float))
    grp = list(zip(ok["vendor"], ok["generation"], ok["round"], strict=True))
    bench = [benchmark_def(b).benchmark for b in ok["benchmark"]]
    scen = ok["scenario"].tolist()
    a: dict[Any, float] = {}
    w: dict[str, float] = dict.fromkeys(bench, 0.0)
    s: dict[str, float] = dict.fromkeys(scen, 0.0)

    index_cache: dict[int, tuple[list[Any], list[np.ndarray]]] = {}

    def med_by(keys: list[Any], resid: np.ndarray) -> dict[Any, float]:
        if id(keys) not in index_cache:
            groups: dict[Any, list[int]] = {}
            for i, k in enumerate(keys):
                groups.setdefault(k, []).append(i)
            index_cache[id(keys)] = (list(groups), [np.array(v) for v in groups.values()])
        names, idx = index_cache[id(keys)]
        return {k: float(np.median(resid[i])) for k, i in zip(names, idx, strict=True)}

    prev = None
    for _ in range(iterations):
        a = med_by(grp, y - np.array([w[k] for k in bench]) - np.array([s[k] for k in scen]))
        ga = np.array([a[k] for k in grp])
        w = med_by(bench, y - ga - np.array([s[k] for k in scen]))
        ref = w.get(REFERENCE_BENCHMARK, 0.0)
        w = {k: v - ref for k, v in w.items()}
        s = med_by(scen, y - ga - np.array([w[k] for k in bench]))
        off = s.get("Offline", 0.0)
        s = {k: v - off for k, v in s.items()}
        state = np.array([w[k] for k in sorted(w)] + [s[k] for k in sorted(s)])
        if prev is not None and np.max(np.abs(state - prev)) < 1e-6:
            break  # converged: scales move by less than 1e-6 in log space
        prev = state
    base = y - np.array([w[k] for k in bench]) - np.array([s[k] for k in scen])
    a = med_by(grp, base)
    vendor_gen = list(zip(ok["vendor"], ok["generation"], strict=True))
    vendors = ok["vendor"].tolist()
    by_gen = med_by(vendor_gen, base)
    by_vendor = med_by(vendors, base)
    exp = {k: float(np.exp(v)) for k, v in a.items()}
    rounds = tuple(sorted(set(ok["round"]), key=_round_key))
    return Calibration(
        by_group=exp,
        by_generation={k: float(np.exp(v)) for k, v in by_gen.items()},
        by_vendor={k: float(np.exp(v)) for k, v in by_vendor.items()},
        scenario_scale={k: float(np.exp(v)) for k, v in s.items() if k != "Offline"},
        workload_scale={k: float(np.exp(v)) for k, v in w.items()},
        rounds=rounds,
    )


def _round_key(r: str) -> tuple[int, ...]:
    return tuple(int(x) for x in r.lstrip("v").split(".") if x.isdigit())


@cache
def _default_implied() -> pd.DataFrame:
    return implied_efficiency()


@cache
def default_calibration() -> Calibration:
    """The calibration from the bundled MLPerf data (computed once per process)."""
    return fit_efficiency(_default_implied())


def _calibration(calibration: Calibration | None) -> Calibration:
    return calibration if calibration is not None else default_calibration()


def efficiency_table(calibration: Calibration | None = None) -> pd.DataFrame:
    """The fitted factors as a tidy table: level, vendor, generation, round, eta."""
    cal = _calibration(calibration)
    rows = [
        {"level": "vendor x generation x round", "vendor": v, "generation": g, "round": r,
         "eta": e} for (v, g, r), e in cal.by_group.items()
    ] + [
        {"level": "vendor x generation", "vendor": v, "generation": g, "round": "all",
         "eta": e} for (v, g), e in cal.by_generation.items()
    ] + [
        {"level": "vendor", "vendor": v, "generation": "all", "round": "all", "eta": e}
        for v, e in cal.by_vendor.items()
    ] + [
        {"level": f"scenario scale: {k}", "vendor": "all", "generation": "all", "round": "all",
         "eta": s} for k, s in cal.scenario_scale.items()
    ] + [
        {"level": f"workload scale: {k}", "vendor": "all", "generation": "all", "round": "all",
         "eta": s} for k, s in sorted(cal.workload_scale.items())
    ]
    return pd.DataFrame(rows)


def efficiency_trend(rows: pd.DataFrame | None = None,
                     calibration: Calibration | None = None) -> pd.DataFrame:
    """Achieved fraction of the roofline per vendor per round (llama2-70b Offline basis).

    Each usable MLPerf run's eta divided by its workload and scenario scales, then the
    median per vendor and round, with the number of runs behind it.
    """
    rows = _default_implied() if rows is None else rows
    cal = fit_efficiency(rows) if calibration is None and rows is not None else _calibration(
        calibration)
    ok = usable_rows(rows).copy()
    scale = [
        cal.workload_scale.get(benchmark_def(b).benchmark, 1.0)
        * (1.0 if sc == "Offline" else cal.scenario_scale.get(sc, 1.0))
        for b, sc in zip(ok["benchmark"], ok["scenario"], strict=True)
    ]
    ok["eta_normalized"] = ok["eta"].to_numpy() / np.asarray(scale)
    out = (ok.groupby(["vendor", "round"])["eta_normalized"]
           .agg(eta=_median, runs="count").reset_index())
    out["round_order"] = out["round"].map(_round_key)
    return out.sort_values(["vendor", "round_order"]).drop(columns="round_order").reset_index(
        drop=True)


# --- public model API ----------------------------------------------------------------------


def _prepare(accelerator: str, model: str, precision: str, specs: pd.DataFrame | None,
             models: pd.DataFrame | None) -> tuple[pd.Series, dict[str, float], dict[str, float]]:
    specs, models = _specs(specs), _models(models)
    if precision not in BYTES_PER_PARAM:
        raise ValueError(f"unknown precision {precision!r}; allowed: {', '.join(BYTES_PER_PARAM)}")
    spec = _lookup(specs, "accelerator", accelerator, "accelerator", list(specs["accelerator"]))
    mrow = _lookup(models, "model", model, "model", list(models["model"]))
    return spec, hardware_params(spec, precision), model_params(mrow)


def _check_fit(m: dict[str, np.ndarray], accelerator: str, model: str, precision: str,
               gpus: int, hw: dict[str, float], isl: float, osl: float) -> None:
    if not bool(np.all(m["fits"])):
        w = float(np.max(m["weights_gb_per_gpu"]))
        raise ValueError(
            f"{model} at {precision} does not fit on {gpus} x {accelerator}: weights need "
            f"{w:.1f} GB per GPU of {hw['mem_gb'] * MEMORY_USABLE_FRACTION:.1f} GB usable, "
            f"leaving no room for one sequence of {isl + osl:.0f} tokens of KV cache; "
            "use more GPUs or a lower precision"
        )


def frontier(
    accelerator: str, model: str, *, precision: str, isl: int, osl: int, gpus: int = 8,
    bounded: bool = True, specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None, calibration: Calibration | None = None,
) -> pd.DataFrame:
    """Throughput per GPU vs interactivity over the concurrency sweep (one replica, TP=gpus).

    ``bounded`` selects the efficiency of latency-bounded serving (Server scale) rather
    than Offline. Rows beyond the memory limit are dropped. Raises like
    :func:`max_throughput_per_gpu`.
    """
    spec, hw, mp = _prepare(accelerator, model, precision, specs, models)
    eta, _ = _calibration(calibration).eta(
        str(spec["vendor"]), _generation(spec), "Server" if bounded else "Offline", model=model)
    m = serving_metrics(hw, mp, precision=precision, isl=isl, osl=osl, gpus=gpus, eta=eta)
    _check_fit(m, accelerator, model, precision, gpus, hw, isl, osl)
    ok = m["in_memory"]
    return pd.DataFrame({
        "accelerator": accelerator, "vendor": spec["vendor"], "concurrency": CONCURRENCY[ok],
        "tokens_per_s_per_gpu": m["tok_s_gpu"][ok], "tokens_per_s_per_user": m["tok_s_user"][ok],
        "tpot_ms": m["tpot_s"][ok] * 1e3, "ttft_ms": m["ttft_s"][ok] * 1e3,
    })


def max_throughput_per_gpu(
    accelerator: str, model: str, *, precision: str, isl: int, osl: int,
    tpot_ms: float | None = None, ttft_ms: float | None = None, gpus: int = 8,
    specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
    calibration: Calibration | None = None, return_details: bool = False,
) -> Any:
    """Best output tokens/s per GPU of one TP=``gpus`` replica under the latency bounds.

    ``None`` bounds are unbounded. Uses the calibrated efficiency of the accelerator's vendor
    and generation (latest MLPerf round; Server scale when a bound is given).
    ``return_details=True`` returns a dict with the concurrency, TPOT, TTFT and per-user rate
    that reach the best value.

    Raises:
        ValueError: unknown accelerator/model/precision id, no hardware support for the
            precision, the model does not fit in memory, or no concurrency meets the bounds.
    """
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus}")
    for name, v in (("isl", isl), ("osl", osl)):
        if not v > 0:
            raise ValueError(f"{name} must be a positive number of tokens, got {v}")
    for name, v in (("tpot_ms", tpot_ms), ("ttft_ms", ttft_ms)):
        if v is not None and not v > 0:
            raise ValueError(f"{name} must be positive or None (unbounded), got {v}")
    spec, hw, mp = _prepare(accelerator, model, precision, specs, models)
    bounded = tpot_ms is not None or ttft_ms is not None
    eta, source = _calibration(calibration).eta(
        str(spec["vendor"]), _generation(spec), "Server" if bounded else "Offline", model=model)
    m = serving_metrics(hw, mp, precision=precision, isl=isl, osl=osl, gpus=gpus, eta=eta)
    _check_fit(m, accelerator, model, precision, gpus, hw, isl, osl)
    best, idx, _ = _best(m, tpot_ms, ttft_ms)
    if not np.isfinite(best):
        i0 = 0
        raise ValueError(
            f"impossible latency bound for {model} on {gpus} x {accelerator} at {precision}: "
            f"even at concurrency 1 TPOT is {m['tpot_s'][i0] * 1e3:.1f} ms and TTFT "
            f"{m['ttft_s'][i0] * 1e3:.0f} ms (bounds: TPOT {tpot_ms} ms, TTFT {ttft_ms} ms)"
        )
    value = float(best)
    if not return_details:
        return value
    i = int(idx)
    return {
        "tokens_per_s_per_gpu": value, "concurrency": float(CONCURRENCY[i]),
        "tpot_ms": float(m["tpot_s"][i] * 1e3), "ttft_ms": float(m["ttft_s"][i] * 1e3),
        "tokens_per_s_per_user": float(m["tok_s_user"][i]), "eta": eta, "eta_source": source,
        "max_concurrency": float(m["max_concurrency"]),
    }


def predict_mlperf(
    accelerator: str, benchmark: str, scenario: str, *, precision: str, gpus: int = 8,
    specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
    calibration: Calibration | None = None, round_: str | None = None,
    osl: float | None = None,
) -> float:
    """Predicted MLPerf result per accelerator (tokens/s) for a benchmark id and scenario.

    Uses the benchmark's dataset lengths and the scenario's 99th-percentile bounds
    (:mod:`analysis.inference_benchmarks`), the best tensor-parallel layout within
    ``gpus``, and the calibrated efficiency (``round_`` picks a round's factors; default the
    latest). Raises ValueError for unknown ids, a model that fits no layout, or bounds no
    layout meets.
    """
    bdef = benchmark_def(benchmark)
    ttft, tpot = bdef.bounds(scenario)
    spec, hw, mp = _prepare(accelerator, bdef.model, precision, specs, models)
    cal = _calibration(calibration)
    eta, _ = cal.eta(str(spec["vendor"]), _generation(spec), scenario, round_,
                     benchmark=benchmark)
    osl_v = float(osl) if osl is not None else bdef.osl_mean
    tps = _tp_options(hw, gpus)
    value = _predict_one(hw, mp, precision, bdef.isl_mean, osl_v, ttft, tpot, tps, eta)
    if not np.isfinite(value):
        raise ValueError(
            f"{bdef.model} at {precision} on {accelerator}: no tensor-parallel layout within "
            f"{gpus} GPUs fits in memory and meets the {scenario} bounds "
            f"(TTFT {ttft} ms, TPOT {tpot} ms)"
        )
    return value


# --- sweep ---------------------------------------------------------------------------------


def sweep(
    *, isl: int, osl: int, gpus: int = 8, precisions: Sequence[str] = ("bf16", "fp8", "fp4"),
    specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
    calibration: Calibration | None = None, bounded: bool = False,
) -> pd.DataFrame:
    """Every accelerator x model x precision x concurrency level, in one numpy broadcast.

    Returns a long frame (accelerator, model, precision, concurrency, tokens_per_s_per_gpu,
    tokens_per_s_per_user, tpot_ms, ttft_ms, in_memory); unsupported precisions and models
    that do not fit are absent.
    """
    specs, models = _specs(specs), _models(models)
    cal = _calibration(calibration)
    scen = "Server" if bounded else "Offline"
    acc = list(specs["accelerator"])
    keys_hw = ("bw_tbps", "peak_tflops", "mem_gb", "link_gbps", "domain", "scaleout_gbps")
    hw = {k: np.empty((len(acc), 1, len(precisions), 1)) for k in keys_hw}
    eta = np.empty((len(acc), len(models), 1, 1))
    for i, (_, s) in enumerate(specs.iterrows()):
        for j, mod in enumerate(models["model"]):
            eta[i, j] = cal.eta(str(s["vendor"]), _generation(s), scen, model=mod)[0]
        for j, p in enumerate(precisions):
            peak = _num(s, PEAK_COLUMN[p])
            base = hardware_params(s, "bf16") if not peak > 0 else hardware_params(s, p)
            for k in keys_hw:
                v = base[k] if k != "peak_tflops" else (peak if peak > 0 else np.nan)
                hw[k][i, 0, j, 0] = v
    mps = [model_params(r) for _, r in models.iterrows()]
    mp = {k: np.array([m[k] for m in mps], dtype=float)[None, :, None, None] for k in mps[0]}
    frames = []
    for j, p in enumerate(precisions):
        hw_p = {k: v[:, :, j:j + 1, :] for k, v in hw.items()}
        m = serving_metrics(hw_p, mp, precision=p, isl=isl, osl=osl, gpus=gpus, eta=eta,
                            concurrency=CONCURRENCY[None, None, None, :])
        shape = m["tok_s_gpu"].shape
        valid = np.broadcast_to(np.isfinite(hw_p["peak_tflops"]), shape) & np.broadcast_to(
            m["fits"], shape)
        ai, mi, _, ci = np.nonzero(valid)
        frames.append(pd.DataFrame({
            "accelerator": np.asarray(acc)[ai], "model": models["model"].to_numpy()[mi],
            "precision": p, "concurrency": CONCURRENCY[ci],
            "tokens_per_s_per_gpu": m["tok_s_gpu"][valid],
            "tokens_per_s_per_user": np.broadcast_to(m["tok_s_user"], shape)[valid],
            "tpot_ms": np.broadcast_to(m["tpot_s"], shape)[valid] * 1e3,
            "ttft_ms": np.broadcast_to(m["ttft_s"], shape)[valid] * 1e3,
            "in_memory": np.broadcast_to(m["in_memory"], shape)[valid],
        }))
    return pd.concat(frames, ignore_index=True)


def memory_headroom(
    accelerators: Sequence[str], model: str, *, precision: str, isl: int, osl: int,
    gpus: int = 8, specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Maximum concurrency per replica (memory bound) at the given context, per accelerator."""
    specs, models = _specs(specs), _models(models)
    mp = model_params(_lookup(models, "model", model, "model", list(models["model"])))
    rows = []
    for acc in accelerators:
        spec = _lookup(specs, "accelerator", acc, "accelerator", list(specs["accelerator"]))
        hw = hardware_params(spec, "bf16")  # capacity does not depend on peak FLOPS
        m = serving_metrics(hw, mp, precision=precision, isl=isl, osl=osl, gpus=gpus, eta=1.0,
                            concurrency=np.array([1.0]))
        w = float(np.ravel(m["weights_gb_per_gpu"])[0])
        kv_room = float(hw["mem_gb"]) * MEMORY_USABLE_FRACTION - w
        rows.append({
            "accelerator": acc, "vendor": spec["vendor"], "status": spec.get("status", ""),
            "memory_gb": hw["mem_gb"], "weights_gb_per_gpu": w,
            "kv_room_gb_per_gpu": max(kv_room, 0.0),
            "max_concurrency": float(np.ravel(m["max_concurrency"])[0]),
            "fits": bool(np.ravel(m["fits"])[0]),
        })
    return pd.DataFrame(rows)


# --- validation ----------------------------------------------------------------------------


def _predict_rows(rows: pd.DataFrame, cal: Calibration, specs: pd.DataFrame,
                  models: pd.DataFrame, per_round: bool) -> np.ndarray:
    spec_by = {r["accelerator"]: r for _, r in specs.iterrows()}
    model_by = {r["model"]: model_params(r) for _, r in models.iterrows()}
    preds = np.full(len(rows), np.nan)
    for i, (_, r) in enumerate(rows.iterrows()):
        spec = spec_by[r["accelerator"]]
        try:
            hw = hardware_params(spec, r["precision"])
            eta, _ = cal.eta(r["vendor"], r["generation"], r["scenario"],
                             r["round"] if per_round else None, benchmark=r["benchmark"])
        except ValueError:
            continue
        bdef = benchmark_def(r["benchmark"])
        ttft, tpot = bdef.bounds(r["scenario"])
        preds[i] = _predict_one(hw, model_by[r["model"]], r["precision"], r["isl"], r["osl"],
                                ttft, tpot, _tp_options(hw, 8), eta)
    return preds


def validate_against_mlperf(
    scheme: str = "system", *, mlperf: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Out-of-sample predictions of MLPerf results, one row per held-out prediction.

    ``scheme="system"``: leave one system (round, submitter, system) out; factors of the
    held-out system's own round are used when other systems of its vendor x generation
    submitted in that round, else the pooled ones. ``scheme="round"``: leave one round out;
    factors pooled over the other rounds. Columns: round, accelerator, vendor, benchmark,
    scenario, measured, predicted, ape_pct, holdout (plus submitter, system).
    """
    if scheme not in {"system", "round"}:
        raise ValueError(f"unknown holdout scheme {scheme!r}; allowed: 'system', 'round'")
    defaults = mlperf is None and specs is None and models is None
    specs, models = _specs(specs), _models(models)
    rows = _default_implied() if defaults else implied_efficiency(mlperf, specs, models)
    rows = usable_rows(rows).reset_index(drop=True)
    if scheme == "system":
        keys = rows["round"] + " | " + rows["submitter"] + " | " + rows["system"]
    else:
        keys = rows["round"]
    out = []
    for key in sorted(set(keys)):
        test = rows[keys == key]
        train = rows[keys != key]
        cal = fit_efficiency(train)
        pred = _predict_rows(test, cal, specs, models, per_round=(scheme == "system"))
        part = test[["round", "accelerator", "vendor", "benchmark", "scenario", "submitter",
                     "system", "measured"]].copy()
        part["predicted"] = pred
        part["holdout"] = f"{scheme}: {key}"
        out.append(part)
    df = pd.concat(out, ignore_index=True)
    df["ape_pct"] = (df["predicted"] / df["measured"] - 1.0).abs() * 100.0
    cols = ["round", "accelerator", "vendor", "benchmark", "scenario", "measured", "predicted",
            "ape_pct", "holdout", "submitter", "system"]
    return df[cols].sort_values(["round", "vendor", "accelerator", "benchmark", "scenario",
                                 "submitter", "system"]).reset_index(drop=True)


def validation_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Median (and 90th-percentile) absolute percentage error per vendor and overall."""
    rows = []
    groups = [(v, df[df["vendor"] == v]) for v in sorted(set(df["vendor"]))] + [("overall", df)]
    for vendor, g_all in groups:
        g = g_all[g_all["predicted"].notna()]
        rows.append({
            "vendor": vendor, "predictions": len(g),
            "median_ape_pct": float(g["ape_pct"].median()) if len(g) else float("nan"),
            "p90_ape_pct": float(g["ape_pct"].quantile(0.9)) if len(g) else float("nan"),
            "within_15_pct": float((g["ape_pct"] <= 15).mean() * 100) if len(g) else float("nan"),
            "unpredicted": int(g_all["predicted"].isna().sum()),
        })
    return pd.DataFrame(rows)


# --- latency tiers -------------------------------------------------------------------------


def _gpu_hour_usd(sc: Any, accelerator: str) -> float:
    given = dict(sc.cost.gpu_hour_usd)
    if accelerator in given:
        return float(given[accelerator])
    try:
        from analysis import data

        quotes = data.load_table("rental_quotes")
    except (KeyError, FileNotFoundError, ValueError):
        return float("nan")
    if "price_usd_per_gpu_hour" not in quotes or "accelerator" not in quotes:
        return float("nan")
    q = quotes.loc[quotes["accelerator"] == accelerator, "price_usd_per_gpu_hour"]
    return float(q.median()) if len(q) else float("nan")


def evaluate_tiers(
    sc: Any, *, specs: pd.DataFrame | None = None, models: pd.DataFrame | None = None,
    calibration: Calibration | None = None, with_cost: bool = True,
) -> pd.DataFrame:
    """One row per (tier, accelerator in ``sc.accelerators``): best throughput under the tier.

    Columns (contracts.md): tier_index, tier, tpot_ms_max, ttft_ms_max, accelerator, vendor,
    status, feasible, tokens_per_s_per_gpu (NaN if infeasible), concurrency, tpot_ms,
    ttft_ms, tokens_per_s_per_user, reason; plus gpu_hour_usd and cost_per_mtok_usd (NaN
    where no price is known) when ``with_cost``.
    """
    specs, models = _specs(specs), _models(models)
    inf = sc.inference
    rows = []
    for ti, tier in enumerate(inf.tiers):
        for acc in sc.accelerators:
            spec_hit = specs.loc[specs["accelerator"] == acc]
            vendor = str(spec_hit["vendor"].iloc[0]) if len(spec_hit) else _vendor_of(acc)
            status = (str(spec_hit["status"].iloc[0]) if len(spec_hit) and "status" in spec_hit
                      else ("announced" if acc in ids.ACCELERATORS_ANNOUNCED else "shipping"))
            rec = {
                "tier_index": ti, "tier": tier.name, "tpot_ms_max": tier.tpot_ms_max,
                "ttft_ms_max": tier.ttft_ms_max, "accelerator": acc, "vendor": vendor,
                "status": status, "feasible": False, "tokens_per_s_per_gpu": np.nan,
                "concurrency": np.nan, "tpot_ms": np.nan, "ttft_ms": np.nan,
                "tokens_per_s_per_user": np.nan, "reason": "",
            }
            try:
                d = max_throughput_per_gpu(
                    acc, inf.model, precision=inf.precision, isl=inf.isl, osl=inf.osl,
                    tpot_ms=tier.tpot_ms_max, ttft_ms=tier.ttft_ms_max,
                    gpus=inf.gpus_per_replica, specs=specs, models=models,
                    calibration=calibration, return_details=True)
            except ValueError as err:
                rec["reason"] = str(err)
            else:
                rec.update({k: d[k] for k in ("tokens_per_s_per_gpu", "concurrency", "tpot_ms",
                                              "ttft_ms", "tokens_per_s_per_user")})
                rec["concurrency"] = float(np.floor(rec["concurrency"]))
                rec["feasible"] = True
            rows.append(rec)
    df = pd.DataFrame(rows)
    if with_cost:
        from analysis import tco

        df["gpu_hour_usd"] = [_gpu_hour_usd(sc, a) for a in df["accelerator"]]
        df["cost_per_mtok_usd"] = [
            tco.cost_per_million_tokens(h, t) if (h == h and t == t and t > 0) else np.nan
            for h, t in zip(df["gpu_hour_usd"], df["tokens_per_s_per_gpu"], strict=True)
        ]
    return df


def tier_winners(tiers: pd.DataFrame) -> pd.DataFrame:
    """Per tier: the winner among shipping candidates and the infeasible candidates.

    The margin is the winner's tokens/s per GPU over the other vendor's best shipping
    candidate, in percent.
    """
    rows = []
    for (ti, name), g in tiers.groupby(["tier_index", "tier"], sort=True):
        ship = g[(g["status"] == "shipping") & g["feasible"]]
        infeasible = ",".join(g.loc[~g["feasible"], "accelerator"])
        rec = {"tier_index": ti, "tier": name, "winner": "", "winner_vendor": "",
               "winner_tok_s_gpu": np.nan, "runner_up_other_vendor": "",
               "margin_pct": np.nan, "infeasible": infeasible}
        if len(ship):
            w = ship.sort_values(["tokens_per_s_per_gpu", "accelerator"],
                                 ascending=[False, True]).iloc[0]
            rec.update(winner=w["accelerator"], winner_vendor=w["vendor"],
                       winner_tok_s_gpu=w["tokens_per_s_per_gpu"])
            other = ship[ship["vendor"] != w["vendor"]]
            if len(other):
                o = other.sort_values("tokens_per_s_per_gpu", ascending=False).iloc[0]
                rec["runner_up_other_vendor"] = o["accelerator"]
                rec["margin_pct"] = (w["tokens_per_s_per_gpu"] / o["tokens_per_s_per_gpu"]
                                     - 1.0) * 100.0
        rows.append(rec)
    return pd.DataFrame(rows)


def frontiers(sc: Any, *, specs: pd.DataFrame | None = None,
              models: pd.DataFrame | None = None,
              calibration: Calibration | None = None) -> pd.DataFrame:
    """The throughput-interactivity frontier of every accelerator in the scenario."""
    inf = sc.inference
    parts = []
    for acc in sc.accelerators:
        try:
            f = frontier(acc, inf.model, precision=inf.precision, isl=inf.isl, osl=inf.osl,
                         gpus=inf.gpus_per_replica, specs=specs, models=models,
                         calibration=calibration)
        except ValueError:
            continue
        parts.append(f)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def tier_bands(sc: Any, max_user_rate: float = 1000.0) -> pd.DataFrame:
    """Interactivity band of each tier in tokens/s per user: [1000 / TPOT bound, next bound)."""
    rows = []
    bounds = [t.tpot_ms_max for t in sc.inference.tiers]
    for i, tier in enumerate(sc.inference.tiers):
        lo = 1000.0 / tier.tpot_ms_max if tier.tpot_ms_max else 0.1
        hi = max_user_rate if i == 0 else (1000.0 / bounds[i - 1] if bounds[i - 1] else lo)
        rows.append({"tier": tier.name, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def key_results(sc: Any, tiers: pd.DataFrame, winners: pd.DataFrame,
                summary: pd.DataFrame) -> dict[str, Any]:
    """The chapter's key results (names fixed in docs/contracts.md)."""
    out: dict[str, Any] = {}
    for _, w in winners.iterrows():
        i = int(w["tier_index"])
        out[f"tier{i}_name"] = w["tier"]
        out[f"tier{i}_winner"] = w["winner"]
        out[f"tier{i}_winner_vendor"] = w["winner_vendor"]
        out[f"tier{i}_margin_pct"] = float(w["margin_pct"])
        for _, r in tiers[tiers["tier_index"] == i].iterrows():
            out[f"tier{i}_tok_s_gpu_{r['accelerator']}"] = float(r["tokens_per_s_per_gpu"])
        out[f"tier{i}_infeasible"] = w["infeasible"]
    s = summary.set_index("vendor")["median_ape_pct"]
    for v in ("AMD", "NVIDIA", "overall"):
        out[f"mlperf_mape_{v}"] = float(s.get(v, float("nan")))
    return out


# --- make bench ----------------------------------------------------------------------------


def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """Speed targets for ``make bench``: the full sweep must take under a second."""
    cal = default_calibration()
    return [
        ("inference: full sweep (acc x model x precision x 256 concurrency)",
         lambda: sweep(isl=2048, osl=256, calibration=cal), 1.0),
        ("inference: one max_throughput_per_gpu",
         lambda: max_throughput_per_gpu("H200", "llama2-70b", precision="fp8", isl=2048,
                                        osl=256, tpot_ms=50, calibration=cal), 0.05),
    ]


__all__ = [
    "BENCHMARKS", "CONCURRENCY", "Calibration", "bench_cases", "default_calibration",
    "efficiency_table", "efficiency_trend", "evaluate_tiers", "fit_efficiency", "frontier",
    "frontiers", "implied_efficiency", "key_results", "max_throughput_per_gpu",
    "memory_headroom", "predict_mlperf", "serving_metrics", "sweep", "tier_bands",
    "tier_winners", "validate_against_mlperf", "validation_summary",
]
