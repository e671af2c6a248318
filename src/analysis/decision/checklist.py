"""The article's checklists, made quantitative from the chapters' key results."""

from __future__ import annotations

import math

import pandas as pd

from analysis import ids
from analysis.decision.recommend import (
    INFEASIBLE,
    INFERENCE,
    LOW_LATENCY_MS,
    TCO,
    Results,
    _infeasible,
    _num,
    recommend,
)
from analysis.params import Scenario

CHECKLIST: tuple[tuple[str, str], ...] = (
    ("NVIDIA", "You need the fastest path to production AI with broad framework support"),
    ("NVIDIA", "You’re training large models across multiple GPUs and nodes"),
    ("NVIDIA", "Team expertise centers on CUDA and NVIDIA tools"),
    ("NVIDIA", "Low-latency inference under 50 milliseconds matters critically"),
    ("NVIDIA", "You require ISV-certified drivers for regulated workflows"),
    ("NVIDIA", "Your organization values institutional knowledge and vendor support"),
    ("AMD", "Your teams prefer Linux-first, open-source tooling approaches"),
    ("AMD", "You’re serving large models to multiple users with medium-latency tolerance"),
    ("AMD", "Upfront hardware cost savings provide meaningful budget relief"),
    ("AMD", "Your workloads fit within single-node serving scenarios"),
    ("AMD", "You have direct purchasing power (not relying on cloud rental services)"),
    ("AMD", "Memory capacity limitations constrain your model serving options"),
)

CHECK_VERDICTS: tuple[str, ...] = ("supported", "contradicted", "not testable")


def _rec_verdict(recs: pd.DataFrame, workloads: list[str], vendor: str) -> tuple[str, str]:
    sub = recs[recs["workload"].isin(workloads)]
    if sub.empty:
        return "not testable", "the scenario has no such workload"
    calls = ", ".join(f"{r.label}: {r.recommendation}" for r in sub.itertuples())
    if (sub["recommendation"] == INFEASIBLE).all():
        return "not testable", f"{calls} (no candidate can run it)"
    if (
        any(r == "either" for r in sub["recommendation"])
        and not (sub["recommendation"] == vendor).any()
    ):
        return "contradicted", f"{calls} (no clear {vendor} advantage)"
    ok = (sub["recommendation"] == vendor).all()
    return ("supported" if ok else "contradicted"), calls


def _tiers_verdict(
    recs: pd.DataFrame, workloads: list[str], vendor: str, label: str, none: str
) -> tuple[str, str]:
    """(evidence, verdict) of a checklist line about a group of tiers; ``none`` if empty."""
    if not workloads:
        return none, "not testable"
    verdict, calls = _rec_verdict(recs, workloads, vendor)
    return f"{label}: {calls}.", verdict


