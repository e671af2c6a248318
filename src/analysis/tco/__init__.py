"""Total cost of ownership: $/GPU-hour, $/million tokens, $/training run, and their risks.

Owned and rented cost per GPU-hour, cost per million tokens and per training run, their
uncertainty (Monte Carlo), break-even points and sensitivity.

Analytical decisions taken here:

* **Owned cost per GPU-hour** = capital (server price plus cluster networking, recovered
  over the depreciation life at the cost of capital with the capital recovery factor, net
  of the present value of the residual value) + maintenance + electricity (server draw at
  the scenario's utilization x PUE x price) + colocation (per kW of provisioned server
  power) + software licences + the one-off platform cost (porting and ramp-up
  engineer-months x loaded cost) spread over every GPU-hour of the fleet's life.
* **Useful hours.** The fleet is held whether it is bought or rented; cost per *useful*
  GPU-hour divides by utilization. ``gpu_hour_usd`` is per paid (wall-clock) GPU-hour.
* **Rented cost** is the empirical distribution of the published quotes of the scenario's
  rental pool (``cost.rental_pool``: one provider class and one term; resampled, not one
  pick), plus the same platform cost: porting is needed whether the GPUs are rented or
  bought. Only quotes of that one pool are compared, because hyperscaler list prices run
  2-4x neocloud rates and a mixed pool measures the provider mix rather than the hardware.
  A part without a quote in the pool has no rented cost ("no quote in this pool"): it is
  left out of every rented comparison, never priced from another pool or treated as free.
  Quotes older than :data:`STALE_QUOTE_DAYS` are kept but flagged.
* **One price rule.** :func:`price_rule` is the $/GPU-hour of the scenario's mode that
  every chapter prints (the inference chapter's $/M tokens, this chapter's point costs and
  the claims all call it): owned all-in cost, or the pool's median quote plus porting, per
  *paid* GPU-hour; $/M tokens divide the *useful* GPU-hour (paid / utilization).
* **Purchase prices.** The midpoint of the sourced low/high range; a rack-scale system's
  price per GPU of the rack (``rack_per_gpu``) stands for one eighth of an 8-GPU "server"
  with nothing added, since the rack price already holds CPUs, switches and chassis.
* **Uncertainty.** Every ranged input is drawn from a triangular distribution (low, default,
  high) taken from the assumptions register and the price tables, re-centred on the
  scenario's value; throughput carries the performance models' relative error as a
  lognormal factor per accelerator. Draws are joint (one draw = one consistent world), so
  P(AMD cheaper) compares the two vendors' cheapest-by-median candidates draw by draw.
* **Break-even** values are solved on the point model (defaults, median quotes) with
  Brent's method (:func:`scipy.optimize.brentq`, imported where it is used: importing
  ``scipy.optimize`` costs about half a second, which only the break-even cells pay),
  so they plug back into equal costs.

A package (``from analysis import tco`` re-exports every name): :mod:`~analysis.tco.formulas`,
:mod:`~analysis.tco.costs`, :mod:`~analysis.tco.pricing`, :mod:`~analysis.tco.montecarlo`,
:mod:`~analysis.tco.breakeven`, :mod:`~analysis.tco.sensitivity`, :mod:`~analysis.tco.results`.
This ``__init__`` is the facade: the one module of the package that imports
:mod:`analysis.data` (the default inputs the submodules resolve) and the ``make bench`` cases.
"""

from __future__ import annotations

from collections.abc import Callable

