"""The derived store: off unless asked, keyed by content, never a source of failure.

And the validations it holds read back exactly as a fresh process computes them.
"""

from __future__ import annotations

import errno
import os
import pickle
from pathlib import Path

import pandas as pd
import pytest

from analysis import data, derived_store
from analysis.inference import deployment_fit
from analysis.inference.latency import stored_frame
from analysis.inference.validation import HoldoutValidation
from analysis.inputs import Inputs


class Calls:
    """A factory that counts its calls."""

    def __init__(self, value: object = 42) -> None:
        self.n, self.value = 0, value

    def __call__(self) -> object:
        self.n += 1
        return self.value


def _inputs(
    digest: str = "tables-v1",
    measurements: pd.DataFrame | None = None,
    still: bool = True,
) -> Inputs:
    def store(key, factory):
        return derived_store.load_or_build(digest, key, factory, still=lambda: still)

    return Inputs(reader=lambda name: pd.DataFrame(), measurements=measurements, store=store)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.pkl"))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "store"
    monkeypatch.setenv(derived_store.ENV, str(folder))
    return folder


def _untouched(*_: object) -> None:
    raise AssertionError("the store was used")


def test_off_unless_the_variable_names_a_folder(monkeypatch) -> None:
    monkeypatch.setattr(derived_store, "_read", _untouched)
    monkeypatch.setattr(derived_store, "_write", _untouched)
    for value in (None, "", "  "):
        if value is None:
            monkeypatch.delenv(derived_store.ENV, raising=False)
        else:
            monkeypatch.setenv(derived_store.ENV, value)
        assert derived_store.directory() is None
        calls = Calls()
        for _ in range(2):  # two processes' worth of inputs: each computes
            assert _inputs().derived("k", calls, persist=True) == 42
        assert calls.n == 2


def test_a_second_inputs_over_the_same_content_reads_the_stored_value(store) -> None:
    calls = Calls(pd.DataFrame({"x": [0.1, 0.2]}))
    first = _inputs().derived(("k", 1), calls, persist=True)
    second = _inputs().derived(("k", 1), calls, persist=True)
    assert calls.n == 1
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    assert len(_entries(store)) == 1


def test_other_content_other_key_or_no_persist_computes_afresh(store) -> None:
    calls = Calls()
    _inputs("tables-v1").derived("k", calls, persist=True)
    _inputs("tables-v2").derived("k", calls, persist=True)  # a table changed
    _inputs("tables-v1").derived("other", calls, persist=True)
    _inputs("tables-v1").derived("k", calls)  # not asked to persist
    assert calls.n == 4
    assert len(_entries(store)) == 3


def test_nothing_is_written_when_data_or_code_changed_during_the_work(store, monkeypatch) -> None:
    calls = Calls()
    _inputs(still=False).derived("k", calls, persist=True)  # a data file edited meanwhile
    assert not _entries(store)
    monkeypatch.setattr(derived_store, "current_code_digest", lambda: "edited")
    _inputs().derived("k", calls, persist=True)  # a source file edited meanwhile
    assert not _entries(store)
    assert calls.n == 2


def test_new_code_gets_its_own_folder_and_only_old_code_folders_go(store, monkeypatch) -> None:
    _inputs().derived("k", Calls(), persist=True)
    (old,) = [p for p in store.iterdir() if p.is_dir()]
    (store / "precious").mkdir()  # a store pointed at a folder with other content
    (store / "precious" / "notes.txt").write_text("keep me")
    (store / "abc").mkdir()
    new_code = "f" * 64
    monkeypatch.setattr(derived_store, "code_digest", lambda: new_code)
    monkeypatch.setattr(derived_store, "current_code_digest", lambda: new_code)
    calls = Calls()
    _inputs().derived("k", calls, persist=True)
    assert calls.n == 1  # another code version never reads the old entry
    assert not old.exists()
    assert sorted(p.name for p in store.iterdir()) == ["abc", "f" * 24, "precious"]
    assert (store / "precious" / "notes.txt").read_text() == "keep me"


def test_inputs_with_measurements_or_without_a_store_are_not_stored(store) -> None:
    calls = Calls()
    measured = pd.DataFrame({"accelerator": ["MI355X"]})
    _inputs(measurements=measured).derived("k", calls, persist=True)
    Inputs.from_tables({}).derived("k", calls, persist=True)
    assert calls.n == 2
    assert not store.exists()


def test_a_corrupt_entry_is_recomputed_and_rewritten(store) -> None:
    _inputs().derived("k", Calls(), persist=True)
    (entry,) = _entries(store)
    entry.write_bytes(b"not a pickle")
    calls = Calls(7)
    assert _inputs().derived("k", calls, persist=True) == 7
    assert calls.n == 1
    assert pickle.loads(entry.read_bytes()) == 7


@pytest.mark.parametrize(
    ("attr", "error"),
    [
        ("is_dir", PermissionError(errno.EACCES, "Permission denied")),
        ("mkdir", PermissionError(errno.EACCES, "Permission denied")),
        ("open", OSError(errno.ENOSPC, "No space left on device")),
    ],
)
def test_a_store_that_cannot_be_entered_or_written_is_skipped(
    store, monkeypatch, attr, error
) -> None:
    def fail(*_: object, **__: object) -> None:
        raise error

    calls = Calls()
    with monkeypatch.context() as m:
        m.setattr(Path, attr, fail)
        assert _inputs().derived("k", calls, persist=True) == 42
        assert _inputs().derived("k", calls, persist=True) == 42
    assert calls.n == 2
    assert not store.exists() or not (_entries(store) or list(store.rglob("*.tmp")))


