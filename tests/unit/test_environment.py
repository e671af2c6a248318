"""The environment is the lock: pyproject's ranges, the lock's pins, conda and the venv agree.

``requirements/lock.txt`` pins every distribution (``==`` with hashes); the Makefile and
environment.yml install it. These tests fail when the lock no longer satisfies
pyproject.toml's ranges, when environment.yml installs anything else, and when the running
environment holds a distribution the lock does not pin (``make test-latest`` runs against
newer releases on purpose and sets ``GPU_REPORT_UNLOCKED=1``).
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from analysis import paths

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def read_lock(
    text: str, environment: dict[str, str] | None = None
) -> dict[str, tuple[str, str | None]]:
    """``{name: (version, marker)}`` of a universal uv lock, for one environment.

    Every entry must be ``==``. A universal lock may pin a name twice under exclusive
    markers (numpy for Python < 3.12 and >= 3.12); only the entries whose marker holds in
    ``environment`` (default: this interpreter) are kept.
    """
    pins: dict[str, tuple[str, str | None]] = {}
    for line in text.splitlines():
        if not line or line[0] in " #\t-":
            continue
        m = PIN.match(line)
        assert m, f"lock line is not an exact pin: {line!r}"
        marker = m.group(3)
        if marker is None or Marker(marker).evaluate(environment):
            pins[canonicalize_name(m.group(1))] = (m.group(2), marker)
    return pins


def unsatisfied(requirements: list[str], pins: dict[str, tuple[str, str | None]]) -> list[str]:
    """Requirements whose locked version falls outside their range (or is not locked)."""
    problems = []
    for raw in requirements:
        req = Requirement(raw)
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req.name}: required by pyproject.toml, not in the lock")
        elif not req.specifier.contains(pins[name][0], prereleases=True):
            problems.append(f"{req.name}: locked {pins[name][0]}, pyproject wants {req.specifier}")
    return problems


def _pyproject() -> dict:
    return tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _lock() -> dict[str, tuple[str, str | None]]:
    return read_lock(paths.LOCK_FILE.read_text(encoding="utf-8"))


def test_lock_satisfies_every_range_in_pyproject() -> None:
    project = _pyproject()["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["dev"]
    reqs += _pyproject()["build-system"]["requires"]
    assert unsatisfied(reqs, _lock()) == []


def test_every_lock_entry_is_hashed() -> None:
    blocks = re.split(r"\n(?=[A-Za-z0-9])", paths.LOCK_FILE.read_text(encoding="utf-8"))
    unhashed = [b.split()[0] for b in blocks if "==" in b.split("\n")[0] and "--hash=" not in b]
    assert unhashed == []


def test_environment_yml_installs_exactly_the_lock() -> None:
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert pip == [f"-r {paths.LOCK_FILE.relative_to(paths.ROOT).as_posix()}"]
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python == "python=3.11"  # the lock is resolved for 3.11 (Makefile: --python-version)


@pytest.mark.skipif(
    os.environ.get("GPU_REPORT_UNLOCKED") == "1", reason="make test-latest: newest releases"
)
def test_every_installed_distribution_is_the_locked_version() -> None:
    pins = _lock()
    own = canonicalize_name("gpu-decision-report")
    installed = {
        canonicalize_name(d.metadata["Name"]): d.version
        for d in metadata.distributions()
        if d.metadata["Name"]
    }
    off = sorted(
        f"{name} {version} (lock: {pins[name][0] if name in pins else 'absent'})"
        for name, version in installed.items()
        if name != own and pins.get(name, (None,))[0] != version
    )
    assert off == [], "installed but not as locked: run `make` (it installs from the lock)"


def test_pre_commit_pins_the_locked_ruff() -> None:
    config = yaml.safe_load((paths.ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [h for repo in config["repos"] for h in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing from GitHub
    ruff = {d for h in hooks for d in h.get("additional_dependencies", []) if d.startswith("ruff")}
    assert ruff == {f"ruff=={_lock()['ruff'][0]}"}


def test_unsatisfied_and_read_lock_catch_drift() -> None:
    text = (
        "pandas==2.2.0 \\\n    --hash=sha256:ab\n"
        "numpy==2.0.0 ; python_version < '3.12'\nnumpy==2.1.0 ; python_version >= '3.12'\n"
    )
    pins = read_lock(text, {"python_version": "3.11"})
    assert pins == {"pandas": ("2.2.0", None), "numpy": ("2.0.0", "python_version < '3.12'")}
    assert read_lock(text, {"python_version": "3.13"})["numpy"][0] == "2.1.0"
    assert unsatisfied(["pandas>=2.2", "numpy>=1.26"], pins) == []
    assert unsatisfied(["pandas>=3"], pins) == ["pandas: locked 2.2.0, pyproject wants >=3"]
    assert unsatisfied(["scipy"], pins) == ["scipy: required by pyproject.toml, not in the lock"]
    with pytest.raises(AssertionError, match="exact pin"):
        read_lock("pandas>=2.2\n")


def environment_quarto_pin() -> str | None:
    """The exact Quarto version environment.yml pins (``quarto=X.Y.Z``), else None."""
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text(encoding="utf-8"))
    for dep in env["dependencies"]:
        if isinstance(dep, str) and dep.startswith("quarto"):
            m = re.fullmatch(r"quarto\s*==?\s*(\d+\.\d+\.\d+)", dep)
            return m.group(1) if m else None
    return None


def test_environment_pins_one_quarto_release() -> None:
    # the version tests/e2e/test_quarto.py renders with (it checks the renderer against it)
    assert environment_quarto_pin() is not None, "environment.yml: pin quarto=X.Y.Z exactly"
