"""Paired effects of the efficiency calibration: software drift and the power exponent.

Both are read from pairs of MLPerf results that differ in one thing only (the round, or the
board power) within one cell, so that neither is confounded with the mix of parts and
workloads a round holds (:func:`_paired_slopes`). Used by
:func:`analysis.inference.calibration._fit_arrays`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from analysis.inference.roofline import _codes, _group_median

#: Prior pair count of the software-drift estimate: a vendor's median per-round change,
#: measured on n (accelerator, benchmark, scenario, precision) cells seen in two rounds,
#: gets weight n / (n + 10) against a prior of no drift. Fixed a priori, like the
#: calibration's row priors (:data:`analysis.inference.calibration.WORKLOAD_PRIOR_ROWS`).
DRIFT_PRIOR_PAIRS = 10.0

#: Prior pair count of the power exponent (see :func:`_power_exponent`): a vendor's median
#: elasticity of eta to board power, measured on n pairs of parts of one silicon generation
#: at different power in the same round, benchmark and scenario, gets weight n / (n + 10)
#: against the physics prior :data:`POWER_PRIOR_EXPONENT`. Fixed a priori, the drift's rule.
POWER_PRIOR_PAIRS = 10.0

#: Prior of the power exponent: dynamic power P ~ C V^2 f with the voltage rising with the
#: clock (V ~ f) in the DVFS range gives P ~ f^3, so a board held at lower power sustains a
#: clock, and a compute-bound throughput, ~ P^(1/3). Physics, not fitted: a vendor with
#: few pairs (an accelerator holdout) keeps it rather than no power effect at all.
POWER_PRIOR_EXPONENT = 1.0 / 3.0


@cache
def _round_key(r: str) -> tuple[int, ...]:
    return tuple(int(x) for x in r.lstrip("v").split(".") if x.isdigit())


@cache
def _release_index(r: str) -> float:
    """Position of an MLPerf Inference round on the release axis: 2 x major + minor.

    MLPerf Inference publishes two rounds a year (vX.0 in spring, vX.1 in autumn), so
    v4.1 -> 9, v5.0 -> 10, v5.1 -> 11, v6.0 -> 12: software drift is per release (about
    six months), whichever rounds the data happen to hold.
    """
    k = _round_key(r)
    return 2.0 * k[0] + (k[1] if len(k) > 1 else 0) if k else 0.0


def _paired_slopes(
    vendors: list[str],
    cells: list[tuple[Any, ...]],
    x: np.ndarray,
    y: np.ndarray,
    prior_pairs: float,
    prior: float = 0.0,
    vote: int | None = None,
) -> tuple[dict[str, float], dict[str, int]]:
    """Per-vendor median within-cell slope d y / d x, shrunk towards ``prior``, and pairs.

    Rows are grouped by (vendor, cell, x) with their median y; within a cell, levels
    adjacent in x give one slope each; per vendor the median slope gets weight
    n / (n + ``prior_pairs``) against the prior slope (0: no effect). A cell with one
    level gives no pair. With ``vote`` = k, the cells sharing their first k keys vote
    once: the vendor's slope is the median over those groups of each group's median
    slope (n still counts pairs). The rule behind :func:`_drift_per_round` and
    :func:`_power_exponent`.
    """
    vendor_names = sorted(set(vendors))
    xr = np.round(np.asarray(x, dtype=float), 9)
    names, codes = _codes(list(zip(vendors, cells, xr.tolist(), strict=True)))
    med = _group_median(codes, np.asarray(y, dtype=float), len(names))
    _, cell = _codes([k[:2] for k in names])
    level = np.array([k[2] for k in names], dtype=float)
    order = np.lexsort((level, cell))  # by cell, then level
    c, lv, m = cell[order], level[order], med[order]
    same = (c[1:] == c[:-1]) & (lv[1:] > lv[:-1])
    slope = ((m[1:] - m[:-1]) / np.where(same, lv[1:] - lv[:-1], 1.0))[same]
    owner = np.array([names[i][0] for i in order[1:]], dtype=object)[same]
    slopes = {v: slope[owner == v] for v in vendor_names}
    centre = {v: float(np.median(sl)) for v, sl in slopes.items() if len(sl)}
    if vote is not None:
        _, voter = _codes([names[i][1][:vote] for i in order[1:]])
        centre = {v: _vote_median(slope, voter[same], owner == v) for v in centre}
    shrunk = {
        v: prior + (centre[v] - prior) * len(sl) / (len(sl) + prior_pairs) if len(sl) else prior
        for v, sl in slopes.items()
    }
    return shrunk, {v: len(sl) for v, sl in slopes.items()}


def _vote_median(values: np.ndarray, voter: np.ndarray, mask: np.ndarray) -> float:
    """Median over the ``voter`` groups (codes) of each group's median of ``mask`` values."""
    codes = voter[mask]
    present, sub = np.unique(codes, return_inverse=True)
    return float(np.median(_group_median(sub, values[mask], len(present))))


