"""Corrupted copies of the spec, model and source tables fail with file, row and column named."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

from analysis import data, paths
from analysis.schema import DataValidationError
from analysis.tables import ALL


def _copy(table: str, tmp_path: Path) -> Path:
    """Copy one table's CSV into ``tmp_path`` (same relative path); return the copy."""
    target = tmp_path / ALL[table].path
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(paths.DATA / ALL[table].path, target)
    return target


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _mask(df: pd.DataFrame, match: dict[str, str]) -> pd.Series:
    mask = pd.Series(True, index=df.index)
    for col, val in match.items():
        mask &= df[col] == val
    return mask


def _set_cell(path: Path, column: str, value: str, **match: str) -> int:
    """Overwrite ``column`` in the rows matching ``match``; return the CSV line of the first."""
    df = _read(path)
    mask = _mask(df, match)
    df[column] = df[column].where(~mask, value)
    df.to_csv(path, index=False)
    return int(df.index[mask][0]) + 2


def _drop_rows(path: Path, **match: str) -> None:
    df = _read(path)
    df[~_mask(df, match)].to_csv(path, index=False)


def test_missing_column(tmp_path):
    path = _copy("accelerator_values", tmp_path)
    _read(path).drop(columns="source_id").to_csv(path, index=False)
    expected = r"accelerator_values\.csv: missing column\(s\) \['source_id'\]"
    with pytest.raises(DataValidationError, match=expected):
        ALL["accelerator_values"].read(tmp_path)


def test_wrong_type(tmp_path):
    path = _copy("models", tmp_path)
    line = _set_cell(path, "layers", "eighty", model="llama2-70b")
    with pytest.raises(DataValidationError) as err:
        ALL["models"].read(tmp_path)
    message = str(err.value)
    assert "models.csv" in message
    assert f"row {line}, column 'layers'" in message
    assert "'eighty'" in message


@pytest.mark.parametrize(
    ("column", "value", "match", "expected"),
    [
        (
            "value",
            "-5.3",
            {"accelerator": "MI300X", "field": "memory_bw_tbps"},
            r"accelerator_values\.csv: row {line}, column 'value': "
            r"value -5\.3 fails greater_than\(0",
        ),
        (
            "unit",
            "GB/s",
            {"accelerator": "H200", "field": "memory_bw_tbps"},
            r"row {line}, column 'unit': 'GB/s' for field 'memory_bw_tbps' \(allowed: 'TB/s'\)",
        ),
        (
            "value",
            "",
            {"accelerator": "B200", "field": "memory_gb"},
            r"row {line}, column 'value': empty value for field 'memory_gb'",
        ),
    ],
    ids=["negative-bandwidth", "wrong-unit-for-field", "empty-required-value"],
)
def test_bad_spec_value(tmp_path, column, value, match, expected):
    path = _copy("accelerator_values", tmp_path)
    line = _set_cell(path, column, value, **match)
    with pytest.raises(DataValidationError, match=expected.format(line=line)):
        ALL["accelerator_values"].read(tmp_path)


def test_unknown_accelerator_id(tmp_path):
    path = _copy("accelerators", tmp_path)
    line = _set_cell(path, "accelerator", "MI300", accelerator="MI300X")
    with pytest.raises(DataValidationError) as err:
        ALL["accelerators"].read(tmp_path)
    message = str(err.value)
    assert (
        f"accelerators.csv: row {line}, column 'accelerator': unknown accelerator 'MI300'"
        in message
    )
    assert "Did you mean 'MI300X'" in message


def test_duplicated_key(tmp_path):
    path = _copy("accelerator_values", tmp_path)
    df = _read(path)
    pd.concat([df, df.iloc[[3]]]).to_csv(path, index=False)
    expected = r"row 5: duplicated key \(accelerator='H100-SXM', field='fp64_dense_tflops'\)"
    with pytest.raises(DataValidationError, match=expected):
        ALL["accelerator_values"].read(tmp_path)


def test_sources_unsorted(tmp_path):
    path = _copy("sources", tmp_path)
    _read(path).iloc[::-1].to_csv(path, index=False)
    expected = r"sources\.csv: row 3, column 'source_id': .* sorts before"
    with pytest.raises(DataValidationError, match=expected):
        ALL["sources"].read(tmp_path)


@pytest.fixture
def tmp_data(tmp_path):
    """A copy of the spec, model and source tables, read with ``data.load_inputs(tmp_data)``."""
    for table in ("sources", "accelerators", "accelerator_values", "models"):
        _copy(table, tmp_path)
    return tmp_path


def test_unknown_source_id_names_file_row_column(tmp_data):
    path = tmp_data / ALL["accelerator_values"].path
    line = _set_cell(path, "source_id", "no-such-source", accelerator="MI325X", field="memory_gb")
    expected = (
        rf"accelerator_values\.csv: row {line}, column 'source_id': unknown source 'no-such-source'"
    )
    with pytest.raises(DataValidationError, match=expected):
        data.load_inputs(tmp_data).specs  # noqa: B018 - the derived frame is the check


@pytest.mark.parametrize(
    ("table", "match", "frame", "expected"),
    [
        (
            "accelerators",
            {"accelerator": "GB300"},
            "specs",
            r"accelerators\.csv: no row for accelerator 'GB300'",
        ),
        (
            "accelerator_values",
            {"accelerator": "MI355X", "field": "tdp_w"},
            "specs",
            r"no row for accelerator 'MI355X', field 'tdp_w'",
        ),
        (
            "models",
            {"model": "deepseek-r1"},
            "models",
            r"models\.csv: no row for model 'deepseek-r1'",
        ),
    ],
    ids=["canonical-accelerator", "accelerator-field", "canonical-model"],
)
def test_missing_row(tmp_data, table, match, frame, expected):
    _drop_rows(tmp_data / ALL[table].path, **match)
    with pytest.raises(DataValidationError, match=expected):
        getattr(data.load_inputs(tmp_data), frame)


def test_mla_without_latent_rank(tmp_data):
    path = tmp_data / ALL["models"].path
    line = _set_cell(path, "kv_lora_rank", "", model="deepseek-r1")
    expected = rf"row {line}, column 'kv_lora_rank': attention_type 'mla' needs"
    with pytest.raises(DataValidationError, match=expected):
        data.load_inputs(tmp_data).models  # noqa: B018 - the derived frame is the check
