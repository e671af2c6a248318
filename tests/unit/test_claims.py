import math

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


def _run(rows, specs=SPECS, **kw):
    return claims.evaluate_claims(
        specs,
        claims=pd.DataFrame(rows),
        mlperf_inference=kw.pop("mi", EMPTY),
        mlperf_training=EMPTY,
        rental_quotes=kw.pop("rq", EMPTY),
        purchase_prices=EMPTY,
        sources=pd.DataFrame({"source_id": ["src-4"], "url": ["https://example.org/4"]}),
        **kw,
    )


def test_spec_value_supported_mixed_and_contradicted():
    out = _run(
        [
            _row(test_method="spec_value", subject="MI325X", field="memory_gb", claimed_value=256),
            _row(
                claim_id="C98",
                test_method="spec_value",
                subject="MI325X",
                field="memory_gb",
                claimed_value=432,
            ),
            _row(
                claim_id="C97",
                test_method="spec_value",
                subject="MI325X",
                field="memory_gb",
                claimed_value=999,
            ),
        ]
    ).set_index("claim_id")
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
    assert "scaleout" in out.at["C98", "reasoning"]


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
    base = {
        "test_method": "spec_ratio",
        "subject": "MI300X;MI355X",
        "reference": "H100-SXM;B200",
        "expect": "gt",
        "tolerance_pct": 0,
    }
    out = _run(
        [_row(field="memory_bw_tbps", **base), _row(claim_id="C98", field="memory_gb", **base)]
    ).set_index("claim_id")
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
    rows = [
        _row(
            test_method="mlperf_ratio",
            subject="MI325X",
            reference="H100-SXM",
            field="llama2-70b-99:Offline",
            claimed_value=1.5,
            expect="approx",
            tolerance_pct=5,
        ),
        _row(
            claim_id="C98",
            test_method="mlperf_ratio",
            subject="MI325X",
            reference="H100-SXM",
            field="llama2-70b-99:Offline",
            claimed_value=2.0,
            expect="approx",
            tolerance_pct=5,
        ),
        _row(
            claim_id="C97",
            test_method="mlperf_ratio",
            subject="MI300X",
            reference="H100-SXM",
            field="llama2-70b-99:Offline",
            expect="gt",
        ),
    ]
    out = _run(rows, mi=mi).set_index("claim_id")
    assert out.at["C99", "verdict"] == "supported"
    assert out.at["C98", "verdict"] == "contradicted"
    assert out.at["C97", "verdict"] == "unverifiable"
    assert "p1" in out.at["C99", "data_sources"]


def test_price_ratio():
    rq = pd.DataFrame(
        {
            "accelerator": ["H100-SXM", "H100-SXM", "MI300X"],
            "price_usd_per_gpu_hour": [3.0, 2.0, 1.5],
            "source_id": ["a", "b", "c"],
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
    assert out.at[0, "verdict"] == "supported"
    assert out.at[0, "data_sources"] == "a; b; c"


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
    rows = [
        _row(
            test_method="model_output",
            subject="H200",
            reference="AMD",
            field="tight_tier_tok_s",
            claimed_value=50,
            expect="gt",
            tolerance_pct=10,
        ),
        _row(
            claim_id="C98",
            test_method="model_output",
            subject="MI300X;MI325X",
            field="loose_tier_winner",
            expect="is",
        ),
        _row(
            claim_id="C97",
            test_method="model_output",
            subject="AMD",
            field="train_winner_vendor",
            expect="is",
        ),
    ]
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
