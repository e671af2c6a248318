"""The package's import graph: no circles, and the product never imports the developer tools."""

from __future__ import annotations

import ast
from pathlib import Path

from analysis import paths

SRC = paths.ROOT / "src"
#: Shims that keep the developer tools' old import paths (``analysis.goldens`` ...).
DEVTOOLS_SHIMS = {"analysis.goldens", "analysis.bench", "analysis.validation"}


def _modules() -> dict[str, Path]:
    mods = {}
    for p in (SRC / "analysis").rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        nodes = tree.body if top_level_only else list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            graph[mod] |= {
                n for n in names if n in mods and n != mod and not mod.startswith(n + ".")
            }
    return graph


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.add(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}


def test_no_import_circles_at_module_level() -> None:
    assert _circles(_graph(top_level_only=True)) == set()


def test_no_import_circles_through_function_imports_either() -> None:
    assert _circles(_graph(top_level_only=False)) == set()


def test_product_never_imports_devtools() -> None:
    graph = _graph(top_level_only=False)
    product = [m for m in graph if not m.startswith("analysis.devtools")]
    offenders = {
        m: sorted(d for d in graph[m] if d.startswith("analysis.devtools"))
        for m in product
        if m not in DEVTOOLS_SHIMS and m != "analysis.cli"
    }
    assert {m: d for m, d in offenders.items() if d} == {}


def test_charts_draw_and_do_not_decide() -> None:
    graph = _graph(top_level_only=False)
    charts = [m for m in graph if m == "analysis.charts" or m.startswith("analysis.charts.")]
    assert len(charts) > 1  # the package and its modules
    assert {m: "analysis.decision" for m in charts if "analysis.decision" in graph[m]} == {}
