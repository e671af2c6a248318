"""``ingest bench``: each fixture format gives rows with provenance; malformed input exits 1.

The fixtures (tests/data/fixtures/bench/, README there cites each format's source) are
ingested through the command line, as a user runs it; every malformed variant must give
exactly one ``error:`` message naming the file and the field, exit status 1, no traceback.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis import data, paths
from analysis.cli import app
from analysis.ingest import bench

FIX = paths.TESTS / "data" / "fixtures" / "bench"
VLLM = FIX / "vllm_mi300x_llama2-70b_c64.json"
SGLANG = FIX / "sglang_mi300x_llama2-70b.jsonl"
INFERENCEX = FIX / "inferencex_rows.jsonl"
MLPERF = FIX / "mlperf_log_summary.txt"
AMD_POWER = FIX / "amd-smi_mi300x_c64.csv"
NV_POWER = FIX / "nvidia-smi_h200_offline.csv"
FLAGS = ["--accelerator", "MI300X", "--model", "llama2-70b", "--precision", "fp8", "--tp", "8"]
runner = CliRunner()


def _ingest(tmp_path: Path, *args: str) -> pd.DataFrame:
    out = tmp_path / "out"
    res = runner.invoke(app, ["ingest", "bench", *args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return data.load_measurements([str(out)])


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_vllm_json_with_power_log(tmp_path: Path) -> None:
    rows = _ingest(tmp_path, str(VLLM), *FLAGS, "--power", str(AMD_POWER))
    assert len(rows) == 1
    r = rows.iloc[0]
    raw = json.loads(VLLM.read_text())
    assert (r["tool"], r["accelerator"], r["vendor"], r["tp"], r["gpus"]) == (
        "vllm",
        "MI300X",
        "AMD",
        8,
        8,
    )
    assert r["output_tokens_per_s_per_gpu"] == pytest.approx(raw["output_throughput"] / 8)
    assert r["isl_tokens"] == pytest.approx(raw["total_input_tokens"] / raw["completed"])
    assert r["median_tpot_ms"] == raw["median_tpot_ms"] and r["concurrency"] == 64
    # provenance: file, checksum, the run's own date, the flags, the ingest day
    assert r["source_file"] == VLLM.name and r["source_sha256"] == _sha(VLLM)
    assert r["run_date"] == "2026-11-10"
    assert "--accelerator MI300X" in r["flags"] and "--power amd-smi_mi300x_c64.csv" in r["flags"]
    assert pd.Timestamp(r["ingested"]) <= pd.Timestamp.now()
    assert r["power_file"] == AMD_POWER.name and r["power_sha256"] == _sha(AMD_POWER)
    # The run's window (date minus duration) leaves out the two 140 W idle samples.
    assert 680 < r["avg_power_w_per_gpu"] < 700
    assert "amd-smi" in r["power_source"]


def test_sglang_jsonl_one_row_per_run(tmp_path: Path) -> None:
    rows = _ingest(tmp_path, str(SGLANG), *FLAGS, "--run-date", "2026-11-11")
    assert list(rows["concurrency"]) == [32, 96, 160]
    assert list(rows["source_row"]) == [0, 1, 2]
    assert set(rows["tool_version"]) == {"0.5.4"}  # server_info.version
    assert set(rows["run_date"]) == {"2026-11-11"}
    assert rows["median_e2el_ms"].notna().all()  # SGLang's *_e2e_latency_ms


def test_inferencex_rows_carry_their_own_ids(tmp_path: Path) -> None:
    rows = _ingest(tmp_path, str(INFERENCEX))
    raw = [json.loads(x) for x in INFERENCEX.read_text().splitlines()]
    assert list(rows["accelerator"]) == ["MI355X", "MI355X", "MI300X"]
    assert set(rows["model"]) == {"deepseek-r1"}
    assert list(rows["tp"]) == [r["decode_tp"] for r in raw]
    first = rows.iloc[0]
    assert first["median_tpot_ms"] == pytest.approx(raw[0]["metrics"]["median_tpot"] * 1e3)
    assert first["avg_power_w_per_gpu"] == pytest.approx(raw[0]["metrics"]["avg_power_w"])
    assert first["tool_version"] == raw[0]["image"] and first["run_date"] == raw[0]["date"]
    assert first["flags"] == "(none)"


def test_an_aggregated_expert_parallel_row_counts_its_worker(tmp_path: Path) -> None:
    # InferenceX records an aggregated TP8 EP8 run as 64 GPUs; it ran on 8.
    raw = json.loads(INFERENCEX.read_text().splitlines()[0])
    raw.update(decode_tp=8, decode_ep=8, num_decode_gpu=64, num_prefill_gpu=64)
    src = tmp_path / "ep.jsonl"
    src.write_text(json.dumps(raw) + "\n")
    row = _ingest(tmp_path, str(src)).iloc[0]
    assert row["gpus"] == 8
    out_gpu = raw["metrics"]["output_tput_per_gpu"]
    assert row["output_tokens_per_s"] == pytest.approx(out_gpu * 8)


def test_mlperf_summary_with_nvidia_smi_log(tmp_path: Path) -> None:
    args = ["--accelerator", "H200", "--model", "llama2-70b", "--precision", "fp8", "--tp", "8"]
    rows = _ingest(tmp_path, str(MLPERF), *args, "--isl", "1024", "--power", str(NV_POWER))
    r = rows.iloc[0]
    assert (r["tool"], r["scenario"]) == ("mlperf-loadgen", "Offline")
    assert r["osl_tokens"] == pytest.approx(256, rel=1e-4)  # tokens/s over samples/s
    assert pd.isna(r["median_tpot_ms"])  # an Offline summary has no token latencies
    assert 620 < r["avg_power_w_per_gpu"] < 660 and "nvidia-smi" in r["power_source"]


def test_reingesting_rewrites_the_same_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for _ in range(2):
        res = runner.invoke(app, ["ingest", "bench", str(VLLM), *FLAGS, "--out", str(out)])
        assert res.exit_code == 0, res.output
    assert len(list(out.glob("*.csv"))) == 1


# --------------------------------------------------------------------------- malformed
def _vllm(tmp_path: Path, **change: object) -> Path:
    rec = json.loads(VLLM.read_text())
    for k, v in change.items():
        if v is None:
            rec.pop(k)
        else:
            rec[k] = v
    p = tmp_path / "run.json"
    p.write_text(json.dumps(rec))
    return p


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _infx_bad_hardware(tmp_path: Path) -> Path:
    rec = json.loads(INFERENCEX.read_text().splitlines()[0])
    rec["hardware"] = "h20"
    return _write(tmp_path, "x.jsonl", json.dumps(rec) + "\n")


def _sglang_bad_line(tmp_path: Path) -> Path:
    first = SGLANG.read_text().splitlines()[0]
    return _write(tmp_path, "s.jsonl", first + "\n{oops\n")


def _mlperf_no_tokens(tmp_path: Path) -> Path:
    text = "\n".join(
        x for x in MLPERF.read_text().splitlines() if not x.startswith("Tokens per second")
    )
    return _write(tmp_path, "mlperf_log_summary.txt", text)


CASES = {
    "missing field": (lambda t: _vllm(t, output_throughput=None), FLAGS, "output_throughput"),
    "wrong type": (lambda t: _vllm(t, completed="1000"), FLAGS, "`completed`: expected a number"),
    "negative": (lambda t: _vllm(t, duration=-3), FLAGS, "`duration`: expected a number > 0"),
    "unknown accelerator": (
        lambda t: VLLM,
        ["--accelerator", "MI300", *FLAGS[2:]],
        "Did you mean 'MI300X'",
    ),
    "unknown model": (
        lambda t: VLLM,
        [*FLAGS[:2], "--model", "llama-70b", *FLAGS[4:]],
        "unknown model 'llama-70b'",
    ),
    "missing flag": (lambda t: VLLM, FLAGS[:6], "--tp is required"),
    "unknown hardware": (_infx_bad_hardware, [], "`hardware`: unknown hardware 'h20'"),
    "empty file": (lambda t: _write(t, "empty.json", ""), FLAGS, "empty file"),
    "unparseable": (lambda t: _write(t, "bad.json", "{not json"), FLAGS, "not valid JSON"),
    "bad jsonl line": (_sglang_bad_line, FLAGS, "line 2 is not valid JSON"),
    "unknown format": (lambda t: _write(t, "o.json", '{"a": 1}'), FLAGS, "not a recognized"),
    "mlperf missing line": (
        _mlperf_no_tokens,
        [*FLAGS, "--isl", "1024"],
        "`Tokens per second`: missing line",
    ),
    "mlperf without --isl": (lambda t: MLPERF, FLAGS, "--isl is required"),
    "mlperf accuracy run": (
        lambda t: _write(
            t, "acc_summary.txt", MLPERF.read_text().replace("PerformanceOnly", "AccuracyOnly")
        ),
        [*FLAGS, "--isl", "1024"],
        "`Mode`: expected PerformanceOnly",
    ),
    "power log as result": (lambda t: AMD_POWER, FLAGS, "this is a power log"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_input_exits_1_with_one_message(tmp_path: Path, case: str) -> None:
    make, flags, expected = CASES[case]
    src = make(tmp_path)
    out = tmp_path / "out"
    res = runner.invoke(app, ["ingest", "bench", str(src), *flags, "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    assert res.output.count("error:") == 1, res.output
    assert src.name in res.output and expected in res.output, res.output
    assert not out.exists() or not list(out.iterdir())  # nothing written


def test_power_log_must_cover_the_runs_gpus(tmp_path: Path) -> None:
    res = runner.invoke(
        app,
        [
            "ingest",
            "bench",
            str(VLLM),
            *FLAGS,
            "--gpus",
            "16",
            "--power",
            str(AMD_POWER),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 1 and "covers 8 GPU(s) but the run used 16" in res.output


def test_power_log_without_a_run_window_needs_one_run(tmp_path: Path) -> None:
    log = _write(tmp_path, "p.csv", "gpu,socket_power\n" + "".join(f"{g},700\n" for g in range(8)))
    with pytest.raises(bench.BenchIngestError, match="ingest one run per --power log"):
        bench.build_rows(
            [SGLANG], bench.BenchFlags("MI300X", "llama2-70b", "fp8", 8), log, today="2026-12-01"
        )


def test_measurements_must_be_ingested_rows(tmp_path: Path) -> None:
    from analysis.params import ParamsError, parse_scenario

    base = {"name": "t", "title": "t"}
    with pytest.raises(ParamsError, match="measurements.*ingested first"):
        parse_scenario({**base, "measurements": [str(VLLM)]})
    with pytest.raises(ParamsError, match="measurements.*no such file or folder"):
        parse_scenario({**base, "measurements": ["nowhere/at/all.csv"]})
    with pytest.raises(ParamsError, match="measurements.*holds no .csv"):
        parse_scenario({**base, "measurements": [str(tmp_path)]})
