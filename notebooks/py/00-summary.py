# ---
# title: "Executive summary"
# description: "Which platform fits this scenario's training job and each inference latency tier, by how much, how sure we are, and what would flip the call."
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
# - **Question:** for this scenario, should the training job and each inference latency tier
#   run on AMD Instinct or NVIDIA, by how much, and how sure are we?
# - **Decision informed:** the platform to buy or rent per workload; "either" means the cost
#   difference is inside the uncertainty (P(AMD cheaper) between 0.35 and 0.65) or, without
#   cost results, the performance margin is inside the models' measured error.
# - Every number below is read from the other chapters' key results; nothing is recomputed.
#   Announced parts (VR200, MI455X) are projections and never win a workload.

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml
chapter_results: dict = {}  # other chapters' key results {chapter id: {key: value}} (orchestrator injects)
previous_results: dict = {}  # previous version's results.json of this scenario ({} = none)

# %%
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %%
from IPython.display import Markdown  # noqa: E402

from analysis import charts, claims, decision, results  # noqa: E402

charts.enable()
recs = decision.recommend(sc, chapter_results)
summary_keys = decision.key_results(recs)
Markdown(decision.summary_markdown(sc, recs, chapter_results))

# %% [markdown]
# ### Recommendation per workload
#
# The call per workload, on what basis, and what would flip it:

# %%
charts.table(recs, "summary-recs", columns={
    "label": "Workload", "recommendation": "Call", "basis": "Basis",
    "flip": "What would flip it"}, wide_text=("flip",))

# %% [markdown]
# The cheapest shipping candidate per vendor: median cost with the 5th-95th percentile (the
# unit is per job for training, per million output tokens for serving). A positive cost
# margin means AMD is cheaper by that much; the performance margin is the faster part's lead
# in throughput per GPU, to be read against the models' measured error.

# %%
charts.table(recs, "summary-costs", columns={
    "label": "Workload", "cost_unit": "Unit", "amd_best": "AMD best",
    "amd_cost": "AMD median", "amd_cost_p05": "AMD p5", "amd_cost_p95": "AMD p95",
    "nvidia_best": "NVIDIA best", "nvidia_cost": "NVIDIA median",
    "nvidia_cost_p05": "NVIDIA p5", "nvidia_cost_p95": "NVIDIA p95",
    "cost_margin_pct": "Cost margin (%)", "perf_winner": "Faster",
    "perf_margin_pct": "Perf. margin (%)", "model_error_pct": "Model error (%)"})

# %%
#| label: fig-summary-costs
#| fig-cap: "Cheapest AMD vs cheapest NVIDIA candidate per workload, relative cost with 5-95% intervals."
#| fig-alt: "Dots per vendor and workload at the median cost relative to the cheapest NVIDIA candidate, with lines for the 5th to 95th percentile."
charts.plot_recommendation_costs(recs)

# %% [markdown]
# ### The article's checklists, tested for this scenario
#
# The seed article ends with six reasons to choose NVIDIA and six to choose AMD. Each line is
# scored with this scenario's results where the data can test it; the rest say so.

# %%
audit = claims.evaluate_claims(chapter_results=chapter_results, scenario=sc)
charts.table(decision.checklist(sc, chapter_results, recs, audit), "summary-checklist",
             wide_text=("line", "evidence"))

# %% [markdown]
# ## What changed since the previous version
#
# Key figures that differ from the previous published version of this scenario; `flipped`
# marks a recommendation, winner or cheapest part that changed.

# %%
changes = decision.compare_with_previous({**chapter_results, "00-summary": summary_keys}, previous_results,
                                       [tier.name for tier in sc.inference.tiers])
Markdown(decision.changes_markdown(changes, previous_results))

# %%
charts.table(changes, "summary-changes", columns={
    "chapter": "Chapter", "key": "Key figure", "previous": "Previous", "current": "Current",
    "change_pct": "Change (%)", "flipped": "Flipped"})

# %%
results.show_key_results("00-summary", decision.key_results(recs, changes))
