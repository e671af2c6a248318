"""Facade: the deployment model on the bundled InferenceX points (loads once per process).

:mod:`analysis.deployments` is pure (frames in, frames out); this module hands it the
bundled tables, so that :func:`analysis.inference.evaluate_tiers`, the validation CLI and
the chapters share one calibration.
"""

from __future__ import annotations

from functools import cache

import pandas as pd

from analysis import data, deployment_fit, deployments


@cache
def implied() -> pd.DataFrame:
    """Implied efficiencies of every bundled InferenceX point the model fits."""
    points = deployment_fit.measured_points(data.load_table("inferencex"))
    return deployment_fit.implied_efficiencies(points, data.load_specs(), data.load_models())


@cache
def default_calibration() -> deployment_fit.DeploymentCalibration:
    """Factors fitted on every bundled point (what the tiers use)."""
    return deployment_fit.fit_calibration(implied())


@cache
def validation() -> pd.DataFrame:
    """Leave-one-configuration-out predictions of the disaggregated points."""
    return deployment_fit.validate_by_configuration(implied(), "disaggregated")


def with_options(
    sc: object,
    tiers: pd.DataFrame,
    *,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``tiers`` with each accelerator's best deployment option (see ``apply_to_tiers``)."""
    inf = sc.inference  # type: ignore[attr-defined]
    req = deployments.Request(inf.model, inf.precision, float(inf.isl), float(inf.osl))
    return deployments.apply_to_tiers(
        tiers,
        req,
        specs=data.load_specs() if specs is None else specs,
        models=data.load_models() if models is None else models,
        calibration=default_calibration(),
    )
