"""What changed since the previous published version of the same scenario."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis import results
from analysis.decision.recommend import Results


def _number(v: object) -> float | None:
    """``v`` when it is a number (not a bool), else ``None``."""
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def compare_with_previous(
    current: Results,
    previous_results: Mapping[str, Any],
    tiers: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Key figures that changed since the previous version of the same scenario.

    The same comparison as ``python -m analysis diff`` (:func:`analysis.results.compare_chapters`):
    values as displayed, the summary's own counters and the version id left out, tiers
    matched by name when both versions name them.

    Args:
        current: ``{chapter id: {key: value}}`` of this version (the other chapters' results
            plus this summary's own key results under ``00-summary``).
        previous_results: the previous version's ``results.json``
            (``{"scenario", "version", "tiers", "chapters": {chapter: {key: value}}}``);
            ``{}`` = none.
        tiers: this version's tier names, in order (to match the previous version's).

    Returns:
        Columns chapter, key, previous, current, change_pct (numbers only), flipped (a
        recommendation or winner changed). Empty when there is no previous version.
    """
    cols = ["chapter", "key", "previous", "current", "change_pct", "flipped"]
    prev = (previous_results or {}).get("chapters") or {}
    if not prev:
        return pd.DataFrame(columns=cols)
    rows = []
    for ch, key, va, vb in results.compare_chapters(
        prev, current, old_tiers=previous_results.get("tiers"), new_tiers=tiers
    ):
        change = math.nan
        a, b = _number(va), _number(vb)
        if a is not None and b is not None and a:
            change = (b / a - 1) * 100
        # A flip needs a decision in both versions; a key that appears or goes is a change.
        flipped = results.is_flip(key, va, vb)
        rows.append(
            {
                "chapter": ch,
                "key": key,
                "previous": va,
                "current": vb,
                "change_pct": change,
                "flipped": bool(flipped),
            }
        )
    return pd.DataFrame(rows, columns=cols)
