# ---
# title: "Appendix: assumptions, methodology, sources, version"
# description: "The assumptions register, the models and their measured error, every source cited by the data, and what produced this report version."
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
# - **Question:** what does this report assume, how good are its models, where does every
#   number come from, and exactly what produced this version?
# - **Decision informed:** how far to trust the recommendation, and what to change (a
#   parameter file, a data row) to test a different assumption.

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml
chapter_results: dict = {}  # other chapters' key results {chapter id: {key: value}} (orchestrator injects)
run_info: dict = {}  # package version, git commit, renderer, digests, version id (orchestrator injects)

# %%
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %%
from IPython.display import HTML, display  # noqa: E402

from analysis import charts, claims, data, decision, results  # noqa: E402

register = data.load_table("assumptions")
sources = data.load_table("sources")

# %% [markdown]
# ## Assumptions register
#
# One entry per default that is not a measured fact, with its range, the evidence behind it
# and a quality rating. Other chapters link here by id (e.g. `#A-utilization`). The
# scenario's own value overrides the default where the parameter file sets it.

# %%
HTML(decision.assumptions_register_html(register, sources, compact=True))

# %%
#| detail: "The register with each entry's date and rationale"
HTML(decision.assumptions_register_html(register, sources, anchors=False))

# %% [markdown]
# ## Key figures
#
# The calls and the numbers behind them in one table (every chapter's full key results
# are in the report's `results.json`).

# %%
recs = decision.recommend(sc, chapter_results)
charts.table(
    recs,
    "appendix-key-figures",
    columns=[
        "label", "recommendation", "amd_best", "nvidia_best", "cost_margin_pct",
        "cost_ratio_p05", "cost_ratio", "cost_ratio_p95", "p_amd_cheaper",
        "breakeven_rel_throughput",
    ],
    labels={
        "amd_best": "AMD", "nvidia_best": "NVIDIA",
        "breakeven_rel_throughput": "Break-even throughput (x)",
    },
)

# %% [markdown]
# ## Glossary

# %%
display(decision.glossary_bundle(), raw=True)

# %% [markdown]
# ## Methodology and measured model error
#
# - **Inference:** a roofline-style prefill/decode model per accelerator, calibrated on MLPerf
#   Inference; the error below is out-of-sample (MLPerf rounds the model was not fitted to).
#   Against the InferenceX DeepSeek-R1 concurrency sweeps (each accelerator x precision
#   predicted from the others) two errors are listed: the **report's serving model**, the
#   one the tiers use, and the **sweep model** (validated candidate, not yet used by the
#   tiers). Chapter 30's error budget shows how much of that error a better efficiency
#   level per cell could remove (little: the rest lies between lengths and engine
#   configurations within a cell, and within one configuration), and beside the prompt
#   cost the model fits it sets the prefill rates the measured times to first token imply.
# - **Training:** a step-time and scaling model calibrated on MLPerf Training v4.0-v5.0 and
#   published pre-training throughput (vendors' framework tables, Meta's Llama 3 paper);
#   each MLPerf submission enters at the global batch and steady training rate its run log
#   states (`mlperf_training_logs`); MLPerf Training v5.1's result logs of AMD and NVIDIA are
#   kept aside and predicted, never fitted.
# - **Cost:** owned and rented $/GPU-hour with a Monte Carlo over the assumptions' ranges;
#   the summary calls a workload "either" when P(AMD cheaper) is between 0.35 and 0.65.
#
# The errors as measured in this run (empty when the chapters were not run):

# %%
charts.table(
    decision.model_error_table(chapter_results),
    "appendix-model-error",
    columns=["measure", "percent"],
    decimals=1,
)

# %% [markdown]
# ## Data sources
#
# Every source cited by a table in `data/` (spec values, prices, assumptions, models, the
# claims audit), with its URL and the day it was read. MLPerf rows cite their result path in
# the MLCommons repositories instead (see the data chapter).

# %%
cited = decision.load_cited_source_ids()
display(decision.sources_list_bundle(decision.cited_sources(sources, cited)), raw=True)

# %%
#| detail: "The claims audit in full: one row per claim of the seed article with quote, verdict, products, reasoning and sources"
audit = claims.evaluate_claims(chapter_results=chapter_results, scenario=sc)
charts.table(
    audit,
    "claims-audit",
    columns=["claim_id", "topic", "quote", "verdict", "products", "reasoning", "data_sources"],
    wide_text=("quote", "reasoning"),
)

# %%
#| detail: "Version: what produced this report (package, git commit and whether the tree had uncommitted changes, renderer, digests of the data and the parameters)"
charts.table(decision.run_info_table(run_info), "appendix-version", columns=["item", "value"])

# %% tags=["key-results"]
results.show_key_results("90-appendix", decision.appendix_key_results(register, cited, run_info))
