"""How uncertain each tier's figure is, by how the figure was made.

:mod:`analysis.inference.uncertainty` gives each accelerator the MLPerf held-out error of
its prediction case (measured combination, new accelerator, new workload). That error
comes from MLPerf's throughput scenarios; a tier's figure is made one of four ways (its
``deployment_basis``), and for a model InferenceX measured, its latency-resolved sweeps
score each way directly. Per tier row:

* **"measured"**: an InferenceX point meeting the tier's bounds. What a buyer gets can
  still move with the serving software: the error is the date-to-date repeatability of
  the vendor's configurations (each point predicted by its configuration's other run
  dates, :func:`analysis.inference.latency_diagnostics.date_repeatability`).
* **"measured-calibrated"**: the deployment model at the factors of the accelerator's
  own measured points. The error is the deployment validation that holds out one
  configuration at a time of the option's kind (:func:`deployment_fit.held_out`, unit
  "configuration"; expert-parallel options are aggregated runs).
* **"modelled, no measurement"**: the deployment model with the factors of the part's
  generation where its sister parts measured enough points, else of the vendor (the part
  has no measured point of the kind at this precision). The error is the same validation
  holding out each accelerator x precision whole (unit "cell").
* **"MLPerf-calibrated"** in a tier with a TPOT bound, for a model InferenceX measured:
  the report's serving path against the measured frontiers
  (:func:`analysis.inference.frontier_validation.validate_public_path`). Without a bound
  (MLPerf Offline's situation) or for a model no sweep measured, there is no
  latency-resolved check of that figure, and the MLPerf case error stands alone.

Analytical decisions taken here:

* Each row carries the **larger** of its accelerator's case error and its basis error:
  the figure is made as its basis says *and* carried to the scenario's model and today's
  software as the case says, and neither check sees the other's error, so the larger
  is the floor, not the sum.
* The basis error is the median APE over the vendor's held-out rows of the matching
  check (all vendors' when the vendor has none), turned into a lognormal sigma by
  :func:`analysis.inference.uncertainty.sigma_for_median_ape`, as the case error is.
* Only the checks a scenario's tiers need are run. An MLPerf-calibrated figure of a
  model InferenceX did not measure runs none (MLPerf's Server and Interactive rows
  check it, within the case); a deployment-model figure of such a model ("modelled, no
  measurement") carries the part-held-out check, measured on DeepSeek-R1, as a floor:
  the figure is carried across models as well, which no check here scores. So the
  llama2-70b scenarios (every figure MLPerf-calibrated) draw exactly what they drew
  before, while a scenario whose tiers use the deployment model for a dense model does
  not.
* The deployment checks predict each held-out point at its measured concurrency
  (``matched=False``, the deployment validation's headline), not at its measured TPOT:
  a tier's figure is throughput at a TPOT bound, closer to the matched test, which is
  harder, so these errors are, if anything, understated.
* A measured point keeps its accelerator's case error as a floor too: the case error
  is what carrying any figure to today's deployment costs, and InferenceX's repeatability
  only scores the same configuration on other dates.
* The checks pool every InferenceX model (today DeepSeek-R1 only) and are cached per
  ``Inputs`` and check.
* The selection of a tier's option (the best of the bounded model and the measured
  point) is not modelled: the check scores the way the figure is made, not the winner
  among ways, so a chosen modelled option's error is, if anything, understated.
* The spread is a symmetric lognormal even where a check's misses lean one way (held
  out whole, MI355X's aggregated runs come out a median 18 % low: CDNA 4 has no sister
  part measured, so it takes AMD's pool, which CDNA 3 pulls down), so it widens both
  tails, not only the likely one.

Today (2026-12-07, the bundled data; median APE AMD / NVIDIA): date-to-date repeatability
16.9 / 3.9 %; deployment model, one configuration held out, disaggregated runs 17.5 /
19.8 %, aggregated runs 20.1 / 12.6 %; one accelerator x precision held out,
disaggregated 20.1 / 18.3 %, aggregated 19.9 / 11.1 %; MLPerf-calibrated path vs the
measured frontiers 42.0 / 36.9 %. (NVIDIA's aggregated figures were 70.2 and 63.6 %
until the expert-parallel runs were read at their real GPU count,
:func:`analysis.inference.deployment_fit.measured_points`; AMD's were 30.5 and 26.9 %,
over-predicting MI300X and MI325X by a median 36 %, until a part without measurements
took its generation's efficiency before its vendor's,
:meth:`analysis.inference.deployment_fit.DeploymentCalibration.lookup`.) Against MLPerf
case errors of 8.6-10.4 %, the DeepSeek-R1 rack-scale scenario's P(AMD cheaper) moves 0.0 -> 0.0 %
(<25 ms), 2.7 -> 15.3 % (25-50 ms) and 88.6 -> 78.4 % (no bound); the llama2-70b
scenarios run no check and draw as before.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from analysis.inference import deployment_fit
from analysis.inference.deployments import MEASURED, MEASURED_POINT, MODELLED
from analysis.inference.frontier_validation import validate_public_path
from analysis.inference.latency_diagnostics import date_repeatability
from analysis.inference.uncertainty import sigma_for_median_ape
from analysis.inputs import Inputs, resolve

#: The ``deployment_basis`` of a figure on the MLPerf-calibrated serving path.
MLPERF_CALIBRATED = "MLPerf-calibrated"
#: Option kind -> the kind of measured runs it is validated on.
KIND_OF_OPTION = {
    "aggregated": "aggregated",
    "expert-parallel": "aggregated",
    "disaggregated": "disaggregated",
}
#: Reader-facing names of the latency-resolved checks (the chapter's table and caption).
CHECKS = {
    "repeat": "InferenceX date-to-date repeatability",
    "configuration": "deployment model, one configuration held out",
    "cell": "deployment model, one accelerator x precision held out",
    "frontier": "serving path vs InferenceX measured frontiers",
}


def _by_vendor(ape: pd.DataFrame) -> dict[str, float]:
    """Vendor (and "overall") -> median APE (%) of a held-out frame's predicted rows."""
    ok = ape[np.isfinite(ape["ape_pct"].to_numpy(float))]
    out = {str(v): float(g["ape_pct"].median()) for v, g in ok.groupby("vendor", sort=True)}
    out["overall"] = float(ok["ape_pct"].median()) if len(ok) else np.nan
    return out