def checklist(
    scenario: Scenario,
    chapter_results: Results,
    recs: pd.DataFrame | None = None,
    claims: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The article's 12 "Choose NVIDIA/AMD when" lines, each with what this analysis says.

    Args:
        scenario: the Scenario.
        chapter_results: the chapters' key results.
        recs: :func:`recommend` output (computed when ``None``).
        claims: :func:`analysis.claims.evaluate_claims` output, for the lines a claim settles
            (drivers, memory capacity); optional.

    Returns:
        Columns: side ("Choose NVIDIA when" / "Choose AMD when"), line, evidence,
        verdict (one of :data:`CHECK_VERDICTS`).
    """
    recs = recommend(scenario, chapter_results) if recs is None else recs
    tiers = scenario.inference.tiers
    tight = [
        f"tier{i}"
        for i, t in enumerate(tiers)
        if t.tpot_ms_max is not None and t.tpot_ms_max <= LOW_LATENCY_MS
    ]
    medium = [f"tier{i}" for i in range(len(tiers)) if f"tier{i}" not in tight]
    inf = chapter_results.get(INFERENCE, {})
    tco = chapter_results.get(TCO, {})
    cands = ids.shipping(scenario.candidates)
    cost = scenario.cost
    porting = cost.porting_engineer_months.get("AMD", 0.0) * cost.engineer_month_usd
    verdicts = (
        claims.set_index("claim_id")["verdict"].to_dict()
        if claims is not None and not claims.empty
        else {}
    )
    out = []

    def add(side: str, line: str, evidence: str, verdict: str) -> None:
        out.append(
            {"side": f"Choose {side} when", "line": line, "evidence": evidence, "verdict": verdict}
        )

    lines = iter(CHECKLIST)
    side, line = next(lines)
    add(
        side,
        line,
        "Not measurable from our data; the TCO chapter prices AMD porting at "
        f"{cost.porting_engineer_months.get('AMD', 0):g} engineer-months (${porting:,.0f}, an "
        "assumption).",
        "not testable",
    )
    side, line = next(lines)
    v, ev = _rec_verdict(recs, ["training"], "NVIDIA")
    add(side, line, f"Training call for {scenario.training.cluster_gpus:,} GPUs: {ev}.", v)
    side, line = next(lines)
    add(
        side,
        line,
        f"Priced, not tested: porting/ramp-up ${porting:,.0f} spread over "
        f"{cost.fleet_gpus:,} GPUs in the TCO.",
        "not testable",
    )
    side, line = next(lines)
    add(
        side,
        line,
        *_tiers_verdict(
            recs,
            tight,
            "NVIDIA",
            f"Tiers <= {LOW_LATENCY_MS} ms",
            f"This scenario has no tier at or below {LOW_LATENCY_MS} ms per token.",
        ),
    )
    for _ in range(2):
        side, line = next(lines)
        add(side, line, "Organisational; no data in this report.", "not testable")
    side, line = next(lines)
    drv = [verdicts.get(c) for c in ("C41", "C42")]
    if all(drv):
        add(
            side,
            line,
            f"Claims audit: AMD in-kernel driver {drv[0]}; NVIDIA 'proprietary "
            f"driver' {drv[1]} (NVIDIA's kernel modules are open source too).",
            "contradicted" if "contradicted" in drv else "supported",
        )
    else:
        add(side, line, "Preference, not a measurable outcome.", "not testable")
    side, line = next(lines)
    add(
        side,
        line,
        *_tiers_verdict(
            recs,
            medium,
            "AMD",
            f"Tiers above {LOW_LATENCY_MS} ms",
            f"This scenario has no tier above {LOW_LATENCY_MS} ms.",
        ),
    )
    side, line = next(lines)
    hours = {a: _num(tco.get(f"gpu_hour_usd_{a}")) for a in cands}
    cheapest = {
        v: min(
            (h for a, h in hours.items() if ids.vendor_of(a) == v and math.isfinite(h)),
            default=math.nan,
        )
        for v in ids.VENDORS
    }
    amd_h, nv_h = cheapest["AMD"], cheapest["NVIDIA"]
    if math.isfinite(amd_h) and math.isfinite(nv_h):
        add(
            side,
            line,
            f"Cheapest GPU-hour ({tco.get('mode', cost.mode)}): AMD ${amd_h:.2f} vs "
            f"NVIDIA ${nv_h:.2f} ({(1 - amd_h / nv_h) * 100:+.0f}% AMD saving per GPU-hour, "
            "before throughput).",
            "supported" if amd_h < nv_h else "contradicted",
        )
    else:
        add(side, line, "Needs the TCO chapter's GPU-hour costs.", "not testable")
    side, line = next(lines)
    excluded = set().union(*(_infeasible(inf, i) for i in range(len(tiers))))
    nv_out = sorted(a for a in excluded if ids.vendor_of(a) == "NVIDIA")
    amd_out = sorted(a for a in excluded if ids.vendor_of(a) == "AMD")
    if inf:
        ev = (
            f"With {scenario.inference.gpus_per_replica} GPUs per replica, infeasible in some "
            f"tier: NVIDIA {', '.join(nv_out) or 'none'}; AMD {', '.join(amd_out) or 'none'}."
        )
        add(side, line, ev, "supported" if nv_out and not amd_out else "contradicted")
    else:
        add(side, line, "Needs the inference chapter's results.", "not testable")
    side, line = next(lines)
    if tco:
        ps = [_num(v) for k, v in tco.items() if k.endswith("_p_amd_cheaper")]
        ps = [p for p in ps if math.isfinite(p)]
        mode = tco.get("mode", cost.mode)
        share = sum(p > 0.5 for p in ps)
        ev = f"Mode {mode}: AMD likelier cheaper in {share} of {len(ps)} workloads."
        if mode == "buy":
            add(side, line, ev, "supported" if share > len(ps) / 2 else "contradicted")
        else:
            add(side, line, ev + " (Renting: run a buy scenario to test the line.)", "not testable")
    else:
        add(side, line, "Needs the TCO chapter's results.", "not testable")
    side, line = next(lines)
    if inf:
        add(
            side,
            line,
            f"Memory-bound exclusions in this scenario: NVIDIA "
            f"{', '.join(nv_out) or 'none'}, AMD {', '.join(amd_out) or 'none'}; claims audit "
            f"C12 (more memory per GPU, per generation): {verdicts.get('C12', 'n/a')}.",
            "supported" if nv_out and not amd_out else "contradicted",
        )
    else:
        add(side, line, "Needs the inference chapter's results.", "not testable")
    return pd.DataFrame(out)
