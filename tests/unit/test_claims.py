import math
import re

import pandas as pd
import pytest

from analysis import claims, params, paths
from analysis.tables.claims import VERDICTS

SPECS = pd.DataFrame(
    {
        "accelerator": ["H100-SXM", "B200", "MI300X", "MI325X", "MI355X", "MI455X"],
        "vendor": ["NVIDIA", "NVIDIA", "AMD", "AMD", "AMD", "AMD"],
        "status": ["shipping"] * 5 + ["announced"],
        "process_node": ["TSMC 4N", "TSMC 4NP", "N5", "N5", "N3P", "TSMC N2"],
        "process_source": ["s"] * 6,
        "memory_gb": [80.0, 180.0, 192.0, 256.0, 288.0, 432.0],
        "memory_gb_source": ["src-h", "src-b", "src-a", "src-m", "src-5", "src-4"],
        "memory_bw_tbps": [3.35, 8.0, 5.3, 6.0, 8.0, 19.6],
        "memory_bw_tbps_source": ["s"] * 6,
        "scaleout_gbps_per_gpu": [400.0, 400.0, 400.0, 400.0, 400.0, 2400.0],
        "scaleout_gbps_per_gpu_source": ["s"] * 6,
        "scaleup_bw_gbps": [900.0, 1800.0, 896.0, 896.0, 1075.0, 3600.0],
        "scaleup_bw_gbps_source": ["s"] * 6,
    }
)
EMPTY = pd.DataFrame()


def _row(**kw):
    base = {
        "claim_id": "C99",
        "quote": "q",
        "topic": "architecture",
        "kind": "numeric",
        "subject": None,
        "reference": None,
        "field": None,
        "claimed_value": math.nan,
        "claimed_reference_value": math.nan,
        "claimed_text": None,
        "unit": None,
        "expect": "match",
        "tolerance_pct": 2.0,
        "fact_verdict": None,
        "fact": None,
        "fact_sources": None,
        "notes": None,
    }
    base.update(kw)
    return base


def _rows(*own, **shared):
    """Claims C99, C98, C97, ...: the ``shared`` fields plus each one's ``own`` overrides."""
    return [_row(claim_id=f"C{99 - i}", **{**shared, **o}) for i, o in enumerate(own)]


def _run(rows, specs=SPECS, **kw):
    return claims.evaluate_claims(
        specs,
        claims=pd.DataFrame(rows),
        mlperf_inference=kw.pop("mi", EMPTY),
        mlperf_training=EMPTY,
        rental_quotes=kw.pop("rq", EMPTY),
        purchase_prices=kw.pop("pp", EMPTY),
        sources=pd.DataFrame({"source_id": ["src-4"], "url": ["https://example.org/4"]}),
        **kw,
    )


def test_spec_value_supported_mixed_and_contradicted():
    rows = _rows(
        {"claimed_value": 256},
        {"claimed_value": 432},
        {"claimed_value": 999},
        test_method="spec_value",
        subject="MI325X",
        field="memory_gb",
    )
    out = _run(rows).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert out.at["C98", "verdict"] == "mixes generations"
    assert out.at["C98", "products"] == "MI455X"
    assert "src-4" in out.at["C98", "data_sources"]
    assert out.at["C98", "data_urls"] == "https://example.org/4"
    assert out.at["C97", "verdict"] == "contradicted"


def test_spec_value_text_and_other_metric():
    out = _run(
        [
            _row(
                test_method="spec_value",
                subject="MI355X",
                field="process_node",
                claimed_text=r"N2\b",
            ),
            _row(
                claim_id="C98",
                test_method="spec_value",
                subject="MI455X",
                field="scaleup_bw_gbps;scaleout_gbps_per_gpu*0.125",
                claimed_value=300,
            ),
        ]
    ).set_index("claim_id")
    assert out.at["C99", "verdict"] == "mixes generations"
    assert out.at["C99", "products"] == "MI455X"
    assert out.at["C98", "verdict"] == "contradicted"
    assert "scale-out (NIC) bandwidth" in out.at["C98", "reasoning"]
    # the reader sees the claimed text, never the pattern
    assert out.at["C99", "claimed"] == "N2 (process node)"
    assert "\\b" not in out.at["C99", "reasoning"]


