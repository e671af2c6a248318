"""Issue 16: the InferenceX sweep physics on hand-worked cases, and its held-out validation."""

import statistics

import numpy as np
import pandas as pd
import pytest

from analysis import data, inference, inference_latency
from analysis.inference import sweep_fit
from analysis.inference.decode_model import SweepShape, combine_scaled, sweep_parts
from analysis.inference.experts import ep_imbalance, expert_imbalance

HW = {
    "bw_tbps": 1.0,
    "peak_tflops": 1000.0,
    "attn_peak_tflops": 1000.0,
    "mem_gb": 1000.0,
    "link_gbps": 900.0,
}


def _mp(**kw):
    base = {
        "model": "m",
        "total_params_b": 10.0,
        "active_params_b": 10.0,
        "layers": 10,
        "hidden_size": 4096,
        "attention_heads": 32,
        "head_dim": 128,
        "kv_heads": 8,
    }
    base.update(kw)
    return inference.model_params(pd.Series(base))


def _parts(mp, **kw):
    args = {"precision": "fp8", "isl": 100.0, "osl": 100.0, "gpus": 1.0, "concurrency": 4.0}
    args.update(kw)
    return {k: float(np.asarray(v)) for k, v in sweep_parts(HW, mp, **args).items()}


def test_dense_decode_step_and_prefill_stall_by_hand():
    p = _parts(_mp())
    # 10e9 fp8 weights at 1 TB/s; 4 x 2 x 10e9 FLOPs at 1 PFLOP/s.
    assert p["lin_bw"] == pytest.approx(0.01)
    assert p["lin_c"] == pytest.approx(8e-5)
    # KV: 2 x 10 layers x 8 heads x 128 x 1 byte (fp8) = 20,480 B/token, context 100 + 50.
    assert p["attn_bw"] == pytest.approx(4 * 150 * 20480 / 1e12)
    assert p["attn_c"] == pytest.approx(4 * 10 * 150 * 4 * 32 * 128 / 1e15)
    # 4 / 100 prompts join per step; each prefill reads the weights once (not per token)
    # and runs 100 tokens of linear FLOPs plus 100^2 / 2 attention pairs per layer.
    assert p["joins"] == pytest.approx(0.04)
    assert p["pre_bw"] == pytest.approx(0.04 * (0.01 + 100 * 20480 / 1e12))
    assert p["pre_c"] == pytest.approx(
        0.04 * (2e9 * 100 / 1e15 * 10 + 4 * 32 * 128 * 10 * 5000 / 1e15)
    )
    # One GPU: the fixed step overhead only, paid by the decode step and each prefill pass.
    assert p["fixed"] == pytest.approx(1.04 * inference.STEP_OVERHEAD_S)
    assert p["moe_layers"] == 0.0


def test_moe_reads_the_distinct_experts_of_the_decode_batch_only():
    mp = _mp(total_params_b=100.0, experts=100, active_experts=4)
    # shared = (10 - 100 x 0.04) / 0.96 = 6.25B; routed 93.75B; 4 tokens touch 1 - 0.96^4.
    touched = 1.0 - 0.96**4
    p = _parts(mp)
    assert p["lin_bw"] == pytest.approx((6.25e9 + 93.75e9 * touched) / 1e12)
    # The prompt's 100 tokens touch 1 - 0.96^100 of the experts once per prefill pass.
    pre = (6.25e9 + 93.75e9 * (1.0 - 0.96**100) + 100 * 20480) / 1e12
    assert p["pre_bw"] == pytest.approx(0.04 * pre)
    assert p["moe_layers"] == 10.0


def test_expert_parallel_busiest_gpu_by_hand():
    # 100 experts on 4 GPUs: 25 each; the busiest reads mean + z_4 sd of the binomial.
    p = 1.0 - 0.96**4
    z4 = 1.0491  # Blom: Phi^-1((4 - 0.375) / 4.25)
    w, tok = expert_imbalance(100.0, 0.04, 4.0, 4.0)
    assert float(w) == pytest.approx((25 * p + z4 * np.sqrt(25 * p * (1 - p))) / (25 * p), rel=1e-3)
    act = 4 * 0.04 * 100 / 4
    assert float(tok) == pytest.approx((act + z4 * np.sqrt(act)) / act, rel=1e-3)
    # Tensor-parallel experts are balanced; saturation caps the busiest at its 25 experts.
    assert float(expert_imbalance(100.0, 0.04, 4.0, 1.0)[0]) == pytest.approx(1.0)
    assert float(expert_imbalance(100.0, 0.04, 1e4, 4.0)[0]) == pytest.approx(1.0)


