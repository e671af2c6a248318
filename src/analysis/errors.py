"""The report's errors: one base class, one subclass per kind of failure the user can fix.

Every error a user can cause (a bad parameter file, a broken data table, an unusable
upstream file, a failing chapter, a render or publish problem, a wrong command-line value)
is a :class:`ReportError`, and its message is written for that user: what was wrong,
where (file, key, row, cell) and what is allowed. The command line catches
:class:`ReportError` in one place (:func:`analysis.cli.user_errors`) and prints the
message with exit status 1, never a traceback.

Each subclass also derives from the built-in it replaced (``ValueError`` for bad input,
``RuntimeError`` for a failed run), so code that caught the built-in keeps working. The
classes stay importable from the modules that defined them before (``params.ParamsError``,
``schema.DataValidationError``, ``ingest.mlperf.IngestError``, ``execute.ChapterError``,
``render.RenderError``, ``report.ReportError`` ...).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BenchIngestError",
    "ChapterError",
    "DataValidationError",
    "GraftError",
    "IngestError",
    "KeyResultsError",
    "ParamsError",
    "RenderError",
    "ReportError",
    "RunError",
    "UsageError",
]


class ReportError(Exception):
    """Base of every error the user can fix; the message is meant for them."""


# --- bad input (ValueError) ---------------------------------------------------------------


class ParamsError(ReportError, ValueError):
    """A parameter file is unreadable or invalid; the message is meant for the user."""


class DataValidationError(ReportError, ValueError):
    """A data table failed validation; the message names file, row and column."""


class IngestError(ReportError, ValueError):
    """An upstream file is missing pieces or contradicts itself; the message names file and row."""


class BenchIngestError(IngestError):
    """A benchmark or power file is unusable; the message names file, record and field."""


class UsageError(ReportError, ValueError):
    """A command-line option has a value the command does not accept."""


class GraftError(ReportError, ValueError):
    """Executed outputs cannot be grafted onto a notebook whose code cells changed."""


# --- a failed run (RuntimeError) ----------------------------------------------------------


class RunError(ReportError, RuntimeError):
    """A report run failed; the message names the notebook, the cell or the folder."""


class ChapterError(RunError):
    """A chapter could not be executed; the message names the notebook, cell and error."""

    def __init__(self, message: str, chapter: str, notebook: Path | None = None) -> None:
        super().__init__(message)
        self.chapter = chapter
        self.notebook = notebook


class RenderError(RunError):
    """Quarto or the fallback renderer failed or timed out."""


class KeyResultsError(RunError):
    """A chapter's key results break its schema: a required key is missing or NaN."""
