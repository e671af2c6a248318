import math

import pytest

from analysis import data, decision, params, paths


@pytest.fixture
def sc():
    return params.load_scenario(paths.CI_PARAMS)  # H100-SXM, H200, MI300X, MI325X; 3 tiers


@pytest.fixture
def chapter_results():
    return {
        "30-inference-tiers": {
            "tier0_winner": "H200",
            "tier0_winner_vendor": "NVIDIA",
            "tier0_margin_pct": 25.0,
            "tier1_winner": "MI325X",
            "tier1_winner_vendor": "AMD",
            "tier1_margin_pct": 4.0,
            "tier2_winner": "MI325X",
            "tier2_winner_vendor": "AMD",
            "tier2_margin_pct": 30.0,
            "tier0_infeasible": "H100-SXM",
            "tier1_infeasible": "",
            "tier2_infeasible": "",
            "mlperf_mape_overall": 10.0,
            "mlperf_mape_AMD": 12.0,
            "mlperf_mape_NVIDIA": 8.0,
        },
        "20-training-scaling": {
            "train_winner": "H200",
            "train_winner_vendor": "NVIDIA",
            "train_margin_pct": 15.0,
            "mlperf_median_err_pct": 9.0,
        },
        "40-tco": {
            "mode": "rent",
            "gpu_hour_usd_MI325X": 2.0,
            "gpu_hour_usd_H200": 3.0,
            "tier0_cost_per_mtok_H200": 1.0,
            "tier0_cost_per_mtok_H200_p05": 0.8,
            "tier0_cost_per_mtok_H200_p95": 1.2,
            "tier0_cost_per_mtok_MI325X": 1.25,
            "tier0_cost_per_mtok_MI325X_p05": 1.0,
            "tier0_cost_per_mtok_MI325X_p95": 1.5,
            "tier0_cost_per_mtok_H100-SXM": 0.5,  # infeasible in tier 0: must be ignored
            "tier0_p_amd_cheaper": 0.2,
            "tier1_p_amd_cheaper": 0.5,
            "tier2_p_amd_cheaper": 0.9,
            "train_p_amd_cheaper": 0.3,
            "tier0_breakeven_amd_gpu_hour_usd": 1.6,
        },
    }


def test_recommendation_follows_probability_bands(sc, chapter_results):
    recs = decision.recommend(sc, chapter_results).set_index("workload")
    assert recs.loc[["training", "tier0", "tier1", "tier2"], "recommendation"].tolist() == [
        "NVIDIA",
        "NVIDIA",
        "either",
        "AMD",
    ]


def test_summary_numbers_equal_chapter_results(sc, chapter_results):
    recs = decision.recommend(sc, chapter_results).set_index("workload")
    t0 = recs.loc["tier0"]
    tco = chapter_results["40-tco"]
    assert t0["nvidia_best"] == "H200"  # H100-SXM is infeasible in tier 0
    assert t0["nvidia_cost"] == tco["tier0_cost_per_mtok_H200"]
    assert t0["amd_cost_p95"] == tco["tier0_cost_per_mtok_MI325X_p95"]
    assert t0["p_amd_cheaper"] == tco["tier0_p_amd_cheaper"]
    assert t0["perf_margin_pct"] == chapter_results["30-inference-tiers"]["tier0_margin_pct"]
    assert t0["model_error_pct"] == 10.0
    assert t0["breakeven_amd_gpu_hour_usd"] == 1.6
    assert "$1.60" in t0["flip"] and "$2.00" in t0["flip"]
    # One definition: cost margin = 1 - AMD/NVIDIA (AMD 1.25 vs NVIDIA 1.0: -25%).
    assert math.isclose(t0["cost_margin_pct"], (1 - 1.25 / 1.0) * 100)
    keys = decision.key_results(recs.reset_index())
    assert keys["rec_tier0"] == "NVIDIA"
    assert keys["rec_tier1_p_amd_cheaper"] == 0.5