def test_ep_imbalance_is_capped_and_treats_an_unrecorded_width_as_balanced():
    # 0.1 expected activations over 8 GPUs: the normal bound 1 + z / sqrt(0.1 / 8) (z = 1.42)
    # is 13.7x the mean; the busiest GPU takes at most all of them, 8x the mean.
    _, tok = ep_imbalance(256.0, 0.01, 0.1, 8.0)
    assert float(tok) == pytest.approx(8.0)
    # More ranks than experts: as wide as the experts (one each), not 64-way.
    assert ep_imbalance(4.0, 0.5, 1.0, 64.0)[1] == pytest.approx(
        ep_imbalance(4.0, 0.5, 1.0, 4.0)[1]
    )
    # NaN width: tensor-parallel experts, ones.
    w, tok = ep_imbalance(256.0, 0.1, 40.0, np.array([np.nan, 8.0]))
    assert w[0] == tok[0] == 1.0
    assert w[1] > 1.0 and tok[1] > 1.0


def test_mla_cache_is_replicated_across_tensor_parallel_ranks_without_dp_attention():
    mp = _mp(
        attention_type="mla",
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        kv_bytes_per_token_bf16=2 * 10 * 576,
    )
    tp = _parts(mp, gpus=8.0, dp_attention=0.0)
    dp = _parts(mp, gpus=8.0, dp_attention=1.0)
    assert tp["attn_bw"] == pytest.approx(4 * 150 * 10 * 576 / 1e12)
    assert dp["attn_bw"] == pytest.approx(tp["attn_bw"] / 8)
    # Absorbed MLA: 2 x heads x (2 x 512 + 64) FLOPs per pair and layer, split over 8 GPUs.
    assert tp["attn_c"] == pytest.approx(4 * 10 * 150 * 2 * 32 * 1088 / 8 / 1e15)


def test_shape_combines_overheads_and_prefill_efficiency():
    mp = _mp(total_params_b=100.0, experts=100, active_experts=4)
    parts = sweep_parts(HW, mp, precision="fp8", isl=100.0, osl=100.0, gpus=1.0, concurrency=4.0)
    shape = SweepShape(overhead_layer_s={"AMD": 1e-4}, prefill_eta={"AMD": 0.25})
    fixed, scaled = shape.combine(parts, "AMD", "native")
    p = {k: float(np.asarray(v)) for k, v in parts.items()}
    assert float(fixed) == pytest.approx(p["fixed"] + 1e-4 * 10 * 1.04 + p["pre_c"] / 0.25)
    dec = max(p["lin_bw"], p["lin_c"] + p["moe_c"]) + max(p["attn_bw"], p["attn_c"])
    assert float(scaled) == pytest.approx(dec + p["comm"])
    # Another vendor's overhead is not applied; without a prefill efficiency the passes
    # are scaled like the decode operators.
    fixed_n, scaled_n = SweepShape(overhead_layer_s={"AMD": 1e-4}).combine(parts, "NVIDIA", "x")
    assert float(fixed_n) == pytest.approx(p["fixed"])
    assert float(scaled_n) == pytest.approx(dec + p["comm"] + max(p["pre_bw"], p["pre_c"]))


@pytest.fixture(scope="module")
def ix():
    return data.load_table("inferencex")


@pytest.fixture(scope="module")
def base(ix):
    return inference_latency.validate_sweep_model(ix)


def test_validation_scores_aggregated_points_only(ix, base):
    assert len(base) == len(inference_latency.select_points(ix))
    assert base["predicted"].notna().mean() > 0.9
    assert base["tpot_ape_pct"].notna().mean() > 0.9


def test_held_out_cell_latencies_do_not_move_its_predictions(ix, base):
    # The shape fit reads TPOT and TTFT and the level fit throughput: move all three. The
    # held-out efficiency and step time must not move (its throughput is read at its own,
    # moved, TPOT: that one is checked with the TPOT left alone below).
    cell = (ix["accelerator"] == "MI355X") & (ix["precision"] == "fp4")
    moved = ix.copy()
    for col in ("output_tput_per_gpu", "median_tpot_ms", "median_ttft_ms"):
        moved.loc[cell, col] = moved.loc[cell, col] * 0.7
    again = inference_latency.validate_sweep_model(moved)
    sel = (base["holdout"] == "accelerator x precision: MI355X x fp4").to_numpy()
    assert sel.sum() > 10
    for col in ("predicted_tpot_ms", "eta"):
        np.testing.assert_allclose(again.loc[sel, col], base.loc[sel, col], rtol=1e-9)
    same_tpot = moved.copy()
    same_tpot.loc[cell, "median_tpot_ms"] = ix.loc[cell, "median_tpot_ms"]
    np.testing.assert_allclose(
        inference_latency.validate_sweep_model(same_tpot).loc[sel, "predicted"],
        base.loc[sel, "predicted"],
        rtol=1e-9,
    )
    # The model's fp4 twin of each MI355X fp8 point comes from the fold without fp4 rows
    # (which fp8 points have a twin follows the moved fp4 sweeps' range: the matched ones).
    twin = (base["accelerator"] == "MI355X").to_numpy()
    twin = (
        twin & base["predicted_fp4"].notna().to_numpy() & again["predicted_fp4"].notna().to_numpy()
    )
    assert twin.sum() >= 5
    np.testing.assert_allclose(
        again.loc[twin, "predicted_fp4"], base.loc[twin, "predicted_fp4"], rtol=1e-9
    )
    # ... while what they are scored against moved, and other cells' folds did see it.
    assert (again.loc[sel, "measured"] < base.loc[sel, "measured"]).all()
    assert not np.allclose(
        again.loc[~sel, "predicted"], base.loc[~sel, "predicted"], equal_nan=True
    )


