"""The assumptions register: one entry per default that is not a measured fact.

Analytical decisions taken here:

* Every default in ``params.py`` that is a choice rather than a measurement (utilization,
  PUE, porting effort ...) and every model constant of the cost model (maintenance share,
  networking share, residual value, throughput error ...) has one row, with a stable id
  (``A-<name>``) that chapters link to as ``#A-<name>``.
* ``parameter`` is the Scenario key path (``cost.utilization``,
  ``cost.porting_engineer_months.AMD``) or, for model constants, ``tco.<name>``. A data test
  checks that the Scenario defaults equal the register's values, so the two cannot drift.
* ``low``/``high`` bound the range the Monte Carlo and the tornado chart swing through.
* ``quality`` rates the evidence, from best to weakest: ``measured`` (our own
  measurement), ``vendor`` (vendor documentation), ``literature`` (published survey,
  filing or analyst figure), ``estimate`` (derived from published figures by us),
  ``judgement`` (our choice, reasoning in ``rationale``).
"""

from __future__ import annotations

import pandas as pd

from analysis.schema import Col, Table, range_check
from analysis.tables.sources import SOURCE_ID_PATTERN

QUALITY: tuple[str, ...] = ("measured", "vendor", "literature", "estimate", "judgement")


def _id_matches_name(df: pd.DataFrame) -> list[str]:
    bad = ~df["id"].str.startswith("A-")
    return [f"row {i + 2}, column 'id': must start with 'A-'" for i in df.index[bad]]


ASSUMPTIONS = Table(
    name="assumptions",
    path="assumptions/assumptions.csv",
    description=(
        "The assumptions register: every default parameter that is not a measured fact, "
        "with its range, source, date, a quality rating and the reasoning. Chapters link to "
        "an entry by its id (anchor `#A-...`)."
    ),
    key=("id",),
    columns=(
        Col(
            "id",
            "str",
            "Stable id used as link anchor, e.g. `A-utilization`.",
            pattern=r"^A-[a-z0-9][a-z0-9-]*$",
        ),
        Col(
            "parameter",
            "str",
            "Scenario key path (`cost.utilization`) or model constant "
            "(`tco.maintenance_frac_per_year`).",
            pattern=r"^[a-z][a-zA-Z0-9_.]*$",
        ),
        Col("value", "float", "Default value.", ge=0),
        Col("low", "float", "Low end of the plausible range.", ge=0),
        Col("high", "float", "High end of the plausible range.", ge=0),
        Col("unit", "str", "Unit of value/low/high."),
        Col(
            "source_id",
            "str",
            "Row in `sources.csv` backing the value or range.",
            pattern=SOURCE_ID_PATTERN,
        ),
        Col("value_date", "date", "Date the value was set or its source published."),
        Col("quality", "str", "Strength of the evidence.", isin=QUALITY),
        Col("rationale", "str", "Why this value and range."),
    ),
    checks=(range_check("value", "low", "high"), _id_matches_name),
)

TABLES = (ASSUMPTIONS,)
