"""The report pipeline: execute the chapters, render, version, publish, diff.

Analytical decisions taken here (mechanics in :mod:`analysis.execute`,
:mod:`analysis.render` and :mod:`analysis.goldens`):

* A version id is ``v<NNNN>-<UTC time>-<short digest>``: a sequence number per scenario,
  when it was made, and a digest of what made it (params, data, notebooks, package, commit).
* Each run executes into its own build folder ``_build/<scenario>/<run-id>/`` (kept: the
  executed notebooks are the provenance record and the debugging aid when a cell fails).
* Publishing is atomic: everything is written into a temporary folder inside
  ``reports/<scenario>/`` and renamed to the version folder; ``latest`` (a relative
  symlink) is replaced with ``os.replace`` of a temporary symlink only after that
  succeeded. A failed run therefore leaves every earlier version and ``latest`` as they were.
* ``results.json`` holds every chapter's key figures (from the key-results output, not by
  re-running anything); ``diff`` compares two of them and calls out flipped
  recommendations and winners (keys ``rec_*``, ``*_winner``, ``*_cheapest``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from analysis import __version__, paths
from analysis.execute import Chapter, ChapterError, discover_chapters, execute_all
from analysis.goldens import make_goldens, sync_notebooks
from analysis.params import load_scenario, scenario_to_parameters
from analysis.render import (
    Renderer,
    RenderError,
    print_pdf,
    render_fallback_html,
    render_quarto,
    select_renderer,
)

__all__ = [
    "ReportError",
    "RunResult",
    "VersionDiff",
    "diff_versions",
    "format_diff",
    "make_goldens",
    "run_report",
    "sync_notebooks",
]

VERSION_DIR = re.compile(r"^v(\d{4,})-\d{8}T\d{6}Z-[0-9a-f]{8}$")
NOTEBOOKS_ENV = "GPU_REPORT_NOTEBOOKS"
#: Packages whose versions every manifest records.
RECORDED_PACKAGES = (
    "gpu-decision-report",
    "altair",
    "ipykernel",
    "jupytext",
    "nbconvert",
    "nbformat",
    "numpy",
    "pandas",
    "pandera",
    "papermill",
    "pydantic",
    "pypdf",
    "pyyaml",
    "scipy",
    "vl-convert-python",
)


class ReportError(RuntimeError):
    """A report run failed; the message (for the user) names the notebook and the cell."""


@dataclass
class RunResult:
    """What a successful run produced."""

    version: str
    version_dir: Path
    latest: Path
    build_dir: Path
    renderer: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)
    chapter_seconds: dict[str, float] = field(default_factory=dict)
    chapters: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)


# --- digests and provenance -----------------------------------------------------------


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files_under(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    )


def digest_files(files: Iterable[Path], base: Path) -> tuple[str, list[dict[str, str]]]:
    """A combined digest over (relative path, sha256) pairs, and the per-file entries."""
    entries = [{"path": _rel(p, base), "sha256": sha256_file(p)} for p in files]
    h = hashlib.sha256()
    for e in entries:
        h.update(f"{e['path']}\0{e['sha256']}\n".encode())
    return h.hexdigest(), entries


def _rel(p: Path, base: Path) -> str:
    try:
        return p.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(p)


def git_state(root: Path) -> dict[str, Any]:
    """Current commit and whether the work tree differs from it (``unknown`` outside git)."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=normal"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that shape the report."""
    out = {"python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def next_version_id(scenario_dir: Path, digest: str, now: dt.datetime | None = None) -> str:
    """``v<n+1>-<UTC timestamp>-<digest[:8]>`` where n is the highest existing number."""
    numbers = [
        int(m.group(1))
        for p in (scenario_dir.iterdir() if scenario_dir.is_dir() else [])
        if (m := VERSION_DIR.match(p.name))
    ]
    stamp = (now or _utc_now()).strftime("%Y%m%dT%H%M%SZ")
    return f"v{max(numbers, default=0) + 1:04d}-{stamp}-{digest[:8]}"


def read_previous_results(scenario_dir: Path) -> dict[str, Any]:
    """results.json of the version ``latest`` points at ({} if none or unreadable)."""
    try:
        return _load_results(scenario_dir / "latest" / "results.json")
    except (OSError, ReportError):
        return {}


# --- the run --------------------------------------------------------------------------


def chapters_folder(notebooks_dir: Path | None = None) -> Path:
    """Where chapters are discovered: the argument, ``$GPU_REPORT_NOTEBOOKS``, or notebooks/."""
    if notebooks_dir is not None:
        return Path(notebooks_dir)
    env = os.environ.get(NOTEBOOKS_ENV)
    return Path(env) if env else paths.NOTEBOOKS


class _Progress:
    """A rich progress display: one bar per chapter (cells), then the render phases."""

    def __init__(self, chapters: list[Chapter], enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.enabled = enabled
        self.console = Console(stderr=True, highlight=False)
        self.progress = Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
        )
        self.tasks = {
            ch.id: self.progress.add_task(ch.id, total=ch.n_code_cells + 1, start=False)
            for ch in chapters
        }
        self.started: set[str] = set()

    def cell(self, chapter: str, done: int, total: int) -> None:
        if chapter not in self.started:
            self.started.add(chapter)
            self.progress.start_task(self.tasks[chapter])
        self.progress.update(self.tasks[chapter], completed=done, total=total)

    def phase(self, name: str) -> int:
        return self.progress.add_task(name, total=1)

    def finish(self, task: int) -> None:
        self.progress.update(task, completed=1)

    def __enter__(self) -> _Progress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]


def run_report(
    params: Path,
    out_dir: Path | None = None,
    formats: tuple[str, ...] = ("html", "pdf"),
    jobs: int = 2,
    *,
    notebooks_dir: Path | None = None,
    build_root: Path | None = None,
    progress: bool = True,
) -> RunResult:
    """Execute every chapter for the scenario in ``params`` and publish a new version.

    Args:
        params: the parameter file (validated first: :class:`~analysis.params.ParamsError`).
        out_dir: the reports folder (default ``reports/``); the version goes to
            ``<out_dir>/<scenario>/<version>/`` and ``<out_dir>/<scenario>/latest``.
        formats: any of ``html``, ``pdf``.
        jobs: chapters executed in parallel.
        notebooks_dir: chapters folder (default: ``$GPU_REPORT_NOTEBOOKS`` or notebooks/).
        build_root: where build folders go (default ``_build/``).
        progress: show the rich progress display (stderr).

    Raises:
        ParamsError: invalid parameters (nothing is executed).
        ReportError: no chapters, a failing cell, or a render error; earlier versions and
            ``latest`` are untouched and the executed notebooks are kept.
    """
    t0 = time.perf_counter()
    params = Path(params)
    scenario = load_scenario(params)  # ParamsError -> the CLI prints it and exits 1
    folder = chapters_folder(notebooks_dir)
    chapters = discover_chapters(folder)
    if not chapters:
        raise ReportError(f"no chapters found: no notebooks matching NN-*.ipynb in {folder}")
    try:
        renderer = select_renderer(tuple(formats))
    except RenderError as err:
        raise ReportError(str(err)) from None

    reports = Path(out_dir) if out_dir is not None else paths.REPORTS
    scenario_dir = reports / scenario.name
    git = git_state(paths.ROOT)
    params_digest = sha256_file(params)
    data_digest, data_entries = digest_files(_files_under(paths.DATA), paths.ROOT)
    nb_digest, nb_entries = digest_files([c.path for c in chapters], paths.ROOT)
    run_digest = hashlib.sha256(
        f"{params_digest}|{data_digest}|{nb_digest}|{__version__}|{git['commit']}".encode()
    ).hexdigest()
    version = next_version_id(scenario_dir, run_digest)
    run_id = f"{_utc_now().strftime('%Y%m%dT%H%M%S%fZ')}-{os.getpid()}"
    build_dir = (build_root or paths.BUILD) / scenario.name / run_id
    exec_dir = build_dir / "notebooks"
    exec_dir.mkdir(parents=True, exist_ok=True)

    previous = read_previous_results(scenario_dir)
    run_info = {
        "package_version": __version__,
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
        "renderer": renderer.name,
        "renderer_version": renderer.version,
        "renderer_label": renderer.label,
        "data_digest": data_digest,
        "params_digest": params_digest,
        "version": version,
    }
    base = {
        **scenario_to_parameters(scenario),
        "previous_results": previous,
        "run_info": run_info,
    }
    timings: dict[str, float] = {}
    with _Progress(chapters, progress) as prog:
        t = time.perf_counter()
        try:
            executed = execute_all(chapters, exec_dir, base, jobs=jobs, on_cell=prog.cell)
        except ChapterError as err:
            raise ReportError(str(err)) from None
        timings["execute"] = time.perf_counter() - t
        chapter_seconds = {ex.chapter.id: round(ex.seconds, 3) for ex in executed}

        staging = scenario_dir / f".tmp-{run_id}"
        staging.mkdir(parents=True, exist_ok=True)
        try:
            _render(
                renderer,
                [e.output for e in executed],
                build_dir,
                staging,
                formats,
                scenario,
                version,
                git,
                timings,
                prog,
            )
        except RenderError as err:
            shutil.rmtree(staging, ignore_errors=True)
            raise ReportError(
                f"{err}\nExecuted notebooks kept for debugging in {exec_dir}"
            ) from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    t = time.perf_counter()
    results = {
        "scenario": scenario.name,
        "version": version,
        "chapters": {k: v for ex in executed for k, v in ex.results.items()},
    }
    try:
        (staging / "notebooks").mkdir()
        for ex in executed:
            shutil.copy2(ex.output, staging / "notebooks" / ex.output.name)
        _write_json(staging / "results.json", results)
        manifest = {
            "version": version,
            "scenario": scenario.name,
            "title": scenario.title,
            "created_utc": _utc_now().isoformat(timespec="seconds"),
            "package_version": __version__,
            "git": git,
            "renderer": renderer.as_dict(),
            "formats": list(formats),
            "inputs": {
                "params": {"path": _rel(params, paths.ROOT), "sha256": params_digest},
                "data": {"digest": data_digest, "files": data_entries},
                "notebooks": {"digest": nb_digest, "files": nb_entries},
            },
            "packages": package_versions(),
            "previous_version": previous.get("version"),
            "timings_s": {},
            "chapter_execute_s": chapter_seconds,
            "outputs": [],
        }
        timings["publish"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t0
        manifest["timings_s"] = {k: round(v, 3) for k, v in timings.items()}
        manifest["outputs"] = [
            {"path": _rel(p, staging), "sha256": sha256_file(p), "bytes": p.stat().st_size}
            for p in _files_under(staging)
        ]
        _write_json(staging / "manifest.json", manifest)
        version_dir = _publish(staging, scenario_dir, version)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    latest = _point_latest(scenario_dir, version_dir.name)
    return RunResult(
        version=version_dir.name,
        version_dir=version_dir,
        latest=latest,
        build_dir=build_dir,
        renderer=renderer.as_dict(),
        timings=timings,
        chapter_seconds=chapter_seconds,
        chapters=[c.id for c in chapters],
        results=results,
    )


def _render(
    renderer: Renderer,
    executed: list[Path],
    build_dir: Path,
    staging: Path,
    formats: tuple[str, ...],
    scenario: Any,
    version: str,
    git: dict[str, Any],
    timings: dict[str, float],
    prog: _Progress,
) -> None:
    """Render the executed chapters into ``staging`` (index.html, report.pdf), timing each."""
    commit = git["commit"][:12] + ("+dirty" if git["dirty"] else "")
    context = {
        "title": scenario.title,
        "scenario": scenario.name,
        "version": version,
        "renderer": renderer.label,
        "commit": commit,
    }
    timings.update(html=0.0, pdf=0.0)
    if renderer.name == "quarto":
        task = prog.phase("render (quarto)")
        # one quarto call per format: each phase is booked with its own time
        timings.update(
            render_quarto(
                executed, build_dir, staging, context, formats, quarto=renderer.executable
            )
        )
        prog.finish(task)
        return
    task = prog.phase("render html")
    t = time.perf_counter()
    index, printable = render_fallback_html(
        executed, build_dir / "html", context, want_print="pdf" in formats
    )
    timings["html"] = time.perf_counter() - t
    prog.finish(task)
    if "html" in formats:
        shutil.copy2(index, staging / "index.html")
    if "pdf" in formats and printable is not None:
        task = prog.phase("render pdf")
        t = time.perf_counter()
        print_pdf(printable, staging / "report.pdf", chromium=renderer.executable)
        timings["pdf"] = time.perf_counter() - t
        prog.finish(task)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(
        json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def _publish(staging: Path, scenario_dir: Path, version: str) -> Path:
    """Rename the staging folder to the version folder (bumping the number on a clash)."""
    target = scenario_dir / version
    for _ in range(100):
        try:
            staging.rename(target)  # fails if target exists and is not empty
        except OSError:
            if not target.exists():
                raise
            m = VERSION_DIR.match(target.name)
            n = int(m.group(1)) + 1 if m else 1
            target = scenario_dir / re.sub(r"^v\d+", f"v{n:04d}", target.name)
            continue
        return target
    raise ReportError(f"could not publish {staging}: too many version clashes")


def _point_latest(scenario_dir: Path, version_name: str) -> Path:
    """Atomically point ``latest`` at ``version_name`` (relative symlink via os.replace)."""
    latest = scenario_dir / "latest"
    tmp = scenario_dir / f".latest-{os.getpid()}-{time.monotonic_ns()}"
    tmp.symlink_to(version_name, target_is_directory=True)
    try:
        tmp.replace(latest)  # os.replace: atomic on POSIX
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return latest


# --- diff -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One key figure that differs between two versions."""

    chapter: str
    key: str
    old: Any
    new: Any

    @property
    def flipped(self) -> bool:
        """A recommendation or winner that changed (a call, not a number behind it).

        ``rec_tier0_p_amd_cheaper`` moving from 0.62 to 0.66 is a change, not a flip;
        ``rec_tier0`` going from "either" to "AMD" is.
        """
        return is_decision_key(self.key) and isinstance(self.old, str) and isinstance(self.new, str)

    @property
    def relative(self) -> float | None:
        """Relative change of a number (None for non-numbers or a zero base)."""
        if _is_number(self.old) and _is_number(self.new) and self.old != 0:
            return (self.new - self.old) / abs(self.old)
        return None


