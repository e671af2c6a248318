# ---
# title: "Data: accelerators, models and benchmarks"
# description: "The sourced accelerator specifications, LLM architectures and MLPerf coverage every later chapter builds on, with announced parts marked as projections."
# jupyter:
#   jupytext:
#     formats: ipynb,py//py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# ## Overview
#
# - **Question:** what do the candidate accelerators offer on paper (memory, bandwidth, dense
#   compute per precision, power, interconnect), which models do we size them for, and where
#   do measured MLPerf results exist to check the models against?
# - **Decision informed:** none directly; this chapter fixes the inputs. Every later figure
#   traces back to a row here and, through its `source_id`, to a vendor document.
# - Vendor FLOPS quoted "with sparsity" are halved to dense; announced parts (VR200, MI455X)
#   carry the vendor's preliminary figures and are labelled "(announced)" everywhere.

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml

# %%
from analysis import params

sc = params.scenario_from_parameters(scenario)

# %%
from analysis import charts, data, hardware, results

charts.enable()
all_specs = data.load_specs()
specs = data.load_specs(accelerators=sc.accelerators)
spec_values = data.load_spec_values()
models = data.load_models()
sources = data.load_sources()
print(f"Scenario {sc.name!r}: {len(specs)} accelerators "
      f"({(specs['status'] == 'announced').sum()} announced), {len(models)} models.")

# %% [markdown]
# ## The candidates' specifications
#
# One row per accelerator of the scenario, per GPU as the platform ships it (HGX 8-GPU
# boards, AMD 8-GPU OAM platforms, NVL72 / Helios racks). Compute is dense peak TFLOPS;
# an empty cell means the format is not supported in hardware (FP4 on Hopper and CDNA 3) or
# not yet published, never zero. Scale-up bandwidth is per GPU and bidirectional.

# %%
charts.table(
    specs,
    "data-specs-compute",
    columns=[
        "label", "vendor", "architecture", "launch_year", "memory_gb", "memory_bw_tbps",
        "bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops",
    ],
    labels={"label": "Accelerator"},
)

# %% [markdown]
# Packaging, power and interconnect of the same parts:

# %%
charts.table(
    specs,
    "data-specs-platform",
    columns=[
        "label", "status", "package", "tdp_w", "scaleup_bw_gbps", "scaleup_domain_gpus",
        "scaleout_gbps_per_gpu",
    ],
    labels={"label": "Accelerator"},
)

# %% [markdown]
# ## How each value was obtained
#
# Counts of the spec table's values by basis: `published` as the source states it,
# `sparse_halved` (an NVIDIA "with sparsity" figure halved), `derived` (a platform total
# divided by its GPU count), `estimate` (no published figure; the note says how it was set).

# %%
#| detail: "Spec values by basis (derived, estimate, published) per field"
charts.table(
    data.spec_basis_counts(spec_values),
    "data-basis-counts",
    columns=["field", "derived", "estimate", "published", "sparse_halved"],
)

# %% [markdown]
# The estimates, with their reasoning. These are the values to replace first when vendors
# publish: per-GPU scale-out bandwidth for platforms without a reference system, and the
# unpublished figures of announced parts.

# %%
#| detail: "Every estimated spec value and how it was estimated"
charts.table(
    data.spec_estimates(spec_values),
    "data-estimates",
    columns=["accelerator", "field", "value", "unit", "source_id", "note"],
    wide_text=("note",),
)

# %% [markdown]
# ## Memory capacity against bandwidth
#
# Capacity decides how many GPUs a model needs; bandwidth bounds decode speed (every output
# token reads the weights and the KV cache). AMD's parts sit above NVIDIA's same-generation
# parts on capacity at similar bandwidth; the announced HBM4 parts more than double the
# bandwidth of everything shipping.

# %%
#| label: fig-data-memory-bandwidth
#| fig-cap: "HBM capacity and bandwidth per GPU; hollow squares are announced parts."
#| fig-alt: "Scatter of HBM capacity in GB against bandwidth in TB/s per GPU, coloured by vendor, announced parts hollow."
charts.plot_memory_vs_bandwidth(specs)

