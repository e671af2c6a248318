"""Ctrl-C during a report run: exit 130, "interrupted", nothing half-made left, nothing lost.

A real ``python -m analysis run`` of the CI scenario is started in its own session (as a
terminal would: Ctrl-C goes to the whole process group) with ``GPU_REPORT_ROOT`` on a
project copy and ``TMPDIR`` on a folder of its own, and SIGINT arrives either while the
chapters execute or while Chromium prints the PDF. Before the fix, the run exited 1
blaming whichever chapter was running ("could not be executed ... AssertionError") and
printed "Exception ignored in atexit callback" tracebacks.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from analysis import paths, render

pytestmark = pytest.mark.slow

OLD = "v0001-20260101T000000Z-00000000"


def _children(pid: int) -> list[str]:
    """Command lines of ``pid``'s child processes (Linux /proc)."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    out = []
    for k in kids:
        try:
            out.append(Path(f"/proc/{k}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return out


def _processes_with(env_entry: str) -> list[str]:
    """Command lines of the processes whose environment holds ``env_entry`` (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if env_entry.encode() in (d / "environ").read_bytes().split(b"\0"):
                out.append((d / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return out


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"  # the scenario lock file (empty) may appear
    }


@pytest.mark.parametrize(
    ("phase", "formats", "marker"),
    [
        ("execute", "html", "ipykernel"),
        pytest.param("pdf", "html,pdf", "--print-to-pdf", marks=pytest.mark.browser),
    ],
)
def test_ctrl_c_exits_130_and_leaves_nothing_behind(
    project_copy: Path, tmp_path: Path, phase: str, formats: str, marker: str
) -> None:
    reports = tmp_path / "reports"
    # Chromium's singleton socket lives in TMPDIR: a pytest tmp_path is too long for it.
    tmp = Path(tempfile.mkdtemp(prefix="int-", dir="/tmp"))
    old = reports / "ci" / OLD
    old.mkdir(parents=True)
    previous = {"scenario": "ci", "version": OLD, "chapters": {}}
    (old / "results.json").write_text(json.dumps(previous))
    (reports / "ci" / "latest").symlink_to(OLD, target_is_directory=True)
    before = _digests(reports)

    env = {
        **os.environ,
        "GPU_REPORT_ROOT": str(project_copy),
        "GPU_REPORT_NO_QUARTO": "1",
        "TMPDIR": str(tmp),
    }
    cmd = [sys.executable, "-m", "analysis", "run", "--params", str(paths.CI_PARAMS)]
    proc = subprocess.Popen(
        [*cmd, "--out", str(reports), "--formats", formats],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not any(marker in c for c in _children(proc.pid)):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"no {marker} child within 300 s"
        time.sleep(0.2)
    time.sleep(1.0)  # a cell (or the print) is under way
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    left = list(tmp.glob(f"{render.PROFILE_PREFIX}*"))
    shutil.rmtree(tmp, ignore_errors=True)

    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "error:" not in err  # no chapter blamed
    assert "Report published" not in out
    scenario = reports / "ci"
    assert sorted(p.name for p in scenario.iterdir() if p.name != ".lock") == ["latest", OLD]
    assert (scenario / "latest").readlink() == Path(OLD)
    assert _digests(reports) == before
    assert not left, "Chromium profile left behind"
    # kernels (and Chromium) inherit GPU_REPORT_ROOT: none may outlive the run
    deadline = time.monotonic() + 10
    while (alive := _processes_with(f"GPU_REPORT_ROOT={project_copy}")) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.5)
    assert not alive, alive
