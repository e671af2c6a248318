"""Every bundled scenario renders (HTML + PDF), and its summary repeats the chapters' numbers.

Each scenario is rendered once (one test per scenario, each in its own xdist group so that
``pytest -n 2 --dist loadgroup`` spreads the renders over both workers) and checked three
ways: the files are there and readable, ``results.json``'s ``00-summary`` keys equal the
source chapters' keys, and the HTML summary section shows those same numbers.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from analysis import data, decision, params, paths, report

SCENARIOS = [paths.PARAMS / "default.yaml", *sorted((paths.PARAMS / "scenarios").glob("*.yaml"))]

pytestmark = pytest.mark.slow


def _param(p: Path):
    name = params.load_scenario(p).name
    return pytest.param(p, id=name, marks=pytest.mark.xdist_group(f"scenario-{name}"))


@pytest.mark.parametrize("params_file", [_param(p) for p in SCENARIOS])
def test_scenario_renders_and_its_summary_matches_the_chapters(
    params_file: Path, tmp_path: Path
) -> None:
    """One render per scenario (each in its own xdist group), several checks on it."""
    r = report.run_report(
        params_file,
        out_dir=tmp_path / "reports",
        formats=("html", "pdf"),
        jobs=2,
        notebooks_dir=paths.NOTEBOOKS,
        build_root=tmp_path / "_build",
        progress=False,
    )
    rendered = (
        params.load_scenario(params_file),
        r,
        json.loads((r.version_dir / "results.json").read_text()),
    )
    check_files(rendered)
    check_summary_keys_equal_the_chapters(rendered)
    check_html_summary_shows_the_same_numbers(rendered)
    check_measurements_section(rendered)
    check_plan_comparison(rendered)
    check_default_pdf_length(rendered)


# Issue 18's bar: the default report reads as a memo of about 25 pages. It holds for the
# Quarto PDF, the one users get (the fallback's Chromium print runs longer, about 30).
DEFAULT_PDF_MAX_PAGES = 26


def check_default_pdf_length(scenario_report) -> None:
    from pypdf import PdfReader

    sc, r, _ = scenario_report
    if sc.name != "default" or r.renderer["name"] != "quarto":
        return
    pages = len(PdfReader(r.version_dir / "report.pdf").pages)
    assert pages <= DEFAULT_PDF_MAX_PAGES, f"default PDF has {pages} pages"


def _text(fragment: str) -> str:
    """HTML fragment -> plain text with single spaces and no space before punctuation."""
    txt = html.unescape(re.sub(r"<[^>]+>", " ", fragment))
    txt = re.sub(r"\s+", " ", txt)
    return re.sub(r" ([.,;:)])", r"\1", txt)


def _summary_text(version_dir: Path, chapters: list[str]) -> str:
    page = (version_dir / "index.html").read_text(encoding="utf-8")
    start = page.index('id="00-summary"')
    nxt = [page.find(f'id="{c}"', start + 1) for c in chapters if c != "00-summary"]
    end = min((i for i in nxt if i > start), default=len(page))
    return _text(page[start:end])


def check_files(scenario_report) -> None:
    from pypdf import PdfReader

    sc, r, res = scenario_report
    assert r.version_dir.name == r.version and r.latest.resolve() == r.version_dir.resolve()
    for name in ("index.html", "report.pdf", "results.json", "manifest.json"):
        assert (r.version_dir / name).stat().st_size > 0, name
    assert res["scenario"] == sc.name and set(res["chapters"]) == set(r.chapters)
    page = (r.version_dir / "index.html").read_text(encoding="utf-8")
    assert sc.title in html.unescape(page)
    reader = PdfReader(r.version_dir / "report.pdf")
    assert len(reader.pages) > 5
    assert "What changed since the previous version" in re.sub(
        r"\s+", " ", "".join(p.extract_text() for p in reader.pages)
    )


def _source_keys(i_or_training: str) -> tuple[str, str]:
    """(TCO key of P(AMD cheaper), summary key prefix) of one workload."""
    if i_or_training == "training":
        return "train_p_amd_cheaper", "rec_training"
    return f"{i_or_training}_p_amd_cheaper", f"rec_{i_or_training}"


def check_summary_keys_equal_the_chapters(scenario_report) -> None:
    sc, _, res = scenario_report
    ch = res["chapters"]
    summary, tco = ch["00-summary"], ch.get("40-tco", {})
    workloads = ["training"] + [f"tier{i}" for i in range(len(sc.inference.tiers))]
    assert {f"rec_{w}" for w in workloads} <= set(summary)
    for w in workloads:
        p_key, rec = _source_keys(w)
        assert summary[f"{rec}_p_amd_cheaper"] == tco.get(p_key), (w, p_key)
    # The calls and cost margins follow from the chapters' published figures.
    recs = decision.recommend(sc, ch).set_index("workload")
    for w in workloads:
        assert summary[f"rec_{w}"] == recs.at[w, "recommendation"], w
        want = recs.at[w, "cost_margin_pct"]
        got = summary[f"rec_{w}_cost_margin_pct"]
        if got is None or (isinstance(got, float) and math.isnan(got)):
            assert not math.isfinite(want), w
        else:  # results.json rounds the medians the margin is computed from
            assert got == pytest.approx(want, abs=0.25), w
        p = summary[f"rec_{w}_p_amd_cheaper"]
        if p is not None and math.isfinite(p):
            lo, hi = decision.P_EITHER
            expected = "either" if lo <= p <= hi else ("AMD" if p > hi else "NVIDIA")
            if recs.at[w, "basis"].startswith("P(AMD cheaper)"):
                assert summary[f"rec_{w}"] == expected, w


def check_html_summary_shows_the_same_numbers(scenario_report) -> None:
    sc, r, res = scenario_report
    ch = res["chapters"]
    summary = ch["00-summary"]
    text = _summary_text(r.version_dir, r.chapters)
    recs = decision.recommend(sc, ch).set_index("workload")
    models = data.load_table("models")
    names = dict(zip(models["model"], models["name"], strict=True))
    verb = "Rent" if sc.cost.mode == "rent" else "Buy"
    for w, row in recs.iterrows():
        # the memo's line for the workload, by its real bounds: "<Verb> <part> for <what>: ..."
        what = decision._workload_text(sc, w, names)
        assert f"for {what}:" in text, (w, what)
        seg = text[text.index(f"for {what}:") :]
        seg = seg[: seg.find("\n")] if "\n" in seg else seg[:700]
        call = summary[f"rec_{w}"]
        margin = summary[f"rec_{w}_cost_margin_pct"]
        p = summary[f"rec_{w}_p_amd_cheaper"]
        if call not in ("AMD", "NVIDIA") or margin is None or not math.isfinite(margin):
            continue
        best = row["amd_best"] if call == "AMD" else row["nvidia_best"]
        head = text[max(0, text.index(f"for {what}:") - 40) : text.index(f"for {what}:")]
        assert f"{verb} {best}" in head, (w, head)
        # one definition: cost margin = 1 - AMD/NVIDIA, as the summary's key result says
        if call == "AMD":
            assert f"about {margin:.0f}% cheaper" in seg, (w, seg)
            p_call = p
        else:
            assert f"costs about {-margin:.0f}% more" in seg, (w, seg)
            p_call = 1 - p
        assert f"{p_call:.0%} likely; flips if" in seg, (w, seg)
    assert "What changed since the previous version" in text
    assert "first published version" in text


def check_measurements_section(scenario_report) -> None:
    """ "Your measurements" appears exactly when the scenario lists measurements, and then the
    TCO chapter's P(AMD cheaper) is the calibrated one and the frontier shows the runs."""
    sc, r, res = scenario_report
    ch = res["chapters"]
    if not sc.measurements:
        assert "35-your-measurements" not in r.chapters
        return
    assert "35-your-measurements" in r.chapters
    mine = ch["35-your-measurements"]
    assert mine["measured_points"] > 0
    for i in range(len(sc.inference.tiers)):
        assert ch["40-tco"][f"tier{i}_p_amd_cheaper"] == mine[f"tier{i}_p_amd_cheaper_measured"]
    page = html.unescape((r.version_dir / "index.html").read_text(encoding="utf-8"))
    assert "Your measurements" in page and "measured (yours)" in page
    assert "model, corrected" in page or ">measured<" in page


def check_plan_comparison(scenario_report) -> None:
    """Issue 20: the memo compares all-AMD, all-NVIDIA and the split, and the TCO chapter
    itemizes what the split adds (second stack, lost fungibility)."""
    sc, r, res = scenario_report
    tco = res["chapters"]["40-tco"]
    assert tco["plan_cheapest"] in ("all-AMD", "all-NVIDIA", "split"), sc.name
    summary = _summary_text(r.version_dir, r.chapters)
    assert "Fleet plan (the training job plus a year of serving" in summary, sc.name
    for plan in ("all-AMD", "all-NVIDIA", "split"):
        assert plan in summary, (sc.name, plan)
    page = html.unescape((r.version_dir / "index.html").read_text(encoding="utf-8"))
    for item in ("second stack: engineering", "second stack: operations", "lost fungibility"):
        assert item in page, (sc.name, item)
