"""Shared fixtures: the rendered CI report (once per session and worker) and chapter folders.

``rendered_report`` always uses the fallback renderer, ``quarto_report`` always Quarto (and
skips without it), so that CI with Quarto on PATH tests both.

Tests that use the rendered report carry ``@pytest.mark.xdist_group("report")`` so that
``pytest -n 2 --dist loadgroup`` runs them on one worker and the report renders once.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from analysis import derived_store, execute, paths
from analysis.devtools.fixtures import make_project_copy

__all__ = ["make_project_copy"]


@pytest.fixture(autouse=True)
def _no_inherited_derived_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """A derived store exported in the shell must not answer a test that patches a model.

    Report runs still use theirs (``run_report`` sets it); a test that wants one sets it.
    """
    monkeypatch.delenv(derived_store.ENV, raising=False)


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


def _render_ci(root: Path, *, quarto: bool):
    """The CI scenario rendered (HTML + PDF) into ``root`` with Quarto or the fallback."""
    from analysis import report

    saved = os.environ.get("GPU_REPORT_NO_QUARTO")
    if quarto:
        os.environ.pop("GPU_REPORT_NO_QUARTO", None)
    else:
        os.environ["GPU_REPORT_NO_QUARTO"] = "1"
    try:
        return report.run_report(
            paths.CI_PARAMS,
            out_dir=root / "reports",
            formats=("html", "pdf"),
            jobs=2,
            notebooks_dir=chapters_for_e2e(),
            build_root=root / "_build",
            progress=False,
        )
    finally:
        if saved is None:
            os.environ.pop("GPU_REPORT_NO_QUARTO", None)
        else:
            os.environ["GPU_REPORT_NO_QUARTO"] = saved


@pytest.fixture(scope="session")
def rendered_report(tmp_path_factory: pytest.TempPathFactory):
    """The CI scenario rendered once with the fallback renderer (even with Quarto on PATH)."""
    return _render_ci(tmp_path_factory.mktemp("rendered"), quarto=False)


#: Why the Quarto tests skip on a machine without it (CI builds it: scripts/quarto.sh).
NO_QUARTO_REASON = (
    "Quarto not on PATH (or GPU_REPORT_NO_QUARTO set): build it with "
    "`bash ../shared/tools/quarto/build.sh PREFIX` and put PREFIX/bin on PATH"
)


def quarto_available() -> bool:
    """True when the report would render with Quarto."""
    return bool(shutil.which("quarto")) and not os.environ.get("GPU_REPORT_NO_QUARTO")


@pytest.fixture(scope="session")
def quarto_report(tmp_path_factory: pytest.TempPathFactory):
    """The CI scenario rendered once with Quarto (skipped when Quarto is absent)."""
    if not quarto_available():
        pytest.skip(NO_QUARTO_REASON)
    return _render_ci(tmp_path_factory.mktemp("rendered-quarto"), quarto=True)


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """:func:`make_project_copy` in ``tmp_path / "project"`` (run with ``GPU_REPORT_ROOT``)."""
    return make_project_copy(tmp_path / "project")
