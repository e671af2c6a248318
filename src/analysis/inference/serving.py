"""The public serving contract: best throughput per GPU under latency bounds.

Also frontiers, best deployments, MLPerf predictions, sweeps and memory headroom.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

from analysis.inference.benchmarks import benchmark_def, benchmark_for_model
from analysis.inference.calibration import Calibration, _calibration
from analysis.inference.implied import _HW_KEYS, _predict_one, _tp_options
from analysis.inference.roofline import (
    CONCURRENCY,
    MEMORY_USABLE_FRACTION,
    PEAK_COLUMN,
    Deployment,
    Prepared,
    Workload,
    _best,
    _check_precision,
    _generation,
    _lookup,
    _models,
    _num,
    _specs,
    model_params,
    precision_class,
    serving_metrics,
)
from analysis.inference.shape import hardware_params
from analysis.inputs import Inputs


def _prepare(
    accelerator: str,
    model: str,
    precision: str,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    *,
    inputs: Inputs | None = None,
) -> Prepared:
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    _check_precision(precision)
    spec = _lookup(specs, "accelerator", accelerator)
    mrow = _lookup(models, "model", model)
    return Prepared(spec, hardware_params(spec, precision, inputs=inputs), model_params(mrow))


def _check_fit(
    m: dict[str, np.ndarray],
    accelerator: str,
    model: str,
    precision: str,
    gpus: int,
    hw: dict[str, float],
    isl: float,
    osl: float,
) -> None:
    if not bool(np.all(m["fits"])):
        w = float(np.max(m["weights_gb_per_gpu"]))
        raise ValueError(
            f"{model} at {precision} does not fit on {gpus} x {accelerator}: weights need "
            f"{w:.1f} GB per GPU of {hw['mem_gb'] * MEMORY_USABLE_FRACTION:.1f} GB usable, "
            f"leaving no room for one sequence of {isl + osl:.0f} tokens of KV cache; "
            "use more GPUs or a lower precision"
        )


def _check_request(isl: float, osl: float, tpot_ms: float | None, ttft_ms: float | None) -> None:
    """Raise unless the token lengths are positive and each latency bound positive or None."""
    for name, v in (("isl", isl), ("osl", osl)):
        if not v > 0:
            raise ValueError(f"{name} must be a positive number of tokens, got {v}")
    for name, bound in (("tpot_ms", tpot_ms), ("ttft_ms", ttft_ms)):
        if bound is not None and not bound > 0:
            raise ValueError(f"{name} must be positive or None (unbounded), got {bound}")


def _serving_eta(
    cal: Calibration,
    spec: pd.Series,
    *,
    accelerator: str,
    model: str,
    bounded: bool,
    precision: str | None = None,
) -> tuple[float, str]:
    """Efficiency of a serving query and its factor level: Server scale when bounded."""
    return cal.eta(
        str(spec["vendor"]),
        _generation(spec),
        "Server" if bounded else "Offline",
        model=model,
        accelerator=accelerator,
        precision_class=precision_class(spec, precision) if precision else None,
    )


def _with_compute_ratio(
    cal: Calibration, spec: pd.Series, hw: dict[str, float], model: str, precision: str
) -> dict[str, float]:
    """``hw`` with the query's compute ratio (:meth:`Calibration.compute_ratio`)."""
    kappa = cal.compute_ratio(benchmark_for_model(model), precision_class(spec, precision))
    return {**hw, "compute_ratio": kappa}


def _replica_metrics(
    prep: Prepared, work: Workload, dep: Deployment, cal: Calibration
) -> tuple[dict[str, np.ndarray], float, str]:
    """One TP=``dep.gpus`` replica over the concurrency sweep, with its eta and factor level.

    Raises:
        ValueError: the model does not fit in memory (see :func:`_check_fit`).
    """
    eta, source = _serving_eta(
        cal,
        prep.spec,
        accelerator=dep.accelerator,
        model=work.model,
        bounded=dep.is_bounded,
        precision=work.precision,
    )
    m = serving_metrics(
        _with_compute_ratio(cal, prep.spec, prep.hw, work.model, work.precision),
        prep.mp,
        precision=work.precision,
        isl=work.isl,
        osl=work.osl,
        gpus=dep.gpus,
        eta=eta,
    )
    _check_fit(
        m, dep.accelerator, work.model, work.precision, dep.gpus, prep.hw, work.isl, work.osl
    )
    return m, eta, source


