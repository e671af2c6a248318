"""Source facts, the evaluator registry, and the evaluation of every claim."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from analysis.claims.base import (
    OUTPUT_COLUMNS,
    PRICE_LABELS,
    Context,
    Outcome,
    _fmt,
    _label,
    _num,
    _regex_label,
    _split,
    _tol,
)
from analysis.claims.market import eval_mlperf_ratio, eval_price_ratio
from analysis.claims.outputs import eval_model_output
from analysis.claims.specs import _side, eval_memory_fit, eval_spec_ratio, eval_spec_value
from analysis.inputs import Inputs, resolve
from analysis.params import Scenario
from analysis.tables.claims import VERDICTS
from analysis.textsafe import markdown_text


def eval_source_fact(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """A statement settled by a cited document (verdict recorded in the claims table)."""
    return Outcome(
        str(row["fact_verdict"]),
        str(row.get("fact") or ""),
        [],
        _split(row.get("fact_sources")),
        str(row.get("fact") or ""),
    )


def eval_none(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Nothing in the data or in a citable document settles the statement."""
    note = row.get("notes")
    why = "No data or citable document settles this statement."
    return Outcome("unverifiable", reasoning=why + (f" {note}" if isinstance(note, str) else ""))


EVALUATORS: dict[str, Callable[[Mapping[str, Any], Context], Outcome]] = {
    "spec_value": eval_spec_value,
    "spec_ratio": eval_spec_ratio,
    "mlperf_ratio": eval_mlperf_ratio,
    "price_ratio": eval_price_ratio,
    "memory_fit": eval_memory_fit,
    "model_output": eval_model_output,
    "source_fact": eval_source_fact,
    "none": eval_none,
}

#: What a model-output claim asserts, in words ({s} subject, {r} reference, {v} value).
MODEL_OUTPUT_CLAIMS: dict[str, str] = {
    "tco_cheaper_vendor": "{s} is the likelier cheaper platform in most workloads",
    "buy_cheaper_vendor": "{s} is the likelier cheaper platform when buying",
    "train_winner_vendor": "{s} trains the scenario's job clearly fastest",
    "scaling_eff": "{s} keeps more per-GPU throughput than {r} at cluster scale",
    "tight_tier_tok_s": "{s} makes more than {t}x the tokens/s per GPU of the best {r} part "
    "at <= {v} ms per token",
    "amd_ratio_trend": "AMD's tokens/s per GPU relative to NVIDIA's rises with the latency "
    "budget and leads in the loosest tier",
    "loose_tier_winner": "{s} makes the most tokens/s per GPU in the loosest latency tier",
    "rent_cheapest_vendor": "{s} is the cheapest per million tokens when renting, in every tier",
}


def _claimed_text(row: Mapping[str, Any]) -> str:
    """What the claim asserts, as a reader would state it (never a raw pattern or code)."""
    method, expect = row["test_method"], row.get("expect")
    subj = _split(row.get("subject"))
    ref = _split(row.get("reference"))
    v, r = _num(row.get("claimed_value")), _num(row.get("claimed_reference_value"))
    unit = row["unit"] if isinstance(row.get("unit"), str) else ""
    tol = _tol(row, 0.0)
    field_ = str(row.get("field") or "")
    if method == "model_output":
        tpl = MODEL_OUTPUT_CLAIMS.get(field_, field_)
        return tpl.format(s=" or ".join(subj), r="/".join(ref), v=_fmt(v), t=f"{1 + tol / 100:.2f}")
    if isinstance(row.get("claimed_text"), str):
        return f"{_regex_label(row['claimed_text'])} ({_label(field_)})"
    if method == "price_ratio" and expect == "range":
        return f"{_side(subj)} costs {_fmt(v)}-{_fmt(r)}% less than {_side(ref)}"
    if method == "memory_fit":
        return f"{_fmt(v)} {unit} fit one {_side(subj)} GPU but not one {_side(ref)} GPU"
    if method in {"spec_ratio", "price_ratio"} and expect in {"gt", "lt"}:
        what = _label(field_) if method == "spec_ratio" else PRICE_LABELS.get(field_, field_)
        more = "higher" if expect == "gt" else "lower"
        return f"{_side(subj)} has a {more} {what} than {_side(ref)}"
    if method == "mlperf_ratio":
        bench = f"MLPerf {field_}"
        if expect == "approx":
            ratio = v / r if math.isfinite(r) and r else v
            vals = f"{_fmt(v)} vs {_fmt(r)} {unit}: " if math.isfinite(r) else ""
            return f"{vals}{_side(subj)} = {ratio:.2f}x {_side(ref)} ({bench})"
        return f"{_side(subj)} above {_side(ref)} ({bench})"
    if expect == "approx":
        return f"{_fmt(v)}x the {_label(field_)}: {_side(subj)} vs {_side(ref)}"
    parts = []
    if math.isfinite(v):
        parts.append(f"{_fmt(v)} {unit}".strip())
    if math.isfinite(r):
        parts.append(f"vs {_fmt(r)} {unit}".strip())
    return " ".join(parts)