def test_spec_value_fact_fallback_when_number_in_no_table():
    out = _run(
        [
            _row(
                test_method="spec_value",
                subject="B200",
                field="memory_gb",
                claimed_value=5000,
                fact_verdict="mixes generations",
                fact="elsewhere",
                fact_sources="src-4",
            )
        ]
    )
    assert out.at[0, "verdict"] == "mixes generations"
    assert "elsewhere" in out.at[0, "reasoning"]


def test_spec_ratio_needs_majority_and_newest_pair():
    rows = _rows(
        {"field": "memory_bw_tbps"},
        {"field": "memory_gb"},
        test_method="spec_ratio",
        subject="MI300X;MI355X",
        reference="H100-SXM;B200",
        expect="gt",
        tolerance_pct=0,
    )
    out = _run(rows).set_index("claim_id")
    assert out.at["C99", "verdict"] == "contradicted"  # 5.3 > 3.35 but 8 = 8 in the newest pair
    assert out.at["C98", "verdict"] == "supported"


def test_memory_fit():
    out = _run(
        [
            _row(
                test_method="memory_fit",
                subject="MI300X",
                reference="H100-SXM",
                field="memory_gb",
                claimed_value=140,
                expect="gt",
                tolerance_pct=10,
            )
        ]
    )
    assert out.at[0, "verdict"] == "supported"


def test_mlperf_ratio():
    mi = pd.DataFrame(
        {
            "benchmark": ["llama2-70b-99"] * 2,
            "scenario": ["Offline"] * 2,
            "accelerator": ["MI325X", "H100-SXM"],
            "availability": ["available"] * 2,
            "result_per_accelerator": [3000.0, 2000.0],
            "result_id": ["5.1-1", "5.1-2"],
            "mlperf_id": ["a", "b"],
            "round": ["v5.1"] * 2,
            "submitter": ["x", "y"],
            "results_path": ["p1", "p2"],
        }
    )
    rows = _rows(
        {"subject": "MI325X", "claimed_value": 1.5, "expect": "approx", "tolerance_pct": 5},
        {"subject": "MI325X", "claimed_value": 2.0, "expect": "approx", "tolerance_pct": 5},
        {"subject": "MI300X", "expect": "gt"},  # no MLPerf result for MI300X
        test_method="mlperf_ratio",
        reference="H100-SXM",
        field="llama2-70b-99:Offline",
    )
    out = _run(rows, mi=mi).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert out.at["C98", "verdict"] == "contradicted"
    assert out.at["C97", "verdict"] == "unverifiable"
    assert "p1" in out.at["C99", "data_sources"]


def _mi(rows):
    """MLPerf inference rows from (accelerator, round, tokens/s per GPU)."""
    n = len(rows)
    return pd.DataFrame(
        {
            "benchmark": ["llama2-70b-99"] * n,
            "scenario": ["Offline"] * n,
            "accelerator": [r[0] for r in rows],
            "availability": ["available"] * n,
            "result_per_accelerator": [float(r[2]) for r in rows],
            "result_id": [f"{r[1]}-{i}" for i, r in enumerate(rows)],
            "mlperf_id": [f"m{i}" for i in range(n)],
            "round": [r[1] for r in rows],
            "submitter": ["x"] * n,
            "results_path": [f"path-{r[1]}-{r[0]}" for r in rows],
        }
    )


