"""Accelerator specifications: identity (one row per accelerator) and values (one row per value).

Analytical decisions taken here:

* **Long table for numbers.** ``accelerator_values.csv`` holds one row per (accelerator,
  field) with its own ``source_id``, ``basis`` and ``note``, so every number is traceable on
  its own; :func:`analysis.data.load_specs` pivots it to one row per accelerator.
* **Dense FLOPS only.** NVIDIA quotes tensor-core FLOPS "with sparsity" (2:4 structured);
  those figures are halved and the row says ``basis = sparse_halved``. AMD quotes dense
  figures (sparse in brackets), used as published.
* **Possibly sparse.** Where a source gives a FLOPS figure without saying whether it is
  dense or with 2:4 structured sparsity, and there is a reason to think it may be sparse
  (e.g. the vendor compares it one-to-one with a predecessor's with-sparsity figure),
  ``possibly_sparse = yes`` and the note says why and how the value was read (halved, or
  kept as published). Announced parts' BF16/FP8/FP4 rows either halve a vendor figure
  (``sparse_halved``) or say in the note why the figure is dense.
* **One memory convention.** ``memory_gb`` is the HBM capacity per GPU as the vendor's
  datasheet for the platform states it (H100 80, H200 141, B200 180 as NVIDIA states for
  HGX/DGX B200, B300 288, GB200 186 and GB300 288 from the NVL72 rack totals over 72 GPUs,
  MI300X 192, MI325X 256, MI350X/MI355X 288; announced VR200 288, MI455X 432). It is not
  the capacity a driver reports, and no usable fraction is taken off here: the models
  apply one (``inference.MEMORY_USABLE_FRACTION``, ``training.USABLE_MEMORY_FRACTION``,
  both in the assumptions register) exactly once.
* **FP64** is the matrix (tensor-core) FP64 peak where the vendor quotes one, else vector.
* **Per GPU, as the platform ships it.** GB200/GB300/VR200 values are per GPU in the NVL72
  rack (rack totals divided by 72: ``basis = derived``); B200/B300 are the HGX 8-GPU board.
* **Empty value** means the format is not supported in hardware (FP4/FP6 on Hopper and
  CDNA 3, TF32 on CDNA 4) or the vendor has not published it (announced parts); the note
  says which. Never zero.
* **Scale-up bandwidth** is per GPU, bidirectional (both directions added), in GB/s; for
  AMD's point-to-point Infinity Fabric it is the sum over the GPU's links, while any one
  peer pair only gets one link (``scaleup_topology = mesh``: the training model gives a
  collective among k GPUs of a D-GPU mesh (k - 1) / (D - 1) of it, a point-to-point send
  1 / (D - 1); :func:`analysis.hardware.scaleup_group_share`). **Scale-out** is the NIC
  bandwidth per GPU of the vendor's reference system (Gb/s, one direction); where no
  reference system states it, the typical value is an ``estimate``.
* Announced parts (``status = announced``) carry the vendor's preliminary figures.
"""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, KeyedRanges, Table, csv_rows, known_id_check
from analysis.tables.sources import source_id_col

#: Numeric fields of the long table, with the unit every row of that field must carry.
FIELD_UNITS: dict[str, str] = {
    "launch_year": "year",
    "memory_gb": "GB",
    "memory_bw_tbps": "TB/s",
    "fp64_dense_tflops": "TFLOPS",
    "tf32_dense_tflops": "TFLOPS",
    "bf16_dense_tflops": "TFLOPS",
    "fp8_dense_tflops": "TFLOPS",
    "fp6_dense_tflops": "TFLOPS",
    "fp4_dense_tflops": "TFLOPS",
    "tdp_w": "W",
    "scaleup_bw_gbps": "GB/s",
    "scaleup_domain_gpus": "GPUs",
    "scaleout_gbps_per_gpu": "Gb/s",
}

#: Fields that may be empty (format not supported, or not published for an announced part).
OPTIONAL_FIELDS: frozenset[str] = frozenset(
    {"fp64_dense_tflops", "tf32_dense_tflops", "fp6_dense_tflops", "fp4_dense_tflops"}
)

