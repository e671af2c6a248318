# ---
# title: "Total cost of ownership"
# description: "Owned vs rented $/GPU-hour, cost per million tokens per latency tier and per training run, with uncertainty, break-even points and sensitivity."
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
# - **Question:** what does a useful GPU-hour, a million tokens in each latency tier and the
#   scenario's training run cost on each candidate, bought or rented, and how sure are we?
# - **Decision informed:** which vendor is cheaper for the scenario, with what probability,
#   and what would have to change (price, utilization, throughput, porting effort) to flip it.
# - Every assumption used links to its entry in the assumptions register (appendix), e.g.
#   [utilization](90-appendix.ipynb#A-utilization), [porting effort](90-appendix.ipynb#A-porting-effort-amd).

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml

# %%
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %%
import pandas as pd  # noqa: E402

from analysis import charts, data, inference, measurements, results, tco, training  # noqa: E402

charts.enable()
# Serving throughput is drawn with the held-out error of each accelerator's prediction
# case (chapter "Inference": measured combination, new accelerator or new workload), per
# tier the larger of that and the held-out error of how the tier's figure was made where
# InferenceX measured the model (a measured point, the deployment model, the serving path
# under a TPOT bound); the team's own runs (scenario key `measurements`) correct the
# measured accelerators' throughput and replace that error with the runs' residual
# (chapter "Your measurements").
mcal = measurements.calibrate(data.load_measurements(sc.measurements))
cases = inference.prediction_cases(sc.accelerators, sc.inference.model)
sigmas = measurements.serving_sigmas(mcal, sc, cases=cases)
inp, inp_buy, inp_rent = (tco.with_throughput_sigmas(i, sigmas) for i in tco.scenario_inputs(sc))
tiers = measurements.apply_to_tiers(inference.evaluate_tiers(sc, with_cost=False), mcal, sc)
tiers = measurements.with_tier_sigmas(tiers, measurements.tier_errors(tiers, mcal, sc, cases=cases))
train = training.evaluate_training(sc)
print(f"Scenario {sc.name!r}: mode = {sc.cost.mode}, rental pool = {sc.cost.rental_pool}, "
      f"{sc.cost.mc_draws:,} Monte Carlo draws (seed {sc.cost.seed}).")

# %% [markdown]
# ## What the data can and cannot price
#
# A candidate that lacks what the scenario's mode needs (a purchase price and server power
# to buy; a quote in the chosen rental pool to rent) is left out of that comparison and
# named here, never priced by default.

# %%
for gap in tco.mode_gaps(sc, inp) or ["every shipping candidate has what this mode needs"]:
    print(gap)

# %% [markdown]
# ## Assumptions used
#
# The defaults below come from the assumptions register; the scenario may override the
# value, and the Monte Carlo draws within the range. The `assumption_id` column links to
# the register entry (`#A-...`) in the appendix.

# %%
#| detail: "The cost assumptions used (value, range, register entry)"
charts.table(
    inp.globals.reset_index(),
    "tco-assumptions",
    columns=["input", "value", "low", "high", "assumption_id"],
)

# %% [markdown]
# ## Buy or rent: $/GPU-hour
#
# All-in owned cost per paid GPU-hour (capital, maintenance, power, colocation, software,
# amortized porting) next to the median rental quote (plus the same porting cost). Rented
# prices are the quotes in `data/prices/rental_quotes.csv`; accelerators without a quote or a
# purchase price show empty cells rather than a guess.

# %%
costs = tco.gpu_hour_cost(sc, inp)
charts.table(
    costs,
    "tco-owned",
    columns=[
        "accelerator", "vendor", "owned_capital", "owned_power", "owned_colocation",
        "owned_maintenance", "owned_platform", "owned_gpu_hour_usd",
    ],
    decimals=3,
    caption="Owned cost per paid GPU-hour, by component (USD)",
)

# %%
#| detail: "Rented cost per paid GPU-hour: median quote plus porting, quote range"
charts.table(
    costs,
    "tco-rented",
    columns=[
        "accelerator", "rented_gpu_hour_usd", "rent_quote_min", "rent_quote_max", "n_quotes",
        "quote_note",
    ],
    caption="Rented cost per paid GPU-hour (USD)",
    wide_text=("quote_note",),
)

# %% [markdown]
# The quotes behind the rented figures: only the scenario's pool (one provider class, one
# term) is compared, because hyperscaler list prices run 2-4x neocloud rates. The date is
# the price's own; quotes older than 9 months are flagged.

# %%
#| detail: "The rental quotes in the scenario's pool"
from analysis import data  # noqa: E402

pool = tco.pool_quotes(data.load_table("rental_quotes"), sc.cost.rental_pool)
pool = pool[pool["accelerator"].isin(sc.accelerators)]
charts.table(
    pool.sort_values(["accelerator", "price_usd_per_gpu_hour"]),
    "tco-pool-quotes",
    columns=[
        "accelerator", "provider", "instance", "price_usd_per_gpu_hour", "quote_date", "stale",
        "source_id",
    ],
    caption=f"Rental quotes in the pool {sc.cost.rental_pool}",
)

