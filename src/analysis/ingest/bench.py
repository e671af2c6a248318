"""A team's own serving benchmarks -> ``data/benchmarks/user/`` (one CSV per result file).

Reads the result files of the common serving benchmarks, normalizes each measured point to
the :data:`analysis.tables.benchmarks.USER_BENCHMARKS` schema and stamps it with its
provenance. Analytical decisions (the schema documents every column):

* **Formats**, recognized by content, not by name: vLLM ``vllm bench serve`` /
  ``benchmarks/benchmark_serving.py --save-result`` JSON (one object, or one per line with
  ``--append-result``); SGLang ``python -m sglang.bench_serving --output-file`` JSONL (one
  object per run); InferenceX result rows (``../shared/data/inferencex/``: one JSON object
  per line with ``hardware``, ``framework``, ``metrics``); MLPerf loadgen
  ``mlperf_log_summary.txt``. Power logs: ``nvidia-smi --query-gpu=...,power.draw
  --format=csv`` and ``amd-smi metric --power --csv`` (``--power FILE``).
* **What a file does not carry comes from the flags** (accelerator, model, precision,
  tensor parallelism, GPUs), checked against the canonical ids with the closest ids
  suggested. InferenceX rows carry their own hardware, model, precision and TP; the flags
  are then optional, and when given every row must agree with them.
* **Throughput per GPU** = the run's output tokens/s / ``gpus`` (replicas are independent:
  ``gpus`` must be a whole number of ``tp``-GPU replicas). Mean input and output lengths per
  request are the file's totals / completed requests (MLPerf summaries carry no input length:
  ``--isl`` gives it; output length = tokens/s over samples/s).
* **Not in the serving model, kept and flagged**: speculative decoding (InferenceX
  ``spec_method`` other than ``none``), disaggregated prefill/decode, an INVALID loadgen run;
  the ``caveat`` column says so and the calibration leaves those points out.
* **Power** is GPU board power, averaged per GPU over the samples (each GPU's mean, then
  the mean over GPUs); the log must cover exactly ``gpus`` GPUs. A log with timestamps is cut
  to each vLLM run's window (its ``date`` is written when the run ends; the window is the
  ``duration`` before it); a log without a run window can only go with a file holding one run.
* **Provenance**: file name, sha256, record index, tool and version where the file says it,
  the run date where the file says it (``--run-date`` otherwise), the flags given and the day
  of the ingest. The output file is named after the input and its sha256, so re-ingesting the
  same file rewrites the same rows.
* **Validation**: a malformed input (missing field, wrong type, unknown id, empty or
  unparseable file) stops the ingest with one :class:`BenchIngestError` naming the file, the
  record, the field and what was expected; nothing is written for any file of that call.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis import ids, paths
from analysis.errors import BenchIngestError as BenchIngestError
from analysis.errors import IngestError as IngestError
from analysis.ingest.bench_formats import (
    _VLLM_DATE,
    FORMATS,
    MAX_FILE_BYTES,
    _decode,
    _num,
    _read,
    _sha256,
    _text,
    _Where,
    detect_format,
)
from analysis.ingest.mlperf import render_csv
from analysis.schema import DATE_RE, DataValidationError, read_raw_csv
from analysis.tables.benchmarks import USER_BENCHMARKS
from analysis.tables.benchmarks.inferencex import aggregated_run_gpus
from analysis.textsafe import excerpt, one_line

__all__ = [
    "FORMATS",
    "MAX_FILE_BYTES",
    "BenchFlags",
    "BenchIngestError",
    "build_rows",
    "detect_format",
    "ingest",
    "read_power_log",
]

#: InferenceX ``hardware`` -> canonical accelerator id (the README's hardware list).
INFERENCEX_HARDWARE = {
    "h100": "H100-SXM",
    "h200": "H200",
    "b200": "B200",
    "b300": "B300",
    "gb200": "GB200",
    "gb300": "GB300",
    "mi300x": "MI300X",
    "mi325x": "MI325X",
    "mi355x": "MI355X",
}


#: InferenceX ``model`` -> canonical model id (``dsr1`` = DeepSeek-R1-0528).
INFERENCEX_MODELS = {"dsr1": "deepseek-r1"}


@dataclass(frozen=True)
class BenchFlags:
    """The metadata flags of one ``ingest bench`` call (None = not given)."""

    accelerator: str | None = None
    model: str | None = None
    precision: str | None = None
    tp: int | None = None
    gpus: int | None = None
    stack: str | None = None
    isl: float | None = None
    run_date: str | None = None

    def text(self, power: Path | None = None) -> str:
        """The flags as given, for the ``flags`` provenance column."""
        parts = []
        for name in ("accelerator", "model", "precision", "tp", "gpus", "stack", "isl", "run_date"):
            v = getattr(self, name)
            if v is not None:
                parts.append(f"--{name.replace('_', '-')} {one_line(v)}")
        if power is not None:
            parts.append(f"--power {power.name}")
        return " ".join(parts) or "(none)"


def _check_flags(where: _Where, flags: BenchFlags, need: bool) -> None:
    """Canonical ids, and presence where the file does not carry the metadata."""
    for name, kind, known in (
        ("accelerator", "accelerator", ids.ACCELERATORS),
        ("model", "model", ids.MODELS),
        ("precision", "precision", ids.PRECISIONS),
    ):
        v = getattr(flags, name)
        if v is None:
            if need:
                raise where.fail(
                    f"--{name} is required: the file does not say which {kind} ran it "
                    f"(one of {', '.join(known)})"
                )
        elif v not in known:
            raise where.fail(f"--{name}: {ids.unknown_id_message(kind, v, known)}")
    if need and flags.tp is None:
        raise where.fail("--tp is required: the file does not say the tensor parallelism")
    if flags.tp is not None and flags.tp < 1:
        raise where.fail(f"--tp {flags.tp}: expected a whole number >= 1")
    if flags.gpus is not None:
        tp = flags.tp or 1
        if flags.gpus < 1 or flags.gpus % tp:
            raise where.fail(
                f"--gpus {flags.gpus}: expected a multiple of --tp {tp} (whole replicas)"
            )
    if flags.isl is not None and not (math.isfinite(flags.isl) and flags.isl > 0):
        raise where.fail(f"--isl {flags.isl}: expected a number of tokens > 0")
    if flags.run_date is not None and not re.fullmatch(DATE_RE, flags.run_date):
        raise where.fail(f"--run-date {flags.run_date!r}: expected YYYY-MM-DD")


def _meta(flags: BenchFlags) -> dict[str, Any]:
    assert flags.accelerator and flags.tp  # checked by _check_flags(need=True)
    gpus = flags.gpus or flags.tp
    return {
        "accelerator": flags.accelerator,
        "vendor": ids.vendor_of(flags.accelerator),
        "model": flags.model,
        "precision": flags.precision,
        "tp": flags.tp,
        "gpus": gpus,
    }


def _point(meta: dict[str, Any], **values: Any) -> dict[str, Any]:
    """One normalized row (every schema column present, unknowns None)."""
    row: dict[str, Any] = dict.fromkeys(USER_BENCHMARKS.column_names)
    row.update(meta)
    row.update(values)
    row["output_tokens_per_s_per_gpu"] = row["output_tokens_per_s"] / row["gpus"]
    return row


def _serving(
    path: Path, i: int, rec: dict[str, Any], meta: dict[str, Any], tool: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A vLLM or SGLang run summary, and what the power window needs.

    The two tools share their field names; SGLang spells E2EL ``*_e2e_latency_ms``.
    """
    w = _Where(path, i)
    completed = _num(w, rec, "completed", positive=True, integer=True)
    duration = _num(w, rec, "duration", positive=True)
    total_in = _num(w, rec, "total_input_tokens", positive=True)
    total_out = _num(w, rec, "total_output_tokens", positive=True)
    out_tps = _num(w, rec, "output_throughput", positive=True)
    tpot = _num(w, rec, "median_tpot_ms", positive=True)
    rate = rec.get("request_rate")
    if isinstance(rate, str):
        if rate.strip().lower() not in {"inf", "trace"}:
            raise w.fail(f"expected a number or 'inf', got {excerpt(rate)}", "request_rate")
        rate = None
    rec_rate = dict(rec, request_rate=rate)
    e2el = "median_e2el_ms" if tool == "vllm" else "median_e2e_latency_ms"
    version = None
    stack = meta.pop("stack", None) or _text(w, rec, "backend", required=False)
    if tool == "sglang":
        info = rec.get("server_info")
        if isinstance(info, dict) and isinstance(info.get("version"), str):
            version = one_line(info["version"])
    run_date = None
    end = None
    if tool == "vllm":
        date = _text(w, rec, "date", required=False)
        if date is not None:
            if not _VLLM_DATE.match(date):
                raise w.fail(f"expected YYYYMMDD-HHMMSS, got {excerpt(date)}", "date")
            end = dt.datetime.strptime(date, "%Y%m%d-%H%M%S")  # noqa: DTZ007 (local clock)
            run_date = end.date().isoformat()
    model_name = _text(w, rec, "model_id", required=False) if tool == "vllm" else None
    assert completed is not None and total_in is not None and total_out is not None
    row = _point(
        meta,
        tool=tool,
        tool_version=version,
        stack=stack,
        served_model=model_name,
        isl_tokens=total_in / completed,
        osl_tokens=total_out / completed,
        concurrency=_num(w, rec, "max_concurrency", required=False, positive=True),
        request_rate_per_s=_num(w, rec_rate, "request_rate", required=False, positive=True),
        completed_requests=int(completed),
        duration_s=duration,
        output_tokens_per_s=out_tps,
        median_ttft_ms=_num(w, rec, "median_ttft_ms", required=False),
        p99_ttft_ms=_num(w, rec, "p99_ttft_ms", required=False),
        median_tpot_ms=tpot,
        p99_tpot_ms=_num(w, rec, "p99_tpot_ms", required=False, positive=True),
        median_itl_ms=_num(w, rec, "median_itl_ms", required=False),
        median_e2el_ms=_num(w, rec, e2el, required=False),
        run_date=run_date,
        source_row=i,
    )
    return row, {"end": end, "duration_s": duration}


