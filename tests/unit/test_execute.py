"""Kernel start-up under load: a kernel that dies before its first cell is started again."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from analysis import execute, paths

FIXTURES = paths.TESTS / "e2e" / "fixtures" / "chapters"


def _chapter() -> execute.Chapter:
    return next(c for c in execute.discover_chapters(FIXTURES) if c.id == "20-fixture-tiers")


def _fake_runs(monkeypatch: pytest.MonkeyPatch, outcomes: list[Exception | None]) -> list[int]:
    """Replace the kernel run with one that raises each of ``outcomes`` in turn."""
    calls: list[int] = []

    async def fake(chapter, nb, state, total, **_):
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome

    monkeypatch.setattr(execute, "_run_cells", fake)
    return calls


def _run(tmp_path: Path) -> execute.ExecutedChapter:
    return asyncio.run(
        execute.execute_chapter(_chapter(), tmp_path / "out.ipynb", {}, cwd=tmp_path)
    )


def test_a_kernel_that_dies_before_kernel_info_is_started_once_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    died = execute._KernelStartFailed(
        "RuntimeError: Kernel died before replying to kernel_info", ""
    )
    calls = _fake_runs(monkeypatch, [died, None])
    with caplog.at_level(logging.WARNING, logger="analysis.execute"):
        done = _run(tmp_path)
    assert len(calls) == 2 and done.retries == 1
    assert "20-fixture-tiers" in caplog.text and "retrying once" in caplog.text
    assert (tmp_path / "out.ipynb").is_file()


def test_a_second_start_failure_is_a_chapter_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    died = execute._KernelStartFailed("RuntimeError: Kernel died", "Address already in use")
    calls = _fake_runs(monkeypatch, [died, died])
    with pytest.raises(execute.ChapterError, match=r"20-fixture-tiers.*did not start.*2 times"):
        _run(tmp_path)
    assert len(calls) == 1 + execute.KERNEL_START_RETRIES


def test_a_kernel_that_dies_after_cells_ran_is_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _fake_runs(monkeypatch, [execute._KernelFailed("DeadKernelError: died", "")])
    with pytest.raises(execute.ChapterError, match="could not be executed"):
        _run(tmp_path)
    assert len(calls) == 1


def test_kernel_start_timeout_is_longer_than_nbclients_default() -> None:
    from nbclient import NotebookClient

    assert NotebookClient.startup_timeout.default_value < execute.KERNEL_START_TIMEOUT
