"""Issue 16: every InferenceX validation printout names the model it scores.

The tiers use the roofline-shape serving model; the sweep model is validated but not used.
Both errors must appear, each under its own label, and ``validate`` must stay the error of
the model the tiers use.
"""

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from analysis import data, decision, inference_latency, keys
from analysis.devtools.validation import print_inferencex_validation
from analysis.inference import frontier_validation as fv

SERVING = "report's serving model"
SWEEP = "sweep model (validated candidate, not yet used by the tiers)"


@pytest.fixture(scope="module")
def runs():
    ix = data.load_table("inferencex")
    return {
        "serving": inference_latency.validate_serving_model(ix),
        "sweep": inference_latency.validate_sweep_model(ix),
    }


@pytest.fixture(scope="module")
def comparison(runs):
    return inference_latency.compare_models(runs["serving"], runs["sweep"])


def test_labels_name_which_model_the_tiers_use():
    assert inference_latency.MODEL_LABELS == {"serving": SERVING, "sweep": SWEEP}


def test_validate_is_the_serving_model(runs):
    again = inference_latency.validate(data.load_table("inferencex"))
    np.testing.assert_allclose(
        again["predicted"], runs["serving"]["predicted"], rtol=1e-12, equal_nan=True
    )
    # The two models are different models: their held-out predictions differ.
    assert not np.allclose(
        runs["serving"]["predicted"].to_numpy(),
        runs["sweep"]["predicted"].to_numpy(),
        equal_nan=True,
    )


def test_comparison_holds_each_models_own_summary(runs, comparison):
    assert set(comparison["label"]) == {SERVING, SWEEP}
    for model, df in runs.items():
        mine = comparison[comparison["model"] == model].set_index("vendor")
        assert (mine["label"] == inference_latency.MODEL_LABELS[model]).all()
        expected = inference_latency.summary(df).set_index("vendor")["median_ape_pct"]
        np.testing.assert_allclose(mine.loc[expected.index, "median_ape_pct"], expected)
        ratio = inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(df))
        for acc, err in zip(ratio["accelerator"], ratio["ratio_err_pct"], strict=True):
            assert mine.at["overall", f"ratio_err_{acc}_pct"] == pytest.approx(err)
            assert np.isnan(mine.at["AMD", f"ratio_err_{acc}_pct"])


def test_comparison_holds_the_amd_nvidia_ratio_of_each_models_frontiers(runs, comparison):
    # What a tier decides on, scored on the same held-out predictions: per cell and bound
    # the best measured and the best predicted point, AMD and NVIDIA cells paired.
    for model, df in runs.items():
        mine = comparison[comparison["model"] == model].set_index("vendor")
        want = fv.summary(fv.held_out_frontiers(df)).set_index("vendor").loc["overall"]
        assert want["ratio_pairs"] > 50  # fp8 and fp4, three lengths, several bounds
        assert mine.at["overall", "amd_nvidia_pairs"] == want["ratio_pairs"]
        assert mine.at["overall", "amd_nvidia_ratio_err_pct"] == pytest.approx(
            want["ratio_median_err_pct"]
        )
        assert np.isnan(mine.at["AMD", "amd_nvidia_ratio_err_pct"])
    got = inference_latency.key_results(comparison)
    s = comparison.set_index(["model", "vendor"])["amd_nvidia_ratio_err_pct"]
    for model in ("serving", "sweep"):
        assert got[f"inferencex_ratio_err_{model}"] == pytest.approx(
            s[(model, "overall")], abs=0.05
        )
    note = inference_latency.comparison_note(comparison)
    assert f"off by a median {s[('serving', 'overall')]:.1f}%" in note


