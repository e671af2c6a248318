"""Notebook hygiene and regression: py:percent pairs, nbval goldens, grafting.

Analytical decisions taken here:

* Reviewers read the ``py:percent`` pair of each chapter, kept in ``notebooks/py/`` (jupytext
  formats ``ipynb,py//py:percent``) rather than beside the ``.ipynb``: Quarto treats an
  ``.ipynb`` with a same-named ``.py`` next to it as that script's by-product and would not
  render it. The pair and the ``.ipynb`` must hold the same cells (compared after a
  jupytext read of both), and the ``.ipynb`` in ``notebooks/`` carries no outputs.
* Goldens are the chapters executed with ``params/ci.yaml`` (chapters that take
  ``chapter_results`` get the others' key results, as in a report run) and a fixed
  ``run_info``/``previous_results``, so that they are deterministic.
* ``pytest --nbval golden.ipynb`` would re-run the code stored in the golden, blind to edits
  of the chapter. So the test grafts the golden's outputs onto the *current* source (with
  the same injected parameters) and runs nbval on that: an edited cell, a changed library
  result or a changed number of code cells all fail.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat

from analysis import paths
from analysis.execute import CHAPTER_GLOB, ChapterError, discover_chapters, execute_all

#: run_info injected into goldens: fixed, so the outputs do not change run to run.
GOLDEN_RUN_INFO: dict[str, Any] = {
    "package_version": "golden",
    "git_commit": "golden",
    "git_dirty": False,
    "renderer": "golden",
    "renderer_version": "golden",
    "renderer_label": "golden",
    "data_digest": "golden",
    "params_digest": "golden",
    "version": "golden",
}
SANITIZE_FILE: Path = paths.TESTS / "notebooks" / "nbval-sanitize.cfg"
#: jupytext pairing of every chapter: the review pair lives in the ``py/`` subfolder.
PAIR_FORMATS = "ipynb,py//py:percent"
PAIR_FOLDER = "py"


class GraftError(ValueError):
    """The golden no longer matches the chapter's structure (regenerate: make goldens)."""


# --- py:percent pairs -----------------------------------------------------------------


def _cells_signature(nb: nbformat.NotebookNode) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (c.cell_type, c.source.strip(), tuple(c.get("metadata", {}).get("tags", [])))
        for c in nb.cells
    ]


def _has_outputs(nb: nbformat.NotebookNode) -> bool:
    return any(
        c.cell_type == "code" and (c.get("outputs") or c.get("execution_count")) for c in nb.cells
    )


def sync_notebooks(check: bool = False, folder: Path | None = None) -> list[str]:
    """Keep every ``NN-*.ipynb`` and its ``py/NN-*.py`` (py:percent) pair in sync.

    Check mode changes nothing and returns one problem per line: a missing pair, pairs whose
    cells differ, an ``.ipynb`` with outputs, a review pair left beside its ``.ipynb`` (where
    Quarto would skip the notebook). Otherwise runs ``jupytext --sync`` on each pair (newest
    wins), creates a missing side, and returns what it could not fix (outputs, strays).
    """
    import jupytext

    folder = folder or paths.NOTEBOOKS
    pairs = folder / PAIR_FOLDER
    stems = sorted(
        {p.stem for p in folder.glob(CHAPTER_GLOB)}
        | {p.stem for p in pairs.glob(CHAPTER_GLOB.removesuffix(".ipynb") + ".py")}
    )
    problems: list[str] = [
        f"{stray.relative_to(folder.parent)}: a review pair beside its notebook; Quarto then "
        f"skips {stray.stem}.ipynb as the script's by-product: move it to "
        f"{(pairs / stray.name).relative_to(folder.parent)}"
        for stray in sorted(folder.glob(CHAPTER_GLOB.removesuffix(".ipynb") + ".py"))
        if (folder / f"{stray.stem}.ipynb").exists()
    ]
    for stem in stems:
        ipynb, py = folder / f"{stem}.ipynb", pairs / f"{stem}.py"
        if not check:
            if ipynb.exists() and not py.exists():
                _jupytext(["--set-formats", PAIR_FORMATS, str(ipynb)])
            elif py.exists() and not ipynb.exists():
                _jupytext(["--set-formats", PAIR_FORMATS, str(py)])
            else:
                _jupytext(["--sync", str(ipynb)])
        if not ipynb.exists() or not py.exists():
            missing = py if not py.exists() else ipynb
            problems.append(f"{missing.relative_to(folder.parent)}: missing (pair of {stem})")
            continue
        a, b = jupytext.read(ipynb), jupytext.read(py)
        if _cells_signature(a) != _cells_signature(b):
            problems.append(
                f"{ipynb.name} and {PAIR_FOLDER}/{py.name} differ: run `make sync` "
                "(jupytext --sync, newest wins)"
            )
        if _has_outputs(nbformat.read(ipynb, as_version=4)):
            problems.append(
                f"{ipynb.name}: has outputs; notebooks/ keeps none "
                "(Edit > Clear All Outputs, or `jupyter nbconvert --clear-output --inplace`)"
            )
    return problems