def _ratio_point(precision, date, tpot_ms, measured, predicted_fp4=np.nan):
    return {
        "accelerator": "MI355X",
        "framework": "sglang",
        "isl": 1024,
        "osl": 1024,
        "decode_tp": 8,
        "date": date,
        "precision": precision,
        "median_tpot_ms": tpot_ms,
        "measured": measured,
        "predicted": measured,
        "predicted_fp4": predicted_fp4,
        "eta": 0.5,
    }


def test_ratio_matches_the_fp4_sweep_of_the_same_run_date():
    # Day 1: fp4 at 10 and 20 ms gives 100 and 400 tok/s; fp8 at 14.142 ms gives 100.
    # Day 2 re-ran fp4 with other software, 10x faster at the same interactivity.
    rows = [
        _ratio_point("fp4", "d1", 10.0, 100.0),
        _ratio_point("fp4", "d1", 20.0, 400.0),
        _ratio_point("fp4", "d2", 12.0, 2000.0),
        _ratio_point("fp4", "d2", 16.0, 3000.0),
        _ratio_point("fp8", "d1", 10.0 * 2**0.5, 100.0, predicted_fp4=200.0),
    ]
    ratios = inference_latency.fp8_fp4_ratio(pd.DataFrame(rows), accelerators=("MI355X",))
    # Log-log halfway between day 1's fp4 points: 200 tok/s, so fp8/fp4 = 0.5; day 2's
    # points (which would sort between them if the dates were pooled) are not used.
    assert len(ratios) == 1
    assert ratios["measured_ratio"].iloc[0] == pytest.approx(0.5)
    assert ratios["predicted_ratio"].iloc[0] == pytest.approx(0.5)
    assert ratios["ratio_err_pct"].iloc[0] == pytest.approx(0.0, abs=1e-9)
    # An fp8 point whose date has no fp4 sweep is not matched at all.
    rows[-1]["date"] = "d3"
    assert inference_latency.fp8_fp4_ratio(pd.DataFrame(rows), accelerators=("MI355X",)).empty


def test_ratio_takes_the_fp8_engines_own_fp4_configuration_else_the_days_best():
    # One day, two fp4 configurations: EP1 (100 and 400 tok/s at 10 and 20 ms) and EP8
    # (4x faster). An EP1 fp8 point at 14.142 ms is set against EP1 (200 tok/s there); an
    # EP4 fp8 point, whose configuration that day did not run at fp4, against the best (800).
    def point(precision, ep, tpot_ms, measured):
        return {
            **_ratio_point(precision, "d1", tpot_ms, measured, 200.0),
            "decode_ep": ep,
            "decode_dp_attention": 0,
        }

    rows = [
        point("fp4", 1, 10.0, 100.0),
        point("fp4", 1, 20.0, 400.0),
        point("fp4", 8, 10.0, 400.0),
        point("fp4", 8, 20.0, 1600.0),
        point("fp8", 1, 10.0 * 2**0.5, 100.0),
        point("fp8", 4, 10.0 * 2**0.5, 100.0),
    ]
    got = inference_latency.fp8_fp4_ratio(pd.DataFrame(rows), accelerators=("MI355X",))
    assert got["measured_ratio"].tolist() == pytest.approx([0.5, 0.125])
    # A missing (NaN) configuration value is one value, not a mismatch with itself.
    blank = pd.DataFrame(rows).assign(decode_dp_attention=np.nan)
    got = inference_latency.fp8_fp4_ratio(blank, accelerators=("MI355X",))
    assert got["measured_ratio"].tolist() == pytest.approx([0.5, 0.125])
    # The model's fp4 twin is the configuration it is scored against: EP1's own, EP8 for
    # the EP4 point.
    match = inference_latency.fp8_fp4_matches(pd.DataFrame(rows), "measured")
    assert match["decode_ep"].tolist() == [1, 8]
    # A point whose fp4 twin has no prediction is left out, not filled from elsewhere.
    rows[-1]["predicted_fp4"] = np.nan
    assert len(inference_latency.fp8_fp4_ratio(pd.DataFrame(rows), accelerators=("MI355X",))) == 1


