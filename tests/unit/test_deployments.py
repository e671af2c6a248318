"""Deployment options (issue 20): the physics on hand-worked cases, the held-out
validation, the tiers' choice and the fleet plan on every bundled scenario."""

import numpy as np
import pandas as pd
import pytest

from analysis import (
    data,
    fleet,
    inference,
    params,
    paths,
    training,
)
from analysis.inference import deployment_fit, deployments, worker
from analysis.inference.deployments import Layout
from analysis.inference.layer_kernels import REFERENCE_LAYER_KERNELS, overhead_layers
from analysis.inputs import resolve
from analysis.tables.benchmarks.inferencex import aggregated_run_gpus

# A toy MoE on a toy GPU, chosen so the terms can be checked by hand: 1 TB/s, 1 PFLOP/s.
HW = {
    "bw_tbps": 1.0,
    "peak_tflops": 1000.0,
    "attn_peak_tflops": 1000.0,
    "mem_gb": 1000.0,
    "link_gbps": 800.0,  # 400 GB/s one way
    "domain": 8.0,
    "scaleout_gbps": 400.0,  # 50 GB/s
    "expert_rows": 0.0,
    "overhead_layer_s": 0.0,
    "overhead_seq_s": 0.0,
    "overhead_expert_s": 0.0,
}
DENSE = {
    "total_b": 10.0,
    "active_b": 10.0,
    "shared_b": 10.0,
    "routed_b": 0.0,
    "route_frac": 0.0,
    "experts": 0.0,
    "layers": 10.0,
    "hidden": 1000.0,
    "heads": 8.0,
    "head_dim": 128.0,
    "kv_heads": 8.0,
    "kv_tok_bf16": 1000.0,
    "kv_window_bf16": 0.0,
    "mla": 0.0,
    "attn_flops_pair": 0.0,
    "attn_flops_pair_prefill": 0.0,
    "sliding_layers": 0.0,
    "window": 0.0,
}
MOE = {
    **DENSE,
    "shared_b": 2.0,
    "routed_b": 8.0,
    "active_b": 3.0,
    "route_frac": 0.125,
    "experts": 8.0,
}
# The layers the per-layer overhead charges (model_params adds it), in DeepSeek-R1 layers.
DENSE["overhead_layers"] = overhead_layers(DENSE)
MOE["overhead_layers"] = overhead_layers(MOE)


def test_decode_step_dense_tp1_is_weight_bandwidth():
    # TP1, one sequence: 10 GB of fp8 weights at 1 TB/s = 10 ms, KV 1 kB x 1.5k tokens
    # (0.5 byte scale: fp8 KV) is negligible; no communication; 1 ms fixed overhead.
    t = deployments.decode_step(
        HW,
        DENSE,
        precision="fp8",
        isl=1000,
        osl=1000,
        layout=Layout(1, ep=False),
        batch=np.array([1.0]),
        aggregated=False,
    )
    kv = 1.0 * 1500 * 1000 * 0.5 / 1e12
    assert t["scaled"][0] == pytest.approx(10e9 / 1e12 + kv, rel=1e-9)
    assert t["fixed"][0] == pytest.approx(inference.STEP_OVERHEAD_S)


def test_a_dense_worker_pays_the_per_layer_overhead_by_its_kernels():
    # 10 layers of 10 kernels = 4.42 DeepSeek-R1 layers (22.6 kernels each) at 50 us
    kw = {"precision": "fp8", "isl": 1000, "osl": 1000, "layout": Layout(1, ep=False)}
    kw |= {"batch": np.array([1.0]), "aggregated": False}
    with_layer = deployments.decode_step({**HW, "overhead_layer_s": 50e-6}, DENSE, **kw)
    plain = deployments.decode_step(HW, DENSE, **kw)
    extra = with_layer["fixed"][0] - plain["fixed"][0]
    assert extra == pytest.approx(10 * 10 / REFERENCE_LAYER_KERNELS * 50e-6)
    assert with_layer["scaled"][0] == plain["scaled"][0]


def test_aggregated_step_carries_the_joining_prompts():
    # Compute-bound regime: the aggregated step processes b (1 + ISL/OSL) tokens.
    kw = {
        "precision": "fp8",
        "isl": 3000,
        "osl": 1000,
        "layout": Layout(1, ep=False),
        "batch": np.array([4096.0]),
    }
    agg = deployments.decode_step(HW, DENSE, aggregated=True, **kw)["scaled"][0]
    dis = deployments.decode_step(HW, DENSE, aggregated=False, **kw)["scaled"][0]
    flops = 2 * 10e9 * 4096 / 1e15
    assert dis == pytest.approx(max(10e9 / 1e12, flops) + 4096 * 3500 * 500 / 1e12, rel=1e-9)
    assert agg > 3.0 * flops  # 4x the tokens


# A toy sliding-window model (gpt-oss's pattern): 5 of its 10 layers attend to at most 100
# tokens and hold 100 tokens of KV per sequence; the other 5 layers' KV grows with context.
WINDOWED = {
    **DENSE,
    "kv_tok_bf16": 500.0,  # bytes per token of context, the 5 full layers (bf16)
    "kv_window_bf16": 50_000.0,  # bytes per sequence, the 5 window layers (bf16)
    "attn_flops_pair": 1000.0,
    "attn_flops_pair_prefill": 1000.0,
    "sliding_layers": 5.0,
    "window": 100.0,
}


