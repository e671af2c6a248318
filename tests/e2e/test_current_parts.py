"""The current-generation candidate sets run end to end, bought and rented in every pool.

A real papermill execution of the chapters that price candidates (15 claims, 30 inference
tiers, 40 TCO) on the CI scenario with the candidates overridden: buy mode, and rent mode
in every pool holding quotes of both vendors plus the default pool (where the AMD part
has no quote: the "no quote in this pool" path). A cell error fails the test.
"""

from __future__ import annotations

from pathlib import Path

import papermill as pm
import pytest

from analysis import data, derived_store, ids, params, paths, report, tco

pytestmark = pytest.mark.slow

SETS = {
    "b300-gb300-mi355x": ("B300", "GB300", "MI355X"),
    "b300-gb300-mi355x-mi350x": ("B300", "GB300", "MI355X", "MI350X"),
}
CHAPTERS = ("15-claims", "30-inference-tiers", "40-tco")


def _pools(cands: tuple[str, ...]) -> list[str]:
    q = data.load_table("rental_quotes")
    q = q[q["accelerator"].isin(cands)].assign(pool=lambda d: d["provider_class"] + "/" + d["term"])
    both = [
        p
        for p, g in q.groupby("pool")
        if {"AMD", "NVIDIA"} <= set(g["accelerator"].map(ids.vendor_of))
    ]
    return sorted(set(both) | {params.Cost().rental_pool})


def _cases() -> list:
    out = []
    for name, cands in SETS.items():
        out.append(pytest.param(cands, "buy", None, id=f"{name}-buy"))
        for pool in _pools(cands):
            out.append(pytest.param(cands, "rent", pool, id=f"{name}-rent-{pool}"))
    return out


@pytest.mark.parametrize(("cands", "mode", "pool"), _cases())
def test_chapters_run_for_current_parts(cands, mode, pool, tmp_path: Path, monkeypatch) -> None:
    # the kernels share the validations as a report run's do (analysis.derived_store)
    monkeypatch.setenv(derived_store.ENV, str(paths.BUILD / report.DERIVED_STORE))
    raw = params.scenario_to_parameters(params.load_scenario(paths.CI_PARAMS))["scenario"]
    raw["candidates"] = list(cands)
    raw["cost"]["mode"] = mode
    if pool:
        raw["cost"]["rental_pool"] = pool
    sc = params.parse_scenario(raw)
    for ch in CHAPTERS:
        pm.execute_notebook(
            str(paths.NOTEBOOKS / f"{ch}.ipynb"),
            str(tmp_path / f"{ch}.ipynb"),
            parameters={"scenario": raw},
            progress_bar=False,
            cwd=str(tmp_path),
            kernel_name="python3",
        )
    inp = tco.cost_inputs(sc)
    gaps = tco.mode_gaps(sc, inp)
    if mode == "rent":
        # A part without a quote in the pool is named as such, never priced by default;
        # a part with quotes is priced from that pool only.
        for acc in cands:
            has = inp.quotes[acc].size > 0
            assert any(f"candidate {acc}:" in g and tco.NO_QUOTE in g for g in gaps) != has, (
                acc,
                pool,
            )
        # The pools chosen above price both vendors (the default pool is kept even when
        # it lacks GB300, to exercise the "no quote in this pool" path).
        priced = {ids.vendor_of(a) for a in cands if inp.quotes[a].size}
        assert priced == {"AMD", "NVIDIA"}, (pool, priced)
    else:
        assert not gaps, gaps
