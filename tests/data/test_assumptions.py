import pytest

from analysis import data
from analysis.params import Scenario


@pytest.fixture(scope="module")
def register():
    return data.load_table("assumptions")


def _scenario_value(path: str) -> float:
    obj = Scenario(name="x", title="x")
    for part in path.split("."):
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    return float(obj)


def test_register_matches_params_defaults(register):
    rows = register[register["parameter"].str.startswith("cost.")]
    assert len(rows) >= 8
    for r in rows.itertuples():
        assert _scenario_value(r.parameter) == pytest.approx(r.value), r.id


def test_register_matches_model_constants(register):
    # Modelling constants of the performance models are assumptions too: the register
    # and the code must state the same value.
    import importlib

    rows = register[register["parameter"].str.match(r"^(inference|training)\.")]
    assert len(rows) >= 6
    for r in rows.itertuples():
        module, name = r.parameter.split(".", 1)
        value = getattr(importlib.import_module(f"analysis.{module}"), name)
        assert value == pytest.approx(r.value), r.id
        assert r.low <= value <= r.high, r.id


def test_register_sources_exist(register):
    sources = set(data.load_table("sources")["source_id"])
    assert set(register["source_id"]) <= sources


def test_tco_uses_only_registered_assumptions(register):
    from analysis import tco

    ids_used = {aid for _, aid in tco.GLOBAL_INPUTS.values()}
    ids_used |= {
        "A-throughput-error",
        "A-porting-effort-amd",
        "A-porting-effort-nvidia",
        "A-software-nvidia",
    }
    assert ids_used <= set(register["id"])
