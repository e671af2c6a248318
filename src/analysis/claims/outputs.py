"""Model-output claims: tested against the chapters' key results."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from analysis import ids
from analysis.claims.base import (
    INFERENCE_CHAPTER,
    TCO_CHAPTER,
    TRAINING_CHAPTER,
    Context,
    Outcome,
    _fmt,
    _num,
    _resolve,
    _split,
    _tol,
)
from analysis.claims.market import _price_per_acc
from analysis.claims.specs import _ratio_holds
from analysis.tco import cost_per_million_tokens


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
            return _train_winner_test(row, res, src)
        return _scaling_eff_test(row, ctx, res, src)
    if test in {"tco_cheaper_vendor", "buy_cheaper_vendor"}:
        return _tco_vendor_test(row, ctx, test)
    if test == "rent_cheapest_vendor":
        return _rent_cheapest(row, ctx)
    raise ValueError(f"unknown model-output test {test!r}")


def _train_winner_test(row: Mapping[str, Any], res: Mapping[str, Any], src: list[str]) -> Outcome:
    """The training winner's vendor, tied when inside the model's median error."""
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


def _scaling_eff_test(
    row: Mapping[str, Any], ctx: Context, res: Mapping[str, Any], src: list[str]
) -> Outcome:
    """Best scaling efficiency per vendor at the scenario's cluster size."""
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


def _tco_vendor_test(row: Mapping[str, Any], ctx: Context, test: str) -> Outcome:
    """The likelier cheaper vendor (joint Monte Carlo) over the TCO chapter's workloads."""
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