def test_sliding_window_layers_cap_attention_and_hold_a_fixed_kv_by_hand():
    kw = {"precision": "bf16", "isl": 1000.0, "osl": 1000.0, "layout": Layout(1, ep=False)}
    t = deployments.decode_step(HW, WINDOWED, batch=np.array([1.0]), aggregated=False, **kw)
    # one sequence at mean context 1,500: weights 20 GB at 1 TB/s, then attention
    # KV read 1,500 x 500 + 50,000 = 800 kB -> 0.8 us; FLOPs 1,000 x (5 x 1,500 + 5 x 100)
    # = 8 MFLOP -> 8 ns at 1 PFLOP/s: the bytes bind
    weights = 10e9 * 2.0 / 1e12
    assert t["scaled"][0] == pytest.approx(weights + 800e3 / 1e12, rel=1e-9)
    # memory: 900 GB usable - 20 GB weights, 2,000 x 500 + 50,000 = 1.05 MB per sequence
    assert t["max_batch"] == pytest.approx(np.floor(880e9 / 1.05e6))
    kw.pop("osl")
    pf = deployments.prefill_terms(HW, WINDOWED, prefill_worker=True, **kw)
    # per prompt token: 2 x 10e9 linear + 1,000 x (5 x 500 + 5 x min(500, 100)) attention
    per_token = 2.0 * 10e9 / 1e15 + 1000.0 * (5 * 500 + 5 * 100) / 1e15
    assert pf["flops_time_per_token"] == pytest.approx(per_token, rel=1e-12)
    # the KV sent to the decode worker: the prompt's tokens and the window, bf16
    hw = {"link_gbps": 800.0, "scaleout_gbps": 400.0}
    sent = deployments.kv_transfer_s(
        hw, WINDOWED, precision="bf16", isl=1000.0, prefill_gpus=1, same_domain=False
    )
    assert sent == pytest.approx((1000 * 500 + 50_000) / 50e9, rel=1e-12)


def test_decode_attention_flops_cap_the_window_layers_by_hand():
    # attention compute-bound (1 byte of KV per token: 6 kB read, 6 ns, against 44 ns of
    # FLOPs): 4 decoding sequences at mean context 1,500 and, aggregated, 4 prompts of
    # 1,000 joining (mean 500 pairs per prompt token)
    compute_only = {**WINDOWED, "kv_tok_bf16": 1.0, "kv_window_bf16": 0.0}
    kw = {"precision": "bf16", "isl": 1000.0, "osl": 1000.0, "layout": Layout(1, ep=False)}

    def attention_s(mp):
        t = deployments.decode_step(HW, mp, batch=np.array([4.0]), aggregated=True, **kw)
        none = deployments.decode_step(
            HW, {**mp, "attn_flops_pair": 0.0}, batch=np.array([4.0]), aggregated=True, **kw
        )
        return float(t["scaled"][0] - none["scaled"][0])

    # full layers: 4 x 1,500 + 4 x 500 = 8,000 pairs; window layers: 4 x 100 + 4 x 100;
    # the step without attention FLOPs waits on the KV bytes instead (6 kB at 1 TB/s)
    full, window, kv_s = 4 * 1500 + 4 * 500, 4 * 100 + 4 * 100, 6000.0 / 1e12
    assert attention_s(compute_only) == pytest.approx(
        1000.0 * (5 * full + 5 * window) / 1e15 - kv_s, rel=1e-6
    )
    # without the cap every layer sees the whole context
    uncapped = attention_s({**compute_only, "window": 1e9})
    assert uncapped == pytest.approx(1000.0 * 10 * full / 1e15 - kv_s, rel=1e-6)


def test_a_window_longer_than_the_context_is_full_attention():
    # every query sees the whole context when the window exceeds it: the same FLOPs as
    # ten full-attention layers
    wide = {**WINDOWED, "window": 1e9, "kv_window_bf16": 0.0, "kv_tok_bf16": 0.0}
    full = {**wide, "sliding_layers": 0.0}
    kw = {"precision": "bf16", "isl": 1000.0, "layout": Layout(1, ep=False)}
    got = [
        deployments.prefill_terms(HW, m, prefill_worker=True, **kw)["flops_time_per_token"]
        for m in (wide, full)
    ]
    assert got[0] == pytest.approx(got[1], rel=1e-12)
    assert got[0] > 2.0 * 10e9 / 1e15  # attention counted at all


def test_expert_parallel_splits_experts_and_replicates_dense():
    dense_tp, routed_tp = worker.resident_weights(MOE, "fp8", Layout(8, ep=False), HW)
    dense_ep, routed_ep = worker.resident_weights(MOE, "fp8", Layout(8, ep=True), HW)
    assert routed_tp == routed_ep == pytest.approx(1e9)  # 8 GB of experts / 8
    assert dense_tp == pytest.approx(0.25e9)
    assert dense_ep == pytest.approx(2e9)  # DP attention: the dense part on every GPU


def test_all_to_all_pays_the_network_beyond_the_scale_up_domain():
    tokens = np.array([1024.0])
    inside, lat_in = deployments._comm(HW, MOE, Layout(8, ep=True), tokens)
    across, lat_out = deployments._comm(HW, MOE, Layout(16, ep=True), tokens)
    # Per GPU: 2 x (T/g) x k x hidden x 1.5 B x (g-1)/g per layer; k = 1 expert here.
    per8 = 2 * (1024 / 8) * 1 * 1000 * 1.5 * 7 / 8
    assert inside[0] == pytest.approx(10 * per8 / 400e9)
    per16 = 2 * (1024 / 16) * 1 * 1000 * 1.5 * 15 / 16
    assert across[0] == pytest.approx(10 * per16 / 50e9)
    assert lat_out > lat_in


