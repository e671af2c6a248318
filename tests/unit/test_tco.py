import math

import numpy as np
import pandas as pd
import pytest

from analysis import tco
from analysis.params import Scenario


@pytest.fixture(scope="module")
def sc():
    return Scenario(name="x", title="x")


@pytest.fixture(scope="module")
def inp(sc):
    return tco.cost_inputs(sc)


def test_cost_per_million_tokens_hand_case():
    # $2.00/GPU-hour at 1,000 tokens/s = 3.6M tokens/hour -> $0.5556 per million.
    assert tco.cost_per_million_tokens(2.0, 1000.0) == pytest.approx(2.0 / 3.6, rel=1e-12)
    assert round(tco.cost_per_million_tokens(2.0, 1000.0), 3) == 0.556


def test_crf_textbook_value():
    assert tco.capital_recovery_factor(0.08, 5) == pytest.approx(0.25046, abs=5e-6)
    assert tco.capital_recovery_factor(0.0, 5) == pytest.approx(0.2)


def _point(**over):
    p = {
        "gpu_price_usd": 25_000.0,
        "server_price_usd": np.nan,
        "server_platform_usd": 50_000.0,
        "networking_frac": 0.0,
        "cost_of_capital": 0.0,
        "depreciation_years": 5.0,
        "residual_frac": 0.0,
        "maintenance_frac_per_year": 0.0,
        "server_power_kw": 10.0,
        "idle_power_frac": 0.3,
        "load_power_frac": 0.8,
        "utilization": 1.0,
        "pue": 1.0,
        "electricity_usd_per_kwh": 0.1,
        "colocation_usd_per_kw_month": 0.0,
        "software_usd_per_gpu_year": 0.0,
        "porting_engineer_months": 0.0,
        "engineer_month_usd": 25_000.0,
        "rental_usd_per_gpu_hour": 2.0,
    }
    p.update(over)
    return p


def test_owned_components_hand_computed():
    c = tco.owned_cost_components(_point(), fleet_gpus=1024)
    # Capital: (8 x 25k + 50k) / 5 years / 8760 h / 8 GPUs.
    assert c["capital"] == pytest.approx(250_000 / 5 / 8760 / 8)
    # Power at full utilization: 10 kW x 0.8 / 8 GPUs x $0.10.
    assert c["power"] == pytest.approx(10 * 0.8 / 8 * 0.1)
    assert c["platform"] == pytest.approx(0.0)


def test_platform_cost_amortized_over_fleet_hours():
    p = _point(porting_engineer_months=12.0)
    expected = 12 * 25_000 / (1024 * 8760 * 5)
    assert tco.platform_cost_per_gpu_hour(p, 1024) == pytest.approx(expected)


@pytest.mark.parametrize(
    "key",
    [
        "gpu_price_usd",
        "electricity_usd_per_kwh",
        "rental_usd_per_gpu_hour",
        "porting_engineer_months",
    ],
)
@pytest.mark.parametrize("mode", ["buy", "rent"])
def test_cost_rises_with_prices(key, mode):
    lo = tco.useful_gpu_hour_usd(_point(), mode, 1024)
    hi = tco.useful_gpu_hour_usd(_point(**{key: _point()[key] * 1.5 + 1}), mode, 1024)
    owned_only = {"gpu_price_usd", "electricity_usd_per_kwh"}
    rent_only = key == "rental_usd_per_gpu_hour"
    if (mode == "rent" and key in owned_only) or (mode == "buy" and rent_only):
        assert hi == pytest.approx(lo)
    else:
        assert hi > lo


def test_cost_falls_with_utilization_and_throughput():
    u = np.array([0.3, 0.5, 0.7, 0.9])
    costs = tco.useful_gpu_hour_usd(_point(utilization=u), "buy", 1024)
    assert np.all(np.diff(costs) < 0)
    per_mtok = tco.cost_per_million_tokens(2.0, np.array([100.0, 500.0, 1000.0]))
    assert np.all(np.diff(per_mtok) < 0)