@dataclass
class VersionDiff:
    """What changed between two versions' results.json."""

    old_version: str
    new_version: str
    changes: list[Change] = field(default_factory=list)

    @property
    def flipped(self) -> list[Change]:
        """Recommendations and winners that changed."""
        return [c for c in self.changes if c.flipped]


def is_decision_key(key: str) -> bool:
    """Keys naming a recommendation or a winner: ``rec_*``, ``*_winner``, ``*_cheapest``."""
    return key.startswith("rec_") or key.endswith("_winner") or key.endswith("_cheapest")


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _load_results(path: Path) -> dict[str, Any]:
    path = Path(path)
    file = path / "results.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(
            f"{file}: not found (give a report version folder or its results.json)"
        ) from None
    except ValueError as err:
        raise ReportError(f"{file}: not valid JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict):
        raise ReportError(f"{file}: not a report results.json (no 'chapters' mapping)")
    return data


def diff_versions(old: Path, new: Path) -> VersionDiff:
    """Compare two versions (folders or results.json files) key by key."""
    a, b = _load_results(old), _load_results(new)
    out = VersionDiff(str(a.get("version", old)), str(b.get("version", new)))
    chapters = sorted(set(a["chapters"]) | set(b["chapters"]))
    for ch in chapters:
        ra, rb = a["chapters"].get(ch, {}), b["chapters"].get(ch, {})
        for key in sorted(set(ra) | set(rb)):
            va, vb = ra.get(key), rb.get(key)
            if va != vb or (key in ra) != (key in rb):
                out.changes.append(Change(ch, key, va, vb))
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return "(absent)"
    return f"{v:g}" if isinstance(v, float) else str(v)


def format_diff(diff: VersionDiff) -> str:
    """Human-readable diff: flipped decisions first, then every changed figure."""
    lines = [f"{diff.old_version} -> {diff.new_version}"]
    if not diff.changes:
        lines.append("No key figure changed.")
        return "\n".join(lines)
    if diff.flipped:
        lines.append("FLIPPED recommendations / winners:")
        lines += [f"  ! {c.chapter}: {c.key}: {_fmt(c.old)} -> {_fmt(c.new)}" for c in diff.flipped]
    lines.append(f"Changed key figures ({len(diff.changes)}):")
    for c in diff.changes:
        rel = f" ({c.relative:+.1%})" if c.relative is not None else ""
        lines.append(f"  {c.chapter}: {c.key}: {_fmt(c.old)} -> {_fmt(c.new)}{rel}")
    return "\n".join(lines)
