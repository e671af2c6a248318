"""Issue 16: the roofline on hand-worked cases, and validation on rows it did not fit."""

import numpy as np
import pandas as pd
import pytest

from analysis import data, inference, inference_latency

HW = {
    "bw_tbps": 1.0,
    "peak_tflops": 1000.0,
    "attn_peak_tflops": 1000.0,
    "mem_gb": 1000.0,
    "link_gbps": 900.0,
    "domain": 8.0,
    "scaleout_gbps": 400.0,
}


def _model(**kw) -> pd.Series:
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
    return pd.Series(base)


def _step(mp, **kw):
    t = inference._terms(
        HW, mp, precision="bf16", isl=100.0, osl=100.0, gpus=1.0, concurrency=np.array([1.0]), **kw
    )
    return float(t["step_fixed"][0]), float(t["step_scaled"][0]), t


def test_dense_roofline_by_hand():
    # One sequence, ISL = OSL = 100: a step carries 1 decode + 1 prompt token (B x ISL/OSL).
    # Weights 10e9 x 2 B over 1 TB/s = 20 ms (FLOPs 2 x 10e9 x 2 / 1e15 = 40 us: bandwidth
    # bound); KV: 150 tokens of context x (2 x 10 layers x 8 heads x 128 x 2 B) = 6.144 MB
    # = 6.144 us. Fixed: the 1 ms step overhead (TP1: no all-reduce).
    fixed, scaled, _ = _step(inference.model_params(_model()))
    assert fixed == pytest.approx(inference.STEP_OVERHEAD_S)
    assert scaled == pytest.approx(0.02 + 6.144e-6, rel=1e-9)


def test_moe_roofline_by_hand():
    # 100 B total, 10 B active, 10 experts, top-1: no shared part (10 = 0 + 100 x 0.1).
    # ISL = OSL = 100 at one sequence: a step decodes 1 token and 1 prompt token enters per
    # step; the prompt (100 tokens, under the 8192-token chunk budget) is prefilled as one
    # chunk, so one step in 100 reads the experts of 101 tokens, the others those of 1:
    # touched = 0.1 + (1/100) x ((1 - 0.9^101) - 0.1) = 0.10899976 (spread over every step,
    # 2 tokens a step, it was 1 - 0.9^2 = 19 %). Weights 100e9 x 0.10899976 x 2 B over
    # 1 TB/s = 21.799952 ms; FLOPs stay linear in the 2 tokens (2 x 10e9 x 2 = 40 us: bandwidth
    # bound). 10 layers x 10 experts x 0.10899976 = 10.899976 grouped-GEMM work items.
    mp = inference.model_params(
        _model(total_params_b=100.0, active_params_b=10.0, experts=10, active_experts=1)
    )
    assert mp["shared_b"] == pytest.approx(0.0, abs=1e-9)
    assert mp["route_frac"] == pytest.approx(0.1)
    touched = 0.1 + (1.0 - 0.9**101 - 0.1) / 100.0
    assert touched == pytest.approx(0.10899976, rel=1e-7)
    fixed, scaled, t = _step(mp)
    assert scaled == pytest.approx(100e9 * touched * 2.0 / 1e12 + 6.144e-6, rel=1e-9)
    assert float(t["parts"]["lin_bw"][0]) == pytest.approx(0.021799952, rel=1e-7)
    assert float(t["parts"]["lin_c"][0] + t["parts"]["moe_c"][0]) == pytest.approx(40e-6)
    assert float(t["parts"]["expert_gemms"][0]) == pytest.approx(100.0 * touched)
    # The fitted per-expert overhead is charged per work item, unscaled by eta.
    fixed_e, _, _ = _step(mp)
    hw = dict(HW, overhead_expert_s=1e-6)
    t2 = inference._terms(
        hw, mp, precision="bf16", isl=100.0, osl=100.0, gpus=1.0, concurrency=np.array([1.0])
    )
    assert float(t2["step_fixed"][0]) - fixed_e == pytest.approx(100.0 * touched * 1e-6)
    # A prompt alone (TTFT's prefill pass) reads the experts of its 100 tokens at once.
    assert float(np.ravel(t["prefill_scaled"])[0]) >= 100e9 * (1.0 - 0.9**100) * 2.0 / 1e12


