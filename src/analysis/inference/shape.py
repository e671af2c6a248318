"""The fitted serving shape and the hardware numbers at it (:func:`hardware_params`)."""

from __future__ import annotations

import pandas as pd

from analysis.inference.latency import fitted_shape
from analysis.inference.roofline import ServingShape, hardware_params_at
from analysis.inputs import Inputs


def default_shape(inputs: Inputs | None = None) -> ServingShape:
    """The serving shape fitted on the InferenceX sweeps of ``inputs`` (once per inputs)."""
    return fitted_shape(inputs)


def hardware_params(
    spec: pd.Series,
    precision: str,
    shape: ServingShape | None = None,
    *,
    inputs: Inputs | None = None,
) -> dict[str, float]:
    """The numbers the model needs from one ``load_specs()`` row at one precision.

    ``shape``: the serving shape whose compute ratio and overheads apply (default: the
    fitted :func:`default_shape`; :data:`ROOFLINE_SHAPE` for the plain roofline).

    Raises:
        ValueError: unknown precision, or the accelerator has no tensor-core support for it.
    """
    return hardware_params_at(
        spec, precision, default_shape(inputs=inputs) if shape is None else shape
    )