def frontier(
    accelerator: str,
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    gpus: int = 8,
    bounded: bool = True,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Throughput per GPU vs interactivity over the concurrency sweep (one replica, TP=gpus).

    ``bounded`` selects the efficiency of latency-bounded serving (Server scale) rather
    than Offline. Rows beyond the memory limit are dropped. Raises like
    :func:`max_throughput_per_gpu`.
    """
    prep = _prepare(accelerator, model, precision, specs, models, inputs=inputs)
    return _frontier(
        prep,
        Workload(model, precision, isl, osl),
        Deployment(accelerator, gpus, bounded=bounded),
        _calibration(calibration, inputs=inputs),
    )


def _frontier(prep: Prepared, work: Workload, dep: Deployment, cal: Calibration) -> pd.DataFrame:
    m, _, _ = _replica_metrics(prep, work, dep, cal)
    ok = m["in_memory"]
    return pd.DataFrame(
        {
            "accelerator": dep.accelerator,
            "vendor": prep.spec["vendor"],
            "concurrency": CONCURRENCY[ok],
            "tokens_per_s_per_gpu": m["tok_s_gpu"][ok],
            "tokens_per_s_per_user": m["tok_s_user"][ok],
            "tpot_ms": m["tpot_s"][ok] * 1e3,
            "ttft_ms": m["ttft_s"][ok] * 1e3,
        }
    )


@overload
def max_throughput_per_gpu(
    accelerator: str,
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    tpot_ms: float | None = None,
    ttft_ms: float | None = None,
    gpus: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    return_details: Literal[False] = False,
    inputs: Inputs | None = None,
) -> float: ...
@overload
def max_throughput_per_gpu(
    accelerator: str,
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    tpot_ms: float | None = None,
    ttft_ms: float | None = None,
    gpus: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    return_details: Literal[True],
    inputs: Inputs | None = None,
) -> dict[str, float | str]: ...
def max_throughput_per_gpu(
    accelerator: str,
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    tpot_ms: float | None = None,
    ttft_ms: float | None = None,
    gpus: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    return_details: bool = False,
    inputs: Inputs | None = None,
) -> float | dict[str, float | str]:
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
    _check_request(isl, osl, tpot_ms, ttft_ms)
    prep = _prepare(accelerator, model, precision, specs, models, inputs=inputs)
    m, eta, source = _replica_metrics(
        prep,
        Workload(model, precision, isl, osl),
        Deployment(accelerator, gpus, tpot_ms, ttft_ms),
        _calibration(calibration, inputs=inputs),
    )
    best, idx, _ = _best(m, tpot_ms, ttft_ms)
    if not np.isfinite(best):
        raise ValueError(
            f"impossible latency bound for {model} on {gpus} x {accelerator} at {precision}: "
            f"even at concurrency 1 TPOT is {m['tpot_s'][0] * 1e3:.1f} ms and TTFT "
            f"{m['ttft_s'][0] * 1e3:.0f} ms (bounds: TPOT {tpot_ms} ms, TTFT {ttft_ms} ms)"
        )
    value = float(best)
    if not return_details:
        return value
    i = int(idx)
    return {
        "tokens_per_s_per_gpu": value,
        "concurrency": float(CONCURRENCY[i]),
        "tpot_ms": float(m["tpot_s"][i] * 1e3),
        "ttft_ms": float(m["ttft_s"][i] * 1e3),
        "tokens_per_s_per_user": float(m["tok_s_user"][i]),
        "eta": eta,
        "eta_source": source,
        "max_concurrency": float(m["max_concurrency"]),
    }


def tp_choices(max_tp: int) -> tuple[int, ...]:
    """Tensor-parallel degrees a deployment of at most ``max_tp`` GPUs per replica may use.

    Powers of two up to ``max_tp``, plus ``max_tp`` itself (so a fixed-TP replica is always
    one of the choices).
    """
    if max_tp < 1:
        raise ValueError(f"gpus_per_replica (the maximum TP) must be >= 1, got {max_tp}")
    out = {1, int(max_tp)}
    t = 2
    while t <= max_tp:
        out.add(t)
        t *= 2
    return tuple(sorted(out))


def _deployment(
    prep: Prepared, work: Workload, dep: Deployment, cal: Calibration
) -> dict[str, Any]:
    """:func:`best_deployment` on prepared inputs (one numpy evaluation over TP x batch).

    ``dep.gpus`` is the largest tensor-parallel degree the search may choose.
    """
    spec, hw, mp = prep
    accelerator, max_tp, tpot_ms, ttft_ms = dep.accelerator, dep.gpus, dep.tpot_ms, dep.ttft_ms
    model, precision, isl, osl = work.model, work.precision, work.isl, work.osl
    eta, source = _serving_eta(
        cal, spec, accelerator=accelerator, model=model, bounded=dep.is_bounded, precision=precision
    )
    tps = np.asarray(tp_choices(max_tp), dtype=float)
    m = serving_metrics(
        _with_compute_ratio(cal, spec, hw, model, precision),
        mp,
        precision=precision,
        isl=isl,
        osl=osl,
        gpus=tps[:, None],
        eta=eta,
        concurrency=CONCURRENCY[None, :],
    )
    fits = np.broadcast_to(m["fits"], tps[:, None].shape)[:, 0]
    if not fits.any():
        _check_fit(m, accelerator, model, precision, int(tps[-1]), hw, isl, osl)
    shape = m["tok_s_gpu"].shape
    ok = np.broadcast_to(m["in_memory"], shape) & fits[:, None]
    if tpot_ms is not None:
        ok = ok & (m["tpot_p99_s"] * 1e3 <= tpot_ms)
    if ttft_ms is not None:
        ok = ok & (m["ttft_s"] * 1e3 <= ttft_ms)
    val = np.where(ok, m["tok_s_gpu"], -np.inf)
    k = int(np.argmax(val))  # first maximum: the smallest TP, then the lowest batch
    ti, ci = np.unravel_index(k, shape)
    if not np.isfinite(val.flat[k]):
        j = int(np.flatnonzero(fits)[-1])  # the fastest layout per token that fits
        raise ValueError(
            f"impossible latency bound for {model} on {accelerator} at {precision} with "
            f"TP <= {max_tp}: even at concurrency 1 on TP{int(tps[j])} TPOT is "
            f"{m['tpot_s'][j, 0] * 1e3:.1f} ms and TTFT {m['ttft_s'][j, 0] * 1e3:.0f} ms "
            f"(bounds: TPOT {tpot_ms} ms, TTFT {ttft_ms} ms)"
        )
    tp = int(tps[ti])
    return {
        "tokens_per_s_per_gpu": float(val[ti, ci]),
        "tp": tp,
        "replicas_per_max_tp": max_tp // tp,
        "concurrency": float(CONCURRENCY[ci]),
        "tpot_ms": float(m["tpot_s"][ti, ci] * 1e3),
        "ttft_ms": float(m["ttft_s"][ti, ci] * 1e3),
        "tokens_per_s_per_user": float(m["tok_s_user"][ti, ci]),
        "eta": eta,
        "eta_source": source,
        "max_concurrency": float(np.broadcast_to(m["max_concurrency"], shape)[ti, 0]),
    }


def best_deployment(
    accelerator: str,
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    tpot_ms: float | None = None,
    ttft_ms: float | None = None,
    max_tp: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    inputs: Inputs | None = None,
) -> dict[str, object]:
    """The best serving layout within ``max_tp`` GPUs per replica under the latency bounds.

    An operator with ``max_tp`` GPUs (e.g. one 8-GPU server) may run one TP=``max_tp``
    replica or several smaller ones (:func:`tp_choices`): a small TP reads each weight on
    fewer GPUs per token (more tokens/s per GPU, no all-reduce) but takes longer per token
    and holds fewer sequences. Returns the details of :func:`max_throughput_per_gpu` plus
    ``tp`` (the chosen tensor-parallel degree) and ``replicas_per_max_tp``. Ties go to the
    smaller TP (deterministic).

    Raises:
        ValueError: like :func:`max_throughput_per_gpu` (no TP fits in memory, or none
            meets the bounds).
    """
    if max_tp < 1:
        raise ValueError(f"max_tp must be >= 1, got {max_tp}")
    _check_request(isl, osl, tpot_ms, ttft_ms)
    return _deployment(
        _prepare(accelerator, model, precision, specs, models, inputs=inputs),
        Workload(model, precision, isl, osl),
        Deployment(accelerator, max_tp, tpot_ms, ttft_ms),
        _calibration(calibration, inputs=inputs),
    )


def predict_mlperf(
    accelerator: str,
    benchmark: str,
    scenario: str,
    *,
    precision: str,
    gpus: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    round_: str | None = None,
    osl: float | None = None,
    inputs: Inputs | None = None,
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
    spec, hw, mp = _prepare(accelerator, bdef.model, precision, specs, models, inputs=inputs)
    cal = _calibration(calibration, inputs=inputs)
    eta, _ = cal.eta(
        str(spec["vendor"]),
        _generation(spec),
        scenario,
        round_,
        benchmark=benchmark,
        accelerator=accelerator,
        precision_class=precision_class(spec, precision),
    )
    osl_v = float(osl) if osl is not None else bdef.osl_mean
    tps = _tp_options(hw, gpus)
    hw = _with_compute_ratio(cal, spec, hw, bdef.model, precision)
    value = _predict_one(hw, mp, precision, bdef.isl_mean, osl_v, ttft, tpot, tps, eta)
    if not np.isfinite(value):
        raise ValueError(
            f"{bdef.model} at {precision} on {accelerator}: no tensor-parallel layout within "
            f"{gpus} GPUs fits in memory and meets the {scenario} bounds "
            f"(TTFT {ttft} ms, TPOT {tpot} ms)"
        )
    return value


def sweep(
    *,
    isl: int,
    osl: int,
    gpus: int = 8,
    precisions: Sequence[str] = ("bf16", "fp8", "fp4"),
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    bounded: bool = False,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Every accelerator x model x precision x concurrency level, in one numpy broadcast.

    Returns a long frame (accelerator, model, precision, concurrency, tokens_per_s_per_gpu,
    tokens_per_s_per_user, tpot_ms, ttft_ms, in_memory); unsupported precisions and models
    that do not fit are absent.
    """
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    cal = _calibration(calibration, inputs=inputs)
    scen = "Server" if bounded else "Offline"
    acc = list(specs["accelerator"])
    hw = {k: np.empty((len(acc), 1, len(precisions), 1)) for k in _HW_KEYS}
    eta = np.empty((len(acc), len(models), len(precisions), 1))
    kappa = np.empty((len(acc), len(models), len(precisions), 1))
    for i, (_, s) in enumerate(specs.iterrows()):
        for j, mod in enumerate(models["model"]):
            e = cal.eta(
                str(s["vendor"]), _generation(s), scen, model=mod, accelerator=str(s["accelerator"])
            )[0]
            bench = benchmark_for_model(mod)
            for k, p in enumerate(precisions):
                klass = precision_class(s, p)
                eta[i, j, k, 0] = e * cal.precision(str(s["vendor"]), klass)
                kappa[i, j, k, 0] = cal.compute_ratio(bench, klass)
        for j, p in enumerate(precisions):
            peak = _num(s, PEAK_COLUMN[p])
            base = (
                hardware_params(s, "bf16", inputs=inputs)
                if not peak > 0
                else hardware_params(s, p, inputs=inputs)
            )
            for key in _HW_KEYS:
                # the format's bounded rate (sustained_tflops) where supported, else NaN
                v = base[key] if (key != "peak_tflops" or peak > 0) else np.nan
                hw[key][i, 0, j, 0] = v
    mps = [model_params(r) for _, r in models.iterrows()]
    mp = {k: np.array([m[k] for m in mps], dtype=float)[None, :, None, None] for k in mps[0]}
    frames = []
    for j, p in enumerate(precisions):
        hw_p = {k: v[:, :, j : j + 1, :] for k, v in hw.items()}
        hw_p["compute_ratio"] = kappa[:, :, j : j + 1, :]
        m = serving_metrics(
            hw_p,
            mp,
            precision=p,
            isl=isl,
            osl=osl,
            gpus=gpus,
            eta=eta[:, :, j : j + 1, :],
            concurrency=CONCURRENCY[None, None, None, :],
        )
        shape = m["tok_s_gpu"].shape
        valid = np.broadcast_to(np.isfinite(hw_p["peak_tflops"]), shape) & np.broadcast_to(
            m["fits"], shape
        )
        ai, mi, _, ci = np.nonzero(valid)
        frames.append(
            pd.DataFrame(
                {
                    "accelerator": np.asarray(acc)[ai],
                    "model": models["model"].to_numpy()[mi],
                    "precision": p,
                    "concurrency": CONCURRENCY[ci],
                    "tokens_per_s_per_gpu": m["tok_s_gpu"][valid],
                    "tokens_per_s_per_user": np.broadcast_to(m["tok_s_user"], shape)[valid],
                    "tpot_ms": np.broadcast_to(m["tpot_s"], shape)[valid] * 1e3,
                    "ttft_ms": np.broadcast_to(m["ttft_s"], shape)[valid] * 1e3,
                    "in_memory": np.broadcast_to(m["in_memory"], shape)[valid],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def memory_headroom(
    accelerators: Sequence[str],
    model: str,
    *,
    precision: str,
    isl: int,
    osl: int,
    gpus: int = 8,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Maximum concurrency per replica (memory bound) at the given context, per accelerator."""
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    mp = model_params(_lookup(models, "model", model))
    rows = []
    for acc in accelerators:
        spec = _lookup(specs, "accelerator", acc)
        hw = hardware_params(spec, "bf16", inputs=inputs)  # capacity does not depend on peak FLOPS
        m = serving_metrics(
            hw,
            mp,
            precision=precision,
            isl=isl,
            osl=osl,
            gpus=gpus,
            eta=1.0,
            concurrency=np.array([1.0]),
        )
        w = float(np.ravel(m["weights_gb_per_gpu"])[0])
        kv_room = float(hw["mem_gb"]) * MEMORY_USABLE_FRACTION - w
        rows.append(
            {
                "accelerator": acc,
                "vendor": spec["vendor"],
                "status": spec.get("status", ""),
                "memory_gb": hw["mem_gb"],
                "weights_gb_per_gpu": w,
                "kv_room_gb_per_gpu": max(kv_room, 0.0),
                "max_concurrency": float(np.ravel(m["max_concurrency"])[0]),
                "fits": bool(np.ravel(m["fits"])[0]),
            }
        )
    return pd.DataFrame(rows)