def test_ratio_needs_the_models_fp4_twins():
    # A frame without the validations' predicted_fp4 column is refused, not guessed at.
    rows = [_ratio_point("fp4", "d1", 10.0, 100.0), _ratio_point("fp8", "d1", 12.0, 90.0)]
    frame = pd.DataFrame(rows).drop(columns="predicted_fp4")
    with pytest.raises(ValueError, match="predicted_fp4"):
        inference_latency.fp8_fp4_ratio(frame)


def test_ratio_uses_held_out_fp4_twins(base):
    ratios = inference_latency.fp8_fp4_ratio(base)
    assert set(ratios["accelerator"]) == {"MI355X", "B200"}
    assert np.isfinite(ratios["predicted_ratio"]).mean() > 0.9
    summary = inference_latency.tpot_summary(base)
    assert list(summary["vendor"]) == ["AMD", "NVIDIA", "overall"]


@pytest.mark.xfail(
    strict=True,
    reason="issue 16 bar (InferenceX held-out median APE <= 20 %) not met by the sweep model "
    "(validated candidate, not yet used by the tiers): 30.0 % (AMD 36.9, NVIDIA 26.6; 28.0 % "
    "before the checkpoints' BF16-kept weights, 27.9 % then "
    "with the prefill cost at the plain minimum of its criterion, 3, against the "
    "one-standard-error rule's 2.5; 30.9 % before the prefill passes carried a fitted cost; "
    "the report's serving model 32.2, see test_inferencex_models). The held-out step time is "
    "off by a median 12 % (AMD 14), and at matched TPOT that error is divided by the slope "
    "of TPOT in concurrency; "
    "CDNA 3's measured TPOT rises about 2x from concurrency 4 to 64 (H200: 2.8x), a fixed "
    "step cost the vendor-level overheads (pooled with CDNA 4's, half as large) do not carry "
    "(cell_summary: CDNA 3's modelled TPOT 32-36 % low at concurrency <= 8, 14-18 % high at "
    ">= 32); the per-generation overheads that carry it "
    "(by_generation) raise NVIDIA's error more than they lower AMD's, and every InferenceX "
    "generation is one die, so pooling by die adds no level. Date-to-date repeatability "
    "(date_repeatability: each point predicted by its own configuration's other dates, 549 "
    "points predicted, 363 outside the other dates' range) is AMD 16.9 %, NVIDIA 3.9 % at "
    "matched TPOT (TPOT 8.6 / 0.7 %): AMD's serving software moved from date to date, which "
    "a model without a date term cannot follow (a reference, not a bound)",
)
def test_inferencex_held_out_meets_the_issue_16_bar(base):
    summary = inference_latency.summary(base).set_index("vendor")
    assert summary.loc["overall", "median_ape_pct"] <= 20.0, summary


@pytest.mark.xfail(
    strict=True,
    reason="issue 16 bar (FP8/FP4 ratio within 15 % on B200 and MI355X) not met by the sweep "
    "model: B200 27 % (measured 0.65 on matched run dates, modelled 0.82, the fp4 twin at the "
    "expert-parallel configuration the day ran at fp4: its held-out fp4 or fp8 cell takes "
    "Blackwell Ultra's fp4 efficiency gain over fp8, not B200's own; 23 % and 0.55 before "
    "the checkpoints' BF16-kept "
    "weights), MI355X 21 % (measured 0.51, modelled 0.50; 32 % and 0.42 before; holding "
    "either MI355X cell out leaves AMD "
    "without both formats, so the physics prior, equal efficiency, applies, while the "
    "measured fp4 efficiency is 0.88x fp8's, and at matched interactivity each fold's error "
    "compounds)",
)
def test_inferencex_fp8_fp4_ratio_meets_the_issue_16_bar(base):
    ratios = inference_latency.ratio_summary(inference_latency.fp8_fp4_ratio(base))
    assert (ratios["ratio_err_pct"] <= 15.0).all(), ratios


def _level_points(rows):
    cols = ["vendor", "generation", "precision_class", "framework", "eta"]
    return pd.DataFrame(rows, columns=cols)


