"""Key results: the small table each chapter ends with.

A chapter's last cell calls :func:`show_key_results`. It displays a rounded table (the
reader's summary and the nbval regression anchor) and carries the same figures as a JSON
output with the MIME type :data:`MIME`, from which the orchestrator builds ``results.json``
without re-running anything. Values are rounded to :data:`SIGNIFICANT` significant digits
so that floating-point noise in the last bits does not count as a change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from analysis import keys
from analysis.textsafe import html_text

MIME = "application/vnd.gpu-report.results+json"
SIGNIFICANT = 4

Scalar = float | int | str | bool | None


def round_sig(x: float, digits: int = SIGNIFICANT) -> float:
    """Round to significant digits, keeping integers' type out of it.

    >>> round_sig(1234.5678)
    1235.0
    >>> round_sig(0.000123456)
    0.0001235
    """
    if x == 0 or not math.isfinite(x):
        return float(x)
    return round(float(x), digits - 1 - math.floor(math.log10(abs(x))))


def normalize(value: object) -> Scalar:
    """A JSON-safe, rounded scalar (numpy scalars included)."""
    if value is None or isinstance(value, str | bool):
        return value
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return round_sig(value)
    raise TypeError(
        f"key results must be numbers, strings, booleans or None; got {type(value).__name__}"
    )


def key_results_bundle(chapter: str, results: Mapping[str, object]) -> dict[str, object]:
    """The MIME bundle :func:`show_key_results` displays (separate for testing)."""
    clean = {str(k): normalize(v) for k, v in results.items()}
    width = max((len(k) for k in clean), default=0)
    text = "\n".join(f"{k:<{width}}  {v}" for k, v in clean.items())
    # Keys and values can carry user text (tier names, titles): escaped, never markup.
    rows = "".join(
        f"<tr><th>{html_text(k)}</th><td>{html_text(str(v))}</td></tr>" for k, v in clean.items()
    )
    html = (
        f'<table class="key-results"><caption>Key results: {html_text(chapter)}</caption>'
        f"<thead><tr><th>figure</th><th>value</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return {"text/plain": text, "text/html": html, MIME: {"chapter": chapter, "results": clean}}


def show_key_results(chapter: str, results: Mapping[str, object]) -> None:
    """Display the chapter's key results (last cell of every chapter)."""
    from IPython.display import display

    display(key_results_bundle(chapter, results), raw=True)


def extract_key_results(notebook: Mapping[str, object]) -> dict[str, dict[str, Scalar]]:
    """Collect every key-results output from an executed notebook (nbformat dict)."""
    found: dict[str, dict[str, Scalar]] = {}
    cells: Any = notebook.get("cells", [])  # nbformat JSON: read defensively below
    for cell in cells:
        for out in cell.get("outputs", []) or []:
            payload = (out.get("data") or {}).get(MIME)
            if payload:
                found.setdefault(payload["chapter"], {}).update(payload["results"])
    return found


# --- comparing two versions' key results ------------------------------------------------

#: Keys that describe the run or the comparison itself, not a figure of the analysis: the
#: summary's own counters of the comparison (comparing them would make every re-run count
#: its own previous count as a change) and the version id (different on every run).
NOT_COMPARED = frozenset({"changes_since_previous", "recommendations_flipped", "version"})
_TIER_KEY = re.compile(r"^(rec_)?tier(\d+)(_.*)?$")


def is_decision_key(key: str) -> bool:
    """Keys naming a call: the specs of :data:`analysis.keys.KEYS` with ``decision=True``.

    ``rec_<workload>``, ``*_winner``, ``*_winner_vendor``, ``*_cheapest``; the numbers
    behind a call (``rec_tier0_p_amd_cheaper``, ``rec_tier0_cost_margin_pct``) are not
    calls. The schema is the one list, so the flip rule and the schema cannot disagree.

    >>> is_decision_key("rec_tier0"), is_decision_key("rec_tier0_p_amd_cheaper")
    (True, False)
    """
    return keys.is_decision_key(key)


def is_flip(key: str, old: object, new: object) -> bool:
    """Whether ``old -> new`` of ``key`` is a flipped recommendation: the one flip rule.

    A flip is a call (:func:`is_decision_key`) present in both versions that changed. A
    call is text ("AMD", "NVIDIA", "either", an accelerator id); a key that appears, goes,
    or holds no call (None, NaN) in either version is a change, not a flip. Used by the
    version diff (:class:`analysis.version_diff.Change`) and the summary chapter's comparison
    (:func:`analysis.decision.compare_with_previous`), so both call out the same flips.

    >>> is_flip("tier0_winner_vendor", "AMD", "NVIDIA"), is_flip("tier0_winner_vendor", None, "AMD")
    (True, False)
    >>> is_flip("rec_tier0_p_amd_cheaper", 0.6, 0.4), is_flip("rec_tier0", "AMD", "AMD")
    (False, False)
    """
    return is_decision_key(key) and isinstance(old, str) and isinstance(new, str) and old != new


def align_tiers(
    chapters: Mapping[str, Mapping[str, object]],
    tiers: Sequence[str] | None,
    target: Sequence[str] | None,
) -> dict[str, dict[str, object]]:
    """Rename ``tier<i>`` keys so that tier i of ``tiers`` gets its index in ``target``.

    Tiers are matched by name (tier 0 of one version may be tier 1 of the other); a tier
    the target does not have becomes ``tier[<name>]...`` so that it shows as gone instead
    of being compared with another tier. Without both name lists, keys are unchanged.
    """
    if not tiers or not target or list(tiers) == list(target):
        return {ch: dict(v) for ch, v in chapters.items()}
    index = {name: j for j, name in enumerate(target)}

    def rename(key: str) -> str:
        m = _TIER_KEY.match(key)
        if not m or int(m.group(2)) >= len(tiers):
            return key
        name = tiers[int(m.group(2))]
        j = index.get(name)
        tier = f"tier{j}" if j is not None else f"tier[{name}]"
        return f"{m.group(1) or ''}{tier}{m.group(3) or ''}"

    return {ch: {rename(k): v for k, v in vals.items()} for ch, vals in chapters.items()}


def compare_chapters(
    old: Mapping[str, Mapping[str, object]],
    new: Mapping[str, Mapping[str, object]],
    *,
    old_tiers: Sequence[str] | None = None,
    new_tiers: Sequence[str] | None = None,
) -> list[tuple[str, str, Scalar, Scalar]]:
    """``(chapter, key, old, new)`` for every key figure that differs, sorted.

    The one comparison behind both the summary's "what changed" and ``analysis diff``:
    values are compared as displayed (:func:`normalize`, :data:`SIGNIFICANT` significant
    digits) so an unrounded value never differs from its own rounded copy; the keys in
    :data:`NOT_COMPARED` are skipped; tiers are matched by name (:func:`align_tiers`).
    """
    a = align_tiers(old, old_tiers, new_tiers)
    out = []
    for ch in sorted(set(a) | set(new)):
        ra, rb = a.get(ch, {}), new.get(ch, {})
        for key in sorted(set(ra) | set(rb)):
            if key in NOT_COMPARED:
                continue
            va = _displayed(ra.get(key))
            vb = _displayed(rb.get(key))
            if va != vb or (key in ra) != (key in rb):
                out.append((ch, key, va, vb))
    return out


def _displayed(value: Any) -> Scalar:
    try:
        return normalize(value)
    except TypeError:
        return str(value)