def test_mlperf_ratio_pairs_within_one_round_never_across():
    # The best MI325X (v6.0) and the best H100 (v5.1) are from different rounds: pairing
    # them would give 4000/2000 = 2.0x. Within v5.1 it is 2600/2000 = 1.3x.
    mi = _mi([("MI325X", "v5.1", 2600), ("MI325X", "v6.0", 4000), ("H100-SXM", "v5.1", 2000)])
    rows = _rows(
        {"claimed_value": 1.3, "expect": "approx", "tolerance_pct": 5},
        {"claimed_value": 2.0, "expect": "approx", "tolerance_pct": 5},
        test_method="mlperf_ratio",
        subject="MI325X",
        reference="H100-SXM",
        field="llama2-70b-99:Offline",
    )
    out = _run(rows, mi=mi).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert out.at["C98", "verdict"] == "contradicted"
    assert "round v5.1" in out.at["C99", "reasoning"]
    assert "path-v6.0" not in out.at["C99", "data_sources"]


def test_mlperf_ratio_uses_the_newest_common_round():
    mi = _mi(
        [
            ("MI325X", "v5.1", 2600),
            ("H100-SXM", "v5.1", 2000),
            ("MI325X", "v6.0", 3000),
            ("H100-SXM", "v6.0", 3000),
        ]
    )
    rows = _rows(
        {"claimed_value": 1.0, "expect": "approx", "tolerance_pct": 1},
        test_method="mlperf_ratio",
        subject="MI325X",
        reference="H100-SXM",
        field="llama2-70b-99:Offline",
    )
    out = _run(rows, mi=mi).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert "round v6.0" in out.at["C99", "reasoning"]


def test_mlperf_ratio_without_a_common_round_is_unverifiable():
    mi = _mi([("MI325X", "v6.0", 4000), ("H100-SXM", "v5.1", 2000)])
    rows = _rows(
        {"expect": "gt"},
        test_method="mlperf_ratio",
        subject="MI325X",
        reference="H100-SXM",
        field="llama2-70b-99:Offline",
    )
    out = _run(rows, mi=mi).set_index("claim_id")
    assert out.at["C99", "verdict"] == "unverifiable"
    assert "different rounds are not compared" in out.at["C99", "reasoning"]


def test_price_ratio():
    rq = pd.DataFrame(
        {
            "accelerator": ["H100-SXM", "H100-SXM", "MI300X", "MI300X"],
            "provider_class": ["neocloud-list"] * 3 + ["hyperscaler-list"],
            "term": ["on-demand"] * 4,
            "price_usd_per_gpu_hour": [3.0, 2.0, 1.5, 6.0],
            "quote_date": ["2026-11-01"] * 4,
            "access_date": ["2026-11-30"] * 4,
            "source_id": ["a", "b", "c", "d"],
        }
    )
    out = _run(
        [
            _row(
                test_method="price_ratio",
                subject="H100-SXM",
                reference="MI300X",
                field="rental_quotes",
                expect="gt",
                tolerance_pct=0,
            )
        ],
        rq=rq,
    )
    # Only the default pool (neocloud list, on-demand) is compared: the $6 hyperscaler
    # MI300X quote would flip the verdict if pools were mixed.
    assert out.at[0, "verdict"] == "supported"
    assert out.at[0, "data_sources"] == "a; b; c"


def test_price_claim_on_judgement_prices_is_unverifiable():
    pp = pd.DataFrame(
        {
            "accelerator": ["MI325X", "H200"],
            "unit": ["gpu", "gpu"],
            "price_usd_low": [14000.0, 28000.0],
            "price_usd_high": [20000.0, 35000.0],
            "basis": ["judgement", "judgement"],
            "price_date": ["2026-11-30"] * 2,
            "source_id": ["tco-judgement"] * 2,
        }
    )
    out = _run(
        [
            _row(
                test_method="price_ratio",
                subject="MI325X",
                reference="H200",
                field="purchase_prices",
                expect="lt",
                tolerance_pct=0,
            )
        ],
        pp=pp,
    )
    assert out.at[0, "verdict"] == "unverifiable"