def test_checkpoint_bf16_weights_by_hand():
    # A dense 10 B model whose FP4 checkpoints keep 2 B (NVIDIA) and 6 B (AMD) in BF16,
    # 1 B at FP8. One step at fp4 reads 8 x 0.5625 + 2 x 2 = 8.5 GB on NVIDIA's checkpoint
    # (8.5 ms at 1 TB/s), 4 x 0.5625 + 6 x 2 = 14.25 GB on AMD's; at fp8 9 x 1 + 1 x 2 =
    # 11 GB on both; bf16 reads 20 GB whatever the columns say. Weights resident: the same.
    m = _model(fp8_bf16_params_b=1.0, fp4_bf16_params_nvidia_b=2.0, fp4_bf16_params_amd_b=6.0)
    mp = inference.model_params(m)

    def weights(precision, amd):
        hw = dict(HW, amd=amd)
        t = inference._terms(
            hw,
            mp,
            precision=precision,
            isl=100.0,
            osl=100.0,
            gpus=1.0,
            concurrency=np.array([1.0]),
        )
        return float(t["parts"]["lin_bw"][0]), float(np.ravel(t["weights_gb_per_gpu"])[0])

    assert weights("fp4", 0.0) == pytest.approx((8.5e-3, 8.5))
    assert weights("fp4", 1.0) == pytest.approx((14.25e-3, 14.25))
    assert weights("fp8", 0.0) == pytest.approx((11e-3, 11.0))
    assert weights("fp8", 1.0) == pytest.approx((11e-3, 11.0))
    assert weights("bf16", 1.0) == pytest.approx((20e-3, 20.0))
    # Empty columns (every other model): every weight at the format's width.
    plain = inference.model_params(_model())
    assert inference.shared_weight_bytes(plain, {"amd": 1.0}, "fp4") == pytest.approx(5.625e9)


def test_every_stacking_path_carries_every_hardware_key():
    # The MLPerf rows and the tiers' grid stack hardware_params_at's dicts by _HW_KEYS; a
    # key missing there reads as _terms' default (an AMD part then served NVIDIA's
    # checkpoint bytes).
    from analysis.inference import _HW_KEYS, hardware_params_at

    spec = data.load_specs().set_index("accelerator").loc["MI355X"]
    spec["accelerator"] = "MI355X"
    hw = hardware_params_at(spec, "fp4", inference.ROOFLINE_SHAPE)
    assert set(hw) == set(_HW_KEYS)
    assert hw["amd"] == 1.0


def test_deepseek_checkpoints_keep_their_sourced_bf16_weights():
    # The counts behind models.csv's columns, from DeepSeek-R1's config shapes: output
    # head 7168 x 129280, router 58 x 256 x 7168, MLA projections per layer q_a 7168 x 1536,
    # q_b 1536 x 128 x 192, kv_a 7168 x 576, kv_b 512 x 128 x 256, wo 128 x 128 x 7168.
    head, router = 7168 * 129280, 58 * 256 * 7168
    proj = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
    wo = 128 * 128 * 7168
    row = data.get_model("deepseek-r1")
    assert row["fp8_bf16_params_b"] == pytest.approx((head + router) / 1e9, abs=0.005)
    nvidia = (head + router + 61 * proj) / 1e9  # NVFP4 v2 quantizes wo
    assert row["fp4_bf16_params_nvidia_b"] == pytest.approx(nvidia, abs=0.005)
    amd = (head + router + 61 * (proj + wo)) / 1e9  # MXFP4 excludes all of self_attn
    assert row["fp4_bf16_params_amd_b"] == pytest.approx(amd, abs=0.005)
    for col in ("fp8_bf16_params_b", "fp4_bf16_params_nvidia_b", "fp4_bf16_params_amd_b"):
        assert data.load_models().drop(index=row.name)[col].isna().all(), col


