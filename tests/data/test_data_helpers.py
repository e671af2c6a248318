"""Small helpers of analysis.data the data chapter shows: filters, counts and citations."""

import pandas as pd
import pytest

from analysis import data, ids


@pytest.fixture
def spec_values() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "accelerator": ["A", "A", "B", "B", "C"],
            "field": ["tdp_w", "memory_gb", "tdp_w", "memory_gb", "tdp_w"],
            "value": [700.0, 80.0, 1000.0, 192.0, 1400.0],
            "basis": ["published", "published", "estimate", "derived", "estimate"],
            "source_id": ["s1", "s1", "s2", "s3", "s2"],
            "note": ["", "", "guess", "", "guess"],
        }
    )


def test_load_specs_keeps_only_the_asked_accelerators_in_canonical_order():
    wanted = ["MI300X", "H100-SXM", "B200"]
    specs = data.load_specs(accelerators=reversed(wanted))
    order = [a for a in ids.ACCELERATORS if a in wanted]
    assert specs["accelerator"].tolist() == order
    assert specs.index.tolist() == list(range(len(order)))
    everything = data.load_specs()
    pd.testing.assert_frame_equal(
        specs, everything[everything["accelerator"].isin(wanted)].reset_index(drop=True)
    )


def test_load_specs_combines_the_filters():
    announced = ids.ACCELERATORS_ANNOUNCED[0]
    specs = data.load_specs(include_announced=False, accelerators=["MI300X", announced])
    assert specs["accelerator"].tolist() == ["MI300X"]


def test_load_specs_rejects_an_unknown_accelerator():
    with pytest.raises(ValueError, match="unknown accelerator 'MI300Y'.*Did you mean 'MI300X'"):
        data.load_specs(accelerators=["MI300Y"])


def test_spec_basis_counts(spec_values):
    counts = data.spec_basis_counts(spec_values)
    assert counts.index.name == "field"
    assert counts.index.tolist() == ["memory_gb", "tdp_w"]
    assert counts.columns.tolist() == ["derived", "estimate", "published"]
    assert counts.loc["tdp_w"].tolist() == [0, 2, 1]
    assert counts.loc["memory_gb"].tolist() == [1, 0, 1]
    # Every value is counted once.
    assert int(counts.to_numpy().sum()) == len(spec_values)


def test_spec_basis_counts_of_the_real_table():
    values = data.load_spec_values()
    counts = data.spec_basis_counts()
    assert int(counts.to_numpy().sum()) == len(values)
    assert int(counts["estimate"].sum()) == int((values["basis"] == "estimate").sum())


def test_spec_estimates(spec_values):
    est = data.spec_estimates(spec_values)
    assert est["accelerator"].tolist() == ["B", "C"]
    assert (est["basis"] == "estimate").all()
    assert est.columns.tolist() == spec_values.columns.tolist()
    assert est.index.tolist() == [0, 1]
    assert (data.spec_estimates()["basis"] == "estimate").all()


def test_spec_and_model_source_ids_reads_only_the_listed_columns():
    sv = pd.DataFrame({"source_id": ["b", "a", "b"]})
    acc = pd.DataFrame({"source_id": ["a", "d"], "process_source_id": ["p", "p"]})
    models = pd.DataFrame({"source_id": ["c", None], "params_source_id": [None, "e"]})
    assert data.spec_and_model_source_ids(sv, acc, models) == ["a", "b", "c", "d", "e"]


def test_spec_and_model_source_ids_of_the_real_tables_all_exist():
    cited = data.spec_and_model_source_ids()
    assert cited == sorted(set(cited))
    assert set(cited) <= set(data.load_sources()["source_id"])
    assert set(data.load_models()["params_source_id"].dropna()) <= set(cited)


def test_count_sources_by_kind():
    sources = pd.DataFrame(
        {"source_id": ["a", "b", "c", "d"], "kind": ["vendor", "paper", "vendor", "blog"]}
    )
    out = data.count_sources_by_kind(["c", "a", "b", "zz"], sources)
    assert out.index.name == "kind"
    assert out.columns.tolist() == ["sources"]
    # "blog" is cited by nobody; the unknown id "zz" is not counted.
    assert out["sources"].to_dict() == {"paper": 1, "vendor": 2}