def test_kv_transfer_is_faster_inside_a_rack():
    mp = {"kv_tok_bf16": 70272.0, "kv_window_bf16": 0.0}
    hw = {"link_gbps": 1800.0, "scaleout_gbps": 400.0}
    kw = {"precision": "fp8", "isl": 8192, "prefill_gpus": 4}
    rack = deployments.kv_transfer_s(hw, mp, same_domain=True, **kw)
    net = deployments.kv_transfer_s(hw, mp, same_domain=False, **kw)
    assert rack == pytest.approx(8192 * 35136 / (900e9 * 4))
    assert net / rack == pytest.approx(900 / 50)


def test_prefill_memory_check():
    small = {**HW, "mem_gb": 5.0}
    assert (
        deployments.prefill_terms(
            small, DENSE, precision="fp8", isl=1000, layout=Layout(1, ep=False), prefill_worker=True
        )["fits"]
        == 0.0
    )
    assert (
        deployments.prefill_terms(
            small, DENSE, precision="fp8", isl=1000, layout=Layout(4, ep=False), prefill_worker=True
        )["fits"]
        == 1.0
    )


def test_prefill_attention_form_follows_the_worker():
    # 10 layers, ISL 1000: 500 context pairs per token on average. Per pair 1e5 FLOPs in
    # the decode (absorbed) form, 2e4 in the prefill form: a dedicated prefill worker's
    # pass takes the latter, 2e4 x 10 x 500 = 1e8 FLOPs per token over the 1 PFLOP/s
    # attention peak; an aggregated engine's prompt keeps the former (1e5 x 10 x 500).
    mp = {**DENSE, "attn_flops_pair": 1e5, "attn_flops_pair_prefill": 2e4}
    kw = {"precision": "fp8", "isl": 1000, "layout": Layout(1, ep=False)}
    peak = HW["attn_peak_tflops"] * 1e12
    no_attn = deployments.prefill_terms(HW, DENSE, prefill_worker=True, **kw)
    for on_worker, pair in ((True, 2e4), (False, 1e5)):
        got = deployments.prefill_terms(HW, mp, prefill_worker=on_worker, **kw)
        extra = got["flops_time_per_token"] - no_attn["flops_time_per_token"]
        assert extra == pytest.approx(pair * 10 * 500 / peak)


def test_only_a_disaggregated_point_prefills_on_a_prefill_worker(monkeypatch):
    # The calibration prices each measured point's prompt: on its prefill worker when the
    # point is disaggregated, on its aggregated engine (absorbed MLA form) otherwise.
    inp = resolve(None)
    points = deployment_fit.measured_points(inp.table("inferencex"))
    sub = points.groupby("kind").head(3).reset_index(drop=True)
    assert set(sub["kind"]) == {"aggregated", "disaggregated"}
    seen = []
    real = deployments.prefill_terms

    def spy(*args, **kwargs):
        seen.append(kwargs["prefill_worker"])
        return real(*args, **kwargs)

    monkeypatch.setattr(deployment_fit, "prefill_terms", spy)
    deployment_fit.implied_efficiencies(sub, inp.specs, inp.models, inputs=inp)
    assert seen == (sub["kind"] == "disaggregated").tolist()


def test_validation_never_fits_on_the_held_out_configuration(monkeypatch):
    implied = deployment_fit.implied()
    seen = []
    real = deployment_fit.fit_calibration

    def spy(frame):
        seen.append(frame)
        return real(frame)

    monkeypatch.setattr(deployment_fit, "fit_calibration", spy)
    held = deployment_fit.validate_by_configuration(implied.head(400))
    keys = list(deployment_fit.CONFIG_KEYS)
    assert len(seen) == held["config"].nunique() > 3
    for frame, (cfg, rows) in zip(seen, held.groupby("config", sort=True), strict=True):
        train_codes = set(frame[keys].astype(str).agg(" | ".join, axis=1))
        assert cfg not in train_codes
        assert len(rows) >= 1
    assert (held["kind"] == "disaggregated").all()


def test_disaggregated_validation_meets_the_issue_20_bar():
    s = deployment_fit.validation_summary(deployment_fit.validation()).set_index("vendor")
    bar = deployment_fit.DISAGG_MAPE_TARGET_PCT
    for vendor in ("AMD", "NVIDIA", "overall"):
        assert s.loc[vendor, "median_ape_pct"] <= bar, vendor
    assert "meets" in deployment_fit.validation_verdict(s.reset_index())


def test_validation_summary_per_vendor():
    s = deployment_fit.validation_summary(deployment_fit.validation()).set_index("vendor")
    assert set(s.index) == {"AMD", "NVIDIA", "overall"}
    assert s.loc["AMD", "rows"] > 0 and s.loc["NVIDIA", "rows"] > 0
    assert 0 < s.loc["overall", "median_ape_pct"] < 100


def test_default_tiers_name_the_deployment():
    sc = params.load_scenario(paths.PARAMS / "default.yaml")
    t = inference.evaluate_tiers(sc, with_cost=False)
    ok = t[t["feasible"]]
    assert ok["deployment"].str.len().gt(0).all()
    assert set(ok["deployment_basis"]) <= {
        "MLPerf-calibrated",
        deployments.MEASURED,
        deployments.MODELLED,
    }


