"""The command line: ``python -m analysis ...`` (also installed as ``gpu-report``).

Commands only parse arguments, call the library and turn its errors into a clear message
and a non-zero exit; they never compute anything themselves. User errors (bad parameters,
bad data, a failed chapter) exit 1 with a message and no traceback; Ctrl-C exits 130 with
"interrupted". User text (paths, names, messages quoting parameter files) is printed as
text, never parsed as rich markup (:func:`analysis.textsafe.console_text`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from analysis import paths
from analysis.errors import ReportError, UsageError
from analysis.params import load_scenario

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="AMD Instinct vs NVIDIA decision report: render, validate, compare, ingest.",
    pretty_exceptions_enable=False,
)
ingest_app = typer.Typer(no_args_is_help=True, help="Turn upstream formats into data/ tables.")
app.add_typer(ingest_app, name="ingest")

# Wide enough for the validation and bench tables when output is piped (rich's default
# there is 80 columns, which truncates their headers).
_WIDTH = None if sys.stdout.isatty() else 140
err_console = Console(stderr=True, highlight=False, soft_wrap=True)
console = Console(highlight=False, soft_wrap=True, width=_WIDTH)

#: Errors that are the user's to fix: printed as one message, exit 1, no traceback. Every
#: error of the report is a :class:`analysis.errors.ReportError` (bad parameters, bad data,
#: an unusable upstream file, a failed chapter, render or publish step, a bad option).
USER_ERRORS: tuple[type[Exception], ...] = (ReportError, FileNotFoundError)
#: Exit status after Ctrl-C (128 + SIGINT), what shells report for an interrupted command.
EXIT_INTERRUPTED = 130
#: Longest message printed (characters): a hostile input must not flood the terminal.
MAX_MESSAGE = 8000


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` (plain text, never markup) to stderr and return the Exit to raise."""
    text = str(message)
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + f"\n... ({len(text) - MAX_MESSAGE} more characters)"
    err_console.print(Text.assemble(("error:", "bold red"), " ", text))
    return typer.Exit(code)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def user_errors(command: Callable[_P, _R]) -> Callable[_P, _R]:
    """Wrap a command: a user error (:data:`USER_ERRORS`) becomes one message and exit 1.

    The one place the command line turns the report's errors into a message; Ctrl-C in a
    command becomes "interrupted" and exit 130.
    """

    @functools.wraps(command)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            raise interrupted() from None
        except USER_ERRORS as err:
            raise fail(str(err)) from None

    return wrapper


def say(message: str) -> None:
    """Print ``message`` to stdout as plain text (no markup, no highlighting)."""
    console.print(Text(str(message)))


def interrupted() -> typer.Exit:
    """The Exit after Ctrl-C: one line, status 130, no traceback."""
    err_console.print(Text("interrupted", style="bold red"))
    return typer.Exit(EXIT_INTERRUPTED)


@app.command()
@user_errors
def validate(
    file: Annotated[Path, typer.Argument(help="Parameter file (YAML).")],
) -> None:
    """Check a parameter file (and the bundled data); exit 0 if valid, 1 with the problems."""
    from analysis import data

    data.validate_all()
    scenario = load_scenario(file)
    say(f"{file}: OK (scenario {scenario.name!r}, {len(scenario.candidates)} candidates)")
    # Data gaps are warnings, not errors: the report runs and leaves the part out.
    from analysis import tco

    for w in tco.scenario_warnings(scenario):
        err_console.print(Text(f"warning: {file}: {w}"))


@app.command()
@user_errors
def scenarios() -> None:
    """List the bundled scenarios (params/ and params/scenarios/), one line each."""
    files = sorted(paths.PARAMS.glob("*.yaml")) + sorted(paths.SCENARIOS.glob("*.yaml"))
    for f in files:
        s = load_scenario(f)
        say(f"{f.relative_to(paths.ROOT)!s:<44} {s.description or s.title}")


