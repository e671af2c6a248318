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

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml
chapter_results: dict = {}  # other chapters' key results {chapter id: {key: value}} (orchestrator injects)
previous_results: dict = {}  # previous version's results.json of this scenario ({} = none)

# %% tags=["remove-input"]
#| echo: false
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %% tags=["remove-input"]
#| echo: false
from IPython.display import Markdown  # noqa: E402

from analysis import charts, claims, data, decision, results  # noqa: E402

charts.enable()
recs = decision.recommend(sc, chapter_results)
summary_keys = decision.key_results(recs)
Markdown(decision.summary_markdown(sc, recs, chapter_results,
                                   data_as_of=decision.data_date(data.load_table("sources"))))

# %% tags=["remove-input"]
#| echo: false
from analysis import fleet  # noqa: E402

Markdown(fleet.summary_line(chapter_results.get("40-tco", {})))

# %% tags=["remove-input"]
#| echo: false
#| label: fig-summary-costs
#| fig-cap: "AMD/NVIDIA cost ratio per workload: median and 5-95% interval of the joint Monte Carlo draws (below 1 = AMD cheaper)."
#| fig-alt: "One row per workload: a dot at the median ratio of the cheapest AMD to the cheapest NVIDIA candidate's cost, a line for its 5th-95th percentile and a dashed line at parity."
charts.plot_recommendation_costs(decision.cost_ratios(recs))

# %% [markdown]
# ## Overview
#
# - **Question:** for this scenario, should the training job and each inference latency tier
#   run on AMD Instinct or NVIDIA, by how much, and how sure are we?
# - **Decision informed:** the platform to buy or rent per workload; "either" means the cost
#   difference is inside the uncertainty (P(AMD cheaper) between 0.35 and 0.65) or, without
#   cost results, the performance margin is inside the models' measured error.
# - Every number above is read from the other chapters' key results; nothing is recomputed.
#   Announced parts are projections and never win a workload.

# %% [markdown]
# ### The numbers behind each call
#
# The cheapest shipping candidate per vendor: median cost with the 5th-95th percentile (per
# training run, or per million output tokens). Cost margin = 1 - AMD/NVIDIA: +25% means
# AMD costs a quarter less. The performance margin is the faster part's lead in
# throughput per GPU, to be read against the models' measured error.

# %%
charts.table(
    recs,
    "summary-costs",
    columns=[
        "label", "recommendation", "amd_best", "amd_cost", "amd_cost_p05", "amd_cost_p95",
        "nvidia_best", "nvidia_cost", "cost_margin_pct", "p_amd_cheaper", "perf_winner",
        "perf_margin_pct", "model_error_pct",
    ],
)

# %% [markdown]
# Break-evens in the units a buyer negotiates: the AMD 8-GPU server price (buying), the
# AMD rental quote (renting, both vendors at their pool's median quote), the throughput
# factor, and the all-in $/GPU-hour under the one price rule of the TCO chapter.

# %%
charts.table(
    recs,
    "summary-breakevens",
    columns=[
        "label", "amd_best", "current_server_price_usd", "breakeven_server_price_usd",
        "current_rental_quote_usd", "breakeven_rental_quote_usd", "breakeven_rel_throughput",
        "amd_gpu_hour_usd", "breakeven_amd_gpu_hour_usd",
    ],
    labels={"amd_best": "AMD part"},
)

# %% [markdown]
# ### The article's checklists, tested for this scenario
#
# The seed article ends with six reasons to choose NVIDIA and six to choose AMD. Each line is
# scored with this scenario's results where the data can test it; the rest say so.

# %%
#| detail: "The article's twelve checklist lines, scored for this scenario"
audit = claims.evaluate_claims(chapter_results=chapter_results, scenario=sc)
charts.table(decision.checklist(sc, chapter_results, recs, audit), "summary-checklist",
             wide_text=("line", "evidence"))

# %% [markdown]
# ### What changed since the previous version
#
# Key figures that differ from the previous published version of this scenario; "flipped"
# marks a recommendation, winner or cheapest part that changed.

# %%
changes = decision.compare_with_previous({**chapter_results, "00-summary": summary_keys}, previous_results,
                                       [tier.name for tier in sc.inference.tiers])
Markdown(decision.changes_markdown(changes, previous_results))

# %%
#| detail: "Every key figure that changed since the previous version"
charts.table(
    changes,
    "summary-changes",
    columns=["chapter", "key", "previous", "current", "change_pct", "flipped"],
)

# %% tags=["key-results"]
results.show_key_results("00-summary", decision.key_results(recs, changes))
