"""Reading raw MLPerf files: accelerator names, precisions, round labels, formats, records.

The rules behind them are :mod:`analysis.ingest.mlperf`'s analytical decisions (accelerator
ids, interactive scenarios, the format detection); :mod:`analysis.ingest.mlperf` re-exports
the public names (``mlperf.map_accelerator``, ``mlperf.detect_format`` ...).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import paths
from analysis.errors import IngestError
from analysis.tables.benchmarks import (
    INFERENCE_BENCHMARKS,
)

#: (pattern, canonical id). A raw name maps to an id when exactly one id's pattern matches;
#: form factors that are not the canonical part (-NVL, PCIe, GH200) match no pattern.
ACCELERATOR_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), acc)
    for p, acc in (
        (r"(?<![A-Za-z])H100-SXM", "H100-SXM"),  # H100-SXM-80GB, H100-SXM5-80GB
        (r"(?<![A-Za-z])H200(?!-NVL)\b", "H200"),  # H200-SXM-141GB[-CTS], not H200-NVL/GH200
        (r"(?<![A-Za-z])B200\b", "B200"),  # B200-SXM-180GB, "Blackwell GPU (B200-SXM-180GB)"
        (r"(?<![A-Za-z])B300\b", "B300"),
        (r"\bGB200\b", "GB200"),
        (r"\bGB300\b", "GB300"),
        (r"\bMI300X\b", "MI300X"),
        (r"\bMI325X\b", "MI325X"),
        (r"\bMI350X\b", "MI350X"),
        (r"\bMI355X\b", "MI355X"),
    )
)


_NVIDIA_HINT = re.compile(r"NVIDIA|\b(?:G?[HB]\d{3}|GB\d{3}|L40S?|A100|RTX)\b", re.IGNORECASE)


_AMD_HINT = re.compile(r"\bAMD\b|Instinct|\bMI\d{3}", re.IGNORECASE)


_COUNT_IN_NAME = re.compile(r"\(x(\d+)\)")


def detect_vendor(raw: str) -> str | None:
    """Vendor of an accelerator name: ``AMD``, ``NVIDIA`` or None (other, empty or mixed).

    >>> detect_vendor("AMD Instinct MI300X 192GB HBM3"), detect_vendor("Intel(R) Arc Pro(R) B60")
    ('AMD', None)
    """
    nvidia, amd = bool(_NVIDIA_HINT.search(raw)), bool(_AMD_HINT.search(raw))
    if nvidia == amd:
        return None
    return "NVIDIA" if nvidia else "AMD"


def map_accelerator(raw: str) -> str | None:
    """Canonical accelerator id for a published accelerator name, or None if it has none.

    >>> map_accelerator("NVIDIA H100-SXM-80GB"), map_accelerator("NVIDIA H100-NVL-94GB")
    ('H100-SXM', None)
    """
    found = {acc for pattern, acc in ACCELERATOR_RULES if pattern.search(raw)}
    return found.pop() if len(found) == 1 else None


def _accelerator_caveats(raw: str, total: int | None) -> list[str]:
    notes = []
    found = {acc for pattern, acc in ACCELERATOR_RULES if pattern.search(raw)}
    if len(found) > 1:
        notes.append("mixed accelerator types in one system (" + ", ".join(sorted(found)) + ")")
    m = _COUNT_IN_NAME.search(raw)
    if m and len(found) <= 1 and total is not None and int(m.group(1)) != total:
        notes.append(f"name says x{m.group(1)}; MLPerf counts nodes x per-node = {total}")
    if re.search(r"power cap", raw, re.IGNORECASE):
        notes.append("power-capped accelerators")
    if re.search(r"virtuali[sz]ed", raw, re.IGNORECASE):
        notes.append("virtualized accelerators")
    if re.search(r"-CTS\b", raw):
        notes.append("custom thermal solution (CTS) variant")
    if re.search(r"\bDLC\b", raw):
        notes.append("direct liquid cooled (DLC) variant")
    return notes


_PRECISION = {
    "fp16": "bf16",
    "bf16": "bf16",
    "fp8": "fp8",
    "fp4": "fp4",
    "mxfp4": "fp4",
    "nvfp4": "fp4",
}


_TOKENS = re.compile(r"TOKENS_PER_SAMPLE:\s*([0-9]+(?:\.[0-9]+)?)")


_INTERACTIVE_NAME = re.compile(r"^(?P<base>.+?)-interactive(?P<acc>-99(?:\.9)?)?$")


_ROUND_IN_NAME = re.compile(r"v(\d+\.\d+)")


_MODEL_OF = {b: re.sub(r"-99(\.9)?$", "", b) for b in INFERENCE_BENCHMARKS}


_TRAINING_MODEL = {
    "llama2_70b_lora": "llama2-70b",
    "llama31_8b": "llama3.1-8b",
    "llama31_405b": "llama3.1-405b",
    "gpt3": None,
}


def canonical_precision(weight_data_types: str) -> str | None:
    """Canonical precision of MLPerf's ``weight_data_types`` (None if integer/unset/mixed).

    >>> canonical_precision("MXFP4"), canonical_precision("INT8")
    ('fp4', None)
    """
    return _PRECISION.get(weight_data_types.strip().lower())


def source_label(path: Path) -> str:
    """Stable, machine-independent name of an input file for the ``source_file`` column.

    Files in the shared MLPerf folder become ``shared/data/mlperf/<name>`` wherever that
    folder is mounted; files inside the project are relative to its root; others keep
    only their file name.
    """
    p = path.resolve()
    shared = paths.SHARED_MLPERF.resolve()
    if p.parent == shared:
        return f"shared/data/mlperf/{p.name}"
    if p.is_relative_to(paths.ROOT):
        return p.relative_to(paths.ROOT).as_posix()
    return p.name


def _round_label(value: str) -> str | None:
    m = re.fullmatch(r"v?(\d+\.\d+)", value.strip())
    return f"v{m.group(1)}" if m else None


def _round_key(label: str) -> tuple[int, ...]:
    return tuple(int(x) for x in label.lstrip("v").split("."))


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _fmt(value: float | None, decimals: int) -> str:
    """Fixed decimals, trailing zeros dropped: deterministic and exact enough."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@dataclass