def test_held_out_frontiers_set_the_best_measured_point_against_its_prediction():
    # AMD's 18 ms point has no prediction (the model's step at one sequence misses 18 ms).
    # At 20 ms it is the cell's best: the measured frontier keeps it (300, the cell's own),
    # and with nothing to set against it the bound is unpredicted. At 40 ms the 30 ms
    # point is best and predicted: measured 400 against the best prediction, 300.
    base = {"model": "m", "precision": "fp8", "isl": 1024, "osl": 1024, "date": "2026-05-01"}
    amd = {**base, "accelerator": "A", "vendor": "AMD"}
    nv = {**base, "accelerator": "N", "vendor": "NVIDIA"}
    df = pd.DataFrame(
        [
            {**amd, "median_tpot_ms": 10.0, "measured": 100.0, "predicted": 120.0},
            {**amd, "median_tpot_ms": 18.0, "measured": 300.0, "predicted": np.nan},
            {**amd, "median_tpot_ms": 30.0, "measured": 400.0, "predicted": 300.0},
            {**amd, "median_tpot_ms": 45.0, "measured": 450.0, "predicted": 500.0},
            {**nv, "median_tpot_ms": 12.0, "measured": 200.0, "predicted": 200.0},
            {**nv, "median_tpot_ms": 25.0, "measured": 500.0, "predicted": 450.0},
            {**nv, "median_tpot_ms": 45.0, "measured": 800.0, "predicted": 800.0},
        ]
    )
    front = fv.held_out_frontiers(df, (20.0, 40.0)).set_index(["accelerator", "tpot_ms"])
    assert front.at[("A", 20.0), "measured"] == 300.0
    assert np.isnan(front.at[("A", 20.0), "predicted"])
    assert front.at[("A", 40.0), "measured"] == 400.0
    assert front.at[("A", 40.0), "predicted"] == 300.0
    s = fv.summary(front.reset_index()).set_index("vendor")
    assert s.at["AMD", "unpredicted"] == 1
    # Only the 40 ms bound pairs: measured 400 / 500 = 0.8, predicted 300 / 450 = 2/3.
    pairs = fv.ratio_pairs(front.reset_index())
    assert pairs["tpot_ms"].tolist() == [40.0]
    assert pairs["ratio_err_pct"].tolist() == pytest.approx([100.0 * (1 - (2 / 3) / 0.8)])


def test_key_results_and_note_say_which_is_which(comparison):
    got = inference_latency.key_results(comparison)
    assert got["inferencex_model_serving"] == SERVING
    assert got["inferencex_model_sweep"] == SWEEP
    s = comparison.set_index(["model", "vendor"])["median_ape_pct"]
    for model in ("serving", "sweep"):
        for v in ("AMD", "NVIDIA", "overall"):
            assert got[f"inferencex_mape_{model}_{v}"] == pytest.approx(s[(model, v)], abs=0.05)
    # Every key is in the chapter's schema (the run checks them as the chapter finishes).
    ctx = keys.KeyContext(tiers=1, accelerators=())
    bad = [p for p in keys.problems("30-inference-tiers", got, ctx) if "'inferencex_" in p]
    assert not bad, bad
    note = inference_latency.comparison_note(comparison)
    serving = f"{SERVING} is {s[('serving', 'overall')]:.1f}%"
    sweep = f"{SWEEP} scores {s[('sweep', 'overall')]:.1f}%"
    assert serving in note and sweep in note
    assert note.index(serving) < note.index(sweep)


def test_validate_models_prints_both_errors_labelled(runs, comparison):
    console = Console(record=True, width=400)
    print_inferencex_validation(console, runs)
    text = console.export_text()
    for model, label in inference_latency.MODEL_LABELS.items():
        overall = comparison.set_index(["model", "vendor"]).at[(model, "overall"), "median_ape_pct"]
        title = f"InferenceX DeepSeek-R1 sweeps, {label}:"
        assert title in text
        block = text[text.index(title) :].split("\n")[:8]
        assert any("overall" in line and f"{overall:.1f}" in line for line in block), block
        # The frontier ratio, overall and per pair of parts.
        ratio = comparison.set_index(["model", "vendor"]).at[
            (model, "overall"), "amd_nvidia_ratio_err_pct"
        ]
        title = f"Same folds, {label}: error of the held-out frontiers"
        assert title in text
        block = text[text.index(title) :].split("\n")[:10]
        assert any("overall" in line and f"{ratio:.1f}" in line for line in block), block
        # (rich wraps a title to its table's width)
        flat = " ".join(text.split())
        assert f"Same frontiers, {label}: AMD/NVIDIA ratio per pair of parts" in flat


def test_appendix_model_error_lists_both_labelled():
    inf = {
        "inferencex_mape_serving_overall": 55.9,
        "inferencex_mape_sweep_overall": 32.7,
        "inferencex_ratio_err_serving": 31.3,
    }
    err = decision.model_error({"30-inference-tiers": inf})
    serving = [k for k in err if "inferencex_mape" in k and SERVING in k]
    sweep = [k for k in err if "inferencex" in k and "sweep model" in k and "not yet used" in k]
    ratio = [k for k in err if "amd_nvidia_ratio" in k and SERVING in k]
    assert len(serving) == 1 and len(sweep) == 1 and len(ratio) == 1
    assert err[serving[0]] == 55.9 and err[sweep[0]] == 32.7 and err[ratio[0]] == 31.3


