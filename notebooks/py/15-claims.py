# ---
# title: "The article's claims, tested"
# description: "Every checkable claim of the seed article with a verdict (supported, contradicted, mixes generations, unverifiable), the data behind it and the reasoning."
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
# - **Question:** which of the seed article's claims hold up against sourced specifications,
#   MLPerf results, prices and this report's models?
# - **Decision informed:** how much weight the article's advice deserves, and which of its
#   numbers belong to other products or generations (announced parts quoted as current).
# - Verdicts: **supported**, **contradicted**, **mixes generations** (the number is real but
#   belongs to a different product or generation than the one named) and **unverifiable**.
#   Claims about latency tiers, training and cost use the other chapters' model outputs for
#   this scenario; opened by hand (without the orchestrator) they come out unverifiable.

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml
chapter_results: dict = {}  # other chapters' key results {chapter id: {key: value}} (orchestrator injects)

# %%
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %%
from analysis import charts, claims, results  # noqa: E402

charts.enable()
audit = claims.evaluate_claims(chapter_results=chapter_results, scenario=sc)
counts = claims.verdict_counts(audit)

# %%
from IPython.display import Markdown  # noqa: E402

from analysis import data  # noqa: E402

Markdown(claims.seed_article_markdown(data.load_table("sources"), audit))

# %% [markdown]
# ### Verdicts at a glance
#
# How many of the article's claims each verdict covers. "Mixes generations" marks numbers that
# are real but quoted for the wrong product, usually an announced 2026 part (Rubin VR200,
# MI455X) presented as a current one.

# %%
#| label: fig-claim-verdicts
#| fig-cap: "The seed article's claims by verdict."
#| fig-alt: "Horizontal bar chart of the number of claims per verdict: supported, contradicted, mixes generations, unverifiable."
charts.plot_claim_verdicts(counts)

# %% [markdown]
# ### The verdicts
#
# One line per claim, in article order: the claim (shortened) and its verdict. The full
# audit, with the complete quote, what the data says, which products the quoted numbers
# really belong to and the sources, closes the appendix of the HTML report (collapsed;
# every table downloads as CSV there).

# %%
charts.table(
    claims.verdict_table(audit),
    "claims-verdicts",
    columns=["claim_id", "claim", "verdict"],
    wide_text=("claim",),
)

# %%
#| detail: "Claims whose numbers belong to another product (quoted figure, product it was attributed to, product it matches)"
charts.table(
    claims.select_claims(audit, "mixes generations"),
    "claims-mixes",
    columns=["claim_id", "claimed", "observed", "products"],
    wide_text=("claimed", "observed"),
)

# %% [markdown]
# ### Contradicted claims
#
# What the data shows instead.

# %%
charts.table(
    claims.select_claims(audit, "contradicted"),
    "claims-contradicted",
    columns=["claim_id", "quote", "observed"],
    labels={"observed": "What the data shows"},
    wide_text=("quote", "observed"),
)

# %%
#| detail: "C44/C46 tested with measurements: InferenceX disaggregated points per vendor and the median gain at matched interactivity"
from analysis.inference import deployment_fit  # noqa: E402

disagg_points = deployment_fit.measured_points(data.load_table("inferencex"))
disagg_evidence = deployment_fit.disaggregation_evidence(disagg_points)
charts.table(
    disagg_evidence,
    "claims-disaggregation",
    columns=[
        "vendor", "disaggregated_points", "accelerators", "frameworks", "matched_comparisons",
        "median_gain_pct",
    ],
)

# %%
Markdown(deployment_fit.disaggregation_verdict(disagg_evidence))

# %%
#| detail: "Disaggregated vs aggregated, per part, precision, request shape and TPOT bound"
charts.table(
    deployment_fit.disaggregation_gains(disagg_points),
    "claims-disaggregation-detail",
    columns=[
        "vendor", "accelerator", "precision", "isl", "osl", "tpot_ms_max",
        "aggregated_tok_s_gpu", "disaggregated_tok_s_gpu", "gain_pct",
    ],
)

# %% tags=["key-results"]
results.show_key_results("15-claims", {
    **claims.key_results(counts),
    **deployment_fit.evidence_key_results(disagg_evidence)})
