"""`make clean` keeps reports/; stale Chromium profiles of dead runs are swept."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis import paths, render

DEAD = 2**22 + 12345  # above pid_max's default: no such process


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_clean_removes_build_and_keeps_reports(tmp_path: Path) -> None:
    shutil.copy(paths.ROOT / "Makefile", tmp_path / "Makefile")
    for d in ("_build/ci/run/notebooks", "reports/ci/v0001-x", ".pytest_cache"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "reports" / "ci" / "v0001-x" / "index.html").write_text("<p>kept</p>")
    (tmp_path / "reports" / "ci" / "latest").symlink_to("v0001-x")
    res = subprocess.run(
        ["make", "clean"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert res.returncode == 0, res.stderr
    assert not (tmp_path / "_build").exists()
    assert not (tmp_path / ".pytest_cache").exists()
    assert (tmp_path / "reports" / "ci" / "latest" / "index.html").read_text() == "<p>kept</p>"


def test_stale_chromium_profiles_are_swept(tmp_path: Path) -> None:
    stale = tmp_path / f"{render.PROFILE_PREFIX}{DEAD}-abc"
    live = tmp_path / f"{render.PROFILE_PREFIX}{os.getpid()}-def"
    other = tmp_path / "unrelated-folder"
    for d in (stale, live, other):
        (d / "Default").mkdir(parents=True)
    assert render.sweep_stale_profiles(tmp_path) == [stale]
    assert not stale.exists() and live.exists() and other.exists()