@pytest.mark.xfail(
    strict=True,
    reason="issue 16 bars on the serving model's shape, the one the tiers use, at an efficiency "
    "fitted on the sweeps (the tiers' own MLPerf-calibrated path is scored by "
    "frontier_validation: 38.7 %) (InferenceX held-out median APE <= 20 %, "
    "FP8/FP4 ratio within 15 % on B200 and MI355X) not met by the report's serving model: "
    "32.2 % (AMD 37.8, NVIDIA 27.7; 30.7 % before the checkpoints' BF16-kept weights, "
    "31.9 % before each point was modelled at its engine "
    "layout, expert parallelism and attention layout; 36.7 % before the prompt tokens' FLOPs "
    "carried the prefill cost fitted across prompt lengths, 54.4 % while the roofline spread "
    "every prompt's tokens over the decode steps). The FP8/FP4 ratio meets the bar on B200 "
    "(8 %; 32 % while every FP4 weight was charged 0.56 bytes, the attention projections "
    "NVIDIA's checkpoint keeps in BF16 too) but not on MI355X (21 %; 29 % before; fp8 "
    "against the same run date's fp4 sweeps, each fp4 prediction from the fold that held "
    "its cell out; ratio_baselines: each configuration's own median ratio, taken "
    "in-sample, misses by 30 %, and the same configuration's other run dates by a median "
    "7 % but an upper quartile of 52 %: the ratio repeats between neighbouring days, not "
    "between months). The held-out cell's efficiency comes from the "
    "other accelerator x precision cells, and single run dates scatter: FP8/FP4 at matched "
    "interactivity, interquartile, measured 0.32-0.63 on MI355X SGLang (modelled 0.43-0.59, "
    "medians 0.42 and 0.52), 0.63-0.73 on B200 SGLang (0.68-0.81), 0.13 on B200 TRT-LLM "
    "(0.31). The sweep model (30.0 %, NVIDIA 26.6) adds prefill passes as their own passes "
    "and kappa; AMD's date-to-date repeatability (a reference, not a bound) is 16.9 %. "
    "Fitted on every point and scored on the same points (fit_serving_model) this fit is "
    "at 27.3 % (AMD 36.2, NVIDIA 23.0), FP8/FP4 ratio error MI355X 24.2 %, B200 21.0 %: it "
    "misses the bar on the points it was fitted on, and a level per engine configuration "
    "from its other points (error_budget of that fit) still leaves 20.1 %. The AMD/NVIDIA "
    "ratio of the held-out frontiers, what a tier decides on (no bar of its own in the "
    "issue), is off by a median 30.7 % over 79 pairs (in-sample 27.6 %; CDNA 3 pairs "
    "25-139 %, MI355X pairs 17-39 %). What the measurements themselves carry to a held-out "
    "cell (transfer_reference: another part's or format's measured sweep of the same engine "
    "configuration within 7 days, times the held-out fold's ratio of the two parts) is "
    "21.3-25.0 % (AMD 16.2-19.1, NVIDIA 25.4-27.7), and the best of those rows per cell "
    "chosen with hindsight 19.7 %: a vendor's nearest measured configuration beats the "
    "model by 11 points, yet no predictor found without hindsight reaches the bar (the "
    "transfer's correction blended with the model: 22.3-30.4 %). MI355X's FP8/FP4 error is "
    "point-to-point scatter, not the precision prior: the modelled median ratio is within "
    "3 % of the measured one, and the prior set to MI355X's own measured effect gives 38.9 %",
)
def test_the_serving_model_meets_the_issue_16_inferencex_bars(comparison):
    s = comparison[comparison["model"] == "serving"].set_index("vendor")
    assert s.at["overall", "median_ape_pct"] <= 20.0, s
    assert s.at["overall", "ratio_err_B200_pct"] <= 15.0, s
    assert s.at["overall", "ratio_err_MI355X_pct"] <= 15.0, s


@pytest.fixture(scope="module")
def fitted():
    return inference_latency.fit_serving_model(data.load_table("inferencex"))


def test_in_sample_fit_predicts_every_fp4_twin(runs, fitted):
    # The fp8 points' fp4 twins come from the fit of every cell: as many as the folds
    # predict, and the FP8/FP4 ratio is scored on both accelerators.
    held = runs["serving"]
    assert fitted["predicted_fp4"].notna().sum() == held["predicted_fp4"].notna().sum() > 20
    ratios = inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(fitted))
    assert set(ratios["accelerator"]) == set(inference_latency.RATIO_ACCELERATORS)
    assert (ratios["points"] > 10).all()


