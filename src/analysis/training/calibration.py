"""Efficiency calibration v2: per-row fits, pooling and shrinkage, precision factors.

Analytical decisions: every measured row (MLPerf and published pre-training) gets the
efficiency at which the step-time model reproduces it; cells are pooled part -> vendor x
generation -> vendor -> all with :data:`SHRINK_CELLS` pseudo-cells per level, the other
workload kind weighted :data:`OTHER_KIND_WEIGHT` after the measured kind offset; precision
factors come from each part's own peaks and the vendor's measured compute-term speedup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypedDict

import numpy as np
import pandas as pd

import analysis.training.speedups as speedups
from analysis import ids
from analysis.inputs import Inputs, resolve
from analysis.training.mlperf import (
    _fits_cached,
    _mlperf_layouts,
    _mlperf_minutes,
    _mlperf_rate,
    _precision_factor,
    mlperf_rows,
    mlperf_tokens,
    one_rate_basis,
)
from analysis.training.model import (
    FP4_OVER_FP8_SPEEDUP,
    FP8_OVER_BF16_SPEEDUP,
    MAX_EFFICIENCY,
    MLPERF_PRECISION,
    PRETRAIN_BENCHMARKS,
    PROXY,
    _benchmark,
    _check_precision,
    _load_specs,
    flops_per_token,
    model_arch,
    peak_tflops,
    spec_row,
)
from analysis.training.speedups import _pick_speedups, _speedup_ratios
from analysis.training.step import evaluate_layouts, ffn_width
from analysis.training.sustained import die_of, sustained_factor


def resolve_efficiency(
    accelerator: str,
    *,
    kind: str = "lora",
    precision: str = "bf16",
    model: str | None = None,
    fits: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> tuple[float, str]:
    """Compute efficiency (fraction of ``precision`` peak) for an accelerator, and its source.

    Without ``fits`` it is the pooled v2 estimate (:func:`pretrain_efficiency`) for
    ``model``'s workload (``None``: the dense family's mean).

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
        return pretrain_efficiency(accelerator, precision, kind=kind, model=model, inputs=inputs)
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
#: Weight in its part's (and die's) level of a cell whose recipe states more expert
#: parallelism than the part's scale-up domain (a rule set a priori, not tuned): its
#: all-to-all runs over the scale-out network, which the layout search (EP within the
#: domain) does not reproduce, so its fitted efficiency holds communication the model
#: does not price, not the fraction of peak the part's GEMMs reach (B300 and B200
#: gpt-oss-120b at EP64 on 8-GPU boards). It still counts in the workload effects and the
#: generation, vendor and overall means (recipes as vendors run them).
SPILL_WEIGHT = 0.0
#: Weight in its part's (and die's) level of an MoE cell (a priori, not tuned): an MoE
#: step adds all-to-all and memory-forced layouts the search does not reproduce (B300
#: DeepSeek PP16 x EP8; search PP4). Kept in workload effects, higher means, own workload.
MOE_LEVEL_WEIGHT = 0.0
#: Per-row root search: 15 candidates per round, 6 rounds narrow the log bracket 16**6-fold
#: (1.7e7, finer than the data); fewer, narrower calls than the 63 x 4 of the old search.
_FIT_POINTS_V2, _FIT_ROUNDS_V2 = 15, 6


