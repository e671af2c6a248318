"""Shared fixtures: the rendered CI report (once per session and worker) and chapter folders.

Tests that use the rendered report carry ``@pytest.mark.xdist_group("report")`` so that
``pytest -n 2 --dist loadgroup`` runs them on one worker and the report renders once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis import execute, paths

FIXTURE_CHAPTERS = paths.TESTS / "e2e" / "fixtures" / "chapters"


def chapters_for_e2e() -> Path:
    """The real chapters when notebooks/ has any, else the fixture chapters."""
    if execute.discover_chapters(paths.NOTEBOOKS):
        return paths.NOTEBOOKS
    return FIXTURE_CHAPTERS


@pytest.fixture(scope="session")
def fixture_chapters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the fixture chapters (tests may add or edit notebooks in it)."""
    dst = tmp_path_factory.mktemp("chapters")
    for p in FIXTURE_CHAPTERS.glob("*.ipynb"):
        shutil.copy2(p, dst / p.name)
    return dst


@pytest.fixture(scope="session")
def rendered_report(tmp_path_factory: pytest.TempPathFactory):
    """The CI scenario rendered once (HTML + PDF) into a temporary reports folder."""
    from analysis import report

    root = tmp_path_factory.mktemp("rendered")
    return report.run_report(
        paths.CI_PARAMS,
        out_dir=root / "reports",
        formats=("html", "pdf"),
        jobs=2,
        notebooks_dir=chapters_for_e2e(),
        build_root=root / "_build",
        progress=False,
    )
