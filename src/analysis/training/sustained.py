"""Sustained-clock factors: parts of one die that hold different clocks under a dense GEMM.

Analytical decision. The training model pools efficiency per compute die (part -> die ->
generation -> vendor), as a fraction of each part's datasheet peak. A datasheet peak is
boost clock x units x ops per cycle, so parts of one die at different board power print
the same peak (MI300X at 750 W and MI325X at 1,000 W: 2,614.9 FP8 TFLOPS) while the power
limit holds them to different clocks under a dense GEMM: AMD measured 1,273 vs 1,519 FP8
TFLOPS at 1,230 vs 1,464 MHz (``gemm_max_achievable``). A part's *sustained factor* is its
max-achievable fraction of peak over that of its die's top bin (the part measured at the
highest board power in the same campaign, one ``source_id``): MI325X 1, MI300X 0.84. The
pooling divides each fitted cell by it and the prediction multiplies it back, so the die's
shared level is its top bin's and the split between its parts comes from the measurement,
not from a fit. Top-bin units are the inference calibration's convention for board power
too, and the parts a die level is transferred to (a new generation's flagship, MI355X at
1,400 W) are top bins. A part without a measurement, or the only measured part of its die
in every campaign, gets 1; a format the campaign did not measure takes the part's FP8
factor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from analysis.hardware import PRECISION_COLUMNS
from analysis.inputs import Inputs, resolve

#: Peak column of each GEMM format (FP16 runs at the BF16 rate on every part in the table).
_PEAK_COLUMN = {**PRECISION_COLUMNS, "fp16": PRECISION_COLUMNS["bf16"]}
#: The format an unmeasured one falls back to (the model's FP8-equivalent anchor).
_FALLBACK_PRECISION = "fp8"


def die_of(spec: Mapping[str, object]) -> str:
    """The part's compute die (spec column ``die``; else the part): ``GH100`` for H200.

    >>> die_of({"accelerator": "B300", "die": "Blackwell Ultra GPU"})
    'Blackwell Ultra GPU'
    >>> die_of({"accelerator": "X1"})
    'X1'
    """
    d = spec.get("die")
    return str(d) if d is not None and not pd.isna(d) else str(spec.get("accelerator"))


def sustained_factors(*, inputs: Inputs | None = None) -> dict[tuple[str, str], float]:
    """``(accelerator, precision) -> sustained factor`` for every measured part (cached).

    Parts and formats absent from the mapping have factor 1 (:func:`sustained_factor`).
    """
    inputs = resolve(inputs)
    return inputs.derived("training.sustained", lambda: _factors(inputs))


def _factors(inputs: Inputs) -> dict[tuple[str, str], float]:
    maf = inputs.table("gemm_max_achievable")
    if maf.empty:
        return {}
    meta = {str(r["accelerator"]): r for r in inputs.specs.to_dict("records")}
    rows = maf.loc[maf["accelerator"].isin(list(meta))].copy()
    peak = [
        meta[a].get(_PEAK_COLUMN.get(p, ""), np.nan)
        for a, p in zip(rows["accelerator"], rows["precision"], strict=True)
    ]
    rows["log_frac"] = np.log(rows["maf_tflops"].to_numpy(float) / np.asarray(peak, float))
    rows = rows.loc[np.isfinite(rows["log_frac"])]
    rows["die"] = [die_of(meta[a]) for a in rows["accelerator"]]
    # the board power it was measured at (the spec TDP where the row does not say)
    tdp = [float(meta[a].get("tdp_w", np.nan)) for a in rows["accelerator"]]
    rows["power"] = rows["board_power_w"].fillna(pd.Series(tdp, index=rows.index))
    rows = rows.sort_values(["power", "log_frac"], ascending=False, kind="stable")
    group = rows.groupby(["source_id", "precision", "die"])["log_frac"]
    rows["parts"] = group.transform("size")
    rows["log_factor"] = rows["log_frac"] - group.transform("first")  # the top bin's
    # a campaign with one part of a die says nothing about the split; several campaigns of
    # one part average (in logs)
    shared = rows.loc[rows["parts"] > 1]
    by_part = shared.groupby(["accelerator", "precision"])["log_factor"].mean()
    return {(str(a), str(p)): math.exp(v) for (a, p), v in by_part.items()}


def sustained_factor(accelerator: str, precision: str, *, inputs: Inputs | None = None) -> float:
    """The part's sustained factor at ``precision`` (1 where nothing was measured).

    Its max-achievable fraction of peak over its die's top bin's (see the module).
    """
    f = sustained_factors(inputs=inputs)
    return f.get((accelerator, precision), f.get((accelerator, _FALLBACK_PRECISION), 1.0))
