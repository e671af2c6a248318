"""Prices: cloud rental quotes, purchase-price estimates and facility parameters.

Analytical decisions taken here:

* **Quotes stay quotes.** ``rental_quotes.csv`` keeps one row per published price (provider,
  instance, term, date), never an average: the cost model resamples the quotes as an
  empirical distribution, so the spread between providers is part of the answer.
* **Per GPU-hour.** A quote for an 8-GPU instance is divided by 8 (the ``note`` says so);
  a GB200 superchip price (two GPUs) is divided by 2.
* **Pools: provider class x term.** Every quote is classified by provider class
  (``hyperscaler-list``: AWS, Azure, GCP, Oracle list prices; ``neocloud-list``: GPU clouds'
  published rates; ``marketplace-spot``: marketplaces of third-party hosts and every
  interruptible price, whoever sells it) and by term (``on-demand``, ``1-year``, ``3-year``,
  ``spot``). A comparison only uses the quotes of one pool (the scenario's
  ``cost.rental_pool``): hyperscaler list prices run 2-4x neocloud rates, so a pool that
  mixes them measures the provider mix, not the hardware. Expired offers (capacity blocks
  past their validity) and terms that fit no pool are left out.
* **Two dates.** ``quote_date`` is the price's own date (the page's "as of", the date a
  cited article read the provider's page); ``access_date`` is the day we read the stored
  copy. A page that shows no date of its own gives no quote: the access date is never used
  as a price date.
* **Second-hand quotes are labelled.** Where the provider's own page was not available, the
  quote comes from a dated third-party comparison and the ``note`` says so; SEO aggregators
  whose figures differ from the providers' pages, or carry no date, are not used.
* **Purchase prices are estimates.** Vendors do not publish accelerator prices; every row
  is an analyst or press estimate (``basis = estimate``) or, where nothing public was
  found, our judgement (``basis = judgement``, with the reasoning in ``note``). Rack-scale
  systems (GB200/GB300 NVL72) are priced per GPU of the rack (``unit = rack_per_gpu``:
  rack price / 72, its CPUs, NVLink switches and chassis included), so no server platform
  cost is added on top.
* **Published TCO tiers** (SemiAnalysis / InferenceX) are kept apart from our inputs in
  ``tco_benchmarks.csv``: they are a cross-check, never an input.
* **Facility parameters** carry a value with a low/high range, a unit and an ``estimate``
  flag; the Monte Carlo in :mod:`analysis.tco` draws within the range.
"""

from __future__ import annotations

import pandas as pd

from analysis import ids
from analysis.schema import Col, KeyedRanges, Table, range_check, value_range_cols
from analysis.tables.sources import source_id_col

#: The largest GPU count one rental or node offers: an NVL72 rack is 72; NVIDIA's
#: announced NVL576 (Kyber) is 576.
MAX_GPUS_PER_INSTANCE = 576
#: Same bound as a scenario's GPU-hour price (``analysis.params``, ``GpuHourUsd``): quotes
#: and TCO figures in the tables are $1-$18 per GPU-hour.
MAX_USD_PER_GPU_HOUR = 1_000.0
#: Purchase prices: $10k (a GPU, low estimate) to $300k (an 8-GPU server, high). The top
#: is a scenario's server-price bound (``ServerPriceUsd``: $1k-$50M); the bottom is $100,
#: below which no data-centre GPU module sells.
PURCHASE_USD_RANGE = (100.0, 50_000_000.0)
#: Facility parameters (inclusive, in the row's unit). The cost parameters use the bounds
#: a scenario file is held to (``analysis.params.Cost``), so the table cannot hold what a
#: user could not type in a parameter file.
FACILITY_RANGES: dict[str, tuple[float, float]] = {
    "colocation_usd_per_kw_month": (0, 5_000),  # table: $120-$217; Cost: <= 5,000
    "depreciation_years": (0.5, 15),  # table: 4-6 years; Cost: 0.5-15
    "electricity_usd_per_kwh": (0, 5),  # table: $0.06-$0.19; Cost: <= 5
    "pue": (1.0, 3.0),  # table: 1.1-1.59; PUE is >= 1 by definition; Cost: <= 3
    # kW per 8 GPUs: 6.5-16.5 in the table (DGX H100: 10.2 kW max); 8 x 1.8 kW (VR200)
    # plus host and fans is ~20 kW; 1-200 kW leaves 10x either way.
    "server_power_kw": (1, 200),
}

