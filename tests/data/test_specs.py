"""The accelerator spec table: coverage, contract columns, and anchor values pinned to sources."""

import math

import pandas as pd
import pytest

from analysis import data, ids, paths
from analysis.schema import DataValidationError
from analysis.tables.specs import ACCELERATOR_VALUES, ANNOUNCED_COMPUTE_FIELDS, FIELD_UNITS

CONTRACT_COLUMNS = [
    "accelerator",
    "vendor",
    "name",
    "status",
    "architecture",
    "launch_year",
    "process_node",
    "package",
    "hbm_type",
    "memory_gb",
    "memory_bw_tbps",
    "fp64_dense_tflops",
    "tf32_dense_tflops",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "fp6_dense_tflops",
    "fp4_dense_tflops",
    "tdp_w",
    "scaleup_interconnect",
    "scaleup_topology",
    "scaleup_bw_gbps",
    "scaleup_domain_gpus",
    "scaleout_gbps_per_gpu",
]


@pytest.fixture(scope="module")
def specs() -> pd.DataFrame:
    return data.load_specs()


def test_one_row_per_canonical_accelerator(specs):
    assert specs["accelerator"].tolist() == list(ids.ACCELERATORS)


def test_contract_columns_and_a_source_for_every_numeric_value(specs):
    assert set(CONTRACT_COLUMNS) <= set(specs.columns)
    for field in FIELD_UNITS:
        assert specs[f"{field}_source"].notna().all(), field


def test_announced_parts_flagged_and_labelled(specs):
    announced = specs.loc[specs["status"] == "announced", "accelerator"]
    assert sorted(announced) == sorted(ids.ACCELERATORS_ANNOUNCED)
    assert specs.set_index("accelerator").at["MI455X", "label"] == "MI455X (announced)"
    shipping = data.load_specs(include_announced=False)
    assert set(shipping["accelerator"]) == set(ids.ACCELERATORS_SHIPPING)


def test_scaleup_topology_is_amds_eight_gpu_mesh_and_a_switch_elsewhere(specs):
    # AMD's 8-GPU OAM platforms join every GPU to each of its 7 peers by one Infinity
    # Fabric link; NVLink parts go through NVSwitch / NVLink Switch; Helios (MI455X) through
    # UALink-over-Ethernet switches. The models give a mesh group its links' share only.
    topo = specs.set_index("accelerator")["scaleup_topology"]
    mesh = ["MI300X", "MI325X", "MI350X", "MI355X"]
    assert (topo[mesh] == "mesh").all()
    assert (topo.drop(mesh) == "switch").all()
    assert set(topo) <= {"switch", "mesh"}


def test_every_cited_source_exists():
    known = set(data.load_sources()["source_id"])
    cited = set(data.load_spec_values()["source_id"]) | set(data.load_accelerators()["source_id"])
    assert cited <= known, cited - known


@pytest.mark.parametrize(
    ("accelerator", "field", "value", "source_id"),
    [
        ("MI300X", "memory_gb", 192, "amd-mi300x-page"),
        ("MI300X", "memory_bw_tbps", 5.3, "amd-mi300x-page"),
        ("MI300X", "bf16_dense_tflops", 1307.4, "amd-mi300x-page"),
        ("H100-SXM", "memory_bw_tbps", 3.35, "nvidia-h100-page"),
        ("H100-SXM", "bf16_dense_tflops", 1979 / 2, "nvidia-h100-page"),
        ("H200", "memory_gb", 141, "nvidia-h200-page"),
        ("H200", "memory_bw_tbps", 4.8, "nvidia-h200-page"),
        ("MI325X", "memory_gb", 256, "amd-mi325x-page"),
        ("MI325X", "memory_bw_tbps", 6.0, "amd-mi325x-page"),
        ("B200", "memory_gb", 180, "nvidia-dgx-b200-page"),
        ("MI355X", "memory_gb", 288, "amd-mi355x-page"),
        ("MI355X", "memory_bw_tbps", 8.0, "amd-mi355x-page"),
        ("GB200", "scaleup_domain_gpus", 72, "nvidia-gb200-nvl72-page"),
        ("GB300", "scaleup_domain_gpus", 72, "nvidia-gb300-nvl72-page"),
        ("GB200", "scaleup_bw_gbps", 1800, "nvidia-gb200-nvl72-page"),
        ("MI300X", "scaleup_bw_gbps", 7 * 128, "amd-cdna3-whitepaper"),
        ("MI300X", "scaleup_domain_gpus", 8, "amd-cdna3-whitepaper"),
        ("MI455X", "memory_gb", 432, "amd-mi455x-page"),
        ("VR200", "scaleup_bw_gbps", 3600, "nvidia-rubin-platform-blog"),
    ],
)
def test_anchor_values_pinned_to_their_source(specs, accelerator, field, value, source_id):
    row = specs.set_index("accelerator").loc[accelerator]
    assert row[field] == pytest.approx(value, rel=1e-3)
    assert row[f"{field}_source"] == source_id


