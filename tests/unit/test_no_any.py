"""No ``Any`` in the public signatures of the report's own modules (issue 12: typed seams)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from analysis import paths

SRC = paths.ROOT / "src" / "analysis"
#: Modules and packages whose public signatures are typed (CONTRIBUTING: lint and types).
TYPED = (
    "charts",
    "render",
    "report.py",
    "results.py",
    "outputs.py",
    "keys.py",
    "errors.py",
    "devtools",
    "version_diff.py",
)


def _files() -> list[Path]:
    out: list[Path] = []
    for name in TYPED:
        path = SRC / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def _mentions_any(node: ast.AST | None) -> bool:
    if node is None:
        return False
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == "Any":
            return True
        if isinstance(n, ast.Attribute) and n.attr == "Any":
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "Any" in n.value:
            return True
    return False


def _public_signatures(tree: ast.Module) -> Iterator[tuple[str, int, list[ast.expr | None]]]:
    def annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr | None]:
        a = fn.args
        args = [*a.posonlyargs, *a.args, *a.kwonlyargs]
        extra = [x.annotation for x in (a.vararg, a.kwarg) if x is not None]
        return [x.annotation for x in args] + extra + [fn.returns]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            yield node.name, node.lineno, annotations(node)
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    not item.name.startswith("_") or item.name == "__init__"
                ):
                    yield f"{node.name}.{item.name}", item.lineno, annotations(item)
                if (
                    isinstance(item, ast.AnnAssign)
                    and isinstance(item.target, ast.Name)
                    and not item.target.id.startswith("_")
                ):
                    yield f"{node.name}.{item.target.id}", item.lineno, [item.annotation]


def test_public_signatures_carry_no_any() -> None:
    offenders = []
    checked = 0
    for path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, line, anns in _public_signatures(tree):
            checked += 1
            if any(_mentions_any(a) for a in anns):
                offenders.append(f"{path.relative_to(SRC)}:{line} {name}")
    assert checked > 100
    assert offenders == []


def test_the_check_sees_an_any() -> None:
    tree = ast.parse("def f(x: Any) -> int: ...\nclass C:\n    y: dict[str, Any]\n")
    flagged = [n for n, _, anns in _public_signatures(tree) if any(_mentions_any(a) for a in anns)]
    assert flagged == ["f", "C.y"]


#: Modelling packages: the functions and classes each facade ``__init__`` re-exports
#: (the package's public API) carry no ``Any``; their internal helpers may.
FACADES = ("inference", "training", "tco", "decision", "claims")


def _facade_exports(package: str) -> dict[str, set[str]]:
    """Module path (relative to SRC) -> names the facade defines or re-exports from it."""
    init = SRC / package / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {str(init.relative_to(SRC)): set()}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[:2] != ["analysis", package] or len(parts) != 3:
                continue
            rel = str(Path(package, parts[2] + ".py"))
            out.setdefault(rel, set()).update(a.asname or a.name for a in node.names)
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out[str(init.relative_to(SRC))].add(node.name)
    return out


#: Exports still typed with ``Any`` (issue 12 part C left them): spec, claim and cost rows
#: read as ``Mapping[str, Any]`` whose values the bodies use as numbers and strings (with
#: ``Mapping[str, object]`` each use needs a conversion), and the roofline's array-or-float
#: terms. Shrink it; the test fails on a new ``Any`` and on an entry fixed but not removed.
KNOWN_ANY = frozenset(
    {
        "inference/roofline.py serving_metrics",
        "training/calibration.py precision_factor",
        "training/calibration.py estimate_efficiency",
        "training/model.py peak_tflops",
        "training/scaling.py reference_throughput",
        "training/step.py evaluate_layouts",
        "tco/montecarlo.py Simulation.training_summary",
        "decision/changes.py compare_with_previous",
        "decision/summary.py memo_line",
        "claims/evaluate.py eval_source_fact",
        "claims/evaluate.py eval_none",
        "claims/market.py eval_mlperf_ratio",
        "claims/market.py eval_price_ratio",
        "claims/outputs.py eval_model_output",
        "claims/specs.py eval_spec_value",
        "claims/specs.py eval_spec_ratio",
        "claims/specs.py eval_memory_fit",
    }
)


def _facade_offenders() -> tuple[int, set[str]]:
    offenders = set()
    checked = 0
    for package in FACADES:
        for rel, names in _facade_exports(package).items():
            tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
            for name, _, anns in _public_signatures(tree):
                if name.split(".")[0] not in names:
                    continue
                checked += 1
                if any(_mentions_any(a) for a in anns):
                    offenders.add(f"{rel} {name}")
    return checked, offenders


def test_facade_exports_carry_no_any() -> None:
    checked, offenders = _facade_offenders()
    assert checked > 100
    assert offenders - KNOWN_ANY == set(), "new Any in a public signature"
    assert KNOWN_ANY - offenders == set(), "typed now: remove it from KNOWN_ANY"


def test_the_facade_check_sees_the_design_contract() -> None:
    # The design doc's functions are among the checked exports (the walk finds them).
    exports = {n for p in FACADES for names in _facade_exports(p).values() for n in names}
    assert {
        "max_throughput_per_gpu",
        "predict_mlperf",
        "scaling_efficiency",
        "throughput_per_gpu",
        "cost_per_million_tokens",
        "evaluate_tiers",
        "recommend",
        "evaluate_claims",
    } <= exports