# %% [markdown]
# ## Cross-check: SemiAnalysis' published TCO tiers
#
# InferenceX prices its cost per token with SemiAnalysis' AI Cloud TCO model: owning as a
# hyperscaler, owning as a neocloud giant, and a 3-year rental. The ratio is ours over
# theirs; B300 and GB300 are placeholders there (1.2x B200 / GB200). Differences come from
# the inputs named in the last column, and from AMD's porting cost, which theirs omits.

# %%
#| detail: "Cross-check against SemiAnalysis' published TCO tiers"
xc = tco.tco_crosscheck(costs, data.load_table("tco_benchmarks"))
charts.table(
    xc,
    "tco-crosscheck",
    columns=[
        "accelerator", "tier", "published_usd", "estimate", "ours", "ours_usd", "ratio", "why",
    ],
    labels={
        "tier": "SemiAnalysis tier", "estimate": "Placeholder", "ratio": "Ours / published",
    },
    decimals={"ratio": 2},
    wide_text=("why",),
)

# %%
#| label: fig-tco-buy-vs-rent
#| fig-cap: "Owned (all-in) versus rented (median quote) USD per paid GPU-hour."
#| fig-alt: "Paired horizontal bars per accelerator comparing owned and rented cost per GPU-hour."
charts.plot_buy_vs_rent(costs)

# %% [markdown]
# ## Cost per million tokens by latency tier
#
# Tokens/s per GPU come from the inference chapter's model (`inference.evaluate_tiers`);
# cost per useful GPU-hour (paid cost / utilization) is spread over those tokens. The
# interval is the 5th-95th percentile of the joint Monte Carlo over every ranged input,
# including the throughput model's error ([A-throughput-error](90-appendix.ipynb#A-throughput-error)).
# The point column is the price rule the inference chapter prints (defaults, median quote).
# In the HTML report the figure's sliders set the AMD and NVIDIA $/GPU-hour and the
# utilization and recompute each point from the modelled throughputs.

# %%
#| detail: "Monte Carlo $/GPU-hour per accelerator (p5, median, p95)"
sim = tco.simulate(sc, tiers, train, inputs=inp)
charts.table(
    sim.gpu_hour,
    "tco-gpu-hour-mc",
    columns=[
        "accelerator", "vendor", "mode", "gpu_hour_usd_p05", "gpu_hour_usd",
        "gpu_hour_usd_p95", "useful_gpu_hour_usd",
    ],
    labels={"mode": "Mode", "gpu_hour_usd": "Median (USD/GPU-h)"},
    decimals=3,
)

# %%
#| detail: "Cost per million output tokens per tier as a table"
charts.table(
    sim.tiers,
    "tco-tiers",
    columns=[
        "tier", "accelerator", "vendor", "status", "tokens_per_s_per_gpu", "cost_per_mtok_p05",
        "cost_per_mtok", "cost_per_mtok_p95", "cost_per_mtok_point",
    ],
)

# %%
#| label: fig-tco-cost-per-mtok
#| fig-cap: "Cost per million output tokens per accelerator and latency tier: price-rule point (sliders in the HTML) and 5-95% Monte Carlo interval; announced parts apart."
#| fig-alt: "Faceted interval chart of cost per million tokens for each accelerator in each latency tier."
charts.plot_cost_per_mtok(sim.tiers, tco.price_rule(sc, inp), sc.cost.utilization)

# %% [markdown]
# ## Which vendor is cheaper, and how likely
#
# Per tier, the cheapest shipping AMD and NVIDIA candidates (by median) are compared draw by
# draw: `p_amd_cheaper` is the share of draws in which the AMD candidate costs less.

# %%
charts.table(
    sim.tier_summary,
    "tco-tier-summary",
    columns=["tier", "cheapest", "cheapest_amd", "cheapest_nvidia", "p_amd_cheaper"],
    decimals=3,
)

# %%
charts.table(
    sim.training,
    "tco-training",
    columns=[
        "accelerator", "vendor", "gpu_hours", "train_cost_usd_p05", "train_cost_usd",
        "train_cost_usd_p95",
    ],
    decimals=0,
    caption="Cost of the scenario's training run",
)

# %%
charts.table(
    pd.DataFrame([sim.training_summary]),
    "tco-training-summary",
    columns=["cheapest", "cheapest_amd", "cheapest_nvidia", "p_amd_cheaper"],
    decimals=3,
    caption="Training run: which vendor is cheaper",
)

# %% [markdown]
# ## Break-even: "AMD wins if ..."
#
# For the cheapest AMD/NVIDIA pair of each tier and of the training run: the AMD all-in
# $/GPU-hour, the AMD utilization, the relative throughput and the porting effort at which
# both cost the same (solved on the default inputs; other inputs held).

