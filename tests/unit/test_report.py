"""Report versioning: version ids, the previous version's results, the latest link."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from analysis import report

NOW = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def test_next_version_id_follows_the_highest_number(tmp_path: Path) -> None:
    assert report.next_version_id(tmp_path / "none", "ab" * 32, NOW) == (
        "v0001-20250102T030405Z-abababab"
    )
    (tmp_path / "v0007-20240101T000000Z-0123abcd").mkdir()
    (tmp_path / "v0009-not-a-version").mkdir()
    (tmp_path / "latest").symlink_to("v0007-20240101T000000Z-0123abcd")
    assert report.next_version_id(tmp_path, "cd" * 32, NOW).startswith("v0008-")


def test_read_previous_results(tmp_path: Path) -> None:
    assert report.read_previous_results(tmp_path) == {}  # no latest
    version = tmp_path / "v0001-20250102T030405Z-abababab"
    version.mkdir()
    (tmp_path / "latest").symlink_to(version.name)
    (version / "results.json").write_text("{not json", encoding="utf-8")
    assert report.read_previous_results(tmp_path) == {}
    (version / "results.json").write_text(json.dumps({"version": "v1"}), encoding="utf-8")
    assert report.read_previous_results(tmp_path) == {}  # not a results.json
    good = {"version": "v1", "chapters": {"40-tco": {"x": 1}}}
    (version / "results.json").write_text(json.dumps(good), encoding="utf-8")
    assert report.read_previous_results(tmp_path) == good


def test_point_latest_replaces_the_link(tmp_path: Path) -> None:
    for name in ("v0001-a", "v0002-b"):
        (tmp_path / name).mkdir()
    report._point_latest(tmp_path, "v0001-a")
    latest = report._point_latest(tmp_path, "v0002-b")
    assert latest.readlink() == Path("v0002-b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "v0001-a", "v0002-b"]