RENTAL_TERMS: tuple[str, ...] = ids.RENTAL_TERMS
PROVIDER_CLASSES: tuple[str, ...] = ids.PROVIDER_CLASSES
PURCHASE_UNITS: tuple[str, ...] = ("gpu", "server_8gpu", "rack_per_gpu")
PURCHASE_BASES: tuple[str, ...] = ("estimate", "judgement", "list")
#: SemiAnalysis' published TCO tiers, as InferenceX names them (costh, costn, costr).
TCO_TIERS: tuple[str, ...] = ("owning-hyperscaler", "owning-neocloud", "rental-3y")


def _spot_is_marketplace(df: pd.DataFrame) -> list[str]:
    """An interruptible price is never a list price: ``spot`` quotes are ``marketplace-spot``."""
    bad = (df["term"] == "spot") & (df["provider_class"] != "marketplace-spot")
    return [
        f"row {i + 2}, column 'provider_class': a spot quote must be classed "
        f"`marketplace-spot` (got {df.at[i, 'provider_class']!r})"
        for i in df.index[bad]
    ]


def _quote_not_after_access(df: pd.DataFrame) -> list[str]:
    """A price cannot be dated after the day we read it."""
    bad = df["quote_date"].astype(str) > df["access_date"].astype(str)
    return [
        f"row {i + 2}, column 'quote_date': {df.at[i, 'quote_date']} is after the access "
        f"date {df.at[i, 'access_date']}"
        for i in df.index[bad]
    ]


def _accelerator_col(description: str) -> Col:
    return Col("accelerator", "str", description, isin=ids.ACCELERATORS)


RENTAL_QUOTES = Table(
    name="rental_quotes",
    path="prices/rental_quotes.csv",
    description=(
        "Published cloud rental prices, one row per quote, in US dollars per GPU-hour. "
        "Quotes are kept as published (not averaged); the cost model resamples them."
    ),
    key=("provider", "instance", "accelerator", "term", "quote_date", "source_id"),
    columns=(
        Col("provider", "str", "Cloud provider as it names itself (e.g. `AWS`, `Lambda`)."),
        Col(
            "provider_class",
            "str",
            "Hyperscaler list price, neocloud list price, or marketplace/spot (every "
            "interruptible price is `marketplace-spot`).",
            isin=PROVIDER_CLASSES,
        ),
        Col("instance", "str", "Instance type, shape or product name as published."),
        _accelerator_col("Canonical accelerator id (see `analysis.ids`)."),
        Col(
            "gpus_per_instance",
            "int",
            "GPUs in the quoted instance.",
            unit="GPU",
            ge=1,
            le=MAX_GPUS_PER_INSTANCE,
        ),
        Col(
            "term",
            "str",
            "Commitment term of the price (`spot` = interruptible).",
            isin=RENTAL_TERMS,
        ),
        Col(
            "price_usd_per_gpu_hour",
            "float",
            "Price per GPU-hour (instance price / GPUs).",
            unit="USD/GPU-h",
            gt=0,
            le=MAX_USD_PER_GPU_HOUR,
        ),
        Col(
            "quote_date",
            "date",
            "The price's own date: as of when the page (or the article that read it) states "
            "it; never the access date. Quotes older than 9 months are flagged in the report.",
        ),
        Col("access_date", "date", "Day we read the stored copy of the source."),
        source_id_col("Row in `sources.csv` the quote is taken from."),
        Col("note", "str", "Region, how the per-GPU price was derived, caveats.", required=False),
    ),
    checks=(_spot_is_marketplace, _quote_not_after_access),
)

