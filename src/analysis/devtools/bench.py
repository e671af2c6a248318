"""``make bench``: the speed targets the issues name, measured and printed.

Each analysis module exposes ``bench_cases()`` returning ``(name, callable, target_s)``;
this module times every case (best of a few repeats after one warm-up, so import and
first-call costs do not count) and, optionally, one full report run with its phase
timings (execute, HTML, PDF, total) into a temporary folder; with Quarto on PATH, Quarto's
render time (HTML + PDF) is a row of its own with its target. Targets are shown next to
the measurements rather than asserted in tests, where a busy machine would make them flaky.
"""

from __future__ import annotations

import importlib
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from analysis import derived_store

__all__ = [
    "BENCH_MODULES",
    "PDF_PAGES_TARGET",
    "QUARTO_RENDER_TARGET_S",
    "REPORT_TARGET_S",
    "collect_cases",
    "pdf_pages",
    "run_bench",
    "time_case",
]

#: Modules that provide ``bench_cases()``.
BENCH_MODULES = ("analysis.inference", "analysis.training", "analysis.tco")

#: Target for the complete report on the 2-core reference machine (issue 2).
REPORT_TARGET_S = 60.0
#: Target for Quarto's share of the default report (HTML + PDF) on 2 cores (issue 17:
#: 67-76 s before the report was rendered as one document with Python-converted tables).
QUARTO_RENDER_TARGET_S = 30.0


def time_case(fn: Callable[[], object], repeats: int = 3) -> float:
    """Best wall time of ``repeats`` calls after one warm-up call, in seconds."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def collect_cases() -> list[tuple[str, Callable[[], object], float]]:
    """Every module's benchmark cases, in module order."""
    cases: list[tuple[str, Callable[[], object], float]] = []
    for name in BENCH_MODULES:
        module = importlib.import_module(name)
        cases.extend(module.bench_cases())
    return cases


def run_bench(
    params: Path, *, include_report: bool, console: Console
) -> list[tuple[str, float, float]]:
    """Time every case (and a report run); print a table; return (name, seconds, target)."""
    rows: list[tuple[str, float, float]] = []
    for name, fn, target in collect_cases():
        rows.append((name, time_case(fn), target))
    if include_report:
        from analysis import report

        with (
            tempfile.TemporaryDirectory(prefix="gpu-report-bench-") as tmp,
            derived_store.enabled(Path(tmp) / "store", override=True),  # a cold run
        ):
            result = report.run_report(params, out_dir=Path(tmp), formats=("html", "pdf"), jobs=2)
            pages = pdf_pages(result.version_dir / "report.pdf")
        timings = dict(result.timings)
        total = timings.pop("total", sum(timings.values()))
        for phase, seconds in timings.items():
            rows.append((f"report phase: {phase}", seconds, float("nan")))
        if result.renderer["name"] == "quarto":
            render_s = timings.get("html", 0.0) + timings.get("pdf", 0.0)
            rows.append(("report render (Quarto: HTML + PDF)", render_s, QUARTO_RENDER_TARGET_S))
        rows.append(("report total (make report)", total, REPORT_TARGET_S))

    table = Table(title="Benchmarks (seconds; best of 3 after warm-up for model cases)")
    table.add_column("case")
    table.add_column("seconds", justify="right")
    table.add_column("target", justify="right")
    table.add_column("ok", justify="center")
    for name, seconds, target in rows:
        has_target = not math.isnan(target)  # report phases other than the total have none
        ok = "yes" if not has_target or seconds <= target else "NO"
        table.add_row(name, f"{seconds:.3f}", f"{target:.1f}" if has_target else "", ok)
    console.print(table)
    if include_report:
        # The length a reader gets: the default report aims at about 25 pages (<= 26).
        console.print(f"PDF pages: {pages} (target <= {PDF_PAGES_TARGET})")
    return rows


#: The default report's page budget (a memo-first decision report, about 25 pages).
PDF_PAGES_TARGET = 26


def pdf_pages(pdf: Path) -> int:
    """Number of pages of a rendered PDF (0 when there is none)."""
    if not pdf.is_file():
        return 0
    from pypdf import PdfReader

    return len(PdfReader(pdf).pages)