def test_nvidia_sparse_figures_are_halved_and_labelled(specs):
    values = data.load_spec_values().set_index(["accelerator", "field"])
    row = values.loc[("H100-SXM", "bf16_dense_tflops")]
    assert row["basis"] == "sparse_halved"
    assert "1,979" in row["note"]


def test_hopper_has_no_fp4_and_it_is_nan_not_zero(specs):
    hopper = specs.set_index("accelerator").loc[
        ["H100-SXM", "H200"], ["fp4_dense_tflops", "fp6_dense_tflops"]
    ]
    assert hopper.isna().all().all()
    numeric = specs[list(FIELD_UNITS)].astype(float)
    assert not (numeric == 0).any().any()


def test_empty_values_carry_a_note():
    values = data.load_spec_values()
    empty = values[values["value"].isna()]
    assert len(empty) > 0
    assert empty["note"].notna().all()


def test_estimates_are_labelled_and_explained():
    values = data.load_spec_values()
    estimates = values[values["basis"] == "estimate"]
    assert {"scaleout_gbps_per_gpu", "tdp_w"} <= set(estimates["field"])
    assert estimates["note"].notna().all()


def test_numbers_are_internally_consistent(specs):
    s = specs.set_index("accelerator")
    # Lower precision never runs slower than higher precision where both exist.
    for hi, lo in [("bf16", "fp8"), ("fp8", "fp4"), ("tf32", "bf16")]:
        both = s[[f"{hi}_dense_tflops", f"{lo}_dense_tflops"]].dropna()
        assert (both[f"{lo}_dense_tflops"] >= both[f"{hi}_dense_tflops"]).all(), (hi, lo)
    # Rack-scale parts have a 72-GPU domain, 8-GPU boards have 8.
    assert set(s.loc[["GB200", "GB300", "VR200", "MI455X"], "scaleup_domain_gpus"]) == {72}
    assert set(
        s.loc[["H100-SXM", "H200", "B200", "B300", "MI300X", "MI355X"], "scaleup_domain_gpus"]
    ) == {8}
    assert s["launch_year"].between(2022, 2026).all()


def test_get_accelerator_and_unknown_id_message():
    assert data.get_accelerator("MI300X")["memory_gb"] == 192
    with pytest.raises(ValueError, match="Did you mean 'MI300X'"):
        data.get_accelerator("mi300")


def test_loaders_return_copies():
    first = data.load_specs()
    first.loc[0, "memory_gb"] = -1.0
    assert data.load_specs().loc[0, "memory_gb"] > 0
    assert not math.isnan(data.get_accelerator("H100-SXM")["memory_gb"])


def test_source_references_of_spec_and_model_tables():
    data.check_source_references(["accelerators", "accelerator_values", "models"])


# MLPerf coverage (which accelerator has which benchmark in which round) is keyed by the
# canonical accelerator ids of this table, so it is tested here on a small frame.
def test_mlperf_coverage_on_a_small_frame():
    inference = pd.DataFrame(
        {
            "round": ["v5.1", "v5.1", "v6.0", "v5.1"],
            "accelerator": ["MI300X", "MI300X", "MI300X", "H100-SXM"],
            "benchmark": ["llama2-70b-99"] * 4,
            "scenario": ["Offline", "Server", "Offline", "Offline"],
        }
    )
    training = pd.DataFrame(
        {"round": ["v5.0"], "accelerator": ["B200"], "benchmark": ["llama2_70b_lora"]}
    )
    coverage = data.mlperf_coverage(inference, training)
    assert coverage[["suite", "round", "accelerator", "results"]].to_numpy().tolist() == [
        ["inference", "v5.1", "H100-SXM", 1],
        ["inference", "v5.1", "MI300X", 2],
        ["inference", "v6.0", "MI300X", 1],
        ["training", "v5.0", "B200", 1],
    ]
    matrix = data.mlperf_coverage_matrix(coverage)
    assert matrix.index.tolist() == ["H100-SXM", "B200", "MI300X"]
    assert matrix.at["MI300X", ("inference", "llama2-70b-99")] == "v5.1, v6.0"
    assert matrix.at["MI300X", ("training", "llama2_70b_lora")] == ""


def test_mlperf_coverage_of_the_bundled_results():
    coverage = data.mlperf_coverage()
    assert set(coverage["accelerator"]) <= set(ids.ACCELERATORS)
    assert {"MI300X", "H100-SXM"} <= set(coverage["accelerator"])


# --- issue 14: one memory convention, possibly-sparse flags, announced parts dense ----------


def _values_raw() -> pd.DataFrame:
    """The spec value CSV as strings, the way the table reader sees it."""
    return pd.read_csv(paths.DATA / ACCELERATOR_VALUES.path, dtype=str, keep_default_na=False)


def _validate(df: pd.DataFrame) -> pd.DataFrame:
    return ACCELERATOR_VALUES.validate(df.replace("", None))


def test_bundled_spec_values_pass_the_new_checks():
    _validate(_values_raw())


