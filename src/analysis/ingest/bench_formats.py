"""Reading a user's benchmark file: size-capped reads, numbers with their place, formats.

:mod:`analysis.ingest.bench` holds the analytical decisions (what each tool's fields mean,
the flags, power) and re-exports the public names here (``bench.detect_format`` ...).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.errors import BenchIngestError
from analysis.textsafe import excerpt, one_line

#: Largest result file read (bytes): a serving benchmark's summary is a few KB; a vLLM
#: ``--save-detailed`` file with every generated text can reach tens of MB.
MAX_FILE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class _Where:
    file: Path
    record: int | None = None

    def fail(self, what: str, field: str | None = None) -> BenchIngestError:
        rec = f"record {self.record}: " if self.record is not None else ""
        fld = f"field `{field}`: " if field else ""
        return BenchIngestError(f"{one_line(self.file)}: {rec}{fld}{what}")


def _num(
    where: _Where,
    rec: dict[str, Any],
    field: str,
    *,
    required: bool = True,
    positive: bool = False,
    integer: bool = False,
    scale: float = 1.0,
) -> float | None:
    """``rec[field]`` as a finite number (JSON number, not a string or a boolean)."""
    if field not in rec or rec[field] is None:
        if required:
            raise where.fail("missing; expected a number", field)
        return None
    v = rec[field]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise where.fail(f"expected a number, got {type(v).__name__} {excerpt(v)}", field)
    x = float(v)
    if not math.isfinite(x):
        raise where.fail(f"expected a finite number, got {excerpt(v)}", field)
    if integer and not x.is_integer():
        raise where.fail(f"expected a whole number, got {excerpt(v)}", field)
    if positive and x <= 0:
        raise where.fail(f"expected a number > 0, got {excerpt(v)}", field)
    if x < 0:
        raise where.fail(f"expected a number >= 0, got {excerpt(v)}", field)
    return x * scale


def _text(where: _Where, rec: dict[str, Any], field: str, *, required: bool = True) -> str | None:
    v = rec.get(field)
    if v is None:
        if required:
            raise where.fail("missing; expected text", field)
        return None
    if not isinstance(v, str):
        raise where.fail(f"expected text, got {type(v).__name__} {excerpt(v)}", field)
    return one_line(v).strip() or None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes:
    where = _Where(path)
    if path.is_dir():
        raise where.fail("is a folder; expected a benchmark result file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise where.fail(f"{size:,} bytes is larger than the {MAX_FILE_BYTES:,} bytes read")
        return path.read_bytes()
    except FileNotFoundError:
        raise where.fail("no such file") from None
    except OSError as err:
        raise where.fail(f"cannot read ({err.strerror})") from None


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data[:4096]:
        raise _Where(path).fail("binary file; expected JSON, JSONL or loadgen summary text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _Where(path).fail(f"not UTF-8 text (byte offset {err.start})") from None


FORMATS = ("vllm", "sglang", "inferencex", "mlperf-loadgen")


_EXPECTED = (
    "expected a vLLM `--save-result` JSON (keys date, backend, model_id, completed, "
    "duration, total_input_tokens, total_output_tokens, output_throughput, ...), an SGLang "
    "`bench_serving` JSONL (keys backend, dataset_name, completed, duration, ...), InferenceX "
    "rows (keys hardware, framework, model, precision, metrics, ...) or an MLPerf "
    "`mlperf_log_summary.txt`"
)


_VLLM_DATE = re.compile(r"^\d{8}-\d{6}$")


def _records(path: Path, text: str) -> list[Any]:
    """JSON values of a file: one JSON document, or one per non-empty line (JSONL)."""
    stripped = text.strip()
    try:
        doc = json.loads(stripped)
    except json.JSONDecodeError as whole:
        out = []
        for i, line in enumerate(stripped.splitlines()):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                if i == 0:
                    raise _Where(path).fail(
                        f"not valid JSON ({whole.msg} at line {whole.lineno}, column "
                        f"{whole.colno}); {_EXPECTED}"
                    ) from None
                raise _Where(path).fail(
                    f"line {i + 1} is not valid JSON ({err.msg} at column {err.colno})"
                ) from None
        return out
    return doc if isinstance(doc, list) else [doc]


def _kind_of(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return None
    if "hardware" in rec and "metrics" in rec:
        return "inferencex"
    if "model_id" in rec or "tokenizer_id" in rec or "num_prompts" in rec:
        return "vllm"
    if "dataset_name" in rec or "total_output_tokens_retokenized" in rec or "server_info" in rec:
        return "sglang"
    return None


def detect_format(path: Path, text: str) -> tuple[str, list[Any]]:
    """The format of a result file (one of :data:`FORMATS`) and its records."""
    where = _Where(path)
    if not text.strip():
        raise where.fail(f"empty file; {_EXPECTED}")
    if "MLPerf Results Summary" in text[:2000]:
        return "mlperf-loadgen", [text]
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        first = text.strip().splitlines()[0]
        if "power.draw" in first or "socket_power" in first:
            raise where.fail("this is a power log; give it with --power FILE")
        raise where.fail(f"not JSON and not a loadgen summary; {_EXPECTED}")
    recs = _records(path, text)
    if not recs:
        raise where.fail(f"no records; {_EXPECTED}")
    kinds = {_kind_of(r) for r in recs}
    if None in kinds:
        i = [_kind_of(r) for r in recs].index(None)
        keys = sorted(recs[i])[:12] if isinstance(recs[i], dict) else type(recs[i]).__name__
        raise _Where(path, i).fail(f"not a recognized benchmark result (found {keys}); {_EXPECTED}")
    found = {k for k in kinds if k is not None}
    if len(found) > 1:
        raise where.fail(f"records of several formats in one file ({sorted(found)})")
    return found.pop(), recs