def test_decode_step_reads_prompt_experts_once_per_chunk_deepseek_by_hand():
    # DeepSeek-R1's routing (256 experts, top-8: k/E = 1/32) at 1k/1k and 4 sequences.
    # Decode alone touches 1 - (31/32)^4 = 11.93 % of the experts; 4 prompt tokens enter per
    # step (B x ISL/OSL) and one step in 256 carries a whole 1024-token prompt, touching
    # all but (31/32)^1028 ~ 7e-15 of them: 0.11926 + (4/1024) x (1 - 0.11926) = 12.27 %.
    # Spreading the 4 prompt tokens over every step (8 tokens) would read 22.43 %.
    decode = 1.0 - (31.0 / 32.0) ** 4
    assert decode == pytest.approx(0.1192617, rel=1e-6)
    got = inference.chunked_expert_reads(1.0 / 32.0, 4.0, 4.0, 1024.0)
    assert float(got) == pytest.approx(decode + 4.0 / 1024.0 * (1.0 - decode), rel=1e-9)
    assert float(got) == pytest.approx(0.1227021, rel=1e-6)
    assert float(inference.expert_touched_fraction(1.0 / 32.0, 8.0)) == pytest.approx(0.2243001)
    # No prompt tokens: the decode batch's experts; a chunk every step: b + chunk tokens'.
    assert float(inference.chunked_expert_reads(0.1, 3.0, 0.0, 50.0)) == pytest.approx(1 - 0.9**3)
    assert float(inference.chunked_expert_reads(0.1, 3.0, 50.0, 50.0)) == pytest.approx(1 - 0.9**53)
    # More than one chunk a step (short answers): capped at the spread value, never > 1.
    many = inference.chunked_expert_reads(1.0 / 32.0, 20.0, 3.0 * 8192.0, 8192.0)
    assert float(many) == pytest.approx(float(inference.expert_touched_fraction(1 / 32, 24596.0)))
    assert float(inference.chunked_expert_reads(0.1, 3.0, 20.0, 5.0)) == pytest.approx(1 - 0.9**23)
    # In the roofline: the 16k/1k prompt (twice the 8192-token budget) enters as chunks of
    # 8192 tokens, 64 prompt tokens a step at b = 4, so the step reads 0.11926 + (64/8192)
    # (1 - 0.11926) of the routed weights (a whole-prompt chunk would give 64/16384; spread:
    # 68 tokens, 88 %). 1e9 routed params x 2 B over 1 TB/s.
    mp = inference.model_params(
        _model(
            total_params_b=1.0,
            active_params_b=1.0 / 32.0,
            experts=256,
            active_experts=8,
        )
    )
    assert mp["route_frac"] == pytest.approx(1.0 / 32.0)
    t = inference._terms(
        HW, mp, precision="bf16", isl=16384.0, osl=1024.0, gpus=1.0, concurrency=np.array([4.0])
    )
    frac = decode + 64.0 / 8192.0 * (1.0 - decode)
    routed = mp["routed_b"] * 1e9
    shared = mp["shared_b"] * 1e9
    assert float(t["parts"]["lin_bw"][0]) == pytest.approx(
        (shared + routed * frac) * 2.0 / 1e12, rel=1e-9
    )
    assert frac < 0.13 < float(inference.expert_touched_fraction(1.0 / 32.0, 68.0))


def test_dense_decode_step_reads_all_its_weights_whatever_the_prompt():
    # No routed experts: the chunk amortization leaves a dense model's weight reads alone.
    mp = inference.model_params(_model())
    for isl in (100.0, 20000.0):
        t = inference._terms(
            HW, mp, precision="bf16", isl=isl, osl=100.0, gpus=1.0, concurrency=np.array([4.0])
        )
        assert float(t["parts"]["lin_bw"][0]) == pytest.approx(10e9 * 2.0 / 1e12, rel=1e-9)
        assert float(t["parts"]["expert_gemms"][0]) == 0.0


def test_mla_roofline_by_hand():
    # MLA with absorbed projections: 2 x 128 heads x (2 x 512 + 64) = 278,528 FLOPs per
    # (query, context) pair and layer, and the latent cache split by sequence over TP.
    mp = inference.model_params(
        _model(
            attention_heads=128,
            attention_type="mla",
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            kv_bytes_per_token_bf16=10 * (512 + 64) * 2,
        )
    )
    assert mp["attn_flops_pair"] == pytest.approx(278528.0)
    # A prefill worker's fresh prompt in the decompressed (MHA) form: keys of
    # head_dim + rope = 192, values of head_dim = 128, 2 x 128 x (192 + 128) = 81,920.
    assert mp["attn_flops_pair_prefill"] == pytest.approx(81920.0)
    assert float(inference._kv_split(mp, 8)) == 8.0
    _, _, t = _step(mp)
    # 200 pairs (150 decode context + 50 prompt on average) x 10 layers over 1 PFLOP/s.
    assert float(t["parts"]["attn_c"][0]) == pytest.approx(278528.0 * 10 * 200 / 1e15)
    assert float(t["parts"]["attn_bw"][0]) == pytest.approx(150 * 10 * 576 * 2 / 1e12)