class _Where:
    file: Path
    row: int

    def fail(self, what: str) -> IngestError:
        return IngestError(f"{self.file}: record {self.row}: {what}")


def _number(where: _Where, field_name: str, value: Any, *, integer: bool = False) -> float:
    text = _text(value)
    try:
        num = float(text)
    except ValueError:
        raise where.fail(f"{field_name} {value!r} is not a number") from None
    if not math.isfinite(num) or (integer and not num.is_integer()):
        raise where.fail(f"{field_name} {value!r} is not a {'whole ' if integer else ''}number")
    return num


def _optional_number(where: _Where, rec: dict[str, str], field_name: str) -> float | None:
    """``rec[field_name]`` as a number, or None when the cell is empty."""
    value = rec[field_name]
    return _number(where, field_name, value) if value.strip() else None


#: summary_results.json field -> the internal name; summary.csv column -> the same name.
_JSON_FIELDS = {
    "Submitter": "submitter",
    "Availability": "availability",
    "Category": "division",
    "Suite": "suite",
    "System": "system",
    "Platform": "platform",
    "Model": "benchmark_raw",
    "Scenario": "scenario_raw",
    "Accuracy": "accuracy",
    "Nodes": "nodes",
    "Accelerator": "accelerator_raw",
    "a#": "per_node",
    "Software": "software",
    "weight_data_types": "weight_precision",
    "Performance_Result": "result",
    "Performance_Units": "units",
    "Location": "location",
    "version": "version",
}


_JSON_OPTIONAL = {
    "ID": "result_id",
    "Unique ID (e.g. for Audit)": "uid",
    "Total Accelerators": "total",
}


_CSV_FIELDS = {
    "Organization": "submitter",
    "Availability": "availability",
    "Division": "division",
    "SystemType": "suite",
    "SystemName": "system",
    "Platform": "platform",
    "MlperfModel": "benchmark_raw",
    "Scenario": "scenario_raw",
    "Accuracy": "accuracy",
    "number_of_nodes": "nodes",
    "accelerator_model_name": "accelerator_raw",
    "accelerators_per_node": "per_node",
    "framework": "software",
    "weight_data_types": "weight_precision",
    "Result": "result",
    "Units": "units",
    "Location": "location",
    "version": "version",
}


