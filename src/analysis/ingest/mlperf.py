"""MLPerf ingest: raw round summaries -> ``data/benchmarks/mlperf_{inference,training}.csv``.

Analytical decisions (the schema in :mod:`analysis.tables.benchmarks` documents every column):

* **Scope.** Inference: LLM benchmarks only (llama2-70b-99/-99.9, llama3.1-8b, llama3.1-405b,
  deepseek-r1, gpt-oss-120b, mixtral-8x7b), closed division, datacenter suite (a system
  submitted as ``datacenter,edge`` counts), Offline/Server/Interactive, accelerators made by
  AMD or NVIDIA. Everything else (open division, edge, CPU-only systems, Intel/Google parts,
  other benchmarks) is excluded and *counted* in the ingest report, per file and reason.
  Training: the four LLM benchmarks of the compiled table, AMD and NVIDIA only, every
  division present (the source is all closed; the ``division`` column stays for filters).
* **Accelerator ids.** Raw names map to canonical ids (:mod:`analysis.ids`) through
  :data:`ACCELERATOR_RULES`. Board variants that are not the canonical part (H100-NVL/PCIe,
  H200-NVL, GH200, L40S, RTX PRO, A100) and systems mixing several accelerator types keep an
  empty ``accelerator`` with the raw name; they stay in the table and the ingest lists them.
  Variants of the same silicon map to the part and carry a ``caveat``: power-capped MI355X,
  virtualized H200, H200 "CTS" (custom thermal solution), MI325X "DLC" (liquid cooled).
* **Accelerator count.** ``total_accelerators`` = nodes x accelerators per node, MLPerf's own
  count; where v6.0 publishes ``Total Accelerators`` it must agree, otherwise the ingest
  fails. A count written in the accelerator name ("(x87)" for 11 x 8 = 88) is ignored and
  noted in ``caveat``.
* **Interactive.** v5.1 and v6.0 publish it as a scenario. A round that encodes it in the
  benchmark name (``llama2-70b-interactive-99``) is normalized to the base benchmark with
  scenario ``Interactive``, so the key stays comparable across rounds.
* **Same run at two accuracy targets.** When a system's ``-99`` and ``-99.9`` results are
  identical (same round, scenario and units), both rows are kept and the ``-99`` row gets
  ``duplicate_of = <the -99.9 id>``: the stricter target is the one the run is known to meet.
* **Values.** ``result`` is the official figure exactly as published (units as published;
  v5.1 labels the llama3.1-8b Interactive results "Queries/s" although their magnitude is
  tokens/s: kept, with a caveat). ``result_per_accelerator`` is a derived normalization,
  not an official MLPerf metric. Training ``time_to_train_min`` is MLCommons' summarizer
  score (olympic mean, scaling.json and RCP normalization), i.e. the published result.
* **Provenance and determinism.** ``mlperf_id`` is MLPerf's system id
  ``suite/division/submitter/platform``, present in summary_results.json and derivable from
  summary.csv, so both formats give the same rows. ``source_file`` is a stable relative path;
  ``source_row`` the 0-based record index. Rows are sorted on a total order ending with the
  unique key, floats are written with fixed decimals, and the same inputs give byte-identical
  files. Inputs that disagree with themselves (round in the name vs the ``version`` field,
  the same key from two files, a missing column, an unparsable number) stop the ingest with
  an :class:`IngestError` naming the file, the record and what is wrong.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import paths
from analysis.errors import IngestError as IngestError
from analysis.schema import DATE_RE, DataValidationError, Table, read_raw_csv
from analysis.tables.benchmarks import (
    INFERENCE_BENCHMARKS,
    INFERENCE_SCENARIOS,
    MLPERF_INFERENCE,
    MLPERF_TRAINING,
    TRAINING_BENCHMARKS,
)

__all__ = [
    "ACCELERATOR_RULES",
    "IngestError",
    "detect_format",
    "ingest",
    "map_accelerator",
    "read_inference",
    "read_training",
]


# --------------------------------------------------------------------------- accelerators
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


# --------------------------------------------------------------------------- helpers
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


# --------------------------------------------------------------------------- formats
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


# --------------------------------------------------------------------------- inference
def _file_round(path: Path, records: Sequence[dict[str, Any]]) -> str:
    versions = {_text(r["version"]) for r in records} - {""}
    labels = {_round_label(v) for v in versions}
    if None in labels:
        raise IngestError(f"{path}: unrecognized version value(s) {sorted(versions)}")
    if len(labels) > 1:
        raise IngestError(f"{path}: records from several rounds {sorted(versions)} in one file")
    m = _ROUND_IN_NAME.search(path.name)
    from_name = f"v{m.group(1)}" if m else None
    from_field = next(iter(labels)) if labels else None
    if from_name and from_field and from_name != from_field:
        raise IngestError(
            f"{path}: file name says round {from_name} but the records' version "
            f"field says {from_field}"
        )
    label = from_field or from_name
    if label is None:
        raise IngestError(f"{path}: no round: neither a `version` field nor vN.N in the name")
    return label


def _accelerator_count(where: _Where, rec: dict[str, Any]) -> tuple[int, int]:
    """(nodes, accelerators per node) of a record, checked against its published total."""
    nodes = int(_number(where, "nodes", rec["nodes"], integer=True))
    per_node = int(_number(where, "accelerators per node", rec["per_node"], integer=True))
    if nodes < 1 or per_node < 1:
        raise where.fail(f"nodes={nodes}, accelerators per node={per_node} (must be >= 1)")
    if _text(rec.get("total")):
        published = int(_number(where, "total accelerators", rec["total"], integer=True))
        if published != nodes * per_node:
            raise where.fail(
                f"total accelerators {published} != nodes {nodes} x per node {per_node}"
            )
    return nodes, per_node


def read_inference(path: Path, fmt: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Normalized inference rows of one summary file, and report lines about it.

    Rows carry the :data:`analysis.tables.benchmarks.MLPERF_INFERENCE` columns (values
    unformatted); ``duplicate_of`` is set later, across all rows of a round.
    """
    fmt = fmt or detect_format(path)
    if fmt == "inference-json":
        records = _records_json(path)
    elif fmt == "inference-csv":
        records = _records_csv(path)
    else:
        raise IngestError(f"{path}: expected an inference summary, found {fmt}")
    if not records:
        raise IngestError(f"{path}: no result records")
    round_label = _file_round(path, records)
    label = source_label(path)
    excluded: Counter[str] = Counter()
    rows = []
    for i, rec in enumerate(records):
        where = _Where(path, i)
        division = _text(rec["division"]).lower()
        suites = {s.strip().lower() for s in _text(rec["suite"]).split(",")}
        bench_raw, scenario = _text(rec["benchmark_raw"]), _text(rec["scenario_raw"])
        m = _INTERACTIVE_NAME.match(bench_raw)
        benchmark = m.group("base") + (m.group("acc") or "") if m else bench_raw
        if m:
            scenario = "Interactive"
        acc_raw = _text(rec["accelerator_raw"])
        acc_raw = "" if acc_raw == "-" else acc_raw
        vendor = detect_vendor(acc_raw)
        reason = (
            "open division"
            if division != "closed"
            else "not datacenter suite"
            if "datacenter" not in suites
            else "not an LLM benchmark"
            if benchmark not in INFERENCE_BENCHMARKS
            else f"scenario {scenario}"
            if scenario not in INFERENCE_SCENARIOS
            else "no accelerator (CPU-only)"
            if not acc_raw
            else "not an AMD/NVIDIA accelerator"
            if vendor is None
            else None
        )
        if reason:
            excluded[reason] += 1
            continue
        nodes, per_node = _accelerator_count(where, rec)
        total = nodes * per_node
        result = _number(where, "result", rec["result"])
        if result <= 0:
            raise where.fail(f"result {result} is not positive")
        units = _text(rec["units"])
        caveats = _accelerator_caveats(acc_raw, total)
        if re.search(r"maxq", _text(rec["platform"]) + _text(rec["system"]), re.IGNORECASE):
            caveats.append("MaxQ (power-efficiency) configuration")
        if units.lower() not in {"tokens/s", "tokens/sec"}:
            caveats.append(f"units published as {units!r} for a token-throughput benchmark")
        uid = _text(rec.get("uid")) or "/".join(
            _text(rec[k]) for k in ("suite", "division", "submitter", "platform")
        )
        tokens = _TOKENS.search(_text(rec["accuracy"]))
        availability = _text(rec["availability"]).lower()
        weight = _text(rec["weight_precision"])
        rows.append(
            {
                "round": round_label,
                "submitter": _text(rec["submitter"]),
                "system": _text(rec["system"]),
                "accelerator": map_accelerator(acc_raw),
                "accelerator_raw": acc_raw,
                "vendor": vendor,
                "accelerators_per_node": per_node,
                "nodes": nodes,
                "total_accelerators": total,
                "benchmark": benchmark,
                "model": _MODEL_OF[benchmark],
                "scenario": scenario,
                "result": result,
                "units": units,
                "result_per_accelerator": result / total,
                "tokens_per_sample": float(tokens.group(1)) if tokens else None,
                "weight_precision": weight or None,
                "precision": canonical_precision(weight),
                "software": _text(rec["software"]) or None,
                "availability": availability,
                "mlperf_id": uid,
                "result_id": _text(rec.get("result_id")) or None,
                "results_path": _text(rec["location"]).removeprefix("./"),
                "duplicate_of": None,
                "caveat": "; ".join(caveats) or None,
                "source_file": label,
                "source_row": i,
            }
        )
    parts = ", ".join(f"{n} {why}" for why, n in sorted(excluded.items()))
    lines = [
        f"{label} ({fmt}, {round_label}): {len(records)} records, {len(rows)} kept"
        + (f"; excluded: {parts}" if parts else "")
    ]
    return rows, lines


