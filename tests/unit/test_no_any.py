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