def test_deepseek_scenario_has_disaggregated_ep_and_rack_scale_for_both_vendors():
    sc = params.load_scenario(paths.PARAMS / "scenarios" / "moe-deepseek-r1-rack-scale.yaml")
    t = inference.evaluate_tiers(sc, with_cost=False)
    assert {"GB200", "GB300"} <= set(t["accelerator"])
    for vendor in ("AMD", "NVIDIA"):
        v = t[(t["vendor"] == vendor) & t["feasible"]]
        assert (v["deployment_kind"] == "disaggregated").any(), vendor
    # Wide EP wins on NVIDIA; on AMD the calibration (MoRI-SGLang's EP decode runs less
    # efficiently than its TP8 decode at equal batch) keeps TP8 ahead, but EP is offered.
    nv = t[(t["vendor"] == "NVIDIA") & t["feasible"]]
    assert nv["deployment"].str.contains("EP").any()
    specs = data.load_specs().set_index("accelerator").loc["MI355X"].copy()
    specs["accelerator"] = "MI355X"
    hw = inference.hardware_params(specs, "fp8")
    mp = inference.model_params(data.load_models().set_index("model").loc["deepseek-r1"])
    assert any(lay.ep and lay.gpus >= 16 for lay in deployments.decode_layouts(hw, mp))
    rack = t[t["accelerator"].isin(["GB200", "GB300"]) & t["feasible"]]
    assert rack["tp"].max() > 8  # a worker larger than one 8-GPU server: the NVL72 domain
    # The options that lost are shown too: both vendors have expert-parallel options
    # (aggregated EP or disaggregated with an EP decode pool) and disaggregated ones.
    opts = deployments.options_offered(t)
    for vendor in ("AMD", "NVIDIA"):
        v = opts[opts["vendor"] == vendor]
        assert v["option_ep_tok_s_gpu"].notna().any(), vendor
        assert v["option_disagg_ep_tok_s_gpu"].notna().any(), vendor
        assert v["option_disagg_tp_tok_s_gpu"].notna().any(), vendor


def test_chosen_deployment_is_the_best_family_or_a_measured_point():
    """The tiers row's throughput is the best of its families (or a measured point above them)."""
    sc = params.load_scenario(paths.PARAMS / "scenarios" / "moe-deepseek-r1-rack-scale.yaml")
    t = inference.evaluate_tiers(sc, with_cost=False)
    t = t[t["feasible"]]
    fams = t[[c for c, _ in deployments.FAMILY_COLUMNS.values()]].max(axis=1)
    measured = t["deployment_basis"] == "measured"
    assert (t.loc[~measured, "tokens_per_s_per_gpu"] - fams[~measured]).abs().max() < 1e-6
    assert (t.loc[measured, "tokens_per_s_per_gpu"] >= fams[measured] - 1e-6).all()
    for fam, (col, name) in deployments.FAMILY_COLUMNS.items():
        won = (t["tokens_per_s_per_gpu"] - t[col]).abs() < 1e-9
        assert (t.loc[won & ~measured, "deployment"] == t.loc[won & ~measured, name]).all(), fam


def test_unmeasured_stack_is_labelled_modelled():
    cal = deployment_fit.default_calibration()
    f = cal.lookup("AMD", "MI325X", "fp8", "disaggregated", "deepseek-r1")
    assert f.label == deployments.MODELLED
    g = cal.lookup("AMD", "MI355X", "fp8", "disaggregated", "deepseek-r1")
    assert g.label == deployments.MEASURED


def test_an_unmeasured_part_takes_its_generations_efficiency_before_its_vendors():
    implied = deployment_fit.implied()
    mi300x = implied[(implied["accelerator"] == "MI300X") & (implied["precision"] == "fp8")]
    assert set(mi300x["generation"]) == {"CDNA 3"} and (mi300x["kind"] == "aggregated").all()
    cal = deployment_fit.fit_calibration(implied[implied["accelerator"] != "MI300X"])
    args = ("AMD", "MI300X", "fp8", "aggregated", "deepseek-r1")
    sister = cal._pick("accelerator", accelerator="MI325X", precision="fp8", kind="aggregated")
    vendor = cal._pick("vendor", vendor="AMD", kind="aggregated")
    assert len(sister) == len(vendor) == 1
    assert sister["n"].iloc[0] >= deployment_fit.GENERATION_MIN_POINTS
    # MI325X alone is CDNA 3's fp8 aggregated measurement: MI300X takes it, not the pool
    # that CDNA 4's MI355X dominates; without a generation it takes the vendor's.
    f = cal.lookup(*args, generation="CDNA 3")
    assert f.label == deployments.MODELLED
    assert f.log_eta_d == pytest.approx(float(sister["log_eta_d"].iloc[0]))
    assert f.eta_p == pytest.approx(float(sister["eta_p"].iloc[0]))
    pooled = cal.lookup(*args)
    assert pooled.log_eta_d == pytest.approx(float(vendor["log_eta_d"].iloc[0]))
    assert abs(f.log_eta_d - pooled.log_eta_d) > 0.1
    # A generation with fewer points than the minimum does not stand in for the vendor.
    few = implied[(implied["accelerator"] != "MI300X")]
    few = few[~((few["accelerator"] == "MI325X") & (few.index % 4 != 0))]
    assert 0 < ((few["accelerator"] == "MI325X").sum()) < deployment_fit.GENERATION_MIN_POINTS
    thin = deployment_fit.fit_calibration(few)
    g = thin.lookup(*args, generation="CDNA 3")
    assert g.log_eta_d == pytest.approx(thin.lookup(*args).log_eta_d)
    # The other vendor's parts of a like-named generation never stand in.
    other = cal.lookup("NVIDIA", "X", "fp8", "aggregated", "deepseek-r1", generation="CDNA 3")
    assert (
        other.log_eta_d == cal.lookup("NVIDIA", "X", "fp8", "aggregated", "deepseek-r1").log_eta_d
    )


