"""Which calibration rows can set which fitted term (identification of the median polish).

The efficiency fit (:func:`analysis.inference.calibration._fit_arrays`) is an additive
model in log space with per-vendor deviations; when a fold removes a vendor's reference
workload, or a group holds only non-native precision rows, some terms are no longer
identified by the data and must not be set by the rows that merely trade them off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from analysis.inference.roofline import _codes, _group_median


def _median_by(
    codes: np.ndarray, n_groups: int, mask: np.ndarray, empty: float = 0.0
) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`_group_median` over the ``mask`` rows, prepared once for many calls.

    The returned function maps per-row values to per-group medians, ``empty`` for a group
    without rows in ``mask``.
    """
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    present, sub = np.unique(codes[rows], return_inverse=True)
    full = len(present) == n_groups

    def median(values: np.ndarray) -> np.ndarray:
        m = _group_median(sub, values[rows], len(present))
        if full:
            return m
        out = np.full(n_groups, empty)
        out[present] = m
        return out

    return median


def _masked_group_median(
    codes: np.ndarray, values: np.ndarray, n_groups: int, mask: np.ndarray
) -> np.ndarray:
    """:func:`_group_median` over the rows where ``mask`` holds; NaN for a group without any."""
    mask = np.asarray(mask, dtype=bool) & np.isfinite(values)
    cnt = np.bincount(codes[mask], minlength=n_groups)
    if cnt.all():  # every group has rows: the plain median
        return _group_median(codes[mask], values[mask], n_groups)
    out = np.full(n_groups, np.nan)
    if not mask.any():
        return out
    present, sub = np.unique(codes[mask], return_inverse=True)
    out[present] = _group_median(sub, values[mask], len(present))
    return out


def _shared_cells(vendors: Sequence[str], cells: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row: whether more than one vendor has a ``mask`` row in its cell (codes)."""
    v_names, v = _codes(list(vendors))
    m = np.asarray(mask, dtype=bool)
    n_cells = int(cells.max()) + 1 if len(cells) else 0
    seen = np.zeros((n_cells, len(v_names)), dtype=bool)
    seen[cells[m], v[m]] = True
    shared: np.ndarray = seen.sum(axis=1)[cells] > 1
    return shared


def _precision_contrasts(
    grp: np.ndarray, pc: np.ndarray, ref_p: int, level: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rows that measure a precision class's scale, and per class whether one is measured.

    A class's scale (:meth:`Calibration.precision`) is the contrast with the native format
    inside one vendor x generation x round group: only rows of groups that also hold
    level-setting native rows measure it (a group whose rows are all above native, e.g.
    B200's fp8-only preview round, has its level and its class scale in one number). A
    class without such rows sets no level (``class_ok`` False); native always does.
    """
    if ref_p < 0:
        return np.zeros(len(grp), dtype=bool), np.ones(int(pc.max()) + 1, dtype=bool)
    native = pc == ref_p
    has_native = np.bincount(grp[native & level], minlength=int(grp.max()) + 1) > 0
    within: np.ndarray = has_native[grp] & level
    class_ok: np.ndarray = np.bincount(pc[within], minlength=int(pc.max()) + 1) > 0
    class_ok[ref_p] = True
    return within, class_ok


def _anchoring(
    vendors: Sequence[str], benches: Sequence[str], reference: str
) -> tuple[set[str], np.ndarray]:
    """Vendors whose level the fit can pin to the reference workload; the level-setting rows.

    A vendor x generation x round level is on the ``reference`` (llama2-70b) basis only
    through rows whose workload scale is known relative to it: the reference itself, or a
    workload that some vendor with reference rows also ran (the scale is then that
    vendor's measured ratio). A vendor without reference rows (a vendor x workload
    holdout of llama2-70b) has its levels set only by such bridge workloads at their
    pooled scale, its own deviation being unidentifiable; its rows of a workload no
    anchored vendor ran set no level (their scale and the level would trade off freely).
    Every row sets levels when no vendor has reference rows (nothing to anchor to).

    Returns (anchored vendors, per-row mask of level-setting rows).
    """
    v = np.asarray(vendors, dtype=object)
    b = np.asarray(benches, dtype=object)
    anchored = set(v[b == reference].tolist())
    if not anchored:
        return set(v.tolist()), np.ones(len(v), dtype=bool)
    from_anchored = np.isin(v, list(anchored))
    level: np.ndarray = from_anchored | np.isin(b, np.unique(b[from_anchored]))
    return anchored, level
