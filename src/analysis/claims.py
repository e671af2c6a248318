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
  metric) *within one round*: the newest round in ``data/benchmarks`` with results of both
  sides (rdi rows excluded). Rounds are never mixed (software, rules and datasets change
  between them); a pair no single round holds is ``unverifiable``.
* Price claims use the TCO chapter's one price rule: rental quotes of the scenario's pool
  only; purchase prices from sourced estimates only. A price that rests on the project's
  own judgement row can neither support nor contradict a claim: the pair is "no price".
* Statements no table can test are settled by a cited document (``source_fact``) or are
  ``unverifiable``; the claims table records which.
* A claimed *ratio* that no named (shipping) pair shows but the announced generation's pair
  does (MI455X vs VR200) is ``mixes generations``; a quoted number found in no spec row
  takes the row's ``fact_verdict`` and the products its cited ``fact`` names.
* A right number for a different quantity of the same part (e.g. a NIC bandwidth quoted as
  the scale-up link's) is ``contradicted``, not ``mixes generations``: no generation is mixed.
* The training-winner claim needs a win larger than the training model's MLPerf error: a
  margin inside it is a tie. Model-output verdicts cite the chapter and the spec/price
  sources its models read.
* What the reader sees is prose: claimed text, not its match pattern; field labels, not
  column names (those stay in ``observed``); "none of the 3 generation pairs", not "0 of 3".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from analysis import ids
from analysis.tables.claims import VERDICTS
from analysis.tco import cost_per_million_tokens
from analysis.textsafe import markdown_text

__all__ = [
    "EVALUATORS",
    "VERDICTS",
    "evaluate_claims",
    "key_results",
    "select_claims",
    "verdict_counts",
]

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
    unmatched: bool = False  # a quoted number found in no spec row at all
    fact_used: bool = False  # the row's cited fact is already in the reasoning


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


def _resolve(names: list[str], pool: list[str]) -> list[str]:
    """Accelerator ids named directly, or every id of a named vendor within ``pool``."""
    out: list[str] = []
    for n in names:
        if n in ids.VENDORS:
            out += [a for a in pool if ids.vendor_of(a) == n and a not in out]
        elif n not in out:
            out.append(n)
    return out


#: Reader-facing names of the spec fields the claims test (the raw column stays in `observed`).
FIELD_LABELS: dict[str, str] = {
    "memory_gb": "HBM capacity",
    "memory_bw_tbps": "memory bandwidth",
    "process_node": "process node",
    "package": "package",
    "bf16_dense_tflops": "peak dense BF16 throughput",
    "fp8_dense_tflops": "peak dense FP8 throughput",
    "fp4_dense_tflops": "peak dense FP4 throughput",
    "tdp_w": "board power",
    "scaleup_bw_gbps": "scale-up (GPU-to-GPU) bandwidth per GPU",
    "scaleout_gbps_per_gpu": "scale-out (NIC) bandwidth per GPU",
    "scaleout_gbps_per_gpu*0.125": "scale-out (NIC) bandwidth per GPU",
    "fp8_dense_tflops/tdp_w": "peak dense FP8 TFLOPS per watt of board power",
}


#: Reader-facing names of the price tables.
PRICE_LABELS: dict[str, str] = {
    "rental_quotes": "median rental price per GPU-hour",
    "purchase_prices": "median purchase price per GPU (mid-point of the quoted range)",
}


def _label(spec: str) -> str:
    """A spec field as a reader reads it: ``memory_bw_tbps`` -> ``memory bandwidth (TB/s)``."""
    spec = spec.strip()
    return FIELD_LABELS.get(spec, spec.replace("_", " "))


def _regex_label(pattern: str) -> str:
    r"""The claimed text behind a match pattern: ``\\b3 ?nm|N3`` -> ``3 nm``.

    The claims table stores a case-insensitive regular expression for text properties; the
    reader sees its first alternative without anchors and optional-space markers.
    """
    first = pattern.split("|")[0]
    first = first.replace(r"\b", "").replace(" ?", " ").strip("^$")
    return re.sub(r"\\(.)", r"\1", first).strip()


def _status_of(ctx: Context, acc: str) -> str:
    if ctx.specs.empty or "status" not in ctx.specs:
        return "?"
    st = ctx.specs.set_index("accelerator")["status"]
    return str(st.get(acc, "?"))


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


def _fmt_val(v: Any, unit: str) -> str:
    return str(v) if isinstance(v, str) else f"{_fmt(_num(v))} {unit}".strip()


def _describe(accs: list[str], vals: list[Any], unit: str) -> str:
    """``B200: 180 GB; B300, GB300: 288 GB``: products grouped by equal value, in table order."""
    groups: dict[str, list[str]] = {}
    for a, v in zip(accs, vals, strict=True):
        groups.setdefault(_fmt_val(v, unit), []).append(a)
    return "; ".join(f"{', '.join(a)}: {v}" for v, a in groups.items())


def _spec_part(
    ctx: Context,
    accs: list[str],
    fields: list[str],
    value: float,
    text: str,
    tol: float,
    unit: str = "",
) -> Outcome:
    specs = ctx.specs
    claimed = _regex_label(text) if text else f"{_fmt(value)} {unit}".strip()
    if specs.empty or not accs:
        return Outcome("unverifiable", reasoning="no spec data for the named products")
    primary = fields[0]
    label = _label(primary)
    known = specs[specs["accelerator"].isin(accs)]
    actual_vals, actual_srcs, _ = _spec_field_values(known, primary)
    desc = _describe(known["accelerator"].tolist(), actual_vals.tolist(), unit)
    actual = f"{desc} ({primary})" if desc else ""
    uniq = {_fmt_val(v, unit) for v in actual_vals.tolist()}
    shown = uniq.pop() if len(uniq) == 1 else desc  # "TSMC 4NP", not the list again
    srcs = sorted({s for x in actual_srcs for s in _split(x)})
    named = ", ".join(accs)
    if known.empty or all(
        (not isinstance(v, str)) and not math.isfinite(_num(v)) for v in actual_vals
    ):
        return Outcome("unverifiable", actual, accs, srcs, f"no {label} value for {named}.")
    hits = _match_value(specs, [primary], accs, value, text, tol)
    if hits:
        prods = [h[0] for h in hits]
        ann = [p for p in prods if _status_of(ctx, p) == "announced"]
        return Outcome(
            "supported",
            actual,
            prods,
            sorted({s for h in hits for s in _split(h[3])}),
            f"{claimed} is the {label} of {', '.join(prods)}"
            + (f" ({', '.join(ann)} announced, not shipping)." if ann else "."),
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
            f"{claimed} is {a[0]}'s {_label(a[1])}, a different quantity; its {label} is {shown}.",
        )
    # Search the named vendor's other products first (another generation), then the rest.
    vendors = {ids.vendor_of(a) for a in accs}
    others = [a for a in specs["accelerator"] if a not in accs]
    same = [a for a in others if ids.vendor_of(a) in vendors]
    found = _match_value(specs, fields, same, value, text, tol) or _match_value(
        specs, fields, [a for a in others if a not in same], value, text, tol
    )
    if found:
        prods = list(dict.fromkeys(h[0] for h in found))
        where = []
        for p in prods:
            f = next(h[1] for h in found if h[0] == p)
            extra = "" if f == primary else f", its {_label(f)}"
            where.append(f"{p} ({_status_of(ctx, p)}{extra})")
        return Outcome(
            "mixes generations",
            actual,
            prods,
            sorted(set(srcs) | {s for h in found for s in _split(h[3])}),
            f"{claimed} is not the {label} of {named} ({shown}); it is that of {', '.join(where)}.",
        )
    return Outcome(
        "contradicted",
        actual,
        accs,
        srcs,
        f"{claimed} is not the {label} of {named} ({shown}), nor of any other part in the "
        "spec table.",
        unmatched=True,
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


def _ids_in(text: str, vendors: set[str]) -> list[str]:
    """Accelerator ids of ``vendors`` that a text names (whole words), in text order."""
    found = [
        (m.start(), a)
        for a in ids.ACCELERATORS
        if ids.vendor_of(a) in vendors
        for m in [re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", text)]
        if m
    ]
    return [a for _, a in sorted(found)]


def eval_spec_value(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """A quoted spec value (or text property) of the named products.

    A number found in no spec row (e.g. a vendor's non-dense headline) takes the row's
    ``fact_verdict``: the cited ``fact`` says where it comes from, and the products it names
    (of the claim's vendor) become the products the number belongs to.
    """
    fields = _split(row["field"])
    tol = _tol(row)
    text = "" if pd.isna(row.get("claimed_text")) else str(row["claimed_text"])
    unit = row["unit"] if isinstance(row.get("unit"), str) else ""
    pool = list(ctx.specs["accelerator"]) if not ctx.specs.empty else []
    subject = _resolve(_split(row["subject"]), pool)
    claims_ = [(subject, _num(row.get("claimed_value")), text)]
    ref_val = _num(row.get("claimed_reference_value"))
    if _split(row.get("reference")) and math.isfinite(ref_val):
        claims_.append((_resolve(_split(row["reference"]), pool), ref_val, ""))
    parts = []
    fact = row.get("fact") if isinstance(row.get("fact"), str) else ""
    fact_verdict = row.get("fact_verdict")
    used_fact = False
    for accs, value, txt in claims_:
        part = _spec_part(ctx, accs, fields, value, txt, tol, unit)
        if part.unmatched and isinstance(fact_verdict, str) and fact:
            part.verdict = fact_verdict
            part.products = _ids_in(fact, {ids.vendor_of(a) for a in accs}) or part.products
            part.sources = sorted(set(part.sources) | set(_split(row.get("fact_sources"))))
            used_fact = True
        parts.append(part)
    out = _combine(parts)
    if used_fact:
        out.reasoning += f" Source: {fact}"
        out.fact_used = True
    return out


def _side(names: list[str]) -> str:
    """A list of parts as a reader names it: the vendor when they are all one vendor's."""
    vendors = {ids.vendor_of(n) if n not in ids.VENDORS else n for n in names}
    if len(vendors) == 1 and len(names) > 1:
        return f"{vendors.pop()} ({', '.join(names)})"
    return "/".join(names)


def _paired_verdict(
    holds: list[bool | None], what: str, details: list[str], pairs: list[tuple[str, str]]
) -> Outcome:
    """Supported when the claim holds in most generation pairs with data *and* the newest."""
    known = [(h, p) for h, p in zip(holds, pairs, strict=True) if h is not None]
    missing = [p for h, p in zip(holds, pairs, strict=True) if h is None]
    if not known:
        return Outcome("unverifiable", reasoning=f"{what}: no data for any generation pair.")
    n, k = len(known), sum(bool(h) for h, _ in known)
    newest_holds, (na, nb) = known[-1]
    ok = k > n / 2 and bool(newest_holds)
    if n == 1:
        tail = f"{'holds' if k else 'does not hold'} for {na} vs {nb}"
    elif k == n:
        tail = f"holds in {'both' if n == 2 else f'all {n}'} generation pairs"
    elif k == 0:
        tail = f"holds in none of the {n} generation pairs"
    else:
        tail = (
            f"holds in {k} of {n} generation pairs, "
            f"{'including' if newest_holds else 'but not in'} the newest ({na} vs {nb})"
        )
    if missing:
        tail += " (no data for " + ", ".join(f"{a} vs {b}" for a, b in missing) + ")"
    return Outcome(
        "supported" if ok else "contradicted", "; ".join(details), reasoning=f"{what}: {tail}."
    )


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


def _ratio_what(row: Mapping[str, Any], label: str, tol: float) -> str:
    """The tested reading of a paired comparison, in words."""
    s, r = _side(_split(row["subject"])), _side(_split(row["reference"]))
    margin = f" (by more than {tol:g}%)" if tol else ""
    if row["expect"] == "gt":
        return f"Tested: {s} has a higher {label} than {r}{margin}"
    if row["expect"] == "lt":
        return f"Tested: {s} has a lower {label} than {r}{margin}"
    return (
        f"Tested: {s} / {r} {label} ratio within {tol:g}% of {_num(row.get('claimed_value')):.2f}x"
    )


def _announced_pair(ctx: Context, subj_vendor: str) -> tuple[str, str] | None:
    """The announced generation as a pair (subject vendor's part, the other vendor's part)."""
    ann = [a for a in ids.ACCELERATORS_ANNOUNCED if a in set(ctx.specs["accelerator"])]
    mine = [a for a in ann if ids.vendor_of(a) == subj_vendor]
    theirs = [a for a in ann if ids.vendor_of(a) != subj_vendor]
    return (mine[0], theirs[0]) if mine and theirs else None


def eval_spec_ratio(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Subject vs reference spec metric, per generation pair.

    A claimed ratio (``approx``) that no named (shipping) pair shows but the announced
    generation's pair does (e.g. MI455X vs VR200) is ``mixes generations``.
    """
    if ctx.specs.empty:
        return Outcome("unverifiable", reasoning="no spec data")
    specs = ctx.specs.set_index("accelerator", drop=False)
    vals, srcs, name = _spec_field_values(specs, str(row["field"]))
    tol = _tol(row, 0.0)
    unit = row["unit"] if isinstance(row.get("unit"), str) else ""
    claimed = _num(row.get("claimed_value"))
    subj, ref = _split(row["subject"]), _split(row["reference"])
    holds, details, used = [], [], set()
    for a, b in zip(subj, ref, strict=True):
        va, vb = _num(vals.get(a)), _num(vals.get(b))
        ratio = va / vb if vb else math.nan
        holds.append(_ratio_holds(ratio, row["expect"], claimed, tol))
        details.append(
            f"{a} {_fmt(va)} / {b} {_fmt(vb)} {unit}".rstrip() + f" = {ratio:.2f}x"
            if math.isfinite(ratio)
            else f"{a} vs {b}: no value"
        )
        used |= set(_split(srcs.get(a))) | set(_split(srcs.get(b)))
    pairs = list(zip(subj, ref, strict=True))
    out = _paired_verdict(holds, _ratio_what(row, _label(name), tol), details, pairs)
    out.products = subj + ref
    out.sources = sorted(used)
    out.reasoning = f"{out.reasoning} Pairs ({name}): {out.observed}."
    pair = _announced_pair(ctx, ids.vendor_of(subj[0])) if subj else None
    if (
        out.verdict == "contradicted"
        and row["expect"] == "approx"
        and pair is not None
        and not set(pair) & set(subj + ref)
    ):
        va, vb = _num(vals.get(pair[0])), _num(vals.get(pair[1]))
        ratio = va / vb if vb else math.nan
        if _ratio_holds(ratio, "approx", claimed, tol):
            out.verdict = "mixes generations"
            out.products = list(pair)
            out.sources = sorted(
                used | set(_split(srcs.get(pair[0]))) | set(_split(srcs.get(pair[1])))
            )
            out.observed += (
                f"; announced: {pair[0]} {_fmt(va)} / {pair[1]} {_fmt(vb)} = {ratio:.2f}x"
            )
            out.reasoning += (
                f" The claimed {claimed:.2f}x is the announced generation's: {pair[0]} "
                f"{_fmt(va)} / {pair[1]} {_fmt(vb)} {unit}".rstrip()
                + f" = {ratio:.2f}x ({_label(name)}), not today's parts."
            )
    return out


def eval_memory_fit(row: Mapping[str, Any], ctx: Context) -> Outcome:
    """Whether a model's weights (+ headroom) fit one subject GPU but not one reference GPU."""
    if ctx.specs.empty:
        return Outcome("unverifiable", reasoning="no spec data")
    specs = ctx.specs.set_index("accelerator")
    headroom = _tol(row, 10.0)  # % over the weights; the claims table sets it per row
    need = _num(row["claimed_value"]) * (1 + headroom / 100)
    subj, ref = _split(row["subject"]), _split(row["reference"])
    holds, details, used = [], [], set()
    fits: list[tuple[bool, bool]] = []
    for a, b in zip(subj, ref, strict=True):
        ma, mb = _num(specs["memory_gb"].get(a)), _num(specs["memory_gb"].get(b))
        fa, fb = ma >= need, mb >= need
        fits.append((fa, fb))
        holds.append(fa and not fb if math.isfinite(ma) and math.isfinite(mb) else None)
        details.append(
            f"{a} {ma:g} GB {'fits' if fa else 'does not fit'}, "
            f"{b} {mb:g} GB {'fits' if fb else 'does not fit'}"
        )
        used |= {specs["memory_gb_source"].get(a), specs["memory_gb_source"].get(b)}
    out = _paired_verdict(
        holds,
        f"Tested: {_fmt(_num(row['claimed_value']))} GB of weights + "
        f"{headroom:g}% headroom ({need:.0f} GB) fit one {_side(subj)} GPU but not "
        f"one {_side(ref)} GPU",
        details,
        list(zip(subj, ref, strict=True)),
    )
    out.products = subj + ref
    out.sources = sorted(s for s in used if isinstance(s, str))
    out.reasoning = f"{out.reasoning} {out.observed}."
    if out.verdict == "contradicted" and fits and all(fits[-1]):
        out.reasoning += (
            " In the newest generation both parts hold the model on one GPU, so memory "
            "capacity no longer separates them."
        )
    return out


# --- MLPerf ---------------------------------------------------------------------------------


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


# --- prices ---------------------------------------------------------------------------------


def _pool(ctx: Context) -> str:
    """The scenario's rental pool (the default pool without a scenario)."""
    from analysis.params import Cost

    return ctx.scenario.cost.rental_pool if ctx.scenario is not None else Cost().rental_pool


def _price_per_acc(ctx: Context, table: str) -> tuple[pd.Series, pd.Series]:
    """Price per accelerator by the TCO chapter's rule, and the source ids behind each.

    Rental: the median quote of the scenario's pool only (like-for-like). Purchase: the
    per-GPU midpoint of the sourced estimates; the project's judgement rows are left out,
    so a pair priced only by our judgement is "no price" (unverifiable), never evidence.
    """
    from analysis import tco

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
    holds, details, used = [], [], set()
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
    return ids.shipping(ctx.scenario.candidates)


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


#: Spec columns the performance models read (cited behind model-output verdicts).
PERF_FIELDS: tuple[str, ...] = (
    "memory_gb",
    "memory_bw_tbps",
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "scaleup_bw_gbps",
    "scaleout_gbps_per_gpu",
)


def _spec_sources(ctx: Context, accs: list[str]) -> list[str]:
    """Source ids of the spec values the chapters' models used for ``accs``."""
    if ctx.specs.empty:
        return []
    sub = ctx.specs[ctx.specs["accelerator"].isin(accs)]
    out: set[str] = set()
    for f in PERF_FIELDS:
        if f"{f}_source" in sub:
            out |= {s for v in sub[f"{f}_source"].dropna() for s in _split(v)}
    return sorted(out)


def _price_sources(ctx: Context, accs: list[str], mode: Any) -> list[str]:
    """Source ids of the prices the TCO chapter used for ``accs`` (rent or buy)."""
    table = "purchase_prices" if mode == "buy" else "rental_quotes"
    _, srcs = _price_per_acc(ctx, table)
    return sorted({x for a in accs for x in _split(srcs.get(a))})


def _count(k: int, n: int) -> str:
    """``all 3``, ``none of the 3``, ``2 of 3`` (``the only one``/``none`` for one)."""
    if n == 1:
        return "the only one" if k else "none"
    if k == n:
        return f"all {n}"
    return f"none of the {n}" if k == 0 else f"{k} of {n}"


def _tier_test(row: Mapping[str, Any], ctx: Context, res: Mapping[str, Any]) -> Outcome:
    test = row["field"]
    cands = _shipping_candidates(ctx)
    tiers = _tiers(ctx)
    src = [f"chapter {INFERENCE_CHAPTER}", *_spec_sources(ctx, cands)]
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
    amd = [a for a in cands if ids.vendor_of(a) == "AMD"]
    nv = [a for a in cands if ids.vendor_of(a) == "NVIDIA"]
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
            f"Best AMD / best NVIDIA tokens/s per GPU goes from {ratios[0]:.2f}x in the tightest "
            f"tier to {ratios[-1]:.2f}x in the loosest; the claim needs it to rise and end "
            f"above 1x ({'it does' if ok else 'it does not'}).",
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
    """:func:`analysis.tco.cost_per_million_tokens`; infinite for a part making no tokens."""
    return cost_per_million_tokens(gpu_hour_usd, tok_s) if tok_s > 0 else math.inf


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
        src = [f"chapter {TRAINING_CHAPTER}", *_spec_sources(ctx, _shipping_candidates(ctx))]
        if test == "train_winner_vendor":
            v = res.get("train_winner_vendor")
            if not v:
                return _mo_unverifiable("no train_winner_vendor in the training results.")
            want = _split(row["subject"])[0]
            margin = _num(res.get("train_margin_pct"))
            err = _num(res.get("mlperf_median_err_pct"))
            tie = math.isfinite(margin) and math.isfinite(err) and abs(margin) <= err
            why = (
                f"The fastest shipping candidate for the scenario's training job is "
                f"{res.get('train_winner')} ({v})"
            )
            if math.isfinite(margin):
                why += f", {margin:.1f}% ahead of the other vendor's best"
            if tie:
                why += (
                    f": inside the training model's {err:.0f}% median error against MLPerf, "
                    "so the two vendors are tied, not clearly apart"
                )
            return Outcome(
                "supported" if v == want and not tie else "contradicted",
                f"train_winner {res.get('train_winner')} ({v}), margin {_fmt(margin)}%"
                + (f", model error {_fmt(err)}%" if math.isfinite(err) else ""),
                [str(res.get("train_winner"))],
                src,
                why + ".",
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
            if math.isfinite(e) and e > by_vendor.get(ids.vendor_of(acc), (-1.0, ""))[0]:
                by_vendor[ids.vendor_of(acc)] = (e, acc)
        s, r = _split(row["subject"])[0], _split(row["reference"])[0]
        if s not in by_vendor or r not in by_vendor:
            return _mo_unverifiable("scaling efficiency missing for one vendor.")
        ratio = by_vendor[s][0] / by_vendor[r][0]
        ok = _ratio_holds(ratio, row["expect"], math.nan, _tol(row, 0.0))
        n_gpus = getattr(getattr(ctx.scenario, "training", None), "cluster_gpus", None)
        at = f"{n_gpus:,} GPUs" if isinstance(n_gpus, int) else "the scenario's cluster size"
        why = (
            f"At {at} the best {s} part ({by_vendor[s][1]}) keeps {by_vendor[s][0]:.1%} of its "
            f"per-GPU throughput, the best {r} part ({by_vendor[r][1]}) {by_vendor[r][0]:.1%}: "
            f"{s} {'does' if ok else 'does not'} pull ahead."
        )
        big = [
            (int(n), acc, _num(v))
            for k, v in res.items()
            for n, _, acc in [k.removeprefix("scaling_eff_").partition("_")]
            if k.startswith("scaling_eff_") and n.isdigit() and acc in ids.ACCELERATORS
        ]
        if big:
            why += (
                " The chapter's frontier-scale figures: "
                + ", ".join(f"{acc} {v:.1%} at {n:,} GPUs" for n, acc, v in big)
                + "."
            )
        return Outcome(
            "supported" if ok else "contradicted",
            f"best scaling efficiency {s} {by_vendor[s][1]} {by_vendor[s][0]:.3f} vs {r} "
            f"{by_vendor[r][1]} {by_vendor[r][0]:.3f}",
            [by_vendor[s][1], by_vendor[r][1]],
            src,
            why,
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
        # Reader-facing case names ("tier 0", not the key "tier0").
        obs = ", ".join(
            f"{k.removesuffix('_p_amd_cheaper').replace('tier', 'tier ')}: {p:.2f}"
            for k, p in ps.items()
        )
        cheapest = [
            str(res[f"{k.removesuffix('_p_amd_cheaper')}_cheapest"])
            for k in ps
            if res.get(f"{k.removesuffix('_p_amd_cheaper')}_cheapest")
        ]
        return Outcome(
            "supported" if ok else "contradicted",
            f"P(AMD cheaper) {obs} (mode {res.get('mode')})",
            list(dict.fromkeys(cheapest)),
            [
                f"chapter {TCO_CHAPTER}",
                *_price_sources(ctx, _shipping_candidates(ctx), res.get("mode")),
            ],
            f"{want} is the likelier cheaper platform ({res.get('mode')} mode, joint Monte "
            f"Carlo) in {_count(wins, len(ps))} workloads.",
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
            vend = [ids.vendor_of(c) for c in cheapest]
            ok = all(v == want for v in vend)
            return Outcome(
                "supported" if ok else "contradicted",
                ", ".join(f"tier {i}: {c}" for (i, _), c in zip(tiers, cheapest, strict=True)),
                cheapest,
                [f"chapter {TCO_CHAPTER}", *_price_sources(ctx, _shipping_candidates(ctx), "rent")],
                f"Renting, the cheapest part per million tokens (TCO chapter, medians) is "
                f"{want}'s in {_count(sum(v == want for v in vend), len(vend))} tiers "
                f"(cheapest: {', '.join(dict.fromkeys(cheapest))}).",
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
    vend = [ids.vendor_of(b) for _, b, _ in results]
    ok = all(v == want for v in vend)
    return Outcome(
        "supported" if ok else "contradicted",
        ", ".join(f"tier {i}: {b} ${c:.3g}/Mtok" for i, b, c in results),
        [b for _, b, _ in results],
        sorted(used) + [f"chapter {INFERENCE_CHAPTER}"],
        f"Median rental $/GPU-hour over the inference chapter's tokens/s per GPU: {want} is "
        f"cheapest per million tokens in {_count(sum(v == want for v in vend), len(vend))} tiers.",
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

    def short(q: Any) -> str:
        q = " ".join(str(q).split())
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
