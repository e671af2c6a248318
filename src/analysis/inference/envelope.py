"""The measured envelope that bounds the modelled deployment options (issue 20).

Analytical decisions taken here (the chapter ``30-inference-tiers`` states the rule):

* **Which measurements bound an option.** The InferenceX points (speculative decoding
  excluded) of the same accelerator, precision, model and request lengths (ISL, OSL) and
  of the option's kind: disaggregated points bound the disaggregated option; aggregated
  points bound the aggregated option (tensor-parallel decode: the MLPerf-calibrated
  model's row is replaced by the measured point when it exceeds the bound) and the
  expert-parallel one (expert-parallel decode).
* **The bound.** The envelope E(t) is the best measured output tokens/s per GPU (all
  GPUs, prefill pool included) among the stack's points with a p99 TPOT of at most t
  and, in a tier with a TTFT bound, a median TTFT within it (where no point meets the
  TTFT bound, the TPOT envelope alone). A
  modelled operating point at p99 TPOT t may exceed E(t) by at most the vendor's
  validated error (the held-out median APE of the disaggregated validation); where no
  point is as tight as t, E(t) is the throughput of the tightest point (a looser
  operating point bounds a tighter one from above). Beyond the sweep's reach (t above
  every point's median TPOT) the measurements do not bound the model; the calibration's
  limit on sequences per GPU still applies.
* **The measured point itself** is a candidate in every tier (basis "measured": the best
  point whose p99 TPOT and median TTFT meet the tier), so the chosen option is the
  better of the bounded model and the measurement.
* **No extrapolation of layouts.** Decode workers wider than the widest expert-parallel
  worker measured (for the accelerator at the model, else for its vendor) and prefill
  workers larger than the largest measured one are not offered; an expert-parallel
  aggregated option is also held to the widest worker measured aggregated (8 GPUs for
  both vendors today), since a disaggregated run's decode pool does no prefill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.inference.deployment_fit import _layout, measured_points
from analysis.inference.deployments import MEASURED_POINT, Layout, Request
from analysis.inference.disaggregation import _output_per_gpu

#: The option kinds this module bounds and the measured kind of each.
OPTION_KINDS = {
    "aggregated": "aggregated",
    "disaggregated": "disaggregated",
    "expert-parallel": "aggregated",
}


@dataclass(frozen=True)
class Envelope:
    """Measured points of one accelerator x precision x kind at the served workload.

    ``points`` columns: out_gpu (output tokens/s per GPU, all GPUs), p99_tpot_ms,
    median_tpot_ms, median_ttft_ms, conc, deployment (reader-facing label), decode_gpus
    (decode worker size). ``margin``: the fraction by which a modelled layout may exceed
    the best measured point (the vendor's validated error).
    """

    points: pd.DataFrame
    margin: float

    def _meeting(self, tpot_max: float | None, ttft_max: float | None) -> pd.DataFrame:
        ok = np.ones(len(self.points), dtype=bool)
        if tpot_max is not None:
            ok &= self.points["p99_tpot_ms"].to_numpy() <= tpot_max
        if ttft_max is not None:
            ok &= self.points["median_ttft_ms"].to_numpy() <= ttft_max
        return self.points[ok]

    def best(self, tpot_max: float | None, ttft_max: float | None) -> dict[str, object] | None:
        """The best measured point meeting the bounds, as a tier option (None: none)."""
        hit = self._meeting(tpot_max, ttft_max)
        if not len(hit):
            return None
        r = hit.sort_values(["out_gpu", "deployment"], ascending=[False, True]).iloc[0]
        return {
            "tokens_per_s_per_gpu": float(r["out_gpu"]),
            "tpot_ms": float(r["median_tpot_ms"]),
            "ttft_ms": float(r["median_ttft_ms"]),
            "concurrency": float(r["conc"]),
            "tokens_per_s_per_user": 1e3 / float(r["median_tpot_ms"]),
            "deployment": str(r["deployment"]),
            "basis": MEASURED_POINT,
            "tp": float(r["decode_gpus"]),
        }

    def cap_at(self, tpot_ms: np.ndarray | float, ttft_max: float | None = None) -> np.ndarray:
        """The most tokens/s per GPU a modelled layout may claim at a p99 TPOT of ``tpot_ms``.

        (1 + margin) x the best measured point at an equal or tighter p99 TPOT (the
        tightest point where none is that tight) and, under a tier's TTFT bound
        ``ttft_max`` (ms), among the points whose median TTFT meets it (all points when
        none does: the TPOT envelope is then the only bound); infinite beyond the
        sweep's reach (a TPOT above every point's median TPOT): the measurements say
        nothing there, and the calibration's limit on sequences per GPU applies instead.
        """
        t = np.atleast_1d(np.asarray(tpot_ms, dtype=float))
        pts = self.points
        if ttft_max is not None:
            meet = pts[pts["median_ttft_ms"].to_numpy(dtype=float) <= ttft_max]
            pts = meet if len(meet) else pts
        pts = pts.sort_values("p99_tpot_ms", kind="mergesort")
        p99 = pts["p99_tpot_ms"].to_numpy()
        best = np.maximum.accumulate(pts["out_gpu"].to_numpy())
        idx = np.clip(np.searchsorted(p99, t, side="right") - 1, 0, None)
        reach = float(self.points["median_tpot_ms"].max())
        return np.where(t <= reach, best[idx] * (1.0 + self.margin), np.inf)


@dataclass(frozen=True)
class LayoutLimits:
    """The widest measured workers (GPUs).

    Expert-parallel decode (any kind) and prefill workers bound a disaggregated option;
    an expert-parallel aggregated option (``pre`` None) also by the widest worker
    measured *aggregated* (tensor- or expert-parallel): one worker doing prefill and
    decode at that width is not the decode pool of a disaggregated run.
    """

    decode_ep_gpus: float = float("inf")
    prefill_gpus: float = float("inf")
    aggregated_ep_gpus: float = float("inf")

    def allows(self, dec: Layout, pre: Layout | None) -> bool:
        """Whether a (decode, prefill) pair stays within the measured sizes."""
        widest = self.decode_ep_gpus if pre is not None else self.aggregated_ep_gpus
        if dec.ep and dec.gpus > widest:
            return False
        return pre is None or pre.gpus <= self.prefill_gpus


def _label(row: pd.Series, dec: Layout, pre: Layout) -> str:
    where = f"InferenceX {row['framework']}"
    if row["kind"] == "disaggregated":
        return (
            f"disaggregated: prefill {pre.label} ({int(row['num_prefill_gpu'])} GPUs), decode "
            f"{dec.label} ({int(row['num_decode_gpu'])} GPUs), measured on {where}"
        )
    kind = "expert-parallel" if dec.ep else "aggregated"
    return f"{kind} {dec.label}, measured on {where}"


def _with_layouts(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with their decode and prefill worker layouts and labels."""
    decs = [
        _layout(r.decode_tp, r.decode_ep, r.decode_dp_attention, r.num_decode_gpu)
        for r in points.itertuples(index=False)
    ]
    pres = [
        _layout(r.prefill_tp, r.prefill_ep, r.prefill_dp_attention, r.num_prefill_gpu)
        for r in points.itertuples(index=False)
    ]
    return points.assign(
        decode_gpus=[float(d.gpus) for d in decs],
        decode_is_ep=[d.ep for d in decs],
        prefill_gpus_worker=[float(p.gpus) for p in pres],
        deployment=[
            _label(r, d, p) for (_, r), d, p in zip(points.iterrows(), decs, pres, strict=True)
        ],
        out_gpu=_output_per_gpu(points),
    )


