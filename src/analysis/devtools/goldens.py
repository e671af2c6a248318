"""Notebook regression: nbval goldens and grafting (``make goldens``, ``make nbval``).

Analytical decisions taken here:

* Goldens are the chapters executed with ``params/ci.yaml`` (chapters that take
  ``chapter_results`` get the others' key results, as in a report run) and a fixed
  ``run_info``/``previous_results``, so that they are deterministic.
* ``pytest --nbval golden.ipynb`` would re-run the code stored in the golden, blind to edits
  of the chapter. So the test grafts the golden's outputs onto the *current* source (with
  the same injected parameters) and runs nbval on that: an edited cell, a changed library
  result or a changed number of code cells all fail.
* Goldens guard numbers and text, not serializers. A chart is compared through its
  summary (:func:`analysis.charts.chart_summary`: titles, marks, encodings, data rounded
  to 4 significant digits); its Vega-Lite JSON, PNG and HTML wrapper are not stored in the
  golden and not compared (a new altair or pandas release re-serializes them with nothing
  on the page changed), which also keeps goldens small and their diffs readable.
* A kernel that dies before it answers ``kernel_info`` (seen with both cores busy) fails
  nothing by itself: nbval gets :data:`NBVAL_KERNEL_START_TIMEOUT` seconds to start one,
  and a run that failed that way is repeated once (the repeat is noted in its output).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

if TYPE_CHECKING:
    import pytest

from analysis import paths
from analysis.charts import CHART_SUMMARY_MIME, VEGALITE_MIME
from analysis.errors import ChapterError, GraftError, RunError
from analysis.execute import (
    KERNEL_START_TIMEOUT,
    discover_chapters,
    execute_all,
)

__all__ = [
    "CHART_HTML_PLACEHOLDER",
    "CHART_SUMMARY_MIME",
    "GOLDEN_REQUIRED",
    "GOLDEN_RUN_INFO",
    "GraftError",
    "KERNEL_START_FAILURES",
    "NBVAL_KERNEL_START_TIMEOUT",
    "NOT_COMPARED",
    "SANITIZE_FILE",
    "VEGALITE_MIME",
    "graft",
    "make_goldens",
    "pytest_collection_modifyitems",
    "run_nbval",
]
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
#: What the golden of a chapter that ``requires`` a scenario key sets it to (on top of
#: params/ci.yaml): "Your measurements" runs on the bundled example measurements.
GOLDEN_REQUIRED: dict[str, Any] = {"measurements": ["params/scenarios/own-measurements"]}
SANITIZE_FILE: Path = paths.TESTS / "notebooks" / "nbval-sanitize.cfg"
#: Output types neither stored in goldens nor compared (charts: :data:`CHART_SUMMARY_MIME`).
NOT_COMPARED: tuple[str, ...] = (VEGALITE_MIME, "image/png")
#: What a chart's HTML output is stored as; nbval-sanitize.cfg maps a fresh one to it.
CHART_HTML_PLACEHOLDER = "<gpu-chart/>"
NBVAL_KERNEL_START_TIMEOUT = KERNEL_START_TIMEOUT
#: nbval's messages for a kernel that never started (repeated once, see the module doc).
KERNEL_START_FAILURES = ("Kernel died before replying to kernel_info", "Timeout waiting for")


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
        for output in cell.get("outputs", []):
            _keep_comparable(output.get("data"))
    return nb


def _keep_comparable(data: dict[str, Any] | None) -> None:
    """Drop what nbval does not compare from one output (charts keep their summary)."""
    if not data:
        return
    is_chart = CHART_SUMMARY_MIME in data
    for mime in NOT_COMPARED:
        data.pop(mime, None)
    if is_chart and "text/html" in data:
        data["text/html"] = CHART_HTML_PLACEHOLDER


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Hook for nbval's run (``run_nbval`` loads this module with ``-p``): skip chart payloads.

    nbval compares every MIME type except a fixed list (PNGs among them); the Vega-Lite
    JSON joins that list here, because the chart summary beside it is what is guarded.
    """
    for item in items:
        parent = getattr(item, "parent", None)
        skip = getattr(parent, "skip_compare", None)
        if parent is not None and skip is not None and VEGALITE_MIME not in skip:
            parent.skip_compare = (*skip, *NOT_COMPARED)


def make_goldens(
    notebooks_dir: Path | None = None,
    goldens_dir: Path | None = None,
    params_file: Path | None = None,
    jobs: int = 2,
) -> list[Path]:
    """Execute every chapter with ``params/ci.yaml`` into ``tests/notebooks/goldens/``."""
    import tempfile

    from analysis.params import load_scenario, scenario_to_parameters

    folder = notebooks_dir or paths.NOTEBOOKS
    out = goldens_dir or paths.GOLDENS
    chapters = discover_chapters(folder)
    if not chapters:
        raise RunError(f"no chapters found in {folder}")
    scenario = load_scenario(params_file or paths.CI_PARAMS)

    def base_for(sc: Any) -> dict[str, Any]:
        # Keys sorted at every level: the golden stores its parameters in JSON metadata,
        # which nbformat writes with sorted keys; grafting re-injects them in that order, so
        # the golden run must see the same order (a chapter that shows a dict shows it).
        parameters: dict[str, Any] = json.loads(
            json.dumps(
                {
                    **scenario_to_parameters(sc),
                    "previous_results": {},
                    "run_info": dict(GOLDEN_RUN_INFO),
                },
                sort_keys=True,
            )
        )
        return parameters

    plain = [c for c in chapters if not c.requires]
    extra = [c for c in chapters if c.requires]
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpu-report-goldens-") as tmp:
        try:
            executed = execute_all(plain, Path(tmp), base_for(scenario), jobs=jobs)
            for ch in extra:
                sets = {k: GOLDEN_REQUIRED[k] for k in ch.requires if k in GOLDEN_REQUIRED}
                variant = type(scenario).model_validate(
                    {**scenario.model_dump(mode="json"), **sets}
                )
                executed += execute_all([ch], Path(tmp), base_for(variant), jobs=1)
        except ChapterError as err:
            raise RunError(str(err)) from None
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
    nb: nbformat.NotebookNode = load_notebook_node(str(source))
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
        "--nbval-kernel-startup-timeout",
        str(NBVAL_KERNEL_START_TIMEOUT),
        "-p",
        "analysis.devtools.goldens",
        *[str(n) for n in notebooks],
    ]
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PYTEST_XDIST_WORKER", None)
    full_env.pop("PYTEST_ADDOPTS", None)

    def once() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False
        )

    proc = once()
    if proc.returncode != 0 and any(m in proc.stdout for m in KERNEL_START_FAILURES):
        first = proc.stdout
        proc = once()
        proc.stdout = (
            f"[run_nbval] a kernel failed to start; repeated once. First attempt:\n"
            f"{first[-2000:]}\n[run_nbval] second attempt:\n{proc.stdout}"
        )
    return proc