def test_the_part_held_out_check_and_the_tiers_look_up_the_generation():
    # The check's fold predicts each point through _point_factors: MI300X held out whole
    # took AMD's pool, CDNA 4 included, and came out a median 36 % high.
    held = deployment_fit.held_out("aggregated", "cell")
    mi300x = held[held["accelerator"] == "MI300X"]
    assert len(mi300x) > 50 and mi300x["ape_pct"].median() < 25.0
    # A tier option of MI350X (no measurement of its own) takes MI355X's, its die's.
    cal = deployment_fit.default_calibration()
    spec = resolve(None).specs.set_index("accelerator").loc["MI350X"].copy()
    spec["accelerator"] = "MI350X"
    req = deployments.Request("deepseek-r1", "fp8", 1024.0, 1024.0)
    got = deployments._factors_for(cal, spec, req)["aggregated"]
    mi355x = cal._pick("accelerator", accelerator="MI355X", precision="fp8", kind="aggregated")
    assert got.label == deployments.MODELLED
    assert got.log_eta_d == pytest.approx(float(mi355x["log_eta_d"].iloc[0]))


def test_amd_disaggregated_points_are_measured():
    ev = deployment_fit.disaggregation_evidence(deployment_fit.implied())
    amd = ev.set_index("vendor").loc["AMD"]
    assert amd["disaggregated_points"] > 0
    assert "mori-sglang" in amd["frameworks"]
    assert "contradicted by measurement" in deployment_fit.disaggregation_verdict(ev)


def test_rack_scale_table_prices_per_rack():
    sc = params.load_scenario(paths.PARAMS / "default.yaml")
    from analysis import tco

    racks = deployments.rack_scale_table(
        data.load_specs(),
        data.load_table("purchase_prices"),
        data.load_table("facility"),
        tco.price_rule(sc),
        sc.accelerators,
    )
    r = racks.set_index("accelerator").loc["GB300"]
    assert r["scaleup_domain_gpus"] == 72
    assert r["rack_price_usd_low"] == pytest.approx(51400 * 72)
    assert r["rack_hour_usd"] == pytest.approx(r["gpu_hour_usd"] * 72)


BUNDLED = sorted(paths.PARAMS.glob("scenarios/*.yaml")) + [paths.PARAMS / "default.yaml"]


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_fleet_plan_for_every_bundled_scenario(path):
    sc = params.load_scenario(path)
    tiers = inference.evaluate_tiers(sc, with_cost=False)
    train = training.evaluate_training(sc)
    res = fleet.compare_plans(sc, tiers, train, data.load_assumptions())
    assert res is not None
    assert list(res.plans["plan"]) == list(fleet.PLANS)
    assert res.plans["p_cheapest"].sum() == pytest.approx(1.0)
    assert (res.split_items["cost_usd"] > 0).all()
    keys = fleet.key_results(res)
    assert keys["plan_cheapest"] in fleet.PLANS
    line = fleet.summary_line(keys)
    assert res.cheapest in line and "nan" not in line.lower()


def test_split_costs_need_their_register_entries():
    reg = data.load_assumptions()
    with pytest.raises(ValueError, match="A-split-stack-engineers"):
        fleet.split_assumptions(reg[reg["id"] != "A-split-stack-engineers"])


def test_split_extras_scale_with_the_register():
    sc = params.load_scenario(paths.PARAMS / "ci.yaml")
    tiers = inference.evaluate_tiers(sc, with_cost=False)
    train = training.evaluate_training(sc)
    reg = data.load_assumptions()
    zero = reg.copy()
    split = zero["id"].isin(fleet.SPLIT_ASSUMPTIONS.values())
    zero.loc[split, ["value", "low", "high"]] = 0.0
    base = fleet.compare_plans(sc, tiers, train, reg)
    free = fleet.compare_plans(sc, tiers, train, zero)
    assert (free.split_items["cost_usd"] == 0).all()
    cost = base.plans.set_index("plan")["cost_usd"]
    cost0 = free.plans.set_index("plan")["cost_usd"]
    assert cost0["split"] < cost["split"]
    assert cost0["all-AMD"] == pytest.approx(cost["all-AMD"])
    assert isinstance(base.plans, pd.DataFrame)


# --- the measured envelope (the modelled options may not outrun the measurements) -----------


def _envelope(margin=0.2):
    from analysis.inference.envelope import Envelope

    pts = pd.DataFrame(
        {
            "out_gpu": [100.0, 300.0, 250.0, 600.0],
            "p99_tpot_ms": [10.0, 20.0, 22.0, 45.0],
            "median_tpot_ms": [9.0, 19.0, 21.0, 40.0],
            "median_ttft_ms": [100.0, 200.0, 200.0, 4000.0],
            "conc": [4.0, 64.0, 64.0, 512.0],
            "deployment": ["a", "b", "c", "d"],
            "decode_gpus": [8.0, 8.0, 8.0, 16.0],
        }
    )
    return Envelope(pts, margin)