def _mark_duplicates(rows: list[dict[str, Any]]) -> None:
    """Point each ``-99`` row at an identical ``-99.9`` result of the same system."""
    strict = {
        (r["round"], r["mlperf_id"], r["benchmark"], r["scenario"]): r
        for r in rows
        if r["benchmark"].endswith("-99.9")
    }
    for r in rows:
        if r["benchmark"].endswith("-99"):
            sib = strict.get((r["round"], r["mlperf_id"], r["benchmark"] + ".9", r["scenario"]))
            if sib is not None and sib["result"] == r["result"] and sib["units"] == r["units"]:
                r["duplicate_of"] = sib["benchmark"]


# --------------------------------------------------------------------------- training
def _training_availability(where: _Where, raw: str) -> str:
    low = raw.lower()
    if "preview" in low:
        return "preview"
    if "research" in low or low == "rdi":
        return "rdi"
    if any(w in low for w in ("available", "cloud", "on-prem", "onprem", "on prem")):
        return "available"
    raise where.fail(f"availability {raw!r} is not available/cloud/on-premise/preview/research")


def read_training(path: Path, runs: Path | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Normalized training rows of the compiled time-to-train table, and report lines.

    With ``runs`` (the per-run table of the same logs), each system's number of successful
    runs is cross-checked against its run logs; a disagreement stops the ingest.
    """
    header, records = _read_csv_rows(path)
    _require_columns(path, header, _TRAINING_COLUMNS)
    if not records:
        raise IngestError(f"{path}: no rows")
    success: Counter[tuple[str, str, str, str]] | None = None
    if runs is not None:
        _, run_rows = _read_csv_rows(runs)
        success = Counter(
            (r["round"], r["submitter"], r["system_dir"], r["benchmark"])
            for r in run_rows
            if r["status"] == "success"
        )
    label = source_label(path)
    excluded: Counter[str] = Counter()
    rows = []
    for i, rec in enumerate(records):
        where = _Where(path, i)
        round_label = _round_label(rec["round"])
        if round_label is None:
            raise where.fail(f"round {rec['round']!r} is not like v4.0")
        if rec["benchmark"] not in TRAINING_BENCHMARKS:
            excluded["not an LLM benchmark"] += 1
            continue
        acc_raw = rec["accelerator_model_name"].strip()
        vendor = detect_vendor(acc_raw)
        published_vendor = rec["vendor"].strip()
        if published_vendor in {"AMD", "NVIDIA"} and vendor != published_vendor:
            raise where.fail(f"vendor {published_vendor!r} but accelerator {acc_raw!r}")
        if vendor is None or published_vendor not in {"AMD", "NVIDIA"}:
            excluded["not an AMD/NVIDIA accelerator"] += 1
            continue
        nodes = int(_number(where, "number_of_nodes", rec["number_of_nodes"], integer=True))
        per_node = int(
            _number(where, "accelerators_per_node", rec["accelerators_per_node"], integer=True)
        )
        total = int(_number(where, "total_accelerators", rec["total_accelerators"], integer=True))
        if nodes < 1 or per_node < 1 or total != nodes * per_node:
            raise where.fail(
                f"total_accelerators {total} != number_of_nodes {nodes} x "
                f"accelerators_per_node {per_node}"
            )
        n_success = int(_number(where, "n_success_runs", rec["n_success_runs"], integer=True))
        score = _optional_number(where, rec, "official_summarizer_score_min")
        raw_mean = _optional_number(where, rec, "olympic_mean_min_raw")
        if success is not None:
            logged = success[(rec["round"], rec["submitter"], rec["system_dir"], rec["benchmark"])]
            if logged != n_success:
                raise where.fail(
                    f"n_success_runs {n_success} but the runs file {runs} has "
                    f"{logged} successful runs for this system"
                )
        caveats = _accelerator_caveats(acc_raw, total)
        if score is None:
            caveats.append("no readable run logs: no official time to train")
        rows.append(
            {
                "round": round_label,
                "submitter": rec["submitter"].strip(),
                "system": rec["system_name"].strip(),
                "accelerator": map_accelerator(acc_raw),
                "accelerator_raw": acc_raw,
                "vendor": vendor,
                "nodes": nodes,
                "accelerators_per_node": per_node,
                "total_accelerators": total,
                "benchmark": rec["benchmark"],
                "model": _TRAINING_MODEL[rec["benchmark"]],
                "time_to_train_min": score,
                "olympic_mean_min_raw": raw_mean,
                "n_success_runs": n_success,
                "software": rec["framework"].strip() or None,
                "availability": _training_availability(where, rec["availability"].strip()),
                "availability_raw": rec["availability"].strip(),
                "division": rec["division"].strip().lower(),
                "caveat": "; ".join(caveats) or None,
                "source_file": label,
                "source_row": i,
                "results_path": rec["results_path"].strip(),
                "repo": rec["repo"].strip(),
                "commit": rec["commit"].strip(),
            }
        )
    parts = ", ".join(f"{n} {why}" for why, n in sorted(excluded.items()))
    lines = [
        f"{label} (training, {len({r['round'] for r in rows})} rounds): {len(records)} rows, "
        f"{len(rows)} kept"
        + (f"; excluded: {parts}" if parts else "")
        + (f"; n_success_runs checked against {source_label(runs)}" if runs else "")
    ]
    return rows, lines


# --------------------------------------------------------------------------- output
#: Decimals written per float column (fixed, so the same input gives the same bytes).
_DECIMALS = {
    "result": 6,
    "result_per_accelerator": 3,
    "tokens_per_sample": 4,
    "time_to_train_min": 4,
    "olympic_mean_min_raw": 4,
}


def _check_unique(rows: list[dict[str, Any]], table: Table) -> None:
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = tuple(r[k] for k in table.key)
        if key in seen:
            first = seen[key]
            raise IngestError(
                f"{table.name}: key {dict(zip(table.key, key, strict=True))} appears twice: "
                f"{first['source_file']} record {first['source_row']} and {r['source_file']} "
                f"record {r['source_row']} (the same round given twice, in two formats?)"
            )
        seen[key] = r


def render_csv(rows: Iterable[dict[str, Any]], table: Table) -> str:
    """CSV text of ``rows`` in the column order of ``table``, fixed float formatting."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.column_names)
    for r in rows:
        out = []
        for col in table.columns:
            v = r[col.name]
            if v is None:
                out.append("")
            elif col.dtype == "float":
                out.append(_fmt(float(v), _DECIMALS.get(col.name, 6)))
            else:
                out.append(str(v))
        writer.writerow(out)
    return buf.getvalue()


def _write(text: str, table: Table, out_dir: Path) -> Path:
    target = out_dir / Path(table.path).name
    try:
        table.validate(read_raw_csv(io.StringIO(text)), target)
    except DataValidationError as err:
        raise IngestError(f"normalized {table.name} fails its schema: {err}") from None
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    Path(tmp).replace(target)  # atomic: readers never see a half-written table
    return target


def _sort_inference(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        rows,
        key=lambda r: (
            _round_key(r["round"]),
            r["model"],
            r["benchmark"],
            r["scenario"],
            r["vendor"],
            r["accelerator"] or "~",
            r["accelerator_raw"],
            r["submitter"],
            r["mlperf_id"],
        ),
    )


def _sort_training(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        rows,
        key=lambda r: (
            _round_key(r["round"]),
            r["benchmark"],
            r["vendor"],
            r["accelerator"] or "~",
            r["accelerator_raw"],
            r["total_accelerators"],
            r["submitter"],
            r["results_path"],
        ),
    )


def unmapped_lines(kind: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per raw accelerator name without a canonical id: rows, rounds, vendor."""
    rounds: dict[tuple[str, str], set[str]] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for r in rows:
        if r["accelerator"] is None:
            key = (r["vendor"], r["accelerator_raw"])
            counts[key] += 1
            rounds.setdefault(key, set()).add(r["round"])
    return [
        f"unmapped accelerator ({kind}, {vendor}): {raw!r}: {n} rows in "
        f"{', '.join(sorted(rounds[(vendor, raw)], key=_round_key))}; kept with empty accelerator"
        for (vendor, raw), n in sorted(counts.items())
    ]


def build_tables(sources: Sequence[Path], accessed: str) -> tuple[dict[str, str], list[str]]:
    """CSV text per table name for ``sources``, and the report lines (no files written).

    ``accessed`` (YYYY-MM-DD) is the day the source files were downloaded: every row's
    access date.
    """
    if not sources:
        raise IngestError("no input files given")
    if not re.fullmatch(DATE_RE, str(accessed)):
        raise IngestError(
            f"--accessed {accessed!r}: give the day the MLPerf files were downloaded as YYYY-MM-DD"
        )
    kinds = {Path(s): detect_format(Path(s)) for s in sources}
    runs = [p for p, k in kinds.items() if k == "training-runs"]
    training = [p for p, k in kinds.items() if k == "training"]
    if len(runs) > 1 or (runs and not training):
        raise IngestError(
            f"{', '.join(map(str, runs))}: a training runs file is only used to "
            "cross-check one compiled training table; give exactly one of each"
        )
    lines: list[str] = []
    inf_rows: list[dict[str, Any]] = []
    trn_rows: list[dict[str, Any]] = []
    for p, kind in kinds.items():
        if kind.startswith("inference"):
            rows, more = read_inference(p, kind)
            inf_rows += rows
            lines += more
        elif kind == "training":
            rows, more = read_training(p, runs[0] if runs else None)
            trn_rows += rows
            lines += more
    for r in inf_rows + trn_rows:
        r["accessed"] = accessed
    texts: dict[str, str] = {}
    if any(k.startswith("inference") for k in kinds.values()):
        _check_unique(inf_rows, MLPERF_INFERENCE)
        _mark_duplicates(inf_rows)
        texts[MLPERF_INFERENCE.name] = render_csv(_sort_inference(inf_rows), MLPERF_INFERENCE)
        n_dup = sum(r["duplicate_of"] is not None for r in inf_rows)
        lines.append(
            f"{MLPERF_INFERENCE.path}: {len(inf_rows)} rows ({n_dup} -99 rows are the "
            "same run as their -99.9 row: duplicate_of)"
        )
    if training:
        _check_unique(trn_rows, MLPERF_TRAINING)
        texts[MLPERF_TRAINING.name] = render_csv(_sort_training(trn_rows), MLPERF_TRAINING)
        lines.append(f"{MLPERF_TRAINING.path}: {len(trn_rows)} rows")
    lines += unmapped_lines("inference", inf_rows) + unmapped_lines("training", trn_rows)
    return texts, lines


def ingest(sources: list[Path], out_dir: Path, accessed: str) -> list[str]:
    """Normalize MLPerf files into ``out_dir`` and return the lines to print.

    Writes ``mlperf_inference.csv`` when inference summaries are given and
    ``mlperf_training.csv`` when the compiled training table is given; each table is
    rebuilt from all the files of its kind given in this call. ``accessed``: the day the
    files were downloaded (YYYY-MM-DD), recorded on every row.
    """
    texts, lines = build_tables([Path(s) for s in sources], accessed)
    written = []
    for table in (MLPERF_INFERENCE, MLPERF_TRAINING):
        if table.name in texts:
            written.append(_write(texts[table.name], table, Path(out_dir)))
    return [*lines, *(f"wrote {p}" for p in written)]