def test_level_precision_effect_is_per_vendor_generation_with_a_physics_prior():
    rows = []
    for _ in range(20):
        rows += [
            ("N", "g1", "native", "s", 0.6),
            ("N", "g1", "one above native", "s", 0.4),
            ("N", "g2", "native", "s", 0.5),
            ("A", "c3", "native", "s", 0.3),
            ("A", "c4", "one above native", "s", 0.45),
        ]
    fitted = sweep_fit.fit_level(_level_points(rows))
    ask = _level_points(
        [
            ("N", "g2", "one above native", "s", np.nan),
            ("A", "c4", "native", "s", np.nan),
            ("N", "g1", "one above native", "s", np.nan),
        ]
    )
    eta = sweep_fit.predict_level(ask, fitted)
    # NVIDIA's g2 takes g1's effect (0.4 / 0.6), shrunk to the prior by 20 / 30 points.
    w = 20.0 / 30.0
    np.testing.assert_allclose(eta[0], 0.5 * np.exp(w * np.log(0.4 / 0.6)), rtol=1e-9)
    # AMD served both classes in no generation: the other vendor's gain does not transfer,
    # the held-out class has the efficiency of the one served (physics prior).
    np.testing.assert_allclose(eta[1], 0.45, rtol=1e-9)
    # A group with both classes keeps (nearly) its own effect.
    assert abs(eta[2] - 0.4) < 0.01


def test_cell_summary_splits_a_slope_error_from_a_level_error():
    # Cell "A x fp8": modelled TPOT 20 % low at concurrency 4, 20 % high at 64 (a fixed
    # step cost too small); cell "B x fp4": 10 % high at both (a level error).
    rows = []
    for conc, tpot_a, tpot_b in [(4, 0.8, 1.1), (64, 1.2, 1.1)]:
        rows.append(("accelerator x precision: A x fp8", "AMD", conc, tpot_a, 1.5))
        rows.append(("accelerator x precision: B x fp4", "NVIDIA", conc, tpot_b, 0.9))
    df = pd.DataFrame(rows, columns=["holdout", "vendor", "conc", "tpot_ratio", "tput_ratio"])
    df["median_tpot_ms"] = 20.0
    df["predicted_tpot_ms"] = 20.0 * df["tpot_ratio"]
    df["measured"] = 100.0
    df["predicted"] = 100.0 * df["tput_ratio"]
    df["ape_pct"] = (df["predicted"] / df["measured"] - 1.0).abs() * 100.0
    out = inference_latency.cell_summary(df).set_index("cell")
    np.testing.assert_allclose(out.loc["A x fp8", "low_conc_tpot_err_pct"], -20.0)
    np.testing.assert_allclose(out.loc["A x fp8", "high_conc_tpot_err_pct"], 20.0)
    np.testing.assert_allclose(out.loc["A x fp8", "median_tpot_err_pct"], 0.0, atol=1e-9)
    np.testing.assert_allclose(out.loc["B x fp4", "low_conc_tpot_err_pct"], 10.0)
    np.testing.assert_allclose(out.loc["B x fp4", "high_conc_tpot_err_pct"], 10.0)
    np.testing.assert_allclose(out.loc["B x fp4", "median_err_pct"], -10.0)
    assert out.loc["A x fp8", "vendor"] == "AMD" and out.loc["A x fp8", "points"] == 2


def _budget_reference(df, cols):
    # Each scored point against the median log error of the other points of its group.
    ok = df[np.isfinite(df["predicted"])].reset_index(drop=True)
    e = np.log(ok["predicted"] / ok["measured"]).to_numpy()
    keys = [tuple(map(str, r)) for r in ok[list(cols)].itertuples(index=False)]
    out = {"AMD": [], "NVIDIA": []}
    for i in range(len(ok)):
        if not cols:
            out[ok.at[i, "vendor"]].append(abs(np.exp(e[i]) - 1) * 100)
            continue
        others = [e[k] for k in range(len(ok)) if k != i and keys[k] == keys[i]]
        if others:
            out[ok.at[i, "vendor"]].append(abs(np.exp(e[i] - statistics.median(others)) - 1) * 100)
    return out


