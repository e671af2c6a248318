"""The import graph runs one way (issue 12): an AST walk over ``src/analysis``.

(a) no modelling module imports the loaders (``analysis.data``, ``analysis.paths``), the
report layer (``analysis.report``, ``analysis.execute``) or notebooks; only a package's
facade ``__init__`` may import ``analysis.data`` (it supplies the default inputs);
(b) no import cycles between modules of ``analysis`` (module-level imports) and no
function-local import of an ``analysis`` module in the modelling code;
(c) no module over :data:`MAX_LINES` lines.

Each checker also runs on a tiny synthetic package with a planted violation, so a checker
that finds nothing cannot pass silently.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "analysis"
MAX_LINES = 800
#: Modules (and packages: every module under them) that hold modelling code.
MODELLING = (
    "analysis.inference",
    "analysis.training",
    "analysis.tco",
    "analysis.decision",
    "analysis.claims",
    "analysis.hardware",
    "analysis.measurements",
    "analysis.inputs",
    "analysis.fleet",
)
FORBIDDEN = ("analysis.data", "analysis.paths", "analysis.report", "analysis.execute")
#: What a facade ``__init__`` of a modelling package may import besides the rest.
FACADE_ALLOWED = ("analysis.data",)


@dataclass(frozen=True)
class Import:
    """One import statement's target module, where it is, and whether it is module level."""

    source: str
    target: str
    line: int
    top_level: bool


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root`` (a ``src`` folder), by dotted name."""
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _resolve(node: ast.ImportFrom, name: str, path: Path, known: set[str]) -> str:
    """Dotted target of ``from X import name``: ``X.name`` when that is a module, else X."""
    base = node.module or ""
    if node.level:
        here = name if _is_package(path) else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            here = here.rpartition(".")[0]
        base = f"{here}.{base}" if base else here
    return base


def imports(root: Path, package: str) -> list[Import]:
    """Every import of a ``package`` module by a ``package`` module (all nesting levels)."""
    mods = modules(root, package)
    known = set(mods)
    out: list[Import] = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, name, path, known)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
                ]
            for t in targets:
                if t == package or t.startswith(package + "."):
                    out.append(Import(name, t, node.lineno, id(node) in top))
    return out


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layering_violations(
    found: list[Import],
    package_paths: dict[str, Path],
    modelling: tuple[str, ...] = MODELLING,
    forbidden: tuple[str, ...] = FORBIDDEN,
) -> list[str]:
    """Modelling modules importing a forbidden module, or any analysis module in a function."""
    out = []
    for imp in found:
        if not _under(imp.source, modelling):
            continue
        facade = _is_package(package_paths[imp.source])
        bad = _under(imp.target, forbidden) or ".notebooks" in imp.target
        if bad and not (facade and imp.target in FACADE_ALLOWED):
            out.append(f"{imp.source}:{imp.line} imports {imp.target}")
        elif not imp.top_level:
            out.append(f"{imp.source}:{imp.line} imports {imp.target} inside a function")
    return out


def cycles(found: list[Import], known: set[str]) -> list[list[str]]:
    """Import cycles among module-level imports (each as a closed path of module names).

    A package ``__init__`` is not counted as a dependency of its own submodules (Python
    runs it first, but importing ``a.b`` does not use ``a``'s names).
    """
    graph: dict[str, set[str]] = {m: set() for m in known}
    for imp in found:
        if imp.top_level and imp.target in known and imp.target != imp.source:
            if imp.source.startswith(imp.target + "."):
                continue
            graph[imp.source].add(imp.target)
    out: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                out.append([*stack[stack.index(n) :], n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return out


def long_modules(root: Path, package: str, max_lines: int = MAX_LINES) -> dict[str, int]:
    """Modules over ``max_lines`` lines, by path relative to ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > max_lines:
            out[path.relative_to(root).as_posix()] = n
    return out


# --- the project -------------------------------------------------------------------------


def _project() -> tuple[list[Import], dict[str, Path]]:
    mods = modules(SRC, PACKAGE)
    return imports(SRC, PACKAGE), mods


def test_modelling_code_does_not_import_loaders_report_or_notebooks() -> None:
    found, mods = _project()
    assert layering_violations(found, mods) == []


def test_no_import_cycles() -> None:
    found, mods = _project()
    assert cycles(found, set(mods)) == []


def test_no_module_over_800_lines() -> None:
    assert long_modules(SRC, PACKAGE) == {}


# --- the checkers on planted violations --------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def test_checkers_find_planted_violations(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "analysis/__init__.py": "",
            "analysis/data.py": "",
            "analysis/paths.py": "",
            "analysis/a.py": "from analysis import b\n",
            "analysis/b.py": "import analysis.a\n",
            "analysis/inference/__init__.py": "from analysis import data\n",
            "analysis/inference/roofline.py": "from analysis import paths\n",
            "analysis/inference/tiers.py": (
                "from . import roofline\n\n\ndef f():\n    from analysis import data\n"
            ),
            "analysis/big.py": "x = 1\n" * 801,
        },
    )
    found = imports(tmp_path, PACKAGE)
    mods = modules(tmp_path, PACKAGE)
    assert layering_violations(found, mods) == [
        "analysis.inference.roofline:1 imports analysis.paths",
        "analysis.inference.tiers:5 imports analysis.data",
    ]
    assert cycles(found, set(mods)) == [["analysis.a", "analysis.b", "analysis.a"]]
    assert long_modules(tmp_path, PACKAGE) == {"analysis/big.py": 801}


def test_checkers_accept_a_clean_package(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "analysis/__init__.py": "",
            "analysis/data.py": "from analysis import inputs\n",
            "analysis/inputs.py": "",
            "analysis/inference/__init__.py": "from analysis import data\nfrom . import serving\n",
            "analysis/inference/serving.py": "from analysis.inputs import resolve\n",
        },
    )
    found = imports(tmp_path, PACKAGE)
    mods = modules(tmp_path, PACKAGE)
    assert layering_violations(found, mods) == []
    assert cycles(found, set(mods)) == []
    assert long_modules(tmp_path, PACKAGE) == {}
