"""Test fixtures built from the checkout: a project root whose data/ a test may break.

Tests of hostile or broken data run the real commands in a subprocess with
``GPU_REPORT_ROOT`` set to such a copy, so nothing in the checkout is written.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from analysis import paths

__all__ = ["make_project_copy"]

#: What a project copy links to the checkout (everything it needs except data/).
_LINKED = ("notebooks", "params", "pyproject.toml", "requirements", "_quarto.yml")


def make_project_copy(dst: Path) -> Path:
    """A project root for ``GPU_REPORT_ROOT=dst`` subprocesses: a copy of data/ to break.

    ``analysis.paths`` resolves data/, _build/ and reports/ from that root, so a command run
    with it reads the copied tables and writes nothing into the checkout; notebooks,
    parameter files and the lock are symlinks to the checkout's.
    """
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copytree(paths.DATA, dst / "data")
    for name in _LINKED:
        (dst / name).symlink_to(paths.ROOT / name)
    return dst