def test_in_sample_fit_scores_the_held_out_points_with_every_cell_fitted(runs, fitted):
    held = runs["serving"]
    assert list(fitted.columns) == list(held.columns)
    np.testing.assert_array_equal(fitted["run_url"], held["run_url"])
    assert (fitted["holdout"] == inference_latency.IN_SAMPLE).all()
    # Fitted on every point, the model is nearer its own points than the folds are.
    s_fit = inference_latency.summary(fitted).set_index("vendor")["median_ape_pct"]
    s_held = inference_latency.summary(held).set_index("vendor")["median_ape_pct"]
    assert s_fit["overall"] < s_held["overall"]
    # The note quotes both and the budget's last row.
    budget = inference_latency.error_budget(fitted)
    assert budget["level"].iloc[0] == "as fitted on every point (no level given)"
    assert budget["overall_median_ape_pct"].iloc[0] == pytest.approx(s_fit["overall"])
    note = inference_latency.in_sample_note(fitted, held)
    for value in (s_fit["overall"], s_held["overall"], budget["overall_median_ape_pct"].iloc[-1]):
        assert f"{value:.1f}%" in note


def test_in_sample_fit_reads_the_cell_it_scores(fitted):
    # Unlike a held-out fold (test_inference_sweep: its cell's latencies do not move its
    # predictions), the in-sample fit's level moves with the cell's own measurements.
    ix = data.load_table("inferencex")
    cell = (ix["accelerator"] == "MI355X") & (ix["precision"] == "fp4")
    moved = ix.copy()
    moved.loc[cell, "output_tput_per_gpu"] = moved.loc[cell, "output_tput_per_gpu"] * 0.7
    again = inference_latency.fit_serving_model(moved)
    sel = ((fitted["accelerator"] == "MI355X") & (fitted["precision"] == "fp4")).to_numpy()
    assert (again.loc[sel, "eta"].to_numpy() < fitted.loc[sel, "eta"].to_numpy()).all()


def test_validate_models_prints_the_in_sample_fit(runs, fitted):
    console = Console(record=True, width=400)
    print_inferencex_validation(console, runs, fitted)
    text = console.export_text()
    title = f"InferenceX, {SERVING} fitted on every point"
    assert title in text
    overall = inference_latency.summary(fitted).set_index("vendor").at["overall", "median_ape_pct"]
    block = text[text.index(title) :].split("\n")[:8]
    assert any("overall" in line and f"{overall:.1f}" in line for line in block), block
    # Its frontiers' AMD/NVIDIA ratio, as the held-out one is printed.
    fronts = fv.summary(fv.held_out_frontiers(fitted)).set_index("vendor")
    ratio = fronts.at["overall", "ratio_median_err_pct"]
    title = "Same fit: error of its frontiers"
    block = text[text.index(title) :].split("\n")[:10]
    assert any("overall" in line and f"{ratio:.1f}" in line for line in block), block
    assert "Same fit: AMD/NVIDIA ratio of its frontiers per pair of parts" in " ".join(text.split())


def test_validate_models_prints_the_transfer_reference(runs):
    console = Console(record=True, width=400)
    print_inferencex_validation(console, runs, runs["serving"])
    flat = " ".join(console.export_text().split())
    title = f"Same folds, {SERVING}: transfer reference"
    cells_title = "Same transfers per held-out cell"
    assert title in flat and cells_title in flat
    block = flat[flat.index(title) : flat.index(cells_title)]
    cross = inference_latency.cross_fold_predictions()
    ref = inference_latency.transfer_reference(runs["serving"], cross)
    # Its first row is the held-out model's own error; each transfer row lends some points.
    overall = inference_latency.summary(runs["serving"]).set_index("vendor")
    assert ref["overall_median_ape_pct"].iloc[0] == pytest.approx(
        overall.at["overall", "median_ape_pct"]
    )
    assert ref["anchored"].iloc[1:-1].gt(0).all()
    # ... and its frontier columns, as held out, are the frontier summary's.
    fronts = fv.summary(fv.held_out_frontiers(runs["serving"])).set_index("vendor")
    assert ref["frontier_ratio_err_pct"].iloc[0] == pytest.approx(
        fronts.at["overall", "ratio_median_err_pct"]
    )
    for value in ref["overall_median_ape_pct"]:
        assert f" {value:.1f} " in block
    # Per cell: the model's column is each cell's held-out median APE.
    cells = inference_latency.transfer_tables(runs["serving"], cross)[1].set_index("cell")
    held = runs["serving"]
    held = held[np.isfinite(held["predicted"])]
    per_cell = held.groupby(held["accelerator"] + " x " + held["precision"])["ape_pct"].median()
    np.testing.assert_allclose(
        cells["the model alone (as held out)"], per_cell.reindex(cells.index), rtol=1e-12
    )
    # ... and the hindsight column is each cell's lowest.
    predictors = [c for c in cells.columns if c not in ("points", cells.columns[-1])]
    np.testing.assert_array_equal(cells[cells.columns[-1]], cells[predictors].min(axis=1))
    assert cells.columns[-1] == "best row per cell, chosen with hindsight"