def test_model_output_uses_chapter_results_and_is_unverifiable_without():
    sc = params.load_scenario(paths.CI_PARAMS)
    cr = {
        "30-inference-tiers": {
            "tier0_tok_s_gpu_H200": 500.0,
            "tier0_tok_s_gpu_MI300X": 300.0,
            "tier0_tok_s_gpu_MI325X": 350.0,
            "tier2_winner": "MI325X",
        },
        "20-training-scaling": {"train_winner": "H200", "train_winner_vendor": "NVIDIA"},
    }
    rows = _rows(
        {
            "subject": "H200",
            "reference": "AMD",
            "field": "tight_tier_tok_s",
            "claimed_value": 50,
            "expect": "gt",
            "tolerance_pct": 10,
        },
        {"subject": "MI300X;MI325X", "field": "loose_tier_winner", "expect": "is"},
        {"subject": "AMD", "field": "train_winner_vendor", "expect": "is"},
        test_method="model_output",
    )
    out = _run(rows, chapter_results=cr, scenario=sc).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert out.at["C98", "verdict"] == "supported"
    assert out.at["C97", "verdict"] == "contradicted"
    bare = _run(rows, scenario=sc)
    assert set(bare["verdict"]) == {"unverifiable"}


def test_source_fact_and_none():
    out = _run(
        [
            _row(
                test_method="source_fact",
                fact_verdict="contradicted",
                fact="f",
                fact_sources="src-4",
                expect=None,
            ),
            _row(claim_id="C98", test_method="none", fact_verdict="unverifiable", expect=None),
        ]
    ).set_index("claim_id")
    assert out.at["C99", "verdict"] == "contradicted"
    assert out.at["C99", "data_sources"] == "src-4"
    assert out.at["C98", "verdict"] == "unverifiable"


def test_every_evaluator_registered():
    from analysis.tables.claims import TEST_METHODS

    assert set(claims.EVALUATORS) == set(TEST_METHODS)


@pytest.fixture(scope="module")
def audit():
    return claims.evaluate_claims()


def test_bundled_claims_verdict_set_closed_and_cites_data(audit):
    assert set(audit["verdict"]) <= set(VERDICTS)
    assert audit["claim_id"].is_unique
    tested = audit[audit["verdict"] != "unverifiable"]
    assert (tested["data_sources"].str.len() > 0).all(), tested.loc[
        tested["data_sources"].str.len() == 0, "claim_id"
    ].tolist()


def test_verdict_counts_lists_every_verdict(audit):
    counts = claims.verdict_counts(audit)
    assert counts["verdict"].tolist() == list(VERDICTS)
    assert counts["claims"].sum() == len(audit)


def test_select_claims_keeps_one_verdict_in_article_order(audit):
    for verdict in VERDICTS:
        got = claims.select_claims(audit, verdict)
        assert set(got["verdict"]) <= {verdict}
        assert len(got) == int((audit["verdict"] == verdict).sum())
        assert got.index.tolist() == audit.index[audit["verdict"] == verdict].tolist()
    with pytest.raises(ValueError, match="unknown verdict 'wrong'"):
        claims.select_claims(audit, "wrong")


def test_key_results_from_verdict_counts(audit):
    counts = pd.DataFrame({"verdict": list(VERDICTS), "claims": [5, 3, 2, 1]})
    got = claims.key_results(counts)
    assert got == {
        "claims_total": 11,
        "claims_supported": 5,
        "claims_contradicted": 3,
        "claims_mixes_generations": 2,
        "claims_unverifiable": 1,
    }
    assert all(type(v) is int for v in got.values())
    bundled = claims.key_results(claims.verdict_counts(audit))
    assert bundled["claims_total"] == len(audit)
    assert bundled["claims_contradicted"] == int((audit["verdict"] == "contradicted").sum())


