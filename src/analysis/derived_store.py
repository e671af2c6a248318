"""A content-addressed store on disk for the expensive derived results a report reuses.

Why: the calibrations and the held-out validations (the MLPerf schemes, the InferenceX
folds, the deployment checks) take about 80 s and do not depend on the scenario, yet every
chapter kernel of every report run recomputed them: chapters 30 and 40 both did, and a
test suite that renders many scenarios paid for them dozens of times.
:meth:`analysis.inputs.Inputs.derived` with ``persist=True`` keeps such a result here, so
that a kernel computing it again reads the same bytes back instead.

Analytical decisions taken here:

* **Opt-in.** Nothing is stored unless :data:`ENV` names a folder. The report runner
  (:func:`enabled`, used by :func:`analysis.report.run_report`) sets it for its kernels;
  code that imports the package and calls a model (a notebook, a test, ``validate-models``)
  computes afresh, so a test that patches a model function is never answered from disk.
  ``GPU_REPORT_DERIVED_CACHE=`` (empty) turns the store off for a report run too.
* **Keyed by content, never by time.** An entry's name is the SHA-256 of the derived key,
  the inputs' content digest (every file of the data folder, path and bytes) and the code
  digest (every ``.py`` file of this package, the Python version, the machine type and
  the versions of the libraries that make or hold the numbers, :data:`_LIBRARIES`). A
  changed table, model line or library gives a new name: there is no stale entry to
  invalidate, and an identical run reads exactly the numbers a fresh one computes
  (pickle round-trips frames bit for bit).
* **Digests taken before the work, checked after it.** The code digest is taken when this
  module is imported (the code the process runs) and the data digest when the inputs are
  made; an entry is written only if both still hold once its value is computed, so a file
  edited during a run never files one version's result under the other's name.
* **Inputs that carry a team's measurements are not stored** (their digest would have to
  cover the measurement files as well).
* **A cache, never a source of failure.** An entry that cannot be read (truncated,
  corrupt, from another Python) is computed afresh and rewritten; a store that cannot be
  entered or written (permissions, a full disk, a file in the way) is skipped. Entries are
  written to a uniquely named temporary file and renamed, so two kernels computing the
  same key at once both leave a whole file.
* **Old code's entries are dropped**: entries live in one folder per code digest (24 hex
  digits), and the first write into a new one removes the store's other such folders and
  nothing else (a store pointed at a folder with other content leaves that content alone);
  a killed writer's temporary file goes with its folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import platform
import re
import secrets
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import TypeVar

__all__ = [
    "ENV",
    "code_digest",
    "current_code_digest",
    "directory",
    "enabled",
    "files_digest",
    "load_or_build",
]

T = TypeVar("T")

#: Environment variable naming the store's folder; unset or empty: nothing is stored.
ENV = "GPU_REPORT_DERIVED_CACHE"
#: Distributions whose versions change what a stored result would be, or how it unpickles.
_LIBRARIES = ("numpy", "pandas", "scipy", "pyarrow")
_PACKAGE = Path(__file__).resolve().parent
#: The name of one code version's folder in the store.
_CODE_FOLDER = re.compile(r"[0-9a-f]{24}")
_DIGEST_CHARS = 24


def directory() -> Path | None:
    """The store's folder from :data:`ENV` (absolute), or ``None`` (unset or empty: off)."""
    value = os.environ.get(ENV, "").strip()
    return Path(value).absolute() if value else None


@contextlib.contextmanager
def enabled(folder: Path, *, override: bool = False) -> Iterator[None]:
    """Within the block, :data:`ENV` names ``folder`` unless the caller already set it.

    A value set by the user (another folder, or empty to turn the store off) wins unless
    ``override`` (a benchmark's cold run in a folder of its own); the previous
    environment is restored on exit. The folder is made absolute: kernels run in folders
    of their own.
    """
    before = os.environ.get(ENV)
    if before is not None and not override:
        yield
        return
    os.environ[ENV] = str(Path(folder).absolute())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def files_digest(files: Iterable[Path], root: Path) -> str:
    """SHA-256 over each file's path relative to ``root`` and its bytes, in path order."""
    h = hashlib.sha256()
    for p in sorted(files, key=lambda q: q.relative_to(root).as_posix()):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def current_code_digest() -> str:
    """Digest of the package source on disk now, Python, machine and :data:`_LIBRARIES`."""
    h = hashlib.sha256(files_digest(_PACKAGE.rglob("*.py"), _PACKAGE).encode())
    h.update(f"{sys.version}|{platform.machine()}".encode())
    for name in _LIBRARIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        h.update(f"|{name}={version}".encode())
    return h.hexdigest()


_IMPORTED_CODE = current_code_digest()


def code_digest() -> str:
    """:func:`current_code_digest` as it was when this process imported the package."""
    return _IMPORTED_CODE


def _stable(key: object) -> str:
    """``repr`` of a key made of strings, numbers, booleans, None and tuples of them.

    Anything else (an object whose repr holds its address) would give a name that
    changes from run to run, so it is refused.
    """
    if key is None or isinstance(key, str | int | float | bool):
        return repr(key)
    if isinstance(key, tuple):
        return "(" + ",".join(_stable(k) for k in key) + ")"
    raise TypeError(f"derived-store key part {key!r} ({type(key).__name__}) has no stable name")


def _entry(folder: Path, inputs_digest: str, key: object) -> Path:
    name = hashlib.sha256(f"{inputs_digest}\0{_stable(key)}".encode()).hexdigest()
    return folder / code_digest()[:_DIGEST_CHARS] / f"{name}.pkl"


def _read(path: Path) -> tuple[bool, object]:
    try:
        with path.open("rb") as fh:
            return True, pickle.load(fh)
    except FileNotFoundError:
        return False, None
    except Exception:  # noqa: BLE001 - any unreadable entry is recomputed, never raised
        with contextlib.suppress(OSError):
            path.unlink()
        return False, None


def _prune(store: Path, keep: Path) -> None:
    """Remove the other code versions' folders of ``store`` (and nothing else)."""
    for other in store.iterdir():
        if other != keep and other.is_dir() and _CODE_FOLDER.fullmatch(other.name):
            shutil.rmtree(other, ignore_errors=True)


def _write(path: Path, value: object) -> None:
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fresh = not path.parent.is_dir()
        path.parent.mkdir(parents=True, exist_ok=True)
        if fresh:  # the first entry of this code: older code's entries are dead weight
            _prune(path.parent.parent, path.parent)
        with tmp.open("wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)
    except Exception:  # noqa: BLE001 - an unwritable store or value is skipped, never raised
        with contextlib.suppress(OSError):
            tmp.unlink()


def load_or_build(
    inputs_digest: str, key: object, factory: Callable[[], T], *, still: Callable[[], bool]
) -> T:
    """The stored value of ``key`` for these inputs, else ``factory()`` (then stored).

    ``still()`` says, after ``factory()`` ran, whether the inputs are still the ones
    ``inputs_digest`` names; the code is checked the same way. Without a store
    (:func:`directory` is ``None``) this is ``factory()``.
    """
    folder = directory()
    if folder is None:
        return factory()
    path = _entry(folder, inputs_digest, key)
    found, value = _read(path)
    if found:
        return value  # type: ignore[return-value]
    value = factory()
    if _unchanged(still):
        _write(path, value)
    return value


def _unchanged(still: Callable[[], bool]) -> bool:
    try:
        return still() and current_code_digest() == code_digest()
    except OSError:
        return False