@pytest.mark.parametrize(
    ("accelerator", "gb"),
    [
        ("H100-SXM", 80),
        ("H200", 141),
        ("B200", 180),  # as NVIDIA states for HGX/DGX B200 (not the 192 GB fitted)
        ("B300", 288),
        ("GB200", 186),  # NVL72 13.4 TB / 72
        ("GB300", 288),  # NVL72 20.7 TB / 72
        ("MI300X", 192),
        ("MI325X", 256),
        ("MI350X", 288),
        ("MI355X", 288),
        ("VR200", 288),
        ("MI455X", 432),
    ],
)
def test_memory_is_the_vendor_stated_capacity_never_a_usable_fraction(specs, accelerator, gb):
    row = specs.set_index("accelerator").loc[accelerator]
    assert row["memory_gb"] == pytest.approx(gb, abs=0.5)
    assert row["memory_gb_basis"] in {"published", "derived"}


def test_usable_fraction_is_applied_once_by_the_models():
    """The 'usable' GB the inference model reports is memory_gb x its fraction, once."""
    from analysis import inference, training

    assert pytest.approx(0.9) == inference.MEMORY_USABLE_FRACTION
    assert pytest.approx(0.9) == training.USABLE_MEMORY_FRACTION
    mem = float(data.get_accelerator("B300")["memory_gb"])
    usable = f"{mem * inference.MEMORY_USABLE_FRACTION:.1f} GB usable"
    with pytest.raises(ValueError, match=usable):
        # 405B in BF16 on one GPU cannot fit: the message names the usable capacity
        inference.max_throughput_per_gpu(
            "B300", "llama3.1-405b", precision="bf16", isl=1024, osl=256, gpus=1
        )


def test_every_possibly_sparse_row_says_why():
    values = data.load_spec_values()
    flagged = values[values["possibly_sparse"] == "yes"]
    assert not flagged.empty
    assert flagged["field"].str.endswith("_tflops").all()
    assert flagged["note"].str.contains("spars", case=False).all()


def test_a_possibly_sparse_row_without_a_reason_fails():
    df = _values_raw()
    mask = (df["accelerator"] == "MI355X") & (df["field"] == "memory_gb")
    df.loc[mask, "possibly_sparse"] = "yes"
    with pytest.raises(DataValidationError, match="only FLOPS fields can be sparse"):
        _validate(df)
    df = _values_raw()
    mask = (df["accelerator"] == "MI355X") & (df["field"] == "fp8_dense_tflops")
    df.loc[mask, "possibly_sparse"] = "yes"
    df.loc[mask, "note"] = "AMD figure."
    with pytest.raises(DataValidationError, match="possibly_sparse = yes needs a note"):
        _validate(df)


def test_announced_compute_rows_are_halved_or_argued_dense():
    values = data.load_spec_values()
    rows = values[
        values["accelerator"].isin(ids.ACCELERATORS_ANNOUNCED)
        & values["field"].isin(ANNOUNCED_COMPUTE_FIELDS)
        & values["value"].notna()
    ]
    assert set(rows["accelerator"]) == set(ids.ACCELERATORS_ANNOUNCED)
    ok = rows["basis"].eq("sparse_halved") | rows["note"].str.contains("dense", case=False)
    assert ok.all(), rows.loc[~ok, ["accelerator", "field"]]


def test_an_announced_figure_neither_halved_nor_argued_dense_fails():
    df = _values_raw()
    mask = (df["accelerator"] == "VR200") & (df["field"] == "fp8_dense_tflops")
    df.loc[mask, "note"] = "17.5 PFLOPS FP8 per GPU, preliminary."
    with pytest.raises(DataValidationError, match="announced part 'VR200'"):
        _validate(df)


def test_mi455x_headlines_are_read_as_sparse_and_halved(specs):
    values = data.load_spec_values().set_index(["accelerator", "field"])
    for field, headline in (("fp8_dense_tflops", 20000), ("fp4_dense_tflops", 40000)):
        row = values.loc[("MI455X", field)]
        assert row["basis"] == "sparse_halved"
        assert row["possibly_sparse"] == "yes"
        assert row["value"] == pytest.approx(headline / 2)
        assert "biggo-mi400-vs-mi350" in row["note"]
    mi455x = specs.set_index("accelerator").loc["MI455X"]
    assert mi455x["bf16_dense_tflops"] == pytest.approx(mi455x["fp8_dense_tflops"] / 2)


def test_every_source_says_how_it_was_read():
    sources = data.load_sources()
    with_url = sources["url"].notna()
    assert sources.loc[with_url, "access_via"].isin(["stored-copy", "live"]).all()
    assert sources.loc[~with_url, "access_via"].isin(["local-file", "none"]).all()
    today = pd.Timestamp.now(tz="UTC").tz_localize(None).normalize()
    assert (pd.to_datetime(sources["accessed"]) <= today).all(), "an access date in the future"


def test_a_source_read_from_a_copy_without_url_fails():
    from analysis.tables.sources import SOURCES

    df = pd.read_csv(paths.DATA / SOURCES.path, dtype=str, keep_default_na=False)
    df.loc[df["source_id"] == "tco-judgement", "access_via"] = "stored-copy"
    with pytest.raises(DataValidationError, match="stored-copy/live need a URL"):
        SOURCES.validate(df.replace("", None))