@pytest.mark.parametrize(
    ("pattern", "label"),
    [(r"\b3 ?nm|N3", "3 nm"), (r"\b2 ?nm|N2\b", "2 nm"), ("^monolithic$", "monolithic")],
)
def test_regex_label(pattern, label):
    assert claims._regex_label(pattern) == label


def test_paired_phrasing_says_none_all_and_names_the_newest_pair():
    pairs = [("A1", "N1"), ("A2", "N2"), ("A3", "N3")]
    none = claims._paired_verdict([False, False, False], "x", [], pairs)
    assert none.verdict == "contradicted"
    assert "holds in none of the 3 generation pairs" in none.reasoning
    assert "0 of" not in none.reasoning and "but not" not in none.reasoning
    every = claims._paired_verdict([True, True, True], "x", [], pairs)
    assert every.verdict == "supported" and "holds in all 3 generation pairs" in every.reasoning
    old_only = claims._paired_verdict([True, True, False], "x", [], pairs)
    assert old_only.verdict == "contradicted"
    assert "2 of 3 generation pairs, but not in the newest (A3 vs N3)" in old_only.reasoning
    gap = claims._paired_verdict([True, True, None], "x", [], pairs)
    assert "both generation pairs (no data for A3 vs N3)" in gap.reasoning


def test_claimed_ratio_of_the_announced_generation_mixes_generations():
    specs = pd.concat(
        [
            SPECS,
            pd.DataFrame(
                {
                    "accelerator": ["VR200"],
                    "vendor": ["NVIDIA"],
                    "status": ["announced"],
                    "memory_gb": [288.0],
                    "memory_gb_source": ["src-r"],
                }
            ),
        ],
        ignore_index=True,
    )
    row = _row(
        test_method="spec_ratio",
        subject="MI355X",
        reference="B200",
        field="memory_gb",
        claimed_value=1.5,
        expect="approx",
        tolerance_pct=5,
    )
    out = _run([row], specs=specs)
    assert out.at[0, "verdict"] == "mixes generations"
    assert out.at[0, "products"] == "MI455X, VR200"
    assert "MI455X 432 / VR200 288" in out.at[0, "reasoning"]
    assert {"src-4", "src-r"} <= set(out.at[0, "data_sources"].split("; "))
    # no announced pair to explain it: contradicted
    assert _run([row]).at[0, "verdict"] == "contradicted"


def test_number_in_no_spec_row_takes_the_cited_fact_and_its_products():
    out = _run(
        [
            _row(
                test_method="spec_value",
                subject="B200",
                reference="MI355X",
                field="memory_gb",
                claimed_value=5000,
                claimed_reference_value=432,
                fact_verdict="mixes generations",
                fact="5000 is an announced VR200 figure; 432 is MI455X.",
                fact_sources="src-4",
            )
        ]
    )
    assert out.at[0, "verdict"] == "mixes generations"
    assert out.at[0, "products"] == "VR200, MI455X"  # VR200 from the fact (NVIDIA side)
    assert out.at[0, "reasoning"].count("5000 is an announced") == 1


def test_training_tie_inside_model_error_is_not_a_clear_win():
    sc = params.load_scenario(paths.CI_PARAMS)
    row = _row(
        test_method="model_output", subject="NVIDIA", field="train_winner_vendor", expect="is"
    )
    res = {"train_winner": "H200", "train_winner_vendor": "NVIDIA", "mlperf_median_err_pct": 14.0}
    tie = _run(
        [row],
        chapter_results={"20-training-scaling": {**res, "train_margin_pct": 0.5}},
        scenario=sc,
    )
    clear = _run(
        [row], chapter_results={"20-training-scaling": {**res, "train_margin_pct": 30}}, scenario=sc
    )
    assert tie.at[0, "verdict"] == "contradicted" and "tied" in tie.at[0, "reasoning"]
    assert clear.at[0, "verdict"] == "supported"


