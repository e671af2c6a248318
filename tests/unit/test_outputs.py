"""OUTPUT_FIELDS: tables take labels and decimals from the registry; readers never see raw names."""

from __future__ import annotations

import ast
import re

import nbformat
import pandas as pd
import pytest

from analysis import charts, outputs, paths

NOTEBOOKS = sorted((paths.NOTEBOOKS / "py").glob("*.py"))
GOLDENS = sorted((paths.TESTS / "notebooks" / "goldens").glob("*.ipynb"))
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")


def _table_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in NOTEBOOKS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "charts.table":
                calls.append((path.name, node))
    return calls


def test_every_listed_column_has_a_registry_entry_or_an_explicit_label() -> None:
    calls = _table_calls()
    assert len(calls) > 40
    missing = []
    for name, call in calls:
        kw = {k.arg: k.value for k in call.keywords}
        cols = kw.get("columns")
        labels = kw.get("labels")
        labelled = (
            {k.value for k in labels.keys if isinstance(k, ast.Constant)}
            if isinstance(labels, ast.Dict)
            else set()
        )
        if isinstance(cols, ast.Dict):  # a rename map labels every column it lists
            continue
        if isinstance(cols, ast.List | ast.Tuple):
            for e in cols.elts:
                assert isinstance(e, ast.Constant)
                if e.value not in outputs.OUTPUT_FIELDS and e.value not in labelled:
                    missing.append(f"{name}:{call.lineno}: {e.value}")
    assert missing == []


def _headers(nb: nbformat.NotebookNode) -> list[str]:
    heads = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            html = "".join(out.get("data", {}).get("text/html", ""))
            if 'class="report-table"' in html:
                heads += re.findall(r'<th[^>]*class="col_heading[^"]*"[^>]*>(.*?)</th>', html)
    return heads


def test_no_raw_snake_case_name_reaches_a_reader() -> None:
    heads = [h for p in GOLDENS for h in _headers(nbformat.read(p, as_version=4))]
    assert len(heads) > 200
    assert [h for h in heads if SNAKE.match(h) or "_" in h] == []


def test_table_takes_labels_and_decimals_from_the_registry() -> None:
    df = pd.DataFrame(
        {"tpot_ms": [12.345], "cost_per_mtok_usd": [0.123456], "mystery_gb": [3.14159]}
    )
    shown = charts.table(df, "t").frame
    # TPOT (ms) at 1 decimal, cost at 3, an unregistered column by its unit suffix.
    assert list(shown.columns) == ["TPOT (ms)", "Cost (USD/M tokens)", "Mystery (GB)"]
    assert shown.iloc[0].tolist() == ["12.3", "0.123", "3.14"]
    assert outputs.OUTPUT_FIELDS["tpot_ms"] == outputs.Field("TPOT", "ms", 1)


def test_explicit_labels_and_decimals_override_the_registry() -> None:
    df = pd.DataFrame({"tpot_ms": [12.345], "tp": [2]})
    t = charts.table(df, "t", labels={"tpot_ms": "Bound (ms)"}, decimals={"tpot_ms": 2})
    assert list(t.frame.columns) == ["Bound (ms)", "TP"]
    assert t.frame.iloc[0].tolist() == ["12.35", "2"]
    t = charts.table(df, "t", columns={"tpot_ms": "Per-token latency (ms)"}, decimals=0)
    assert t.frame.iloc[0].tolist() == ["12"]
    assert list(t.frame.columns) == ["Per-token latency (ms)"]


def test_chart_titles_come_from_the_registry() -> None:
    spec = charts.plot_claim_verdicts(pd.DataFrame({"verdict": ["supported"], "claims": [3]}))
    assert spec.to_dict()["encoding"]["y"]["title"] == outputs.title("verdict")
    with pytest.raises(KeyError):
        outputs.title("not_a_registered_column")
