"""The scenario's latency tiers: per tier and accelerator the best deployment.

Also the winners, frontiers, tier bands and the chapter's key results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from analysis import ids, tco
from analysis.inference.calibration import Calibration, _calibration
from analysis.inference.deployment_fit import default_calibration as deployment_calibration
from analysis.inference.deployment_fit import validated_margins
from analysis.inference.deployments import LayoutRange, OptionBound, Request, apply_to_tiers
from analysis.inference.envelope import envelopes, layout_limits, measured_layouts
from analysis.inference.roofline import Deployment, Workload, _models, _specs
from analysis.inference.serving import _deployment, _frontier, _prepare, tp_choices
from analysis.inference.validation import validate_against_mlperf, validation_summary
from analysis.inputs import Inputs, resolve
from analysis.params import Scenario


def evaluate_tiers(
    sc: Scenario,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    with_cost: bool = True,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """One row per (tier, accelerator in ``sc.accelerators``): best throughput under the tier.

    ``sc.inference.gpus_per_replica`` is the **maximum** tensor-parallel degree (the GPUs of
    one server): per tier and accelerator the best layout among :func:`tp_choices` (TP 1, 2,
    4, 8 for 8 GPUs) that fits in memory and meets the tier's bounds is chosen, as an
    operator would (see :func:`best_deployment`).

    Columns (contracts.md): tier_index, tier, tpot_ms_max, ttft_ms_max, accelerator, vendor,
    status, feasible, tokens_per_s_per_gpu (NaN if infeasible), concurrency, tpot_ms,
    ttft_ms, tokens_per_s_per_user, reason; plus ``tp`` (chosen tensor-parallel degree, NaN
    if infeasible), and gpu_hour_usd and cost_per_mtok_usd when ``with_cost``: the
    scenario's mode under :func:`analysis.tco.price_rule` ($/paid GPU-hour; $/M tokens per
    useful GPU-hour), NaN where the part has no price in that mode (e.g. no quote in the
    rental pool).

    Each row also names its deployment (issue 20, :func:`deployments.apply_to_tiers`):
    ``deployment``, ``deployment_kind`` (aggregated, disaggregated, expert-parallel) and
    ``deployment_basis``; where a disaggregated or expert-parallel option serves more than
    the aggregated TP layout, its throughput, latencies, concurrency and decode-worker
    size (``tp``) replace the aggregated ones.
    """
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    cal = _calibration(calibration, inputs=inputs)
    inf = sc.inference
    work = Workload(inf.model, inf.precision, inf.isl, inf.osl)
    prepared: dict[str, Any] = {}
    labels: dict[str, tuple[str, str]] = {}  # accelerator -> (vendor, status)
    for acc in sc.accelerators:
        spec_hit = specs.loc[specs["accelerator"] == acc]
        labels[acc] = (
            str(spec_hit["vendor"].iloc[0]) if len(spec_hit) else ids.vendor_of(acc),
            str(spec_hit["status"].iloc[0])
            if len(spec_hit) and "status" in spec_hit
            else ids.status_of(acc),
        )
        try:
            prepared[acc] = _prepare(acc, inf.model, inf.precision, specs, models, inputs=inputs)
        except ValueError as err:
            prepared[acc] = err
    rows = []
    for ti, tier in enumerate(inf.tiers):
        for acc in sc.accelerators:
            vendor, status = labels[acc]
            rec = {
                "tier_index": ti,
                "tier": tier.name,
                "tpot_ms_max": tier.tpot_ms_max,
                "ttft_ms_max": tier.ttft_ms_max,
                "accelerator": acc,
                "vendor": vendor,
                "status": status,
                "feasible": False,
                "tokens_per_s_per_gpu": np.nan,
                "concurrency": np.nan,
                "tpot_ms": np.nan,
                "ttft_ms": np.nan,
                "tokens_per_s_per_user": np.nan,
                "reason": "",
                "tp": np.nan,
            }
            try:
                prep = prepared[acc]
                if isinstance(prep, ValueError):
                    raise prep
                d = _deployment(
                    prep,
                    work,
                    Deployment(acc, inf.gpus_per_replica, tier.tpot_ms_max, tier.ttft_ms_max),
                    cal,
                )
            except ValueError as err:
                rec["reason"] = str(err)
            else:
                rec.update(
                    {
                        k: d[k]
                        for k in (
                            "tokens_per_s_per_gpu",
                            "concurrency",
                            "tpot_ms",
                            "ttft_ms",
                            "tokens_per_s_per_user",
                        )
                    }
                )
                rec["concurrency"] = float(np.floor(d["concurrency"]))
                rec["tp"] = float(d["tp"])
                rec["feasible"] = True
            rows.append(rec)
    df = pd.DataFrame(rows)
    # Deployment options (issue 20): disaggregated / expert-parallel where they serve more.
    req = Request(inf.model, inf.precision, float(inf.isl), float(inf.osl))
    env, lim = _measured_bounds(req, labels, inputs)
    df = apply_to_tiers(
        df,
        req,
        specs=specs,
        models=models,
        calibration=deployment_calibration(inputs),
        inputs=inputs,
        envelopes=env,
        limits=lim,
    )
    if with_cost:
        # The TCO chapter's one price rule, so both chapters print the same figures.
        rule = tco.price_rule(sc)
        df["gpu_hour_usd"] = df["accelerator"].map(rule.set_index("accelerator")["gpu_hour_usd"])
        df["cost_per_mtok_usd"] = tco.tier_cost_point(rule, df)
    return df


def _measured_bounds(
    req: Request, labels: dict[str, tuple[str, str]], inputs: Inputs | None
) -> tuple[dict[str, dict[str, OptionBound]], dict[str, LayoutRange]]:
    """Per accelerator: the measured envelopes of its options and the measured layout sizes.

    The validation behind the margins runs only when some accelerator has an envelope.
    """
    inp = resolve(inputs)
    layouts = inp.derived("deployment_layouts", lambda: measured_layouts(inp.table("inferencex")))
    lim: dict[str, LayoutRange] = {
        acc: layout_limits(layouts, acc, vendor, req.model) for acc, (vendor, _) in labels.items()
    }
    zero = {"AMD": 0.0, "NVIDIA": 0.0}
    found = {acc: envelopes(layouts, acc, req, zero, v) for acc, (v, _) in labels.items()}
    if not any(found.values()):
        return {}, lim
    margins = validated_margins(inp)
    env: dict[str, dict[str, OptionBound]] = {
        acc: dict(envelopes(layouts, acc, req, margins, v)) for acc, (v, _) in labels.items()
    }
    return env, lim


def tier_winners(tiers: pd.DataFrame) -> pd.DataFrame:
    """Per tier: the winner among shipping candidates and the infeasible candidates.

    The margin is the winner's tokens/s per GPU over the other vendor's best shipping
    candidate, in percent.
    """
    rows = []
    for (ti, name), g in tiers.groupby(["tier_index", "tier"], sort=True):
        ship = g[(g["status"] == "shipping") & g["feasible"]]
        infeasible = ",".join(g.loc[~g["feasible"], "accelerator"])
        rec = {
            "tier_index": ti,
            "tier": name,
            "winner": "",
            "winner_vendor": "",
            "winner_tok_s_gpu": np.nan,
            "runner_up_other_vendor": "",
            "margin_pct": np.nan,
            "infeasible": infeasible,
        }
        if len(ship):
            w = ship.sort_values(
                ["tokens_per_s_per_gpu", "accelerator"], ascending=[False, True]
            ).iloc[0]
            rec.update(
                winner=w["accelerator"],
                winner_vendor=w["vendor"],
                winner_tok_s_gpu=w["tokens_per_s_per_gpu"],
            )
            other = ship[ship["vendor"] != w["vendor"]]
            if len(other):
                o = other.sort_values("tokens_per_s_per_gpu", ascending=False).iloc[0]
                rec["runner_up_other_vendor"] = o["accelerator"]
                rec["margin_pct"] = (
                    w["tokens_per_s_per_gpu"] / o["tokens_per_s_per_gpu"] - 1.0
                ) * 100.0
        rows.append(rec)
    return pd.DataFrame(rows)


def _envelope(f: pd.DataFrame) -> pd.DataFrame:
    """Pareto frontier: points no other point beats on both per-user and per-GPU rate."""
    f = f.sort_values(
        ["tokens_per_s_per_user", "tokens_per_s_per_gpu"],
        ascending=[False, False],
        kind="mergesort",
    )
    best_before = f["tokens_per_s_per_gpu"].cummax().shift(1, fill_value=-np.inf)
    return f[f["tokens_per_s_per_gpu"] > best_before].iloc[::-1].reset_index(drop=True)


def frontiers(
    sc: Scenario,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    calibration: Calibration | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """The throughput-interactivity frontier of every accelerator in the scenario.

    Each accelerator's frontier is the upper envelope over the tensor-parallel choices
    within ``gpus_per_replica`` (:func:`tp_choices`); column ``tp`` gives the layout of
    each point.
    """
    inf = sc.inference
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    cal = _calibration(calibration, inputs=inputs)
    parts = []
    for acc in sc.accelerators:
        try:
            prep = _prepare(acc, inf.model, inf.precision, specs, models, inputs=inputs)
        except ValueError:
            continue
        work = Workload(inf.model, inf.precision, inf.isl, inf.osl)
        curves = []
        for tp in tp_choices(inf.gpus_per_replica):
            try:
                f = _frontier(prep, work, Deployment(acc, tp, bounded=True), cal)
            except ValueError:
                continue
            curves.append(f.assign(tp=tp))
        if curves:
            parts.append(_envelope(pd.concat(curves, ignore_index=True)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def tier_bands(sc: Scenario, max_user_rate: float = 1000.0) -> pd.DataFrame:
    """Interactivity band of each tier in tokens/s per user: [1000 / TPOT bound, next bound).

    For the frontier chart's shading (log axis): the tightest tier reaches up to
    ``max_user_rate``; a tier without a TPOT bound starts at 0.1 tokens/s per user (a
    display floor, not a measured value).
    """
    rows = []
    bounds = [t.tpot_ms_max for t in sc.inference.tiers]
    for i, tier in enumerate(sc.inference.tiers):
        lo = 1000.0 / tier.tpot_ms_max if tier.tpot_ms_max else 0.1
        prev = bounds[i - 1] if i else None
        hi = max_user_rate if i == 0 else (1000.0 / prev if prev else lo)
        rows.append({"tier": tier.name, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


#: Issue 4's target: out-of-sample median APE per vendor on MLPerf LLM results, percent.
MAPE_TARGET_PCT = 15.0


def validation_verdict(summary: pd.DataFrame) -> str:
    """One Markdown sentence: each vendor's median APE and whether both meet the target.

    ``summary`` is the :func:`validation_summary` of the leave-one-round-out validation
    (rows AMD, NVIDIA and overall). The model meets :data:`MAPE_TARGET_PCT` when every
    vendor's median APE is at most the target; the vendor closest to it (the largest error)
    is named.

    >>> s = pd.DataFrame({"vendor": ["AMD", "NVIDIA", "overall"],
    ...                   "median_ape_pct": [10.04, 14.7, 12.0]})
    >>> v = validation_verdict(s)
    >>> "10.0% for AMD and 14.7% for NVIDIA" in v
    True
    >>> print(v)  # doctest: +ELLIPSIS
    **Predicting each MLPerf round ... the model meets the 15% target** (closest to it: NVIDIA).
    """
    head = summary.set_index("vendor")["median_ape_pct"]
    vendors = head.drop("overall")
    verdict = "meets" if vendors.max() <= MAPE_TARGET_PCT else "misses"
    return (
        f"**Predicting each MLPerf round from the others, the median APE is "
        f"{head['AMD']:.1f}% for AMD and {head['NVIDIA']:.1f}% for NVIDIA: the model "
        f"{verdict} the {MAPE_TARGET_PCT:.0f}% target** (closest to it: {vendors.idxmax()})."
    )


def key_results(
    sc: Scenario,
    tiers: pd.DataFrame,
    winners: pd.DataFrame,
    summary: pd.DataFrame,
    round_summary: pd.DataFrame | None = None,
    accelerator_summary: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> dict[str, object]:
    """The chapter's key results (names fixed in docs/contracts.md).

    ``mlperf_mape_*`` is the leave-one-round-out error (issue 4's definition: each MLPerf
    round predicted from the others; ``mlperf_mape_scheme`` names it, and
    ``mlperf_round_unpredicted`` counts its held-out rows without workload data).
    ``mlperf_mape_system_*`` (``summary``: leave one system out) and
    ``mlperf_mape_accelerator_*`` (leave one accelerator out) sit alongside; the round and
    accelerator summaries are computed from the bundled data when None.
    """
    out: dict[str, Any] = {}
    for _, w in winners.iterrows():
        i = int(w["tier_index"])
        out[f"tier{i}_name"] = w["tier"]
        out[f"tier{i}_winner"] = w["winner"]
        out[f"tier{i}_winner_vendor"] = w["winner_vendor"]
        out[f"tier{i}_margin_pct"] = float(w["margin_pct"])
        for _, r in tiers[tiers["tier_index"] == i].iterrows():
            out[f"tier{i}_tok_s_gpu_{r['accelerator']}"] = float(r["tokens_per_s_per_gpu"])
            if "tp" in r.index:
                out[f"tier{i}_tp_{r['accelerator']}"] = float(r["tp"])
        out[f"tier{i}_infeasible"] = w["infeasible"]
    if round_summary is None:
        round_summary = validation_summary(validate_against_mlperf("round", inputs=inputs))
    if accelerator_summary is None:
        accelerator_summary = validation_summary(
            validate_against_mlperf("accelerator", inputs=inputs)
        )
    schemes = {
        "": round_summary,
        "system_": summary,
        "accelerator_": accelerator_summary,
    }
    for prefix, table in schemes.items():
        med = table.set_index("vendor")["median_ape_pct"]
        for v in ("AMD", "NVIDIA", "overall"):
            out[f"mlperf_mape_{prefix}{v}"] = float(med.get(v, float("nan")))
    out["mlperf_mape_scheme"] = "round"
    out["mlperf_round_unpredicted"] = int(
        round_summary.set_index("vendor")["unpredicted"].get("overall", 0)
    )
    return out