@app.command()
@user_errors
def run(
    params: Annotated[
        Path, typer.Option("--params", help="Parameter file (YAML).")
    ] = paths.DEFAULT_PARAMS,
    out: Annotated[
        Path | None, typer.Option("--out", help="Reports folder (default: reports/).")
    ] = None,
    formats: Annotated[
        str, typer.Option("--formats", help="Comma-separated: html,pdf.")
    ] = "html,pdf",
    jobs: Annotated[int, typer.Option("--jobs", help="Chapters executed in parallel.")] = 2,
) -> None:
    """Execute every chapter for a scenario and publish a new report version."""
    from analysis import report

    wanted = tuple(f.strip() for f in formats.split(",") if f.strip())
    bad = [f for f in wanted if f not in {"html", "pdf"}]
    if bad or not wanted:
        raise UsageError(f"--formats: unknown format(s) {bad or formats!r}; allowed: html, pdf")
    if jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {jobs}")
    try:
        result = report.run_report(params, out_dir=out, formats=wanted, jobs=jobs)
    except FileNotFoundError:
        raise
    except OSError as err:  # disk full, read-only folder ... found while publishing
        raise fail(report.describe_os_error(err)) from None
    say(f"Report published: {result.version_dir}")
    say(f"Latest:           {result.latest}")


@app.command()
@user_errors
def diff(
    old: Annotated[Path, typer.Argument(help="Older report version folder (or its results.json).")],
    new: Annotated[Path, typer.Argument(help="Newer report version folder (or its results.json).")],
) -> None:
    """Print the key figures that changed between two report versions."""
    from analysis import report

    say(report.format_diff(report.diff_versions(old, new)))


@app.command()
@user_errors
def sync(
    check: Annotated[
        bool, typer.Option("--check", help="Only check; exit 1 when out of sync.")
    ] = False,
) -> None:
    """Keep each notebook and its py:percent pair in sync (jupytext)."""
    from analysis.devtools.pairs import sync_notebooks

    problems = sync_notebooks(check=check)
    if problems:
        raise fail("notebook pairs out of sync:\n" + "\n".join(problems))
    console.print("notebook pairs in sync")


@app.command()
@user_errors
def goldens() -> None:
    """Re-execute every chapter with params/ci.yaml into tests/notebooks/goldens/."""
    from analysis.devtools.goldens import make_goldens

    for p in make_goldens():
        console.print(f"wrote {p.relative_to(paths.ROOT)}")


@app.command("data-readme")
@user_errors
def data_readme(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if data/README.md is stale.")
    ] = False,
) -> None:
    """Generate data/README.md from the schema definitions."""
    from analysis.devtools.data_readme import render_data_readme

    text = render_data_readme()
    if check:
        current = (
            paths.DATA_README.read_text(encoding="utf-8") if paths.DATA_README.exists() else ""
        )
        if current != text:
            raise fail("data/README.md is stale: run `make data-readme`")
        return
    paths.DATA_README.write_text(text, encoding="utf-8")
    console.print(f"wrote {paths.DATA_README.relative_to(paths.ROOT)}")


@app.command()
@user_errors
def contracts(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if docs/contracts.md's key section is stale.")
    ] = False,
) -> None:
    """Regenerate docs/contracts.md's key-results section from analysis.keys."""
    from analysis.keys import contracts_with_keys

    current = paths.CONTRACTS.read_text(encoding="utf-8")
    try:
        text = contracts_with_keys(current)
    except ValueError as err:
        raise fail(str(err)) from None
    if check:
        if current != text:
            raise fail("docs/contracts.md's key results are stale: run `make contracts`")
        return
    paths.CONTRACTS.write_text(text, encoding="utf-8")
    console.print(f"wrote the key results in {paths.CONTRACTS.relative_to(paths.ROOT)}")


@app.command("params-readme")
@user_errors
def params_readme(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if README.md's parameter reference is stale.")
    ] = False,
) -> None:
    """Regenerate README.md's parameter reference from the Scenario model."""
    from analysis.params import readme_with_reference

    readme = paths.ROOT / "README.md"
    current = readme.read_text(encoding="utf-8")
    text = readme_with_reference(current)
    if check:
        if current != text:
            raise fail("README.md's parameter reference is stale: run `make params-readme`")
        return
    readme.write_text(text, encoding="utf-8")
    console.print("wrote the parameter reference in README.md")


@app.command()
@user_errors
def bench(
    params: Annotated[
        Path, typer.Option("--params", help="Scenario for the report phase timing.")
    ] = paths.DEFAULT_PARAMS,
    report_phases: Annotated[
        bool, typer.Option("--report/--no-report", help="Also time make report's phases.")
    ] = True,
) -> None:
    """Time the model sweeps, the Monte Carlo and each phase of a report run."""
    from analysis.devtools import bench as bench_mod

    bench_mod.run_bench(params, include_report=report_phases, console=console)