def test_envelope_cap_is_the_best_point_at_equal_or_tighter_tpot():
    env = _envelope(0.2)
    cap = env.cap_at(np.array([5.0, 10.0, 21.0, 30.0, 40.0, 41.0]))
    # 5 ms: tighter than every point -> the tightest point bounds it; 21 ms: best of the
    # 10 and 20 ms points; beyond the sweep's reach (median 40 ms): no bound.
    assert cap[:5] == pytest.approx([120.0, 120.0, 360.0, 360.0, 360.0])
    assert np.isinf(cap[5])
    best = env.best(25.0, 3000.0)
    assert best["tokens_per_s_per_gpu"] == 300.0 and best["basis"] == deployments.MEASURED_POINT
    assert env.best(50.0, 3000.0)["deployment"] == "b"  # the 600 point misses the TTFT bound
    assert env.best(5.0, None) is None


def test_best_options_never_beat_the_envelope_by_more_than_its_margin():
    from analysis.inference import envelope

    sc = params.load_scenario(paths.PARAMS / "scenarios" / "moe-deepseek-r1-rack-scale.yaml")
    inp = data.default_inputs()
    t = inference.evaluate_tiers(sc, with_cost=False, inputs=inp)
    layouts = envelope.measured_layouts(inp.table("inferencex"))
    inf = sc.inference
    req = deployments.Request(inf.model, inf.precision, float(inf.isl), float(inf.osl))
    margins = deployment_fit.validated_margins(inp)
    checked = 0
    for r in t[t["feasible"]].itertuples(index=False):
        env = envelope.envelopes(layouts, r.accelerator, req, margins, r.vendor)
        e = env.get(r.deployment_kind)
        if e is None or r.deployment_basis == deployments.MEASURED_POINT:
            continue
        # the chosen point's p99 TPOT is within the tier's bound, so the envelope at the
        # bound bounds it
        assert r.tokens_per_s_per_gpu <= float(e.cap_at(r.tpot_ms_max)[0]) * (1 + 1e-9)
        checked += 1
    assert checked >= 5
    # the case the review flagged: GB200 under 25 ms stays within NVIDIA's margin of the
    # best measured GB200 disaggregated point (about 1.8k tokens/s per GPU)
    gb = t[(t["accelerator"] == "GB200") & (t["tier_index"] == 0)].iloc[0]
    e = envelope.envelopes(layouts, "GB200", req, margins, "NVIDIA")["disaggregated"]
    best = e.best(25.0, 3000.0)["tokens_per_s_per_gpu"]
    assert gb["tokens_per_s_per_gpu"] <= best * (1 + margins["NVIDIA"]) + 1e-6


def test_layouts_are_not_wider_than_the_widest_measured():
    from analysis.inference import envelope

    sc = params.load_scenario(paths.PARAMS / "scenarios" / "moe-deepseek-r1-rack-scale.yaml")
    inp = data.default_inputs()
    t = inference.evaluate_tiers(sc, with_cost=False, inputs=inp)
    layouts = envelope.measured_layouts(inp.table("inferencex"))
    for r in t[t["deployment"].str.contains("EP", na=False)].itertuples(index=False):
        lim = envelope.layout_limits(layouts, r.accelerator, r.vendor, sc.inference.model)
        assert r.tp <= lim.decode_ep_gpus, (r.accelerator, r.deployment)
        if str(r.deployment).startswith("expert-parallel"):
            assert r.tp <= lim.aggregated_ep_gpus, (r.accelerator, r.deployment)
    amd = envelope.layout_limits(layouts, "MI455X", "AMD", "deepseek-r1")
    assert (
        amd.decode_ep_gpus
        == layouts.loc[(layouts["vendor"] == "AMD") & layouts["decode_is_ep"], "decode_gpus"].max()
    )


def test_evidence_key_results_reads_each_vendor_row() -> None:
    ev = pd.DataFrame(
        {
            "vendor": ["AMD", "NVIDIA"],
            "disaggregated_points": [3, 7],
            "median_gain_pct": [-2.5, 10.0],
        }
    )
    assert deployment_fit.evidence_key_results(ev) == {
        "disagg_amd_points": 3,
        "disagg_nvidia_points": 7,
        "disagg_gain_pct_AMD": -2.5,
        "disagg_gain_pct_NVIDIA": 10.0,
    }