PURCHASE_PRICES = Table(
    name="purchase_prices",
    path="prices/purchase_prices.csv",
    description=(
        "Purchase-price estimates per accelerator (per GPU or per 8-GPU server) as a low/high "
        "range in US dollars. None of these is a vendor list price."
    ),
    key=("accelerator", "unit", "source_id"),
    columns=(
        _accelerator_col("Canonical accelerator id."),
        Col(
            "unit",
            "str",
            "What the price buys: one GPU (module), one 8-GPU server, or one GPU's share of "
            "a rack-scale system (rack price / GPUs, CPUs and switches included).",
            isin=PURCHASE_UNITS,
        ),
        Col(
            "price_usd_low",
            "float",
            "Low end of the estimate.",
            unit="USD",
            ge=PURCHASE_USD_RANGE[0],
            le=PURCHASE_USD_RANGE[1],
        ),
        Col(
            "price_usd_high",
            "float",
            "High end of the estimate.",
            unit="USD",
            ge=PURCHASE_USD_RANGE[0],
            le=PURCHASE_USD_RANGE[1],
        ),
        Col(
            "basis",
            "str",
            "`estimate` (analyst/press), `judgement` (ours), `list` (vendor).",
            isin=PURCHASE_BASES,
        ),
        Col("price_date", "date", "Date of the estimate."),
        source_id_col("Row in `sources.csv`."),
        Col("note", "str", "What the estimate covers, how it was derived.", required=False),
    ),
    checks=(range_check(None, "price_usd_low", "price_usd_high"),),
)

FACILITY = Table(
    name="facility",
    path="prices/facility.csv",
    description=(
        "Facility and operating parameters of owning GPU servers (power per server, PUE, "
        "electricity and colocation prices, depreciation lives), each with a range. "
        "`accelerator` is empty for parameters that apply to every accelerator."
    ),
    key=("parameter", "accelerator", "source_id"),
    columns=(
        Col(
            "parameter",
            "str",
            "Parameter name (lower_snake, unit in the name).",
            pattern=r"^[a-z][a-z0-9_]*$",
        ),
        Col(
            "accelerator",
            "str",
            "Accelerator id the row applies to; empty = all.",
            required=False,
            isin=ids.ACCELERATORS,
        ),
        *value_range_cols("Central value used by default."),
        Col(
            "estimate",
            "str",
            "`yes` when the value is our estimate rather than a published figure.",
            isin=("yes", "no"),
        ),
        Col("value_date", "date", "Date of the figure."),
        source_id_col("Row in `sources.csv`."),
        Col("note", "str", "What the figure is and how it was derived.", required=False),
    ),
    checks=(
        range_check("value", "low", "high"),
        KeyedRanges("parameter", ("value", "low", "high"), FACILITY_RANGES),
    ),
)

TCO_BENCHMARKS = Table(
    name="tco_benchmarks",
    path="prices/tco_benchmarks.csv",
    description=(
        "Published all-in cost per GPU-hour from SemiAnalysis' AI Cloud TCO model as "
        "InferenceX uses it (owning as a hyperscaler, owning as a neocloud, 3-year rental), "
        "one row per accelerator, tier and revision of the published constants. A "
        "cross-check beside the project's own owned and rented figures, never an input."
    ),
    key=("accelerator", "tier", "revision"),
    columns=(
        _accelerator_col("Canonical accelerator id."),
        Col("tier", "str", "SemiAnalysis TCO tier.", isin=TCO_TIERS),
        Col(
            "price_usd_per_gpu_hour",
            "float",
            "Published all-in cost per GPU-hour.",
            unit="USD/GPU-h",
            gt=0,
            le=MAX_USD_PER_GPU_HOUR,
        ),
        Col(
            "estimate",
            "str",
            "`yes` where the publisher marks the figure as a placeholder or derivation.",
            isin=("yes", "no"),
        ),
        Col("revision", "str", "Commit of the published constants file."),
        Col("value_date", "date", "Date of the pricing survey the constants come from."),
        source_id_col("Row in `sources.csv`."),
        Col("note", "str", "How the publisher derived it, caveats.", required=False),
    ),
)

TABLES = (RENTAL_QUOTES, PURCHASE_PRICES, FACILITY, TCO_BENCHMARKS)
