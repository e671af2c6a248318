"""Notebook pairs: each chapter ``NN-*.ipynb`` and its ``py/NN-*.py`` (``make sync``).

Analytical decisions taken here:

* Reviewers read the ``py:percent`` pair of each chapter, kept in ``notebooks/py/`` (jupytext
  formats ``ipynb,py//py:percent``) rather than beside the ``.ipynb``: Quarto treats an
  ``.ipynb`` with a same-named ``.py`` next to it as that script's by-product and would not
  render it. The pair and the ``.ipynb`` must hold the same cells (compared after a
  jupytext read of both), and the ``.ipynb`` in ``notebooks/`` carries no outputs.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from analysis import paths
from analysis.execute import CHAPTER_GLOB

__all__ = ["PAIR_FOLDER", "PAIR_FORMATS", "sync_notebooks"]

#: jupytext pairing of every chapter: the review pair lives in the ``py/`` subfolder.
PAIR_FORMATS = "ipynb,py//py:percent"
PAIR_FOLDER = "py"


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