def test_a_store_that_is_a_file_is_skipped(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "store"
    blocker.write_text("in the way")
    monkeypatch.setenv(derived_store.ENV, str(blocker))
    calls = Calls()
    assert _inputs().derived("k", calls, persist=True) == 42
    assert calls.n == 1
    assert blocker.read_text() == "in the way"


def test_a_value_that_cannot_be_pickled_is_returned_not_stored(store) -> None:
    value = lambda: None  # noqa: E731 - a lambda is the unpicklable thing under test
    assert _inputs().derived("k", Calls(value), persist=True) is value
    assert not _entries(store)
    assert not list(store.rglob("*.tmp"))


def test_a_key_without_a_stable_name_is_refused(store) -> None:
    with pytest.raises(TypeError, match="no stable name"):
        _inputs().derived(("k", object()), Calls(), persist=True)


def test_enabled_defers_to_the_user_and_restores(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv(derived_store.ENV, raising=False)
    with derived_store.enabled(tmp_path):
        assert derived_store.directory() == tmp_path
    assert derived_store.ENV not in os.environ
    monkeypatch.setenv(derived_store.ENV, "")  # the user turned it off
    with derived_store.enabled(tmp_path):
        assert derived_store.directory() is None
    with derived_store.enabled(tmp_path / "cold", override=True):
        assert derived_store.directory() == tmp_path / "cold"
    assert os.environ[derived_store.ENV] == ""


def test_a_relative_folder_is_made_absolute(monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(derived_store.ENV, raising=False)
    with derived_store.enabled(Path("rel")):
        assert os.environ[derived_store.ENV] == str(tmp_path / "rel")
    monkeypatch.setenv(derived_store.ENV, "rel2")
    assert derived_store.directory() == tmp_path / "rel2"


def test_the_data_folder_digest_follows_every_file(tmp_path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.csv").write_text("x\n1\n")
    (tmp_path / "b.csv").write_text("y\n2\n")
    before = data.content_digest(tmp_path)
    assert data.content_digest(tmp_path) == before
    (tmp_path / "specs" / "a.csv").write_text("x\n3\n")
    assert data.content_digest(tmp_path) != before
    (tmp_path / "specs" / "a.csv").write_text("x\n1\n")
    (tmp_path / "c.csv").write_text("")
    assert data.content_digest(tmp_path) != before  # a new file counts too
    (tmp_path / "c.csv").unlink()
    (tmp_path / "specs" / "a.csv").rename(tmp_path / "a.csv")
    assert data.content_digest(tmp_path) != before  # and where a file is


def test_load_inputs_stores_under_its_folders_digest(tmp_path, store) -> None:
    root = tmp_path / "data"
    root.mkdir()
    (root / "a.csv").write_text("x\n1\n")
    calls = Calls()
    data.load_inputs(root).derived("k", calls, persist=True)
    data.load_inputs(root).derived("k", calls, persist=True)
    assert calls.n == 1
    (root / "a.csv").write_text("x\n2\n")
    data.load_inputs(root).derived("k", calls, persist=True)
    assert calls.n == 2


def test_load_inputs_over_an_edited_folder_does_not_store(tmp_path, store) -> None:
    root = tmp_path / "data"
    root.mkdir()
    (root / "a.csv").write_text("x\n1\n")
    inp = data.load_inputs(root)

    def edits_meanwhile() -> int:
        (root / "a.csv").write_text("x\n2\n")
        return 1

    assert inp.derived("k", edits_meanwhile, persist=True) == 1
    assert not _entries(store)


def test_a_stored_validation_equals_a_fresh_one(store, monkeypatch) -> None:
    """The bundled data: what a second kernel reads back is what a fresh one computes."""
    monkeypatch.delenv(derived_store.ENV)
    fresh = deployment_fit.held_out("aggregated", "cell", data.load_inputs())
    monkeypatch.setenv(derived_store.ENV, str(store))
    written = deployment_fit.held_out("aggregated", "cell", data.load_inputs())
    assert _entries(store)  # the validation (and the serving shape it reads)

    def refit(*_: object, **__: object) -> None:
        raise AssertionError("refitted instead of read back")

    monkeypatch.setattr(deployment_fit, "validate_by_configuration", refit)
    read = deployment_fit.held_out("aggregated", "cell", data.load_inputs())
    pd.testing.assert_frame_equal(written, fresh, check_exact=True)
    pd.testing.assert_frame_equal(read, fresh, check_exact=True)


def test_stored_frame_keeps_only_the_bundled_inputs_result(store) -> None:
    calls = Calls(pd.DataFrame({"x": [1.0]}))
    given = pd.DataFrame()
    stored_frame("check", (given, None, None), _inputs(), calls)  # a caller's frame
    assert calls.n == 1 and not _entries(store)
    inp = _inputs()
    first = stored_frame("check", (None, None, None), inp, calls)
    first["x"] = 2.0  # a caller's edit reaches neither the memo nor the store
    again = stored_frame("check", (None, None, None), inp, calls)
    fresh = stored_frame("check", (None, None, None), _inputs(), calls)
    assert calls.n == 2
    assert again["x"].tolist() == fresh["x"].tolist() == [1.0]
    assert len(_entries(store)) == 1


def test_a_holdout_validation_copy_shares_no_frame_object() -> None:
    frame = pd.DataFrame({"ape_pct": [5.0]})
    held = HoldoutValidation({"round": frame}, {"round": frame}, {"round": frame})
    copy = held.copy()
    copy.validations["round"]["ape_pct"] = 9.0
    copy.summaries.pop("round")
    assert frame["ape_pct"].tolist() == [5.0]
    assert list(held.summaries) == ["round"]