def _inferencex(
    path: Path, i: int, rec: dict[str, Any], flags: BenchFlags
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One InferenceX result row (metrics in seconds, throughput already per GPU)."""
    w = _Where(path, i)
    acc, raw_model, model, precision = _inferencex_ids(w, rec)
    tp = _num(w, rec, "decode_tp", positive=True, integer=True)
    gpus = _num(w, rec, "num_decode_gpu", positive=True, integer=True)
    ep = _num(w, rec, "decode_ep", required=False, positive=True, integer=True)
    if rec.get("disagg") is not True and tp and gpus:  # tp x ep recorded: one worker ran
        gpus = float(aggregated_run_gpus(tp, ep or 1.0, gpus))
    for name, mine in (("accelerator", acc), ("model", model), ("precision", precision)):
        given = getattr(flags, name)
        if given is not None and given != mine:
            raise w.fail(f"the row is {mine} but --{name} says {given}", name)
    if flags.tp is not None and flags.tp != tp:
        raise w.fail(f"the row has decode_tp {tp:g} but --tp says {flags.tp}", "decode_tp")
    m = rec.get("metrics")
    if not isinstance(m, dict):
        raise w.fail(f"expected an object of metrics, got {type(m).__name__}", "metrics")
    out_gpu = _num(w, m, "output_tput_per_gpu", positive=True)
    isl = _num(w, rec, "isl", positive=True)
    osl = _num(w, rec, "osl", positive=True)
    assert tp is not None and gpus is not None and out_gpu is not None
    caveats = _inferencex_caveats(rec)
    power = _num(w, m, "avg_power_w", required=False, positive=True)
    date = _text(w, rec, "date", required=False)
    if date is not None and not re.fullmatch(DATE_RE, date):
        raise w.fail(f"expected YYYY-MM-DD, got {excerpt(date)}", "date")
    image = _text(w, rec, "image", required=False)
    run_url = _text(w, rec, "run_url", required=False)
    if run_url:
        caveats.append(f"run {run_url}")
    meta = {
        "accelerator": acc,
        "vendor": ids.vendor_of(acc),
        "model": model,
        "precision": precision,
        "tp": int(tp),
        "gpus": int(gpus),
    }
    row = _point(
        meta,
        tool="inferencex",
        tool_version=image,
        stack=flags.stack or _text(w, rec, "framework", required=False),
        served_model=raw_model,
        isl_tokens=isl,
        osl_tokens=osl,
        concurrency=_num(w, rec, "conc", required=False, positive=True),
        output_tokens_per_s=out_gpu * gpus,
        median_ttft_ms=_num(w, m, "median_ttft", required=False, scale=1e3),
        p99_ttft_ms=_num(w, m, "p99_ttft", required=False, scale=1e3),
        median_tpot_ms=_num(w, m, "median_tpot", positive=True, scale=1e3),
        p99_tpot_ms=_num(w, m, "p99_tpot", required=False, positive=True, scale=1e3),
        median_itl_ms=_num(w, m, "median_itl", required=False, scale=1e3),
        median_e2el_ms=_num(w, m, "median_e2el", required=False, scale=1e3),
        avg_power_w_per_gpu=power,
        power_source="InferenceX metrics.avg_power_w" if power else None,
        caveat="; ".join(caveats) or None,
        run_date=date,
        source_row=i,
    )
    return row, {"end": None, "duration_s": None}


def _inferencex_caveats(rec: dict[str, Any]) -> list[str]:
    """What an InferenceX row measured that the serving model does not model."""
    caveats = []
    spec = rec.get("spec_method")
    if spec not in (None, "none"):
        caveats.append(f"speculative decoding ({one_line(spec)}): not in the serving model")
    if rec.get("disagg") is True:
        caveats.append("disaggregated prefill/decode: not in the serving model")
    if rec.get("is_multinode") is True:
        caveats.append("multi-node run")
    return caveats


def _inferencex_ids(w: _Where, rec: dict[str, Any]) -> tuple[str, str | None, str, str]:
    """(accelerator, raw model name, model id, precision) of an InferenceX row, checked."""
    hw = _text(w, rec, "hardware")
    acc = INFERENCEX_HARDWARE.get((hw or "").lower())
    if acc is None:
        raise w.fail(
            f"unknown hardware {excerpt(hw)}; expected one of {', '.join(INFERENCEX_HARDWARE)}",
            "hardware",
        )
    raw_model = _text(w, rec, "model")
    model = INFERENCEX_MODELS.get(raw_model or "", raw_model)
    if model not in ids.MODELS:
        raise w.fail(
            f"{ids.unknown_id_message('model', str(raw_model), ids.MODELS)} (InferenceX "
            f"names: {', '.join(INFERENCEX_MODELS)})",
            "model",
        )
    precision = _text(w, rec, "precision")
    if precision not in ids.PRECISIONS:
        raise w.fail(
            ids.unknown_id_message("precision", str(precision), ids.PRECISIONS), "precision"
        )
    return acc, raw_model, str(model), str(precision)


_SUMMARY_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")


def _summary_fields(text: str) -> dict[str, str]:
    """``key : value`` lines of a loadgen summary (first wins; ``*`` banner lines skipped)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = _SUMMARY_LINE.match(line)
        if m and not line.lstrip().startswith("*"):
            fields.setdefault(m.group(1).strip(), m.group(2))
    return fields


def _summary_number(
    w: _Where, fields: dict[str, str], key: str, *, required: bool, scale: float
) -> float | None:
    """A finite number >= 0 from a loadgen summary line, times ``scale`` (None if absent)."""
    if key not in fields:
        if required:
            raise w.fail("missing line; expected `" + key + " : <number>`", key)
        return None
    try:
        x = float(fields[key])
    except ValueError:
        raise w.fail(f"expected a number, got {excerpt(fields[key])}", key) from None
    if not math.isfinite(x) or x < 0:
        raise w.fail(f"expected a finite number >= 0, got {excerpt(fields[key])}", key)
    return x * scale


def _mlperf(
    path: Path, text: str, meta: dict[str, Any], flags: BenchFlags
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A loadgen ``mlperf_log_summary.txt`` (LLM benchmarks: token latencies in ns)."""
    w = _Where(path)
    fields = _summary_fields(text)

    def num(key: str, *, required: bool = True, scale: float = 1.0) -> float | None:
        return _summary_number(w, fields, key, required=required, scale=scale)

    if fields.get("Mode") != "PerformanceOnly":
        raise w.fail(
            f"expected PerformanceOnly (an accuracy run has no throughput), got "
            f"{excerpt(fields.get('Mode'))}",
            "Mode",
        )
    scenario = fields.get("Scenario")
    if scenario not in ("Offline", "Server"):
        raise w.fail(f"expected Offline or Server, got {excerpt(scenario)}", "Scenario")
    if scenario == "Offline":
        samples, tokens = num("Samples per second"), num("Tokens per second")
    else:
        samples, tokens = num("Completed samples per second"), num("Completed tokens per second")
    assert samples is not None and tokens is not None
    if samples <= 0 or tokens <= 0:
        raise w.fail("expected positive samples and tokens per second", "Tokens per second")
    if flags.isl is None:
        raise w.fail(
            "--isl is required: a loadgen summary carries no input lengths (give the mean "
            "input tokens per sample of the dataset you ran)"
        )
    validity = fields.get("Result is")
    if validity not in ("VALID", "INVALID"):
        raise w.fail(f"expected VALID or INVALID, got {excerpt(validity)}", "Result is")
    ms = 1e-6
    tpot = num("50.00 percentile time to output token (ns)", required=False, scale=ms)
    if scenario == "Server" and tpot is None:
        raise w.fail(
            "missing line; a Server summary of an LLM benchmark reports TPOT percentiles",
            "50.00 percentile time to output token (ns)",
        )
    row = _point(
        meta,
        tool="mlperf-loadgen",
        stack=flags.stack,
        served_model=one_line(fields.get("SUT name", "")) or None,
        scenario=scenario,
        isl_tokens=flags.isl,
        osl_tokens=tokens / samples,
        request_rate_per_s=num("target_qps", required=False) if scenario == "Server" else None,
        output_tokens_per_s=tokens,
        median_ttft_ms=num("50.00 percentile first token latency (ns)", required=False, scale=ms),
        p99_ttft_ms=num("99.00 percentile first token latency (ns)", required=False, scale=ms),
        median_tpot_ms=tpot,
        p99_tpot_ms=num("99.00 percentile time to output token (ns)", required=False, scale=ms),
        median_e2el_ms=num("50.00 percentile latency (ns)", required=False, scale=ms),
        caveat="loadgen result INVALID" if validity == "INVALID" else None,
        source_row=0,
    )
    if row["request_rate_per_s"] == 0:
        row["request_rate_per_s"] = None
    return row, {"end": None, "duration_s": None}


@dataclass(frozen=True)
class PowerLog:
    """Per-sample GPU board power of a log: (timestamp or None, gpu index, watts)."""

    path: Path
    sha256: str
    tool: str
    samples: tuple[tuple[dt.datetime | None, str, float], ...]


def read_power_log(path: Path) -> PowerLog:
    """Read an ``nvidia-smi --format=csv`` or ``amd-smi metric --power --csv`` log.

    nvidia-smi: a header naming ``index`` and ``power.draw [W]`` (or ``power.draw.average``
    / ``.instant``; ``timestamp`` optional), values with or without the `` W`` unit
    (``nounits``); ``[N/A]`` samples are skipped. amd-smi: columns ``gpu`` and
    ``socket_power`` (W), ``timestamp`` optional; ``N/A`` skipped.
    """
    data = _read(path)
    text = _decode(path, data)
    w = _Where(path)
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise w.fail("empty power log; expected an nvidia-smi or amd-smi CSV with a header row")
    header = [c.strip().lower() for c in rows[0]]
    tool, power_col, gpu_col = _power_columns(w, header)
    ts_col = header.index("timestamp") if "timestamp" in header else None
    samples = []
    for n, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise w.fail(f"line {n}: {len(r)} cells but the header has {len(header)}")
        watts = _watts(w, n, r[power_col], header[power_col])
        if watts is None:
            continue
        stamp = None
        if ts_col is not None and r[ts_col].strip():
            stamp = _timestamp(w, n, r[ts_col].strip())
        samples.append((stamp, r[gpu_col].strip(), watts))
    if not samples:
        raise w.fail("no power samples (every value empty or N/A)")
    return PowerLog(path, _sha256(data), tool, tuple(samples))


def _watts(w: _Where, n: int, raw: str, column: str) -> float | None:
    """One power sample in watts (None for an N/A or empty sample)."""
    cell = raw.strip().removesuffix("W").strip()
    if cell.upper() in ("N/A", "[N/A]", ""):
        return None
    try:
        watts = float(cell)
    except ValueError:
        raise w.fail(f"line {n}: expected watts, got {excerpt(raw)}", column) from None
    if not math.isfinite(watts) or watts < 0:
        raise w.fail(f"line {n}: expected watts >= 0, got {excerpt(raw)}", column)
    return watts


def _power_columns(w: _Where, header: list[str]) -> tuple[str, int, int]:
    """(tool, power column, GPU column) of a power log's header."""
    power_col = next(
        (
            i
            for i, h in enumerate(header)
            if h.split(" [")[0] in ("power.draw", "power.draw.average", "power.draw.instant")
        ),
        None,
    )
    if power_col is not None:
        tool, gpu_col = "nvidia-smi", header.index("index") if "index" in header else None
        if gpu_col is None:
            gpu_col = next((i for i, h in enumerate(header) if h in ("pci.bus_id", "uuid")), None)
    elif "socket_power" in header:
        tool, power_col = "amd-smi", header.index("socket_power")
        gpu_col = header.index("gpu") if "gpu" in header else None
    else:
        raise w.fail(
            f"not a power log: expected an nvidia-smi column `power.draw [W]` (with `index`) "
            f"or amd-smi columns `gpu` and `socket_power`; found {header[:8]}"
        )
    if gpu_col is None:
        raise w.fail("no GPU column: expected `index` (nvidia-smi) or `gpu` (amd-smi)")
    return tool, power_col, gpu_col


def _timestamp(w: _Where, line: int, text: str) -> dt.datetime:
    """nvidia-smi ``2026/06/01 12:00:00.123``, ISO 8601, or Unix seconds."""
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return dt.datetime.strptime(text, fmt)  # noqa: DTZ007 (the host's clock)
        except ValueError:
            pass
    try:
        return dt.datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        pass
    try:
        return dt.datetime.fromtimestamp(float(text))  # noqa: DTZ006 (the host's clock)
    except (ValueError, OverflowError, OSError):
        raise w.fail(f"line {line}: unreadable timestamp {excerpt(text)}", "timestamp") from None


def _average_power(
    log: PowerLog, gpus: int, window: dict[str, Any], where: _Where
) -> tuple[float, int]:
    """Mean board power per GPU over the run window (or the whole log) and the samples used."""
    samples = log.samples
    end, dur = window.get("end"), window.get("duration_s")
    if end is not None and dur is not None and all(s[0] is not None for s in samples):
        start = end - dt.timedelta(seconds=float(dur))
        samples = tuple(s for s in samples if s[0] is not None and start <= s[0] <= end)
        if not samples:
            raise where.fail(
                f"the power log {one_line(log.path.name)} has no sample between {start} and "
                f"{end} (the run's window: its date minus its duration)"
            )
    by_gpu: dict[str, list[float]] = {}
    for _, gpu, watts in samples:
        by_gpu.setdefault(gpu, []).append(watts)
    if len(by_gpu) != gpus:
        raise where.fail(
            f"the power log {one_line(log.path.name)} covers {len(by_gpu)} GPU(s) but the run "
            f"used {gpus} (--gpus); log only the run's GPUs (nvidia-smi -i / amd-smi -g)"
        )
    means = [sum(v) / len(v) for v in by_gpu.values()]
    return sum(means) / len(means), len(samples)


def build_rows(
    sources: Sequence[Path], flags: BenchFlags, power: Path | None = None, *, today: str
) -> dict[Path, list[dict[str, Any]]]:
    """Normalized rows per input file (nothing written). ``today``: the ingest date."""
    if not sources:
        raise BenchIngestError("no input files given")
    log = read_power_log(Path(power)) if power is not None else None
    out: dict[Path, list[dict[str, Any]]] = {}
    for src in map(Path, sources):
        data = _read(src)
        text = _decode(src, data)
        kind, recs = detect_format(src, text)
        need = kind != "inferencex"
        _check_flags(_Where(src), flags, need)
        rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
        if kind == "mlperf-loadgen":
            rows.append(_mlperf(src, text, _meta(flags), flags))
        elif kind == "inferencex":
            rows += [_inferencex(src, i, r, flags) for i, r in enumerate(recs)]
        else:
            for i, r in enumerate(recs):
                meta = {**_meta(flags), "stack": flags.stack}
                rows.append(_serving(src, i, r, meta, kind))
        if log is not None and len(rows) > 1:
            windowed = all(win.get("end") is not None for _, win in rows)
            if not windowed or any(s[0] is None for s in log.samples):
                raise _Where(src).fail(
                    f"{len(rows)} runs in the file but the power log has no run window for "
                    "them (timestamps and vLLM run dates): ingest one run per --power log"
                )
        sha = _sha256(data)
        finished = []
        for row, window in rows:
            if log is not None:
                where = _Where(src, row["source_row"])
                watts, n = _average_power(log, int(row["gpus"]), window, where)
                row["avg_power_w_per_gpu"] = watts
                row["power_source"] = f"{log.tool} log {one_line(log.path.name)} ({n} samples)"
                row["power_file"] = one_line(log.path.name)
                row["power_sha256"] = log.sha256
            if row["run_date"] is None:
                row["run_date"] = flags.run_date
            row.update(
                source_file=one_line(src.name),
                source_sha256=sha,
                flags=flags.text(Path(power) if power is not None else None),
                ingested=today,
            )
            finished.append(row)
        out[src] = finished
    return out


def _target(out_dir: Path, src: Path, sha: str) -> Path:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", src.stem).strip("-.") or "run"
    return out_dir / f"{stem[:60]}-{sha[:12]}.csv"


def ingest(
    sources: Sequence[Path],
    flags: BenchFlags,
    *,
    out_dir: Path | None = None,
    power: Path | None = None,
    today: str | None = None,
) -> list[str]:
    """Normalize benchmark files into ``out_dir`` (default ``data/benchmarks/user/``).

    Every file is parsed and validated before anything is written; each becomes one CSV
    named after it and its sha256 (written atomically). Returns the lines to print.
    """
    today = today or dt.date.today().isoformat()  # noqa: DTZ011 (the ingest's own day)
    per_file = build_rows(sources, flags, power, today=today)
    out_dir = Path(out_dir) if out_dir is not None else paths.BENCHMARKS / "user"
    texts = {}
    for src, rows in per_file.items():
        text = render_csv(rows, USER_BENCHMARKS)
        target = _target(out_dir, src, rows[0]["source_sha256"])
        try:
            USER_BENCHMARKS.validate(read_raw_csv(io.StringIO(text)), target)
        except DataValidationError as err:
            raise BenchIngestError(
                f"{one_line(src)}: normalized rows fail the schema: {err}"
            ) from None
        texts[target] = (src, rows, text)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise BenchIngestError(
            f"{one_line(out_dir)}: cannot create the folder ({err.strerror})"
        ) from None
    lines = []
    for target, (src, rows, text) in texts.items():
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        Path(tmp).replace(target)
        tool = rows[0]["tool"]
        lines.append(f"{one_line(src)} ({tool}): {len(rows)} point(s) -> {target}")
    return lines
