"""The report's serving path against InferenceX's published comparison pages (a check set).

The bundled InferenceX sweeps are DeepSeek-R1 only. The issue that asked for a model right
on real serving named dense and small-MoE cases they do not hold: Llama 3.x 70B on MI355X
under a tight latency bound, FP8 against FP4, gpt-oss-120b. InferenceX's published
comparison pages quote those frontiers at a few interactivities each; the
``inferencex_published`` table holds them with their pages (``sources.csv``) and quotes.
No fit reads them: they are a check, like a reviewer's spot check, printed by
``validate-models``.

* **Measured**: the page's frontier throughput at its interactivity, output tokens only
  (``osl / (isl + osl)`` of the pages' input-plus-output tok/s/GPU). The pages take each
  side's best serving configuration, which "may include speculative decoding such as MTP
  where recipes exist" (their words); the model emits one token per step, so a frontier
  that used it sits above what the model can reach.
* **Modelled**: the report's path (:func:`analysis.inference.frontier_validation.
  modelled_frontier`, the MLPerf-calibrated efficiency) at the same median TPOT
  (1000 / interactivity), the best over TP 1, 2, 4 and 8 (a dense 70B model fits one GPU
  at FP8 on both parts). NaN where the model refuses the format on the part (gpt-oss-120b's
  MXFP4 weights on MI325X, which has no FP4 datapath: weight-only FP4 is not modelled).
* **Ratios**, what a decision reads: FP8 over FP4 on one part at one interactivity, and
  AMD over NVIDIA at one model, precision and interactivity.

Today (2026-12-06, ``validate-models``): Llama 3.3 70B FP8 modelled at 1.01 / 0.85 /
0.61x measured on B200 (76 / 108 / 139 tokens/s per user) and 1.81 / 1.32 / 1.56x on
MI355X (55 / 76 / 96); FP4 1.10 / 1.12 / 1.72x on B200 and 2.95 / 3.24 / 3.59x on MI355X,
whose dense FP4 path the pages show slower than its FP8 one (FP8/FP4 1.01, 1.41, 1.43
measured against 0.62, 0.57, 0.62 modelled; on B200 0.74, 0.89, 0.88 against 0.68, 0.67,
0.31). MI355X / B200 at 76: FP8 0.44 modelled against 0.34 measured, FP4 0.53 against
0.18. gpt-oss-120b on B200 at 0.55-0.57x. Before the per-layer overhead was charged to
dense layers (:mod:`analysis.inference.layer_kernels`): Llama FP8 1.39 / 1.40 / 2.79x on
B200, 2.40 / 2.47 / 3.28x on MI355X, MI355X / B200 FP8 0.60.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.inference.calibration import default_calibration
from analysis.inference.frontier_validation import modelled_frontier
from analysis.inputs import Inputs, resolve

#: Replica sizes the modelled side chooses from.
PUBLISHED_TP = (1, 2, 4, 8)
#: What makes a point of the check (one page value).
POINT_KEYS = ("model", "accelerator", "vendor", "precision", "isl", "osl", "interactivity")


def published_checks(*, inputs: Inputs | None = None) -> pd.DataFrame:
    """Each published point against the report's path (see the module docstring).

    Columns: :data:`POINT_KEYS`, ``tpot_ms``, ``measured`` and ``predicted`` (output
    tokens/s per GPU), ``ratio`` (predicted over measured), ``source_id`` and
    ``may_include_speculative``.
    """
    pts = resolve(inputs).table("inferencex_published")
    cal = default_calibration(inputs=inputs)
    out = pd.DataFrame(
        {
            "model": pts["model"],
            "accelerator": pts["accelerator"],
            "vendor": pts["vendor"],
            "precision": pts["precision"],
            "isl": pts["isl"].astype(int),
            "osl": pts["osl"].astype(int),
            "interactivity": pts["interactivity_tok_s_user"].astype(float),
        }
    )
    out["tpot_ms"] = 1000.0 / out["interactivity"]
    share = out["osl"] / (out["isl"] + out["osl"])
    out["measured"] = pts["total_tok_s_gpu"].astype(float) * share
    pred = np.full(len(out), np.nan)
    cell = ["accelerator", "model", "precision", "isl", "osl"]
    for (acc, model, prec, isl, osl), g in out.groupby(cell, sort=True):
        pos = out.index.get_indexer(g.index)
        pred[pos] = modelled_frontier(
            str(acc),
            str(model),
            str(prec),
            int(isl),
            int(osl),
            g["tpot_ms"].to_numpy(float),
            cal,
            inputs,
            PUBLISHED_TP,
        )
    out["predicted"] = pred
    out["ratio"] = out["predicted"] / out["measured"]
    out["source_id"] = pts["source_id"]
    out["may_include_speculative"] = pts["may_include_speculative"].astype(int)
    return out.sort_values(list(POINT_KEYS)).reset_index(drop=True)


def _pairs(df: pd.DataFrame, on: list[str], side: str, num: str, den: str) -> pd.DataFrame:
    """Measured and modelled ``num`` / ``den`` of ``side`` at each ``on`` both sides have."""
    a = df[df[side] == num].set_index(on)[["measured", "predicted"]]
    b = df[df[side] == den].set_index(on)[["measured", "predicted"]]
    j = a.add_suffix("_num").join(b.add_suffix("_den"), how="inner")
    out = pd.DataFrame(
        {
            "measured_ratio": j["measured_num"] / j["measured_den"],
            "predicted_ratio": j["predicted_num"] / j["predicted_den"],
        }
    )
    out["ratio_err_pct"] = (out["predicted_ratio"] / out["measured_ratio"] - 1.0) * 100.0
    return out.reset_index()


def precision_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """FP8 over FP4 on one part, model, lengths and interactivity: measured and modelled.

    ``ratio_err_pct`` is signed (modelled ratio over measured, minus 1). ``df``:
    :func:`published_checks`.

    >>> df = pd.DataFrame({"model": "m", "accelerator": "A", "vendor": "V", "isl": 1,
    ...     "osl": 1, "interactivity": 50.0, "precision": ["fp8", "fp4"],
    ...     "measured": [100.0, 80.0], "predicted": [90.0, 90.0]})
    >>> precision_ratios(df)[["measured_ratio", "predicted_ratio"]].values.tolist()
    [[1.25, 1.0]]
    """
    on = ["model", "accelerator", "vendor", "isl", "osl", "interactivity"]
    return _pairs(df, on, "precision", "fp8", "fp4")


def vendor_ratios(df: pd.DataFrame) -> pd.DataFrame:
    """AMD over NVIDIA at one model, precision, lengths and interactivity (each part pair).

    ``ratio_err_pct`` is signed, as :func:`precision_ratios`'. ``df``:
    :func:`published_checks`.
    """
    on = ["model", "precision", "isl", "osl", "interactivity"]
    amd = df[df["vendor"] == "AMD"]
    nv = df[df["vendor"] == "NVIDIA"]
    rows = []
    for a in sorted(amd["accelerator"].unique()):
        for n in sorted(nv["accelerator"].unique()):
            sub = pd.concat([amd[amd["accelerator"] == a], nv[nv["accelerator"] == n]])
            p = _pairs(sub, on, "vendor", "AMD", "NVIDIA")
            rows.append(p.assign(amd=a, nvidia=n))
    cols = [*on, "amd", "nvidia", "measured_ratio", "predicted_ratio", "ratio_err_pct"]
    if not rows:
        return pd.DataFrame(columns=cols)
    return pd.concat(rows, ignore_index=True)[cols]