def test_gqa_prefill_attends_as_decode_does():
    # Without a latent there is one form: 4 x 32 heads x 128 FLOPs per pair either way.
    mp = inference.model_params(_model(attention_type="gqa"))
    assert mp["attn_flops_pair_prefill"] == mp["attn_flops_pair"] == pytest.approx(16384.0)


def test_sliding_window_attention_by_hand():
    # 10 layers, 5 of them sliding (window 128); ISL = OSL = 1000 at one sequence: 1 decode
    # token and 1 prompt token a step. Full layers: 1500 context pairs (ISL + OSL / 2) for
    # the decode token, 500 (ISL / 2) for the prompt token; sliding layers: 128 each.
    # 4 x 32 heads x 128 = 16,384 FLOPs per pair and layer, over 1 PFLOP/s.
    mp = inference.model_params(_model(sliding_window=128, sliding_window_layers=5))
    t = inference._terms(
        HW, mp, precision="bf16", isl=1000.0, osl=1000.0, gpus=1.0, concurrency=np.array([1.0])
    )
    pairs = 5 * (1500 + 500) + 5 * (128 + 128)
    assert float(t["parts"]["attn_c"][0]) == pytest.approx(16384.0 * pairs / 1e15)
    # An MoE model at prefill cost 3: the prompt token's pairs count 3 times, in the full
    # (3 x 500) and the sliding layers (3 x 128) alike.
    moe = inference.model_params(
        _model(
            total_params_b=100.0,
            active_params_b=10.0,
            experts=10,
            active_experts=1,
            sliding_window=128,
            sliding_window_layers=5,
        )
    )
    t3 = inference._terms(
        {**HW, "prefill_cost": 3.0},
        moe,
        precision="bf16",
        isl=1000.0,
        osl=1000.0,
        gpus=1.0,
        concurrency=np.array([1.0]),
    )
    pairs3 = 5 * (1500 + 3 * 500) + 5 * (128 + 3 * 128)
    assert float(t3["parts"]["attn_c"][0]) == pytest.approx(16384.0 * pairs3 / 1e15)


def test_prefill_cost_scales_the_prompt_tokens_flops_and_nothing_else():
    # MoE: 100 B total, 10 B active, 10 experts, top-1 (no shared part), 8 GPUs. ISL = OSL
    # = 100 at one sequence: 2 tokens a step (1 decode, 1 prompt). At prefill cost 3 the
    # prompt token's FLOPs count 3 times: routed FLOPs 2 x 10e9 x (1 + 3) / 8 over 1 PFLOP/s
    # (2 x 10e9 x 2 / 8 at cost 1); attention pairs 150 decode + 3 x 50 prompt = 300 (200).
    # Bytes do not move: weights read, touched experts, all-reduced activations.
    moe = inference.model_params(
        _model(total_params_b=100.0, active_params_b=10.0, experts=10, active_experts=1)
    )
    hw = {**HW, "prefill_cost": 3.0}
    kw = {"precision": "bf16", "isl": 100.0, "osl": 100.0, "gpus": 8.0}
    one = np.array([1.0])
    t = inference._terms(hw, moe, concurrency=one, **kw)["parts"]
    base = inference._terms(HW, moe, concurrency=one, **kw)["parts"]
    pair = 4.0 * 32 * 128 * 10  # attention FLOPs per pair, all 10 layers
    assert float(t["moe_c"][0]) == pytest.approx(2 * 10e9 * 4 / 8 / 1e15)
    assert float(base["moe_c"][0]) == pytest.approx(2 * 10e9 * 2 / 8 / 1e15)
    assert float(t["attn_c"][0]) == pytest.approx(pair * 300 / 8 / 1e15)
    assert float(base["attn_c"][0]) == pytest.approx(pair * 200 / 8 / 1e15)
    for key in ("lin_bw", "moe_row_c", "attn_bw", "comm", "fixed", "expert_gemms"):
        np.testing.assert_allclose(t[key], base[key], rtol=1e-12, err_msg=key)
    assert float(base["comm"][0]) > 0.0
    # The prompt's own prefill pass (time to first token) of a 20,000-token prompt: its
    # routed FLOPs (2 x 10e9 x 2e4 / 8 = 50 ms at cost 1, over its 25 ms of weights) and
    # attention (2e8 pairs) triple; its all-reduce and reads stay.
    long = {**kw, "isl": 20000.0}
    p3 = float(np.ravel(inference._terms(hw, moe, concurrency=one, **long)["prefill_scaled"])[0])
    p1 = float(np.ravel(inference._terms(HW, moe, concurrency=one, **long)["prefill_scaled"])[0])
    assert p3 - p1 == pytest.approx(2 * (2 * 10e9 * 2e4 / 8 / 1e15 + pair * 2e8 / 8 / 1e15))
    # A dense model ignores it.
    dense = inference.model_params(_model())
    got = inference._terms(hw, dense, concurrency=one, **kw)
    want = inference._terms(HW, dense, concurrency=one, **kw)
    for key in ("step_fixed", "step_scaled", "prefill_scaled"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12)


