"""pyproject.toml's runtime dependencies and environment.yml's pip list must match."""

from __future__ import annotations

import re
import tomllib

import yaml

from analysis import paths

REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def _parse(reqs: list[str]) -> dict[str, str]:
    out = {}
    for r in reqs:
        m = REQ.match(r)
        assert m, f"cannot parse requirement {r!r}"
        out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3).replace(" ", "")
    return out


def pyproject_runtime() -> dict[str, str]:
    data = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return _parse(data["project"]["dependencies"])


def environment_pip() -> dict[str, str]:
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return _parse([p for p in pip if not p.startswith("-")])


def compare(a: dict[str, str], b: dict[str, str]) -> list[str]:
    problems = [
        f"{n}: in pyproject.toml, missing from environment.yml" for n in a.keys() - b.keys()
    ]
    problems += [
        f"{n}: in environment.yml, missing from pyproject.toml" for n in b.keys() - a.keys()
    ]
    problems += [f"{n}: {a[n]!r} vs {b[n]!r}" for n in a.keys() & b.keys() if a[n] != b[n]]
    return sorted(problems)


def test_runtime_dependencies_match_environment_yml() -> None:
    assert compare(pyproject_runtime(), environment_pip()) == []


def test_environment_installs_the_package_with_dev_extra() -> None:
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "-e .[dev]" in pip


def test_compare_detects_drift() -> None:
    a = {"pandas": ">=2.2", "numpy": ">=1.26"}
    assert compare(a, {"pandas": ">=2.2"}) == [
        "numpy: in pyproject.toml, missing from environment.yml"
    ]
    assert compare({"pandas": ">=2.2"}, a) == [
        "numpy: in environment.yml, missing from pyproject.toml"
    ]
    assert compare(a, {"pandas": ">=2.1", "numpy": ">=1.26"}) == ["pandas: '>=2.2' vs '>=2.1'"]


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
