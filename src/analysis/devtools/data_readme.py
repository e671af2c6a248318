"""``data/README.md``: the data dictionary and the price coverage table, both generated.

A developer tool (``make data-readme``; a test keeps the committed file equal to it): it
reads the schema registry and the price tables, so it lives here rather than in
``analysis.data``, which the modelling packages' facades import.
"""

from __future__ import annotations

from analysis import data, tco
from analysis.schema import render_data_dictionary
from analysis.tables import ALL
from analysis.tables.benchmarks import USER_TABLES


def render_data_readme() -> str:
    """``data/README.md``: the data dictionary and the price coverage table, both generated."""
    cov = tco.price_coverage(
        data.load_table("rental_quotes"),
        data.load_table("purchase_prices"),
        data.load_table("facility"),
    )
    tables = [*ALL.values(), *USER_TABLES]
    return render_data_dictionary(tables) + "\n" + tco.coverage_markdown(cov)