def _synthetic_sweeps(truth, one_point_per_sweep=False):
    # The bundled InferenceX configurations with TPOTs made by the model at ``truth`` and
    # one efficiency per engine and run date (AMD 0.4, NVIDIA 0.6).
    from analysis.inference.latency import SWEEP_KEYS, _load, point_terms, select

    ix, specs, models = _load(None, None, None, None)
    pts = select(ix, specs, models).reset_index(drop=True)
    if one_point_per_sweep:
        pts = pts.drop_duplicates(list(SWEEP_KEYS)).reset_index(drop=True)
    t = point_terms(pts, specs, models, truth)
    eta = np.where(pts["vendor"] == "AMD", 0.4, 0.6)
    synth = pts.assign(median_tpot_ms=(t["own_fixed"] + t["own_scaled"] / eta) * 1e3)
    return synth, point_terms(synth, specs, models, inference.roofline.ROOFLINE_SHAPE)


def test_fit_shape_recovers_a_known_prefill_cost():
    from analysis.inference.latency import SHAPE_PREFILL_COST_GRID, fit_shape

    truth = inference.ServingShape(
        overhead_layer_s={"AMD": 1e-4, "NVIDIA": 6e-5}, prefill_cost={"AMD": 2.5, "NVIDIA": 2.5}
    )
    got = fit_shape(*_synthetic_sweeps(truth))
    assert 2.5 in SHAPE_PREFILL_COST_GRID
    assert dict(got.prefill_cost) == {"AMD": 2.5, "NVIDIA": 2.5}
    assert got.overhead_layer_s["AMD"] == pytest.approx(1e-4)
    assert got.overhead_layer_s["NVIDIA"] == pytest.approx(6e-5)


def test_prefill_cost_is_identified_across_lengths_not_within_a_sweep():
    # One point per sweep: no sweep has a spread to flatten, so only the comparison of
    # one engine-day's lengths (1k and 8k prompts, 1k and 8k answers) can find the cost
    # (chosen on the within-sweep loss it would be the grid's first, 1). The truth has no
    # overheads, which is also where best() lands when no sweep has a spread.
    from analysis.inference.latency import fit_shape

    truth = inference.ServingShape(prefill_cost={"AMD": 4.0, "NVIDIA": 4.0})
    got = fit_shape(*_synthetic_sweeps(truth, one_point_per_sweep=True))
    assert dict(got.prefill_cost) == {"AMD": 4.0, "NVIDIA": 4.0}


def test_bundled_prefill_cost_is_inside_its_grid():
    from analysis.inference.latency import SHAPE_PREFILL_COST_GRID, fitted_shape

    costs = set(fitted_shape().prefill_cost.values())
    assert len(costs) == 1  # one cost for the workload, every vendor
    assert min(SHAPE_PREFILL_COST_GRID) < costs.pop() < max(SHAPE_PREFILL_COST_GRID)


