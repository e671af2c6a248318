"""Key results: the small table each chapter ends with.

A chapter's last cell calls :func:`show_key_results`. It displays a rounded table (the
reader's summary and the nbval regression anchor) and carries the same figures as a JSON
output with the MIME type :data:`MIME`, from which the orchestrator builds ``results.json``
without re-running anything. Values are rounded to :data:`SIGNIFICANT` significant digits
so that floating-point noise in the last bits does not count as a change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

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


def normalize(value: Any) -> Scalar:
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


def key_results_bundle(chapter: str, results: Mapping[str, Any]) -> dict[str, Any]:
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


def show_key_results(chapter: str, results: Mapping[str, Any]) -> None:
    """Display the chapter's key results (last cell of every chapter)."""
    from IPython.display import display

    display(key_results_bundle(chapter, results), raw=True)


def extract_key_results(notebook: Mapping[str, Any]) -> dict[str, dict[str, Scalar]]:
    """Collect every key-results output from an executed notebook (nbformat dict)."""
    found: dict[str, dict[str, Scalar]] = {}
    for cell in notebook.get("cells", []):
        for out in cell.get("outputs", []) or []:
            payload = (out.get("data") or {}).get(MIME)
            if payload:
                found.setdefault(payload["chapter"], {}).update(payload["results"])
    return found