_CSV_OPTIONAL = {"ID": "result_id", "total_accelerators": "total"}


_TRAINING_COLUMNS = (
    "round",
    "submitter",
    "division",
    "availability",
    "system_name",
    "system_dir",
    "benchmark",
    "accelerator_model_name",
    "vendor",
    "number_of_nodes",
    "accelerators_per_node",
    "total_accelerators",
    "framework",
    "n_success_runs",
    "olympic_mean_min_raw",
    "official_summarizer_score_min",
    "results_path",
    "repo",
    "commit",
)


_RUNS_COLUMNS = (
    "round",
    "submitter",
    "system_dir",
    "benchmark",
    "result_file",
    "status",
    "run_start_ms",
    "run_stop_ms",
)


FORMATS = ("inference-json", "inference-csv", "training", "training-runs")


def _read_csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise IngestError(f"{path}: not UTF-8 text ({err})") from None
    reader = csv.DictReader(io.StringIO(text))
    header = list(reader.fieldnames or [])
    rows = []
    for i, row in enumerate(reader):
        if None in row:
            raise IngestError(f"{path}: record {i}: more cells than the {len(header)} columns")
        rows.append({k: (v or "") for k, v in row.items()})
    return header, rows


def _read_csv_header(path: Path) -> list[str]:
    """The header row of a CSV file; the rest of the file is not read."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            return next(csv.reader(fh), [])
    except UnicodeDecodeError as err:
        raise IngestError(f"{path}: not UTF-8 text ({err})") from None


def _require_columns(path: Path, header: Sequence[str], wanted: Iterable[str]) -> None:
    missing = [c for c in wanted if c not in header]
    if missing:
        raise IngestError(f"{path}: missing column(s) {missing}")


def detect_format(path: Path) -> str:
    """Which MLPerf format ``path`` holds, judged by its content (not its name).

    Returns one of :data:`FORMATS`; raises :class:`IngestError` when it is none of them.
    """
    if not path.is_file():
        raise IngestError(f"{path}: no such file")
    head = path.read_bytes()[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith((b"[", b"{")):
        return "inference-json"
    cols = set(_read_csv_header(path)) if head else set()
    if set(_CSV_FIELDS) <= cols:
        return "inference-csv"
    if set(_TRAINING_COLUMNS) <= cols:
        return "training"
    if set(_RUNS_COLUMNS) <= cols:
        return "training-runs"
    raise IngestError(
        f"{path}: not a known MLPerf format. Expected a summary_results.json (JSON list of "
        f"results), a summary.csv (columns {', '.join(_CSV_FIELDS)}), or the compiled training "
        f"table (columns {', '.join(_TRAINING_COLUMNS)}); found columns {sorted(cols)[:12]}"
    )


def _records_json(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise IngestError(f"{path}: invalid JSON ({err})") from None
    if not isinstance(data, list):
        raise IngestError(
            f"{path}: expected a JSON list of result records, got {type(data).__name__}"
        )
    out = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise IngestError(f"{path}: record {i}: not a JSON object")
        missing = [k for k in _JSON_FIELDS if k not in rec]
        if missing:
            raise IngestError(f"{path}: record {i}: missing field(s) {missing}")
        r = {new: rec[old] for old, new in _JSON_FIELDS.items()}
        r.update({new: rec.get(old) for old, new in _JSON_OPTIONAL.items()})
        out.append(r)
    return out


def _records_csv(path: Path) -> list[dict[str, Any]]:
    header, rows = _read_csv_rows(path)
    _require_columns(path, header, _CSV_FIELDS)
    out = []
    for row in rows:
        r: dict[str, Any] = {new: row[old] for old, new in _CSV_FIELDS.items()}
        r.update({new: row.get(old) for old, new in _CSV_OPTIONAL.items()})
        r["uid"] = None
        out.append(r)
    return out