# --- each scheme's error is computed on rows it did not fit ------------------------------


@pytest.fixture(scope="module")
def mlperf():
    return data.load_table("mlperf_inference")


@pytest.mark.parametrize(
    ("scheme", "key"),
    [
        ("round", "v5.1"),
        ("workload", "AMD | llama2-70b"),
        ("workload", "NVIDIA | llama2-70b"),
        ("accelerator", "MI355X"),
    ],
)
def test_held_out_measurements_do_not_move_their_predictions(mlperf, scheme, key):
    base = inference.validate_against_mlperf(scheme, mlperf=mlperf)
    held = base[base["holdout"] == f"{scheme}: {key}"]
    assert len(held) > 0
    if scheme == "round":
        mask = mlperf["round"] == key
    elif scheme == "accelerator":
        mask = mlperf["accelerator"] == key
    else:
        mask = (mlperf["vendor"] == key.split(" | ")[0]) & mlperf["benchmark"].astype(
            str
        ).str.startswith("llama2-70b")
    moved = mlperf.copy()
    for col in ("result", "result_per_accelerator"):
        moved.loc[mask, col] = moved.loc[mask, col].astype(float) * 0.8
    again = inference.validate_against_mlperf(scheme, mlperf=moved)
    keys = ["round", "accelerator", "benchmark", "scenario", "submitter", "system", "precision"]
    a = held.set_index(keys)["predicted"]
    b = again[again["holdout"] == f"{scheme}: {key}"].set_index(keys)["predicted"]
    common = a.index.intersection(b.index)
    assert len(common) >= 0.8 * len(a)
    np.testing.assert_allclose(b.loc[common].to_numpy(), a.loc[common].to_numpy(), rtol=1e-9)


def test_inferencex_held_out_cell_does_not_move_its_predictions():
    ix = data.load_table("inferencex")
    base = inference_latency.validate(ix)
    cell = (ix["accelerator"] == "MI355X") & (ix["precision"] == "fp8")
    moved = ix.copy()
    moved.loc[cell, "output_tput_per_gpu"] = moved.loc[cell, "output_tput_per_gpu"] * 0.5
    again = inference_latency.validate(moved)
    sel = base["holdout"] == "accelerator x precision: MI355X x fp8"
    assert sel.sum() > 10
    np.testing.assert_allclose(
        again.loc[sel, "predicted"].to_numpy(), base.loc[sel, "predicted"].to_numpy(), rtol=1e-9
    )
    # ... while the measurements it is scored against did move.
    assert (again.loc[sel, "measured"] < base.loc[sel, "measured"]).all()


def test_serving_model_fp4_twins_come_from_the_fold_without_the_fp4_cell():
    # Move everything the shape and level fits read in MI355X's fp4 cell: the fp4 twin of
    # each MI355X fp8 point (the fp4 cell's fold) must not move; the fp8 cell's own
    # predictions (whose fold saw the moved fp4 rows) must.
    ix = data.load_table("inferencex")
    base = inference_latency.validate_serving_model(ix)
    cell = (ix["accelerator"] == "MI355X") & (ix["precision"] == "fp4")
    moved = ix.copy()
    moved.loc[cell, "output_tput_per_gpu"] *= 0.7
    moved.loc[cell, "median_tpot_ms"] *= 1.3
    again = inference_latency.validate_serving_model(moved)
    # (Which fp8 points have a twin follows the moved fp4 sweeps' range: compare those both
    # runs matched; MI355X runs one fp4 configuration a day, so the twin's is the same.)
    twin = (base["accelerator"] == "MI355X").to_numpy()
    twin = (
        twin & base["predicted_fp4"].notna().to_numpy() & again["predicted_fp4"].notna().to_numpy()
    )
    assert twin.sum() > 10
    np.testing.assert_allclose(
        again.loc[twin, "predicted_fp4"], base.loc[twin, "predicted_fp4"], rtol=1e-9
    )
    assert not np.allclose(again.loc[twin, "predicted"], base.loc[twin, "predicted"])


# --- engine layouts: expert parallelism and the attention layout --------------------------


