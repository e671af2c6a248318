"""Compute-side scales: a workload's and a format's efficiency acts on FLOPs, not on bytes.

The MLPerf calibration explains each result as the roofline step at one efficiency, then
splits that efficiency into a base (vendor x generation x round), a workload scale and a
precision-class scale. Both scales are compute-side facts: what a workload's kernels make
of the FLOPs the roofline counts (fine-grained MoE grouped GEMMs, routing and a 201k
vocabulary's sampling for gpt-oss-120b; DeepSeek-R1's MLA), and how far a part's lower
format's peak is reached (a part serving FP8 reaches more of its FP8 peak than of its
twice higher FP4 one). Applied to the whole step, they also slowed the step's weight and
KV-cache reads, which neither changes: gpt-oss-120b's scale of about 0.1, fitted where
MLPerf's huge batches make it compute-bound, made every weight read 10x slower, so at a
latency bound, where a step is mostly weight reads, the report's path put B200 at 4-8 %
of InferenceX's measured throughput (12,660 output tokens/s per GPU at 72 tokens/s per
user, 1k/1k, FP4: https://inferencex.semianalysis.com/compare/gptoss-120b-b200-vs-mi325x).
The issue names this mechanism (B: the workload factors "divide the bandwidth term too").

So each scale is carried as a **compute ratio** kappa = eta_c / eta_b in the step terms
(:func:`scaled_time`: per operator the slower of its bytes at eta_b and its FLOPs at
kappa x eta_b), and the efficiency the calibration fits is the bytes' one. The implied
efficiency of a row depends on its kappa, and kappa on the fit, so the fit iterates
(:func:`fit_with_compute_ratio`): the fitted workload and precision scales move into
kappa, the rows are re-solved at the new kappa, and the fit is repeated until the scales
left over are below :data:`CONVERGED_LOG` (or :data:`MAX_ROUNDS` rounds). A row bound by
bytes at its best layout does not move with kappa; a workload's scale is then set by its
compute-bound rows, and what is left (a few per cent) stays on both, as before.

Effect (``validate-models``, 2026-12-06; MLPerf medians AMD / NVIDIA, AMD/NVIDIA ratio):
leave one round out 8.0 / 10.6, 6.9 % -> 8.2 / 10.6, 9.8 %; vendor x workload 8.5 / 9.9,
13.3 % -> 7.3 / 8.7, 12.9 %; accelerator 10.1 / 11.4, 15.7 % -> 9.2 / 10.4, 11.6 %;
system 3.7 / 5.2, 7.2 % -> 3.4 / 5.0, 7.8 %. The report's path against InferenceX's
DeepSeek-R1 frontiers (:mod:`analysis.inference.frontier_validation`) 45.4 -> 39.4 %
(ratio 31.6 -> 42.4 %). Against InferenceX's published 1k/1k frontiers (output tokens/s
per GPU at a stated interactivity, half the pages' total; pages
``compare/gptoss-120b-b200-vs-mi325x``, ``compare-precision/llama-3-3-70b-b200-fp4-vs-fp8``
and ``compare-precision/llama-3-3-70b-mi355x-fp4-vs-fp8`` on inferencex.semianalysis.com,
best configuration per side; stored copies of the live dashboard pages, which carry no
date, read 2026-12-06; bundled since as the ``inferencex_published`` check set,
:mod:`analysis.inference.published_checks`): gpt-oss-120b on B200 at
72-100 tokens/s per user from 0.04-0.08x to 0.51-0.52x measured; Llama 3.3 70B (the
report's llama3.1-70b) FP8 on B200 at 76-139 from 2.8-6.6x to 1.4-2.8x, on MI355X at
55-96 from 5.8-9.8x to 2.4-3.3x. FP4 on B200 stays 1.4-3.7x and now leads FP8 by 1.36x at
76 tokens/s per user as measured (1.35x); on MI355X FP4 leads FP8 by 1.5-1.75x in the
model where the measured FP8 leads by 1.0-1.43x (MI355X's dense FP4 path reads its bytes
at well under FP8's rate; InferenceX's DeepSeek-R1 sweeps show no such gap, so it is not
a format constant). The remaining excess at high interactivity was a dense model's fixed
cost per layer, charged to MoE layers only until the per-layer overhead went per kernel
to every model (:mod:`analysis.inference.layer_kernels`, same day).

Examined and not taken (2026-12-06, patches not kept): (a) the workload scale alone on
FLOPs, the precision scale on bytes too: an FP8 part above its native FP4 then reads its
bytes 1.9x faster than its FP4 runs (InferenceX's DeepSeek-R1 FP8 cells on B200 / B300
+66 / +87 % on the report's path, Llama FP8 on B200 2.8-6.5x). (b) A secant step per scale
between rounds: the pooled and per-vendor scales trade off, the rounds oscillated and
stopped 1 % short. (c) Each fold started from the ratio fitted on the other half of the
folds (leak-free, fewer rounds): the fixed point depends on the start where a fold holds
no row of a key (vendor x workload fold, AMD 7.3 -> 18.8 %), so every fold starts at 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

#: Rounds of the compute-ratio fit at most, and the largest |log| of a leftover scale that
#: counts as converged.
MAX_ROUNDS = 8
CONVERGED_LOG = 1.0e-2


def scaled_time(
    pieces: Sequence[np.ndarray] | np.ndarray, kappa: float | np.ndarray = 1.0
) -> np.ndarray:
    """A step's scaled time from its operator pieces, FLOPs at compute ratio ``kappa``.

    ``pieces``: (linear bytes, linear FLOPs, attention bytes, attention FLOPs, all-reduce
    bytes), seconds at eta = 1 (:func:`analysis.inference.roofline._terms`). Per operator
    the slower of its bytes and its FLOPs over ``kappa``, plus the all-reduce: seconds at
    eta_b = 1.

    >>> float(scaled_time([np.array(2.0), np.array(1.0), np.array(0.5), np.array(1.0),
    ...                    np.array(0.25)], 0.25))
    8.25
    """
    lin_bw, lin_c, attn_bw, attn_c, comm = pieces
    k = np.asarray(kappa, dtype=float)
    out: np.ndarray = np.maximum(lin_bw, lin_c / k) + np.maximum(attn_bw, attn_c / k) + comm
    return out


@dataclass(frozen=True)
class ComputeScales:
    """Compute ratios per workload (MLPerf benchmark) and per precision class.

    kappa(benchmark, class) = workload x precision, 1 for a key without a value; a
    benchmark without a value of its own takes the median of its family's (MoE or dense),
    like the workload scale does. Pooled over vendors: a vendor's shrunk deviation stays
    on the whole step (:meth:`Calibration.leftover`).
    """

    workload: Mapping[str, float] = field(default_factory=dict)
    precision: Mapping[str, float] = field(default_factory=dict)
    #: Rounds of :func:`fit_with_compute_ratio` behind these scales, and whether the last
    #: one left less than :data:`CONVERGED_LOG` over (False: it stopped at MAX_ROUNDS).
    rounds: int = 0
    converged: bool = True

    def ratio(self, benchmark: str | None, klass: str | None, family: Sequence[str] = ()) -> float:
        """Kappa of a query; ``family``: the benchmarks that stand in for an unknown one."""
        out = 1.0
        if benchmark is not None:
            if benchmark in self.workload:
                out *= self.workload[benchmark]
            else:
                fam = [self.workload[b] for b in family if b in self.workload]
                out *= float(np.exp(np.median(np.log(fam)))) if fam else 1.0
        if klass is not None:
            out *= self.precision.get(klass, 1.0)
        return out

    def times(self, other: ComputeScales) -> ComputeScales:
        """The product of two sets of scales, key by key."""

        def mul(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
            return {k: a.get(k, 1.0) * b.get(k, 1.0) for k in sorted(set(a) | set(b))}

        return ComputeScales(
            mul(self.workload, other.workload), mul(self.precision, other.precision)
        )

    def largest_log(self) -> float:
        """The largest |log| of any scale (0 when empty)."""
        vals = [abs(float(np.log(v))) for t in (self.workload, self.precision) for v in t.values()]
        return max(vals, default=0.0)


#: The compute ratios at which :class:`EtaTable` solves every row once: log-spaced over
#: the range the fitted ratios fall in (gpt-oss-120b's 0.09 to an FP8 part's 1.9), a step
#: of 12 % (two steps of the roofline's concurrency grid cost about as much).
KAPPA_GRID = np.geomspace(1.0 / 32.0, 4.0, 44)


@dataclass(frozen=True)
class EtaTable:
    """Each row's implied efficiency on :data:`KAPPA_GRID`, read back at any ratio.

    The held-out validation refits the compute ratio in every fold, several rounds each;
    solving every row at each round's ratios would cost a full solve per round and fold.
    The table solves each row once per grid ratio and interpolates log eta linearly in
    log kappa (exact at the grid points; between them within a fraction of a per cent
    where one layout stays best, and at most about 3 % at a change of best layout, the
    size of a step of the concurrency grid). A ratio outside the grid is solved exactly.
    """

    log_eta: np.ndarray  #: (rows, grid) log implied efficiency (NaN: none in the bracket)

    @classmethod
    def of(cls, solve_rows: Callable[[np.ndarray, np.ndarray], np.ndarray], rows: int) -> EtaTable:
        """The table of ``rows`` rows (``solve_rows(rows, kappa of each)``, as :meth:`at`)."""
        every = np.arange(rows)
        cols = [solve_rows(every, np.full(rows, k)) for k in KAPPA_GRID]
        with np.errstate(divide="ignore", invalid="ignore"):
            return cls(np.log(np.column_stack(cols)))

    def at(
        self,
        kappa: np.ndarray,
        solve_rows: Callable[[np.ndarray, np.ndarray], np.ndarray],
        exact: np.ndarray | None = None,
    ) -> np.ndarray:
        """Each row's efficiency at its ``kappa``.

        Interpolated on the grid; solved exactly (``solve_rows(rows, kappa of those
        rows)``) for a ratio off the grid or an interval with a grid end outside the
        bracket. ``exact``: each row's efficiency at ratio 1, taken where its kappa is 1.
        """
        k = np.asarray(kappa, dtype=float)
        x = np.log(KAPPA_GRID)
        lk = np.log(k)
        j = np.clip(np.searchsorted(x, lk, side="right") - 1, 0, len(x) - 2)
        w = np.clip((lk - x[j]) / (x[j + 1] - x[j]), 0.0, 1.0)
        rows = np.arange(len(lk))
        with np.errstate(invalid="ignore"):
            out: np.ndarray = np.exp(
                (1.0 - w) * self.log_eta[rows, j] + w * self.log_eta[rows, j + 1]
            )
        given = (k == 1.0) if exact is not None else np.zeros(len(k), dtype=bool)
        if exact is not None:
            out = np.where(given, exact, out)
        redo = np.flatnonzero(((lk < x[0]) | (lk > x[-1]) | ~np.isfinite(out)) & ~given)
        if len(redo):
            out[redo] = solve_rows(redo, k[redo])
        return out


_Fit = TypeVar("_Fit")


def fit_with_compute_ratio(
    solve: Callable[[ComputeScales], np.ndarray],
    fit: Callable[[np.ndarray], _Fit],
    leftover: Callable[[_Fit], ComputeScales],
) -> tuple[_Fit, ComputeScales]:
    """Fit until the workload and precision scales sit in the compute ratio.

    ``solve(scales)``: each row's implied efficiency at the compute ratio ``scales`` give
    it; ``fit(eta)``: a calibration from those efficiencies; ``leftover(cal)``: the
    workload and precision scales that calibration fitted. Each round moves the fitted
    scales into the ratio and re-solves, until the leftover is below
    :data:`CONVERGED_LOG` (or :data:`MAX_ROUNDS` rounds), every ratio 1 at the start.
    Returns the last fit (at the final ratio, its scales the leftover) and the scales the
    ratio is made of. Deterministic.
    """
    scales = ComputeScales()
    for round_ in range(MAX_ROUNDS):
        cal = fit(solve(scales))
        step = leftover(cal)
        done = step.largest_log() < CONVERGED_LOG
        if done or round_ == MAX_ROUNDS - 1:
            return cal, replace(scales, rounds=round_ + 1, converged=done)
        scales = scales.times(step)
    raise AssertionError("unreachable")  # pragma: no cover
