"""How uncertain each accelerator's serving prediction is, by the case it falls in (issue 16).

A prediction is only as good as the validation scheme that matches its situation. For
the scenario's model, each candidate accelerator is in one of these cases, judged from
the MLPerf Inference rows the calibration reads:

* **measured combination**: the accelerator has MLPerf rows of this model. The model
  carries those rows to today's deployment, as when it predicts a whole MLPerf round
  from the others: the *round* scheme's held-out error.
* **new accelerator for this workload**: the vendor ran this model on other parts, this
  part never did: the *accelerator* scheme (each part predicted from its sisters).
* **new workload for this vendor**: the part has MLPerf rows, but the vendor never ran
  this model, so its efficiency for it comes from other workloads and the other
  vendor's runs of it: the *workload* scheme (each vendor x workload cell held out).
* **new accelerator and new workload for this vendor**: neither; the larger of the
  accelerator and workload errors.

An extrapolation never carries less than the measured combination's error: every
prediction is carried to today's software as the round scheme measures, and the other
schemes add the extrapolation across parts or workloads on top, so a case takes the
largest of the round error and its own scheme's (a vendor whose round error is high
keeps it where it also extrapolates).

Analytical decisions taken here:

* The error is the scheme's median absolute percentage error over the held-out rows of
  the accelerator's vendor (all vendors' when the vendor has none), read from the same
  held-out predictions the inference chapter prints; nothing is refitted here.
* A median APE ``m`` becomes the lognormal sigma whose median ``|exp(sigma z) - 1|`` is
  ``m`` (:func:`sigma_for_median_ape`: Phi(ln(1+m)/s) - Phi(ln(1-m)/s) = 1/2, about
  ``ln(1 + m) / 0.6745`` for small ``m``), so the spread drawn reproduces the error the
  validation measured, in the same units. The Monte Carlo
  draws each accelerator's serving throughput with its case's sigma, so P(AMD cheaper)
  widens where the model extrapolates; the team's own measurements, where given, replace
  it with their residual (:func:`analysis.measurements.throughput_sigmas`).
* Precision is not part of the case: the measured precisions are listed beside it, and
  the round scheme's rows mix precisions as the data do.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import norm

from analysis.inference.benchmarks import benchmark_def
from analysis.inference.validation import predicted_rows, validate_against_mlperf
from analysis.inputs import Inputs, resolve
from analysis.textsafe import markdown_text

#: Case -> the holdout scheme(s) whose error it carries (the larger when two).
CASE_SCHEMES: dict[str, tuple[str, ...]] = {
    "measured combination": ("round",),
    "new accelerator for this workload": ("round", "accelerator"),
    "new workload for this vendor": ("round", "workload"),
    "new accelerator and new workload for this vendor": ("round", "accelerator", "workload"),
}


def sigma_for_median_ape(ape_pct: float) -> float:
    """Lognormal sigma whose median absolute percentage error is ``ape_pct``."""
    m = float(ape_pct) / 100.0
    if not np.isfinite(m) or m <= 0.0:
        return 0.0
    hi, lo = np.log1p(m), np.log1p(-min(m, 0.999999))

    def gap(s: float) -> float:
        return float(norm.cdf(hi / s) - norm.cdf(lo / s)) - 0.5

    return float(brentq(gap, 1e-6, 50.0))


def _model_of(benchmark: str) -> str:
    try:
        return benchmark_def(benchmark).model
    except (KeyError, ValueError):
        return ""


def _case(rows: pd.DataFrame, accelerator: str, vendor: str, model: str) -> str:
    acc = rows["accelerator"] == accelerator
    mod = rows["model"] == model
    if (acc & mod).any():
        return "measured combination"
    vendor_ran = ((rows["vendor"] == vendor) & mod).any()
    if vendor_ran:
        return "new accelerator for this workload"
    return (
        "new workload for this vendor"
        if acc.any()
        else ("new accelerator and new workload for this vendor")
    )


def _scheme_error(held: pd.DataFrame, vendor: str) -> float:
    """Median APE (%) of a scheme's held-out predictions for ``vendor`` (else all vendors)."""
    pred = predicted_rows(held)
    own = pred.loc[pred["vendor"] == vendor, "ape_pct"]
    return float(np.median(own)) if len(own) else float(np.median(pred["ape_pct"]))