def test_expert_parallel_decode_step_by_hand():
    # EP8 inside the 8-GPU domain, 4 sequences decoding (disaggregated): each GPU holds
    # the 2 GB dense part and one of the 8 experts (1 GB); a token routes to k = 1 expert,
    # so a GPU reads its expert only if one of the 4 tokens hits it: 1 - (7/8)^4.
    t = deployments.decode_step(
        HW,
        MOE,
        precision="fp8",
        isl=1000,
        osl=1000,
        layout=Layout(8, ep=True),
        batch=np.array([4.0]),
        aggregated=False,
    )
    hit = 1.0 - (7.0 / 8.0) ** 4
    weights = (2e9 + 1e9 * hit) / 1e12
    kv = (4 / 8) * 1500 * 500 / 1e12  # DP attention: half a sequence per GPU, fp8 KV
    # Dispatch + combine per layer: T/g tokens x k x hidden x 1.5 B, 7/8 remote, 400 GB/s.
    a2a = 10 * 2 * (4 / 8) * 1 * 1000 * 1.5 * (7 / 8) / 400e9
    assert t["scaled"][0] == pytest.approx(weights + kv + a2a, rel=1e-9)
    # Fixed: the step overhead and one latency per dispatch and per combine per layer.
    lat = 2 * 10 * deployments.A2A_LATENCY_S["scaleup"]
    assert t["fixed"][0] == pytest.approx(inference.STEP_OVERHEAD_S + lat)
    # More sequences touch more experts: at 64 tokens every GPU reads its expert.
    big = deployments.decode_step(
        HW,
        MOE,
        precision="fp8",
        isl=1000,
        osl=1000,
        layout=Layout(8, ep=True),
        batch=np.array([4.0, 64.0]),
        aggregated=False,
    )
    assert big["scaled"][1] > big["scaled"][0]
    assert big["scaled"][1] == pytest.approx(
        (2e9 + 1e9 * (1 - (7 / 8) ** 64)) / 1e12 + 8 * 1500 * 500 / 1e12 + 16 * a2a, rel=1e-9
    )


def test_all_to_all_latency_does_not_grow_with_the_peers_inside_the_domain():
    tokens = np.array([8.0])
    _, lat2 = deployments._comm(HW, MOE, Layout(2, ep=True), tokens)
    _, lat8 = deployments._comm(HW, MOE, Layout(8, ep=True), tokens)
    _, lat16 = deployments._comm(HW, MOE, Layout(16, ep=True), tokens)
    assert lat2 == lat8 == pytest.approx(2 * 10 * deployments.A2A_LATENCY_S["scaleup"])
    assert lat16 == pytest.approx(2 * 10 * deployments.A2A_LATENCY_S["scaleout"])


def test_decoding_fraction_is_littles_law():
    # 1024 tokens at 20 ms = 20.48 s decoding; 20.48 s of TTFT: half the loop decodes.
    assert deployment_fit.decoding_fraction(1024, 0.02, 20.48) == pytest.approx(0.5)
    assert deployment_fit.decoding_fraction(1024, 0.02, 0.0) == 1.0


def _synthetic_implied(overhead: float) -> pd.DataFrame:
    """Rows of two stacks whose TPOT is fixed + layers x overhead + scaled / eta."""
    rows = []
    for stack, eta in (("a", 0.5), ("b", 0.25)):
        for scaled in (0.5e-3, 2e-3, 8e-3, 20e-3):
            fixed = 2e-3
            tpot = fixed + 60 * overhead + scaled / eta
            rows.append(
                {
                    "vendor": "X",
                    "accelerator": stack,
                    "framework": "f",
                    "precision": "fp8",
                    "kind": "disaggregated",
                    "model": "m",
                    "d_fixed": fixed,
                    "d_scaled": scaled,
                    "layers": 60.0,
                    "median_tpot_ms": tpot * 1e3,
                }
            )
    return pd.DataFrame(rows)


def test_layer_overhead_is_recovered_from_the_stacks_tpot():
    for overhead in (0.0, 40e-6, 100e-6):
        fitted = deployment_fit.fit_layer_overhead(_synthetic_implied(overhead))
        assert fitted[("X", "disaggregated")] == pytest.approx(overhead, abs=1e-9)


def test_held_out_prediction_does_not_read_its_own_measurements():
    implied = deployment_fit.implied()
    keys = list(deployment_fit.CONFIG_KEYS)
    codes = implied[keys].astype(str).agg(" | ".join, axis=1)
    disagg = codes[implied["kind"] == "disaggregated"]
    cfg = disagg.value_counts().index[0]  # the configuration with the most rows
    held = implied[codes == cfg]
    cal = deployment_fit.fit_calibration(implied[codes != cfg])
    base = deployment_fit.predict_points(held, cal)
    # Any measured value of the held-out rows may change: the prediction may not.
    moved = held.assign(
        median_tpot_ms=held["median_tpot_ms"] * 2.0,
        median_ttft_ms=held["median_ttft_ms"] * 3.0,
        tput_per_gpu=held["tput_per_gpu"] * 0.5,
        eta_d=np.nan,
        eta_p=np.nan,
        eta_c=np.nan,
        decoding=0.1,
    )
    assert np.isfinite(base).all()
    np.testing.assert_array_equal(deployment_fit.predict_points(moved, cal), base)


def test_envelope_cap_honours_the_ttft_bound():
    env = _envelope(0.0)
    # At 21 ms the 300 point (TTFT 200 ms) bounds the model without a TTFT bound ...
    assert env.cap_at(np.array([21.0]))[0] == pytest.approx(300.0)
    # ... but not in a tier that bounds TTFT at 150 ms: the 100 point (TTFT 100 ms) does.
    assert env.cap_at(np.array([21.0]), 150.0)[0] == pytest.approx(100.0)
    assert env.cap_at(np.array([21.0]), 3000.0)[0] == pytest.approx(300.0)
    # No point meets a 50 ms TTFT: the TPOT envelope alone applies.
    assert env.cap_at(np.array([21.0]), 50.0)[0] == pytest.approx(300.0)