#: Plausible range of each field (inclusive), in its unit. Each bound sits several times
#: beyond the extremes of the table (2026: the smallest and largest values of shipping
#: and announced parts), so a typo by an order of magnitude (or a unit slip, GB/s for
#: TB/s) is refused while the next generation still fits.
FIELD_RANGES: dict[str, tuple[float, float]] = {
    # H100 (2022) is the oldest part; vendors announce about two years ahead (VR200, MI455X: 2026).
    "launch_year": (2015, 2035),
    # 80 GB (H100) to 432 GB (MI455X, announced): 16 GB (V100) to 2 TB.
    "memory_gb": (16, 2048),
    # 3.35 TB/s (H100) to 22 TB/s (VR200 HBM4): 0.5 (a PCIe card of HBM2) to 100.
    "memory_bw_tbps": (0.5, 100),
    # 1.25 (B300 vector FP64) to 163 TFLOPS (MI300X matrix FP64).
    "fp64_dense_tflops": (0.1, 1_000),
    # 494.5 to 1,250 TFLOPS; dense tensor TF32 is about half of BF16.
    "tf32_dense_tflops": (10, 25_000),
    # 989.5 (H100) to 10,000 TFLOPS (announced): 100 to 50,000.
    "bf16_dense_tflops": (100, 50_000),
    # 1,979 to 20,000 TFLOPS (FP8 is 2x BF16 on every part here).
    "fp8_dense_tflops": (100, 100_000),
    # 4,500 to 17,500 TFLOPS.
    "fp6_dense_tflops": (100, 200_000),
    # 9,000 to 40,000 TFLOPS (VR200, announced, dense).
    "fp4_dense_tflops": (100, 200_000),
    # 700 W (H100 SXM) to 1,800 W (VR200): 100 W to 5 kW per GPU.
    "tdp_w": (100, 5_000),
    # 896 GB/s (MI300X Infinity Fabric) to 3,600 GB/s (NVLink 6).
    "scaleup_bw_gbps": (10, 20_000),
    # 8 (HGX, MI300X platform) to 72 (NVL72); NVL576 (Kyber, announced) is 576: up to 1,152.
    "scaleup_domain_gpus": (1, 1_152),
    # 400 Gb/s to 2,400 Gb/s per GPU (1.6T NICs); up to 10 Tb/s.
    "scaleout_gbps_per_gpu": (10, 10_000),
}

BASES: tuple[str, ...] = ("published", "sparse_halved", "derived", "estimate")
YES_NO: tuple[str, ...] = ("yes", "no")

#: Compute fields an announced part must carry as dense figures (halved or argued dense).
ANNOUNCED_COMPUTE_FIELDS: tuple[str, ...] = (
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "fp4_dense_tflops",
)
STATUSES: tuple[str, ...] = ("shipping", "announced")
PACKAGES: tuple[str, ...] = ("monolithic", "multi-die", "chiplet")


_known_accelerator = known_id_check("accelerator", "accelerator", ids.ACCELERATORS)


def _status_matches_ids(df: pd.DataFrame) -> list[str]:
    expected = df["accelerator"].map(ids.status_of)
    bad = df["accelerator"].isin(ids.ACCELERATORS) & (df["status"] != expected)
    return [
        f"row {r}, column 'status': {df.at[r - 2, 'status']!r} but analysis.ids lists "
        f"{df.at[r - 2, 'accelerator']!r} as {expected[r - 2]!r}"
        for r in csv_rows(bad)
    ]


def _unit_matches_field(df: pd.DataFrame) -> list[str]:
    wrong = df["unit"] != df["field"].map(FIELD_UNITS)
    return [
        f"row {r}, column 'unit': {df.at[r - 2, 'unit']!r} for field "
        f"{df.at[r - 2, 'field']!r} (allowed: {FIELD_UNITS[df.at[r - 2, 'field']]!r})"
        for r in csv_rows(wrong)
    ]


def _empty_values_explained(df: pd.DataFrame) -> list[str]:
    empty = df["value"].isna()
    not_allowed = empty & ~df["field"].isin(list(OPTIONAL_FIELDS))
    unexplained = empty & df["note"].isna()
    return [
        f"row {r}, column 'value': empty value for field {df.at[r - 2, 'field']!r} "
        f"(only {', '.join(sorted(OPTIONAL_FIELDS))} may be empty)"
        for r in csv_rows(not_allowed)
    ] + [
        f"row {r}, column 'note': an empty value needs a note (not supported, or not published)"
        for r in csv_rows(unexplained & ~not_allowed)
    ]


def _adjusted_values_explained(df: pd.DataFrame) -> list[str]:
    """A halved, derived or estimated value says how it was obtained."""
    bad = df["basis"].isin(["sparse_halved", "derived", "estimate"]) & df["note"].isna()
    return [
        f"row {r}, column 'note': basis {df.at[r - 2, 'basis']!r} needs a note saying how "
        "the value was obtained"
        for r in csv_rows(bad)
    ]


def _possibly_sparse_explained(df: pd.DataFrame) -> list[str]:
    """A value flagged ``possibly_sparse`` says why, in a note that names sparsity."""
    flagged = df["possibly_sparse"] == "yes"
    says_why = df["note"].fillna("").str.contains("spars", case=False)
    not_flops = flagged & ~df["field"].str.endswith("_tflops")
    return [
        f"row {r}, column 'note': possibly_sparse = yes needs a note saying why the figure "
        "may be with sparsity and how it was read (halved or kept)"
        for r in csv_rows(flagged & ~says_why)
    ] + [
        f"row {r}, column 'possibly_sparse': only FLOPS fields can be sparse "
        f"(field {df.at[r - 2, 'field']!r})"
        for r in csv_rows(not_flops)
    ]


