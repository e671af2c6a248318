"""The command line: bad parameter files give one paragraph and exit 1; diff output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analysis.cli import app

runner = CliRunner()

BASE = "name: t\ntitle: T\ncandidates: [H100-SXM, MI300X]\n"
BAD_FILES = {
    "unknown-key": (BASE + "colour: red\n", "unknown key"),
    "wrong-type": (BASE + "inference: {isl: many}\n", "inference.isl"),
    "unknown-accelerator": ("name: t\ntitle: T\ncandidates: [H100-SXM, MI30X]\n", "Did you mean"),
    "negative-price": (BASE + "cost: {gpu_hour_usd: {MI300X: -1}}\n", "gpu_hour_usd"),
    "unsafe-name": ('name: "../x"\ntitle: T\ncandidates: [H100-SXM, MI300X]\n', "safe folder name"),
    "yaml-syntax": (BASE + "cost: [unclosed\n", "YAML syntax error"),
}


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_parameter_file_exits_1_with_one_paragraph(
    tmp_path: Path, case: str, command: str
) -> None:
    text, expected = BAD_FILES[case]
    f = tmp_path / f"{case}.yaml"
    f.write_text(text, encoding="utf-8")
    args = (
        ["run", "--params", str(f), "--out", str(tmp_path / "reports")]
        if command == "run"
        else ["validate", str(f)]
    )
    res = runner.invoke(app, args)
    assert res.exit_code == 1, res.output
    out = res.output.strip()
    assert expected in out
    assert "Traceback" not in out
    assert "\n\n" not in out  # one paragraph
    assert not (tmp_path / "reports").exists()  # nothing executed or published


def test_unknown_format_is_rejected(tmp_path: Path) -> None:
    res = runner.invoke(app, ["run", "--formats", "html,docx", "--out", str(tmp_path)])
    assert res.exit_code == 1 and "docx" in res.output


def _results(path: Path, version: str, chapters: dict) -> Path:
    path.mkdir()
    (path / "results.json").write_text(
        json.dumps({"scenario": "ci", "version": version, "chapters": chapters})
    )
    return path


def test_diff_prints_changes_and_flips(tmp_path: Path) -> None:
    old = _results(
        tmp_path / "a",
        "v0001",
        {
            "40-tco": {"tier0_cheapest": "H200", "cost": 2.0, "same": 1},
            "00-summary": {"rec_training": "NVIDIA"},
        },
    )
    new = _results(
        tmp_path / "b",
        "v0002",
        {
            "40-tco": {"tier0_cheapest": "MI300X", "cost": 2.5, "same": 1},
            "00-summary": {"rec_training": "NVIDIA"},
        },
    )
    res = runner.invoke(app, ["diff", str(old), str(new)])
    assert res.exit_code == 0, res.output
    assert "FLIPPED" in res.output
    assert "tier0_cheapest: H200 -> MI300X" in res.output
    assert "cost: 2 -> 2.5 (+25.0%)" in res.output
    assert "same" not in res.output and "rec_training" not in res.output


def test_diff_does_not_call_a_moved_probability_a_flip(tmp_path: Path) -> None:
    old = _results(tmp_path / "a", "v0001", {"00-summary": {"rec_tier0_p_amd_cheaper": 0.62}})
    new = _results(tmp_path / "b", "v0002", {"00-summary": {"rec_tier0_p_amd_cheaper": 0.66}})
    res = runner.invoke(app, ["diff", str(old), str(new)])
    assert res.exit_code == 0, res.output
    assert "rec_tier0_p_amd_cheaper" in res.output
    assert "FLIPPED" not in res.output


def test_diff_of_identical_versions(tmp_path: Path) -> None:
    a = _results(tmp_path / "a", "v0001", {"x": {"k": 1}})
    res = runner.invoke(app, ["diff", str(a), str(a / "results.json")])
    assert res.exit_code == 0 and "No key figure changed" in res.output


def test_diff_of_missing_folder_is_a_clean_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["diff", str(tmp_path / "nope"), str(tmp_path / "nope2")])
    assert res.exit_code == 1 and "not found" in res.output and "Traceback" not in res.output


def test_validate_warns_on_a_candidate_without_a_quote_in_the_pool(tmp_path):
    """A data gap is a warning (exit 0) that names the part and what will be left out."""
    from typer.testing import CliRunner

    from analysis.cli import app

    f = tmp_path / "rent.yaml"
    f.write_text(
        "name: t\ntitle: t\ncandidates: [B300, GB300, MI355X]\n"
        "cost: {mode: rent, rental_pool: neocloud-list/on-demand}\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(app, ["validate", str(f)])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "warning:" in out and "candidate GB300:" in out and "no quote in this pool" in out
    assert "left out of the rented comparison" in out
    # B300 (Hyperstack, Nebius, RunPod) and MI355X (Vultr) have neocloud on-demand quotes;
    # GB300 has none there (only OCI's hyperscaler list price).
    assert "candidate B300:" not in out and "candidate MI355X:" not in out
