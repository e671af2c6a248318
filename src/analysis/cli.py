"""The command line: ``python -m analysis ...`` (also installed as ``gpu-report``).

Commands only parse arguments, call the library and turn its errors into a clear message
and a non-zero exit; they never compute anything themselves. User errors (bad parameters,
bad data, a failed chapter) exit 1 with a message and no traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from analysis import paths
from analysis.params import ParamsError, load_scenario
from analysis.schema import DataValidationError

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

#: Errors that are the user's to fix: printed as one message, exit 1, no traceback.
USER_ERRORS: tuple[type[Exception], ...] = (ParamsError, DataValidationError, FileNotFoundError)


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` to stderr and return the Exit to raise."""
    err_console.print(f"[bold red]error:[/] {message}", markup=True)
    return typer.Exit(code)


@app.command()
def validate(
    file: Annotated[Path, typer.Argument(help="Parameter file (YAML).")],
) -> None:
    """Check a parameter file; exit 0 if valid, 1 with the problems otherwise."""
    try:
        scenario = load_scenario(file)
    except ParamsError as err:
        raise fail(str(err)) from None
    console.print(f"{file}: OK (scenario {scenario.name!r}, {len(scenario.candidates)} candidates)")


@app.command()
def scenarios() -> None:
    """List the bundled scenarios (params/ and params/scenarios/), one line each."""
    files = sorted(paths.PARAMS.glob("*.yaml")) + sorted(paths.SCENARIOS.glob("*.yaml"))
    for f in files:
        try:
            s = load_scenario(f)
        except ParamsError as err:
            raise fail(str(err)) from None
        console.print(f"{f.relative_to(paths.ROOT)!s:<44} {s.description or s.title}")


@app.command()
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
        raise fail(f"--formats: unknown format(s) {bad or formats!r}; allowed: html, pdf")
    try:
        result = report.run_report(params, out_dir=out, formats=wanted, jobs=jobs)
    except (*USER_ERRORS, report.ReportError) as err:
        raise fail(str(err)) from None
    console.print(f"Report published: {result.version_dir}")
    console.print(f"Latest:           {result.latest}")


@app.command()
def diff(
    old: Annotated[Path, typer.Argument(help="Older report version folder (or its results.json).")],
    new: Annotated[Path, typer.Argument(help="Newer report version folder (or its results.json).")],
) -> None:
    """Print the key figures that changed between two report versions."""
    from analysis import report

    try:
        text = report.format_diff(report.diff_versions(old, new))
    except (*USER_ERRORS, report.ReportError) as err:
        raise fail(str(err)) from None
    console.print(text)


@app.command()
def sync(
    check: Annotated[
        bool, typer.Option("--check", help="Only check; exit 1 when out of sync.")
    ] = False,
) -> None:
    """Keep each notebook and its py:percent pair in sync (jupytext)."""
    from analysis import report

    problems = report.sync_notebooks(check=check)
    if problems:
        raise fail("notebook pairs out of sync:\n" + "\n".join(problems))
    console.print("notebook pairs in sync")


@app.command()
def goldens() -> None:
    """Re-execute every chapter with params/ci.yaml into tests/notebooks/goldens/."""
    from analysis import report

    try:
        written = report.make_goldens()
    except (*USER_ERRORS, report.ReportError) as err:
        raise fail(str(err)) from None
    for p in written:
        console.print(f"wrote {p.relative_to(paths.ROOT)}")


@app.command("data-readme")
def data_readme(
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 if data/README.md is stale.")
    ] = False,
) -> None:
    """Generate data/README.md from the schema definitions."""
    from analysis.schema import render_data_dictionary
    from analysis.tables import ALL

    text = render_data_dictionary(list(ALL.values()))
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
def bench(
    params: Annotated[
        Path, typer.Option("--params", help="Scenario for the report phase timing.")
    ] = paths.DEFAULT_PARAMS,
    report_phases: Annotated[
        bool, typer.Option("--report/--no-report", help="Also time make report's phases.")
    ] = True,
) -> None:
    """Time the model sweeps, the Monte Carlo and each phase of a report run."""
    from analysis import bench as bench_mod

    try:
        bench_mod.run_bench(params, include_report=report_phases, console=console)
    except USER_ERRORS as err:
        raise fail(str(err)) from None


@app.command("validate-models")
def validate_models() -> None:
    """Print the out-of-sample errors of the inference and training models against MLPerf."""
    from analysis import validation

    try:
        validation.print_model_validation(console)
    except USER_ERRORS as err:
        raise fail(str(err)) from None


@ingest_app.command("mlperf")
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

    try:
        report_lines = mlperf.ingest(sources, out_dir=out or paths.BENCHMARKS, accessed=accessed)
    except (*USER_ERRORS, mlperf.IngestError) as err:
        raise fail(str(err)) from None
    for line in report_lines:
        console.print(line)


@ingest_app.command("inferencex")
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

    try:
        report_lines = inferencex.ingest(
            sources, out_dir=out or paths.BENCHMARKS, accessed=accessed
        )
    except (*USER_ERRORS, inferencex.IngestError) as err:
        raise fail(str(err)) from None
    for line in report_lines:
        console.print(line)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