def generation_of(spec: Mapping[str, object]) -> str:
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
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Every measured training throughput the model is fitted and checked on, one row each.

    MLPerf Training submissions become tokens/s per GPU at one basis per benchmark
    (:func:`~analysis.training.mlperf.one_rate_basis`): the run logs' steady training rates
    where the benchmark's logs print them, else the RCP tokens to converge at each run's
    logged global batch over its time to train; published rows keep their own batch and
    precision (Meta's TFLOPs/GPU become tokens/s with :func:`flops_per_token`).
    Columns: origin, source, round, benchmark, accelerator, vendor, generation, die, kind,
    model, precision, n_gpus, seq_len, batch_seqs, measured_tps (tokens/s per GPU),
    measured_min, ep (the recipe's stated expert parallelism; NaN where not stated) and
    ep_spill (the stated EP exceeds the part's scale-up domain).
    """
    inputs = resolve(inputs)
    specs = _load_specs(inputs) if specs is None else specs
    rows = one_rate_basis(mlperf_rows(mlperf, inputs=inputs))
    out = []
    for r in rows.itertuples(index=False):
        bm = _benchmark(str(r.benchmark))
        b = float(r.batch_seqs)
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
                "measured_tps": _mlperf_rate(r, tokens, bm.seq_len),
                "measured_min": float(r.measured_min),
                "ep": math.nan,
            }
        )
    pub = _load_published(inputs) if published is None else published
    for r in pub.itertuples(index=False):
        tps = r.tokens_per_s_per_gpu
        if r.tokens_derived == "yes":
            tps = (
                r.model_tflops_per_gpu
                * 1e12
                / flops_per_token(model_arch(r.model, inputs=inputs), r.seq_len)
            )
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
                "batch_seqs": _published_batch(r),
                "measured_tps": float(tps),
                "measured_min": math.nan,
                "ep": _value(r.ep),
            }
        )
    df = pd.DataFrame(out)
    df["moe"] = [model_arch(m, inputs=inputs).get("experts", 1.0) > 1 for m in df["model"]]
    meta = {a: spec_row(a, specs, inputs=inputs) for a in df["accelerator"].unique()}
    df.insert(5, "vendor", df["accelerator"].map(lambda a: meta[a]["vendor"]))
    df.insert(6, "generation", df["accelerator"].map(lambda a: generation_of(meta[a])))
    df.insert(7, "die", df["accelerator"].map(lambda a: die_of(meta[a])))
    domain = df["accelerator"].map(lambda a: _value(meta[a].get("scaleup_domain_gpus")))
    df["ep_spill"] = (df["ep"] > domain).to_numpy(dtype=bool)
    return df


def _published_batch(r: Any) -> float:
    # the stated global batch; where only the micro batch per GPU is stated, the smallest
    # global batch the stated layout admits: one microbatch per data-parallel rank
    if pd.notna(r.global_batch_seqs):
        return float(r.global_batch_seqs)
    return float(r.micro_batch_seqs * r.n_gpus / (r.tp * r.pp * r.cp))


def _load_published(inputs: Inputs) -> pd.DataFrame:
    return inputs.table("published_training")


_EVAL_KEYS = ["accelerator", "model", "seq_len", "precision", "kind"]


def _predict_tps(
    obs: pd.DataFrame,
    efficiency: np.ndarray,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    *,
    inputs: Inputs,
) -> np.ndarray:
    """Modelled tokens/s per GPU for each observation at its own efficiency (vectorized)."""
    out = np.full(len(obs), np.nan)
    eff = np.asarray(efficiency, dtype=float)
    for key, idx in obs.groupby(_EVAL_KEYS, sort=False).indices.items():
        acc, model, seq, prec, kind = key
        sub = obs.iloc[idx]
        res = evaluate_layouts(
            spec_row(acc, specs, inputs=inputs),
            model_arch(model, models, inputs=inputs),
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
    obs: pd.DataFrame,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """``obs`` plus ``efficiency``: the fraction of peak at which the model reproduces each row.

    Throughput rises strictly with efficiency, so each root is unique; all rows of one
    accelerator x model x precision are searched together, :data:`_FIT_POINTS_V2`
    candidates per row and round in one vectorized call (each round narrows the log bracket
    16-fold; six rounds reach 6e-8 of it). Rows infeasible at any efficiency get NaN.
    """
    inputs = resolve(inputs)
    eff = np.full(len(obs), np.nan)
    k = _FIT_POINTS_V2
    steps = np.arange(1, k + 1) / (k + 1)
    for key, idx in obs.groupby(_EVAL_KEYS, sort=False).indices.items():
        acc, model, seq, prec, kind = key
        sub = obs.iloc[idx]
        spec, arch = spec_row(acc, specs, inputs=inputs), model_arch(model, models, inputs=inputs)
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


def _fp8_equivalent(
    fitted: pd.DataFrame, specs: pd.DataFrame | None, *, inputs: Inputs
) -> pd.DataFrame:
    # log efficiency converted to FP8-relative terms with each vendor's speedups (a copy:
    # the pooling's own frame is shared through the memo)
    return _pooling(fitted, specs, inputs=inputs).cells.copy()


class _Pooling:
    # What the pooled estimate derives from one set of fitted rows alone, whatever part and
    # workload it is asked for: the speedup pairs (a vendor x family's speedups picked once),
    # the FP8-equivalent cells and their workload effects. Read-only once built.
    def __init__(self, fitted: pd.DataFrame, specs: pd.DataFrame | None, inputs: Inputs):
        self.ratios = _speedup_ratios(fitted, inputs=inputs)
        self._picks: dict[tuple[str, str | None], tuple[dict[str, float], str]] = {}
        self.cells = _fp8_cells(fitted, specs, self, inputs=inputs)
        self.effects = workload_effects(self.cells, SHRINK_CELLS)

    def speedups(self, vendor: str, family: str | None) -> tuple[dict[str, float], str]:
        # :func:`measured_speedups` of these rows for ``vendor`` (and ``family``)
        key = (vendor, family)
        if key not in self._picks:
            self._picks[key] = _pick_speedups(self.ratios, vendor, family)
        return self._picks[key]


def _pooling(fitted: pd.DataFrame, specs: pd.DataFrame | None, *, inputs: Inputs) -> _Pooling:
    # one :class:`_Pooling` per inputs and content of ``fitted`` (a validation fold's rows
    # serve each held-out part; the scenario's parts share the full fit); given ``specs``
    # (not the inputs'), computed afresh
    if specs is not None:
        return _Pooling(fitted, specs, inputs)
    try:
        digest = pd.util.hash_pandas_object(fitted, index=False).to_numpy().tobytes()
    except TypeError:  # a column of unhashable values: no key, computed afresh
        return _Pooling(fitted, None, inputs)
    key = ("training.pooling", tuple(map(str, fitted.columns)), tuple(map(str, fitted.dtypes)))
    return inputs.derived((*key, _pooling_rules(), digest), lambda: _Pooling(fitted, None, inputs))


def _pooling_rules() -> tuple[float, ...]:
    # the module constants a pooling is built with, read now (part of the memo key, so a
    # changed rule, e.g. a test's monkeypatch, is never answered from an earlier build)
    return (
        SHRINK_CELLS,
        SPILL_WEIGHT,
        MOE_LEVEL_WEIGHT,
        speedups.AMD_FP8_SPEEDUP_RELATIVE,
        float(_BACKFIT_ROUNDS),
    )


def _fp8_cells(
    fitted: pd.DataFrame,
    specs: pd.DataFrame | None,
    pool: _Pooling,
    *,
    inputs: Inputs,
) -> pd.DataFrame:
    # :func:`_fp8_equivalent` given the fitted rows' speedup pairs (``pool``)
    ok = fitted.loc[np.isfinite(fitted["efficiency"])].copy()
    moe = ok["moe"] if "moe" in ok else pd.Series(False, index=ok.index)
    ok["family"] = np.where(moe.to_numpy(dtype=bool), "MoE", "dense")
    speed = {
        (v, f): pool.speedups(v, f)[0] for v, f in set(zip(ok["vendor"], ok["family"], strict=True))
    }
    row_keys = list(
        zip(ok["accelerator"], ok["precision"], ok["vendor"], ok["family"], strict=True)
    )
    # one factor per part x precision x vendor x family (many rows share one)
    # and the part's sustained-clock factor within its die (MI325X holds a higher clock)
    factor = {
        (a, p, v, f): precision_factor(spec_row(a, specs, inputs=inputs), p, speed[(v, f)])
        * sustained_factor(a, p, inputs=inputs)
        for a, p, v, f in set(row_keys)
    }
    factors = [factor[key] for key in row_keys]
    ok["x"] = np.log(ok["efficiency"].to_numpy() / np.asarray(factors))
    moe_w = np.where(moe.to_numpy(dtype=bool), MOE_LEVEL_WEIGHT, 1.0)
    ok["level_weight"] = np.where(ok["ep_spill"].to_numpy(dtype=bool), SPILL_WEIGHT, moe_w)
    # one cell per accelerator x model x kind x origin: many submissions of one cell (H100
    # LoRA has dozens) must not outweigh a cell with one published row
    keys = ["vendor", "generation", "die", "kind", "family", "accelerator", "model", "origin"]
    return ok.groupby([*keys, "precision"], as_index=False)[["x", "level_weight"]].mean()


#: Backfitting rounds of the part and workload effects (converged to 1e-6 well before).
_BACKFIT_ROUNDS = 25


class WorkloadEffects(TypedDict):
    """What :func:`workload_effects` returns (log-efficiency effects and residuals)."""

    effect: dict[tuple[str, str], float]
    family: dict[tuple[str, str], float]
    kind: dict[str, float]
    precision: dict[str, float]
    resid: np.ndarray


def workload_effects(cells: pd.DataFrame, k: float = SHRINK_CELLS) -> WorkloadEffects:
    """Cross-vendor workload effects on log efficiency, with the parts' levels removed.

    A workload is a model x kind (``llama3.1-405b`` pre-training, ``llama2-70b`` LoRA); its
    effect is the mean over its cells of ``x - part level``, shrunk toward its family x kind
    mean (dense or MoE, pre-training or LoRA) with ``k`` pseudo-cells; the part levels are
    the means of ``x - effect`` over each part's cells. Both are found by backfitting (they
    are additive, so the sum is identified, not the split). Returns ``effect`` (per
    workload), ``family`` (per family x kind), ``kind`` (per kind) and ``resid`` (``x``
    less its workload effect, per cell).
    """
    x = cells["x"].to_numpy(dtype=float)
    w_key = list(zip(cells["model"], cells["kind"], strict=True))
    f_key = list(zip(cells["family"], cells["kind"], strict=True))
    w_codes, w_uni = pd.factorize(pd.Series(w_key, dtype=object))
    f_codes, f_uni = pd.factorize(pd.Series(f_key, dtype=object))
    a_codes, _ = pd.factorize(cells["accelerator"])
    k_codes, k_uni = pd.factorize(cells["kind"])
    p_codes, p_uni = pd.factorize(cells["precision"])
    eff = np.zeros(len(w_uni))
    fam = np.zeros(len(f_uni))
    kind_m = np.zeros(len(k_uni))
    prec = np.zeros(len(p_uni))
    anchor = np.asarray([p == MLPERF_PRECISION for p in p_uni])

    def mean_by(codes: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
        out: np.ndarray = np.bincount(codes, v, n) / np.maximum(np.bincount(codes, None, n), 1)
        return out

    for _ in range(_BACKFIT_ROUNDS):
        part = mean_by(a_codes, x - eff[w_codes] - prec[p_codes], int(a_codes.max()) + 1)
        # precision: what the peak-ratio conversion left, shrunk toward none, FP8 the anchor
        dev_p = x - part[a_codes] - eff[w_codes]
        n_p = np.bincount(p_codes, None, len(p_uni))
        prec = np.where(anchor, 0.0, np.bincount(p_codes, dev_p, len(p_uni)) / (n_p + k))
        dev = x - part[a_codes] - prec[p_codes]
        kind_m = mean_by(k_codes, dev, len(k_uni))
        fam = mean_by(f_codes, dev, len(f_uni))
        n_w = np.bincount(w_codes, None, len(w_uni))
        target = np.zeros(len(w_uni))
        target[w_codes] = fam[f_codes]
        eff = (np.bincount(w_codes, dev, len(w_uni)) + k * target) / (n_w + k)
    return {
        "effect": {(str(a), str(b)): float(e) for (a, b), e in zip(w_uni, eff, strict=True)},
        "family": {(str(a), str(b)): float(e) for (a, b), e in zip(f_uni, fam, strict=True)},
        "kind": {str(key): float(e) for key, e in zip(k_uni, kind_m, strict=True)},
        "precision": {str(key): float(e) for key, e in zip(p_uni, prec, strict=True)},
        "resid": x - eff[w_codes] - prec[p_codes],
    }


def expert_gemm_size(model: str, *, inputs: Inputs | None = None) -> float:
    """``hidden x FFN width`` of one expert (of the MLP for a dense model).

    The size of the GEMMs a token's FFN work runs in, which sets how close to peak they get.

    >>> round(expert_gemm_size("llama3.1-8b") / 1e6, 1)  # 4,096 x 14,336
    58.7
    """
    arch = model_arch(model, inputs=resolve(inputs))
    return float(arch["hidden_size"] * ffn_width(arch)[0])


#: Fewest measured workloads of a kind for the expert-size line (two points fix a line;
#: a third checks it).
_MIN_LINE_WORKLOADS = 3


def _size_line_effect(
    fx: WorkloadEffects, model: str, kind: str, *, inputs: Inputs
) -> float | None:
    # an unseen workload's effect from the line of the measured workload effects of the
    # kind on log expert GEMM size (grouped GEMMs of small experts run further from peak)
    pts = [
        (math.log(expert_gemm_size(m, inputs=inputs)), e)
        for (m, k), e in fx["effect"].items()
        if k == kind
    ]
    if len(pts) < _MIN_LINE_WORKLOADS:
        return None
    xs, ys = np.asarray([p[0] for p in pts]), np.asarray([p[1] for p in pts])
    slope, icpt = np.polyfit(xs, ys, 1)
    return float(icpt + slope * math.log(expert_gemm_size(model, inputs=inputs)))


def _unseen_note(family: str) -> str:
    return "expert-size line" if family == "MoE" else f"{family} mean"


def _target_effect(
    fx: WorkloadEffects, model: str | None, kind: str, family: str, *, inputs: Inputs
) -> float:
    # the workload's own effect; an unseen MoE one the expert-size line (Mixtral's 8 large
    # experts are not DeepSeek's 256 small ones), else its family x kind mean, the kind's
    if model is not None and (model, kind) in fx["effect"]:
        return fx["effect"][(model, kind)]
    line = (
        None
        if model is None or family != "MoE"
        else _size_line_effect(fx, model, kind, inputs=inputs)
    )
    if line is not None:
        return line
    if (family, kind) in fx["family"]:
        return fx["family"][(family, kind)]
    return fx["kind"].get(kind, 0.0)


#: Spec columns a part must match (peaks) or at least equal (memory, links) to dominate a
#: sibling: same compute, no less memory, bandwidth or interconnect.
_SAME_COLUMNS = ("bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops")
_AT_LEAST_COLUMNS = (
    "memory_gb",
    "memory_bw_tbps",
    "scaleup_bw_gbps",
    "scaleup_domain_gpus",
    "scaleout_gbps_per_gpu",
)


def _value(v: object) -> float:
    # a spec value as a float, NaN when missing or not a number
    try:
        return float(str(v))
    except ValueError:
        return math.nan


def _same(a: object, b: object) -> bool:
    fa, fb = _value(a), _value(b)
    return (math.isnan(fa) and math.isnan(fb)) or fa == fb


def dominated_siblings(
    spec: Mapping[str, object], specs: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> list[str]:
    """Parts ``spec`` dominates: same compute, no more memory or links (H100-SXM for H200).

    Same vendor, generation and peak FLOPs at every precision, and no more memory, memory
    bandwidth or interconnect (MI300X for the MI325X; a missing value dominates nothing). A
    part that dominates a sibling is at least as efficient: the same compute die with more
    and faster memory does not run its GEMMs at a lower fraction of the same peak.
    """
    frame = _load_specs(resolve(inputs)) if specs is None else specs
    out = []
    for row in frame.to_dict("records"):
        if row.get("accelerator") == spec.get("accelerator"):
            continue
        if row.get("vendor") != spec.get("vendor") or generation_of(row) != generation_of(spec):
            continue
        same = all(_same(row.get(c), spec.get(c)) for c in _SAME_COLUMNS)
        if same and all(_value(row.get(c)) <= _value(spec.get(c)) for c in _AT_LEAST_COLUMNS):
            out.append(str(row["accelerator"]))
    return out


def estimate_efficiency(
    fitted: pd.DataFrame,
    spec: Mapping[str, Any],
    *,
    kind: str,
    precision: str,
    model: str | None = None,
    moe: bool | None = None,
    specs: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> tuple[float, str]:
    """Efficiency (fraction of ``precision`` peak) for a part and workload, and its source.

    In FP8-equivalent log efficiency, two additive parts. The *workload effect*
    (:func:`workload_effects`: ``model`` x ``kind``, measured across vendors and shrunk
    toward its dense/MoE family; an unseen dense model takes its family's mean, an unseen
    MoE model the line of the measured workload effects on log expert GEMM size
    (:func:`expert_gemm_size`; small experts' grouped GEMMs run further from peak),
    ``model=None`` the dense family's mean). The *part level*: each cell less its workload
    effect, the part's cells shrunk toward its vendor x generation mean, that toward the
    vendor's mean, that toward the mean of all cells (:data:`SHRINK_CELLS` pseudo-cells at
    each level; cells of the other kind count :data:`OTHER_KIND_WEIGHT`). Last, the part's
    own cells of the same workload are shrunk toward level + effect; a part takes the best
    of that and the same value of each sibling it dominates (:func:`dominated_siblings`:
    H200 over H100-SXM), so more and faster memory around the same die never predicts a
    slower part. Then converted to ``precision`` with :func:`precision_factor` and the
    vendor's :func:`measured_speedups`. ``moe`` (default: from the model table when
    ``model`` is given) picks the family of an unseen model.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown workload kind {kind!r}; allowed: 'pretrain', 'lora'")
    inputs = resolve(inputs)
    pool = _pooling(fitted, specs, inputs=inputs)
    cells = pool.cells
    if cells.empty:
        raise ValueError("no fitted training rows to estimate an efficiency from")
    if moe is None:
        moe = model is not None and model_arch(model, inputs=inputs).get("experts", 1.0) > 1
    family = "MoE" if moe else "dense"
    vendor, gen = spec.get("vendor"), generation_of(spec)
    k = SHRINK_CELLS
    fx = pool.effects  # workload_effects(cells, SHRINK_CELLS), built once per fit
    x_adj = fx["resid"]
    w = np.where(cells["kind"] == kind, 1.0, OTHER_KIND_WEIGHT)
    lw = cells["level_weight"].to_numpy(dtype=float)
    m0 = float(np.average(x_adj, weights=w))
    mv_mask = (cells["vendor"] == vendor).to_numpy()
    m_v = (np.sum(w[mv_mask] * x_adj[mv_mask]) + k * m0) / (w[mv_mask].sum() + k)
    g_mask = mv_mask & (cells["generation"] == gen).to_numpy()
    m_g = (np.sum(w[g_mask] * x_adj[g_mask]) + k * m_v) / (w[g_mask].sum() + k)
    # the compute die: same-die parts (B300 and GB300) pool their cells before the
    # generation; a part's own cells then only move it off its die's mean
    die = die_of(spec)
    d_mask = g_mask & (cells["die"].to_numpy() == die)
    w = w * np.where(d_mask, lw, 1.0)  # spilled and MoE cells leave part and die levels
    # (a die with every cell of its generation is that level: the same cells shrink once)
    m_d = (np.sum(w[d_mask] * x_adj[d_mask]) + k * m_g) / (w[d_mask].sum() + k)
    m_d = m_g if bool(np.array_equal(d_mask, g_mask)) else m_d
    p_eff = fx["precision"]
    effect = _target_effect(fx, model, kind, family, inputs=inputs)
    # own cells less their own precision's effect (FP4 and BF16 cells are FP8-equivalent
    # only after it), so the requested precision's effect is added once, after the shrink
    x_cells = cells["x"].to_numpy(dtype=float) - cells["precision"].map(p_eff).to_numpy(float)
    work_mask = (cells["model"] == model).to_numpy() & (cells["kind"] == kind).to_numpy()
    acc_col = cells["accelerator"].to_numpy()

    def level_of(acc: object) -> float:
        # the part itself, shrunk toward its die: MI325X is an MI300X with more HBM and
        # power, and runs faster
        a_mask = d_mask & (acc_col == acc)
        return float((np.sum(w[a_mask] * x_adj[a_mask]) + k * m_d) / (w[a_mask].sum() + k))

    def part_x(acc: object) -> tuple[float, int]:
        # then its own cells of this workload, shrunk toward level + effect
        level = level_of(acc)
        own = d_mask & (acc_col == acc) & work_mask
        mix = (np.sum(x_cells[own]) + k * (level + effect)) / (own.sum() + k)
        return float(mix + p_eff.get(precision, 0.0)), int(own.sum())

    x, n_own_w = part_x(spec.get("accelerator"))
    # a part with the same compute die and at least the memory and links of a sibling is no
    # less efficient than it (H200 vs H100): take the best of the dominated siblings' values
    floor_note = ""
    for sib in dominated_siblings(spec, specs, inputs=inputs):
        x_s, _ = part_x(sib)
        if x_s > x:
            x, floor_note = x_s, f"; floored at {sib}'s (same compute, less memory)"
    speed, speed_note = pool.speedups(str(vendor), family)
    clock = sustained_factor(str(spec.get("accelerator")), precision, inputs=inputs)
    e = math.exp(x) * precision_factor(spec, precision, speed) * clock
    n_own = int((g_mask & (cells["kind"] == kind).to_numpy()).sum())
    n_oth = int(g_mask.sum()) - n_own
    n_v = int(mv_mask.sum())
    seen = (model, kind) in fx["effect"]
    work = (
        f"{model} {kind} effect {effect:+.2f} ({'measured' if seen else _unseen_note(family)})"
        if model is not None
        else f"dense {kind} mean effect {effect:+.2f}"
    )
    source = (
        f"{vendor} {gen} {kind}: {n_own} own cells, {n_oth} of the other kind, shrunk to "
        f"{n_v} {vendor} cells; {work}, {n_own_w} own cells of it; {speed_note}{floor_note}"
    )
    if clock != 1.0:
        source += f"; x {clock:.3f} sustained clock of its die's top bin (max-achievable GEMM)"
    return min(MAX_EFFICIENCY, e), source


def fitted_observations(*, inputs: Inputs | None = None) -> pd.DataFrame:
    """The project's observations with fitted efficiencies (cached per process; a copy)."""
    inputs = resolve(inputs)
    return _fitted_cached(inputs).copy()


def _fitted_cached(inputs: Inputs) -> pd.DataFrame:
    return inputs.derived(
        "training.fitted",
        lambda: fit_row_efficiencies(training_observations(inputs=inputs), inputs=inputs),
    )


def pretrain_efficiency(
    accelerator: str,
    precision: str,
    *,
    kind: str = "pretrain",
    model: str | None = None,
    fitted: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> tuple[float, str]:
    """Pooled efficiency for a part's pre-training (or LoRA) at ``precision``, and its source.

    With ``model`` the workload effect is that model's (:func:`estimate_efficiency`).
    """
    inputs = resolve(inputs)
    fitted = _fitted_cached(inputs) if fitted is None else fitted
    return estimate_efficiency(
        fitted,
        spec_row(accelerator, specs, inputs=inputs),
        kind=kind,
        precision=precision,
        model=model,
        specs=specs,
        inputs=inputs,
    )


def predict_mlperf(
    accelerator: str,
    benchmark: str,
    n_gpus: int,
    *,
    precision: str = MLPERF_PRECISION,
    batch_seqs: float | None = None,
    fits: pd.DataFrame | None = None,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> float:
    """Predicted MLPerf Training time to train in minutes on ``n_gpus`` accelerators.

    At the global batch ``batch_seqs`` (sequences), by default the policy
    :func:`~analysis.training.mlperf.mlperf_batch_size` for that count.
    """
    inputs = resolve(inputs)
    # the pooled fallback (resolve_efficiency) builds on mlperf's fits
    bm = _benchmark(benchmark)
    spec = spec_row(accelerator, specs, inputs=inputs)
    arch = model_arch(bm.model, models, inputs=inputs)
    fits = _fits_cached(inputs) if fits is None else fits
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
            accelerator,
            kind="lora" if bm.lora else "pretrain",
            precision=precision,
            fits=fits,
            inputs=inputs,
        )
    counts = np.array([int(n_gpus)])
    batch = None if batch_seqs is None else np.array([float(batch_seqs)])
    minutes = _mlperf_minutes(spec, arch, benchmark, counts, eff, precision, batch)[0]
    if not np.isfinite(minutes):
        _, res = _mlperf_layouts(spec, arch, benchmark, counts, eff, precision, batch)
        raise ValueError(
            f"{benchmark} on {n_gpus} x {accelerator} is infeasible: {res['reason'][0]}"
        )
    return float(minutes)