def test_performance_fallback_uses_model_error(sc, chapter_results):
    no_cost = {k: v for k, v in chapter_results.items() if k != "40-tco"}
    recs = decision.recommend(sc, no_cost).set_index("workload")
    assert recs.at["tier1", "recommendation"] == "either"  # 4% margin < 10% error
    assert recs.at["tier2", "recommendation"] == "AMD"


def test_vendor_without_feasible_candidate_loses(sc, chapter_results):
    chapter_results["30-inference-tiers"]["tier1_infeasible"] = "MI300X,MI325X"
    recs = decision.recommend(sc, chapter_results).set_index("workload")
    assert recs.at["tier1", "recommendation"] == "NVIDIA"


def test_empty_chapter_results_do_not_crash(sc):
    recs = decision.recommend(sc, {})
    assert set(recs["recommendation"]) == {"either"}
    assert "No chapter results" in decision.summary_markdown(sc, recs, {})
    assert len(decision.checklist(sc, {}, recs)) == 12


def test_checklist_has_twelve_lines_and_closed_verdicts(sc, chapter_results):
    cl = decision.checklist(sc, chapter_results)
    assert len(cl) == 12
    assert set(cl["verdict"]) <= set(decision.CHECK_VERDICTS)
    by_line = cl.set_index("line")["verdict"]
    assert by_line["Low-latency inference under 50 milliseconds matters critically"] == "supported"
    assert by_line["Your workloads fit within single-node serving scenarios"] == "supported"


def test_compare_with_previous(sc, chapter_results):
    assert decision.compare_with_previous(chapter_results, {}).empty
    assert "first published version" in decision.changes_markdown(
        decision.compare_with_previous(chapter_results, {}), {}
    )
    prev = {
        "version": "v0001",
        "chapters": {
            "00-summary": {"rec_tier2": "NVIDIA"},
            "40-tco": {**chapter_results["40-tco"], "gpu_hour_usd_H200": 2.5},
        },
    }
    cur = {**chapter_results, "00-summary": {"rec_tier2": "AMD"}}
    ch = decision.compare_with_previous(cur, prev).set_index("key")
    assert bool(ch.at["rec_tier2", "flipped"]) is True
    assert math.isclose(ch.at["gpu_hour_usd_H200", "change_pct"], 20.0)
    assert bool(ch.at["gpu_hour_usd_H200", "flipped"]) is False
    assert "Flipped" in decision.changes_markdown(decision.compare_with_previous(cur, prev), prev)


def test_changes_markdown_names_the_changed_figures(chapter_results):
    tco = chapter_results["40-tco"]
    prev = {
        "version": "v0001-x",
        "chapters": {"40-tco": {**tco, "gpu_hour_usd_H200": 2.5, "tier0_p_amd_cheaper": 0.2}},
    }
    cur = {"40-tco": {**tco, "gpu_hour_usd_H200": 3.0, "tier0_p_amd_cheaper": 0.1}}
    text = decision.changes_markdown(decision.compare_with_previous(cur, prev), prev)
    assert "since v0001-x" in text
    assert "No recommendation, winner or cheapest part flipped" in text
    # the changed input price is named first, with old -> new and the relative change
    named = text.split("Changed", 1)[1]
    assert named.index("gpu_hour_usd_H200") < named.index("tier0_p_amd_cheaper")
    assert "`gpu_hour_usd_H200`: 2.5 -> 3 (+20.0%)" in text
    many = {f"k{i}": float(i + 1) for i in range(10)}
    prev_many = {"version": "v1", "chapters": {"40-tco": many}}
    cur_many = {"40-tco": {k: v * 2 for k, v in many.items()}}
    text = decision.changes_markdown(decision.compare_with_previous(cur_many, prev_many), prev_many)
    assert f"({10 - decision.MAX_NAMED_CHANGES} more in the table below)" in text


