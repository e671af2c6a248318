"""MLPerf and price claims: best results per round, median prices per accelerator."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import tco
from analysis.claims.base import PRICE_LABELS, Context, Outcome, _fmt, _num, _split, _tol
from analysis.claims.specs import _paired_verdict, _ratio_holds, _ratio_what, _side
from analysis.params import Cost


def _round_key(rnd: str) -> tuple[int, ...]:
    """Sort key of an MLPerf round label (``'v5.1'`` < ``'v6.0'``).

    >>> _round_key("v5.1") < _round_key("v6.0")
    True
    """
    return tuple(int(x) for x in re.findall(r"\d+", str(rnd)))


def _mlperf_rows(ctx: Context, spec: str, accs: list[str]) -> pd.DataFrame:
    """Eligible MLPerf rows of ``accs`` for ``bench:scenario`` (or ``train:bench:n``).

    Returns the rows with ``value`` (tokens/s per GPU, or minutes to train), ``label`` and
    ``source`` columns; RDI (research) rows are never evidence.
    """
    parts = spec.split(":")
    cols = ["round", "accelerator", "value", "label", "source"]
    if parts[0] == "train":
        df = ctx.mlperf_training
        if df.empty:
            return pd.DataFrame(columns=cols)
        bench, n = parts[1], int(parts[2])
        sub = df[
            (df["benchmark"] == bench)
            & (df["total_accelerators"] == n)
            & df["accelerator"].isin(accs)
            & df["time_to_train_min"].notna()
            & (df["availability"] != "rdi")
        ]
        return pd.DataFrame(
            {
                "round": sub["round"],
                "accelerator": sub["accelerator"],
                "value": sub["time_to_train_min"].astype(float),
                "label": [
                    f"{r.accelerator} {r.time_to_train_min:.2f} min ({r.round}, {r.submitter})"
                    for r in sub.itertuples(index=False)
                ],
                "source": [
                    f"MLPerf Training {r.round}: {r.results_path}"
                    for r in sub.itertuples(index=False)
                ],
            },
            columns=cols,
        )
    df = ctx.mlperf_inference
    if df.empty:
        return pd.DataFrame(columns=cols)
    bench, scen = parts
    sub = df[
        (df["benchmark"] == bench)
        & (df["scenario"] == scen)
        & df["accelerator"].isin(accs)
        & (df["availability"] != "rdi")
    ]
    rids = [
        r.result_id if isinstance(r.result_id, str) else r.mlperf_id
        for r in sub.itertuples(index=False)
    ]
    return pd.DataFrame(
        {
            "round": sub["round"],
            "accelerator": sub["accelerator"],
            "value": sub["result_per_accelerator"].astype(float),
            "label": [
                f"{r.accelerator} {r.result_per_accelerator:,.0f} tok/s/GPU "
                f"({r.round} {rid}, {r.submitter})"
                for r, rid in zip(sub.itertuples(index=False), rids, strict=True)
            ],
            "source": [
                f"MLPerf Inference {r.round} {rid}: {r.results_path}"
                for r, rid in zip(sub.itertuples(index=False), rids, strict=True)
            ],
        },
        columns=cols,
    )


def _best_mlperf(rows: pd.DataFrame, *, training: bool) -> tuple[float, str, list[str]]:
    """The best row (shortest time to train, or highest throughput)."""
    best = rows.loc[rows["value"].idxmin() if training else rows["value"].idxmax()]
    return float(best["value"]), str(best["label"]), [str(best["source"])]


def eval_mlperf_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Best subject vs best reference MLPerf result *within one round* (training: speed).

    Results of different rounds are never paired: software, rules and datasets change
    between rounds, so a pair is only fair when both sides ran the same round. The newest
    round holding results of both sides is used; with none, the claim is unverifiable.
    """
    spec = str(row["field"])
    training = spec.startswith("train:")
    subj, ref = _split(row["subject"]), _split(row["reference"])
    rs, rr = _mlperf_rows(ctx, spec, subj), _mlperf_rows(ctx, spec, ref)
    if rs.empty or rr.empty:
        missing = subj if rs.empty else ref
        return Outcome(
            "unverifiable",
            products=subj + ref,
            reasoning=f"no MLPerf result for {missing} in {spec}.",
        )
    common = set(rs["round"]) & set(rr["round"])
    if not common:
        return Outcome(
            "unverifiable",
            products=subj + ref,
            reasoning=(
                f"no MLPerf round has {spec} results for both sides ({'/'.join(subj)}: "
                f"{', '.join(sorted(set(rs['round']), key=_round_key))}; {'/'.join(ref)}: "
                f"{', '.join(sorted(set(rr['round']), key=_round_key))}); results of "
                "different rounds are not compared."
            ),
        )
    rnd = max(common, key=_round_key)
    a, la, sa = _best_mlperf(rs[rs["round"] == rnd], training=training)
    b, lb, sb = _best_mlperf(rr[rr["round"] == rnd], training=training)
    ratio = b / a if training else a / b
    claimed = _num(row.get("claimed_value"))
    ref_claim = _num(row.get("claimed_reference_value"))
    if math.isfinite(ref_claim):
        claimed = claimed / ref_claim
    tol = _tol(row, 0.0)
    ok = _ratio_holds(ratio, row["expect"], claimed, tol)
    what = "speed ratio (inverse time to train)" if training else "throughput ratio"
    want = {"gt": "> 1", "lt": "< 1", "approx": f"~{claimed:.2f} (+/-{tol:g}%)"}[row["expect"]]
    return Outcome(
        "supported" if ok else "contradicted",
        f"{la} vs {lb}: {ratio:.2f}x",
        [la.split(" ")[0], lb.split(" ")[0]],
        sa + sb,
        f"MLPerf {spec}, round {rnd} (the newest with both sides): best {'/'.join(subj)} vs "
        f"best {'/'.join(ref)} {what} = {ratio:.2f}x; the claim needs {want}.",
    )


