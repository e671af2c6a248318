"""Executing the chapters: discovery, parameter injection (papermill), parallel runs.

Analytical decisions taken here (the mechanics are in the functions):

* A chapter is any ``NN-*.ipynb`` in the chapters folder; its id is the file stem. Adding a
  chapter means adding a notebook: nothing here lists chapters by name. A chapter whose
  front matter says ``requires: [<scenario key>]`` is part of a report only when the
  scenario sets that key (``Chapter.applies_to``): "Your measurements" appears only with
  measurements.
* A chapter receives a parameter only if its ``parameters`` cell declares it. The cell is
  read with :mod:`ast` (literal assignments), not papermill's line regex, which silently
  skips a line whose comment contains ``=`` or braces.
* Chapters that declare ``chapter_results`` depend on other chapters' key results, so they
  run in a second wave, after all the others. A chapter that also declares
  ``previous_results`` (the summary) compares this whole version with the previous one,
  so it runs last, in a third wave, and receives the second wave's results too: without
  them its "what changed" listed every key of the claims and appendix chapters as gone
  on an identical re-run, while ``analysis diff`` (which reads all of results.json) said
  nothing changed.
* Each chapter runs in one kernel (papermill injects, nbclient executes); up to ``jobs``
  chapters run at once, as asyncio tasks in one event loop (no threads).
* A failing cell stops the run. The executed notebook is kept, and the error names the
  notebook, the cell (index, first source line) and the exception.
* The kernels' own stderr (ipykernel's start-up warnings, e.g. "Kernel is running over TCP
  without encryption") is captured per chapter instead of garbling the progress display;
  cell errors arrive through the messaging protocol regardless, and when a kernel dies the
  tail of its captured stderr is added to the error message.
* Kernel start-up is given :data:`KERNEL_START_TIMEOUT` seconds (nbclient's 60 s is tight
  with both cores busy), and a kernel that dies before it answers ``kernel_info`` (seen
  under load, e.g. when two kernels race for the same ports) is started once more. The
  retry is logged and recorded on the :class:`ExecutedChapter` (``retries``), so the run
  log and the manifest show it; a chapter whose cells ran is never re-run.
* Ctrl-C (SIGINT) while chapters run cancels every chapter task, waits for their kernels
  to shut down and raises :class:`KeyboardInterrupt` from :func:`execute_all` (the CLI
  prints "interrupted" and exits 130). Without this, nbclient reads the cancellation as a
  dead kernel, so the run exited 1 blaming whichever chapter was running.
  nbclient's own SIGINT/SIGTERM handlers are not installed (the event loop ignores
  signal handlers added by anyone but this module): each client's handler replaced the
  previous one, cleaned up only its own kernel, and the first chapter to finish removed the
  handler for all of them. The client whose kernel a handler had cleaned up then failed
  its own cleanup, which left its ``atexit`` hook registered: the spurious
  "Exception ignored in atexit callback ... assert self.km is not None" traceback.
* Stopping early (Ctrl-C, or a failed chapter cancelling the others) leaves nbclient's
  per-cell polling tasks behind; they are cancelled and awaited, and their late failures
  (``AssertionError`` once the kernel client is gone) are not printed ("Task exception
  was never retrieved" after the real error).
"""

from __future__ import annotations

import ast
import asyncio
import copy
import logging
import re
import signal
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from analysis.errors import ChapterError as ChapterError
from analysis.errors import KeyResultsError

CHAPTER_GLOB = "[0-9][0-9]-*.ipynb"
CHAPTER_NAME = re.compile(r"^\d\d-[A-Za-z0-9._-]+$")
#: Seconds a kernel may take to start and answer ``kernel_info`` (nbclient's default: 60).
KERNEL_START_TIMEOUT = 180
#: Further attempts for a kernel that died or timed out before running any cell.
KERNEL_START_RETRIES = 1
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chapter:
    """One chapter notebook and the parameters its ``parameters`` cell declares."""

    id: str
    path: Path
    declared: frozenset[str]
    n_code_cells: int
    title: str = ""
    #: Scenario keys that must be set (non-empty) for the chapter to be part of a report:
    #: front matter ``requires: [measurements]`` (e.g. "Your measurements").
    requires: tuple[str, ...] = ()

    @property
    def takes_chapter_results(self) -> bool:
        """True for chapters (the summary) that run after all others."""
        return "chapter_results" in self.declared

    @property
    def compares_versions(self) -> bool:
        """True for the chapter (the summary) that runs last: it compares whole versions."""
        return self.takes_chapter_results and "previous_results" in self.declared

    def applies_to(self, scenario: Any) -> bool:
        """True when every scenario key the chapter ``requires`` is set (non-empty)."""
        return all(bool(getattr(scenario, key, None)) for key in self.requires)


