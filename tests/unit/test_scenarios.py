import pytest
from typer.testing import CliRunner

from analysis import paths
from analysis.cli import app
from analysis.params import load_scenario

FILES = sorted(paths.SCENARIOS.glob("*.yaml"))


def test_at_least_five_scenarios():
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario_validates_and_name_is_file_stem(path):
    sc = load_scenario(path)
    assert sc.name == path.stem
    assert sc.description


def test_names_unique():
    names = [load_scenario(f).name for f in FILES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_cli_validate(path):
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output


def test_cli_lists_scenarios():
    result = CliRunner().invoke(app, ["scenarios"])
    assert result.exit_code == 0
    for f in FILES:
        assert f.stem in result.output
