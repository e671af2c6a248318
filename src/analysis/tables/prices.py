"""Prices: cloud rental quotes, purchase-price estimates and facility parameters.

Analytical decisions taken here:

* **Quotes stay quotes.** ``rental_quotes.csv`` keeps one row per published price (provider,
  instance, term, date), never an average: the cost model resamples the quotes as an
  empirical distribution, so the spread between providers is part of the answer.
* **Per GPU-hour.** A quote for an 8-GPU instance is divided by 8 (the ``note`` says so);
  a GB200 superchip price (two GPUs) is divided by 2.
* **Terms.** ``on-demand`` (no commitment), ``spot`` (interruptible; kept for reference but
  never used for a production fleet), ``reserved`` (short commitments and capacity blocks)
  and ``committed-1y`` / ``committed-3y``. ``Cost.rental_term = committed`` uses
  ``reserved`` and ``committed-*`` rows.
* **Second-hand quotes are labelled.** Where the provider's own page was not available, the
  quote comes from a dated third-party comparison and the ``note`` says so.
* **Purchase prices are estimates.** Vendors do not publish accelerator prices; every row
  is an analyst or press estimate (``basis = estimate``) or, where nothing public was
  found, our judgement (``basis = judgement``, with the reasoning in ``note``).
* **Facility parameters** carry a value with a low/high range, a unit and an ``estimate``
  flag; the Monte Carlo in :mod:`analysis.tco` draws within the range.
"""

from __future__ import annotations

from analysis import ids
from analysis.schema import Col, Table, range_check, value_range_cols
from analysis.tables.sources import source_id_col

RENTAL_TERMS: tuple[str, ...] = ("on-demand", "spot", "reserved", "committed-1y", "committed-3y")
PURCHASE_UNITS: tuple[str, ...] = ("gpu", "server_8gpu")
PURCHASE_BASES: tuple[str, ...] = ("estimate", "judgement", "list")
PROVIDER_KINDS: tuple[str, ...] = ("hyperscaler", "neocloud", "marketplace")


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
            "provider_kind",
            "str",
            "Hyperscaler, GPU neocloud, or marketplace.",
            isin=PROVIDER_KINDS,
        ),
        Col("instance", "str", "Instance type, shape or product name as published."),
        _accelerator_col("Canonical accelerator id (see `analysis.ids`)."),
        Col("gpus_per_instance", "int", "GPUs in the quoted instance.", unit="GPU", ge=1),
        Col("term", "str", "Commitment term of the price.", isin=RENTAL_TERMS),
        Col(
            "price_usd_per_gpu_hour",
            "float",
            "Price per GPU-hour (instance price / GPUs).",
            unit="USD/GPU-h",
            gt=0,
        ),
        Col(
            "quote_date",
            "date",
            "Date the price was published or last verified on the page "
            "(the access date where the page shows none).",
        ),
        source_id_col("Row in `sources.csv` the quote is taken from."),
        Col("note", "str", "Region, how the per-GPU price was derived, caveats.", required=False),
    ),
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
            "What the price buys: one GPU (module) or one 8-GPU server.",
            isin=PURCHASE_UNITS,
        ),
        Col("price_usd_low", "float", "Low end of the estimate.", unit="USD", gt=0),
        Col("price_usd_high", "float", "High end of the estimate.", unit="USD", gt=0),
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
    checks=(range_check("value", "low", "high"),),
)

TABLES = (RENTAL_QUOTES, PURCHASE_PRICES, FACILITY)