@dataclass
class ExecutedChapter:
    """The outcome of running one chapter."""

    chapter: Chapter
    output: Path
    seconds: float
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Kernel start-ups that failed before any cell ran and were retried.
    retries: int = 0


def declared_parameters(nb: nbformat.NotebookNode) -> frozenset[str]:
    """Names assigned in the cell tagged ``parameters`` (empty if there is none)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                return frozenset()
            names: set[str] = set()
            for node in tree.body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.add(node.target.id)
                elif isinstance(node, ast.Assign):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            return frozenset(names)
    return frozenset()


def front_matter(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """The YAML front matter of the first raw cell (``{}`` if absent or unreadable)."""
    import yaml

    for cell in nb.cells[:1]:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("---"):
            body = cell.source.strip().strip("-").strip()
            try:
                data = yaml.safe_load(body)
            except yaml.YAMLError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def discover_chapters(folder: Path) -> list[Chapter]:
    """Every ``NN-*.ipynb`` in ``folder``, in file-name order (the report's order)."""
    chapters = []
    for path in sorted(folder.glob(CHAPTER_GLOB)):
        if not CHAPTER_NAME.match(path.stem):
            continue
        nb = nbformat.read(path, as_version=4)
        meta = front_matter(nb)
        requires = meta.get("requires") or ()
        chapters.append(
            Chapter(
                id=path.stem,
                path=path,
                declared=declared_parameters(nb),
                n_code_cells=sum(c.cell_type == "code" for c in nb.cells),
                title=str(meta.get("title", path.stem)),
                requires=(requires,) if isinstance(requires, str) else tuple(map(str, requires)),
            )
        )
    return chapters


def chapter_parameters(chapter: Chapter, available: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``available`` parameters that the chapter declares."""
    return {k: v for k, v in available.items() if k in chapter.declared}


def first_line(source: str) -> str:
    """The first line of a cell's source that is not a Quarto option or blank."""
    for line in source.splitlines():
        s = line.strip()
        if s and not s.startswith("#|"):
            return s[:120]
    return "(empty cell)"


def _tail(log: Any, lines: int = 15) -> str:
    """The last ``lines`` lines of a captured kernel stderr file, minus known noise."""
    try:
        log.flush()
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    kept = [ln for ln in text.splitlines() if ln.strip() and "without encryption" not in ln]
    return "\n".join(kept[-lines:])


ProgressHook = Callable[[str, int, int], None]


async def execute_chapter(
    chapter: Chapter,
    output: Path,
    parameters: Mapping[str, Any],
    *,
    cwd: Path,
    on_cell: ProgressHook | None = None,
    timeout: int = 600,
) -> ExecutedChapter:
    """Inject ``parameters`` with papermill and execute ``chapter`` into ``output``.

    Papermill injects the parameters (its ``injected-parameters`` cell and metadata);
    nbclient executes asynchronously, so chapters run concurrently in one event loop
    without threads (Python 3.11's ast module is not safe to use from several threads).

    Raises:
        ChapterError: a cell raised (or the kernel died); names the cell and the error.
    """
    from nbclient.exceptions import CellExecutionError
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    from analysis.results import extract_key_results

    logging.getLogger("papermill").setLevel(logging.ERROR)
    template = load_notebook_node(str(chapter.path))
    if parameters:
        template = parameterize_notebook(template, dict(parameters))
    total = sum(c.cell_type == "code" for c in template.cells)
    output.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    retries = 0
    while True:
        nb = copy.deepcopy(template)
        state: dict[str, Any] = {"index": None, "source": "", "n": 0}
        try:
            await _run_cells(chapter, nb, state, total, cwd=cwd, on_cell=on_cell, timeout=timeout)
            break
        except _KernelStartFailed as failed:
            if retries >= KERNEL_START_RETRIES:
                nbformat.write(nb, output)
                raise failed.chapter_error(
                    chapter,
                    output,
                    f"the kernel did not start ({failed.reason}; tried {retries + 1} times)",
                ) from None
            retries += 1
            log.warning(
                "chapter %s: kernel died before it started (%s); retrying once",
                chapter.id,
                failed.reason,
            )
        except CellExecutionError as err:
            nbformat.write(nb, output)
            where = f"cell {state['index']}"
            raise ChapterError(
                f"chapter {chapter.path.name} failed in {where} (`{first_line(state['source'])}`): "
                f"{err.ename}: {err.evalue}. Executed notebook kept for debugging: {output}",
                chapter.id,
                output,
            ) from None
        except _KernelFailed as failed:  # kernel death or timeout after cells ran
            nbformat.write(nb, output)
            raise failed.chapter_error(
                chapter,
                output,
                f"could not be executed (cell {state['index']}, "
                f"`{first_line(state['source'])}`): {failed.reason}",
            ) from None
    seconds = time.perf_counter() - start
    nbformat.write(nb, output)
    found = extract_key_results(nb)
    check_key_results(found, parameters, output)
    return ExecutedChapter(chapter, output, seconds, found, retries)


def check_key_results(
    found: Mapping[str, Mapping[str, Any]], parameters: Mapping[str, Any], output: Path
) -> None:
    """Check a chapter's key results against :mod:`analysis.keys` for the injected scenario.

    Raises:
        KeyResultsError: a required key is missing or None, a value has the wrong kind, or
            a key matches no pattern; names the chapter, the key and the executed notebook.
    """
    from analysis import keys
    from analysis.params import scenario_from_parameters

    context = keys.KeyContext.from_scenario(scenario_from_parameters(parameters.get("scenario")))
    try:
        keys.check_results(found, context)
    except KeyResultsError as err:
        raise KeyResultsError(f"{err} (executed notebook: {output})") from None


class _Interrupted(Exception):
    """Ctrl-C arrived while chapters ran.

    Raised out of the event loop, then re-raised as :class:`KeyboardInterrupt` once the
    loop has shut down cleanly.
    """


class _KernelFailed(Exception):
    """The kernel died or timed out (not a cell error); carries its stderr tail."""

    def __init__(self, reason: str, stderr: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.stderr = stderr

    def chapter_error(self, chapter: Chapter, output: Path, what: str) -> ChapterError:
        """The user-facing error: the chapter, what happened, the kept notebook, stderr."""
        tail = f"\nKernel stderr (last lines):\n{self.stderr}" if self.stderr else ""
        return ChapterError(
            f"chapter {chapter.path.name}: {what}. Executed notebook kept for debugging: "
            f"{output}{tail}",
            chapter.id,
            output,
        )


class _KernelStartFailed(_KernelFailed):
    """The kernel failed before running any cell: safe to start it again."""


async def _run_cells(
    chapter: Chapter,
    nb: nbformat.NotebookNode,
    state: dict[str, Any],
    total: int,
    *,
    cwd: Path,
    on_cell: ProgressHook | None,
    timeout: int,
) -> None:
    """Execute ``nb`` in place in a fresh kernel; cell errors propagate as nbclient's."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    def started(cell: Any = None, cell_index: int = 0, **_: Any) -> None:
        state.update(index=cell_index, source=cell.source if cell is not None else "")

    def executed(cell: Any = None, **_: Any) -> None:
        if cell is not None and cell.get("cell_type") == "code":
            state["n"] += 1
            if on_cell:
                on_cell(chapter.id, state["n"], total)

    client = NotebookClient(
        nb,
        timeout=timeout,
        startup_timeout=KERNEL_START_TIMEOUT,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
        on_cell_start=started,
        on_cell_executed=executed,
    )
    kernel_log = tempfile.TemporaryFile(mode="w+b", prefix=f"kernel-{chapter.id}-")  # noqa: SIM115
    try:
        await client.async_execute(stderr=kernel_log)
    except CellExecutionError:
        raise
    except Exception as err:  # kernel death, timeout, unreadable notebook
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # nbclient turns a cancelled wait into DeadKernelError: it was us (Ctrl-C or a
            # failed sibling chapter), not the kernel.
            raise asyncio.CancelledError from None
        kind = _KernelStartFailed if state["index"] is None else _KernelFailed
        raise kind(f"{type(err).__name__}: {err}", _tail(kernel_log)) from err
    finally:
        kernel_log.close()


def execute_all(
    chapters: Sequence[Chapter],
    out_dir: Path,
    base_parameters: Mapping[str, Any],
    *,
    jobs: int = 2,
    on_cell: ProgressHook | None = None,
) -> list[ExecutedChapter]:
    """Run ``chapters`` into ``out_dir``, the summary-like ones last.

    Independent chapters run first (``jobs`` at a time), then those that take
    ``chapter_results``, with the others' key results injected, and last the ones that
    also take ``previous_results`` (the summary), with every other chapter's results.

    ``base_parameters`` holds ``scenario`` and, optionally, ``previous_results`` and
    ``run_info``; each chapter gets the ones it declares.

    Raises:
        ChapterError: a chapter failed (the others were stopped).
        KeyboardInterrupt: Ctrl-C; every kernel was shut down first.
    """
    try:
        with asyncio.Runner(loop_factory=_ChapterLoop) as runner:
            return runner.run(_execute_all(chapters, out_dir, base_parameters, jobs, on_cell))
    except _Interrupted:
        raise KeyboardInterrupt from None


class _ChapterLoop(asyncio.SelectorEventLoop):
    """An event loop on which only :class:`_Stopper` handles signals.

    nbclient adds a SIGINT/SIGTERM handler per notebook client and removes it when that
    client finishes, which breaks with several chapters in one loop (module docstring);
    such calls are ignored here. :class:`_Stopper` calls the base class methods.
    """

    # The base signature is generic over the callback's arguments; this one ignores them all.
    def add_signal_handler(  # type: ignore[override]
        self, sig: int, callback: Callable[..., object], *args: Any
    ) -> None:
        log.debug("ignored a signal handler for %s from a library", sig)

    def remove_signal_handler(self, sig: int) -> bool:
        return False


class _Stopper:
    """Stops the chapter tasks on Ctrl-C, and quiets nbclient's leftovers once stopping."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.tasks: set[asyncio.Task[Any]] = set()
        self.interrupted = False
        self.stopping = False
        self._sigint = False

    def install(self) -> None:
        self.loop.set_exception_handler(self._on_loop_error)
        try:
            # The loop is a _QuietLoop (a SelectorEventLoop): the base method, unbound.
            asyncio.SelectorEventLoop.add_signal_handler(
                self.loop,  # type: ignore[arg-type]
                signal.SIGINT,
                self._on_sigint,
            )
            self._sigint = True
        except (ValueError, RuntimeError, NotImplementedError):
            pass  # not the main thread (or no signals here): asyncio.run's own handling

    def uninstall(self) -> None:
        if self._sigint:
            asyncio.SelectorEventLoop.remove_signal_handler(
                self.loop,  # type: ignore[arg-type]
                signal.SIGINT,
            )
            self._sigint = False

    def _on_sigint(self) -> None:
        if self.interrupted:  # a second Ctrl-C: the next one interrupts whatever runs
            self.uninstall()
            return
        self.interrupted = True
        self.cancel()

    def cancel(self) -> None:
        self.stopping = True
        for t in self.tasks:
            t.cancel()

    async def drain(self) -> None:
        """Cancel and await every other task still in the loop (nbclient's pollers)."""
        me = asyncio.current_task()
        others = [t for t in asyncio.all_tasks() if t is not me]
        for t in others:
            t.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        task = context.get("task") or context.get("future")
        get_coro = getattr(task, "get_coro", None)
        name = getattr(get_coro(), "__qualname__", "") if get_coro else ""
        if self.stopping and name.startswith("NotebookClient._async_poll"):
            log.debug("after stopping: %s in %s", context.get("exception"), name)
            return
        loop.default_exception_handler(context)


async def _execute_all(
    chapters: Sequence[Chapter],
    out_dir: Path,
    base: Mapping[str, Any],
    jobs: int,
    on_cell: ProgressHook | None,
) -> list[ExecutedChapter]:
    first = [c for c in chapters if not c.takes_chapter_results]
    second = [c for c in chapters if c.takes_chapter_results and not c.compares_versions]
    third = [c for c in chapters if c.compares_versions]
    done: dict[str, ExecutedChapter] = {}
    limit = asyncio.Semaphore(max(1, jobs))
    stopper = _Stopper(asyncio.get_running_loop())

    async def one(ch: Chapter, params: Mapping[str, Any]) -> ExecutedChapter:
        async with limit:
            return await execute_chapter(
                ch,
                out_dir / ch.path.name,
                chapter_parameters(ch, params),
                cwd=out_dir,
                on_cell=on_cell,
            )

    async def wave(group: Sequence[Chapter], params: Mapping[str, Any]) -> None:
        if not group:
            return
        tasks = [asyncio.create_task(one(ch, params)) for ch in group]
        stopper.tasks.update(tasks)
        finished, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        failed = [t for t in finished if not t.cancelled() and t.exception() is not None]
        if failed or stopper.interrupted:
            stopper.cancel()
            await asyncio.gather(*pending, return_exceptions=True)  # kernels shut down
            await stopper.drain()
            if stopper.interrupted:
                raise _Interrupted
            raise failed[0].exception()  # type: ignore[misc]
        for t in finished:
            res = t.result()
            done[res.chapter.id] = res

    stopper.install()
    try:
        await wave(first, base)
        if stopper.interrupted:
            raise _Interrupted
        collected: dict[str, dict[str, Any]] = {}
        for ch in first:
            collected.update(done[ch.id].results)
        await wave(second, {**base, "chapter_results": collected})
        if stopper.interrupted:
            raise _Interrupted
        for ch in second:
            collected.update(done[ch.id].results)
        await wave(third, {**base, "chapter_results": collected})
        if stopper.interrupted:
            raise _Interrupted
    finally:
        stopper.uninstall()
    return [done[c.id] for c in chapters]