def _golden_chapter_results() -> dict:
    import nbformat

    from analysis import results

    out: dict = {}
    for name in ("20-training-scaling", "30-inference-tiers", "40-tco"):
        nb = nbformat.read(paths.GOLDENS / f"{name}.ipynb", as_version=4)
        out.update(results.extract_key_results(nb))
    return out


@pytest.fixture(scope="module")
def audit_with_chapters():
    """The bundled audit with the CI scenario's chapter results (from the nbval goldens)."""
    cr = _golden_chapter_results()
    assert {"20-training-scaling", "30-inference-tiers", "40-tco"} <= set(cr)
    return claims.evaluate_claims(
        chapter_results=cr, scenario=params.load_scenario(paths.CI_PARAMS)
    )


def test_model_output_claims_get_verdicts_from_chapter_results(audit_with_chapters):
    a = audit_with_chapters.set_index("claim_id")
    tested = ["C11", "C13", "C21", "C26", "C27", "C30", "C32"]
    assert (a.loc[tested, "verdict"] != "unverifiable").all(), a.loc[tested, "reasoning"]
    # C35 is about buying; the CI scenario rents
    assert a.at["C35", "verdict"] == "unverifiable" and "rents" in a.at["C35", "reasoning"]


def test_every_tested_verdict_cites_a_source_or_mlperf_result(audit, audit_with_chapters):
    from analysis import data

    known = set(data.load_table("sources")["source_id"])
    for df in (audit, audit_with_chapters):
        tested = df[df["verdict"] != "unverifiable"]
        for r in tested.itertuples():
            cited = [s for s in r.data_sources.split("; ") if s]
            real = [s for s in cited if s in known or s.startswith("MLPerf ")]
            assert real, (r.claim_id, r.data_sources)
            if any(s in known for s in cited):
                assert r.data_urls.startswith("http"), r.claim_id


def test_audit_text_reads_as_prose(audit_with_chapters):
    """No raw patterns, NaN, "0 of N" or "(gt)" jargon in what the reader sees."""
    for r in audit_with_chapters.itertuples():
        for col in ("claimed", "reasoning", "observed"):
            text = getattr(r, col)
            assert not re.search(r"\\b|\^\w|\$\s|\?\s*nm|\|N\d", text), (r.claim_id, col, text)
            assert "nan" not in text.lower().split(), (r.claim_id, col, text)
            assert "nanx" not in text, (r.claim_id, col)
            assert not re.search(r"\b0 of \d", text), (r.claim_id, col, text)
            assert "(gt)" not in text and "(lt)" not in text, (r.claim_id, col)
    a = audit_with_chapters.set_index("claim_id")
    assert a.at["C07", "claimed"].startswith("3 nm")
    assert a.at["C09", "claimed"].startswith("2 nm")
    assert "none of the 3 generation pairs" in a.at["C17", "reasoning"]


def test_bundled_verdicts_of_the_reviewed_claims(audit):
    a = audit.set_index("claim_id")
    # UALink: 300 GB/s is MI455X's scale-out NIC bandwidth; its UALink scale-up is 3.6 TB/s
    assert a.at["C19", "verdict"] == "contradicted"
    assert "scale-out" in a.at["C19", "reasoning"] and "3,600 GB/s" in a.at["C19", "reasoning"]
    # 50 vs 40 PFLOPS FP4: announced Rubin and MI455X figures
    assert a.at["C50", "verdict"] == "mixes generations"
    assert set(a.at["C50", "products"].split(", ")) == {"VR200", "MI455X"}
    # 432 vs 288 GB = 1.5x: MI455X vs VR200, not today's flagships
    assert a.at["C52", "verdict"] == "mixes generations"
    assert set(a.at["C52", "products"].split(", ")) == {"MI455X", "VR200"}
    # 70B BF16 on one GPU: AMD-only fit in the Hopper era, both fit today
    assert a.at["C53", "verdict"] == "contradicted"
    assert "no longer separates" in a.at["C53", "reasoning"]
