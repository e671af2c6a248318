"""The vectorized validation fast path agrees with pandera and never accepts bad data."""

from __future__ import annotations

import pandas as pd
import pandas.testing as pdt
import pytest

from analysis import paths, schema
from analysis.tables import ALL


def _raw(table: schema.Table) -> pd.DataFrame:
    return schema.read_raw_csv(paths.DATA / table.path)


@pytest.mark.parametrize("name", list(ALL))
def test_fast_path_gives_pandera_frame(name: str) -> None:
    table = ALL[name]
    raw = _raw(table)
    fast = schema._fast_validate(table, raw)
    assert fast is not None, "the project's own data should take the fast path"
    slow = table._pandera_validate(raw, table.path)
    pdt.assert_frame_equal(fast, slow, check_exact=True)


def _first(table: schema.Table, pred) -> schema.Col | None:
    return next((c for c in table.columns if pred(c)), None)


@pytest.mark.parametrize("name", list(ALL))
def test_fast_path_defers_on_invalid_values(name: str) -> None:
    table = ALL[name]
    raw = _raw(table)
    cases = []
    num = _first(table, lambda c: c.dtype in ("float", "int"))
    if num is not None:
        cases.append((num.name, "12abc"))
    req = _first(table, lambda c: c.required)
    if req is not None:
        cases.append((req.name, None))
    bounded = _first(table, lambda c: c.ge is not None or c.gt is not None)
    if bounded is not None:
        low = bounded.ge if bounded.ge is not None else bounded.gt
        cases.append((bounded.name, str(int(low) - 1 if bounded.dtype == "int" else low - 1.0)))
    listed = _first(table, lambda c: c.isin is not None)
    if listed is not None:
        cases.append((listed.name, "not-an-allowed-value"))
    dated = _first(table, lambda c: c.dtype == "date")
    if dated is not None:
        cases.append((dated.name, "2024/01/01"))
    assert cases
    for col, value in cases:
        bad = raw.copy()
        bad.loc[0, col] = value
        assert schema._fast_validate(table, bad) is None, (col, value)
        with pytest.raises(schema.DataValidationError, match=r"row 2|column"):
            table.validate(bad, table.path)