def test_an_aggregated_run_counts_the_gpus_it_ran_on():
    # InferenceX records an aggregated expert-parallel run's GPUs as tp x ep; Little's law
    # on the rows says the run used max(tp, ep) GPUs (a worker), as a TP-only run does.
    inp = resolve(None)
    raw = inp.table("inferencex")
    raw = raw[raw["spec_method"].astype(str) == "none"]
    agg = raw[(raw["disagg"].astype(int) == 0) & (raw["decode_ep"].astype(int) > 1)]
    assert (agg["num_decode_gpu"] == agg["decode_tp"] * agg["decode_ep"]).all()  # as recorded
    f = agg.astype(dict.fromkeys(("conc", "isl", "osl", "median_tpot_ms", "median_ttft_ms"), float))
    rate = f["conc"] / (f["osl"] * f["median_tpot_ms"] / 1e3 + f["median_ttft_ms"] / 1e3)
    gpus = rate * (f["isl"] + f["osl"]) / f["tput_per_gpu"].astype(float)
    worker = np.maximum(agg["decode_tp"], agg["decode_ep"]).astype(float)
    assert float((gpus / worker).median()) == pytest.approx(1.0, abs=0.05)
    points = deployment_fit.measured_points(raw)
    a = points[points["kind"] == "aggregated"]
    mx = np.maximum(a["decode_tp"], a["decode_ep"])
    assert (a["num_decode_gpu"] == mx).all() and (a["num_prefill_gpu"] == mx).all()
    # Every other row (disaggregated pools, TP-only aggregated runs) keeps its count.
    tagged = deployment_fit.measured_points(raw.assign(row=np.arange(len(raw))))
    src = raw.reset_index(drop=True).iloc[tagged["row"].to_numpy()]
    fixed = (tagged["kind"] == "aggregated") & (tagged["decode_ep"].astype(int) > 1)
    assert fixed.any() and (~fixed).any()
    for col in ("num_decode_gpu", "num_prefill_gpu"):
        np.testing.assert_array_equal(
            tagged.loc[~fixed, col].to_numpy(int), src.loc[(~fixed).to_numpy(), col].to_numpy(int)
        )


def test_the_deployment_model_fits_expert_parallel_aggregated_runs_in_sample():
    # Guards the GPU count above: read as tp x ep, NVIDIA's expert-parallel aggregated
    # runs came out 75-87 % below measured even in sample.
    imp = deployment_fit.implied()
    cal = deployment_fit.fit_calibration(imp)
    ep = imp[(imp["kind"] == "aggregated") & (imp["decode_ep"].astype(int) > 1)]
    ep = ep.reset_index(drop=True)
    signed = deployment_fit.predict_points(ep, cal) / ep["tput_per_gpu"].astype(float) - 1.0
    assert abs(float(np.nanmedian(signed))) < 0.2


def test_an_aggregated_expert_parallel_option_is_held_to_the_widest_aggregated_worker():
    from analysis.inference import envelope
    from analysis.inference.deployments import Layout

    layouts = pd.DataFrame(
        {
            "model": "m",
            "accelerator": ["N1", "N1", "N2", "A1"],
            "vendor": ["NVIDIA", "NVIDIA", "NVIDIA", "AMD"],
            "kind": ["disaggregated", "aggregated", "disaggregated", "disaggregated"],
            "decode_is_ep": [True, True, True, True],
            "decode_gpus": [48.0, 8.0, 32.0, 16.0],
            "prefill_gpus_worker": [8.0, 8.0, 4.0, 4.0],
        }
    )
    n2 = envelope.layout_limits(layouts, "N2", "NVIDIA", "m")  # no aggregated run of its own
    assert n2.decode_ep_gpus == 32 and n2.aggregated_ep_gpus == 8  # vendor's aggregated
    assert n2.allows(Layout(32, ep=True), Layout(4, ep=False))
    assert not n2.allows(Layout(16, ep=True), None)
    assert n2.allows(Layout(8, ep=True), None)
    # An aggregated TP run counts as an aggregated worker too.
    amd_tp = layouts.assign(decode_is_ep=[True, True, True, False], kind="aggregated")
    a1 = envelope.layout_limits(amd_tp.iloc[[0, 1, 2]], "A1", "AMD", "m")  # AMD: nothing
    assert a1.aggregated_ep_gpus == a1.decode_ep_gpus == float("inf")
    with_tp = pd.concat([layouts, amd_tp.iloc[[3]].assign(decode_gpus=4.0)], ignore_index=True)
    assert envelope.layout_limits(with_tp, "A1", "AMD", "m").aggregated_ep_gpus == 4
    # The decode limit caps the aggregated one: a part whose own widest EP worker is 4.
    n3 = pd.concat(
        [layouts, layouts.iloc[[2]].assign(accelerator="N3", decode_gpus=4.0)], ignore_index=True
    )
    lim = envelope.layout_limits(n3, "N3", "NVIDIA", "m")
    assert lim.decode_ep_gpus == 4 and lim.aggregated_ep_gpus == 4


def test_aggregated_run_gpus_replaces_only_a_tp_x_ep_count():
    got = aggregated_run_gpus([8, 4, 8, 8, 8], [8, 4, 1, 8, 8], [64, 16, 8, 8, 128])
    # TP8 EP8 as 64 -> 8; TP4 EP4 as 16 -> 4; TP-only, an already-right 8 and a
    # multi-replica 128 (not tp x ep) stand.
    assert got.tolist() == [8, 4, 8, 8, 128]
    assert int(aggregated_run_gpus(8, 8, 64)) == 8
