"""Schema of the seed article's claims (``data/claims/claims.csv``).

Analytical decisions taken here:

* One row per checkable statement of the article, quoted verbatim (a data test checks that
  every quote occurs in the seed text), so a reader can find it in context.
* ``test_method`` names the evaluator in :mod:`analysis.claims` that tests the claim against
  our data (specs, MLPerf, prices, the chapters' model outputs). Statements that no table
  can test are ``source_fact`` (a cited document settles them: the verdict is recorded in
  ``fact_verdict`` and the document in ``source_id``) or ``none`` (``unverifiable``).
* Parameters are explicit columns, not free text: the products the claim names
  (``subject``), what it compares them with (``reference``), the quantity (``field``), the
  claimed numbers and a tolerance. Lists are separated by ``;``; ``subject``/``reference``
  hold canonical accelerator ids or a vendor name (``AMD``, ``NVIDIA``). For the paired
  evaluators (``spec_ratio``, ``price_ratio``, ``memory_fit``) the two lists are paired by
  position, one pair per generation, oldest first.
"""

from __future__ import annotations

import pandas as pd

from analysis.schema import Col, Table

#: The closed set of verdicts a claim can receive.
VERDICTS: tuple[str, ...] = ("supported", "contradicted", "mixes generations", "unverifiable")
TOPICS: tuple[str, ...] = (
    "architecture",
    "manufacturing",
    "training",
    "interconnect",
    "inference",
    "cost",
    "ecosystem",
    "deployment",
)
KINDS: tuple[str, ...] = ("numeric", "comparison", "qualitative")
#: Evaluators in analysis.claims, by key.
TEST_METHODS: tuple[str, ...] = (
    "spec_value",
    "spec_ratio",
    "mlperf_ratio",
    "price_ratio",
    "memory_fit",
    "model_output",
    "source_fact",
    "none",
)
EXPECTS: tuple[str, ...] = ("match", "gt", "lt", "approx", "range", "is")


def _check_method_params(df: pd.DataFrame) -> list[str]:
    """Each evaluator gets the parameters it needs; fact rows cite a source."""
    problems: list[str] = []
    for i, row in df.iterrows():
        m = row["test_method"]
        where = f"row {i + 2} ({row['claim_id']})"
        if m == "source_fact" and (pd.isna(row["fact_sources"]) or pd.isna(row["fact_verdict"])):
            problems.append(f"{where}: source_fact needs fact_sources and fact_verdict")
        if m == "none" and row["fact_verdict"] != "unverifiable":
            problems.append(f"{where}: test_method none needs fact_verdict 'unverifiable'")
        if m not in {"source_fact", "none"} and (pd.isna(row["field"]) or pd.isna(row["expect"])):
            problems.append(f"{where}: {m} needs field and expect")
        if m in {"spec_ratio", "price_ratio", "memory_fit"}:
            subj = str(row["subject"]).split(";")
            ref = str(row["reference"]).split(";")
            if pd.isna(row["reference"]) or len(subj) != len(ref):
                problems.append(f"{where}: {m} needs subject and reference lists of equal length")
    return problems


CLAIMS = Table(
    name="claims",
    path="claims/claims.csv",
    description=(
        "Every checkable claim of the seed article (`../shared/seed/`), quoted verbatim, with "
        "the evaluator that tests it and that evaluator's parameters. Verdicts are computed by "
        "`analysis.claims.evaluate_claims` (data claims) or recorded from a cited document "
        "(`source_fact`)."
    ),
    key=("claim_id",),
    columns=(
        Col(
            "claim_id", "str", "Stable id, `C01`, `C02`, ... in article order.", pattern=r"^C\d{2}$"
        ),
        Col("quote", "str", "The claim exactly as the article words it."),
        Col("topic", "str", "What the claim is about.", isin=TOPICS),
        Col(
            "kind",
            "str",
            "numeric (a value), comparison (A vs B), qualitative (a statement).",
            isin=KINDS,
        ),
        Col("test_method", "str", "Evaluator key in `analysis.claims`.", isin=TEST_METHODS),
        Col(
            "subject",
            "str",
            "Products the claim names (`;`-separated accelerator ids or a vendor name).",
            required=False,
        ),
        Col(
            "reference",
            "str",
            "What the claim compares them with (same format; paired by "
            "position for paired evaluators).",
            required=False,
        ),
        Col(
            "field",
            "str",
            "Quantity tested: a spec column (or `a/b` ratio of two), an MLPerf "
            "`benchmark:scenario` (training: `train:benchmark:gpus`), a price table, or a "
            "model-output test name.",
            required=False,
        ),
        # Article figures: 1 (a ratio) to 50,000 (TFLOPS); every unit is non-negative.
        Col(
            "claimed_value",
            "float",
            "The number the article gives for the subject (or the claimed ratio / lower bound).",
            unit="see `unit`",
            required=False,
            ge=0,
            le=1e9,
        ),
        # 3.35 (TB/s) to 40,000 (TFLOPS); see claimed_value.
        Col(
            "claimed_reference_value",
            "float",
            "The number the article gives for the "
            "reference (or the upper bound of a claimed range).",
            unit="see `unit`",
            required=False,
            ge=0,
            le=1e9,
        ),
        Col(
            "claimed_text",
            "str",
            "For text fields (process node, package): a regular "
            "expression the claimed property matches (case-insensitive).",
            required=False,
        ),
        Col("unit", "str", "Unit of the claimed values.", required=False),
        Col(
            "expect",
            "str",
            "What would support the claim: `match` (value within tolerance), "
            "`gt`/`lt` (subject above/below reference), `approx` (ratio within tolerance of "
            "claimed_value), `range` (within [claimed_value, claimed_reference_value]), `is` "
            "(a named outcome).",
            required=False,
            isin=EXPECTS,
        ),
        Col(
            "tolerance_pct",
            "float",
            "Relative tolerance for a match.",
            unit="%",
            required=False,
            ge=0,
            le=100,
        ),
        Col(
            "fact_verdict",
            "str",
            "For `source_fact`/`none`: the verdict the cited document "
            "gives. On a data-tested row: the verdict to use when the number is in none of "
            "our tables (e.g. a vendor's non-dense headline figure), with `fact` saying why.",
            required=False,
            isin=VERDICTS,
        ),
        Col(
            "fact",
            "str",
            "The sourced fact, or context used in the reasoning (where the "
            "quoted number really comes from).",
            required=False,
        ),
        Col(
            "fact_sources", "str", "`;`-separated `sources.csv` ids behind `fact`.", required=False
        ),
        Col("notes", "str", "How the claim was read (interpretation choices).", required=False),
    ),
    checks=(_check_method_params,),
)

TABLES = (CLAIMS,)
