"""Every filesystem location the project uses, resolved once from the package.

Notebooks, tests and the orchestrator import these names instead of writing relative
paths, so that nbval (which starts kernels in the notebook's folder), papermill and the
command line all agree on where things are. ``GPU_REPORT_ROOT`` overrides the project
root (for an installed, non-editable package run from a checkout elsewhere).
"""

from __future__ import annotations

import os
from pathlib import Path


def _find_root() -> Path:
    env = os.environ.get("GPU_REPORT_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "notebooks").is_dir():
            return parent
    return Path.cwd().resolve()


ROOT: Path = _find_root()
DATA: Path = ROOT / "data"
SPECS: Path = DATA / "specs"
MODELS: Path = DATA / "models"
BENCHMARKS: Path = DATA / "benchmarks"
PRICES: Path = DATA / "prices"
CLAIMS: Path = DATA / "claims"
ASSUMPTIONS: Path = DATA / "assumptions"
SOURCES: Path = DATA / "sources.csv"
DATA_README: Path = DATA / "README.md"
#: The inter-chapter contracts; its key-results section is generated (``make contracts``).
CONTRACTS: Path = ROOT / "docs" / "contracts.md"
NOTEBOOKS: Path = ROOT / "notebooks"
PARAMS: Path = ROOT / "params"
SCENARIOS: Path = PARAMS / "scenarios"
DEFAULT_PARAMS: Path = PARAMS / "default.yaml"
CI_PARAMS: Path = PARAMS / "ci.yaml"
BUILD: Path = ROOT / "_build"
REPORTS: Path = ROOT / "reports"
TESTS: Path = ROOT / "tests"
GOLDENS: Path = TESTS / "notebooks" / "goldens"
QUARTO_PROJECT: Path = ROOT / "_quarto.yml"
#: Every installed distribution pinned with hashes (`make lock`); the manifest records it.
LOCK_FILE: Path = ROOT / "requirements" / "lock.txt"
TEMPLATES: Path = Path(__file__).resolve().parent / "templates"

#: Raw MLPerf files shipped beside the repository (read-only, never copied into data/).
SHARED_MLPERF: Path = Path(
    os.environ.get("GPU_REPORT_SHARED_MLPERF", str(ROOT.parent / "shared" / "data" / "mlperf"))
)
