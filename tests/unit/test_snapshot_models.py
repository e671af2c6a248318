"""The model figures equal the committed snapshot (refactors must not move a number).

Regenerate with ``make snapshot`` only when a figure is meant to change, and read the diff.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

_PATH = Path(__file__).resolve().parents[1] / "snapshot_models.py"
_SPEC = importlib.util.spec_from_file_location("snapshot_models", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
snapshot_models = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(snapshot_models)


def _diff(old: object, new: object, where: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new)):
            out += _diff(old.get(k, "<missing>"), new.get(k, "<missing>"), f"{where}/{k}")
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            d
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for d in _diff(a, b, f"{where}[{i}]")
        ]
    return [] if old == new else [f"{where}: {old!r} -> {new!r}"]


def test_model_figures_match_snapshot() -> None:
    stored = json.loads(snapshot_models.SNAPSHOT.read_text(encoding="utf-8"))
    fresh = json.loads(snapshot_models.render(snapshot_models.compute()))
    diffs = _diff(stored, fresh)
    assert not diffs, "model figures moved (make snapshot if intended):\n" + "\n".join(diffs[:30])


def test_snapshot_diff_detects_a_change() -> None:
    old = {"a": [{"x": 1.0}], "b": 2}
    assert _diff(old, {"a": [{"x": 1.00001}], "b": 2}) == ["/a[0]/x: 1.0 -> 1.00001"]
    assert _diff(old, old) == []


def test_rounding_keeps_six_significant_digits() -> None:
    assert snapshot_models._round(1234.56789) == 1234.57
    assert snapshot_models._round(float("nan")) == "nan"
