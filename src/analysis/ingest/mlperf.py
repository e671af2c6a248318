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
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from analysis.errors import IngestError as IngestError
from analysis.ingest.mlperf_formats import (
    _INTERACTIVE_NAME,
    _MODEL_OF,
    _ROUND_IN_NAME,
    _TOKENS,
    _TRAINING_COLUMNS,
    _TRAINING_MODEL,
    ACCELERATOR_RULES,
    FORMATS,
    _accelerator_caveats,
    _fmt,
    _number,
    _optional_number,
    _read_csv_rows,
    _records_csv,
    _records_json,
    _require_columns,
    _round_key,
    _round_label,
    _text,
    _Where,
    canonical_precision,
    detect_format,
    detect_vendor,
    map_accelerator,
    source_label,
)
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
    "FORMATS",
    "IngestError",
    "canonical_precision",
    "detect_format",
    "detect_vendor",
    "ingest",
    "map_accelerator",
    "read_inference",
    "read_training",
    "source_label",
]


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