def _jupytext(args: list[str]) -> None:
    from jupytext.cli import jupytext as jupytext_cli

    jupytext_cli(["--quiet", *args])


# --- goldens --------------------------------------------------------------------------


def _strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop timestamps, absolute paths and random ids; keep the injected parameters.

    Papermill gives the injected-parameters cell a random id on every run; a fixed id keeps
    regenerated goldens free of diffs that are not changes.
    """
    pm = nb.metadata.get("papermill", {})
    nb.metadata["papermill"] = {"parameters": pm.get("parameters", {})}
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"
    return nb


def make_goldens(
    notebooks_dir: Path | None = None,
    goldens_dir: Path | None = None,
    params_file: Path | None = None,
    jobs: int = 2,
) -> list[Path]:
    """Execute every chapter with ``params/ci.yaml`` into ``tests/notebooks/goldens/``."""
    import tempfile

    from analysis.params import load_scenario, scenario_to_parameters
    from analysis.report import ReportError

    folder = notebooks_dir or paths.NOTEBOOKS
    out = goldens_dir or paths.GOLDENS
    chapters = discover_chapters(folder)
    if not chapters:
        raise ReportError(f"no chapters found in {folder}")
    scenario = load_scenario(params_file or paths.CI_PARAMS)
    # Keys sorted at every level: the golden stores its parameters in JSON metadata, which
    # nbformat writes with sorted keys; grafting re-injects them in that order, so the
    # golden run must see the same order (a chapter that shows a dict shows its order).
    base = json.loads(
        json.dumps(
            {
                **scenario_to_parameters(scenario),
                "previous_results": {},
                "run_info": dict(GOLDEN_RUN_INFO),
            },
            sort_keys=True,
        )
    )
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpu-report-goldens-") as tmp:
        try:
            executed = execute_all(chapters, Path(tmp), base, jobs=jobs)
        except ChapterError as err:
            raise ReportError(str(err)) from None
        written = []
        for ex in executed:
            nb = _strip_volatile(nbformat.read(ex.output, as_version=4))
            target = out / ex.output.name
            nbformat.write(nb, target)
            written.append(target)
    return written


def graft(golden: Path, source: Path) -> nbformat.NotebookNode:
    """The current ``source`` notebook, parameterized like ``golden``, with its outputs.

    Raises:
        GraftError: the number of code cells changed (regenerate the goldens).
    """
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    gold = nbformat.read(golden, as_version=4)
    params = gold.metadata.get("papermill", {}).get("parameters", {})
    nb = load_notebook_node(str(source))
    if params:
        nb = parameterize_notebook(nb, copy.deepcopy(params))
    g_code = [c for c in gold.cells if c.cell_type == "code"]
    s_code = [c for c in nb.cells if c.cell_type == "code"]
    if len(g_code) != len(s_code):
        raise GraftError(
            f"{source.name}: {len(s_code)} code cells but the golden {golden.name} has "
            f"{len(g_code)}: regenerate the goldens (`make goldens`) and review the diff"
        )
    for s, g in zip(s_code, g_code, strict=True):
        s.outputs = copy.deepcopy(g.outputs)
        s.execution_count = g.execution_count
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
    return nb


def run_nbval(
    notebooks: list[Path], cwd: Path, *, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess[str]:
    """``pytest --nbval`` on ``notebooks`` in a subprocess (own minimal pytest config).

    The project's strict pytest settings are not applied there: kernel start-up warnings are
    not the notebooks' regressions.
    """
    ini = cwd / "nbval-pytest.ini"
    ini.write_text("[pytest]\naddopts = -p no:cacheprovider\n", encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(ini),
        "--rootdir",
        str(cwd),
        "-q",
        "-p",
        "no:xdist",
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        str(SANITIZE_FILE),
        *[str(n) for n in notebooks],
    ]
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PYTEST_XDIST_WORKER", None)
    full_env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False
    )
