"""MLPerf ingest: both inference formats, the training table, mapping, determinism, data."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from analysis import data, ids, paths
from analysis.cli import app
from analysis.ingest import mlperf
from analysis.ingest.mlperf import IngestError
from analysis.schema import Table
from analysis.tables.benchmarks import MLPERF_INFERENCE, MLPERF_TRAINING

FIX = Path(__file__).parent / "fixtures" / "mlperf"
JSON_FIX = FIX / "inference_v5.1_summary_results.json"
CSV_FIX = FIX / "summary.csv"
TRAIN_FIX = FIX / "training_llm_time_to_train_fixture.csv"
ACCESSED = "2026-11-30"  # the day the files in ../shared/data/mlperf were collected

SHARED_FILES = (
    "inference_v4.1_summary_results.json",
    "inference_v5.1_summary_results.json",
    "inference_v6.0_summary_results.json",
    "training_llm_time_to_train_v4.0-v5.0.csv",
    "training_llm_runs_v4.0-v5.0.csv",
)
needs_shared = pytest.mark.skipif(
    not all((paths.SHARED_MLPERF / f).is_file() for f in SHARED_FILES),
    reason=f"raw MLPerf files not present in {paths.SHARED_MLPERF}",
)


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _ingest(tmp_path: Path, *sources: Path, name: str = "out") -> tuple[Path, list[str]]:
    out = tmp_path / name
    lines = mlperf.ingest(list(sources), out, accessed=ACCESSED)
    return out, lines


# ---------------------------------------------------------------- mapping
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("NVIDIA H100-SXM-80GB", "H100-SXM"),
        ("NVIDIA H100-SXM5-80GB", "H100-SXM"),
        ("NVIDIA H200-SXM-141GB", "H200"),
        ("NVIDIA H200-SXM-141GB-CTS", "H200"),
        ("Virtualized NVIDIA H200-SXM-141GB", "H200"),
        ("NVIDIA H200-SXM5-141GB", "H200"),
        ("NVIDIA B200-SXM-180GB", "B200"),
        ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200"),
        ("NVIDIA B300-SXM-270GB", "B300"),
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA Blackwell GPU (GB200)", "GB200"),
        ("NVIDIA GB300", "GB300"),
        ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "MI300X"),
        ("AMD MI300X-NPS1-SPX-192GB-750W", "MI300X"),
        ("AMD Instinct MI300X 192GB HBM3", "MI300X"),
        ("AMD Instinct MI325X 256GB HBM3e", "MI325X"),
        ("AMD Instinct MI325X 256GB HBM3E DLC", "MI325X"),
        ("AMD Instinct MI350X 288GB HBM3e", "MI350X"),
        ("AMD Instinct MI355X 288GB HBM3e", "MI355X"),
        ("AMD Instinct MI355X 288GB HBM3e (x87)", "MI355X"),
        ("AMD Instinct MI355X 288GB HBM3e (Power Cap 1000 W)", "MI355X"),
        # no canonical id: other form factors, other parts, mixed systems
        ("NVIDIA H100-NVL-94GB", None),
        ("NVIDIA H100-PCIe-80GB", None),
        ("NVIDIA H200-NVL-141GB", None),
        ("NVIDIA GH200 Grace Hopper Superchip 144GB", None),
        ("NVIDIA L40S", None),
        ("NVIDIA A100-SXM4-80GB", None),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", None),
        ("AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)", None),
        ("Intel(R) Arc Pro(R) B60", None),
        ("", None),
    ],
)
def test_map_accelerator(raw: str, expected: str | None) -> None:
    assert mlperf.map_accelerator(raw) == expected


def test_mapping_targets_are_canonical_ids() -> None:
    assert {acc for _, acc in mlperf.ACCELERATOR_RULES} <= set(ids.ACCELERATORS)


@pytest.mark.parametrize(
    ("raw", "vendor"),
    [
        ("NVIDIA GB200", "NVIDIA"),
        ("AMD Instinct MI355X 288GB HBM3e", "AMD"),
        ("TPU-v5p", None),
        ("[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo", None),
        ("Intel(R) Gaudi(R) 2 AI Accelerator", None),
        ("", None),
    ],
)
def test_detect_vendor(raw: str, vendor: str | None) -> None:
    assert mlperf.detect_vendor(raw) == vendor


# ---------------------------------------------------------------- inference formats
def test_formats_are_detected_from_content(tmp_path: Path) -> None:
    renamed = tmp_path / "results.txt"  # misleading name: content decides
    shutil.copy(CSV_FIX, renamed)
    assert mlperf.detect_format(renamed) == "inference-csv"
    assert mlperf.detect_format(JSON_FIX) == "inference-json"
    assert mlperf.detect_format(TRAIN_FIX) == "training"


def test_json_and_csv_give_the_same_rows(tmp_path: Path) -> None:
    out_json, _ = _ingest(tmp_path, JSON_FIX, name="json")
    out_csv, _ = _ingest(tmp_path, CSV_FIX, name="csv")
    a = _read(out_json / "mlperf_inference.csv")
    b = _read(out_csv / "mlperf_inference.csv")
    # Only the provenance of the row differs: file name, and the result ID that only the
    # JSON publishes.
    fixtures = "tests/data/fixtures/mlperf/"
    assert (a["source_file"] == fixtures + "inference_v5.1_summary_results.json").all()
    assert (b["source_file"] == fixtures + "summary.csv").all()
    assert (b["result_id"] == "").all() and (a["result_id"] != "").all()
    drop = ["source_file", "result_id"]
    pd.testing.assert_frame_equal(a.drop(columns=drop), b.drop(columns=drop))


def test_inference_filters_maps_and_flags(tmp_path: Path) -> None:
    out, lines = _ingest(tmp_path, JSON_FIX)
    df = _read(out / "mlperf_inference.csv")
    # 13 records: open division, edge, CPU-only and resnet rows are left out.
    assert len(df) == 9
    assert set(df["source_row"].astype(int)) == {0, 1, 2, 3, 4, 5, 6, 7, 12}
    assert set(df["accelerator"]) == {"MI300X", "H200", "GB200", ""}
    report = "\n".join(lines)
    assert "13 records, 9 kept" in report
    for reason in (
        "1 open division",
        "1 not datacenter suite",
        "1 no accelerator (CPU-only)",
        "1 not an LLM benchmark",
    ):
        assert reason in report
    # unmapped accelerators: kept with empty id, raw name kept, and reported
    unmapped = df[df["accelerator"] == ""]
    assert set(unmapped["accelerator_raw"]) == {
        "NVIDIA H200-NVL-141GB",
        "AMD Instinct MI300X 192GB HBM3 (x8), AMD Instinct MI325X 256GB HBM3e (x8)",
    }
    assert "unmapped accelerator (inference, NVIDIA): 'NVIDIA H200-NVL-141GB': 1 rows" in report
    assert "mixed accelerator types" in unmapped["caveat"].str.cat()


def test_inference_values(tmp_path: Path) -> None:
    out, _ = _ingest(tmp_path, JSON_FIX)
    df = MLPERF_INFERENCE.validate(_read(out / "mlperf_inference.csv").replace("", pd.NA))
    amd = df[(df["accelerator"] == "MI300X") & (df["scenario"] == "Offline")].set_index("benchmark")
    # -99 and -99.9 identical: both kept, the -99 row points at its -99.9 sibling
    assert amd.loc["llama2-70b-99", "duplicate_of"] == "llama2-70b-99.9"
    assert pd.isna(amd.loc["llama2-70b-99.9", "duplicate_of"])
    assert amd.loc["llama2-70b-99", "result_per_accelerator"] == pytest.approx(24498.0 / 8)
    assert amd.loc["llama2-70b-99", "tokens_per_sample"] == pytest.approx(293.7)
    assert amd.loc["llama2-70b-99", "mlperf_id"] == "datacenter/closed/AMD/8xMI300X_2xEPYC_9575F"
    h200 = df[(df["accelerator"] == "H200") & (df["scenario"] == "Server")]
    assert h200["duplicate_of"].isna().all()  # different results: not the same run
    gb = df[df["accelerator"] == "GB200"].iloc[0]
    assert (gb["nodes"], gb["accelerators_per_node"], gb["total_accelerators"]) == (18, 4, 72)
    assert gb["precision"] == "fp4" and gb["model"] == "llama3.1-405b"
    qps = df[df["units"] == "Queries/s"].iloc[0]
    assert pd.isna(qps["tokens_per_sample"]) and "Queries/s" in qps["caveat"]


def test_interactive_benchmark_name_becomes_scenario(tmp_path: Path) -> None:
    rows = list(csv.DictReader(CSV_FIX.open(encoding="utf-8")))
    row = dict(
        rows[0],
        MlperfModel="llama2-70b-interactive-99",
        Model="llama2-70b-interactive-99",
        Scenario="Server",
    )
    src = tmp_path / "summary_v5.0.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(row), lineterminator="\n")
        w.writeheader()
        w.writerow(dict(row, version="v5.0"))
    out, _ = _ingest(tmp_path, src)
    df = _read(out / "mlperf_inference.csv")
    assert df[["round", "benchmark", "scenario"]].to_numpy().tolist() == [
        ["v5.0", "llama2-70b-99", "Interactive"]
    ]


def test_output_is_deterministic(tmp_path: Path) -> None:
    first, _ = _ingest(tmp_path, JSON_FIX, TRAIN_FIX, name="a")
    second, _ = _ingest(tmp_path, TRAIN_FIX, JSON_FIX, name="b")  # order of inputs irrelevant
    for name in ("mlperf_inference.csv", "mlperf_training.csv"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    text = (first / "mlperf_inference.csv").read_text(encoding="utf-8")
    assert "\r" not in text and text.endswith("\n")


def test_every_row_carries_the_access_date(tmp_path: Path) -> None:
    out, _ = _ingest(tmp_path, JSON_FIX, TRAIN_FIX)
    for name in ("mlperf_inference.csv", "mlperf_training.csv"):
        df = _read(out / name)
        assert len(df) > 0 and (df["accessed"] == ACCESSED).all(), name


@pytest.mark.parametrize("bad", ["", "30.11.2026", "2026-11"])
def test_access_date_must_be_iso(tmp_path: Path, bad: str) -> None:
    with pytest.raises(IngestError, match="--accessed"):
        mlperf.ingest([JSON_FIX], tmp_path / "out", accessed=bad)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- loud failures
def test_round_in_name_must_match_version(tmp_path: Path) -> None:
    wrong = tmp_path / "inference_v4.1_summary_results.json"
    shutil.copy(JSON_FIX, wrong)
    with pytest.raises(IngestError, match=r"v4\.1.*v5\.1"):
        mlperf.ingest([wrong], tmp_path / "out", accessed=ACCESSED)


def test_same_round_twice_fails(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="appears twice"):
        mlperf.ingest([JSON_FIX, CSV_FIX], tmp_path / "out", accessed=ACCESSED)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_unknown_format_fails(tmp_path: Path) -> None:
    bad = tmp_path / "prices.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(IngestError, match="not a known MLPerf format"):
        mlperf.ingest([bad], tmp_path / "out", accessed=ACCESSED)


def test_missing_field_names_record(tmp_path: Path) -> None:
    records = json.loads(JSON_FIX.read_text(encoding="utf-8"))
    del records[3]["Performance_Result"]
    bad = tmp_path / "inference_v5.1_summary_results.json"
    bad.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(IngestError, match=r"record 3: missing field\(s\) \['Performance_Result'\]"):
        mlperf.ingest([bad], tmp_path / "out", accessed=ACCESSED)


def test_incoherent_accelerator_count_fails(tmp_path: Path) -> None:
    text = CSV_FIX.read_text(encoding="utf-8").splitlines()
    acc = "AMD Instinct MI300X 192GB HBM3"
    text[1] = text[1].replace(f"{acc},8,8,", f"{acc},8,7,")
    bad = tmp_path / "summary.csv"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"record 0: total accelerators 7 != nodes 1 x per"):
        mlperf.ingest([bad], tmp_path / "out", accessed=ACCESSED)


def test_unparsable_result_fails(tmp_path: Path) -> None:
    records = json.loads(JSON_FIX.read_text(encoding="utf-8"))
    records[0]["Performance_Result"] = "fast"
    bad = tmp_path / "inference_v5.1_summary_results.json"
    bad.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(IngestError, match=r"record 0: result 'fast' is not a number"):
        mlperf.ingest([bad], tmp_path / "out", accessed=ACCESSED)


def test_cli_reports_error_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "x.csv"
    bad.write_text("a\n1\n", encoding="utf-8")
    args = ["ingest", "mlperf", str(bad), "--out", str(tmp_path), "--accessed", ACCESSED]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert "not a known MLPerf format" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- training
def test_training_rows(tmp_path: Path) -> None:
    out, lines = _ingest(tmp_path, TRAIN_FIX)
    df = MLPERF_TRAINING.validate(_read(out / "mlperf_training.csv").replace("", pd.NA))
    assert len(df) == 5  # the TPU row is left out, and counted
    assert "1 not an AMD/NVIDIA accelerator" in "\n".join(lines)
    h100 = df[(df["accelerator"] == "H100-SXM") & (df["total_accelerators"] == 1024)].iloc[0]
    assert round(h100["time_to_train_min"], 2) == 1.49
    assert h100["model"] == "llama2-70b" and h100["availability"] == "available"
    clemson = df[df["submitter"] == "Clemson"].iloc[0]
    assert pd.isna(clemson["time_to_train_min"]) and "no readable run logs" in clemson["caveat"]
    dlc = df[df["accelerator_raw"].str.contains("DLC")].iloc[0]
    assert dlc["accelerator"] == "MI325X" and "liquid" in dlc["caveat"]
    assert pd.isna(df[df["accelerator_raw"] == "NVIDIA H200-NVL-141GB"]["accelerator"]).all()


def test_training_runs_cross_check(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(
        "round,submitter,system_dir,benchmark,result_file,status,run_start_ms,run_stop_ms\n"
        "v4.0,NVIDIA,eos_n128_ngc24.04_nemo,llama2_70b_lora,x/result_0.txt,success,0,1\n",
        encoding="utf-8",
    )
    with pytest.raises(IngestError, match="n_success_runs .* but the runs file"):
        mlperf.ingest([TRAIN_FIX, runs], tmp_path / "out", accessed=ACCESSED)


# ---------------------------------------------------------------- the shared raw files
@needs_shared
def test_shared_files_reproduce_committed_tables(tmp_path: Path) -> None:
    out, lines = _ingest(tmp_path, *(paths.SHARED_MLPERF / f for f in SHARED_FILES))
    for name in ("mlperf_inference.csv", "mlperf_training.csv"):
        assert (out / name).read_bytes() == (paths.BENCHMARKS / name).read_bytes(), (
            f"data/benchmarks/{name} is stale: re-run `python -m analysis ingest mlperf` on "
            f"the files in {paths.SHARED_MLPERF}"
        )
    assert any("unmapped accelerator" in line and "H100-NVL" in line for line in lines)


@needs_shared
def test_shared_known_values() -> None:
    inf = data.load_table("mlperf_inference")
    trn = data.load_table("mlperf_training")

    def one(df: pd.DataFrame, **eq: object) -> pd.Series:
        sel = df
        for k, v in eq.items():
            sel = sel[sel[k] == v]
        assert len(sel) == 1, f"{eq}: {len(sel)} rows"
        return sel.iloc[0]

    # the single-GPU H200 result is the CTS (custom thermal solution) board: mapped to H200
    h200 = one(
        inf,
        round="v4.1",
        submitter="NVIDIA",
        accelerator="H200",
        total_accelerators=1,
        benchmark="llama2-70b-99",
        scenario="Offline",
    )
    assert h200["result"] == pytest.approx(4487.88)
    assert h200["accelerator_raw"] == "NVIDIA H200-SXM-141GB-CTS" and "CTS" in h200["caveat"]
    mi300x = one(
        inf,
        round="v4.1",
        submitter="AMD",
        accelerator="MI300X",
        total_accelerators=1,
        benchmark="llama2-70b-99",
        scenario="Offline",
    )
    assert mi300x["result_per_accelerator"] == pytest.approx(3062.72)
    gb200 = one(
        trn, round="v5.0", accelerator="GB200", total_accelerators=2496, benchmark="llama31_405b"
    )
    assert round(gb200["time_to_train_min"], 2) == 27.33
    h100 = one(
        trn,
        round="v4.0",
        submitter="NVIDIA",
        accelerator="H100-SXM",
        total_accelerators=1024,
        benchmark="llama2_70b_lora",
    )
    assert round(h100["time_to_train_min"], 2) == 1.49
    x87 = inf[inf["accelerator_raw"].str.contains(r"\(x87\)", regex=True)]
    assert (x87["total_accelerators"] == 88).all() and len(x87) == 6


# ---------------------------------------------------------------- committed tables
@pytest.mark.parametrize("table", [MLPERF_INFERENCE, MLPERF_TRAINING])
def test_committed_tables_load(table: Table) -> None:
    df = data.load_table(table.name)
    assert len(df) > 0
    assert not df.duplicated(list(table.key)).any()
    assert set(df["vendor"]) == {"AMD", "NVIDIA"}
    assert not df["source_file"].str.startswith("/").any()


def test_committed_inference_coverage() -> None:
    df = data.load_table("mlperf_inference")
    assert set(df["round"]) == {"v4.1", "v5.1", "v6.0"}
    assert {"Offline", "Server", "Interactive"} == set(df["scenario"])
    dup = df[df["duplicate_of"].notna()]
    assert (dup["benchmark"] == "llama2-70b-99").all()
    # result_per_accelerator is result / total accelerators (derived, rounded to 3 decimals)
    ratio = df["result"] / df["total_accelerators"]
    assert (df["result_per_accelerator"] - ratio).abs().max() <= 0.0005 + 1e-9
