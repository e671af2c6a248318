"""Normalize SemiAnalysis InferenceX measurements into ``data/benchmarks/inferencex.csv``.

InferenceX (SemiAnalysis) re-runs LLM serving benchmarks continuously and publishes every
measured point with the GitHub Actions run that produced it. The project's raw copy
(``../shared/data/inferencex/``, see its README for the upstream commit and checksums) holds
the InferenceX-app fixtures: DeepSeek-R1-0528 on nine accelerators of both vendors.

Analytical decisions taken here:

* **One row per distinct measurement.** The two fixture files overlap (230 rows of
  ``benchmarks.jsonl`` are in ``benchmarks-history.jsonl``); a point is identified by its
  run, date and configuration (hardware, framework, precision, speculative method,
  parallelism, lengths, concurrency), and the first file listed wins.
* **Every row is kept, flagged.** Disaggregated, multi-node and speculative (MTP) rows are
  kept with their flags; the serving model decides what it can represent (it fits and
  scores aggregated single-node rows without speculative decoding).
* **Units carry the project's conventions**: latencies in milliseconds, throughput in
  tokens/s per GPU as InferenceX computes it (output and total), interactivity in tokens/s
  per user (1 / median TPOT).
* **Provenance per row**: the row's ``run_url`` (the measurement itself), its ``date`` (the
  document date), the fixture file and line it came from, and the access date.
* Rows missing the throughput or latency metrics the model needs fail the ingest loudly
  (no partial table is written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.errors import IngestError as IngestError
from analysis.tables.benchmarks import INFERENCEX

#: InferenceX hardware names -> canonical accelerator ids (analysis.ids).
HARDWARE = {
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
#: InferenceX model names -> canonical model ids.
MODELS = {"dsr1": "deepseek-r1"}
#: The upstream commit of the fixtures (shared README), recorded on every row.
SOURCE_COMMIT = "528c4146b8f502fcbce8df7870a935a970cbae25"

#: One measured point: the table's key (a row in both fixture files is kept once).
_IDENTITY = INFERENCEX.key


def _row(rec: dict, source: str, line: int, accessed: str) -> dict:
    where = f"{source} line {line}"
    hw = rec.get("hardware")
    if hw not in HARDWARE:
        raise IngestError(f"{where}: unknown hardware {hw!r}; known: {', '.join(HARDWARE)}")
    model = rec.get("model")
    if model not in MODELS:
        raise IngestError(f"{where}: unknown model {model!r}; known: {', '.join(MODELS)}")
    m = rec.get("metrics") or {}
    need = ("tput_per_gpu", "median_tpot", "median_ttft", "p99_tpot", "p99_ttft")
    missing = [k for k in need if not isinstance(m.get(k), int | float)]
    if missing:
        raise IngestError(f"{where}: metrics {', '.join(missing)} missing")
    out_tput = m.get("output_tput_per_gpu")
    in_tput = m.get("input_tput_per_gpu")
    acc = HARDWARE[hw]
    return {
        "date": rec["date"],
        "accelerator": acc,
        "vendor": "AMD" if acc.startswith("MI") else "NVIDIA",
        "framework": rec["framework"],
        "model": MODELS[model],
        "precision": rec["precision"],
        "spec_method": rec.get("spec_method") or "none",
        "disagg": int(bool(rec.get("disagg"))),
        "multinode": int(bool(rec.get("is_multinode"))),
        "prefill_tp": int(rec["prefill_tp"]),
        "prefill_ep": int(rec["prefill_ep"]),
        "prefill_dp_attention": int(bool(rec.get("prefill_dp_attention"))),
        "decode_tp": int(rec["decode_tp"]),
        "decode_ep": int(rec["decode_ep"]),
        "decode_dp_attention": int(bool(rec.get("decode_dp_attention"))),
        "num_prefill_gpu": int(rec["num_prefill_gpu"]),
        "num_decode_gpu": int(rec["num_decode_gpu"]),
        "isl": int(rec["isl"]),
        "osl": int(rec["osl"]),
        "conc": int(rec["conc"]),
        "tput_per_gpu": float(m["tput_per_gpu"]),
        "output_tput_per_gpu": float(out_tput) if out_tput is not None else float("nan"),
        "input_tput_per_gpu": float(in_tput) if in_tput is not None else float("nan"),
        "median_tpot_ms": float(m["median_tpot"]) * 1e3,
        "p99_tpot_ms": float(m["p99_tpot"]) * 1e3,
        "median_ttft_ms": float(m["median_ttft"]) * 1e3,
        "p99_ttft_ms": float(m["p99_ttft"]) * 1e3,
        "median_intvty": 1.0 / float(m["median_tpot"]),
        "run_url": rec["run_url"],
        "source_file": source,
        "source_line": line,
        "source_commit": SOURCE_COMMIT,
        "accessed": accessed,
    }


def normalize(sources: list[Path], accessed: str) -> pd.DataFrame:
    """The normalized table from InferenceX JSON-lines fixture files (first file wins)."""
    rows = []
    for path in sources:
        name = f"shared/data/inferencex/{Path(path).name}"
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as err:
            raise IngestError(f"cannot read {path}: {err.strerror}") from None
        for i, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise IngestError(f"{name} line {i}: not JSON ({err.msg})") from None
            rows.append(_row(rec, name, i, accessed))
    if not rows:
        raise IngestError("no InferenceX rows in " + ", ".join(map(str, sources)))
    df = pd.DataFrame(rows).drop_duplicates(list(_IDENTITY), keep="first")
    return df.sort_values(
        ["accelerator", "precision", "framework", "isl", "osl", "date", "decode_tp", "conc"],
        kind="mergesort",
    ).reset_index(drop=True)


def ingest(sources: list[Path], *, out_dir: Path, accessed: str) -> list[str]:
    """Write ``inferencex.csv`` under ``out_dir``; returns report lines."""
    df = normalize(sources, accessed)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "inferencex.csv"
    df.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")
    usable = (df["disagg"] == 0) & (df["spec_method"] == "none") & (df["multinode"] == 0)
    return [
        f"wrote {len(df)} InferenceX rows to {path} "
        f"({int(usable.sum())} aggregated single-node rows without speculative decoding)"
    ]