def test_error_budget_takes_each_level_from_the_group_s_other_points():
    # AMD: one cell, two lengths; at 1k one point runs at TP 4 (alone in its engine
    # configuration), the rest at TP 8, skewed (three on the mark, one 2x high: a mean
    # would differ from the median); one unpredicted point. NVIDIA: a pair.
    rows = [
        ("AMD", "MI300X", 1024, 8, 1.0),
        ("AMD", "MI300X", 1024, 8, 1.0),
        ("AMD", "MI300X", 1024, 4, 1.0),
        ("AMD", "MI300X", 1024, 8, 2.0),
        ("AMD", "MI300X", 1024, 8, 1.0),
        ("AMD", "MI300X", 8192, 8, 1.4),
        ("AMD", "MI300X", 8192, 8, 1.5),
        ("AMD", "MI300X", 8192, 8, 1.6),
        ("AMD", "MI300X", 1024, 8, np.nan),  # unpredicted: in no row
        ("NVIDIA", "B200", 1024, 8, 1.0),
        ("NVIDIA", "B200", 1024, 8, 1.21),
    ]
    df = pd.DataFrame(rows, columns=["vendor", "accelerator", "isl", "decode_tp", "ratio"])
    df = df.assign(
        precision="fp8",
        framework="sglang",
        osl=1024,
        decode_ep=1,
        decode_dp_attention=np.nan,  # a missing layout still makes one group
        date="2026-01-01",
        measured=100.0,
    )
    df["predicted"] = 100.0 * df["ratio"]
    out = inference_latency.error_budget(df)
    levels = inference_latency.BUDGET_LEVELS
    assert list(out["level"]) == [label for label, _ in levels]
    for (_, cols), (_, row) in zip(levels, out.iterrows(), strict=True):
        ref = _budget_reference(df, cols)
        for vendor in ("AMD", "NVIDIA"):
            assert row[f"{vendor}_median_ape_pct"] == pytest.approx(np.median(ref[vendor]))
        assert row["overall_median_ape_pct"] == pytest.approx(np.median(ref["AMD"] + ref["NVIDIA"]))
        assert row["points"] == len(ref["AMD"]) + len(ref["NVIDIA"])
    by = out.set_index("level")
    # as held out: AMD 0, 0, 0, 100, 0, 40, 50, 60 -> 20; NVIDIA 0 and 21 -> 10.5
    assert by["AMD_median_ape_pct"].iloc[0] == pytest.approx(20.0)
    assert by["NVIDIA_median_ape_pct"].iloc[0] == pytest.approx(10.5)
    # NVIDIA's pair: each point's level is the other's, 1.21 or 1 / 1.21 off
    assert by["NVIDIA_median_ape_pct"].iloc[1] == pytest.approx((21.0 + 100 * (1 - 1 / 1.21)) / 2)
    # the skewed 1k TP 8 group: the three 1.0 points keep a level of 1.0 (median, not mean)
    assert list(by["groups"]) == [1, 2, 3, 3]  # the TP 4 point has no other point
    assert list(by["points"]) == [10, 10, 10, 9]


def _repeat_rows(date, scale):
    base = {
        "accelerator": "MI300X",
        "vendor": "AMD",
        "model": "deepseek-r1",
        "precision": "fp8",
        "framework": "sglang",
        "decode_tp": 8,
        "decode_ep": 1,
        "decode_dp_attention": 0,
        "isl": 1024,
        "osl": 1024,
        "disagg": 0,
        "multinode": 0,
        "spec_method": "none",
        "date": date,
    }
    # TPOT 20, 30, 60 ms at concurrency 4, 16, 64; throughput conc / TPOT / 8 GPUs.
    return [
        {
            **base,
            "conc": c,
            "median_tpot_ms": t * scale,
            "output_tput_per_gpu": c / (t * scale / 1e3) / 8.0,
        }
        for c, t in [(4, 20.0), (16, 30.0), (64, 60.0)]
    ]


def test_measured_prefill_rates_solves_rate_and_fixed_latency_from_two_prompt_lengths():
    # One engine-day whose TTFT is 100 ms + ISL x F(ISL) / (8 GPUs x 500 TFLOP/s), at
    # concurrency 1 and 4 (two points at 16, queued behind other prompts, are not read: read,
    # they would move the 8k median); a second day whose 8k TTFT is below its 1k TTFT,
    # which no positive rate explains (dropped); a third that ran 1k prompts only.
    mp = inference.roofline.model_params(data.load_models().set_index("model").loc["deepseek-r1"])
    ttft = {
        isl: 100.0 + isl * inference_latency.prompt_flops_per_token(mp, isl) / (8 * 500e12) * 1e3
        for isl in (1024, 8192)
    }
    base = _repeat_rows("2026-01-01", 1.0)[0]
    rows = []
    for conc, isl in [(1, 1024), (4, 1024), (1, 8192), (4, 8192), (16, 8192), (16, 8192)]:
        late = 5000.0 if conc == 16 else 0.0
        rows.append({**base, "conc": conc, "isl": isl, "median_ttft_ms": ttft[isl] + late})
    bad = [{**r, "date": "2026-01-02", "median_ttft_ms": 900.0 - r["isl"] / 100} for r in rows]
    short = [{**r, "date": "2026-01-03"} for r in rows if r["isl"] == 1024]
    out = inference_latency.measured_prefill_rates(pd.DataFrame(rows + bad + short))
    row = out.set_index(["accelerator", "precision", "framework"]).loc[("MI300X", "fp8", "sglang")]
    assert (row["engine_days"], row["dropped"], row["single_length"]) == (1, 1, 1)
    assert row["rate_tflops"] == pytest.approx(500.0)
    assert row["t0_ms"] == pytest.approx(100.0)
    peak = float(data.load_specs().set_index("accelerator").at["MI300X", "fp8_dense_tflops"])
    assert row["peak_pct"] == pytest.approx(100.0 * 500.0 / peak)
    # prefill FLOPs per token: 2 x 37 B active + MLA attention over half the prompt
    assert float(inference_latency.prompt_flops_per_token(mp, 8192)) == pytest.approx(
        2 * 37e9 + 2 * 128 * (2 * 128 + 64) * 61 * 4096
    )