from analysis import data  # noqa: F401 - registers the default inputs the submodules resolve
from analysis.params import Scenario
from analysis.tco.breakeven import (
    _BRACKETS,
    BREAKEVEN_LABELS,
    BREAKEVEN_VARIABLES,
    NATIVE_VARIABLE,
    _current_server_price,
    _pair_cost,
    _statement,
    breakeven,
    breakeven_table,
)
from analysis.tco.costs import (
    NO_QUOTE,
    STALE_QUOTE_DAYS,
    CostInputs,
    ScenarioInputs,
    _id_columns,
    _point_params,
    _recentre,
    _register,
    _rental_pool,
    cost_inputs,
    pool_quotes,
    purchase_per_gpu,
    quote_ages,
    rental_medians,
    scenario_inputs,
    split_pool,
)
from analysis.tco.formulas import (
    _LOWER,
    _UPPER,
    ACC_INPUTS,
    GLOBAL_INPUTS,
    GPUS_PER_SERVER,
    HOURS_PER_YEAR,
    SECONDS_PER_HOUR,
    Z_95,
    Mode,
    capital_recovery_factor,
    cost_per_million_tokens,
    owned_cost_components,
    paid_gpu_hour_usd,
    platform_cost_per_gpu_hour,
    useful_gpu_hour_usd,
)
from analysis.tco.montecarlo import (
    Simulation,
    _compare,
    _nanmedian,
    _q,
    _triangular,
    draw_inputs,
    rent_simulation,
    simulate,
    tier_throughput_factors,
    with_throughput_sigmas,
)
from analysis.tco.pricing import (
    _CROSSCHECK,
    coverage_markdown,
    gpu_hour_cost,
    mode_gaps,
    price_coverage,
    price_rule,
    scenario_warnings,
    tco_crosscheck,
    tier_cost_point,
)
from analysis.tco.results import (
    CLAIM_COLUMNS,
    CLAIM_PAIRS,
    _add_ratio_and_breakevens,
    _breakeven_current,
    _breakeven_price,
    claim_numbers,
    example_tiers,
    example_training,
    key_results,
)
from analysis.tco.sensitivity import (
    SENSITIVITY_COLUMNS,
    TORNADO_TOP_N,
    _acc_assumption,
    sensitivity,
    tier_sensitivity,
)


# --- benchmarks -------------------------------------------------------------------------
def bench_cases() -> list[tuple[str, Callable[[], object], float]]:
    """Speed targets for ``make bench``: the 100k-draw Monte Carlo in under 2 s."""
    sc = Scenario(name="bench", title="bench")
    inp = cost_inputs(sc)
    tiers = example_tiers(sc)
    training = example_training(sc)
    return [
        (
            "tco monte carlo 100k draws",
            lambda: simulate(sc, tiers, training, inputs=inp, n=100_000),
            2.0,
        ),
    ]


__all__ = [
    "ACC_INPUTS",
    "BREAKEVEN_LABELS",
    "BREAKEVEN_VARIABLES",
    "CLAIM_COLUMNS",
    "CLAIM_PAIRS",
    "CostInputs",
    "GLOBAL_INPUTS",
    "GPUS_PER_SERVER",
    "HOURS_PER_YEAR",
    "Mode",
    "NATIVE_VARIABLE",
    "NO_QUOTE",
    "SECONDS_PER_HOUR",
    "SENSITIVITY_COLUMNS",
    "STALE_QUOTE_DAYS",
    "ScenarioInputs",
    "Simulation",
    "TORNADO_TOP_N",
    "Z_95",
    "_BRACKETS",
    "_CROSSCHECK",
    "_LOWER",
    "_UPPER",
    "_acc_assumption",
    "_add_ratio_and_breakevens",
    "_breakeven_current",
    "_breakeven_price",
    "_compare",
    "_current_server_price",
    "_id_columns",
    "_nanmedian",
    "_pair_cost",
    "_point_params",
    "_q",
    "_recentre",
    "_register",
    "_rental_pool",
    "_statement",
    "_triangular",
    "bench_cases",
    "breakeven",
    "breakeven_table",
    "capital_recovery_factor",
    "claim_numbers",
    "cost_inputs",
    "cost_per_million_tokens",
    "coverage_markdown",
    "draw_inputs",
    "example_tiers",
    "example_training",
    "gpu_hour_cost",
    "key_results",
    "mode_gaps",
    "owned_cost_components",
    "paid_gpu_hour_usd",
    "platform_cost_per_gpu_hour",
    "pool_quotes",
    "price_coverage",
    "price_rule",
    "purchase_per_gpu",
    "quote_ages",
    "rent_simulation",
    "rental_medians",
    "scenario_inputs",
    "scenario_warnings",
    "sensitivity",
    "simulate",
    "split_pool",
    "tco_crosscheck",
    "tier_cost_point",
    "tier_sensitivity",
    "tier_throughput_factors",
    "useful_gpu_hour_usd",
    "with_throughput_sigmas",
]
