"""Testing the seed article's claims against the project's data.

Analytical decisions taken here:

* The verdict set is closed (:data:`VERDICTS`): ``supported``, ``contradicted``,
  ``mixes generations`` (the quoted number is real but belongs to another product or
  generation than the one named: found by searching every accelerator in the spec table for
  the value within tolerance) and ``unverifiable``.
* Numbers are tested against the tables, never retyped: specs (:func:`data.load_specs`),
  MLPerf results, prices, and for model-output claims (latency tiers, training winner,
  cost) the chapters' key results passed in as ``chapter_results`` so the function stays
  pure and agrees with the chapters by construction. A claim that needs a chapter output
  that was not passed is ``unverifiable`` for that run, and says so.
* Paired comparisons (AMD part vs NVIDIA part of the same generation: MI300X/H100,
  MI325X/H200, MI355X/B200) are ``supported`` when the claimed direction holds in most
  pairs *and* in the newest pair: "typically" should still hold today.
* MLPerf comparisons use the best per-accelerator result (a derived, not official MLPerf
  metric) per accelerator over the rounds in ``data/benchmarks`` (rdi rows excluded).
* Statements no table can test are settled by a cited document (``source_fact``) or are
  ``unverifiable``; the claims table records which.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analysis import ids
from analysis.tables.claims import VERDICTS

__all__ = ["EVALUATORS", "VERDICTS", "evaluate_claims", "verdict_counts"]

INFERENCE_CHAPTER = "30-inference-tiers"
TRAINING_CHAPTER = "20-training-scaling"
TCO_CHAPTER = "40-tco"

OUTPUT_COLUMNS = (
    "claim_id",
    "quote",
    "topic",
    "kind",
    "test_method",
    "verdict",
    "claimed",
    "observed",
    "products",
    "data_sources",
    "data_urls",
    "reasoning",
)


@dataclass
class Outcome:
    """What an evaluator found for one claim."""

    verdict: str
    observed: str = ""
    products: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    reasoning: str = ""


@dataclass
class Context:
    """The data an evaluator may use (all optional: missing data = unverifiable)."""

    specs: pd.DataFrame
    mlperf_inference: pd.DataFrame
    mlperf_training: pd.DataFrame
    rental_quotes: pd.DataFrame
    purchase_prices: pd.DataFrame
    chapter_results: Mapping[str, Mapping[str, Any]]
    scenario: Any = None


# --- small helpers --------------------------------------------------------------------------


def _split(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return []
    return [v.strip() for v in str(value).split(";") if v.strip()]


def _num(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "n/a"
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


def _vendor_of(acc: str) -> str:
    return "AMD" if acc.startswith("MI") else "NVIDIA"


def _resolve(names: list[str], pool: list[str]) -> list[str]:
    """Accelerator ids named directly, or every id of a named vendor within ``pool``."""
    out: list[str] = []
    for n in names:
        if n in ids.VENDORS:
            out += [a for a in pool if _vendor_of(a) == n and a not in out]
        elif n not in out:
            out.append(n)
    return out


def _within(value: float, target: float, tol_pct: float) -> bool:
    if not (math.isfinite(value) and math.isfinite(target)):
        return False
    return abs(value - target) <= abs(target) * tol_pct / 100.0 + 1e-9


def _tol(row: Mapping[str, Any], default: float = 2.0) -> float:
    t = _num(row.get("tolerance_pct"))
    return t if math.isfinite(t) else default


# --- spec evaluators ------------------------------------------------------------------------


def _spec_field_values(specs: pd.DataFrame, spec: str) -> tuple[pd.Series, pd.Series, str]:
    """Values of a spec field (``col``, ``col*factor`` or ``a/b``) and their sources."""
    spec = spec.strip()
    if "/" in spec:
        a, b = (s.strip() for s in spec.split("/", 1))
        vals = pd.to_numeric(specs[a], errors="coerce") / pd.to_numeric(specs[b], errors="coerce")
        srcs = specs[f"{a}_source"].astype(str) + ";" + specs[f"{b}_source"].astype(str)
        return vals, srcs, spec
    factor = 1.0
    col = spec
    if "*" in spec:
        col, f = (s.strip() for s in spec.split("*", 1))
        factor = float(f)
    src_col = f"{col}_source" if f"{col}_source" in specs else "process_source"
    srcs = specs[src_col].astype(str) if src_col in specs else pd.Series("", index=specs.index)
    numeric = pd.to_numeric(specs[col], errors="coerce")
    if numeric.isna().all() and specs[col].notna().any():
        return specs[col], srcs, col  # a text field (process node, package)
    return numeric.astype(float) * factor, srcs, col


def _match_value(
    specs: pd.DataFrame, fields: list[str], accs: list[str], value: float, text: str, tol: float
) -> list[tuple[str, str, Any, str]]:
    """(accelerator, field, value, source) of every spec entry that matches the claim."""
    hits = []
    sub = specs[specs["accelerator"].isin(accs)]
    names = sub["accelerator"].tolist()
    for f in fields:
        vals, srcs, name = _spec_field_values(sub, f)
        # plain lists: per-row pandas indexing dominated the audit's run time
        for acc, v, src in zip(names, vals.tolist(), srcs.tolist(), strict=True):
            if text:
                ok = isinstance(v, str) and re.search(text, v, flags=re.IGNORECASE) is not None
            else:
                ok = _within(_num(v), value, tol)
            if ok:
                hits.append((acc, f, v, src))
    return hits


def _spec_part(
    ctx: Context, accs: list[str], fields: list[str], value: float, text: str, tol: float
) -> Outcome:
    specs = ctx.specs
    claimed = text or _fmt(value)
    if specs.empty or not accs:
        return Outcome("unverifiable", reasoning="no spec data for the named products")
    primary = fields[0]
    known = specs[specs["accelerator"].isin(accs)]
    actual_vals, actual_srcs, _ = _spec_field_values(known, primary)
    actual = "; ".join(
        f"{a} {primary} = {v if isinstance(v, str) else _fmt(_num(v))}"
        for a, v in zip(known["accelerator"], actual_vals, strict=True)
    )
    srcs = sorted({s for x in actual_srcs for s in _split(x)})
    if known.empty or all(
        (not isinstance(v, str)) and not math.isfinite(_num(v)) for v in actual_vals
    ):
        return Outcome("unverifiable", actual, accs, srcs, f"no {primary} value for {accs}")
    hits = _match_value(specs, [primary], accs, value, text, tol)
    if hits:
        prods = [h[0] for h in hits]
        return Outcome(
            "supported",
            actual,
            prods,
            sorted({s for h in hits for s in _split(h[3])}),
            f"{claimed} matches {', '.join(prods)} ({primary}).",
        )
    # The same number in another field of the named products: right number, wrong metric.
    alt = _match_value(specs, fields[1:], accs, value, text, tol)
    if alt:
        a = alt[0]
        return Outcome(
            "contradicted",
            actual,
            [a[0]],
            sorted(set(srcs) | set(_split(a[3]))),
            f"{claimed} is {a[0]}'s {a[1]} (a different quantity), not its {primary}: {actual}.",
        )
    # Search the named vendor's other products first (another generation), then the rest.
    vendors = {_vendor_of(a) for a in accs}
    others = [a for a in specs["accelerator"] if a not in accs]
    same = [a for a in others if _vendor_of(a) in vendors]
    found = _match_value(specs, fields, same, value, text, tol) or _match_value(
        specs, fields, [a for a in others if a not in same], value, text, tol
    )
    if found:
        prods = list(dict.fromkeys(h[0] for h in found))
        status = specs.set_index("accelerator")["status"]
        labels = [f"{p} ({status.get(p, '?')})" for p in prods]
        return Outcome(
            "mixes generations",
            actual,
            prods,
            sorted(set(srcs) | {s for h in found for s in _split(h[3])}),
            f"{claimed} is not {'/'.join(accs)} ({actual}); it matches {', '.join(labels)}.",
        )
    return Outcome(
        "contradicted",
        actual,
        accs,
        srcs,
        f"{claimed} matches no accelerator in the spec table; the named parts have {actual}.",
    )


_SEVERITY = {"contradicted": 3, "mixes generations": 2, "unverifiable": 1, "supported": 0}


def _combine(parts: list[Outcome]) -> Outcome:
    worst = max(parts, key=lambda o: _SEVERITY[o.verdict])
    return Outcome(
        worst.verdict,
        " | ".join(p.observed for p in parts if p.observed),
        list(dict.fromkeys(x for p in parts for x in p.products)),
        sorted({s for p in parts for s in p.sources}),
        " ".join(p.reasoning for p in parts),
    )


def eval_spec_value(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """A quoted spec value (or text property) of the named products."""
    fields = _split(row["field"])
    tol = _tol(row)
    text = "" if pd.isna(row.get("claimed_text")) else str(row["claimed_text"])
    pool = list(ctx.specs["accelerator"]) if not ctx.specs.empty else []
    parts = [
        _spec_part(
            ctx,
            _resolve(_split(row["subject"]), pool),
            fields,
            _num(row.get("claimed_value")),
            text,
            tol,
        )
    ]
    ref_val = _num(row.get("claimed_reference_value"))
    if _split(row.get("reference")) and math.isfinite(ref_val):
        parts.append(
            _spec_part(ctx, _resolve(_split(row["reference"]), pool), fields, ref_val, "", tol)
        )
    return _combine(parts)


def _paired_verdict(holds: list[bool | None], what: str, details: list[str]) -> Outcome:
    known = [h for h in holds if h is not None]
    if not known:
        return Outcome("unverifiable", reasoning=f"no data for any pair ({what}).")
    newest = known[-1]  # the newest pair with data
    majority = sum(known) > len(known) / 2
    ok = majority and bool(newest)
    verdict = "supported" if ok else "contradicted"
    tail = (
        f"holds in {sum(known)} of {len(known)} generation pairs"
        + f", {'including' if newest else 'but not'} the newest with data"
    )
    return Outcome(verdict, "; ".join(details), reasoning=f"{what}: {tail}.")


def _ratio_holds(ratio: float, expect: str, claimed: float, tol: float) -> bool | None:
    if not math.isfinite(ratio):
        return None
    if expect == "gt":
        return ratio > 1 + tol / 100
    if expect == "lt":
        return ratio < 1 - tol / 100
    if expect == "approx":
        return _within(ratio, claimed, tol)
    raise ValueError(f"unknown expect {expect!r} for a ratio claim")


def eval_spec_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Subject vs reference spec metric, per generation pair."""
    if ctx.specs.empty:
        return Outcome("unverifiable", reasoning="no spec data")
    specs = ctx.specs.set_index("accelerator", drop=False)
    vals, srcs, name = _spec_field_values(specs, str(row["field"]))
    tol = _tol(row, 0.0)
    holds, details, used = [], [], set()
    for a, b in zip(_split(row["subject"]), _split(row["reference"]), strict=True):
        va, vb = _num(vals.get(a)), _num(vals.get(b))
        ratio = va / vb if vb else math.nan
        holds.append(_ratio_holds(ratio, row["expect"], _num(row.get("claimed_value")), tol))
        details.append(f"{a} {_fmt(va)} / {b} {_fmt(vb)} = {ratio:.2f}x")
        used |= set(_split(srcs.get(a))) | set(_split(srcs.get(b)))
    out = _paired_verdict(holds, f"{name} ({row['expect']})", details)
    out.products = _split(row["subject"]) + _split(row["reference"])
    out.sources = sorted(used)
    out.reasoning = f"{out.reasoning} Pairs: {out.observed}."
    return out