def prediction_cases(
    accelerators: list[str] | tuple[str, ...],
    model: str,
    *,
    validations: Mapping[str, pd.DataFrame] | None = None,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """Per accelerator: its prediction case for ``model``, the scheme, error and sigma.

    ``validations``: scheme -> :func:`validate_against_mlperf` output (the inference
    chapter's ``checks.validations``), so the held-out runs are not repeated; the schemes
    missing from it are run here. Columns: accelerator, vendor, case, scheme,
    median_ape_pct, log_sigma, measured_precisions (of the accelerator's rows of
    ``model``, empty when none).
    """
    inp = resolve(inputs)
    held = dict(validations or {})
    for scheme in ("round", "accelerator", "workload"):
        if scheme not in held:
            held[scheme] = validate_against_mlperf(scheme, inputs=inp)
    rows = held["round"][["accelerator", "vendor", "benchmark", "precision"]].copy()
    rows["model"] = [_model_of(b) for b in rows["benchmark"]]
    vendor_of = inp.specs.set_index("accelerator")["vendor"]
    out = []
    for acc in accelerators:
        vendor = str(vendor_of.get(acc, ""))
        case = _case(rows, acc, vendor, model)
        schemes = CASE_SCHEMES[case]
        errors = {s: _scheme_error(held[s], vendor) for s in schemes}
        scheme = max(errors, key=lambda s: errors[s])
        ape = errors[scheme]
        mine = rows[(rows["accelerator"] == acc) & (rows["model"] == model)]
        out.append(
            {
                "accelerator": acc,
                "vendor": vendor,
                "case": case,
                "scheme": scheme,
                "median_ape_pct": ape,
                "log_sigma": sigma_for_median_ape(ape),
                "measured_precisions": ", ".join(sorted(set(mine["precision"].astype(str)))),
            }
        )
    return pd.DataFrame(out)


def case_sigmas(cases: pd.DataFrame) -> dict[str, float]:
    """Accelerator -> lognormal sigma of its serving throughput (``tco.with_throughput_sigmas``)."""
    return {str(a): float(s) for a, s in zip(cases["accelerator"], cases["log_sigma"], strict=True)}


def _tier_error_text(e: pd.Series, c: pd.Series) -> str:
    """How one tier row's figure was made and the error it carries (a clause).

    ``e``: the row of :func:`analysis.inference.tier_uncertainty`; ``c``: its
    accelerator's row of :func:`prediction_cases` (the scheme and vendor of the case).
    """
    case = (
        f"a {e['case']} (held-out error {e['case_ape_pct']:.1f} % median, MLPerf "
        f"{c['scheme']} scheme, {markdown_text(c['vendor'])})"
    )
    basis = markdown_text(e["deployment_basis"])
    if e["error_source"] == "your measurements":
        return f"{case}; your measurements of it set its spread"
    if not e["check"] or not np.isfinite(e["check_ape_pct"]):
        return f"{case}; its figure is {basis}, with no latency-resolved check for it"
    return (
        f"{case}; its figure is {basis}, and the {markdown_text(e['check'])} misses by "
        f"{e['check_ape_pct']:.1f} % median for {markdown_text(e['vendor'])}"
    )


def case_note(
    cases: pd.DataFrame, winners: pd.DataFrame, errors: pd.DataFrame | None = None
) -> str:
    """Markdown: each tier's winner with the held-out error of its prediction.

    ``errors``: :func:`analysis.inference.tier_uncertainty` rows (or
    :func:`analysis.measurements.tier_errors`); when given, each winner's error is its
    tier row's, the larger of the case's and the check of how the figure was made.
    """
    by = cases.set_index("accelerator")
    per_tier = errors.set_index(["tier_index", "accelerator"]) if errors is not None else None
    lines = []
    for _, w in winners.iterrows():
        acc = str(w.get("winner", ""))
        if not acc or acc not in by.index:
            continue
        c = by.loc[acc]
        head = (
            f"- **{markdown_text(w['tier'])}**: {markdown_text(acc)} serves the most, "
            f"{float(w['margin_pct']):.0f} % more tokens/s per GPU than "
            f"{markdown_text(w['runner_up_other_vendor'])}; "
        )
        key = (w.get("tier_index"), acc)
        if per_tier is not None and key in per_tier.index:
            e = per_tier.loc[key]
            spread = (
                f" (the Monte Carlo draws a {e['median_ape_pct']:.1f} % median error)"
                if np.isfinite(e["median_ape_pct"])
                else ""
            )
            lines.append(f"{head}its prediction is {_tier_error_text(e, c)}{spread}")
            continue
        lines.append(
            f"{head}its prediction is a {c['case']}, whose held-out error ({c['scheme']} "
            f"scheme, {markdown_text(c['vendor'])}) is {c['median_ape_pct']:.1f} % median"
        )
    if not lines:
        return "No tier has a shipping winner to qualify."
    head = (
        "Each tier's throughput winner and how far its figure can be trusted: the median held-out "
        "error of the validation scheme that matches its situation (the Monte Carlo draws "
        "each accelerator's serving throughput with that spread)."
    )
    if errors is not None:
        head = (
            "Each tier's throughput winner and how far its figure can be trusted: the larger "
            "of the MLPerf held-out error of its prediction case and, where InferenceX "
            "measured the model, the held-out error of the way the figure was made (the "
            "Monte Carlo draws each tier's throughput with that spread)."
        )
    return "\n".join([head, "", *lines])