def _quotes():
    return pd.DataFrame(
        {
            "accelerator": ["MI300X", "MI300X", "MI300X", "MI300X", "H100-SXM"],
            "provider_class": [
                "neocloud-list",
                "neocloud-list",
                "hyperscaler-list",
                "marketplace-spot",
                "hyperscaler-list",
            ],
            "term": ["on-demand", "1-year", "on-demand", "spot", "on-demand"],
            "price_usd_per_gpu_hour": [2.0, 1.5, 6.0, 0.5, 10.0],
            "quote_date": ["2026-11-01", "2026-10-01", "2025-12-01", "2026-11-01", "2026-11-01"],
            "access_date": ["2026-11-30"] * 5,
            "source_id": ["a", "b", "c", "d", "e"],
        }
    )


def test_pool_keeps_only_its_class_and_term():
    q = _quotes()
    for pool, expected in [
        ("neocloud-list/on-demand", [2.0]),
        ("neocloud-list/1-year", [1.5]),
        ("hyperscaler-list/on-demand", [6.0]),
        ("marketplace-spot/spot", [0.5]),
    ]:
        prices, _ = tco._rental_pool(q, "MI300X", pool)
        assert list(prices) == expected, pool
    # The hyperscaler quote is ~12 months old: kept, and flagged.
    prices, note = tco._rental_pool(q, "MI300X", "hyperscaler-list/on-demand")
    assert "older than 9 months" in note
    assert tco.pool_quotes(q, "hyperscaler-list/on-demand")["stale"].tolist() == [True, False]


def test_no_quote_in_pool_is_not_cheapest(sc):
    """A part without a quote in the pool is left out, never priced from another pool."""
    q = _quotes()
    prices, note = tco._rental_pool(q, "H100-SXM", "neocloud-list/on-demand")
    assert prices.size == 0 and note == tco.NO_QUOTE
    rent = sc.model_copy(
        update={
            "candidates": ("H100-SXM", "MI300X"),
            "cost": sc.cost.model_copy(
                update={"mode": "rent", "rental_pool": "neocloud-list/on-demand"}
            ),
        }
    )
    inp = tco.cost_inputs(rent, quotes=q)
    rule = tco.price_rule(rent, inp)
    h100 = rule.set_index("accelerator").loc["H100-SXM"]
    assert math.isnan(h100["gpu_hour_usd"]) and h100["price_note"] == tco.NO_QUOTE
    tiers = tco.example_tiers(rent)
    sim = tco.simulate(rent, tiers, None, inputs=inp, n=500)
    # Only MI300X is priced, so it is the cheapest in every tier and no P(AMD cheaper).
    assert set(sim.tier_summary["cheapest"]) == {"MI300X"}
    assert set(sim.tier_summary["cheapest_nvidia"]) == {""}
    assert sim.tier_summary["p_amd_cheaper"].isna().all()
    assert any("H100-SXM" in w and tco.NO_QUOTE in w for w in tco.mode_gaps(rent, inp))
    assert tco.breakeven_table(sim, inp).empty


def test_point_cost_per_mtok_matches_price_rule(sc, inp):
    tiers = tco.example_tiers(sc)
    sim = tco.simulate(sc, tiers, None, inputs=inp, n=500)
    rule = tco.price_rule(sc, inp)
    expected = tco.tier_cost_point(rule, sim.tiers)
    np.testing.assert_allclose(sim.tiers["cost_per_mtok_point"], expected, equal_nan=True)


def test_rack_price_is_per_gpu_of_the_rack(sc):
    gb = sc.model_copy(update={"candidates": ("GB300", "MI355X")})
    inp = tco.cost_inputs(gb)
    # No 8 x GPU + platform for a rack: the per-GPU rack price x 8, nothing added.
    srv = inp.per_acc.at["GB300", "server_price_usd"]
    assert 8 * 51400 <= srv <= 8 * 69400


