"""Spec claims: values, ratios and memory fits tested against the spec table."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from analysis import ids
from analysis.claims.base import (
    Context,
    Outcome,
    _fmt,
    _label,
    _num,
    _regex_label,
    _resolve,
    _split,
    _status_of,
    _tol,
    _within,
)


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