@app.command("validate-models")
@user_errors
def validate_models() -> None:
    """Print the out-of-sample errors of the inference and training models against MLPerf."""
    from analysis.devtools import validation

    validation.print_model_validation(console)


@ingest_app.command("mlperf")
@user_errors
def ingest_mlperf(
    sources: Annotated[
        list[Path], typer.Argument(help="summary_results.json / summary.csv / training CSV files.")
    ],
    accessed: Annotated[
        str,
        typer.Option(
            "--accessed",
            help="Day the files were downloaded from MLCommons (YYYY-MM-DD), recorded on "
            "every row as its access date.",
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: data/benchmarks/).")
    ] = None,
) -> None:
    """Normalize raw MLPerf results into data/benchmarks/ (deterministic CSV)."""
    from analysis.ingest import mlperf

    report_lines = mlperf.ingest(sources, out_dir=out or paths.BENCHMARKS, accessed=accessed)
    for line in report_lines:
        console.print(line)


@ingest_app.command("inferencex")
@user_errors
def ingest_inferencex(
    sources: Annotated[
        list[Path], typer.Argument(help="InferenceX fixture JSON-lines files (first file wins).")
    ],
    accessed: Annotated[
        str,
        typer.Option("--accessed", help="Day the files were collected (YYYY-MM-DD)."),
    ],
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: data/benchmarks/).")
    ] = None,
) -> None:
    """Normalize SemiAnalysis InferenceX points into data/benchmarks/inferencex.csv."""
    from analysis.ingest import inferencex

    report_lines = inferencex.ingest(sources, out_dir=out or paths.BENCHMARKS, accessed=accessed)
    for line in report_lines:
        console.print(line)


@ingest_app.command("bench")
@user_errors
def ingest_bench(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="Result files: vLLM --save-result JSON, SGLang bench_serving JSONL, "
            "InferenceX rows, MLPerf mlperf_log_summary.txt."
        ),
    ],
    accelerator: Annotated[
        str | None, typer.Option("--accelerator", help="Accelerator id (e.g. MI300X, H200).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model id (e.g. llama2-70b).")
    ] = None,
    precision: Annotated[
        str | None, typer.Option("--precision", help="Serving precision: bf16, fp8 or fp4.")
    ] = None,
    tp: Annotated[
        int | None, typer.Option("--tp", help="Tensor-parallel GPUs per replica.")
    ] = None,
    gpus: Annotated[
        int | None, typer.Option("--gpus", help="GPUs the run used in all (default: --tp).")
    ] = None,
    stack: Annotated[
        str | None,
        typer.Option("--stack", help="Serving stack and version, e.g. 'vLLM 0.11 ROCm 7'."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Output folder (default: data/benchmarks/user/).")
    ] = None,
    power: Annotated[
        Path | None,
        typer.Option("--power", help="nvidia-smi --format=csv or amd-smi metric --csv power log."),
    ] = None,
    isl: Annotated[
        float | None,
        typer.Option("--isl", help="Mean input tokens per request (MLPerf summaries carry none)."),
    ] = None,
    run_date: Annotated[
        str | None,
        typer.Option("--run-date", help="Day of the run (YYYY-MM-DD) where the file has no date."),
    ] = None,
) -> None:
    """Normalize a team's own serving benchmark results into data/benchmarks/user/."""
    from analysis.ingest import bench

    flags = bench.BenchFlags(
        accelerator=accelerator,
        model=model,
        precision=precision,
        tp=tp,
        gpus=gpus,
        stack=stack,
        isl=isl,
        run_date=run_date,
    )
    for line in bench.ingest(sources, flags, out_dir=out, power=power):
        say(line)


def main() -> None:
    """Console-script entry point (Ctrl-C anywhere: "interrupted", exit 130)."""
    # Not click's standalone mode: it turns Ctrl-C into "Aborted!" and exit status 1.
    try:
        code = app(standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        err_console.print(Text("interrupted", style="bold red"))
        sys.exit(EXIT_INTERRUPTED)
    except typer.TyperException as err:  # usage errors: click's own message and status
        show = getattr(err, "show", None)
        if show is None:
            raise
        show()
        sys.exit(getattr(err, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