def test_date_repeatability_predicts_each_date_from_the_other_dates_only():
    # Two dates of one configuration, the second 10 % slower everywhere; a third
    # configuration (other lengths) has one date and no other date.
    lone = [{**r, "isl": 8192} for r in _repeat_rows("2026-01-03", 1.0)]
    ix = pd.DataFrame(_repeat_rows("2026-01-01", 1.0) + _repeat_rows("2026-01-02", 1.1) + lone)
    rep = inference_latency.date_repeatability(ix)
    assert len(rep) == 6  # the lone date has no other date to be predicted from
    # Each date's TPOT at its concurrency is the other date's: 10 % off one way or the other.
    np.testing.assert_allclose(
        np.sort(rep["tpot_ape_pct"].to_numpy()), [100 / 11] * 3 + [10.0] * 3, rtol=1e-9
    )
    # The middle points sit inside the other date's curve; the ends fall outside one way.
    assert rep["predicted"].notna().sum() >= 2
    assert (rep["ape_pct"].dropna() > 0).all()
    # Date 2's concurrency-16 point (33 ms) on date 1's curve, log-log between 30 and 60 ms.
    x = np.log(1000.0 / np.array([60.0, 30.0]))
    y = np.log(np.array([64 / 0.06, 16 / 0.03]) / 8.0)
    want = np.exp(np.interp(np.log(1000.0 / 33.0), x, y))
    row = rep[(rep["conc"] == 16) & np.isclose(rep["median_tpot_ms"], 33.0)]
    np.testing.assert_allclose(row["predicted"].to_numpy(), [want], rtol=1e-9)


def test_serving_shape_params_take_the_generation_before_the_vendor():
    shape = inference.ServingShape(
        overhead_layer_s={"AMD": 9e-5, "AMD CDNA 3": 1.7e-4},
        overhead_seq_s={"AMD": 1e-5},
        expert_rows={"AMD": 64.0},
    )
    own = shape.params("AMD", "CDNA 3")
    assert own["overhead_layer_s"] == pytest.approx(1.7e-4)
    # Keys the generation lacks, and a generation without a fit, take the vendor's.
    assert own["overhead_seq_s"] == pytest.approx(1e-5)
    assert own["expert_rows"] == 64.0
    assert shape.params("AMD", "CDNA 4")["overhead_layer_s"] == pytest.approx(9e-5)
    assert shape.params("AMD")["overhead_layer_s"] == pytest.approx(9e-5)
    assert shape.params("NVIDIA", "Hopper")["overhead_layer_s"] == 0.0


def test_serving_shape_by_generation_fits_each_generation_with_enough_points():
    from analysis.inference.latency import (
        SHAPE_GENERATION_MIN_POINTS,
        _load,
        fit_shape,
        point_terms,
        select,
    )

    ix, specs, models = _load(None, None, None, None)
    pts = select(ix, specs, models)
    terms = point_terms(pts, specs, models, inference.roofline.ROOFLINE_SHAPE)
    pooled = fit_shape(pts, terms)
    per_gen = fit_shape(pts, terms, by_generation=True)
    # The default keeps one set of overheads per vendor; the option adds generations.
    assert set(pooled.overhead_layer_s) == {"AMD", "NVIDIA"}
    assert {k: per_gen.overhead_layer_s[k] for k in pooled.overhead_layer_s} == dict(
        pooled.overhead_layer_s
    )
    counts = pts.groupby(["vendor", "generation"]).size()
    for (vendor, gen), n in counts.items():
        assert (f"{vendor} {gen}" in per_gen.overhead_layer_s) == (n >= SHAPE_GENERATION_MIN_POINTS)
    # CDNA 3's measured step floor (about 14 ms at concurrency 4 against CDNA 4's 9) is a
    # larger fixed cost per MoE layer.
    assert per_gen.overhead_layer_s["AMD CDNA 3"] > per_gen.overhead_layer_s["AMD CDNA 4"]