def test_assumptions_register_html_has_anchors():
    import pandas as pd

    reg = pd.DataFrame(
        [
            {
                "id": "A-utilization",
                "parameter": "cost.utilization",
                "value": 0.7,
                "low": 0.5,
                "high": 0.9,
                "unit": "1",
                "source_id": "s",
                "value_date": "2026-01-01",
                "quality": "judgement",
                "rationale": "r",
            }
        ]
    )
    html = decision.assumptions_register_html(
        reg, pd.DataFrame({"source_id": ["s"], "url": ["https://x.org"]})
    )
    assert '<a id="A-utilization"></a>' in html and 'href="https://x.org"' in html


def test_cited_source_ids():
    import pandas as pd

    got = decision.cited_source_ids(
        {
            "a": pd.DataFrame({"source_id": ["x", None]}),
            "b": pd.DataFrame({"memory_gb_source": ["y"], "fact_sources": ["z;x"]}),
            "c": pd.DataFrame({"checkpoint_sources": ["w; v", None]}),
        }
    )
    assert got == ["v", "w", "x", "y", "z"]


def test_the_appendix_cites_the_models_checkpoint_sources():
    cited = decision.load_cited_source_ids()
    for s in ("github-modelopt-deepseek-ptq", "hf-amd-deepseek-r1-0528-mxfp4"):
        assert s in cited
        assert s in data.spec_and_model_source_ids()


def test_key_results_counts_changes_and_flips(sc, chapter_results):
    recs = decision.recommend(sc, chapter_results)
    base = decision.key_results(recs)
    assert "changes_since_previous" not in base
    # No previous version: an empty comparison counts as zero changes and zero flips.
    none = decision.key_results(recs, decision.compare_with_previous(chapter_results, {}))
    assert list(none) == [*base, "changes_since_previous", "recommendations_flipped"]
    assert none["changes_since_previous"] == 0 and none["recommendations_flipped"] == 0
    assert none["rec_tier0"] == base["rec_tier0"] == "NVIDIA"
    prev = {
        "version": "v0001",
        "chapters": {
            "00-summary": {"rec_tier2": "NVIDIA", "rec_tier1": "AMD"},
            "40-tco": {**chapter_results["40-tco"], "gpu_hour_usd_H200": 2.5},
        },
    }
    changes = decision.compare_with_previous({**chapter_results, "00-summary": base}, prev)
    got = decision.key_results(recs, changes)
    assert got["changes_since_previous"] == len(changes) > 3
    # rec_tier1 and rec_tier2 flipped; the price and the keys new in this version did not
    assert got["recommendations_flipped"] == 2
    assert type(got["recommendations_flipped"]) is int


def test_model_error_table_lists_every_measure(chapter_results):
    table = decision.model_error_table(chapter_results)
    assert table.columns.tolist() == ["measure", "percent"]
    expected = decision.model_error(chapter_results)
    assert table["measure"].tolist() == list(expected)
    assert table.set_index("measure").at["inference_mape_amd_pct", "percent"] == 12.0
    assert table.set_index("measure").at["training_median_err_pct", "percent"] == 9.0
    empty = decision.model_error_table({})
    assert len(empty) == len(expected) and empty["percent"].isna().all()


def test_cited_sources_keeps_table_order_and_index():
    import pandas as pd

    src = pd.DataFrame({"source_id": ["a", "b", "c", "d"], "url": ["1", "2", "3", "4"]})
    got = decision.cited_sources(src, ["d", "b", "not-a-source"])
    assert got["source_id"].tolist() == ["b", "d"]
    assert got.index.tolist() == [1, 3]
    assert decision.cited_sources(src, []).empty