def measured_layouts(inferencex: pd.DataFrame) -> pd.DataFrame:
    """Every fitted InferenceX point with its layouts, label and output tokens/s per GPU."""
    pts = measured_points(inferencex)
    return _with_layouts(pts) if len(pts) else pts


def _stack_points(layouts: pd.DataFrame, accelerator: str, req: Request, kind: str) -> pd.DataFrame:
    measured_kind = OPTION_KINDS[kind]
    m = layouts[
        (layouts["accelerator"] == accelerator)
        & (layouts["model"] == req.model)
        & (layouts["precision"] == req.precision)
        & (layouts["isl"].astype(float) == req.isl)
        & (layouts["osl"].astype(float) == req.osl)
        & (layouts["kind"] == measured_kind)
    ]
    if kind != "disaggregated":  # aggregated: TP decode; expert-parallel: EP decode
        m = m[m["decode_is_ep"] == (kind == "expert-parallel")]
    cols = ["out_gpu", "p99_tpot_ms", "median_tpot_ms", "median_ttft_ms", "conc"]
    return m.assign(**{c: m[c].astype(float) for c in cols})


def envelopes(
    layouts: pd.DataFrame, accelerator: str, req: Request, margins: Mapping[str, float], vendor: str
) -> dict[str, Envelope]:
    """Per option kind with measured points of this stack: its :class:`Envelope`."""
    if not len(layouts):
        return {}
    out = {}
    for kind in OPTION_KINDS:
        pts = _stack_points(layouts, accelerator, req, kind)
        if len(pts):
            out[kind] = Envelope(pts.reset_index(drop=True), float(margins.get(vendor, 0.0)))
    return out


def layout_limits(layouts: pd.DataFrame, accelerator: str, vendor: str, model: str) -> LayoutLimits:
    """The widest measured expert-parallel decode, prefill and aggregated workers at ``model``.

    The accelerator's own measurements where it has any, else its vendor's.
    """
    if not len(layouts):
        return LayoutLimits()
    at = layouts[layouts["model"] == model]
    own = at["accelerator"] == accelerator
    ours = at["vendor"] == vendor

    def widest(col: str, rows: pd.Series) -> float:
        for scope in (own & rows, ours & rows):
            if scope.any():
                return float(at.loc[scope, col].max())
        return float("inf")

    is_ep = at["decode_is_ep"].astype(bool)
    decode_ep = widest("decode_gpus", is_ep)
    return LayoutLimits(
        decode_ep_gpus=decode_ep,
        prefill_gpus=widest("prefill_gpus_worker", at["kind"] == "disaggregated"),
        aggregated_ep_gpus=min(decode_ep, widest("decode_gpus", at["kind"] == "aggregated")),
    )