def test_kv_split_follows_the_attention_layout():
    mla = inference.model_params(
        _model(
            attention_heads=128,
            attention_type="mla",
            kv_lora_rank=512,
            qk_rope_head_dim=64,
            kv_bytes_per_token_bf16=10 * 576 * 2,
        )
    )
    gqa = inference.model_params(_model(kv_heads=4))
    # The report's layout (None): MLA by sequence (data-parallel attention), GQA by head.
    assert float(inference._kv_split(mla, 8)) == 8.0
    assert float(inference._kv_split(gqa, 8)) == 4.0
    # Tensor-parallel attention: MLA's one latent on every rank; GQA by head (4 of 8 ranks).
    assert float(inference._kv_split(mla, 8, 0.0)) == 1.0
    assert float(inference._kv_split(gqa, 8, 0.0)) == 4.0
    # Data-parallel attention: each rank holds its own sequences.
    assert float(inference._kv_split(mla, 8, 1.0)) == 8.0
    assert float(inference._kv_split(gqa, 8, 1.0)) == 8.0
    # Not recorded (NaN): the report's layout, element by element.
    got = inference._kv_split(mla, 8, np.array([np.nan, 0.0, 1.0]))
    assert got.tolist() == [8.0, 1.0, 8.0]
    assert inference._kv_split(gqa, 8, np.array([np.nan, 1.0])).tolist() == [4.0, 8.0]
    # In the step: the replicated latent is read (and held) 8 times over.
    kw = {"precision": "bf16", "isl": 100.0, "osl": 100.0, "gpus": 8.0}
    one = np.array([4.0])
    tp = inference._terms(HW, mla, concurrency=one, dp_attention=0.0, **kw)
    dp = inference._terms(HW, mla, concurrency=one, dp_attention=1.0, **kw)
    assert float(tp["parts"]["attn_bw"][0]) == pytest.approx(8 * float(dp["parts"]["attn_bw"][0]))
    assert float(tp["parts"]["attn_bw"][0]) == pytest.approx(4 * 150 * 10 * 576 * 2 / 1e12)
    assert float(tp["max_concurrency"]) < float(dp["max_concurrency"])


def test_expert_parallel_step_waits_for_the_busiest_gpu_by_hand():
    # 100 B total, 10 B active, 10 experts, top-1 (no shared part), 8 GPUs, ISL = OSL = 100
    # at concurrency 1. Expert parallel over 2 GPUs (5 experts each): the busiest reads
    # min(5, 5p + z_2 sqrt(5 p (1 - p))) experts against the mean 5p, p the touched
    # fraction (0.10899976: one chunk of 100 prompt tokens a hundred steps, see
    # test_moe_roofline_by_hand), and carries (a + z_2 sqrt(a)) routed token-activations
    # against a = 2 x 0.1 x 10 / 2 = 1 (2 tokens a step, top-1). z_2 = Phi^-1(1.625 / 2.25).
    from statistics import NormalDist

    mp = inference.model_params(
        _model(total_params_b=100.0, active_params_b=10.0, experts=10, active_experts=1)
    )
    kw = {"precision": "bf16", "isl": 100.0, "osl": 100.0, "gpus": 8.0}
    one = np.array([1.0])
    tp = inference._terms(HW, mp, concurrency=one, **kw)["parts"]
    ep = inference._terms(HW, mp, concurrency=one, ep=2.0, **kw)["parts"]
    p = 0.1 + (1.0 - 0.9**101 - 0.1) / 100.0
    z2 = NormalDist().inv_cdf(1.625 / 2.25)
    w = min(5.0, 5 * p + z2 * np.sqrt(5 * p * (1 - p))) / (5 * p)
    tok = (1.0 + z2 * 1.0) / 1.0
    assert float(ep["lin_bw"][0]) == pytest.approx(float(tp["lin_bw"][0]) * w, rel=1e-9)
    assert float(ep["moe_c"][0]) == pytest.approx(float(tp["moe_c"][0]) * tok, rel=1e-9)
    assert float(ep["moe_row_c"][0]) == pytest.approx(float(tp["moe_row_c"][0]) * w, rel=1e-9)
    # Each expert-parallel GPU runs the grouped GEMMs of its own (busiest) experts only.
    assert float(ep["expert_gemms"][0]) == pytest.approx(10 * 10 * p * w / 2.0, rel=1e-9)
    # Tensor-parallel experts (ep = 1) are the default and balanced; a dense model ignores ep.
    tp1 = inference._terms(HW, mp, concurrency=one, ep=1.0, **kw)["parts"]
    for key in tp:
        np.testing.assert_allclose(tp1[key], tp[key], rtol=0, atol=0, err_msg=key)
    dense = inference.model_params(_model())
    a = inference._terms(HW, dense, concurrency=one, ep=8.0, **kw)
    b = inference._terms(HW, dense, concurrency=one, **kw)
    np.testing.assert_allclose(a["step_scaled"], b["step_scaled"], rtol=0, atol=0)
    # At a large batch every GPU's experts are all touched: the weight imbalance vanishes.
    big = inference._terms(HW, mp, concurrency=np.array([4096.0]), ep=2.0, **kw)["parts"]
    big_tp = inference._terms(HW, mp, concurrency=np.array([4096.0]), **kw)["parts"]
    assert float(big["lin_bw"][0]) == pytest.approx(float(big_tp["lin_bw"][0]))