def test_sweep_prefill_cost_scales_the_prefill_passes_flops_only():
    parts = {
        "lin_bw": np.array([1.0]),
        "lin_c": np.array([0.2]),
        "moe_c": np.array([0.0]),
        "moe_row_c": np.array([0.0]),
        "attn_bw": np.array([0.1]),
        "attn_c": np.array([0.05]),
        "comm": np.array([0.3]),
        "pre_bw": np.array([0.4]),
        "pre_c": np.array([0.5]),
    }
    # 1 + 0.1 + 0.3 + max(0.4, cost x 0.5): 1.9 at cost 1, 2.9 at cost 3 (kappa 1).
    assert float(combine_scaled(parts, 1.0, 0.0)[0]) == pytest.approx(1.9)
    assert float(combine_scaled(parts, 1.0, 0.0, pre_cost=3.0)[0]) == pytest.approx(2.9)
    # Charged apart (prefill=False), the passes and their cost are not in the step.
    assert float(combine_scaled(parts, 1.0, 0.0, prefill=False, pre_cost=3.0)[0]) == pytest.approx(
        1.4
    )


def test_sweep_shape_fits_one_prefill_cost_inside_the_grid():
    from analysis.inference.latency import SHAPE_PREFILL_COST_GRID, _load, select

    ix, specs, models = _load(None, None, None, None)
    pts = select(ix, specs, models).reset_index(drop=True)
    raw = sweep_fit.raw_terms(pts, specs, models)
    shape = sweep_fit.fit_sweep_shape(pts, raw)
    assert min(SHAPE_PREFILL_COST_GRID) < shape.prefill_cost < max(SHAPE_PREFILL_COST_GRID)
    # Charged at a TTFT-fitted efficiency instead, the passes carry no such cost.
    assert sweep_fit.fit_sweep_shape(pts, raw, prefill_from_ttft=True).prefill_cost == 1.0


def test_sweep_shape_combine_charges_its_prefill_cost():
    parts = {
        **{k: np.array([0.0]) for k in ("fixed", "moe_layers", "joins", "seqs", "moe_c")},
        "moe_row_c": np.array([0.0]),
        "lin_bw": np.array([1.0]),
        "lin_c": np.array([0.2]),
        "attn_bw": np.array([0.1]),
        "attn_c": np.array([0.05]),
        "comm": np.array([0.3]),
        "pre_bw": np.array([0.4]),
        "pre_c": np.array([0.5]),
    }
    shape = SweepShape(prefill_cost=3.0)
    _, scaled = shape.combine(parts, "AMD", "native")
    assert float(scaled[0]) == pytest.approx(
        float(combine_scaled(parts, 1.0, 0.0, pre_cost=3.0)[0])
    )
    assert float(scaled[0]) == pytest.approx(2.9)
    # Charged at a TTFT-fitted prefill efficiency instead, the cost does not enter.
    timed = SweepShape(prefill_cost=3.0, prefill_eta={"AMD": 0.25})
    fixed, scaled = timed.combine(parts, "AMD", "native")
    assert float(scaled[0]) == pytest.approx(1.4)
    assert float(fixed[0]) == pytest.approx(0.5 / 0.25)


def test_ratio_baselines_by_hand():
    # one accelerator, two configurations; each re-run on another date
    ratios = pd.DataFrame(
        {
            "accelerator": "A",
            "framework": ["s", "s", "s", "t", "t"],
            "isl": 1024,
            "osl": 1024,
            "decode_tp": 8,
            "date": ["d1", "d1", "d2", "d1", "d2"],
            "interactivity": [50.0, 100.0, 80.0, 60.0, 62.0],
            "measured_ratio": [0.5, 1.0, 0.5, 0.4, 0.5],
            "predicted_ratio": [0.5, 0.5, 0.5, 0.5, 0.5],
        }
    )
    # as fp8_fp4_ratio gives it
    ratios["ratio_err_pct"] = (ratios["predicted_ratio"] / ratios["measured_ratio"] - 1).abs() * 100
    got = inference_latency.ratio_baselines(ratios).iloc[0]
    # model: |0.5/r - 1| = 0, 0.5, 0, 0.25, 0 -> median 0
    assert got["model_pct"] == pytest.approx(0.0)
    # one centre (median 0.5): the same errors
    assert got["median_ratio_pct"] == pytest.approx(0.0)
    # centres per configuration: s 0.5 (0, 0.5, 0), t 0.45 (0.125, 0.1) -> 10 %
    assert got["config_median_pct"] == pytest.approx(10.0)
    # s's d2 point (80) is more than 15 % from both of s's d1 points (50, 100): no match;
    # only t's two dates meet: 0.25 and 0.2 -> median 22.5 %, upper quartile 23.75 %
    assert got["other_dates_points"] == 2
    assert got["other_dates_pct"] == pytest.approx(22.5)
    assert got["other_dates_p75_pct"] == pytest.approx(23.75)