def _drift_per_round(
    y: np.ndarray,
    vendors: list[str],
    accs: list[Any] | None,
    benches: list[str],
    scens: list[str],
    rounds_: list[str],
    precision_classes: Sequence[str] | None = None,
) -> tuple[dict[str, float], dict[str, int]]:
    """Per-vendor software drift (log eta per release) and the pairs behind it.

    Paired within benchmark x scenario x accelerator x precision class, so that drift is
    separated from the mix of parts and workloads each round holds and from a submission
    changing format (B200's fp8 preview in v4.1 against its fp4 runs since, -35 % of its
    roofline fraction, is a precision contrast, not software): each cell's median log eta
    per round; for each cell, the change between its consecutive calibrated rounds divided
    by the releases between them. Per vendor, each benchmark x scenario votes once with its
    cells' median slope (one workload's own software step, DeepSeek-R1's +45..95 % from
    v5.1 to v6.0 on six cells, does not set the vendor's drift), and the median vote is
    shrunk towards no drift by n / (n + ``DRIFT_PRIOR_PAIRS``) pairs. Rows without an
    accelerator pair nothing.
    """
    accs = list(accs) if accs is not None else [None] * len(vendors)
    klass = list(precision_classes) if precision_classes is not None else ["native"] * len(y)
    known = np.array([a is not None for a in accs], dtype=bool)
    cells = zip(benches, scens, accs, klass, strict=True)
    drift, pairs = _paired_slopes(
        [v for v, k in zip(vendors, known, strict=True) if k],
        [c for c, k in zip(cells, known, strict=True) if k],
        np.array([_release_index(r) for r in rounds_], dtype=float)[known],
        np.asarray(y, dtype=float)[known],
        DRIFT_PRIOR_PAIRS,
        vote=2,
    )
    vendor_names = sorted(set(vendors))
    return (
        {v: drift.get(v, 0.0) for v in vendor_names},
        {v: pairs.get(v, 0) for v in vendor_names},
    )


def _power_exponent(
    y: np.ndarray,
    vendors: list[str],
    gens: list[str],
    rounds_: list[str],
    benches: list[str],
    scens: list[str],
    log_power: np.ndarray,
) -> tuple[dict[str, float], dict[str, int]]:
    """Per-vendor elasticity of eta to board power within a silicon generation, and pairs.

    Paired within vendor x generation x round x benchmark x scenario, so that it is not
    confounded with software, workload or latency bounds: each distinct board power in a
    cell (a part's TDP, or a stated power cap) is one level with its median log eta; levels
    adjacent in power give a slope d log eta / d log power. Per vendor: the median slope,
    shrunk towards :data:`POWER_PRIOR_EXPONENT` by n / (n + ``POWER_PRIOR_PAIRS``) pairs.
    Parts of one silicon at equal power (H100 and H200) form no pair. Bounded below by 0:
    a board held at higher power does not run its silicon slower, so a negative median
    (NVIDIA's -0.09 once the workload and precision scales moved onto FLOPs, from B200 and
    GB200 pairs that also differ in their host and fabric) reads as no power effect.
    """
    beta, pairs = _paired_slopes(
        vendors,
        list(zip(gens, rounds_, benches, scens, strict=True)),
        np.asarray(log_power, dtype=float),
        y,
        POWER_PRIOR_PAIRS,
        POWER_PRIOR_EXPONENT,
    )
    return {v: max(b, 0.0) for v, b in beta.items()}, pairs