def test_load_cited_source_ids_reads_every_table_but_sources(monkeypatch):
    import pandas as pd

    from analysis import data

    real = data.load_table
    tables = {n: real(n) for n in data.table_names() if n != "sources"}
    assert decision.load_cited_source_ids() == decision.cited_source_ids(tables)
    fake = {
        "specs": pd.DataFrame({"memory_gb_source": ["s2;s1"]}),
        "claims": pd.DataFrame({"fact_sources": ["s3"]}),
        "sources": pd.DataFrame({"source_id": ["s1", "s2", "s3", "uncited"]}),
    }
    monkeypatch.setattr(data, "table_names", lambda: list(fake))
    monkeypatch.setattr(data, "load_table", lambda name: fake[name].copy())
    assert decision.load_cited_source_ids() == ["s1", "s2", "s3"]


def test_run_info_table_and_fallback():
    table = decision.run_info_table({"version": "v0003-x", "dirty": True, "commit": None})
    assert table.columns.tolist() == ["item", "value"]
    assert table.to_numpy().tolist() == [
        ["version", "v0003-x"],
        ["dirty", "True"],
        ["commit", "None"],
    ]
    for missing in ({}, None):
        assert decision.run_info_table(missing).to_numpy().tolist() == [
            ["version", "not run by the orchestrator"]
        ]


def test_appendix_key_results():
    import pandas as pd

    reg = pd.DataFrame({"id": ["A-a", "A-b", "A-c"]})
    got = decision.appendix_key_results(reg, ["s1", "s2"], {"version": 7, "commit": "abc"})
    assert got == {"assumptions": 3, "sources_cited": 2, "version": "7"}
    assert decision.appendix_key_results(reg, [], {})["version"] == ""
    assert decision.appendix_key_results(reg, [], None)["version"] == ""
    assert decision.appendix_key_results(reg, [], {"commit": "abc"})["version"] == ""


def test_recommendation_costs_relative_to_nvidia_best(sc, chapter_results):
    recs = decision.recommend(sc, chapter_results)
    got = decision.recommendation_costs(recs)
    assert got.columns.tolist() == list(decision.RECOMMENDATION_COST_COLUMNS)
    # only tier 0 has both vendors' costs in the fixture
    t0 = recs.set_index("workload").loc["tier0"]
    assert got["workload"].tolist() == [t0["label"]] * 2
    assert got["vendor"].tolist() == ["AMD", "NVIDIA"]
    assert got["accelerator"].tolist() == ["MI325X", "H200"]
    amd, nv = got.to_dict("records")
    assert math.isclose(amd["relative_cost"], 1.25)
    assert math.isclose(amd["low"], 1.0) and math.isclose(amd["high"], 1.5)
    assert nv["relative_cost"] == 1.0
    assert math.isclose(nv["low"], 0.8) and math.isclose(nv["high"], 1.2)
    empty = decision.recommendation_costs(decision.recommend(sc, {}))
    assert empty.empty and empty.columns.tolist() == list(decision.RECOMMENDATION_COST_COLUMNS)


def test_memo_states_each_call_with_margin_probability_and_flip(sc, chapter_results):
    tco = chapter_results["40-tco"]
    tco.update(
        {
            "tier2_cost_per_mtok_MI325X": 0.75,
            "tier2_cost_per_mtok_H200": 1.0,
            "tier2_cost_ratio": 0.75,
            "tier2_cost_ratio_p05": 0.6,
            "tier2_cost_ratio_p95": 0.9,
            "tier2_breakeven_amd_rel_throughput": 0.82,
            "tier2_breakeven_amd_server_price_usd": 300000.0,
            "tier2_current_amd_server_price_usd": 200000.0,
        }
    )
    recs = decision.recommend(sc, chapter_results)
    memo = decision.summary_markdown(
        sc, recs, chapter_results, data_as_of="2026-11-30", model_names={}
    )
    line = next(ln for ln in memo.splitlines() if "with no latency bound" in ln)
    assert "about 25% cheaper per million output tokens" in line
    assert "90% likely" in line
    assert "costs more than \\$300,000" in line and "under 0\\.82x" in line
    assert "2026-11-30" in memo and "caveat" in memo
    ratios = decision.cost_ratios(recs)
    assert ratios.set_index("call").loc["AMD", "ratio"] == 0.75