def test_purchase_rule_drops_judgement_when_sourced_only():
    pp = pd.DataFrame(
        {
            "accelerator": ["H200", "B200", "B200"],
            "unit": ["gpu", "gpu", "server_8gpu"],
            "price_usd_low": [28000.0, 30000.0, 300000.0],
            "price_usd_high": [35000.0, 40000.0, 400000.0],
            "basis": ["judgement", "estimate", "estimate"],
            "source_id": ["tco-judgement", "x", "y"],
        }
    )
    price, srcs = tco.purchase_per_gpu(pp, sourced_only=True)
    assert "H200" not in price.index
    assert price.at["B200", "price"] == 35000.0 and srcs["B200"] == "x"


def test_same_seed_same_results(sc, inp):
    tiers, training = tco.example_tiers(sc), tco.example_training(sc)
    a = tco.simulate(sc, tiers, training, inputs=inp, n=2000)
    b = tco.simulate(sc, tiers, training, inputs=inp, n=2000)
    np.testing.assert_array_equal(a.paid_draws, b.paid_draws)
    pd.testing.assert_frame_equal(a.tier_summary, b.tier_summary)
    sc2 = sc.model_copy(update={"cost": sc.cost.model_copy(update={"seed": 1})})
    c = tco.simulate(sc2, tiers, training, inputs=inp, n=2000)
    assert not np.array_equal(a.paid_draws, c.paid_draws)


def test_mc_intervals_bracket_median(sc, inp):
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=inp, n=4000)
    t = sim.tiers.dropna(subset=["cost_per_mtok"])
    assert (t["cost_per_mtok_p05"] <= t["cost_per_mtok"]).all()
    assert (t["cost_per_mtok"] <= t["cost_per_mtok_p95"]).all()
    p = sim.tier_summary["p_amd_cheaper"]
    assert ((p >= 0) & (p <= 1)).all()


@pytest.mark.parametrize("mode", ["buy", "rent"])
@pytest.mark.parametrize("kind", ["tier", "training"])
def test_breakeven_plugs_back(sc, mode, kind):
    inp = tco.cost_inputs(sc, mode=mode)
    amd, nv = "MI300X", "H100-SXM"
    wa, wn = (800.0, 1000.0) if kind == "tier" else (3.0e5, 2.5e5)
    be = tco.breakeven(inp, amd, nv, wa, wn, kind)
    ref = tco._pair_cost(inp, amd, nv, wa, wn, kind, "amd_gpu_hour_usd", 1.0)
    scale = abs(ref) + 1e-9
    checked = 0
    for var, val in be.items():
        if math.isfinite(val):
            gap = tco._pair_cost(inp, amd, nv, wa, wn, kind, var, val)
            assert abs(gap) <= 1e-3 * scale, var
            checked += 1
    assert checked >= 2


def test_breakeven_relative_within_tenth_percent(sc):
    inp = tco.cost_inputs(sc, mode="buy")
    p = tco._point_params(inp)
    i_n = inp.accelerators.index("H100-SXM")
    wa, wn = 800.0, 1000.0
    price = tco.breakeven(inp, "MI300X", "H100-SXM", wa, wn)["amd_gpu_hour_usd"]
    paid = np.asarray(tco.paid_gpu_hour_usd(p, "buy", inp.fleet_gpus))
    c_amd = tco.cost_per_million_tokens(price / p["utilization"], wa)
    c_nv = tco.cost_per_million_tokens(paid[i_n] / p["utilization"], wn)
    assert c_amd == pytest.approx(c_nv, rel=1e-3)


def test_sensitivity_has_swings(sc, inp):
    df = tco.sensitivity(inp, "MI300X", "H100-SXM", 800.0, 1000.0)
    assert {"utilization", "porting_engineer_months [MI300X]"} <= set(df["input"])
    assert (df["swing"].diff().dropna() <= 1e-12).all()
    assert (df["base_diff"] == df["base_diff"].iloc[0]).all()


