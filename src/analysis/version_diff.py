"""Version diffs: what changed between two published versions' ``results.json``.

Analytical decisions taken here: the comparison is the summary chapter's "what changed"
(:func:`analysis.results.compare_chapters`: values as displayed, the summary's own
counters and the version id left out, tiers matched by name); a flip is
:func:`analysis.results.is_flip`, the one rule; two different scenarios are refused (every
input differs, so a key-by-key diff would mislead). ``analysis.report`` re-exports every
name here (``report.diff_versions`` ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from analysis import results as key_results
from analysis.errors import RunError
from analysis.results import Scalar


@dataclass(frozen=True)
class Change:
    """One key figure that differs between two versions."""

    chapter: str
    key: str
    old: Scalar
    new: Scalar

    @property
    def flipped(self) -> bool:
        """A recommendation or winner that changed (a call, not a number behind it).

        ``rec_tier0_p_amd_cheaper`` moving from 0.62 to 0.66 is a change, not a flip;
        ``rec_tier0`` going from "either" to "AMD" is.
        """
        return key_results.is_flip(self.key, self.old, self.new)

    @property
    def relative(self) -> float | None:
        """Relative change of a number (None for non-numbers or a zero base)."""
        if _is_number(self.old) and _is_number(self.new) and self.old != 0:
            return (self.new - self.old) / abs(self.old)
        return None


@dataclass
class VersionDiff:
    """What changed between two versions' results.json."""

    old_version: str
    new_version: str
    changes: list[Change] = field(default_factory=list)

    @property
    def flipped(self) -> list[Change]:
        """Recommendations and winners that changed."""
        return [c for c in self.changes if c.flipped]


def is_decision_key(key: str) -> bool:
    """Keys naming a recommendation or a winner (:func:`analysis.results.is_decision_key`)."""
    return key_results.is_decision_key(key)


def _is_number(v: object) -> TypeGuard[float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _load_results(path: Path) -> dict[str, Any]:
    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(
            f"{file}: not found (give a report version folder or its results.json)"
        ) from None
    except ValueError as err:
        raise RunError(f"{file}: not valid JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict):
        raise RunError(f"{file}: not a report results.json (no 'chapters' mapping)")
    return data


def diff_versions(old: Path, new: Path) -> VersionDiff:
    """Compare two versions (folders or results.json files) key by key.

    The same comparison as the summary's "what changed"
    (:func:`analysis.results.compare_chapters`): values as displayed, the summary's own
    counters and the version id left out, tiers matched by name.

    Raises:
        RunError: a path is not a results.json, or the two are different scenarios
            (every input differs, so a key-by-key diff would mislead).
    """
    a, b = _load_results(old), _load_results(new)
    sa, sb = a.get("scenario"), b.get("scenario")
    if sa and sb and sa != sb:
        raise RunError(
            f"refusing to compare different scenarios: {old} is {sa!r}, {new} is {sb!r}; "
            "diff compares two versions of one scenario"
        )
    out = VersionDiff(str(a.get("version", old)), str(b.get("version", new)))
    for ch, key, va, vb in key_results.compare_chapters(
        a["chapters"], b["chapters"], old_tiers=a.get("tiers"), new_tiers=b.get("tiers")
    ):
        out.changes.append(Change(ch, key, va, vb))
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "(absent)"
    return f"{v:g}" if isinstance(v, float) else str(v)


def format_diff(diff: VersionDiff) -> str:
    """Human-readable diff: flipped decisions first, then every changed figure."""
    lines = [f"{diff.old_version} -> {diff.new_version}"]
    if not diff.changes:
        lines.append("No key figure changed.")
        return "\n".join(lines)
    if diff.flipped:
        lines.append("FLIPPED recommendations / winners:")
        lines += [f"  ! {c.chapter}: {c.key}: {_fmt(c.old)} -> {_fmt(c.new)}" for c in diff.flipped]
    lines.append(f"Changed key figures ({len(diff.changes)}):")
    for c in diff.changes:
        rel = f" ({c.relative:+.1%})" if c.relative is not None else ""
        lines.append(f"  {c.chapter}: {c.key}: {_fmt(c.old)} -> {_fmt(c.new)}{rel}")
    return "\n".join(lines)