def test_inferencex_points_are_modelled_at_their_engine_layout():
    # The same sweep point at EP8 and at EP1: at concurrency 4 the expert-parallel step
    # waits for the busiest GPU (1.7x the mean expert reads), so it is slower; with
    # tensor-parallel attention DeepSeek's MLA latent is read on every rank.
    from analysis.inference.latency import _load, point_terms, select

    ix, specs, models = _load(None, None, None, None)
    pts = select(ix, specs, models)
    row = pts[(pts["accelerator"] == "B200") & (pts["conc"] == 4)].iloc[[0]]
    layouts = pd.concat(
        [row.assign(decode_ep=e, decode_dp_attention=d) for e, d in ((1, 0), (8, 0), (1, 1))],
        ignore_index=True,
    )
    t = point_terms(layouts, specs, models, inference.roofline.ROOFLINE_SHAPE)
    assert t["own_parts"]["lin_bw"][1] > 1.3 * t["own_parts"]["lin_bw"][0]
    assert t["own_parts"]["attn_bw"][0] == pytest.approx(8 * t["own_parts"]["attn_bw"][2])


def test_choose_prefill_cost_takes_the_smallest_the_data_cannot_tell_apart():
    from analysis.inference.latency import choose_prefill_cost

    base = np.linspace(0.5, 1.5, 200)
    # A clear minimum at 3: every engine-day is worse at 2 by 0.05 (sum 10, SE 0).
    clear = {2.0: base + 0.05, 3.0: base, 4.0: base + 0.2}
    assert choose_prefill_cost(clear) == 3.0
    # A cost whose summed excess (200 x 0.002 = 0.4) is small against its spread over
    # engine-days (+-0.1 each: SE sqrt(200) x 0.1 = 1.4): taken.
    swing = 0.1 * np.where(np.arange(200) % 2 == 0, 1.0, -1.0)
    tied = {2.0: base + 0.002 + swing, 3.0: base, 4.0: base + 0.2}
    assert choose_prefill_cost(tied) == 2.0
    # The same excess with no spread is a real difference: the minimum stays.
    assert choose_prefill_cost({2.0: base + 0.002, 3.0: base}) == 3.0
    # The smallest such cost: 1 within one SE as well.
    tied[1.0] = base + 0.001 - swing
    assert choose_prefill_cost(tied) == 1.0
    # Larger costs are never preferred for being close; no trials: no cost.
    assert choose_prefill_cost({3.0: base, 4.0: base + 0.001 + swing}) == 3.0
    # ... even when the minimum is not the smallest trial: 6, within one SE of the
    # minimum at 4, is not taken, and 3 (a real excess, no spread) is not either.
    assert choose_prefill_cost({3.0: base + 0.2, 4.0: base, 6.0: base + 0.001 + swing}) == 4.0
    # All trials equal: the smallest. One engine-day has no spread: the minimum.
    assert choose_prefill_cost({2.0: base, 3.0: base, 5.0: base}) == 2.0
    one = np.array([1.0])
    assert choose_prefill_cost({2.0: one + 0.01, 3.0: one}) == 3.0
    assert choose_prefill_cost({}) == 1.0
