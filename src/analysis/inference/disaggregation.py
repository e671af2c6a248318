"""The article's disaggregation claims (C44, C46), read from measured InferenceX points.

Analytical decisions taken here: the measured gain of disaggregated over aggregated
serving is compared at matched interactivity (the best output tokens/s per GPU, prefill
GPUs included, among points meeting a median-TPOT bound), per accelerator x precision x
request shape; a vendor's verdict is the median over its matched comparisons. The
points are :func:`analysis.inference.deployment_fit.measured_points`'.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: TPOT bounds (ms) at which measured aggregated and disaggregated serving are compared.
MATCHED_TPOT_MS = (20.0, 30.0, 50.0)


def _output_per_gpu(points: pd.DataFrame) -> pd.Series:
    """Output tokens/s per GPU of all a point's GPUs (prefill pool included)."""
    disagg = points["kind"] == "disaggregated"
    n_dec = points["num_decode_gpu"].astype(float)
    total = np.where(disagg, n_dec + points["num_prefill_gpu"].astype(float), 1.0)
    scale = np.where(disagg, n_dec / total, 1.0)
    return points["output_tput_per_gpu"].astype(float) * scale


def disaggregation_gains(points: pd.DataFrame) -> pd.DataFrame:
    """Measured gain of disaggregated over aggregated serving at matched interactivity.

    Per accelerator x precision x request shape with both kinds measured, and per TPOT
    bound in :data:`MATCHED_TPOT_MS`: the best output tokens/s per GPU (all GPUs,
    prefill pool included) among points whose median TPOT meets the bound, each kind
    apart; ``gain_pct`` = disaggregated / aggregated - 1. Rows where either kind has no
    point under the bound are left out.
    """
    df = points.assign(out_gpu=_output_per_gpu(points))
    keys = ["vendor", "accelerator", "precision", "isl", "osl"]
    rows = []
    for key, g in df.groupby(keys, sort=True):
        for bound in MATCHED_TPOT_MS:
            ok = g[g["median_tpot_ms"].astype(float) <= bound]
            best = ok.groupby("kind")["out_gpu"].max()
            if {"aggregated", "disaggregated"} <= set(best.index):
                rows.append(
                    {
                        **dict(zip(keys, key, strict=True)),
                        "tpot_ms_max": bound,
                        "aggregated_tok_s_gpu": float(best["aggregated"]),
                        "disaggregated_tok_s_gpu": float(best["disaggregated"]),
                        "gain_pct": (best["disaggregated"] / best["aggregated"] - 1.0) * 100.0,
                    }
                )
    return pd.DataFrame(rows)


def disaggregation_evidence(points: pd.DataFrame) -> pd.DataFrame:
    """Per vendor: measured disaggregated points, their stacks and the median gain.

    ``points``: :func:`measured_points`. Columns: vendor, disaggregated_points,
    accelerators, frameworks, matched_comparisons, median_gain_pct (NaN when the vendor
    has no accelerator measured both ways).
    """
    gains = disaggregation_gains(points)
    rows = []
    for vendor in ("AMD", "NVIDIA"):
        d = points[(points["vendor"] == vendor) & (points["kind"] == "disaggregated")]
        g = gains[gains["vendor"] == vendor] if len(gains) else gains
        rows.append(
            {
                "vendor": vendor,
                "disaggregated_points": int(len(d)),
                "accelerators": ", ".join(sorted(d["accelerator"].unique())) or "none",
                "frameworks": ", ".join(sorted(d["framework"].unique())) or "none",
                "matched_comparisons": int(len(g)),
                "median_gain_pct": float(g["gain_pct"].median()) if len(g) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def disaggregation_verdict(evidence: pd.DataFrame) -> str:
    """The data-backed verdict on the article's claims C44 and C46 (Markdown)."""
    ev = evidence.set_index("vendor")
    amd = ev.loc["AMD"]
    if int(amd["disaggregated_points"]) == 0:
        return (
            "**C44/C46 (AMD lacks prefill-decode disaggregation): not contradicted by the "
            "measurements**: the bundled InferenceX data has no AMD disaggregated point."
        )
    gains = "; ".join(
        f"{v}: median {r['median_gain_pct']:+.0f}% over {int(r['matched_comparisons'])} "
        "matched comparisons"
        if int(r["matched_comparisons"])
        else f"{v}: no part measured both ways"
        for v, r in ev.iterrows()
    )
    return (
        "**C44/C46 (AMD lacks prefill-decode disaggregation): contradicted by measurement.** "
        f"InferenceX holds {int(amd['disaggregated_points'])} AMD disaggregated points "
        f"({amd['accelerators']}, {amd['frameworks']}; speculative-decoding runs excluded) "
        f"next to {int(ev.loc['NVIDIA', 'disaggregated_points'])} NVIDIA ones. Gain of "
        "disaggregated over aggregated serving at matched interactivity (best output "
        "tokens/s per GPU, prefill GPUs included, at TPOT <= "
        f"{', '.join(f'{b:.0f}' for b in MATCHED_TPOT_MS)} ms): {gains}."
    )


def evidence_key_results(evidence: pd.DataFrame) -> dict[str, float | int]:
    """The claims chapter's key results of :func:`disaggregation_evidence`.

    ``disagg_{amd,nvidia}_points`` and ``disagg_gain_pct_{AMD,NVIDIA}``.
    """
    e = evidence.set_index("vendor")
    out: dict[str, float | int] = {
        f"disagg_{v.lower()}_points": int(e.at[v, "disaggregated_points"])
        for v in ("AMD", "NVIDIA")
    }
    out |= {f"disagg_gain_pct_{v}": float(e.at[v, "median_gain_pct"]) for v in ("AMD", "NVIDIA")}
    return out