def _load_or_empty(name: str, inputs: Inputs) -> pd.DataFrame:
    try:
        return inputs.specs if name == "specs" else inputs.table(name)
    except (KeyError, FileNotFoundError, ValueError):
        return pd.DataFrame()


def evaluate_claims(
    specs: pd.DataFrame | None = None,
    *,
    claims: pd.DataFrame | None = None,
    mlperf_inference: pd.DataFrame | None = None,
    mlperf_training: pd.DataFrame | None = None,
    rental_quotes: pd.DataFrame | None = None,
    purchase_prices: pd.DataFrame | None = None,
    sources: pd.DataFrame | None = None,
    chapter_results: Mapping[str, Mapping[str, object]] | None = None,
    scenario: Scenario | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Every claim of the seed article with its verdict, the data behind it and the reasoning.

    Args:
        specs: :func:`analysis.data.load_specs` (loaded when ``None``, like every table
            below). A table that cannot be loaded counts as empty: the claims it would
            test come out ``unverifiable``.
        claims: the ``claims`` table.
        mlperf_inference: the ``mlperf_inference`` table.
        mlperf_training: the ``mlperf_training`` table.
        rental_quotes: the ``rental_quotes`` table.
        purchase_prices: the ``purchase_prices`` table.
        sources: the ``sources`` table (for URLs).
        chapter_results: ``{chapter id: key results}`` of the inference, training and TCO
            chapters, for the model-output claims (``{}`` = those are unverifiable).
        scenario: the :class:`analysis.params.Scenario` the chapter results belong to.
        inputs: where a table given as ``None`` comes from (default: the default inputs).

    Returns:
        One row per claim: claim_id, quote, topic, kind, test_method, verdict (one of
        :data:`VERDICTS`), claimed, observed (the values found), products (the products the
        numbers really belong to), data_sources (source ids or MLPerf result paths),
        data_urls, reasoning.
    """
    given = {
        "specs": specs,
        "claims": claims,
        "mlperf_inference": mlperf_inference,
        "mlperf_training": mlperf_training,
        "rental_quotes": rental_quotes,
        "purchase_prices": purchase_prices,
        "sources": sources,
    }
    inputs = resolve(inputs)
    tables = {
        name: _load_or_empty(name, inputs) if df is None else df for name, df in given.items()
    }
    ctx = Context(
        specs=tables["specs"],
        mlperf_inference=tables["mlperf_inference"],
        mlperf_training=tables["mlperf_training"],
        rental_quotes=tables["rental_quotes"],
        purchase_prices=tables["purchase_prices"],
        chapter_results=chapter_results or {},
        scenario=scenario,
    )
    src = tables["sources"]
    urls = dict(zip(src["source_id"], src["url"], strict=True)) if not src.empty else {}
    rows = []
    for _, claim in tables["claims"].iterrows():
        row = claim.to_dict()
        out = EVALUATORS[row["test_method"]](row, ctx)
        if (
            isinstance(row.get("fact"), str)
            and row["test_method"] != "source_fact"
            and not out.fact_used
        ):
            out.reasoning += f" Context: {row['fact']}"
            out.sources = sorted(set(out.sources) | set(_split(row.get("fact_sources"))))
        if out.verdict not in VERDICTS:
            raise ValueError(f"{row['claim_id']}: evaluator returned {out.verdict!r}")
        rows.append(
            {
                "claim_id": row["claim_id"],
                "quote": row["quote"],
                "topic": row["topic"],
                "kind": row["kind"],
                "test_method": row["test_method"],
                "verdict": out.verdict,
                "claimed": _claimed_text(row),
                "observed": out.observed,
                "products": ", ".join(dict.fromkeys(out.products)),
                "data_sources": "; ".join(out.sources),
                "data_urls": " ".join(urls[s] for s in out.sources if isinstance(urls.get(s), str)),
                "reasoning": out.reasoning.strip(),
            }
        )
    return pd.DataFrame(rows, columns=list(OUTPUT_COLUMNS))


def verdict_counts(evaluated: pd.DataFrame) -> pd.DataFrame:
    """Claims per verdict (every verdict listed, zeros included), in :data:`VERDICTS` order."""
    counts = evaluated["verdict"].value_counts().reindex(list(VERDICTS), fill_value=0)
    return counts.rename_axis("verdict").reset_index(name="claims")


def select_claims(evaluated: pd.DataFrame, verdict: str) -> pd.DataFrame:
    """The rows of :func:`evaluate_claims` output with one verdict, in article order.

    The original index is kept.

    Raises:
        ValueError: ``verdict`` is not one of :data:`VERDICTS`.

    >>> audit = pd.DataFrame({"claim_id": ["C1", "C2", "C3"],
    ...                       "verdict": ["supported", "contradicted", "supported"]})
    >>> select_claims(audit, "supported")["claim_id"].tolist()
    ['C1', 'C3']
    """
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; allowed: {', '.join(VERDICTS)}")
    return evaluated.loc[evaluated["verdict"] == verdict]


def key_results(counts: pd.DataFrame) -> dict[str, int]:
    """The claims chapter's key results from :func:`verdict_counts` output.

    Returns:
        ``claims_total``, then ``claims_supported``, ``claims_contradicted``,
        ``claims_mixes_generations`` and ``claims_unverifiable`` (plain ints).

    >>> counts = pd.DataFrame({"verdict": list(VERDICTS), "claims": [3, 2, 1, 0]})
    >>> key_results(counts)["claims_total"], key_results(counts)["claims_unverifiable"]
    (6, 0)
    """
    n = counts.set_index("verdict")["claims"]
    return {
        "claims_total": int(n.sum()),
        "claims_supported": int(n["supported"]),
        "claims_contradicted": int(n["contradicted"]),
        "claims_mixes_generations": int(n["mixes generations"]),
        "claims_unverifiable": int(n["unverifiable"]),
    }


#: Longest quote the one-page verdict table shows (the full quote is in the appendix audit).
VERDICT_QUOTE_CHARS = 90


def verdict_table(audit: pd.DataFrame, width: int = VERDICT_QUOTE_CHARS) -> pd.DataFrame:
    """One line per claim for the chapter's one-page table: id, shortened quote, verdict.

    Quotes longer than ``width`` are cut at a word boundary and end in an ellipsis; the
    full quote, the reasoning and the sources are the appendix's audit (same rows, same
    order).

    >>> verdict_table(pd.DataFrame({"claim_id": ["C1"], "quote": ["a " * 60],
    ...                             "verdict": ["supported"]}), 10)["claim"].tolist()
    ['a a a a a…']
    """

    def short(quote: object) -> str:
        q = " ".join(str(quote).split())
        if len(q) <= width:
            return q
        return q[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"

    return pd.DataFrame(
        {
            "claim_id": audit["claim_id"],
            "claim": [short(q) for q in audit["quote"]],
            "verdict": audit["verdict"],
        }
    )


#: The seed article's row in ``data/sources.csv``.
SEED_SOURCE_ID = "seed-article"


def seed_article_markdown(sources: pd.DataFrame, audit: pd.DataFrame) -> str:
    """Which article the report audits (by its title) and what it claims, counted by topic.

    The title is the ``seed-article`` row of ``sources.csv`` without its storage note (the
    part in parentheses); the counts come from the audit, so they follow ``claims.csv``.
    """
    row = sources.loc[sources["source_id"] == SEED_SOURCE_ID]
    if row.empty:
        return "The audited article is not registered in `sources.csv`."
    r = row.iloc[0]
    title = str(r["title"]).split(" (")[0].strip()
    title = title[:1].upper() + title[1:]
    topics = audit["topic"].value_counts()
    counts = ", ".join(f"{n} on {markdown_text(t)}" for t, n in topics.items())
    verdicts = audit["verdict"].value_counts()
    held = ", ".join(f"{n} {markdown_text(v)}" for v, n in verdicts.items())
    return (
        f'The article audited is *"{markdown_text(title)}"* ({markdown_text(r["publisher"])}, '
        f"text read {markdown_text(r['accessed'])}). It makes {len(audit)} checkable claims "
        f"({counts}); against the data: {held}."
    )
