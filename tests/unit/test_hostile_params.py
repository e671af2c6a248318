"""Hostile parameter files: the committed corpus and generated ones are refused cleanly.

Every file in ``tests/hostile/params/`` must end in exit 1 with one message: no traceback,
within 15 s, under 20 KB of output (``tests/hostile/make_corpus.py`` writes them).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analysis import paths
from analysis.cli import app
from analysis.params import ParamsError, load_scenario, parse_scenario, safe_load_yaml

CORPUS = paths.TESTS / "hostile" / "params"
FILES = sorted(CORPUS.glob("*.yaml"))
MAX_OUTPUT = 20_000
MAX_SECONDS = 15.0


def _generator():
    spec = importlib.util.spec_from_file_location("make_corpus", CORPUS.parent / "make_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _check_refused(result, seconds: float, name: str) -> None:
    out = result.output
    assert result.exit_code == 1, f"{name}: exit {result.exit_code}: {out[:500]}"
    assert "Traceback" not in out, f"{name}: traceback:\n{out[:2000]}"
    assert result.exception is None or isinstance(result.exception, SystemExit), name
    assert len(out.encode()) < MAX_OUTPUT, f"{name}: {len(out.encode())} bytes of output"
    assert seconds < MAX_SECONDS, f"{name}: took {seconds:.1f} s"
    assert out.lstrip().startswith("error:"), f"{name}: not one error message: {out[:300]}"


def test_corpus_is_large_and_current(tmp_path: Path) -> None:
    assert len(FILES) >= 100
    gen = _generator()
    want = {
        f"{i:03d}-{slug}.yaml": data
        for i, (slug, data) in enumerate(sorted(gen.cases().items()), 1)
    }
    have = {f.name: f.read_bytes() for f in FILES}
    assert have == want, "corpus is stale: run python tests/hostile/make_corpus.py"


def test_corpus_base_is_valid(tmp_path: Path) -> None:
    """Without this, every case could be refused for the same trivial reason."""
    f = tmp_path / "base.yaml"
    f.write_text(_generator().dump(_generator().BASE))
    assert load_scenario(f).name == "hostile"


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_hostile_file_is_refused(path: Path) -> None:
    t = time.perf_counter()
    result = CliRunner().invoke(app, ["validate", str(path)])
    _check_refused(result, time.perf_counter() - t, path.name)


SAMPLE = [f for f in FILES if any(k in f.name for k in ("alias-bomb", "markup", "enc-", "huge"))]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["validate", "run"])
def test_hostile_files_refused_by_the_real_cli(command: str, tmp_path: Path) -> None:
    """A real process (atexit hooks, import-time errors, click's own handling included)."""
    for path in SAMPLE:
        args = [path] if command == "validate" else ["--params", path, "--out", tmp_path]
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "analysis", command, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        seconds = time.perf_counter() - t
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, (path.name, out[:500])
        assert "Traceback" not in out, (path.name, out[:2000])
        assert len(out.encode()) < MAX_OUTPUT and seconds < MAX_SECONDS, path.name
    assert not list(tmp_path.iterdir()) or all(p.name == "hostile" for p in tmp_path.iterdir())


# --- generated hostile files (Hypothesis) ---------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=60),
    st.sampled_from(["[/]", "[link=x]y[/link]", "<script>alert(1)</script>", "../x", "x\n", ""]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
PATHS = [
    ("name",),
    ("title",),
    ("description",),
    ("candidates",),
    ("include_announced",),
    ("inference", "isl"),
    ("inference", "osl"),
    ("inference", "tiers"),
    ("inference", "model"),
    ("training", "tokens"),
    ("training", "cluster_gpus"),
    ("cost", "utilization"),
    ("cost", "gpu_hour_usd"),
    ("cost", "server_price_usd"),
    ("cost", "seed"),
    ("bogus",),
]


@settings(max_examples=150, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=st.lists(st.tuples(st.sampled_from(PATHS), VALUES), min_size=1, max_size=4))
def test_mutated_scenarios_validate_or_fail_with_one_message(mutations) -> None:
    doc = yaml.safe_load(yaml.safe_dump(_generator().BASE))
    for path, value in mutations:
        target = doc
        for part in path[:-1]:
            target = target.setdefault(part, {}) if isinstance(target.get(part), dict) else target
        target[path[-1]] = value
    text = yaml.safe_dump(doc, allow_unicode=True)
    t = time.perf_counter()
    try:
        parse_scenario(safe_load_yaml(text, "<generated>"), "<generated>")
    except ParamsError as err:
        msg = str(err)
        assert msg.startswith("<generated>:")
        assert len(msg.encode()) < MAX_OUTPUT
    assert time.perf_counter() - t < 5


@settings(max_examples=150, deadline=5000)
@given(data=st.binary(max_size=2000) | st.text(max_size=2000).map(str.encode))
def test_arbitrary_bytes_parse_or_fail_with_one_message(data: bytes) -> None:
    try:
        raw = safe_load_yaml(data, "<bytes>")
        parse_scenario(raw, "<bytes>")
    except ParamsError as err:
        assert str(err).startswith("<bytes>:") and len(str(err)) < MAX_OUTPUT


@settings(max_examples=60, deadline=10000)
@given(title=st.text(max_size=40), tier=st.text(min_size=1, max_size=20))
def test_cli_never_parses_user_text_as_markup(title: str, tier: str, tmp_path_factory) -> None:
    doc = yaml.safe_load(yaml.safe_dump(_generator().BASE))
    doc["name"] = "[/]" + tier
    doc["title"] = title
    f = tmp_path_factory.mktemp("gen") / "p.yaml"
    f.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(f)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
