import re

import pytest

from analysis import claims, data, paths
from analysis.tables.claims import VERDICTS

SEED = sorted((paths.ROOT.parent / "shared" / "seed").glob("*.txt"))


@pytest.fixture(scope="module")
def table():
    return data.load_table("claims")


@pytest.mark.skipif(not SEED, reason="seed article not shipped beside the repository")
def test_every_quote_is_verbatim_from_the_article(table):
    text = SEED[0].read_text(encoding="utf-8")
    missing = [c for c, q in zip(table["claim_id"], table["quote"], strict=True) if q not in text]
    assert not missing


def test_ids_sequential(table):
    assert table["claim_id"].tolist() == [f"C{i:02d}" for i in range(1, len(table) + 1)]
    assert len(table) >= 30


def test_fact_sources_exist(table):
    known = set(data.load_table("sources")["source_id"])
    cited = {s for v in table["fact_sources"].dropna() for s in v.split(";")}
    assert cited <= known, sorted(cited - known)


def test_subject_and_reference_ids_are_canonical(table):
    from analysis import ids

    allowed = set(ids.ACCELERATORS) | set(ids.VENDORS)
    for col in ("subject", "reference"):
        names = {n for v in table[col].dropna() for n in v.split(";")}
        assert names <= allowed, sorted(names - allowed)


def test_audit_covers_every_claim_and_cites_data(table):
    audit = claims.evaluate_claims()
    assert audit["claim_id"].tolist() == table["claim_id"].tolist()
    assert set(audit["verdict"]) <= set(VERDICTS)
    tested = audit[audit["verdict"] != "unverifiable"]
    assert (tested["data_sources"].str.len() > 0).all()


def test_spec_fields_exist(table):
    specs = data.load_specs()
    rows = table[table["test_method"].isin(["spec_value", "spec_ratio"])]
    for f in rows["field"]:
        for part in re.split(r"[;/]", f):
            assert part.split("*")[0] in specs.columns, part


def test_text_claims_read_as_plain_text(table):
    """A text claim's pattern yields a readable claimed value (what the audit shows)."""
    rows = table[table["claimed_text"].notna()]
    assert len(rows) >= 3
    for cid, pattern in zip(rows["claim_id"], rows["claimed_text"], strict=True):
        label = claims._regex_label(pattern)
        assert label and not re.search(r"[\\^$|?]", label), (cid, label)
        assert re.search(pattern, label, flags=re.IGNORECASE), (cid, pattern, label)
