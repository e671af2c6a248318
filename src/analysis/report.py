"""The report pipeline: execute the chapters, render, version, publish, diff.

Analytical decisions taken here (mechanics in :mod:`analysis.execute`,
:mod:`analysis.render`, the version diff in :mod:`analysis.version_diff`; the goldens and
notebook pairs are developer tools, in
:mod:`analysis.devtools`):

* A version id is ``v<NNNN>-<UTC time>-<short digest>``: a sequence number per scenario,
  when it was made, and a digest of what made it (params, data, notebooks, package, commit).
* Each run executes into its own build folder ``_build/<scenario>/<run-id>/`` (kept: the
  executed notebooks are the provenance record and the debugging aid when a cell fails).
* Publishing is atomic: everything is written into a temporary folder inside
  ``reports/<scenario>/`` and renamed to the version folder; ``latest`` (a relative
  symlink) is replaced with ``os.replace`` of a temporary symlink only after that
  succeeded. A failed run therefore leaves every earlier version and ``latest`` as they were.
* ``results.json`` holds every chapter's key figures (from the key-results output, not by
  re-running anything) and the scenario's tier names; ``diff`` compares two of them with
  :func:`analysis.results.compare_chapters` (the summary's "what changed" uses the same
  function, so the two agree), matches tiers by name, refuses two different scenarios and
  calls out flipped recommendations and winners.
* The version id is chosen at publish time, under a file lock on the scenario folder
  (``reports/<scenario>/.lock``): chapters execute without the lock and see a placeholder
  id, which the publisher replaces in the executed notebooks and key results before it
  renders, writes ``results.json`` and the manifest, renames the staging folder and
  points ``latest``. Two concurrent runs of one scenario therefore publish two versions
  with distinct numbers, each naming itself everywhere.
* Everything checkable before execution is checked first: the parameters, every data
  table (:func:`analysis.data.validate_all`), and the output folder (exists or can be
  made, is a folder, is writable, has :data:`MIN_FREE_BYTES` free). Errors found later
  (disk full while publishing) are one line (:func:`describe_os_error`).
* Cleanup: staging folders and temporary ``latest`` links of runs whose process is gone
  are removed under the lock; ``_build/<scenario>/`` keeps the newest :data:`KEEP_BUILDS`
  runs (``$GPU_REPORT_KEEP_BUILDS``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from analysis import __version__, data, derived_store, paths

if TYPE_CHECKING:
    from rich.progress import TaskID
from analysis.errors import ReportError, RunError
from analysis.execute import Chapter, ChapterError, discover_chapters, execute_all
from analysis.params import load_scenario, scenario_to_parameters
from analysis.render import (
    Renderer,
    RenderError,
    print_pdf,
    render_fallback_html,
    render_quarto,
    select_renderer,
    set_pdf_metadata,
    version_date,
)
from analysis.version_diff import (
    Change,
    VersionDiff,
    _load_results,
    diff_versions,
    format_diff,
    is_decision_key,
)

__all__ = [
    "Change",
    "ReportError",
    "RunResult",
    "VersionDiff",
    "diff_versions",
    "format_diff",
    "is_decision_key",
    "run_report",
]

#: Developer tools once re-exported here; now in :mod:`analysis.devtools` (the report
#: pipeline does not import them: no ``report <-> goldens`` import circle).
_MOVED_TO_DEVTOOLS = {
    "make_goldens": "analysis.devtools.goldens",
    "sync_notebooks": "analysis.devtools.pairs",
}


def __getattr__(name: str) -> object:
    """``report.make_goldens`` / ``report.sync_notebooks``: the old names, loaded on use."""
    if name in _MOVED_TO_DEVTOOLS:
        import importlib

        return getattr(importlib.import_module(_MOVED_TO_DEVTOOLS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


VERSION_DIR = re.compile(r"^v(\d{4,})-\d{8}T\d{6}Z-[0-9a-f]{8}\Z")
#: Build folders kept per scenario (~29 MB each); older ones are pruned after every run.
KEEP_BUILDS = 5
KEEP_BUILDS_ENV = "GPU_REPORT_KEEP_BUILDS"
#: The derived store's folder under ``_build/`` (a dot name: never a scenario's build folder).
DERIVED_STORE = ".derived-store"
#: Refuse to start with less free space than this where the report is published (a
#: report is ~5-30 MB; a run that dies at publish after minutes of execution is worse).
MIN_FREE_BYTES = 200 * 1024**2
#: How long a run waits for another run of the same scenario to finish publishing.
LOCK_TIMEOUT_S = 900
#: Run ids end in the process id: ``<UTC time>-<pid>``.
_RUN_PID = re.compile(r"-(\d+)\Z")
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


class GitState(TypedDict):
    """The commit a run was made from and whether the work tree differed (None: unknown)."""

    commit: str
    dirty: bool | None


@dataclass
class RunResult:
    """What a successful run produced."""

    version: str
    version_dir: Path
    latest: Path
    build_dir: Path
    renderer: dict[str, str | None]
    timings: dict[str, float] = field(default_factory=dict)
    chapter_seconds: dict[str, float] = field(default_factory=dict)
    chapters: list[str] = field(default_factory=list)
    results: dict[str, object] = field(default_factory=dict)


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


def git_state(root: Path) -> GitState:
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


def describe_os_error(err: OSError) -> str:
    """One line for a filesystem error: what failed, where, and the likely fix."""
    where = f" ({err.filename})" if getattr(err, "filename", None) else ""
    hint = {
        errno.ENOSPC: "the disk is full: free some space or use --out on another disk",
        errno.EROFS: "the file system is read-only: use --out on a writable folder",
        errno.EACCES: "permission denied: use --out on a folder you can write",
        errno.EPERM: "permission denied: use --out on a folder you can write",
        errno.ENOTDIR: "a path component is a file, not a folder",
    }.get(err.errno or 0, err.strerror or type(err).__name__)
    return f"cannot write the report{where}: {hint}."


def check_output_folder(folder: Path, min_free: int = MIN_FREE_BYTES) -> None:
    """Fail before any execution when ``folder`` cannot take a report.

    Raises:
        RunError: ``folder`` (or a parent) is a file, cannot be created, is not
            writable, or has less than ``min_free`` bytes free.
    """
    folder = Path(folder)
    for parent in [folder, *folder.parents]:
        if parent.exists() and not parent.is_dir():
            raise RunError(f"output folder {folder}: {parent} is a file, not a folder.")
        if parent.exists():
            break
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile_in(folder):
            pass
        free = shutil.disk_usage(folder).free
    except OSError as err:
        raise RunError(describe_os_error(err)) from None
    if free < min_free:
        raise RunError(
            f"output folder {folder}: only {free / 1024**2:.0f} MB free, a report needs at "
            f"least {min_free / 1024**2:.0f} MB: free some space or use --out elsewhere."
        )


@contextlib.contextmanager
def tempfile_in(folder: Path) -> Iterator[Path]:
    """A probe file created (and removed) in ``folder``: proves it is writable."""
    probe = folder / f".probe-{os.getpid()}-{time.monotonic_ns()}"
    probe.write_bytes(b"")
    try:
        yield probe
    finally:
        with contextlib.suppress(OSError):
            probe.unlink()


@contextlib.contextmanager
def scenario_lock(scenario_dir: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<scenario_dir>/.lock`` (released on exit or death).

    Raises:
        RunError: another run held the lock for longer than ``timeout`` seconds.
    """
    scenario_dir.mkdir(parents=True, exist_ok=True)
    with (scenario_dir / ".lock").open("a") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RunError(
                        f"{scenario_dir}: another run of this scenario has been publishing "
                        f"for over {timeout:.0f} s (lock {scenario_dir / '.lock'})"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _pid_of(name: str) -> int | None:
    m = _RUN_PID.search(name)
    return int(m.group(1)) if m else None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_staging(scenario_dir: Path) -> list[Path]:
    """Staging folders and temporary links of runs whose process is gone (call under lock)."""
    removed: list[Path] = []
    if not scenario_dir.is_dir():
        return removed
    for p in scenario_dir.iterdir():
        if p.name.startswith(".tmp-"):
            pid = _pid_of(p.name)
        elif p.name.startswith(".latest-"):
            pid = int(p.name.split("-")[1]) if p.name.split("-")[1].isdigit() else None
        else:
            continue
        if pid == os.getpid() or _alive(pid):
            continue
        if p.is_symlink() or p.is_file():
            p.unlink(missing_ok=True)
        else:
            shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def prune_builds(scenario_build: Path, keep: int | None = None) -> list[Path]:
    """Keep the newest ``keep`` run folders in ``_build/<scenario>/`` (live runs always)."""
    if keep is None:
        try:
            keep = int(os.environ.get(KEEP_BUILDS_ENV, KEEP_BUILDS))
        except ValueError:
            keep = KEEP_BUILDS
    if not scenario_build.is_dir():
        return []
    runs = sorted((p for p in scenario_build.iterdir() if p.is_dir()), key=lambda p: p.name)
    old = runs[: max(0, len(runs) - max(keep, 1))]
    removed = []
    for p in old:
        pid = _pid_of(p.name)
        if pid != os.getpid() and _alive(pid):
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def _substitute(obj: Any, placeholder: str, version: str) -> Any:
    """``obj`` with every string occurrence of ``placeholder`` replaced by ``version``."""
    if isinstance(obj, str):
        return obj.replace(placeholder, version)
    if isinstance(obj, dict):
        return {k: _substitute(v, placeholder, version) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_substitute(v, placeholder, version) for v in obj]
    return obj


def read_previous_results(scenario_dir: Path) -> dict[str, object]:
    """results.json of the version ``latest`` points at ({} if none or unreadable)."""
    try:
        return _load_results(scenario_dir / "latest" / "results.json")
    except (OSError, RunError):
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

    def phase(self, name: str) -> TaskID:
        return self.progress.add_task(name, total=1)

    def finish(self, task: TaskID) -> None:
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
        RunError: no chapters, a failing cell, or a render error; earlier versions and
            ``latest`` are untouched and the executed notebooks are kept.
    """
    t0 = time.perf_counter()
    params = Path(params)
    scenario = load_scenario(params)  # ParamsError -> the CLI prints it and exits 1
    data.validate_all()  # DataValidationError: every table checked before any kernel
    folder = chapters_folder(notebooks_dir)
    chapters = [c for c in discover_chapters(folder) if c.applies_to(scenario)]
    if not chapters:
        raise RunError(f"no chapters found: no notebooks matching NN-*.ipynb in {folder}")
    try:
        renderer = select_renderer(tuple(formats))
    except RenderError as err:
        raise RunError(str(err)) from None

    reports = Path(out_dir) if out_dir is not None else paths.REPORTS
    scenario_dir = reports / scenario.name
    scenario_build = (build_root or paths.BUILD) / scenario.name
    check_output_folder(scenario_dir)
    check_output_folder(scenario_build, min_free=0)
    git = git_state(paths.ROOT)
    params_digest = sha256_file(params)
    data_digest, data_entries = digest_files(_files_under(paths.DATA), paths.ROOT)
    nb_digest, nb_entries = digest_files([c.path for c in chapters], paths.ROOT)
    # A team's own measurements are inputs like the data: listed with their sha256.
    meas_digest, meas_entries = digest_files(
        data.measurement_files(scenario.measurements), paths.ROOT
    )
    lock_digest = sha256_file(paths.LOCK_FILE) if paths.LOCK_FILE.is_file() else None
    run_digest = hashlib.sha256(
        f"{params_digest}|{data_digest}|{nb_digest}|{lock_digest}|{__version__}|{git['commit']}"
        f"{'|' + meas_digest if meas_entries else ''}".encode()
    ).hexdigest()
    run_id = f"{_utc_now().strftime('%Y%m%dT%H%M%S%fZ')}-{os.getpid()}"
    # The version id is only known at publish time (under the lock); chapters see this
    # placeholder, replaced everywhere before anything is rendered or written.
    placeholder = f"pending-version-{run_id}"
    build_dir = scenario_build / run_id
    exec_dir = build_dir / "notebooks"
    try:
        exec_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RunError(describe_os_error(err)) from None

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
        "version": placeholder,
    }
    base = {
        **scenario_to_parameters(scenario),
        "previous_results": previous,
        "run_info": run_info,
    }
    timings: dict[str, float] = {}
    try:
        with _Progress(chapters, progress) as prog:
            t = time.perf_counter()
            try:
                # The kernels share the scenario-independent validations through the
                # derived store (analysis.derived_store; GPU_REPORT_DERIVED_CACHE= turns it off).
                with derived_store.enabled(paths.BUILD / DERIVED_STORE):
                    executed = execute_all(chapters, exec_dir, base, jobs=jobs, on_cell=prog.cell)
            except ChapterError as err:
                raise RunError(str(err)) from None
            timings["execute"] = time.perf_counter() - t
            chapter_seconds = {ex.chapter.id: round(ex.seconds, 3) for ex in executed}
            with scenario_lock(scenario_dir):
                remove_stale_staging(scenario_dir)
                version = next_version_id(scenario_dir, run_digest)
                version_dir = _render_and_publish(
                    executed,
                    placeholder=placeholder,
                    version=version,
                    renderer=renderer,
                    build_dir=build_dir,
                    scenario_dir=scenario_dir,
                    staging=scenario_dir / f".tmp-{run_id}",
                    formats=tuple(formats),
                    scenario=scenario,
                    git=git,
                    timings=timings,
                    prog=prog,
                    t0=t0,
                    manifest_inputs={
                        "params": {"path": _rel(params, paths.ROOT), "sha256": params_digest},
                        "data": {"digest": data_digest, "files": data_entries},
                        "notebooks": {"digest": nb_digest, "files": nb_entries},
                        "measurements": {"digest": meas_digest, "files": meas_entries},
                        "lock": {"path": _rel(paths.LOCK_FILE, paths.ROOT), "sha256": lock_digest},
                    },
                    previous_version=previous.get("version"),
                    chapter_seconds=chapter_seconds,
                )
                latest = _point_latest(scenario_dir, version_dir.name)
    finally:
        with contextlib.suppress(OSError):
            prune_builds(scenario_build)
    res = json.loads((version_dir / "results.json").read_text(encoding="utf-8"))
    return RunResult(
        version=version_dir.name,
        version_dir=version_dir,
        latest=latest,
        build_dir=build_dir,
        renderer=renderer.as_dict(),
        timings=timings,
        chapter_seconds=chapter_seconds,
        chapters=[c.id for c in chapters],
        results=res,
    )


def _render_and_publish(
    executed: list[Any],
    *,
    placeholder: str,
    version: str,
    renderer: Renderer,
    build_dir: Path,
    scenario_dir: Path,
    staging: Path,
    formats: tuple[str, ...],
    scenario: Any,
    git: GitState,
    timings: dict[str, float],
    prog: _Progress,
    t0: float,
    manifest_inputs: dict[str, Any],
    previous_version: Any,
    chapter_seconds: dict[str, float],
) -> Path:
    """Name the version, render into ``staging``, write results and manifest, publish.

    Runs under the scenario lock; ``version`` is final here (a clash at rename time, which
    the lock prevents, would still bump the number and be rewritten everywhere).
    """
    for ex in executed:
        text = ex.output.read_text(encoding="utf-8")
        if placeholder in text:
            ex.output.write_text(text.replace(placeholder, version), encoding="utf-8")
        ex.results = _substitute(ex.results, placeholder, version)
    staging.mkdir(parents=True, exist_ok=False)
    try:
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
            raise RunError(
                f"{err}\nExecuted notebooks kept for debugging in {build_dir / 'notebooks'}"
            ) from None
        t = time.perf_counter()
        results = {
            "scenario": scenario.name,
            "version": version,
            "tiers": [tier.name for tier in scenario.inference.tiers],
            "chapters": {k: v for ex in executed for k, v in ex.results.items()},
        }
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
            "inputs": manifest_inputs,
            "packages": package_versions(),
            "previous_version": previous_version,
            "timings_s": {},
            "chapter_execute_s": chapter_seconds,
            # Kernels that died before their first cell and were started again (execute.py).
            "kernel_retries": {ex.chapter.id: ex.retries for ex in executed if ex.retries},
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
        target = scenario_dir / version
        try:
            staging.rename(target)
        except OSError:
            if target.exists():  # cannot happen under the lock; never overwrite a version
                raise RunError(f"version folder {target} already exists") from None
            raise
        return target
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _render(
    renderer: Renderer,
    executed: list[Path],
    build_dir: Path,
    staging: Path,
    formats: tuple[str, ...],
    scenario: Any,
    version: str,
    git: GitState,
    timings: dict[str, float],
    prog: _Progress,
) -> None:
    """Render the executed chapters into ``staging`` (index.html, report.pdf), timing each."""
    commit = git["commit"][:12] + ("+dirty" if git["dirty"] else "")
    context = {
        "title": scenario.title,
        "scenario": scenario.name,
        "version": version,
        "date": version_date(version),
        "description": str(scenario.description or ""),
        "renderer": renderer.label,
        "renderer_short": renderer.short_label,
        "commit": commit,
    }
    timings.update(html=0.0, pdf=0.0)
    pdf = staging / "report.pdf"
    if renderer.name == "quarto":
        task = prog.phase("render (quarto)")
        # one quarto call per format: each phase is booked with its own time
        timings.update(
            render_quarto(
                executed, build_dir, staging, context, formats, quarto=renderer.executable
            )
        )
        if pdf.is_file():
            set_pdf_metadata(pdf, scenario.title, str(scenario.description or ""))
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
        print_pdf(printable, pdf, chromium=renderer.executable)
        set_pdf_metadata(pdf, scenario.title, str(scenario.description or ""))
        timings["pdf"] = time.perf_counter() - t
        prog.finish(task)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(
        json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )


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
