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

from analysis.schema import Col, Table, range_check, value_range_cols
from analysis.tables.sources import source_id_col

QUALITY: tuple[str, ...] = ("measured", "vendor", "literature", "estimate", "judgement")


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
        # Each row's own low/high is its plausible range (range_check keeps the value in
        # it); the cap refuses a slipped magnitude in any of the three. The largest entry
        # is $70,000 (a server platform); fleet sizes stop at 16,384 GPUs; 1e6 is 14x.
        *value_range_cols("Default value.", le=1e6),
        source_id_col("Row in `sources.csv` backing the value or range."),
        Col("value_date", "date", "Date the value was set or its source published."),
        Col("quality", "str", "Strength of the evidence.", isin=QUALITY),
        Col("rationale", "str", "Why this value and range."),
    ),
    checks=(range_check("value", "low", "high"),),
)

TABLES = (ASSUMPTIONS,)
