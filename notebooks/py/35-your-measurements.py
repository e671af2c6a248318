# ---
# title: "Your measurements"
# description: "Your own serving benchmark runs beside the model: what was ingested, how far the model was from them, and how the tier winners and P(AMD cheaper) moved once the report calibrated on them."
# requires: [measurements]
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
# - **Question:** what do your own benchmark runs (scenario key `measurements`, rows
#   written by `python -m analysis ingest bench`) say about the model, and what do they
#   change in the decision?
# - **Decision informed:** how much to trust the tier winners and P(AMD cheaper) on the
#   parts you measured; the inference and TCO chapters already use the corrected model.
# - **Method:** each run is compared with the model at its own accelerator, model,
#   precision, tensor parallelism, input/output lengths and median TPOT. Per measured
#   combination the correction is the geometric mean of measured / modelled, shrunk towards
#   no correction by a prior weight ([A-measurement-prior-weight](#A-measurement-prior-weight)):
#   the more runs, the more they count. The runs' residual around the corrected model is
#   that combination's throughput error in the Monte Carlo (never below
#   [A-measurement-sigma-floor](#A-measurement-sigma-floor)).
# - This chapter appears only when the scenario lists measurements.

# %% tags=["parameters"]
scenario: dict = {}  # the Scenario as plain data (papermill injects it); {} = params/default.yaml

# %%
from analysis import params  # noqa: E402 (after the parameters cell, per the notebook contract)

sc = params.scenario_from_parameters(scenario)

# %%
from IPython.display import Markdown  # noqa: E402

from analysis import charts, data, inference, measurements, results, tco  # noqa: E402

charts.enable()
mcal = measurements.calibrate(data.load_measurements(sc.measurements))
public_tiers = inference.evaluate_tiers(sc, with_cost=False)
cases = inference.prediction_cases(sc.accelerators, sc.inference.model)
shift = measurements.decision_shift(
    sc, mcal, public_tiers=public_tiers, cases=cases,
    inputs=tco.with_throughput_sigmas(tco.cost_inputs(sc), measurements.case_sigmas(sc, cases=cases)))
Markdown(measurements.shift_markdown(shift, measurements.fit_summary(mcal)))

# %% [markdown]
# ## What was ingested
#
# One row per measured point, with the file it came from, the tool, the stack and the run
# date, beside the model's tokens/s per GPU at the same configuration and the ratio.
# Points the serving model does not describe (speculative decoding, disaggregated
# prefill/decode, an INVALID loadgen run) are listed but left out of the fit.

# %%
charts.table(
    measurements.points_table(mcal),
    "measurements-points",
    columns=[
        "source_file", "tool", "stack", "run_date", "accelerator", "model", "precision", "tp",
        "isl_tokens", "osl_tokens", "median_tpot_ms", "measured_tok_s_gpu",
        "modelled_tok_s_gpu", "ratio", "used", "reason",
    ],
    labels={"reason": "Why not"},
    wide_text=("reason",),
)

# %% [markdown]
# ## The fit
#
# Per measured combination: the runs, their plain geometric mean of measured / modelled,
# the shrunk correction the report applies (its weight n / (n + k)), the RMS log error of
# the uncorrected model against the runs and the residual after the correction, and the
# throughput sigma the Monte Carlo uses for that combination (the public-data model's is
# [A-throughput-error](#A-throughput-error)).

# %%
charts.table(
    mcal.corrections,
    "measurements-fit",
    columns=[
        "accelerator", "model", "precision", "n", "raw_ratio", "correction", "weight",
        "rms_log_error_before", "residual_sigma", "sigma",
    ],
    labels={"n": "Runs"},
)

# %% [markdown]
# ## What the measurements changed
#
# Each latency tier's winner (tokens/s per GPU among shipping candidates) and P(AMD
# cheaper) (cheapest AMD against cheapest NVIDIA candidate, same Monte Carlo draws) on the
# public-data model alone and with your measurements. Only the scenario's model and
# precision move the tiers; runs of other combinations are shown above for the record.

# %%
charts.table(
    shift,
    "measurements-shift",
    columns=[
        "tier", "winner_public", "winner_measured", "winner_changed", "cheapest_public",
        "cheapest_measured", "p_amd_cheaper_public", "p_amd_cheaper_measured",
        "p_amd_cheaper_change",
    ],
    decimals=3,
)

# %%
results.show_key_results("35-your-measurements", measurements.key_results(mcal, shift))