def test_override_gpu_hour(sc):
    cost = sc.cost.model_copy(update={"mode": "rent", "gpu_hour_usd": {"MI300X": 0.5}})
    sc2 = sc.model_copy(update={"cost": cost})
    df = tco.gpu_hour_cost(sc2)
    row = df.set_index("accelerator").loc["MI300X"]
    assert row["rent_quote_min"] == row["rent_quote_max"] == 0.5
    assert row["quote_note"] == "scenario override"


def test_key_results_names(sc, inp):
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=inp, n=500)
    keys = tco.key_results(sim, tco.breakeven_table(sim, inp), "buy")
    for k in [
        "mode",
        "gpu_hour_usd_MI300X",
        "tier0_cost_per_mtok_MI300X_p05",
        "tier0_cheapest",
        "tier0_p_amd_cheaper",
        "tier0_breakeven_amd_gpu_hour_usd",
        "train_cost_usd_H200_p95",
        "train_cheapest",
        "train_p_amd_cheaper",
        "train_breakeven_amd_gpu_hour_usd",
    ]:
        assert k in keys, k


def test_tier_sensitivity_uses_tightest_tier_with_both_vendors(sc, inp):
    tiers = tco.example_tiers(sc)
    amd = tiers["accelerator"].str.startswith("MI")
    # No AMD part can meet the tightest tier (as for unsharded BF16 405B under 50 ms).
    blocked = amd & (tiers["tier_index"] == 0)
    tiers.loc[blocked, "feasible"] = False
    tiers.loc[blocked, "tokens_per_s_per_gpu"] = np.nan
    sim = tco.simulate(sc, tiers, tco.example_training(sc), inputs=inp, n=500)
    title, sens = tco.tier_sensitivity(sim, inp)
    second = sim.tier_summary.loc[sim.tier_summary["tier_index"] == 1, "tier"].iloc[0]
    assert f"({second})" in title
    assert not sens.empty


def test_tier_sensitivity_without_any_comparable_tier(sc, inp):
    tiers = tco.example_tiers(sc)
    amd = tiers["accelerator"].str.startswith("MI")
    tiers.loc[amd, "feasible"] = False
    tiers.loc[amd, "tokens_per_s_per_gpu"] = np.nan
    sim = tco.simulate(sc, tiers, tco.example_training(sc), inputs=inp, n=500)
    title, sens = tco.tier_sensitivity(sim, inp)
    assert sens.empty
    assert "both vendors" in title


def _with_mode(sc, mode):
    return sc.model_copy(update={"cost": sc.cost.model_copy(update={"mode": mode})})


@pytest.mark.parametrize("mode", ["buy", "rent"])
def test_scenario_inputs_selects_the_scenarios_mode(sc, mode):
    selected, buy, rent = tco.scenario_inputs(_with_mode(sc, mode))
    assert (buy.mode, rent.mode) == ("buy", "rent")
    assert selected is (buy if mode == "buy" else rent)
    # Same values and ranges in both modes: only the mode differs.
    pd.testing.assert_frame_equal(buy.per_acc, rent.per_acc)
    pd.testing.assert_frame_equal(buy.globals, rent.globals)


def test_rent_simulation_reuses_a_renting_scenarios_run(sc):
    rent_sc = _with_mode(sc, "rent")
    _, _, rent = tco.scenario_inputs(rent_sc)
    tiers = tco.example_tiers(rent_sc)
    sim = tco.simulate(rent_sc, tiers, tco.example_training(rent_sc), inputs=rent, n=500)
    assert tco.rent_simulation(rent_sc, sim, tiers, rent) is sim