def _pool(ctx: Context) -> str:
    """The scenario's rental pool (the default pool without a scenario)."""
    return ctx.scenario.cost.rental_pool if ctx.scenario is not None else Cost().rental_pool


def _price_per_acc(ctx: Context, table: str) -> tuple[pd.Series, pd.Series]:
    """Price per accelerator by the TCO chapter's rule, and the source ids behind each.

    Rental: the median quote of the scenario's pool only (like-for-like). Purchase: the
    per-GPU midpoint of the sourced estimates; the project's judgement rows are left out,
    so a pair priced only by our judgement is "no price" (unverifiable), never evidence.
    """
    if table == "rental_quotes":
        if ctx.rental_quotes.empty:
            return pd.Series(dtype=float), pd.Series(dtype=object)
        return tco.rental_medians(ctx.rental_quotes, _pool(ctx))
    if ctx.purchase_prices.empty:
        return pd.Series(dtype=float), pd.Series(dtype=object)
    price, srcs = tco.purchase_per_gpu(ctx.purchase_prices, sourced_only=True)
    return price["price"], srcs


def eval_price_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Subject vs reference price (median per accelerator), per generation pair."""
    table = str(row["field"])
    price, srcs = _price_per_acc(ctx, table)
    label = PRICE_LABELS.get(table, table)
    holds: list[bool | None] = []
    details: list[str] = []
    used: set[str] = set()
    tol = _tol(row, 0.0)
    subj, ref = _split(row["subject"]), _split(row["reference"])
    lo, hi = _num(row.get("claimed_value")) - tol, _num(row.get("claimed_reference_value")) + tol
    discounts = []
    for a, b in zip(subj, ref, strict=True):
        pa, pb = _num(price.get(a)), _num(price.get(b))
        if not (math.isfinite(pa) and math.isfinite(pb) and pb):
            holds.append(None)
            gone = " and ".join(x for x, v in ((a, pa), (b, pb)) if not math.isfinite(v))
            details.append(f"{a} vs {b}: no price for {gone}")
        elif row["expect"] == "range":
            disc = (1 - pa / pb) * 100
            discounts.append(disc)
            holds.append(lo <= disc <= hi)
            details.append(f"{a} ${_fmt(pa)} vs {b} ${_fmt(pb)}: {disc:.0f}% less")
        else:
            ratio = pa / pb
            holds.append(_ratio_holds(ratio, row["expect"], _num(row.get("claimed_value")), tol))
            details.append(f"{a} ${_fmt(pa)} / {b} ${_fmt(pb)} = {ratio:.2f}x")
        used |= set(_split(srcs.get(a))) | set(_split(srcs.get(b)))
    if row["expect"] == "range":
        what = (
            f"Tested: {_side(subj)} costs {lo:g}-{hi:g}% less than {_side(ref)} "
            f"({label}; the claimed range widened by {tol:g} points)"
        )
    else:
        what = _ratio_what(row, label, tol)
    out = _paired_verdict(holds, what, details, list(zip(subj, ref, strict=True)))
    out.products = subj + ref
    out.sources = sorted(used)
    out.reasoning = f"{out.reasoning} Pairs: {out.observed}."
    above, below = sum(d > hi for d in discounts), sum(d < lo for d in discounts)
    if out.verdict == "contradicted" and above and not below:
        out.reasoning += " Where it misses, AMD's discount is larger than claimed."
    elif out.verdict == "contradicted" and below and not above:
        out.reasoning += " Where it misses, AMD's discount is smaller than claimed."
    return out
