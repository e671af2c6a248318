"""One base error: every user-fixable failure is a ReportError, caught by the CLI in one place."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from analysis import cli, errors, execute, params, render, report, schema
from analysis.ingest import bench, inferencex, mlperf

OLD_NAMES = [
    (params, "ParamsError"),
    (schema, "DataValidationError"),
    (mlperf, "IngestError"),
    (inferencex, "IngestError"),
    (bench, "BenchIngestError"),
    (execute, "ChapterError"),
    (render, "RenderError"),
    (report, "ReportError"),
]


@pytest.mark.parametrize(("module", "name"), OLD_NAMES, ids=lambda x: getattr(x, "__name__", x))
def test_old_import_paths_are_the_errors_classes(module: object, name: str) -> None:
    cls = getattr(module, name)
    assert cls is getattr(errors, name)
    assert issubclass(cls, errors.ReportError)


def test_subclasses_keep_their_builtin_bases() -> None:
    for cls in (errors.ParamsError, errors.DataValidationError, errors.IngestError):
        assert issubclass(cls, ValueError)
    for cls in (errors.RunError, errors.ChapterError, errors.RenderError):
        assert issubclass(cls, RuntimeError)


def test_cli_turns_any_report_error_into_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(old: object, new: object) -> None:
        raise errors.RenderError("renderer fell over at stage X")

    monkeypatch.setattr(report, "diff_versions", boom)
    res = CliRunner().invoke(cli.app, ["diff", "a", "b"])
    assert res.exit_code == 1
    assert "error: renderer fell over at stage X" in res.output
    assert "Traceback" not in res.output


def test_cli_usage_error_exits_1(tmp_path: object) -> None:
    res = CliRunner().invoke(cli.app, ["run", "--jobs", "0", "--out", str(tmp_path)])
    assert res.exit_code == 1
    assert "--jobs: must be at least 1, got 0" in res.output


def test_cli_does_not_swallow_programming_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(old: object, new: object) -> None:
        raise TypeError("a bug, not a user error")

    monkeypatch.setattr(report, "diff_versions", bug)
    res = CliRunner().invoke(cli.app, ["diff", "a", "b"])
    assert isinstance(res.exception, TypeError)