def eval_memory_fit(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Whether a model's weights (+ headroom) fit one subject GPU but not one reference GPU."""
    if ctx.specs.empty:
        return Outcome("unverifiable", reasoning="no spec data")
    specs = ctx.specs.set_index("accelerator")
    need = _num(row["claimed_value"]) * (1 + _tol(row, 10.0) / 100)
    holds, details, used = [], [], set()
    for a, b in zip(_split(row["subject"]), _split(row["reference"]), strict=True):
        ma, mb = _num(specs["memory_gb"].get(a)), _num(specs["memory_gb"].get(b))
        fa, fb = ma >= need, mb >= need
        holds.append(fa and not fb if math.isfinite(ma) and math.isfinite(mb) else None)
        details.append(
            f"{a} {ma:g} GB {'fits' if fa else 'does not fit'}, "
            f"{b} {mb:g} GB {'fits' if fb else 'does not fit'}"
        )
        used |= {specs["memory_gb_source"].get(a), specs["memory_gb_source"].get(b)}
    out = _paired_verdict(
        holds,
        f"one-GPU fit of {_fmt(_num(row['claimed_value']))} GB weights + headroom "
        f"({need:.0f} GB), AMD fits where NVIDIA does not",
        details,
    )
    out.products = _split(row["subject"]) + _split(row["reference"])
    out.sources = sorted(s for s in used if isinstance(s, str))
    out.reasoning = f"{out.reasoning} {out.observed}."
    return out


# --- MLPerf ---------------------------------------------------------------------------------


def _mlperf_best(ctx: Context, spec: str, accs: list[str]) -> tuple[float, str, list[str]]:
    """Best per-accelerator result of ``accs`` for ``bench:scenario`` (or train:bench:n)."""
    parts = spec.split(":")
    if parts[0] == "train":
        df = ctx.mlperf_training
        if df.empty:
            return math.nan, "", []
        bench, n = parts[1], int(parts[2])
        sub = df[
            (df["benchmark"] == bench)
            & (df["total_accelerators"] == n)
            & df["accelerator"].isin(accs)
            & df["time_to_train_min"].notna()
            & (df["availability"] != "rdi")
        ]
        if sub.empty:
            return math.nan, "", []
        best = sub.loc[sub["time_to_train_min"].idxmin()]
        label = (
            f"{best['accelerator']} {best['time_to_train_min']:.2f} min "
            f"({best['round']}, {best['submitter']})"
        )
        return (
            float(best["time_to_train_min"]),
            label,
            [f"MLPerf Training {best['round']}: {best['results_path']}"],
        )
    df = ctx.mlperf_inference
    if df.empty:
        return math.nan, "", []
    bench, scen = parts
    sub = df[
        (df["benchmark"] == bench)
        & (df["scenario"] == scen)
        & df["accelerator"].isin(accs)
        & (df["availability"] != "rdi")
    ]
    if sub.empty:
        return math.nan, "", []
    best = sub.loc[sub["result_per_accelerator"].idxmax()]
    rid = best["result_id"] if isinstance(best["result_id"], str) else best["mlperf_id"]
    label = (
        f"{best['accelerator']} {best['result_per_accelerator']:,.0f} tok/s/GPU "
        f"({best['round']} {rid}, {best['submitter']})"
    )
    return (
        float(best["result_per_accelerator"]),
        label,
        [f"MLPerf Inference {best['round']} {rid}: {best['results_path']}"],
    )


def eval_mlperf_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Best subject vs best reference MLPerf result (training: speed = inverse time)."""
    spec = str(row["field"])
    subj, ref = _split(row["subject"]), _split(row["reference"])
    a, la, sa = _mlperf_best(ctx, spec, subj)
    b, lb, sb = _mlperf_best(ctx, spec, ref)
    if not (math.isfinite(a) and math.isfinite(b)):
        missing = subj if not math.isfinite(a) else ref
        return Outcome(
            "unverifiable",
            products=subj + ref,
            reasoning=f"no MLPerf result for {missing} in {spec}.",
        )
    ratio = b / a if spec.startswith("train:") else a / b
    claimed = _num(row.get("claimed_value"))
    ref_claim = _num(row.get("claimed_reference_value"))
    if math.isfinite(ref_claim):
        claimed = claimed / ref_claim
    tol = _tol(row, 0.0)
    ok = _ratio_holds(ratio, row["expect"], claimed, tol)
    what = (
        "speed ratio (inverse time to train)" if spec.startswith("train:") else "throughput ratio"
    )
    want = {"gt": "> 1", "lt": "< 1", "approx": f"~{claimed:.2f} (+/-{tol:g}%)"}[row["expect"]]
    return Outcome(
        "supported" if ok else "contradicted",
        f"{la} vs {lb}: {ratio:.2f}x",
        [la.split(" ")[0], lb.split(" ")[0]],
        sa + sb,
        f"MLPerf {spec}: best {'/'.join(subj)} vs best {'/'.join(ref)} {what} = {ratio:.2f}x; "
        f"the claim needs {want}.",
    )


# --- prices ---------------------------------------------------------------------------------


def _price_per_acc(ctx: Context, table: str) -> tuple[pd.Series, pd.Series]:
    if table == "rental_quotes":
        df = ctx.rental_quotes
        if df.empty:
            return pd.Series(dtype=float), pd.Series(dtype=object)
        price = df.groupby("accelerator")["price_usd_per_gpu_hour"].median()
    else:
        df = ctx.purchase_prices
        if df.empty:
            return pd.Series(dtype=float), pd.Series(dtype=object)
        df = df.assign(mid=(df["price_usd_low"] + df["price_usd_high"]) / 2)
        per_gpu = np.where(df["unit"] == "gpu", df["mid"], df["mid"] / 8)
        price = df.assign(per_gpu=per_gpu).groupby("accelerator")["per_gpu"].median()
    srcs = df.groupby("accelerator")["source_id"].agg(lambda s: ";".join(sorted(set(s))))
    return price, srcs


def eval_price_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Subject vs reference price (median per accelerator), per generation pair."""
    table = str(row["field"])
    price, srcs = _price_per_acc(ctx, table)
    unit = "$/GPU-hour" if table == "rental_quotes" else "$ per GPU (mid-point)"
    holds, details, used = [], [], set()
    tol = _tol(row, 0.0)
    for a, b in zip(_split(row["subject"]), _split(row["reference"]), strict=True):
        pa, pb = _num(price.get(a)), _num(price.get(b))
        if row["expect"] == "range":
            disc = (1 - pa / pb) * 100 if pb else math.nan
            lo, hi = _num(row["claimed_value"]) - tol, _num(row["claimed_reference_value"]) + tol
            holds.append(lo <= disc <= hi if math.isfinite(disc) else None)
            details.append(f"{a} {_fmt(pa)} vs {b} {_fmt(pb)}: {disc:.0f}% less")
        else:
            ratio = pa / pb if pb else math.nan
            holds.append(_ratio_holds(ratio, row["expect"], _num(row.get("claimed_value")), tol))
            details.append(f"{a} {_fmt(pa)} / {b} {_fmt(pb)} = {ratio:.2f}x")
        used |= set(_split(srcs.get(a))) | set(_split(srcs.get(b)))
    out = _paired_verdict(holds, f"{table} median {unit}", details)
    out.products = _split(row["subject"]) + _split(row["reference"])
    out.sources = sorted(used)
    out.reasoning = f"{out.reasoning} Pairs: {out.observed}."
    return out


# --- model outputs (chapters' key results) -------------------------------------------------


def _tiers(ctx: Context) -> list[tuple[int, float]]:
    """(tier index, TPOT bound in ms; inf = unbounded) of the scenario's tiers."""
    if ctx.scenario is None:
        return []
    return [
        (i, math.inf if t.tpot_ms_max is None else float(t.tpot_ms_max))
        for i, t in enumerate(ctx.scenario.inference.tiers)
    ]


def _shipping_candidates(ctx: Context) -> list[str]:
    if ctx.scenario is None:
        return []
    return [a for a in ctx.scenario.candidates if a not in ids.ACCELERATORS_ANNOUNCED]


def _tok_s(res: Mapping[str, Any], i: int, acc: str) -> float:
    v = _num(res.get(f"tier{i}_tok_s_gpu_{acc}"))
    return v if math.isfinite(v) else 0.0  # infeasible = no tokens within the bound


def _best(res: Mapping[str, Any], i: int, accs: list[str]) -> tuple[float, str]:
    vals = {a: _tok_s(res, i, a) for a in accs}
    if not vals:
        return math.nan, ""
    acc = max(vals, key=lambda a: vals[a])
    return vals[acc], acc


def _need(ctx: Context, chapter: str) -> Mapping[str, Any] | None:
    res = ctx.chapter_results.get(chapter)
    return res if res else None


def _mo_unverifiable(why: str) -> Outcome:
    return Outcome("unverifiable", reasoning=why)


def _tier_test(row: Mapping[str, Any], ctx: Context, res: Mapping[str, Any]) -> Outcome:
    test = row["field"]
    cands = _shipping_candidates(ctx)
    tiers = _tiers(ctx)
    src = [f"chapter {INFERENCE_CHAPTER}"]
    if test == "tight_tier_tok_s":
        bound = _num(row["claimed_value"])
        tight = [(i, t) for i, t in tiers if t <= bound]
        if not tight:
            return _mo_unverifiable(f"the scenario has no tier with TPOT <= {bound:g} ms.")
        i = min(tight, key=lambda x: x[1])[0]
        subj = [a for a in _resolve(_split(row["subject"]), cands) if a in cands]
        ref = [a for a in _resolve(_split(row["reference"]), cands) if a in cands]
        if not subj or not ref:
            return _mo_unverifiable("the named parts are not all candidates of this scenario.")
        a, acc_a = _best(res, i, subj)
        b, acc_b = _best(res, i, ref)
        ratio = a / b if b else math.inf
        ok = _ratio_holds(ratio, row["expect"], math.nan, _tol(row, 0.0))
        return Outcome(
            "supported" if ok else "contradicted",
            f"tier {i} ({res.get(f'tier{i}_name', '')}): {acc_a} {_fmt(a)} vs {acc_b} {_fmt(b)} "
            f"tok/s/GPU ({ratio:.2f}x)",
            [acc_a, acc_b],
            src,
            f"In the tightest tier within {bound:g} ms, {acc_a} makes {ratio:.2f}x the tokens/s "
            f"per GPU of the best of {'/'.join(ref)} ({acc_b}); the claim needs > "
            f"{1 + _tol(row, 0.0) / 100:.2f}x.",
        )
    amd = [a for a in cands if _vendor_of(a) == "AMD"]
    nv = [a for a in cands if _vendor_of(a) == "NVIDIA"]
    if test == "amd_ratio_trend":
        ratios = []
        for i, _ in tiers:
            a, _a = _best(res, i, amd)
            b, _b = _best(res, i, nv)
            ratios.append(a / b if b else math.inf)
        if len(ratios) < 2:
            return _mo_unverifiable("the scenario has a single tier.")
        ok = ratios[-1] > ratios[0] and ratios[-1] > 1
        obs = ", ".join(f"tier {i}: {r:.2f}x" for (i, _), r in zip(tiers, ratios, strict=True))
        return Outcome(
            "supported" if ok else "contradicted",
            f"best AMD / best NVIDIA tok/s/GPU: {obs}",
            amd + nv,
            src,
            f"AMD's throughput ratio goes from {ratios[0]:.2f}x (tightest) to {ratios[-1]:.2f}x "
            "(loosest); the claim needs it to rise and end above 1.",
        )
    if test == "loose_tier_winner":
        i = max(tiers, key=lambda x: x[1])[0]
        winner = res.get(f"tier{i}_winner")
        if not winner:
            return _mo_unverifiable(f"no tier{i}_winner in the inference results.")
        subj = _split(row["subject"])
        return Outcome(
            "supported" if winner in subj else "contradicted",
            f"tier {i} ({res.get(f'tier{i}_name', '')}) winner: {winner}",
            [winner],
            src,
            f"The loosest tier's highest tokens/s per GPU is {winner}, "
            f"{'one' if winner in subj else 'not one'} of {'/'.join(subj)}.",
        )
    raise ValueError(f"unknown tier test {test!r}")


def _cost_per_mtok(gpu_hour_usd: float, tok_s: float) -> float:
    # Same formula as tco.cost_per_million_tokens (hourly cost over tokens per hour).
    return gpu_hour_usd / (tok_s * 3600.0) * 1e6 if tok_s > 0 else math.inf


def eval_model_output(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Claims about latency tiers, training and cost, tested on the chapters' key results."""
    test = row["field"]
    if test in {"tight_tier_tok_s", "amd_ratio_trend", "loose_tier_winner"}:
        res = _need(ctx, INFERENCE_CHAPTER)
        if res is None or ctx.scenario is None:
            return _mo_unverifiable(f"needs the {INFERENCE_CHAPTER} chapter's results.")
        return _tier_test(row, ctx, res)
    if test in {"train_winner_vendor", "scaling_eff"}:
        res = _need(ctx, TRAINING_CHAPTER)
        if res is None:
            return _mo_unverifiable(f"needs the {TRAINING_CHAPTER} chapter's results.")
        src = [f"chapter {TRAINING_CHAPTER}"]
        if test == "train_winner_vendor":
            v = res.get("train_winner_vendor")
            if not v:
                return _mo_unverifiable("no train_winner_vendor in the training results.")
            want = _split(row["subject"])[0]
            return Outcome(
                "supported" if v == want else "contradicted",
                f"train_winner {res.get('train_winner')} ({v}), margin "
                f"{_fmt(_num(res.get('train_margin_pct')))}%",
                [str(res.get("train_winner"))],
                src,
                f"The fastest shipping candidate for the scenario's training job is "
                f"{res.get('train_winner')} ({v}).",
            )
        effs = {
            k.removeprefix("scaling_eff_"): _num(v)
            for k, v in res.items()
            if k.startswith("scaling_eff_")
            and k.removeprefix("scaling_eff_") in ids.ACCELERATORS  # not scaling_eff_16384_*
            and k.removeprefix("scaling_eff_") not in ids.ACCELERATORS_ANNOUNCED
        }
        by_vendor: dict[str, tuple[float, str]] = {}
        for acc, e in effs.items():
            if math.isfinite(e) and e > by_vendor.get(_vendor_of(acc), (-1.0, ""))[0]:
                by_vendor[_vendor_of(acc)] = (e, acc)
        s, r = _split(row["subject"])[0], _split(row["reference"])[0]
        if s not in by_vendor or r not in by_vendor:
            return _mo_unverifiable("scaling efficiency missing for one vendor.")
        ratio = by_vendor[s][0] / by_vendor[r][0]
        ok = _ratio_holds(ratio, row["expect"], math.nan, _tol(row, 0.0))
        return Outcome(
            "supported" if ok else "contradicted",
            f"best scaling efficiency {s} {by_vendor[s][1]} {by_vendor[s][0]:.3f} vs {r} "
            f"{by_vendor[r][1]} {by_vendor[r][0]:.3f}",
            [by_vendor[s][1], by_vendor[r][1]],
            src,
            f"At the scenario's cluster size the best {s} part keeps {by_vendor[s][0]:.0%} of its "
            f"per-GPU throughput, the best {r} part {by_vendor[r][0]:.0%}.",
        )
    if test in {"tco_cheaper_vendor", "buy_cheaper_vendor"}:
        res = _need(ctx, TCO_CHAPTER)
        if res is None:
            return _mo_unverifiable(f"needs the {TCO_CHAPTER} chapter's results.")
        if test == "buy_cheaper_vendor" and res.get("mode") != "buy":
            return _mo_unverifiable(
                f"this scenario rents (mode {res.get('mode')!r}); the claim is about buying."
            )
        ps = {
            k: _num(v)
            for k, v in res.items()
            if k.endswith("_p_amd_cheaper") and math.isfinite(_num(v))
        }
        if not ps:
            return _mo_unverifiable("no P(AMD cheaper) in the TCO results.")
        want = _split(row["subject"])[0]
        wins = sum((p > 0.5) == (want == "AMD") for p in ps.values())
        ok = wins > len(ps) / 2
        obs = ", ".join(f"{k.removesuffix('_p_amd_cheaper')}: {p:.2f}" for k, p in ps.items())
        return Outcome(
            "supported" if ok else "contradicted",
            f"P(AMD cheaper) {obs} (mode {res.get('mode')})",
            [],
            [f"chapter {TCO_CHAPTER}"],
            f"{want} is the likelier cheaper platform in {wins} of {len(ps)} workloads.",
        )
    if test == "rent_cheapest_vendor":
        return _rent_cheapest(row, ctx)
    raise ValueError(f"unknown model-output test {test!r}")


def _rent_cheapest(row: Mapping[str, Any], ctx: Context) -> Outcome:
    want = _split(row["subject"])[0]
    tco = _need(ctx, TCO_CHAPTER)
    tiers = _tiers(ctx)
    if tco is not None and tco.get("mode") == "rent" and tiers:
        cheapest = [str(tco.get(f"tier{i}_cheapest", "")) for i, _ in tiers]
        if all(cheapest):
            vend = [_vendor_of(c) for c in cheapest]
            ok = all(v == want for v in vend)
            return Outcome(
                "supported" if ok else "contradicted",
                ", ".join(f"tier {i}: {c}" for (i, _), c in zip(tiers, cheapest, strict=True)),
                cheapest,
                [f"chapter {TCO_CHAPTER}"],
                f"Renting, the cheapest $/Mtok is {want} in "
                f"{sum(v == want for v in vend)} of {len(vend)} tiers (TCO chapter, medians).",
            )
    inf = _need(ctx, INFERENCE_CHAPTER)
    if inf is None or not tiers or ctx.rental_quotes.empty:
        return _mo_unverifiable("needs rental quotes and the inference chapter's results.")
    price, srcs = _price_per_acc(ctx, "rental_quotes")
    cands = [a for a in _shipping_candidates(ctx) if a in price.index]
    results, used = [], set()
    for i, _ in tiers:
        costs = {a: _cost_per_mtok(float(price[a]), _tok_s(inf, i, a)) for a in cands}
        costs = {a: c for a, c in costs.items() if math.isfinite(c)}
        if costs:
            best = min(costs, key=lambda a: costs[a])
            results.append((i, best, costs[best]))
            used |= set(_split(srcs.get(best)))
    if not results:
        return _mo_unverifiable("no candidate with both a rental quote and a feasible tier.")
    vend = [_vendor_of(b) for _, b, _ in results]
    ok = all(v == want for v in vend)
    return Outcome(
        "supported" if ok else "contradicted",
        ", ".join(f"tier {i}: {b} ${c:.3g}/Mtok" for i, b, c in results),
        [b for _, b, _ in results],
        sorted(used) + [f"chapter {INFERENCE_CHAPTER}"],
        f"Median rental $/GPU-hour over the inference chapter's tokens/s per GPU: {want} is "
        f"cheapest per million tokens in {sum(v == want for v in vend)} of {len(vend)} tiers.",
    )


# --- facts ----------------------------------------------------------------------------------


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


def _claimed_text(row: Mapping[str, Any]) -> str:
    parts = []
    if isinstance(row.get("claimed_text"), str):
        parts.append(f"'{row['claimed_text']}' in {row['field']}")
    v, r = _num(row.get("claimed_value")), _num(row.get("claimed_reference_value"))
    unit = row["unit"] if isinstance(row.get("unit"), str) else ""
    if math.isfinite(v):
        parts.append(f"{_fmt(v)} {unit}".strip())
    if math.isfinite(r):
        parts.append(f"vs {_fmt(r)} {unit}".strip())
    if not parts and isinstance(row.get("expect"), str):
        subj = row["subject"] if isinstance(row.get("subject"), str) else ""
        ref = row["reference"] if isinstance(row.get("reference"), str) else ""
        parts.append(f"{subj} {row['expect']} {ref}".strip())
    return " ".join(parts)


def _load_or_empty(name: str) -> pd.DataFrame:
    from analysis import data

    try:
        return data.load_specs() if name == "specs" else data.load_table(name)
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
    chapter_results: Mapping[str, Mapping[str, Any]] | None = None,
    scenario: Any = None,
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

    Returns:
        One row per claim: claim_id, quote, topic, kind, test_method, verdict (one of
        :data:`VERDICTS`), claimed, observed (the values found), products (the products the
        numbers really belong to), data_sources (source ids or MLPerf result paths),
        data_urls, reasoning.
    """
    tables = {
        "specs": specs,
        "claims": claims,
        "mlperf_inference": mlperf_inference,
        "mlperf_training": mlperf_training,
        "rental_quotes": rental_quotes,
        "purchase_prices": purchase_prices,
        "sources": sources,
    }
    for name, df in tables.items():
        if df is None:
            tables[name] = _load_or_empty(name)
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
        fact_verdict = row.get("fact_verdict")
        if (
            row["test_method"] not in {"source_fact", "none"}
            and isinstance(fact_verdict, str)
            and out.verdict == "contradicted"
            and "matches no accelerator" in out.reasoning
        ):
            # The number is in none of our tables: the cited document says where it is from.
            out.verdict = fact_verdict
            out.sources = sorted(set(out.sources) | set(_split(row.get("fact_sources"))))
            out.reasoning += f" {row.get('fact', '')}"
        elif isinstance(row.get("fact"), str) and row["test_method"] not in {"source_fact"}:
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
