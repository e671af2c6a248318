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
from IPython.display import HTML  # noqa: E402

from analysis import charts, data, decision, results  # noqa: E402

register = data.load_table("assumptions")
sources = data.load_table("sources")

# %% [markdown]
# ## Assumptions register
#
# One entry per default that is not a measured fact, with its range, the evidence behind it
# and a quality rating. Other chapters link here by id (e.g. `#A-utilization`). The
# scenario's own value overrides the default where the parameter file sets it.

# %%
HTML(decision.assumptions_register_html(register, sources))

# %% [markdown]
# ## Methodology and measured model error
#
# - **Inference:** a roofline-style prefill/decode model per accelerator, calibrated on MLPerf
#   Inference; the error below is out-of-sample (MLPerf rounds the model was not fitted to).
# - **Training:** a step-time and scaling model calibrated on MLPerf Training.
# - **Cost:** owned and rented $/GPU-hour with a Monte Carlo over the assumptions' ranges;
#   the summary calls a workload "either" when P(AMD cheaper) is between 0.35 and 0.65.
#
# The errors as measured in this run (empty when the chapters were not run):

# %%
charts.table(decision.model_error_table(chapter_results), "appendix-model-error",
             columns={"measure": "Measure", "percent": "Error (%)"}, decimals=1)

# %% [markdown]
# ## Data sources
#
# Every source cited by a table in `data/` (spec values, prices, assumptions, models, the
# claims audit), with its URL and the day it was read. MLPerf rows cite their result path in
# the MLCommons repositories instead (see the data chapter).

# %%
cited = decision.load_cited_source_ids()
charts.table(decision.cited_sources(sources, cited), "appendix-sources", columns={
    "source_id": "Source", "title": "Title", "publisher": "Publisher", "url": "URL",
    "accessed": "Accessed", "kind": "Kind"}, wide_text=("title",))

# %% [markdown]
# ## Version
#
# What produced this report: package version, git commit (and whether the tree had
# uncommitted changes), renderer, and digests of the data and the parameters.

# %%
charts.table(decision.run_info_table(run_info), "appendix-version",
             columns={"item": "Item", "value": "Value"})

# %%
results.show_key_results("90-appendix", decision.appendix_key_results(register, cited, run_info))