def test_rent_simulation_reruns_tiers_in_rent_mode_for_a_buying_scenario(sc):
    buy_sc = _with_mode(sc, "buy")
    selected, _, rent = tco.scenario_inputs(buy_sc)
    tiers = tco.example_tiers(buy_sc)
    sim = tco.simulate(buy_sc, tiers, tco.example_training(buy_sc), inputs=selected, n=500)
    out = tco.rent_simulation(buy_sc, sim, tiers, rent)
    assert out is not sim
    assert set(out.gpu_hour["mode"]) == {"rent"}
    assert out.training.empty and not out.training_summary
    expected = tco.simulate(buy_sc, tiers, None, inputs=rent)
    pd.testing.assert_frame_equal(out.tier_summary, expected.tier_summary)
    assert not out.tier_summary["p_amd_cheaper"].equals(sim.tier_summary["p_amd_cheaper"])


def test_claim_numbers_same_from_either_modes_cost_table(sc):
    _, buy, rent = tco.scenario_inputs(sc)
    pd.testing.assert_frame_equal(
        tco.claim_numbers(tco.gpu_hour_cost(sc, buy), buy),
        tco.claim_numbers(tco.gpu_hour_cost(sc, rent), buy),
    )


CLAIM_KEYS = [
    "claim_hw_discount_pct_min",
    "claim_hw_discount_pct_max",
    "claim_rent_p_amd_cheaper_min",
    "claim_hidden_costs_exceed_gap_any",
]


def test_key_results_claim_numbers(sc, inp):
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=inp, n=500)
    be = tco.breakeven_table(sim, inp)
    claims = pd.DataFrame(
        {
            "hardware_discount_pct": [20.0, 35.5, 28.0],
            "hidden_costs_exceed_gap": [False, True, False],
        }
    )
    sim_rent = tco.rent_simulation(sc, sim, tco.example_tiers(sc), tco.scenario_inputs(sc).rent)
    keys = tco.key_results(sim, be, "buy", claims, sim_rent)
    # Same keys as without the claims, then the four claim keys last, in this order.
    base = tco.key_results(sim, be, "buy")
    assert not set(CLAIM_KEYS) & set(base)
    assert list(keys) == [*base, *CLAIM_KEYS]
    assert keys["claim_hw_discount_pct_min"] == 20.0
    assert keys["claim_hw_discount_pct_max"] == 35.5
    assert keys["claim_rent_p_amd_cheaper_min"] == pytest.approx(
        sim_rent.tier_summary["p_amd_cheaper"].min()
    )
    assert keys["claim_hidden_costs_exceed_gap_any"] is True
    assert type(keys["claim_hw_discount_pct_min"]) is float


def test_key_results_without_claim_pairs(sc, inp):
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=inp, n=500)
    keys = tco.key_results(sim, tco.breakeven_table(sim, inp), "buy", pd.DataFrame([]), sim)
    assert keys["claim_hw_discount_pct_min"] is None
    assert keys["claim_hw_discount_pct_max"] is None
    assert keys["claim_hidden_costs_exceed_gap_any"] is False
    assert keys["claim_rent_p_amd_cheaper_min"] == pytest.approx(
        sim.tier_summary["p_amd_cheaper"].min()
    )


def test_tornado_shows_the_shared_top_n():
    from analysis import charts

    n = tco.TORNADO_TOP_N + 5
    sens = pd.DataFrame(
        {
            "input": [f"x{i}" for i in range(n)],
            "assumption_id": "",
            "low": 0.0,
            "high": 1.0,
            "diff_low": -np.arange(n, 0, -1, dtype=float),
            "diff_high": np.arange(n, 0, -1, dtype=float),
            "base_diff": 0.0,
        }
    )
    chart = charts.plot_cost_tornado(sens, "t")
    assert list(chart.layer[0].data["input"]) == list(sens["input"].head(tco.TORNADO_TOP_N))


