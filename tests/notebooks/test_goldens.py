"""nbval regression checks: each chapter's current source against its golden outputs.

The golden outputs (``make goldens``: params/ci.yaml) are grafted onto the current source
with the same injected parameters, and ``pytest --nbval`` re-executes that copy in a temp
folder. The fixture-chapter tests show the check fails when a library result changes or a
chapter's source is edited, and passes on an unchanged chapter. Determinism: these tests
compare a fresh execution with an earlier one; for 5 runs in a row see README
(``for i in 1 2 3 4 5; do make nbval || break; done``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from analysis import paths
from analysis.devtools import goldens
from analysis.execute import discover_chapters

FIXTURES = paths.TESTS / "e2e" / "fixtures" / "chapters"
CHAPTERS = [c.path for c in discover_chapters(paths.NOTEBOOKS)]


def _nbval(golden: Path, source: Path, tmp: Path, env: dict[str, str] | None = None):
    grafted = goldens.graft(golden, source)
    target = tmp / source.name
    nbformat.write(grafted, target)
    return goldens.run_nbval([target], tmp, env=env)


def test_every_chapter_has_a_golden() -> None:
    missing = [p.name for p in CHAPTERS if not (paths.GOLDENS / p.name).is_file()]
    assert missing == [], f"no golden for {missing}: run `make goldens` and commit them"


@pytest.mark.slow
@pytest.mark.parametrize(
    "chapter",
    [pytest.param(p, id=p.stem) for p in CHAPTERS if (paths.GOLDENS / p.name).is_file()]
    or [pytest.param(None, marks=pytest.mark.skip(reason="no goldens yet"))],
)
def test_chapter_matches_golden(chapter: Path, tmp_path: Path) -> None:
    proc = _nbval(paths.GOLDENS / chapter.name, chapter, tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:]


# --- the check itself, on the fixture chapters -----------------------------------------


@pytest.fixture(scope="module")
def fixture_goldens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("goldens")
    goldens.make_goldens(notebooks_dir=FIXTURES, goldens_dir=out)
    return out


def test_graft_rejects_a_changed_number_of_code_cells(tmp_path: Path) -> None:
    src = FIXTURES / "20-fixture-tiers.ipynb"
    nb = nbformat.read(src, as_version=4)
    gold = nbformat.v4.new_notebook(cells=[c for c in nb.cells if c.cell_type == "code"][:-1])
    nbformat.write(gold, tmp_path / "g.ipynb")
    with pytest.raises(goldens.GraftError, match="code cells"):
        goldens.graft(tmp_path / "g.ipynb", src)


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_goldens_are_clean(fixture_goldens: Path) -> None:
    for p in sorted(fixture_goldens.glob("*.ipynb")):
        nb = nbformat.read(p, as_version=4)
        assert set(nb.metadata["papermill"]) == {"parameters"}
        assert nb.metadata["papermill"]["parameters"]["scenario"]["name"] == "ci"
        assert all("papermill" not in c.metadata for c in nb.cells)
    summary = nbformat.read(fixture_goldens / "00-fixture-summary.ipynb", as_version=4)
    assert summary.metadata["papermill"]["parameters"]["chapter_results"]  # others' results


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_unchanged_chapters_pass(fixture_goldens: Path, tmp_path: Path) -> None:
    for name in ("10-fixture-candidates.ipynb", "00-fixture-summary.ipynb"):
        proc = _nbval(fixture_goldens / name, FIXTURES / name, tmp_path)
        assert proc.returncode == 0, proc.stdout[-4000:]


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_fails_when_a_library_result_changes(fixture_goldens: Path, tmp_path: Path) -> None:
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(
        "import analysis.results as r\n"
        "_orig = r.round_sig\n"
        "r.round_sig = lambda x, digits=4: _orig(x * 1.1, digits)\n",
        encoding="utf-8",
    )
    run = tmp_path / "run"
    run.mkdir()
    name = "10-fixture-candidates.ipynb"
    proc = _nbval(fixture_goldens / name, FIXTURES / name, run, env={"PYTHONPATH": str(patch)})
    assert proc.returncode != 0
    assert "failed" in proc.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_fails_when_the_source_is_edited(fixture_goldens: Path, tmp_path: Path) -> None:
    name = "20-fixture-tiers.ipynb"
    edited = tmp_path / "src" / name
    edited.parent.mkdir()
    shutil.copy2(FIXTURES / name, edited)
    nb = nbformat.read(edited, as_version=4)
    cell = next(c for c in nb.cells if "tiers.round(1)" in c.source)
    cell.source = cell.source.replace(
        "tiers.round(1)", "tiers.assign(tpot_ms_max=tiers.tpot_ms_max * 2).round(1)"
    )
    nbformat.write(nb, edited)
    run = tmp_path / "run"
    run.mkdir()
    proc = _nbval(fixture_goldens / name, edited, run)
    assert proc.returncode != 0
    assert "failed" in proc.stdout


# --- goldens guard what a chart shows, not how a release serializes it ----------------


def test_goldens_store_no_images_or_raw_chart_specs() -> None:
    for p in sorted(paths.GOLDENS.glob("*.ipynb")):
        text = p.read_text(encoding="utf-8")
        assert "base64" not in text, f"{p.name}: an image is stored (make goldens strips them)"
        assert goldens.VEGALITE_MIME not in text, f"{p.name}: a raw Vega-Lite spec is stored"
    summaries = [
        p.name
        for p in paths.GOLDENS.glob("*.ipynb")
        if goldens.CHART_SUMMARY_MIME in p.read_text(encoding="utf-8")
    ]
    assert summaries, "no chart summary in any golden: charts would go unguarded"


RESERIALIZE = """
import analysis.charts as c
_orig = c.render_bundle
def _reserialized(spec):
    # what a new altair/pandas release does: other dataset names, key order, defaults
    spec = dict(reversed(list(spec.items())))
    spec["$schema"] = "https://vega.github.io/schema/vega-lite/v9.9.9.json"
    spec["config"] = {**spec.get("config", {}), "autosize": {"type": "fit"}}
    names = {n: "data-" + n[::-1] for n in spec.get("datasets", {})}
    spec["datasets"] = {names[n]: rows for n, rows in spec.get("datasets", {}).items()}
    def rename(node):
        if isinstance(node, dict):
            return {k: ({"name": names[v["name"]]} if k == "data" and isinstance(v, dict)
                        and v.get("name") in names else rename(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node
    return _orig(rename(spec))
c.render_bundle = _reserialized
"""


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_passes_when_only_the_chart_serialization_changes(
    fixture_goldens: Path, tmp_path: Path
) -> None:
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(RESERIALIZE, encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    name = "20-fixture-tiers.ipynb"
    proc = _nbval(fixture_goldens / name, FIXTURES / name, run, env={"PYTHONPATH": str(patch)})
    assert proc.returncode == 0, proc.stdout[-4000:]


@pytest.mark.slow
@pytest.mark.xdist_group("nbval-fixtures")
def test_fails_when_a_charts_data_changes(fixture_goldens: Path, tmp_path: Path) -> None:
    name = "20-fixture-tiers.ipynb"
    edited = tmp_path / "src" / name
    edited.parent.mkdir()
    shutil.copy2(FIXTURES / name, edited)
    nb = nbformat.read(edited, as_version=4)
    cell = next(c for c in nb.cells if "mark_bar" in c.source)
    # 1 % on the charted values only: the table above stays as it was.
    cell.source = cell.source.replace(
        "alt.Chart(\n    tiers,",
        "alt.Chart(\n    tiers.assign(tpot_ms_max=tiers.tpot_ms_max * 1.01),",
    )
    assert "1.01" in cell.source
    nbformat.write(nb, edited)
    run = tmp_path / "run"
    run.mkdir()
    proc = _nbval(fixture_goldens / name, edited, run)
    assert proc.returncode != 0
    assert goldens.CHART_SUMMARY_MIME in proc.stdout