def _check_of(basis: str, kind: str, bounded: bool, model: str, models: set[str]) -> str | None:
    """The check that scores a figure made this way (None: the MLPerf case alone)."""
    if basis == MEASURED_POINT:
        return "repeat"
    if basis == MEASURED:
        return f"configuration:{KIND_OF_OPTION.get(kind, kind)}"
    if basis == MODELLED:
        return f"cell:{KIND_OF_OPTION.get(kind, kind)}"
    if basis == MLPERF_CALIBRATED and bounded and model in models:
        return "frontier"
    return None


def _check_errors(key: str, inp: Inputs) -> dict[str, float]:
    """Per vendor: the median APE of check ``key`` (see :func:`_check_of`)."""

    def run() -> dict[str, float]:
        name, _, kind = key.partition(":")
        frames: dict[str, Callable[[], pd.DataFrame]] = {
            "repeat": lambda: date_repeatability(inputs=inp),
            "configuration": lambda: deployment_fit.held_out(kind, "configuration", inp),
            "cell": lambda: deployment_fit.held_out(kind, "cell", inp),
            "frontier": lambda: validate_public_path(inputs=inp),
        }
        return _by_vendor(frames[name]())

    return inp.derived(("tier_check_errors", key), run)


def _check_label(key: str | None) -> str:
    """Reader-facing name of check ``key`` ("" for none)."""
    if key is None:
        return ""
    name, _, kind = key.partition(":")
    return f"{CHECKS[name]} ({kind} runs)" if kind else CHECKS[name]


def _frontier_models(inp: Inputs) -> set[str]:
    """Models with InferenceX sweeps (whose bounded MLPerf-calibrated figures are checked)."""
    ix = inp.table("inferencex")
    return set(ix["model"].astype(str)) if "model" in ix.columns else set()


def tier_uncertainty(
    tiers: pd.DataFrame,
    cases: pd.DataFrame,
    model: str,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Per tier x accelerator: the error its figure carries and the sigma the Monte Carlo draws.

    ``tiers``: :func:`analysis.inference.evaluate_tiers` output; ``cases``:
    :func:`analysis.inference.prediction_cases` for the same accelerators and ``model``.
    Columns: tier_index, tier, accelerator, vendor, deployment_basis, case,
    case_ape_pct, check (the latency-resolved check of the basis, "" when none),
    check_ape_pct, error_source ("case" or "check": the larger), median_ape_pct and
    throughput_log_sigma.
    """
    inp = resolve(inputs)
    by_acc = cases.set_index("accelerator")
    models = _frontier_models(inp)
    rows = []
    for t in tiers.itertuples(index=False):
        acc, vendor = str(t.accelerator), str(t.vendor)
        basis = str(getattr(t, "deployment_basis", "") or "")
        kind = str(getattr(t, "deployment_kind", "") or "")
        bounded = pd.notna(t.tpot_ms_max)
        case_ape = float(by_acc.at[acc, "median_ape_pct"]) if acc in by_acc.index else np.nan
        key = _check_of(basis, kind, bounded, model, models)
        check_ape = np.nan
        if key is not None:
            errs = _check_errors(key, inp)
            check_ape = errs.get(vendor, errs["overall"])
        use_check = np.isfinite(check_ape) and not check_ape <= case_ape
        ape = check_ape if use_check else case_ape
        rows.append(
            {
                "tier_index": t.tier_index,
                "tier": t.tier,
                "accelerator": acc,
                "vendor": vendor,
                "deployment_basis": basis,
                "case": str(by_acc.at[acc, "case"]) if acc in by_acc.index else "",
                "case_ape_pct": case_ape,
                "check": _check_label(key),
                "check_ape_pct": check_ape,
                "error_source": "check" if use_check else "case",
                "median_ape_pct": ape,
                "throughput_log_sigma": sigma_for_median_ape(ape) if np.isfinite(ape) else np.nan,
            }
        )
    return pd.DataFrame(rows)
