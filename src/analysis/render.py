"""Rendering executed chapters into the report: Quarto when installed, else the fallback.

Analytical decisions taken here:

* Papermill is the only executor; both renderers only render the executed notebooks.
* Quarto (when ``quarto`` is on PATH) renders each run in its own build folder with a copy
  of ``_quarto.yml`` (parameterized renders in one project can overwrite each other's
  figures): one HTML page per chapter plus an index, and one PDF per chapter via
  ``format: typst``, merged into ``report.pdf``.
* The fallback renders one ``index.html`` with every chapter in order (nbconvert, a
  template extending ``lab``): the Vega bundle is inlined once, nothing is fetched from any
  host, code is folded in ``<details>``, ``parameters`` cells are hidden. The PDF is headless
  Chromium's print of a print variant of the same page (A4, no code, static PNG charts).
* Every page says which renderer (and version) produced it.
* User text reaches the pages only through :mod:`analysis.textsafe` (HTML, Typst).
* Chromium prints a page that runs no script at all: the print variant carries a
  Content-Security-Policy ``script-src 'none'`` (it needs none: charts are PNGs there), so
  an injected ``alert()`` can neither run nor hang the print on a dialog. The print has a
  hard timeout after which Chromium's whole process group is killed, and its profile
  folder is removed, also the ones a killed run left behind (:func:`sweep_stale_profiles`).
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import nbformat

from analysis import paths
from analysis.execute import front_matter
from analysis.textsafe import html_text, typst_text

HIDDEN_CELL_TAGS = {"parameters", "injected-parameters", "remove-cell"}
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Flags that work on these machines (toolchain notes); the user-data dir is added per run.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
VIRTUAL_TIME_BUDGET_MS = 10000
#: The print page runs no script (see the module docstring); the meta tag goes first in
#: <head> so that it applies before any script element is parsed.
PRINT_CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'\">"
)
#: Prefix of Chromium profile folders (``<prefix><pid>-<random>`` in the temp folder).
PROFILE_PREFIX = "gpu-report-chromium-"
#: Seconds Chromium may take to print the report (~1 s normally).
PRINT_TIMEOUT_S = 180
OPTION_LINE = re.compile(r"^#\|\s*([\w-]+)\s*:\s*(.*)$")


class RenderError(RuntimeError):
    """Rendering failed; the message names the renderer, the stage and the output."""


@dataclass(frozen=True)
class Renderer:
    """Which renderer produces the report, with versions (shown in every footer)."""

    name: str  # "quarto" or "fallback"
    version: str
    html_tool: str
    pdf_tool: str | None
    #: The quarto (or, for the fallback's PDF, Chromium) binary found at selection, so the
    #: render step uses the tool the footer names instead of searching PATH again.
    executable: str | None = None

    @property
    def label(self) -> str:
        """Human-readable line for footers and manifests."""
        if self.name == "quarto":
            return f"Quarto {self.version} (HTML; PDF via Typst)"
        pdf = f"; PDF: {self.pdf_tool}" if self.pdf_tool else ""
        return f"fallback renderer (HTML: {self.html_tool}{pdf})"

    def as_dict(self) -> dict[str, Any]:
        """For manifest.json and run_info."""
        return {
            "name": self.name,
            "version": self.version,
            "html": self.html_tool,
            "pdf": self.pdf_tool,
            "label": self.label,
        }


# --- tool discovery -------------------------------------------------------------------


def find_quarto() -> str | None:
    """The ``quarto`` executable on PATH (None if absent or disabled by GPU_REPORT_NO_QUARTO)."""
    if os.environ.get("GPU_REPORT_NO_QUARTO"):
        return None
    return shutil.which("quarto")


def find_chromium() -> str | None:
    """Chromium from ``$CHROMIUM``, else the first known name on PATH."""
    env = os.environ.get("CHROMIUM")
    if env:
        return env if Path(env).exists() or shutil.which(env) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@cache
def tool_version(executable: str, arg: str = "--version") -> str:
    """First line of ``executable --version`` (``unknown`` when it cannot be run)."""
    try:
        out = subprocess.run(
            [executable, arg], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[0] if lines else "unknown"


def chromium_version(executable: str) -> str:
    """E.g. ``Chromium 156.0.8078.108``."""
    m = re.search(r"(Chromium|Chrome)[^\d]*([\d.]+)", tool_version(executable))
    return f"{m.group(1)} {m.group(2)}" if m else tool_version(executable)


def select_renderer(formats: tuple[str, ...]) -> Renderer:
    """Quarto when on PATH, otherwise the fallback (nbconvert + headless Chromium)."""
    import nbconvert

    quarto = find_quarto()
    if quarto:
        version = tool_version(quarto)
        return Renderer("quarto", version, f"Quarto {version}", "Typst", executable=quarto)
    chromium = find_chromium() if "pdf" in formats else None
    if "pdf" in formats and chromium is None:
        raise RenderError(
            "PDF requested but no Chromium found: install it (`make system-deps`, Debian: "
            "apt-get install chromium), set CHROMIUM=/path/to/chrome, or use --formats html."
        )
    return Renderer(
        "fallback",
        f"nbconvert {nbconvert.__version__}",
        f"nbconvert {nbconvert.__version__}",
        f"headless {chromium_version(chromium)}" if chromium else None,
        executable=chromium,
    )


# --- the combined notebook (fallback) -------------------------------------------------


def cell_options(source: str) -> dict[str, str]:
    """Quarto cell options (``#| key: value`` lines at the top of a code cell)."""
    opts: dict[str, str] = {}
    for line in source.splitlines():
        m = OPTION_LINE.match(line.strip())
        if not m:
            break
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        opts[m.group(1)] = value
    return opts


def _chapter_heading(cid: str, title: str, description: str) -> nbformat.NotebookNode:
    """The chapter's title and description as one trusted HTML cell.

    The template emits it as is (nbconvert's raw-cell path would sanitize it into text).
    """
    body = f'<h1 class="chapter-title" id="{html_text(cid)}">{html_text(title)}</h1>'
    if description:
        body += f'\n<p class="chapter-description">{html_text(description)}</p>'
    return nbformat.v4.new_raw_cell(
        body, metadata={"raw_mimetype": "text/html", "report_heading": True}
    )


def _hidden(cell: nbformat.NotebookNode) -> bool:
    return bool(HIDDEN_CELL_TAGS & set(cell.get("metadata", {}).get("tags", [])))


def _quiet_code(cell: nbformat.NotebookNode) -> bool:
    """A code cell without outputs or cell options (imports, validation, set-up)."""
    return (
        cell.cell_type == "code"
        and not cell.get("outputs")
        and not cell_options(cell.source)
        and not cell.get("metadata", {}).get("tags")
    )


def combine_notebooks(executed: list[Path]) -> tuple[nbformat.NotebookNode, list[dict[str, str]]]:
    """One notebook holding every chapter in order, each opened by a heading cell.

    The YAML front-matter cell becomes the heading (title, description); Quarto cell options
    become numbered figure captions ("Figure N: ..."); cells tagged ``parameters`` /
    ``injected-parameters`` are dropped; consecutive code cells without output (imports,
    validation) are joined into one folded block; cell ids are prefixed with the chapter id
    to stay unique.
    """
    combined = nbformat.v4.new_notebook()
    chapters: list[dict[str, str]] = []
    figure = 0
    for path in executed:
        nb = nbformat.read(path, as_version=4)
        if not combined.metadata:
            combined.metadata = copy.deepcopy(nb.metadata)
        meta = front_matter(nb)
        cid = path.stem
        title = str(meta.get("title", cid))
        chapters.append({"id": cid, "title": title})
        combined.cells.append(_chapter_heading(cid, title, str(meta.get("description", ""))))
        cells = nb.cells[1:] if meta else nb.cells
        previous_quiet = False
        for i, cell in enumerate(cells):
            if _hidden(cell):
                continue
            cell = copy.deepcopy(cell)
            cell["id"] = f"{cid}-{i}"[:64]
            if cell.cell_type == "raw" and not cell.metadata.get("raw_mimetype"):
                continue  # raw cells without a format are for other renderers
            quiet = _quiet_code(cell)
            if quiet and previous_quiet:
                last = combined.cells[-1]
                last.source = last.source.rstrip("\n") + "\n\n" + cell.source
                continue
            previous_quiet = quiet
            if cell.cell_type == "code":
                opts = cell_options(cell.source)
                if "fig-cap" in opts:
                    figure += 1
                    cell.metadata["report_fig_cap"] = opts["fig-cap"]
                    cell.metadata["report_fig_label"] = opts.get("label", "")
                    cell.metadata["report_fig_num"] = figure
            combined.cells.append(cell)
    combined.metadata.pop("papermill", None)
    combined.metadata.pop("jupytext", None)
    return combined, chapters


def _template_text(name: str) -> str:
    return (paths.TEMPLATES / "report" / name).read_text(encoding="utf-8")


@cache
def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed as one script (inlined once per page)."""
    import vl_convert as vlc

    return vlc.javascript_bundle().replace("</script", "<\\/script")


def _print_css(context: dict[str, Any]) -> str:
    """The print stylesheet with the footer (renderer, version) on every page."""
    footer = f"Rendered by {context['renderer']} | version {context['version']}"
    return _template_text("print.css").replace(
        "__REPORT_FOOTER__", footer.replace("\\", "\\\\").replace('"', '\\"')
    )


def export_html(nb: nbformat.NotebookNode, context: dict[str, Any], *, print_variant: bool) -> str:
    """HTML of the combined notebook with the report template (screen or print variant)."""
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import TagRemovePreprocessor
    from traitlets.config import Config

    cfg = Config()
    cfg.TagRemovePreprocessor.remove_cell_tags = set(HIDDEN_CELL_TAGS)
    cfg.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    cfg.TagRemovePreprocessor.remove_all_outputs_tags = {"remove-output"}
    cfg.TagRemovePreprocessor.enabled = True
    exporter = HTMLExporter(
        config=cfg,
        template_name="report",
        extra_template_basedirs=[str(paths.TEMPLATES)],
        exclude_input=print_variant,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    exporter.register_preprocessor(TagRemovePreprocessor(config=cfg), enabled=True)
    report = {
        **context,
        "print": print_variant,
        "fold_code": not print_variant,
        "vega_bundle": "" if print_variant else vega_bundle(),
        "css": _template_text("report.css"),
        "print_css": _print_css(context) if print_variant else "",
    }
    body, _ = exporter.from_notebook_node(nb, resources={"report": report})
    return body


def print_variant_of(screen: str, context: dict[str, Any]) -> str:
    """The print page from the screen page: no Vega script, print CSS added."""
    css = _print_css(context)
    out = screen.replace(f"<script>{vega_bundle()}</script>", "", 1)
    out = out.replace("</head>", f'<style type="text/css">\n{css}\n</style>\n</head>', 1)
    out = re.sub(r"<head(\s[^>]*)?>", lambda m: m.group(0) + "\n" + PRINT_CSP, out, count=1)
    return out.replace('class="jp-Notebook report"', 'class="jp-Notebook report report-print"', 1)


def render_fallback_html(
    executed: list[Path], out_dir: Path, context: dict[str, Any], *, want_print: bool
) -> tuple[Path, Path | None]:
    """Write ``index.html`` (and ``print.html`` for the PDF) into ``out_dir``."""
    nb, chapters = combine_notebooks(executed)
    context = {**context, "chapters": chapters}
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "index.html"
    try:
        screen = export_html(nb, context, print_variant=False)
        index.write_text(screen, encoding="utf-8")
        printable = None
        if want_print:
            # The print variant is the same page without the Vega script (charts stay PNG)
            # and with the print CSS (A4, code folded away, footer on every page): derived
            # from the screen HTML instead of a second nbconvert export (~half the time).
            printable = out_dir / "print.html"
            printable.write_text(print_variant_of(screen, context), encoding="utf-8")
    except Exception as err:
        raise RenderError(
            f"HTML rendering (nbconvert) failed: {type(err).__name__}: {err}"
        ) from err
    return index, printable


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def sweep_stale_profiles(tmp: Path | None = None) -> list[Path]:
    """Remove Chromium profile folders left by runs whose process is gone; return them."""
    base = Path(tmp or tempfile.gettempdir())
    removed = []
    for p in base.glob(f"{PROFILE_PREFIX}*"):
        m = re.match(rf"^{PROFILE_PREFIX}(\d+)-", p.name)
        if m and p.is_dir() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


def print_pdf(
    html_file: Path,
    pdf_file: Path,
    *,
    chromium: str | None = None,
    timeout: int = PRINT_TIMEOUT_S,
) -> Path:
    """Headless Chromium ``--print-to-pdf`` of ``html_file`` (A4 from the page's CSS).

    ``chromium``: the binary to use (the renderer's); found on PATH when not given. After
    ``timeout`` seconds Chromium's process group is killed and :class:`RenderError` raised.
    """
    chromium = chromium or find_chromium()
    if chromium is None:
        raise RenderError("PDF rendering needs Chromium: install it or set CHROMIUM.")
    sweep_stale_profiles()
    profile = tempfile.mkdtemp(prefix=f"{PROFILE_PREFIX}{os.getpid()}-")
    try:
        cmd = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            f"--virtual-time-budget={VIRTUAL_TIME_BUDGET_MS}",
            f"--print-to-pdf={pdf_file}",
            html_file.resolve().as_uri(),
        ]
        # Own process group: on a timeout (or Ctrl-C) the renderer and GPU helpers go too.
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except BaseException as err:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            if isinstance(err, subprocess.TimeoutExpired):
                raise RenderError(
                    f"Chromium did not finish printing {html_file} in {timeout} s (killed)"
                ) from None
            raise
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if proc.returncode != 0 or not pdf_file.is_file() or pdf_file.stat().st_size == 0:
        tail = "\n".join((stderr or "").strip().splitlines()[-5:])
        raise RenderError(
            f"Chromium failed to print {html_file} to PDF (exit {proc.returncode}): {tail}"
        )
    return pdf_file


# --- Quarto ---------------------------------------------------------------------------


def render_quarto(
    executed: list[Path],
    build_dir: Path,
    out_dir: Path,
    context: dict[str, Any],
    formats: tuple[str, ...],
    *,
    quarto: str | None = None,
) -> dict[str, Path]:
    """Render the executed notebooks with Quarto inside ``build_dir`` (its own project).

    ``build_dir`` holds ``notebooks/NN-*.ipynb`` (executed); a copy of ``_quarto.yml`` is
    written there with the render list set to those chapters and a footer naming the
    renderer. Outputs are copied to ``out_dir``: one HTML page per chapter, ``index.html``
    linking them in order, and ``report.pdf`` (the chapters' Typst PDFs merged).
    ``quarto``: the binary to use (the renderer's); found on PATH when not given.
    """
    import yaml

    quarto = quarto or find_quarto()
    if quarto is None:
        raise RenderError("quarto is not on PATH")
    config = yaml.safe_load(paths.QUARTO_PROJECT.read_text(encoding="utf-8")) or {}
    rel = [f"notebooks/{p.name}" for p in executed]
    config.setdefault("project", {})["render"] = rel
    config["project"]["output-dir"] = "_output"
    footer = f"Rendered by {context['renderer']} · version {context['version']}"
    (build_dir / "_footer.html").write_text(
        f'<footer class="report-footer"><p>{html_text(footer)}</p></footer>\n', encoding="utf-8"
    )
    (build_dir / "_footer.typ").write_text(
        f"#set page(footer: align(center, text(size: 8pt)[{typst_text(footer)}]))\n",
        encoding="utf-8",
    )
    fmt = config.setdefault("format", {})
    if "html" in formats:
        fmt.setdefault("html", {})["include-after-body"] = "_footer.html"
    else:
        fmt.pop("html", None)
    if "pdf" in formats:
        fmt.setdefault("typst", {})["include-before-body"] = "_footer.typ"
    else:
        fmt.pop("typst", None)
    (build_dir / "_quarto.yml").write_text(
        yaml.safe_dump(config, sort_keys=False), encoding="utf-8"
    )
    proc = subprocess.run(
        [quarto, "render", "--no-execute"],
        cwd=build_dir,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise RenderError(f"quarto render failed in {build_dir} (exit {proc.returncode}):\n{tail}")
    site = build_dir / "_output"
    out: dict[str, Path] = {}
    out_dir.mkdir(parents=True, exist_ok=True)
    if "html" in formats:
        links = []
        for p in executed:
            src = site / "notebooks" / f"{p.stem}.html"
            if not src.is_file():
                raise RenderError(f"quarto did not produce {src}")
            shutil.copy2(src, out_dir / src.name)
            title = front_matter(nbformat.read(p, as_version=4)).get("title", p.stem)
            links.append(f'<li><a href="{html_text(src.name)}">{html_text(title)}</a></li>')
        index = out_dir / "index.html"
        index.write_text(
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html_text(context['title'])}</title></head><body>"
            f"<h1>{html_text(context['title'])}</h1><nav><ol>{''.join(links)}</ol></nav>"
            f"<footer><p>{html_text(footer)}</p></footer></body></html>\n",
            encoding="utf-8",
        )
        out["html"] = index
    if "pdf" in formats:
        from pypdf import PdfWriter

        writer = PdfWriter()
        for p in executed:
            src = site / "notebooks" / f"{p.stem}.pdf"
            if not src.is_file():
                raise RenderError(f"quarto did not produce {src}")
            writer.append(str(src))
        pdf = out_dir / "report.pdf"
        with pdf.open("wb") as fh:
            writer.write(fh)
        out["pdf"] = pdf
    return out
