import pandas as pd
import pytest

from analysis import data, ids


@pytest.fixture(scope="module")
def sources():
    return set(data.load_table("sources")["source_id"])


@pytest.mark.parametrize("name", ["rental_quotes", "purchase_prices", "facility"])
def test_tables_load_and_cite_sources(name, sources):
    df = data.load_table(name)
    assert len(df) > 0
    missing = set(df["source_id"]) - sources
    assert not missing, f"{name}: source_id(s) not in sources.csv: {sorted(missing)}"


def test_many_quotes_both_vendors():
    q = data.load_table("rental_quotes")
    assert len(q) >= 30
    assert q["provider"].nunique() >= 10
    vendors = {ids.vendor_of(a) for a in q["accelerator"]}
    assert vendors == {"AMD", "NVIDIA"}


def test_quote_prices_plausible():
    q = data.load_table("rental_quotes")
    assert q["price_usd_per_gpu_hour"].between(0.5, 30).all()


def test_every_shipping_candidate_has_a_purchase_price():
    p = data.load_table("purchase_prices")
    for acc in ("H100-SXM", "H200", "B200", "MI300X", "MI325X", "MI355X"):
        assert acc in set(p["accelerator"]), acc


def test_judgement_rows_say_so():
    p = data.load_table("purchase_prices")
    judged = p[p["basis"] == "judgement"]
    assert judged["note"].notna().all()
    f = data.load_table("facility")
    est = f[f["estimate"] == "yes"]
    assert est["note"].notna().all()


def test_low_le_high_rejected(tmp_path):
    from analysis.tables.prices import PURCHASE_PRICES

    df = data.load_table("purchase_prices").astype(str)
    df.loc[0, "price_usd_low"] = "99999999"
    with pytest.raises(data.DataValidationError, match="price_usd_low <= price_usd_high"):
        PURCHASE_PRICES.validate(pd.DataFrame(df))
