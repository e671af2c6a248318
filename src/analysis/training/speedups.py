"""Measured precision speedups: published pairs of one recipe at two precisions.

Analytical decisions: the speedup over FP8 is that of the compute term (fitted efficiency
x peak) of the best recipe at each precision, dense pairs first; a vendor without pairs
takes NVIDIA's (AMD's BF16 scaled by :data:`AMD_FP8_SPEEDUP_RELATIVE`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.inputs import Inputs, resolve
from analysis.training.model import peak_tflops, spec_row

#: AMD's FP8-over-BF16 speedup relative to NVIDIA's, from AMD's own MI355X vs B200
#: training ratios (ROCm 7 training blog, 2025-12-02: Llama 3 70B BF16 1.16x, FP8 1.00x;
#: Llama 3 8B BF16 1.02x, FP8 1.08x): sqrt((1.00/1.16) x (1.08/1.02)) = 0.955.
AMD_FP8_SPEEDUP_RELATIVE = 0.955  # register: A-training-amd-fp8-speedup-relative


def measured_speedups(
    obs: pd.DataFrame, vendor: str, *, family: str | None = None, inputs: Inputs | None = None
) -> tuple[dict[str, float], str]:
    """Realized GEMM speedup over FP8 per precision for ``vendor``, and where it comes from.

    Measured from published rows of the same source, system, model, GPU count and sequence
    at two precisions (the best recipe at each precision: FP8-CS vs MXFP8 take the faster).
    When ``obs`` carries fitted efficiencies the speedup is that of the *compute term*:
    ``(eff_p x peak_p) / (eff_fp8 x peak_fp8)``, so the precision-independent parts of the
    step (communication, bubble, MoE token permutation) do not dilute it; otherwise the raw
    throughput ratio. Dense pairs are used where the vendor has any (a dense step is almost
    all GEMM, the cleanest measurement); only without them the MoE pairs. With ``family``
    ("dense" or "MoE") only that family's pairs count: an MoE step's compute term holds
    routing and grouped-GEMM work that speeds up less with precision, so MoE pairs would
    understate a dense model's speedup (and dense pairs overstate an MoE model's). A vendor
    without pairs takes NVIDIA's speedup (AMD's FP8/BF16 scaled by
    :data:`AMD_FP8_SPEEDUP_RELATIVE`); without any pairs, the registered assumptions.
    """
    return _pick_speedups(_speedup_ratios(obs, inputs=resolve(inputs)), vendor, family)


#: The speedup pairs' index levels (source, system, model, GPU count, sequence, family).
_PAIR_KEYS = ["source", "accelerator", "model", "n_gpus", "seq_len", "family", "vendor"]


def _speedup_ratios(obs: pd.DataFrame, *, inputs: Inputs) -> dict[str, pd.Series]:
    # every pair's rate ratio per precision (bf16 and fp4 over fp8), for all vendors and
    # families at once: what :func:`measured_speedups` picks a vendor x family from
    pub = obs.loc[obs["origin"] == "published"].copy()
    if "efficiency" in pub:
        peaks = {
            (a, p): peak_tflops(spec_row(a, inputs=inputs), p)
            for a, p in set(zip(pub["accelerator"], pub["precision"], strict=True))
        }
        pk = [peaks[(a, p)] for a, p in zip(pub["accelerator"], pub["precision"], strict=True)]
        pub["rate"] = pub["efficiency"].to_numpy(dtype=float) * np.asarray(pk)
    else:
        pub["rate"] = pub["measured_tps"]
    moe = pub["moe"] if "moe" in pub else pd.Series(False, index=pub.index)
    pub["family"] = np.where(moe.to_numpy(dtype=bool), "MoE", "dense")
    keys = _PAIR_KEYS
    best = pub.groupby([*keys, "precision"], as_index=False)["rate"].max()
    wide = best.pivot_table(index=keys, columns="precision", values="rate")
    return {
        prec: (
            (wide[num] / wide[den]).dropna()
            if num in wide and den in wide
            else pd.Series(dtype=float, index=pd.MultiIndex.from_tuples([], names=keys))
        )
        for prec, num, den in (("bf16", "bf16", "fp8"), ("fp4", "fp4", "fp8"))
    }


def _pick_speedups(
    ratios: Mapping[str, pd.Series], vendor: str, family: str | None
) -> tuple[dict[str, float], str]:
    # :func:`measured_speedups` for one vendor (and family) from :func:`_speedup_ratios`
    out: dict[str, float] = {}
    notes = []

    def pick(r: pd.Series, who: str) -> tuple[pd.Series, str]:
        r = r[r.index.get_level_values("vendor") == who]
        fam = r.index.get_level_values("family")
        if family is not None:
            return r[fam == family], family
        dense = r[fam == "dense"]
        return (dense, "dense") if len(dense) else (r, "MoE")

    for prec, ratio in ratios.items():
        mine, fam_m = pick(ratio, vendor)
        nv, fam_n = pick(ratio, "NVIDIA")
        if len(mine):
            out[prec] = float(np.exp(np.log(mine).mean()))
            notes.append(f"{prec} measured ({len(mine)} {fam_m} pairs)")
        elif len(nv):
            r = float(np.exp(np.log(nv).mean()))
            if prec == "bf16" and vendor == "AMD":
                r = 1.0 / (AMD_FP8_SPEEDUP_RELATIVE / r)
            out[prec] = r
            notes.append(f"{prec} from NVIDIA's {len(nv)} {fam_n} pairs")
        else:
            notes.append(f"{prec} assumed")
    return out, "; ".join(notes)