def test_chapters_30_and_40_print_the_same_price_for_the_same_case():
    """evaluate_tiers (chapter 30) and simulate's point column (chapter 40) agree exactly."""
    from analysis import inference, params, paths

    for mode in ("buy", "rent"):
        base = params.load_scenario(paths.CI_PARAMS)
        sc = base.model_copy(update={"cost": base.cost.model_copy(update={"mode": mode})})
        t30 = inference.evaluate_tiers(sc)
        inp = tco.cost_inputs(sc)
        sim = tco.simulate(sc, t30.drop(columns=["gpu_hour_usd", "cost_per_mtok_usd"]), None,
                           inputs=inp, n=200)  # fmt: skip
        merged = t30.merge(sim.tiers, on=["tier_index", "accelerator"])
        assert len(merged) == len(t30)
        np.testing.assert_allclose(
            merged["cost_per_mtok_usd"], merged["cost_per_mtok_point"], equal_nan=True
        )
        rule = tco.price_rule(sc, inp).set_index("accelerator")["gpu_hour_usd"]
        np.testing.assert_allclose(t30["gpu_hour_usd"], t30["accelerator"].map(rule))
        assert np.isfinite(merged["cost_per_mtok_usd"]).any()


@pytest.mark.parametrize("mode", ["buy", "rent"])
def test_breakeven_in_the_modes_negotiating_unit_is_consistent(sc, mode):
    # The server price (buy) or the rental quote (rent) at which the pair costs the same
    # gives the same all-in $/GPU-hour as the $/GPU-hour break-even itself.
    inp = tco.cost_inputs(sc, mode=mode)
    be = tco.breakeven(inp, "MI300X", "H100-SXM", 800.0, 1000.0)
    native = tco.NATIVE_VARIABLE[mode]
    assert native in be and math.isfinite(be[native])
    other = tco.NATIVE_VARIABLE["rent" if mode == "buy" else "buy"]
    assert other not in be
    p = tco._point_params(inp)
    ia = inp.accelerators.index("MI300X")
    key = "server_price_usd" if mode == "buy" else "rental_usd_per_gpu_hour"
    p[key] = p[key].copy()
    p[key][ia] = be[native]
    paid = np.asarray(tco.paid_gpu_hour_usd(p, mode, inp.fleet_gpus))[ia]
    assert paid == pytest.approx(be["amd_gpu_hour_usd"], rel=1e-6)


def test_cost_ratio_is_the_per_draw_ratio(sc, inp):
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=inp, n=4000)
    s = sim.tier_summary.dropna(subset=["p_amd_cheaper"])
    assert len(s)
    assert (s["cost_ratio_p05"] <= s["cost_ratio"]).all()
    assert (s["cost_ratio"] <= s["cost_ratio_p95"]).all()
    # P(AMD cheaper) is the share of draws with a ratio below 1: consistent with the median.
    assert ((s["cost_ratio"] < 1) == (s["p_amd_cheaper"] > 0.5)).all()


def test_table_adds_the_other_modes_unit_and_keys_use_the_point_price(sc):
    buy, rent = tco.cost_inputs(sc, mode="buy"), tco.cost_inputs(sc, mode="rent")
    sim = tco.simulate(sc, tco.example_tiers(sc), tco.example_training(sc), inputs=buy, n=2000)
    be = tco.breakeven_table(sim, buy, rent)
    assert {"amd_server_price_usd", "amd_rental_quote_usd"} <= set(be["variable"])
    assert set(be.loc[be["variable"] == "amd_rental_quote_usd", "mode"]) == {"rent"}
    keys = tco.key_results(sim, be, "buy")
    rule = tco.price_rule(sc, buy).set_index("accelerator")["gpu_hour_usd"]
    for acc, v in rule.dropna().items():
        assert keys[f"gpu_hour_usd_{acc}"] == pytest.approx(v)
    assert "tier0_cost_ratio_p95" in keys and "train_breakeven_amd_server_price_usd" in keys
