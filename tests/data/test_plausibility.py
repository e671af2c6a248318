"""Every numeric column has a plausibility range; a broken data folder stops a run early.

The ranges are the schema's (:mod:`analysis.tables`): column bounds for wide tables, and
:class:`analysis.schema.KeyedRanges` for long tables whose unit depends on the row. The
command-line cases run ``analysis validate`` and ``analysis run`` in a subprocess on a
project copy (``GPU_REPORT_ROOT``) whose data/ has one defect each: exit 1, one message
naming the file (and the row, where there are rows), no traceback, and nothing executed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from analysis import paths
from analysis.schema import KeyedRanges
from analysis.tables import ALL
from analysis.tables.specs import FIELD_UNITS

NUMERIC = [(t.name, c) for t in ALL.values() for c in t.columns if c.dtype in ("float", "int")]


def _keyed(table: str, column: str) -> KeyedRanges | None:
    for check in ALL[table].checks:
        if isinstance(check, KeyedRanges) and column in check.columns:
            return check
    return None


@pytest.mark.parametrize(("table", "col"), NUMERIC, ids=[f"{t}.{c.name}" for t, c in NUMERIC])
def test_every_numeric_column_has_a_plausibility_range(table, col) -> None:
    keyed = _keyed(table, col.name)
    if keyed is not None:
        assert all(lo <= hi for lo, hi in keyed.ranges.values())
        return
    assert col.ge is not None or col.gt is not None, f"{table}.{col.name}: no lower bound"
    assert col.le is not None, f"{table}.{col.name}: no upper bound (le) and no KeyedRanges"


def test_every_spec_field_has_a_range() -> None:
    keyed = _keyed("accelerator_values", "value")
    assert keyed is not None and set(keyed.ranges) == set(FIELD_UNITS)


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _set(root: Path, table: str, column: str, value: str, **match: str) -> int:
    """Overwrite one cell of a table in the copy; return its CSV line number."""
    path = root / "data" / ALL[table].path
    df = _csv(path)
    mask = pd.Series(True, index=df.index)
    for k, v in match.items():
        mask &= df[k] == v
    row = int(df.index[mask][0])
    df.loc[row, column] = value
    df.to_csv(path, index=False)
    return row + 2


def _implausible_spec(root: Path) -> tuple[str, str]:
    line = _set(
        root, "accelerator_values", "value", "192000", accelerator="MI300X", field="memory_gb"
    )
    return "specs/accelerator_values.csv", (
        f"row {line}, column 'value': 192000 is implausible for field 'memory_gb' "
        "(allowed: 16 to 2048)"
    )


def _implausible_price(root: Path) -> tuple[str, str]:
    path = root / "data" / ALL["rental_quotes"].path
    df = _csv(path)
    df.loc[0, "price_usd_per_gpu_hour"] = "6.88e30"
    df.to_csv(path, index=False)
    return "prices/rental_quotes.csv", "row 2, column 'price_usd_per_gpu_hour'"


def _implausible_pue(root: Path) -> tuple[str, str]:
    path = root / "data" / ALL["facility"].path
    df = _csv(path)
    i = int(df.index[df["parameter"] == "pue"][0])
    df.loc[i, ["value", "high"]] = "15.8"
    df.to_csv(path, index=False)
    return "prices/facility.csv", f"row {i + 2}, column 'value': 15.8 is implausible for parameter"


def _unknown_source(table: str, column: str = "source_id"):
    def make(root: Path) -> tuple[str, str]:
        path = root / "data" / ALL[table].path
        df = _csv(path)
        i = int(df.index[df[column] != ""][0])
        df.loc[i, column] = "no-such-source"
        df.to_csv(path, index=False)
        return ALL[table].path, f"row {i + 2}, column '{column}': unknown source 'no-such-source'"

    return make


def _empty(root: Path) -> tuple[str, str]:
    (root / "data" / ALL["facility"].path).write_bytes(b"")
    return "prices/facility.csv", "empty file (table 'facility' needs a header row"


def _binary(root: Path) -> tuple[str, str]:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    (root / "data" / ALL["models"].path).write_bytes(png)
    return "models/models.csv", "not UTF-8 text"


DEFECTS = {
    "implausible-spec-value": _implausible_spec,
    "implausible-rental-price": _implausible_price,
    "implausible-pue": _implausible_pue,
    "unknown-source-rental-quote": _unknown_source("rental_quotes"),
    "unknown-source-purchase-price": _unknown_source("purchase_prices"),
    "unknown-source-facility": _unknown_source("facility"),
    "unknown-source-claim-fact": _unknown_source("claims", "fact_sources"),
    "empty-csv": _empty,
    "binary-csv": _binary,
}


@pytest.mark.parametrize("command", ["validate", pytest.param("run", marks=pytest.mark.slow)])
@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_bad_data_folder_exits_1_with_one_message(
    project_copy: Path, tmp_path: Path, defect: str, command: str
) -> None:
    file, expected = DEFECTS[defect](project_copy)
    reports = tmp_path / "reports"
    args = (
        ["validate", str(paths.CI_PARAMS)]
        if command == "validate"
        else ["run", "--params", str(paths.CI_PARAMS), "--out", str(reports), "--formats", "html"]
    )
    env = {**os.environ, "GPU_REPORT_ROOT": str(project_copy)}
    res = subprocess.run(
        [sys.executable, "-m", "analysis", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert res.returncode == 1, (res.stdout, res.stderr)
    err = res.stderr
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.startswith("error: ") and "\nerror:" not in err, err  # one message
    assert f"{project_copy / 'data' / file}" in err, err
    assert expected in err, err
    assert res.stdout == ""
    assert not (project_copy / "_build").exists()  # no chapter started
    assert not reports.exists()
