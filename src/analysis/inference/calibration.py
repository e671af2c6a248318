"""The efficiency calibration: :class:`Calibration` and its fit.

Fitted on MLPerf's implied efficiencies (per vendor, generation, round, scenario,
workload, precision, power).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from analysis.inference.anchoring import (
    _anchoring,
    _masked_group_median,
    _median_by,
    _precision_contrasts,
    _shared_cells,
)
from analysis.inference.benchmarks import BENCHMARKS, benchmark_def, benchmark_for_model
from analysis.inference.compute_ratio import ComputeScales, fit_with_compute_ratio
from analysis.inference.implied import (
    _solve_rows,
    _terms_for_rows,
    implied_efficiency,
    with_compute_ratio,
)
from analysis.inference.paired_effects import (
    _drift_per_round,
    _power_exponent,
    _release_index,
    _round_key,
)
from analysis.inference.roofline import (
    ETA_PLAUSIBLE_MAX,
    GENERATION_ORDER,
    _codes,
    _generation,
    _models,
    _num,
    _specs,
)
from analysis.inputs import Inputs, resolve


@dataclass(frozen=True)
class Calibration:
    """Fitted efficiency factors (fraction of the roofline achieved) and their scales.

    eta(query) = base factor (on the llama2-70b Offline basis: the accelerator's own factor
    shrunk towards its vendor x generation's, at the round nearest the query's; see
    :meth:`base_eta`) x workload scale (per MLPerf benchmark; 1 for llama2-70b; an
    uncalibrated benchmark borrows its MoE/dense family's median) x scenario scale (1 for
    Offline; pooled x the vendor's shrunk deviation). That eta times a step's bytes; its
    FLOPs run at :meth:`compute_ratio` times it. From :func:`fit_calibration` (the
    model's), the pooled workload and precision scales are what the compute ratio left
    over (within 1 %) and the vendors' deviations stay here.
    """

    by_group: Mapping[tuple[str, str, str], float]  #: (vendor, generation, round) -> eta
    by_generation: Mapping[tuple[str, str], float]  #: (vendor, generation) -> eta
    by_vendor: Mapping[str, float]  #: vendor -> eta
    scenario_scale: Mapping[str, float] = field(default_factory=dict)  #: scenario -> scale
    workload_scale: Mapping[str, float] = field(default_factory=dict)  #: benchmark -> scale
    rounds: tuple[str, ...] = ()
    #: (accelerator, round) -> eta: the accelerator's own median (unshrunk) and its row count.
    by_accelerator: Mapping[tuple[str, str], float] = field(default_factory=dict)
    accelerator_rows: Mapping[tuple[str, str], int] = field(default_factory=dict)
    #: (vendor, scenario) -> multiplier on the pooled scenario scale (already shrunk).
    vendor_scenario_scale: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: (benchmark, scenario) -> multiplier on the pooled scenario scale: the workload's own
    #: latency-mode behaviour, shrunk by n / (n + 10) rows (1 where it has no such rows).
    workload_scenario_scale: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: (vendor, generation, round) -> rows behind ``by_group`` (weights of a round tie).
    group_rows: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    #: vendor -> software drift: multiplier of the efficiency per MLPerf release (1 = none),
    #: measured on the same accelerator x benchmark x scenario x precision class in two
    #: calibrated rounds, each benchmark x scenario voting once, and shrunk towards 1 (see
    #: :func:`_drift_per_round`); and the pairs behind it.
    drift_per_round: Mapping[str, float] = field(default_factory=dict)
    drift_pairs: Mapping[str, int] = field(default_factory=dict)
    #: vendor -> power exponent beta: a part's efficiency scales as (its board power / the
    #: top-bin TDP of its silicon generation) ** beta (see :func:`_power_exponent`); and the
    #: pairs behind it. Group factors are top-bin equivalents; ``by_accelerator`` is each
    #: part's own, at its TDP.
    power_exponent: Mapping[str, float] = field(default_factory=dict)
    power_pairs: Mapping[str, int] = field(default_factory=dict)
    #: accelerator -> (its TDP, the highest TDP of its vendor x generation), watts: from the
    #: spec table (:func:`power_reference`).
    power_ref: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: (vendor, benchmark) -> multiplier on the pooled workload scale: the vendor's own
    #: software on that workload, shrunk towards the pooled value by n / (n + 10) rows
    #: (:data:`WORKLOAD_PRIOR_ROWS`); absent (1) for a workload the vendor never submitted.
    vendor_workload_scale: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: precision class (:func:`precision_class`) -> scale, pooled over vendors ("native" = 1),
    #: and (vendor, class) -> the vendor's shrunk deviation from it.
    precision_scale: Mapping[str, float] = field(default_factory=dict)
    vendor_precision_scale: Mapping[tuple[str, str], float] = field(default_factory=dict)
    #: The compute ratio's scales (:mod:`analysis.inference.compute_ratio`): the workload
    #: and precision scales moved onto FLOPs; the scales above are then what is left.
    compute: ComputeScales = field(default_factory=ComputeScales)

    def compute_ratio(self, benchmark: str | None, klass: str | None = None) -> float:
        """Kappa = eta_c / eta_b of a query, to set as ``hw["compute_ratio"]``.

        The pooled workload scale of ``benchmark`` (a benchmark without one: its MoE/dense
        family's median; no benchmark: the reference, 1) times the pooled scale of the
        precision class ``klass`` (1 for "native" or None). The vendors' shrunk deviations
        stay in :meth:`eta` (see :meth:`leftover`).
        """
        if benchmark is None:
            return self.compute.ratio(None, klass)
        bench = benchmark_def(benchmark).benchmark
        return self.compute.ratio(bench, klass, _family(bench))

    def leftover(self) -> ComputeScales:
        """The pooled workload and precision scales of this fit, as compute scales.

        Only the pooled ones move onto FLOPs: a vendor's deviation is its median shrunk
        by n / (n + 10) rows each fit, and moving the shrunk step into the ratio round
        after round would undo the shrinkage (the ratio would grow to the raw deviation).
        The deviations (within a few per cent) stay on the whole step, in :meth:`eta`.
        """
        return ComputeScales(dict(self.workload_scale), dict(self.precision_scale))

    def precision(self, vendor: str, klass: str | None) -> float:
        """Efficiency scale of serving at a precision above the part's native (lowest) one.

        A part that computes in fp4 reaches a larger fraction of its fp8 roofline when
        serving fp8 than of its (twice higher) fp4 roofline when serving fp4: quantization,
        scaling and the non-matrix work do not speed up with the format. Pooled over
        vendors, times the vendor's deviation shrunk by n / (n + 10) rows; 1 for "native"
        or an unknown class.
        """
        if klass is None or klass == "native":
            return 1.0
        return self.precision_scale.get(klass, 1.0) * self.vendor_precision_scale.get(
            (vendor, klass), 1.0
        )

    def vendor_workload(self, vendor: str | None, benchmark: str) -> float:
        """The vendor's shrunk deviation from the pooled workload scale (1 when unmeasured)."""
        if vendor is None:
            return 1.0
        return self.vendor_workload_scale.get((vendor, benchmark_def(benchmark).benchmark), 1.0)

    def workload(self, benchmark: str) -> tuple[float, bool]:
        """Workload scale of an MLPerf benchmark id, and whether it is the family fallback.

        A benchmark without calibration data takes the median scale of the calibrated
        benchmarks of its family (MoE or dense; llama2-70b counts as dense at 1.0).
        """
        bdef = benchmark_def(benchmark)
        if bdef.benchmark in self.workload_scale:
            return self.workload_scale[bdef.benchmark], False
        fam = [
            v
            for b, v in sorted(self.workload_scale.items())
            if b in BENCHMARKS and BENCHMARKS[b].moe == bdef.moe
        ]
        return (float(np.exp(np.median(np.log(fam)))) if fam else 1.0), True

    def workload_for_model(self, model: str) -> float:
        """Workload scale of the MLPerf benchmark that uses ``model`` (1.0 if none)."""
        bench = benchmark_for_model(model)
        return 1.0 if bench is None else self.workload(bench)[0]

    def power_factor(
        self, vendor: str, accelerator: str | None, power_w: float | None = None
    ) -> float:
        """Efficiency multiplier of a part running below its generation's top-bin power.

        (power / top-bin TDP) ** beta of the vendor, the power being the part's TDP unless
        ``power_w`` (a stated power cap) is given: 1 for the top bin, an unknown part or no
        measured exponent. Lower-power bins of one silicon (MI300X at 750 W vs MI325X at
        1000 W, MI350X at 1000 W vs MI355X at 1400 W) sustain lower clocks under load.
        """
        if accelerator is None or accelerator not in self.power_ref:
            return 1.0
        tdp, top = self.power_ref[accelerator]
        power = power_w if power_w is not None and power_w > 0 else tdp
        return float((power / top) ** self.power_exponent.get(vendor, 0.0))

    @staticmethod
    def _pick_round(
        by_round: Mapping[str, tuple[float, int]], round_: str | None, log_drift: float = 0.0
    ) -> tuple[str, float, float]:
        """The factor of ``by_round`` (round -> (eta, rows)) carried to round ``round_``.

        The latest round when ``round_`` is None, the round itself when calibrated;
        otherwise the nearest calibrated round on each side of it (one or two), each moved
        to ``round_`` by the software drift (``log_drift`` per MLPerf release, see
        :func:`_release_index`) and combined as a row-weighted geometric mean. Returns
        (rounds used, eta, rows).
        """
        have = sorted(by_round, key=_round_key)
        if round_ is None:
            near, shift = [have[-1]], [0.0]
        elif round_ in by_round:
            near, shift = [round_], [0.0]
        else:
            q = _release_index(round_)
            below = [r for r in have if _release_index(r) < q]
            above = [r for r in have if _release_index(r) > q]
            near = below[-1:] + above[:1]
            shift = [log_drift * (q - _release_index(r)) for r in near]
        n = np.array([max(by_round[r][1], 1) for r in near], dtype=float)
        log_eta = np.array([np.log(by_round[r][0]) + d for r, d in zip(near, shift, strict=True)])
        return "+".join(near), float(np.exp(np.sum(n * log_eta) / n.sum())), float(n.sum())

    def base_eta(
        self,
        vendor: str,
        generation: str,
        round_: str | None = None,
        accelerator: str | None = None,
        power_w: float | None = None,
    ) -> tuple[float, str]:
        """Base factor, and the level it came from (see :data:`FACTOR_LEVELS`).

        The vendor x generation factor carried to ``round_`` by :meth:`_pick_round` (the
        latest when None; an uncalibrated round: its calibrated neighbours moved by the
        vendor's software drift per release, row-weighted geometric mean); with an
        ``accelerator`` that has rows, its own factor at its nearest round shrunk towards
        that: weight n / (n + ``ACCELERATOR_PRIOR_ROWS``) in log space (both as top-bin
        equivalents). A generation without data falls back to the vendor's newest measured
        older generation, then the vendor. The result is moved from the top bin to the part's
        power by :meth:`power_factor` (its TDP, or ``power_w``).
        """
        power = self.power_factor(vendor, accelerator, power_w)
        gen_rounds = {
            r: (e, self.group_rows.get((v, g, r), 1))
            for (v, g, r), e in self.by_group.items()
            if v == vendor and g == generation
        }
        drift = float(np.log(self.drift_per_round.get(vendor, 1.0)))
        if gen_rounds:
            used, base, _ = self._pick_round(gen_rounds, round_, drift)
            source = f"{generation} {used}"
            acc_rounds = {
                r: (e, self.accelerator_rows.get((a, r), 1))
                for (a, r), e in self.by_accelerator.items()
                if a == accelerator
            }
            if accelerator is not None and acc_rounds:
                used_a, own, n = self._pick_round(acc_rounds, round_, drift)
                own /= self.power_factor(vendor, accelerator)  # stored at its TDP
                w = n / (n + ACCELERATOR_PRIOR_ROWS)
                base = float(np.exp((1.0 - w) * np.log(base) + w * np.log(own)))
                source = f"{accelerator} {used_a}"
            return base * power, source
        order = GENERATION_ORDER.get(vendor, ())
        if generation in order:  # newer, unmeasured generation: newest measured one
            for gen in reversed(order[: order.index(generation)]):
                if (vendor, gen) in self.by_generation:
                    top, source = self.base_eta(vendor, gen, round_)
                    return top * power, source
        if vendor in self.by_vendor:
            return self.by_vendor[vendor] * power, f"{vendor} (all)"
        raise ValueError(f"no calibration data for vendor {vendor!r}")

    def factor_level(self, vendor: str, generation: str, accelerator: str | None) -> str:
        """Which level of :data:`FACTOR_LEVELS` :meth:`base_eta` uses."""
        if any(v == vendor and g == generation for v, g, _ in self.by_group):
            if accelerator is not None and any(a == accelerator for a, _ in self.by_accelerator):
                return "accelerator"
            return "generation"
        order = GENERATION_ORDER.get(vendor, ())
        if generation in order and any(
            (vendor, g) in self.by_generation for g in order[: order.index(generation)]
        ):
            return "older generation"
        return "vendor"

    def scenario(self, vendor: str, scenario: str) -> float:
        """Scenario scale: pooled x the vendor's shrunk deviation (1 for Offline)."""
        if scenario == "Offline":
            return 1.0
        return self.scenario_scale.get(scenario, 1.0) * self.vendor_scenario_scale.get(
            (vendor, scenario), 1.0
        )

    def eta(
        self,
        vendor: str,
        generation: str,
        scenario: str = "Offline",
        round_: str | None = None,
        model: str | None = None,
        benchmark: str | None = None,
        accelerator: str | None = None,
        power_w: float | None = None,
        precision_class: str | None = None,
    ) -> tuple[float, str]:
        """Efficiency for a query, and the factor level it came from.

        ``power_w``: the board power the part runs at when capped below its TDP.
        ``precision_class``: :func:`precision_class` of the query (None = native).
        The workload scale is the pooled one times this vendor's shrunk deviation: a
        workload the vendor never submitted carries the pooled value only.
        """
        base, source = self.base_eta(vendor, generation, round_, accelerator, power_w)
        scale = self.scenario(vendor, scenario) * self.precision(vendor, precision_class)
        if model is not None and benchmark is None:
            benchmark = benchmark_for_model(model)
        if benchmark is not None:
            work = self.workload(benchmark)[0] * self.vendor_workload(vendor, benchmark)
            work *= self.workload_scenario_scale.get(
                (benchmark_def(benchmark).benchmark, scenario), 1.0
            )
        else:
            work = 1.0
        return base * scale * work, source


#: Reference workload of the group factors (the chapter's default model).
REFERENCE_BENCHMARK = "llama2-70b"

#: Prior row count of the empirical-Bayes shrinkage of an accelerator's own factor towards
#: its vendor x generation's, and of a vendor's scenario deviation towards the pooled
#: scale: a cell's own median gets weight n / (n + 10), i.e. half once it has as many rows
#: as a typical vendor x generation x round group (about ten). Fixed a priori, not tuned.
ACCELERATOR_PRIOR_ROWS = 10.0

SCENARIO_PRIOR_ROWS = 10.0

#: Prior row count of a vendor's deviation from the pooled workload scale and from the
#: pooled precision scale: the same a-priori rule, n / (n + 10).
WORKLOAD_PRIOR_ROWS = 10.0

PRECISION_PRIOR_ROWS = 10.0

#: Levels a base factor can come from, most specific first.
FACTOR_LEVELS = ("accelerator", "generation", "older generation", "vendor")


def usable_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Calibration rows with a plausible implied efficiency (0 < eta <= 1)."""
    ok = rows["eta"].notna() & (rows["eta"] > 0) & (rows["eta"] <= ETA_PLAUSIBLE_MAX)
    return rows[ok]


def power_reference(
    specs: pd.DataFrame | None = None, *, inputs: Inputs | None = None
) -> dict[str, tuple[float, float]]:
    """Per accelerator: (its TDP, the highest TDP of its vendor x generation), watts.

    The top bin of a silicon generation (MI325X for CDNA 3, MI355X for CDNA 4, GB200 for
    Blackwell) is the reference of :meth:`Calibration.power_factor`. Parts without a TDP
    are absent (no power adjustment).
    """
    specs = _specs(specs, inputs=inputs)
    tdp = {
        str(r["accelerator"]): (str(r["vendor"]), _generation(r), _num(r, "tdp_w"))
        for _, r in specs.iterrows()
    }
    top: dict[tuple[str, str], float] = {}
    for vendor, gen, w in tdp.values():
        if w > 0:
            top[(vendor, gen)] = max(top.get((vendor, gen), 0.0), w)
    return {a: (w, top[(v, g)]) for a, (v, g, w) in tdp.items() if w > 0}


def row_power_w(rows: pd.DataFrame, ref: Mapping[str, tuple[float, float]]) -> np.ndarray:
    """Board power of each row's accelerators: its ``power_w`` if given, else the part's TDP.

    NaN where neither is known.
    """
    tdp = np.array(
        [ref.get(a, (np.nan, np.nan))[0] for a in rows.get("accelerator", [None] * len(rows))],
        dtype=float,
    )
    if "power_w" not in rows:
        return tdp
    given = pd.to_numeric(rows["power_w"], errors="coerce").to_numpy(dtype=float)
    return np.where(given > 0, given, tdp)


def _log_power_rel(
    accs: Sequence[Any], power_w: np.ndarray, ref: Mapping[str, tuple[float, float]]
) -> np.ndarray:
    """log(board power / top-bin TDP) per row; 0 where unknown (no adjustment)."""
    top = np.array([ref.get(a, (np.nan, np.nan))[1] for a in accs], dtype=float)
    out = np.log(power_w / top)
    return np.where(np.isfinite(out), out, 0.0)


def fit_efficiency(
    rows: pd.DataFrame,
    iterations: int = 20,
    specs: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> Calibration:
    """Calibration from per-run efficiencies (:func:`implied_efficiency` rows).

    A robust additive fit in log space (Tukey's median polish, deterministic):
    log eta = group(vendor, generation, round) + workload(benchmark) + scenario
    + beta x log(board power / top-bin TDP), with the llama2-70b workload, the Offline
    scenario and the top bin as zero references. Medians rather than least squares because
    MLPerf mixes tuned vendor runs with untuned partner runs. ``specs`` supply the TDPs
    (:func:`power_reference`; the bundled table by default).
    """
    ok = usable_rows(rows)
    if ok.empty:
        raise ValueError("no usable MLPerf rows to calibrate on")
    accs = ok["accelerator"].tolist() if "accelerator" in ok else [None] * len(ok)
    ref = power_reference(specs, inputs=inputs)
    return _fit_arrays(
        np.log(ok["eta"].to_numpy(dtype=float)),
        ok["vendor"].tolist(),
        ok["generation"].tolist(),
        ok["round"].tolist(),
        [benchmark_def(b).benchmark for b in ok["benchmark"].tolist()],
        ok["scenario"].tolist(),
        accs,
        iterations,
        log_power=_log_power_rel(accs, row_power_w(ok, ref), ref),
        power_ref=ref,
        precision_classes=ok["precision_class"].tolist() if "precision_class" in ok else None,
    )


def _fit_arrays(
    y: np.ndarray,
    vendors: list[str],
    gens: list[str],
    rounds_: list[str],
    benches: list[str],
    scens: list[str],
    accs: list[Any] | None = None,
    iterations: int = 20,
    *,
    log_power: np.ndarray | None = None,
    power_ref: Mapping[str, tuple[float, float]] | None = None,
    precision_classes: Sequence[str] | None = None,
) -> Calibration:
    """:func:`fit_efficiency` on plain arrays (log eta and the factor keys per row).

    First the vendors' power exponents (:func:`_power_exponent`) move every row to its
    generation's top-bin power (``log_power``: log of board power / top-bin TDP per row).
    Then a median polish of log eta = group + workload + vendor-workload deviation +
    scenario + vendor-scenario deviation + precision class + vendor-precision deviation,
    each deviation being the cell's median residual shrunk by n / (n + 10) rows
    (``*_PRIOR_ROWS``), so a vendor's own value counts once it has data and the pooled
    value stands in where it has none (a workload it never submitted).
    """
    power_ref = dict(power_ref or {})
    klasses = list(precision_classes) if precision_classes is not None else ["native"] * len(y)
    lp = np.zeros(len(y)) if log_power is None else np.asarray(log_power, dtype=float)
    beta, power_pairs = _power_exponent(y, vendors, gens, rounds_, benches, scens, lp)
    y = y - np.array([beta[v] for v in vendors], dtype=float) * lp
    grp_names, grp = _codes(list(zip(vendors, gens, rounds_, strict=True)))
    bench_names, bench = _codes(benches)
    scen_names, scen = _codes(scens)
    vs_names, vs = _codes(list(zip(vendors, scens, strict=True)))
    vw_names, vw = _codes(list(zip(vendors, benches, strict=True)))
    pc_names, pc = _codes(klasses)
    vp_names, vp = _codes(list(zip(vendors, klasses, strict=True)))
    bs_names, bs = _codes(list(zip(benches, scens, strict=True)))
    ng, nb, ns, nvs = len(grp_names), len(bench_names), len(scen_names), len(vs_names)
    nvw, npc, nvp = len(vw_names), len(pc_names), len(vp_names)
    ref_p = pc_names.index("native") if "native" in pc_names else -1
    anchored, level = _anchoring(vendors, benches, REFERENCE_BENCHMARK)
    vw_free = np.array([k[0] in anchored for k in vw_names], dtype=bool)
    within, class_ok = _precision_contrasts(grp, pc, ref_p, level)
    level = level & class_ok[pc]

    def _shrink(names: list[Any], codes: np.ndarray, prior: float, ref: str) -> np.ndarray:
        cnt = np.bincount(codes, minlength=len(names)).astype(float)
        return np.where([k[1] == ref for k in names], 0.0, cnt / (cnt + prior))

    vw_shrink = _shrink(vw_names, vw, WORKLOAD_PRIOR_ROWS, REFERENCE_BENCHMARK)
    vp_shrink = _shrink(vp_names, vp, PRECISION_PRIOR_ROWS, "native")
    bs_shrink = _shrink(bs_names, bs, SCENARIO_PRIOR_ROWS, "Offline")
    ref_b = bench_names.index(REFERENCE_BENCHMARK) if REFERENCE_BENCHMARK in bench_names else -1
    ref_s = scen_names.index("Offline") if "Offline" in scen_names else -1
    w = np.zeros(nb)
    s = np.zeros(ns)
    d = np.zeros(nvs)
    dw = np.zeros(nvw)
    p = np.zeros(npc)
    dp = np.zeros(nvp)
    ds = np.zeros(len(bs_names))
    prev = None
    # Rows of a group without any level-setting row (see :func:`_anchoring`) set nothing.
    a = _masked_group_median(grp, y, ng, level)
    fit = np.isfinite(a[grp])
    w_rows = fit & np.isin(np.array(vendors, dtype=object), list(anchored))
    w_rows = w_rows | (fit & ~np.isin(bench, np.unique(bench[w_rows])))
    p_rows = fit & within
    vp_free = np.bincount(vp[p_rows], minlength=nvp) > 0
    # A vendor's latency-mode deviation is identified only if it ran a workload in that
    # scenario that another vendor also ran there: on workloads only it ran, its deviation
    # and the workloads' are one. Otherwise it keeps the pooled scale.
    shared = fit & _shared_cells(vendors, bs, fit)
    vs_rows = fit & np.isin(vs, np.unique(vs[shared]))
    vs_count = np.bincount(vs[vs_rows], minlength=nvs).astype(float)
    vs_shrink = np.where(
        [k[1] == "Offline" for k in vs_names], 0.0, vs_count / (vs_count + SCENARIO_PRIOR_ROWS)
    )
    med_a = _median_by(grp, ng, level, empty=np.nan)
    med_w = _median_by(bench, nb, w_rows)
    med_dw = _median_by(vw, nvw, fit)
    med_s = _median_by(scen, ns, fit)
    med_d = _median_by(vs, nvs, vs_rows)
    med_ds = _median_by(bs, len(ds), fit)
    med_p = _median_by(pc, npc, p_rows)
    med_dp = _median_by(vp, nvp, p_rows)
    for _ in range(iterations):
        other = w[bench] + dw[vw] + s[scen] + d[vs] + ds[bs] + p[pc] + dp[vp]
        a = med_a(y - other)
        r = np.where(fit, y - np.nan_to_num(a[grp]), 0.0)
        w = med_w(r - dw[vw] - s[scen] - d[vs] - ds[bs] - p[pc] - dp[vp])
        w = w - (w[ref_b] if ref_b >= 0 else 0.0)
        dw = np.where(
            vw_free, med_dw(r - w[bench] - s[scen] - d[vs] - ds[bs] - p[pc] - dp[vp]), 0.0
        )
        dw = dw * vw_shrink
        # The scenario scale is what the latency physics (p99 step under Poisson
        # arrivals, chunked-prefill TTFT, the bounds) leaves unexplained of the
        # Server/Interactive efficiency: submitters' latency-mode engine settings, per
        # vendor and per workload (deviations shrunk to the pooled scale), so that a
        # workload whose latency rows sit apart (gpt-oss-120b) does not move its Offline
        # factor.
        s = med_s(r - w[bench] - dw[vw] - d[vs] - ds[bs] - p[pc] - dp[vp])
        s = s - (s[ref_s] if ref_s >= 0 else 0.0)
        d = med_d(r - w[bench] - dw[vw] - s[scen] - ds[bs] - p[pc] - dp[vp]) * vs_shrink
        ds = med_ds(r - w[bench] - dw[vw] - s[scen] - d[vs] - p[pc] - dp[vp]) * bs_shrink
        p = med_p(r - w[bench] - dw[vw] - s[scen] - d[vs] - ds[bs] - dp[vp])
        p = p - (p[ref_p] if ref_p >= 0 else 0.0)
        dp = np.where(
            vp_free, med_dp(r - w[bench] - dw[vw] - s[scen] - d[vs] - ds[bs] - p[pc]), 0.0
        )
        dp = dp * vp_shrink
        state = np.concatenate(
            [
                w[np.argsort(bench_names)],
                s[np.argsort(scen_names)],
                d[np.argsort([str(k) for k in vs_names])],
                dw[np.argsort([str(k) for k in vw_names])],
                p[np.argsort(pc_names)],
                dp[np.argsort([str(k) for k in vp_names])],
                ds[np.argsort([str(k) for k in bs_names])],
            ]
        )
        if prev is not None and np.max(np.abs(state - prev)) < 1e-6:
            break  # converged: scales move by less than 1e-6 in log space
        prev = state
    base = y - w[bench] - dw[vw] - s[scen] - d[vs] - ds[bs] - p[pc] - dp[vp]
    a = _masked_group_median(grp, base, ng, level)
    by_acc: dict[tuple[str, str], float] = {}
    acc_rows: dict[tuple[str, str], int] = {}
    if accs is not None and any(x is not None for x in accs):
        acc_names, acc = _codes(list(zip(accs, rounds_, strict=True)))
        med = _masked_group_median(acc, base, len(acc_names), fit)
        cnt = np.bincount(acc[fit], minlength=len(acc_names))
        vendor_of_acc = dict(zip(accs, vendors, strict=True))
        for k, m, c in zip(acc_names, med, cnt, strict=True):
            if k[0] is not None and c > 0:
                tdp, top = power_ref.get(k[0], (1.0, 1.0))
                at_tdp = beta[vendor_of_acc[k[0]]] * np.log(tdp / top)  # from the top bin
                by_acc[k] = float(np.exp(m + at_tdp))
                acc_rows[k] = int(c)
    drift, pairs = _drift_per_round(y, vendors, accs, benches, scens, rounds_, klasses)
    gen_names, gen = _codes(list(zip(vendors, gens, strict=True)))
    by_gen = _masked_group_median(gen, base, len(gen_names), fit)
    ven_names, ven = _codes(vendors)
    by_vendor = _masked_group_median(ven, base, len(ven_names), fit)
    w_has = np.bincount(bench[w_rows], minlength=nb) > 0

    def _exp(names: list[Any], v: np.ndarray) -> dict[Any, float]:
        return {k: float(np.exp(x)) for k, x in zip(names, v, strict=True) if np.isfinite(x)}

    return Calibration(
        by_group=_exp(grp_names, a),
        by_generation=_exp(gen_names, by_gen),
        by_vendor=_exp(ven_names, by_vendor),
        scenario_scale={
            k: float(np.exp(v)) for k, v in zip(scen_names, s, strict=True) if k != "Offline"
        },
        workload_scale=_exp(bench_names, np.where(w_has, w, np.nan)),
        rounds=tuple(sorted(set(rounds_), key=_round_key)),
        by_accelerator=by_acc,
        accelerator_rows=acc_rows,
        group_rows={
            k: int(c)
            for k, c in zip(grp_names, np.bincount(grp[level], minlength=ng), strict=True)
            if c > 0
        },
        vendor_scenario_scale={
            k: float(np.exp(v)) for k, v in zip(vs_names, d, strict=True) if k[1] != "Offline"
        },
        workload_scenario_scale={
            k: float(np.exp(v)) for k, v in zip(bs_names, ds, strict=True) if k[1] != "Offline"
        },
        drift_per_round={v: float(np.exp(x)) for v, x in drift.items()},
        drift_pairs=pairs,
        power_exponent=beta,
        power_pairs=power_pairs,
        power_ref=power_ref,
        vendor_workload_scale={
            k: float(np.exp(v))
            for k, v, free in zip(vw_names, dw, vw_free, strict=True)
            if k[1] != REFERENCE_BENCHMARK and free
        },
        precision_scale={
            k: float(np.exp(v)) for k, v in zip(pc_names, p, strict=True) if k != "native"
        },
        vendor_precision_scale={
            k: float(np.exp(v)) for k, v in zip(vp_names, dp, strict=True) if k[1] != "native"
        },
    )


def _default_implied(*, inputs: Inputs | None = None) -> pd.DataFrame:
    inp = resolve(inputs)
    return inp.derived("inference.implied", lambda: implied_efficiency(inputs=inp))


def row_compute_ratio(
    scales: ComputeScales, benches: Sequence[str], klasses: Sequence[str]
) -> np.ndarray:
    """The compute ratio of each row (:meth:`ComputeScales.ratio`).

    A benchmark without a scale of its own takes its MoE/dense family's median.
    """
    memo: dict[tuple[str, str], float] = {}
    out = np.empty(len(benches))
    for i, key in enumerate(zip(benches, klasses, strict=True)):
        if key not in memo:
            memo[key] = scales.ratio(key[0], key[1], _family(key[0]))
        out[i] = memo[key]
    return out


def _family(benchmark: str) -> list[str]:
    """The benchmarks of ``benchmark``'s family (MoE or dense; itself if unknown)."""
    if benchmark not in BENCHMARKS:
        return [benchmark]
    return [b for b in BENCHMARKS if BENCHMARKS[b].moe == BENCHMARKS[benchmark].moe]


def _row_keys(rows: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(benchmark, precision class) of each row: what its compute ratio is keyed by."""
    klass = rows["precision_class"] if "precision_class" in rows else ["native"] * len(rows)
    return [benchmark_def(b).benchmark for b in rows["benchmark"]], [str(k) for k in klass]


def _ratio_solver(
    rows: pd.DataFrame,
    specs: pd.DataFrame | None,
    models: pd.DataFrame | None,
    inputs: Inputs | None,
) -> Callable[[ComputeScales], np.ndarray]:
    """Each of ``rows``' implied efficiency at the compute ratios of a set of scales.

    ``rows``: :func:`implied_efficiency` rows with an efficiency at ratio 1 (returned as
    they are where every ratio is 1).
    """
    specs, models = _specs(specs, inputs=inputs), _models(models, inputs=inputs)
    terms = _terms_for_rows(rows, specs, models, inputs=inputs)
    measured = rows["measured"].to_numpy(dtype=float)
    at_one = rows["eta"].to_numpy(dtype=float)
    keys = _row_keys(rows)

    def solve(scales: ComputeScales) -> np.ndarray:
        kappa = row_compute_ratio(scales, *keys)
        if np.all(kappa == 1.0):
            return np.asarray(at_one, dtype=float)  # what implied_efficiency solved
        eta: np.ndarray = _solve_rows(with_compute_ratio(terms, kappa), measured)[0]
        return eta

    return solve


def fit_calibration(
    rows: pd.DataFrame,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> Calibration:
    """The model's calibration: :func:`fit_efficiency` with the compute ratio.

    The workload and precision scales move onto FLOPs
    (:func:`analysis.inference.compute_ratio.fit_with_compute_ratio`): the rows
    :func:`implied_efficiency` solved (those with an efficiency at ratio 1) are re-solved at
    each round's ratio and refitted. ``Calibration.compute`` holds the ratio's scales; the
    pooled workload and precision scales are what is left (within 1 %).
    """
    ok = rows[rows["eta"].notna()].reset_index(drop=True)
    solve = _ratio_solver(ok, specs, models, inputs)

    def fit(eta: np.ndarray) -> Calibration:
        return fit_efficiency(ok.assign(eta=eta), specs=specs, inputs=inputs)

    cal, scales = fit_with_compute_ratio(solve, fit, Calibration.leftover)
    return replace(cal, compute=scales)


def rows_at_compute_ratio(
    rows: pd.DataFrame,
    calibration: Calibration,
    specs: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
    *,
    inputs: Inputs | None = None,
) -> pd.DataFrame:
    """:func:`implied_efficiency` rows with ``eta`` re-solved at ``calibration``'s ratio.

    The efficiency of each run's bytes, the quantity the calibration's factors describe.
    Rows without an efficiency at ratio 1 keep NaN, and a row can also have none in the
    bracket at its ratio (NaN, as :func:`fit_calibration` reads it).
    """
    out = rows.copy()
    ok = np.flatnonzero(rows["eta"].notna().to_numpy())
    if len(ok):
        solve = _ratio_solver(rows.iloc[ok], specs, models, inputs)
        out.loc[out.index[ok], "eta"] = solve(calibration.compute)
    return out


def default_calibration(*, inputs: Inputs | None = None) -> Calibration:
    """The calibration from the MLPerf rows of ``inputs`` (computed once per inputs)."""
    inp = resolve(inputs)
    return inp.derived(
        "inference.calibration",
        lambda: fit_calibration(_default_implied(inputs=inp), inputs=inp),
        persist=True,
    )


def _calibration(calibration: Calibration | None, *, inputs: Inputs | None = None) -> Calibration:
    return calibration if calibration is not None else default_calibration(inputs=inputs)