# %%
#| detail: "Every break-even as a sentence (the summary tabulates the main ones)"
be = tco.breakeven_table(sim, inp, inp_rent if sc.cost.mode == "buy" else inp_buy)
charts.table(be, "tco-breakeven", columns=["workload", "statement"])

# %% [markdown]
# ## Sensitivity
#
# Each input swung across its range ([register](90-appendix.ipynb#A-utilization) low/high; price tables for
# prices and quotes; an accelerator's serving throughput over the 5-95 % range of the error
# its tier figure is drawn with, as in the Monte Carlo above), all others at their defaults:
# the AMD-minus-NVIDIA cost per million tokens in the tightest tier where both vendors have
# a feasible candidate (its cheapest pair).

# %%
#| detail: "The sensitivity table behind the tornado chart"
tornado_title, sens = tco.tier_sensitivity(sim, inp)
charts.table(
    sens.head(tco.TORNADO_TOP_N),
    "tco-sensitivity",
    columns=["input", "assumption_id", "low", "high", "diff_low", "diff_high"],
)

# %%
#| label: fig-tco-tornado
#| fig-cap: "Sensitivity of the AMD-minus-NVIDIA cost per million tokens (tightest tier) to each input."
#| fig-alt: "Tornado chart of the cost difference between the cheapest AMD and NVIDIA candidates as each input moves from low to high."
charts.plot_cost_tornado(sens, tornado_title)

# %% [markdown]
# ## The article's three cost claims, in numbers
#
# The verdicts are given in the claims chapter; here are the numbers for this scenario:
#
# 1. *"AMD's hardware typically costs 20-30% less than equivalent NVIDIA configurations"*:
#    `hardware_discount_pct` (purchase price) and `owned_discount_pct` (all-in $/GPU-hour).
# 2. *"NVIDIA consistently outperforms AMD in terms of performance-per-dollar within the
#    rental market, irrespective of latency requirements"*: the rental-mode comparison per tier.
# 3. *"Integration time and tooling mismatches can outweigh hardware price differences"*:
#    AMD's amortized porting cost per GPU-hour against its hardware saving per GPU-hour
#    ([A-porting-effort-amd](90-appendix.ipynb#A-porting-effort-amd), [A-engineer-month-cost](90-appendix.ipynb#A-engineer-month-cost)).

# %%
#| detail: "The article's hardware-price claim, in numbers"
claims = tco.claim_numbers(costs, inp_buy)
charts.table(
    claims,
    "tco-claims-prices",
    columns=[
        "amd", "nvidia", "amd_price_per_gpu_usd", "nvidia_price_per_gpu_usd",
        "hardware_discount_pct",
    ],
)

# %%
#| detail: "The article's hourly-cost claim, in numbers"
charts.table(
    claims,
    "tco-claims-hourly",
    columns=[
        "amd", "nvidia", "amd_owned_gpu_hour_usd", "nvidia_owned_gpu_hour_usd",
        "owned_discount_pct", "amd_rent_median_usd", "nvidia_rent_median_usd",
        "rent_discount_pct", "hardware_saving_per_gpu_hour_usd",
        "amd_porting_per_gpu_hour_usd", "hidden_costs_exceed_gap",
    ],
)

# %%
sim_rent = tco.rent_simulation(sc, sim, tiers, inp_rent)
charts.table(
    sim_rent.tier_summary,
    "tco-rent-tiers",
    columns=["tier", "cheapest", "cheapest_amd", "cheapest_nvidia", "p_amd_cheaper"],
    labels={"cheapest": "Cheapest (rented)"},
    decimals=3,
)

# %% [markdown]
# ## One vendor or a split fleet
#
# The training job plus a year of the tightest tier's serving (what the fleet serves at its
# utilization). The split runs each workload on its cheaper vendor (else the article's:
# NVIDIA training, AMD serving) and pays a second stack
# ([A-split-stack-engineers](90-appendix.ipynb#A-split-stack-engineers),
# [A-split-ops-engineers](90-appendix.ipynb#A-split-ops-engineers)) and the idle training
# capacity it can no longer lend to serving
# ([A-split-fungibility-recovery](90-appendix.ipynb#A-split-fungibility-recovery)).

# %%

from analysis import fleet  # noqa: E402

plan = fleet.compare_plans(sc, tiers, train, data.load_assumptions(), inputs=inp)
charts.table(
    plan.plans if plan else fleet.empty_plans(),
    "tco-fleet-plans",
    columns=[
        "plan", "training_on", "serving_on", "cost_usd", "cost_usd_p05", "cost_usd_p95",
        "p_cheapest",
    ],
)

# %%
#| detail: "What the split adds each year, itemized (median and 5-95% range)"
charts.table(
    plan.split_items if plan else fleet.empty_items(),
    "tco-split-costs",
    columns=["item", "cost_usd", "cost_usd_p05", "cost_usd_p95"],
    labels={"item": "What the split adds (a year)"},
)

# %% tags=["key-results"]
key = {**tco.key_results(sim, be, sc.cost.mode, claims, sim_rent), **fleet.key_results(plan)}
results.show_key_results("40-tco", key)