def _announced_compute_dense(df: pd.DataFrame) -> list[str]:
    """An announced part's BF16/FP8/FP4 value is halved from sparse or argued dense."""
    announced = df["accelerator"].isin(ids.ACCELERATORS_ANNOUNCED)
    rows = announced & df["field"].isin(ANNOUNCED_COMPUTE_FIELDS) & df["value"].notna()
    argued = df["basis"].eq("sparse_halved") | df["note"].fillna("").str.contains(
        "dense", case=False
    )
    return [
        f"row {r}, column 'note': announced part {df.at[r - 2, 'accelerator']!r} "
        f"{df.at[r - 2, 'field']!r} must be halved from a with-sparsity figure "
        "(basis sparse_halved) or say in the note why the figure is dense"
        for r in csv_rows(rows & ~argued)
    ]


ACCELERATORS = Table(
    name="accelerators",
    path="specs/accelerators.csv",
    description=(
        "One row per accelerator id: identity and descriptive fields. Numbers are in "
        "`accelerator_values`; `analysis.data.load_specs()` joins both into one row per "
        "accelerator. Announced parts are `status = announced` and carry preliminary figures."
    ),
    key=("accelerator",),
    columns=(
        Col("accelerator", "str", "Canonical accelerator id (`analysis.ids.ACCELERATORS`)."),
        Col("vendor", "str", "Vendor.", isin=ids.VENDORS),
        Col("name", "str", "Product name and the platform the values refer to."),
        Col(
            "status",
            "str",
            "`shipping` or `announced` (preliminary vendor figures).",
            isin=STATUSES,
        ),
        Col("architecture", "str", "GPU architecture (e.g. Hopper, CDNA 3)."),
        Col(
            "die",
            "str",
            "Compute die (silicon) the GPU is built on; parts sharing it differ only in "
            "clocks, power, memory and links (H100 SXM and H200: GH100; B300 and GB300: "
            "Blackwell Ultra GPU). The training model pools efficiency per die.",
        ),
        Col("process_node", "str", "Foundry process of the compute dies (+ I/O dies)."),
        Col("package", "str", "Die organisation of the package.", isin=PACKAGES),
        Col("hbm_type", "str", "HBM generation (HBM3, HBM3e, HBM4)."),
        Col("scaleup_interconnect", "str", "Scale-up (GPU-to-GPU) interconnect and generation."),
        Col(
            "scaleup_topology",
            "str",
            "`switch` (any two GPUs of the domain talk at a GPU's whole scale-up bandwidth) "
            "or `mesh` (one link per peer pair: a group of k of the domain's D GPUs uses k-1 "
            "of each GPU's D-1 links, a point-to-point send one).",
            isin=ids.SCALEUP_TOPOLOGIES,
        ),
        source_id_col("Source of name, architecture, HBM type, interconnect and its topology."),
        source_id_col("Source of process node and package.", "process_source_id"),
        source_id_col("Source of the compute die.", "die_source_id"),
        Col("note", "str", "Caveats (conflicting sources, naming).", required=False),
    ),
    checks=(_known_accelerator, _status_matches_ids),
)

ACCELERATOR_VALUES = Table(
    name="accelerator_values",
    path="specs/accelerator_values.csv",
    description=(
        "One row per numeric specification value: (accelerator, field) with value, unit, "
        "basis, source and note. FLOPS are dense peak tensor/matrix-core figures per GPU; "
        "`sparse_halved` rows halve a vendor figure quoted with 2:4 sparsity; `derived` "
        "rows divide a platform total by its GPU count; `estimate` rows are typical values "
        "where none is published. `possibly_sparse = yes` marks a FLOPS value whose source "
        "does not say dense or sparse while there is reason to think it sparse (the note says "
        "why and how it was read). `memory_gb` is the HBM capacity per GPU as the vendor's "
        "datasheet for the platform states it (rack totals over the rack's GPUs), never a "
        "usable fraction: the models apply `inference.MEMORY_USABLE_FRACTION` / "
        "`training.USABLE_MEMORY_FRACTION` once. An empty value means the format is not "
        "supported in hardware or not yet published (the note says which); never zero. Fields and "
        "units: " + ", ".join(f"`{f}` ({u})" for f, u in FIELD_UNITS.items()) + "."
    ),
    key=("accelerator", "field"),
    columns=(
        Col("accelerator", "str", "Canonical accelerator id."),
        Col("field", "str", "Which value (a column of `load_specs()`).", isin=tuple(FIELD_UNITS)),
        Col(
            "value",
            "float",
            "The value in `unit`; empty = not supported / not published.",
            required=False,
            gt=0,
        ),
        Col("unit", "str", "Unit of `value`; fixed per field."),
        Col("basis", "str", "How the value relates to the source's figure.", isin=BASES),
        source_id_col("Row of `sources.csv` the value comes from."),
        Col(
            "possibly_sparse",
            "str",
            "`yes` where the source does not say whether a FLOPS figure is dense or with "
            "2:4 sparsity and it may be sparse; the note says why and whether it was halved.",
            isin=YES_NO,
        ),
        Col("note", "str", "How it was obtained; conflicts between sources.", required=False),
    ),
    checks=(
        _known_accelerator,
        _unit_matches_field,
        _empty_values_explained,
        _adjusted_values_explained,
        _possibly_sparse_explained,
        _announced_compute_dense,
        KeyedRanges("field", ("value",), FIELD_RANGES),
    ),
)

TABLES = (ACCELERATORS, ACCELERATOR_VALUES)
