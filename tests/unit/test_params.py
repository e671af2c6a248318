"""The Scenario rules: strict keys and types, known ids, safe names, readable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import paths
from analysis.params import ParamsError, Scenario, load_scenario, scenario_from_parameters

MINIMAL = "name: t\ntitle: T\ncandidates: [H100-SXM, MI300X]\n"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "p.yaml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("path", [paths.DEFAULT_PARAMS, paths.CI_PARAMS], ids=["default", "ci"])
def test_bundled_files_are_valid(path: Path) -> None:
    sc = load_scenario(path)
    assert isinstance(sc, Scenario)
    assert sc.name == path.stem


def test_minimal_file_is_valid(tmp_path: Path) -> None:
    assert load_scenario(_write(tmp_path, MINIMAL)).candidates == ("H100-SXM", "MI300X")


def test_unknown_key_is_rejected_with_allowed_keys(tmp_path: Path) -> None:
    with pytest.raises(ParamsError) as err:
        load_scenario(_write(tmp_path, MINIMAL + "candidatez: [H200]\n"))
    msg = str(err.value)
    assert "candidatez" in msg and "unknown key" in msg and "candidates" in msg


def test_unknown_nested_key_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match=r"cost\.pue_typo"):
        load_scenario(_write(tmp_path, MINIMAL + "cost: {pue_typo: 1.2}\n"))


def test_wrong_type_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match=r"inference\.isl"):
        load_scenario(_write(tmp_path, MINIMAL + "inference: {isl: lots}\n"))


def test_unknown_accelerator_suggests_the_closest(tmp_path: Path) -> None:
    text = "name: t\ntitle: T\ncandidates: [H100-SXM, MI300]\n"
    with pytest.raises(ParamsError) as err:
        load_scenario(_write(tmp_path, text))
    assert "unknown accelerator 'MI300'" in str(err.value)
    assert "Did you mean 'MI300X'" in str(err.value)


def test_negative_price_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match=r"cost\.gpu_hour_usd\.H100-SXM"):
        load_scenario(_write(tmp_path, MINIMAL + "cost: {gpu_hour_usd: {H100-SXM: -2.5}}\n"))


@pytest.mark.parametrize("name", ["../x", "/etc", "", "a/b", ".."])
def test_unsafe_scenario_names_are_rejected(tmp_path: Path, name: str) -> None:
    text = f'name: "{name}"\ntitle: T\ncandidates: [H100-SXM, MI300X]\n'
    with pytest.raises(ParamsError, match="name"):
        load_scenario(_write(tmp_path, text))


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match=r"YAML syntax error at line \d+"):
        load_scenario(_write(tmp_path, MINIMAL + "cost: {mode: buy\n"))


def test_missing_file_is_a_params_error(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match="cannot read"):
        load_scenario(tmp_path / "nope.yaml")


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match="mapping"):
        load_scenario(_write(tmp_path, "- a\n- b\n"))


def test_one_vendor_only_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match="AMD"):
        load_scenario(_write(tmp_path, "name: t\ntitle: T\ncandidates: [H100-SXM, H200]\n"))


def test_scenario_round_trips_through_parameters() -> None:
    from analysis.params import scenario_to_parameters

    sc = load_scenario(paths.CI_PARAMS)
    assert scenario_from_parameters(scenario_to_parameters(sc)["scenario"]) == sc
    assert scenario_from_parameters({}) == load_scenario(paths.DEFAULT_PARAMS)