# %% [markdown]
# ## Dense peak compute by precision and generation
#
# Each generation roughly doubles dense compute per precision step, and FP4 only exists from
# Blackwell and CDNA 4 on. Peaks are upper bounds: the performance chapters calibrate how
# much of them real workloads reach.

# %%
#| label: fig-data-compute-precision
#| fig-cap: "Dense peak TFLOPS per GPU for BF16, FP8, FP6 and FP4, ordered by launch year; pale dashed bars are announced parts."
#| fig-alt: "Bar charts per precision of dense peak TFLOPS per accelerator, coloured by vendor, announced parts pale with dashed outlines."
charts.plot_peak_compute_by_precision(hardware.compute_by_precision(specs))

# %% [markdown]
# ## Derived hardware balance
#
# The ridge point is the arithmetic intensity (FLOP per byte of HBM traffic) above which a
# kernel is compute-bound. LLM decode at small batch does about 1-2 FLOP per weight byte,
# two orders of magnitude below every ridge point, so decode is bandwidth-bound on all of
# them. Per-watt figures divide by TDP, not measured power.

# %%
#| detail: "Derived hardware balance per accelerator (ridge points, efficiency, HBM per kW)"
charts.table(
    hardware.derived_metrics(specs),
    "data-derived",
    columns=[
        "label", "ridge_flop_per_byte_bf16", "ridge_flop_per_byte_fp8", "tflops_per_w_bf16",
        "tflops_per_w_fp8", "memory_gb_per_kw", "scaleup_domain_memory_tb",
    ],
    labels={"label": "Accelerator"},
    decimals=2,
)

# %% [markdown]
# ## Models
#
# The LLMs the report sizes hardware for, from their `config.json` and papers. The KV cache
# per token is derived from the attention layout: DeepSeek-R1's latent attention (MLA)
# caches about 69 KiB per token where a GQA model of similar depth would need megabytes;
# gpt-oss-120b's sliding-window layers add a fixed 4.5 MiB per sequence instead of growing.

# %%
#| detail: "The models' architecture (layers, heads, KV cache per token)"
charts.table(
    hardware.model_table(models),
    "data-models",
    columns=[
        "model", "total_params_b", "active_params_b", "layers", "hidden_size",
        "attention_heads", "kv_heads", "attention_type", "experts", "active_experts",
        "context_length", "kv_kib_per_token", "kv_window_mib",
    ],
)

# %% [markdown]
# ## MLPerf coverage
#
# Which accelerator has MLPerf results for which LLM benchmark, and in which rounds. These are the measurements the inference and training
# models are calibrated and checked against; an empty cell means there is no measured point
# for that pair, so the chapters' figures for it are model predictions only. The training
# columns are time-to-train results (v4.0-v5.0); MLPerf Training v5.1's pre-training
# throughput (Llama 3.1 8B on MI355X, MI350X, GB200, GB300; Llama 3.1 405B on GB300, GB200,
# B200) is read from the result logs into a held-aside table that no fit reads: chapter 20
# predicts it as a forward validation of the training model. It is not counted here.

# %%
#| detail: "MLPerf coverage: results per accelerator and benchmark"
coverage = data.mlperf_coverage()
charts.table(data.mlperf_coverage_matrix(coverage), "data-mlperf-coverage")

# %% [markdown]
# ## Sources
#
# Every value above cites a row of `data/sources.csv` (URL, publisher, access date). The spec
# and model tables cite these kinds of source:

# %%
#| detail: "Cited sources by kind"
cited = data.spec_and_model_source_ids(spec_values, data.load_accelerators(), models)
charts.table(
    data.count_sources_by_kind(cited, sources),
    "data-source-kinds",
    columns=["kind", "sources"],
)

# %% tags=["key-results"]
results.show_key_results("10-data", hardware.key_results(
    specs, all_specs, models, spec_values, cited, coverage))
