"""Rendering executed chapters into the report: Quarto when installed, else the fallback.

Analytical decisions taken here:

* Papermill is the only executor; both renderers only render the executed notebooks.
* Quarto (when ``quarto`` is on PATH) renders each run in its own Quarto project in the
  build folder (parameterized renders in one project can overwrite each other's figures),
  as ONE document per format built from every chapter: one HTML page and one PDF (Typst)
  with a title page, one contents, continuous page and figure numbers, cross-chapter
  links that resolve and the footer on every page. Outputs are prepared per format so
  that Quarto neither loads require.js/jQuery from a CDN nor runs a subprocess per table.
* The fallback renders one ``index.html`` with every chapter in order (nbconvert, a
  template extending ``lab``): the Vega bundle is inlined once, nothing is fetched from any
  host, code is folded in ``<details>``, ``parameters`` cells are hidden. The PDF is headless
  Chromium's print of a print variant of the same page (A4, no code, static PNG charts).
* Every page's footer carries the scenario, the version's date, the renderer and "page n
  of N"; the PDF has title, author and subject metadata and bookmarks (both renderers).
* The memo comes first: page 1 of the PDF and the HTML's first screen hold the summary
  chapter up to its first level-2 heading (the calls, the figure, the caveat); the
  contents follow it. Cells tagged ``key-results`` (the nbval anchor feeding
  results.json) are never rendered; a cell with the option ``#| detail: "..."`` is a
  collapsed ``<details>`` in HTML and left out of the PDF (reference tables whose full
  form the HTML and its CSV downloads carry).
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
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import nbformat

from analysis import paths
from analysis.errors import RenderError as RenderError
from analysis.execute import front_matter
from analysis.textsafe import html_text, markdown_text, typst_text
from analysis.typst_tables import typst_string

HIDDEN_CELL_TAGS = {"parameters", "injected-parameters", "remove-cell", "key-results"}
#: Author recorded in the PDF metadata (both renderers).
PDF_AUTHOR = "gpu-decision-report (analysis package)"
#: Cell option naming a collapsed HTML detail, left out of the PDF.
DETAIL_OPTION = "detail"
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
    def short_label(self) -> str:
        """Renderer and version in a few words, for page footers."""
        if self.name == "quarto":
            return f"Quarto {self.version}"
        return f"fallback ({self.html_tool})"

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


def version_date(version: str) -> str:
    """The day a version was made, from its id (``v0003-20261130T061500Z-<digest>``).

    >>> version_date("v0003-20261130T061500Z-abc"), version_date("dev")
    ('2026-11-30', 'dev')
    """
    m = re.search(r"-(\d{4})(\d{2})(\d{2})T", version)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else version


def footer_text(context: dict[str, Any]) -> str:
    """The footer line (left part; the page number is added by each renderer).

    Scenario, the version's date and the renderer that made the page (the design names
    the renderer in every footer).
    """
    return (
        f"Scenario {context.get('scenario', '')}"
        f" · version of {context.get('date', context['version'])}"
        f" · Rendered by {context['renderer']}"
    )


def set_pdf_metadata(pdf: Path, title: str, subject: str) -> None:
    """Write title, author and subject into ``pdf`` (keeping its pages and bookmarks).

    Chromium's print takes only the HTML title; Typst writes title (and author when set),
    not always a subject. One pass with pypdf gives both renderers the same metadata.
    """
    import logging

    from pypdf import PdfReader, PdfWriter

    # Chromium's trailers under-count their objects; pypdf repairs that and says so.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    writer = PdfWriter(clone_from=PdfReader(pdf))
    writer.add_metadata({"/Title": title, "/Author": PDF_AUTHOR, "/Subject": subject})
    tmp = pdf.with_suffix(".meta.pdf")
    with tmp.open("wb") as fh:
        writer.write(fh)
    tmp.replace(pdf)


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
            if cell.cell_type == "markdown":
                cell.source = rewrite_chapter_links(cell.source)
            quiet = _quiet_code(cell)
            if quiet and previous_quiet:
                last = combined.cells[-1]
                last.source = last.source.rstrip("\n") + "\n\n" + cell.source
                continue
            previous_quiet = quiet
            if cell.cell_type == "code":
                opts = cell_options(cell.source)
                if DETAIL_OPTION in opts:
                    cell.metadata["report_detail"] = opts[DETAIL_OPTION]
                tags = cell.metadata.setdefault("tags", [])
                if opts.get("echo") == "false" and "remove-input" not in tags:
                    tags.append("remove-input")
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

    # The stubs make `snippet` required; without it the bundle is the whole library.
    bundle: str = vlc.javascript_bundle()  # type: ignore[call-arg]
    return bundle.replace("</script", "<\\/script")


def _print_css(context: dict[str, Any]) -> str:
    """The print stylesheet with the footer (scenario, date, renderer) on every page."""
    footer = footer_text(context)
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


_HEADING = re.compile(r'(<h[1-6][^>]*?\sid=")([^"]+)("[^>]*>)(.*?)(</h[1-6]>)', re.DOTALL)


def unique_heading_ids(html: str) -> str:
    """Headings with the same text in several chapters ("Overview") get ids -2, -3, ...

    nbconvert derives a heading's id from its text, so the one page would repeat ids; the
    first keeps its id (links to it stay valid), later ones are numbered, their anchor
    link with them.

    >>> unique_heading_ids('<h2 id="O">O<a href="#O">¶</a></h2><h2 id="O">O<a href="#O">¶</a></h2>')
    '<h2 id="O">O<a href="#O">¶</a></h2><h2 id="O-2">O<a href="#O-2">¶</a></h2>'
    """
    seen: dict[str, int] = {}

    def rename(m: re.Match[str]) -> str:
        old = m.group(2)
        seen[old] = seen.get(old, 0) + 1
        if seen[old] == 1:
            return m.group(0)
        new = f"{old}-{seen[old]}"
        inner = m.group(4).replace(f'href="#{old}"', f'href="#{new}"')
        return f"{m.group(1)}{new}{m.group(3)}{inner}{m.group(5)}"

    return _HEADING.sub(rename, html)


def render_fallback_html(
    executed: list[Path], out_dir: Path, context: dict[str, Any], *, want_print: bool
) -> tuple[Path, Path | None]:
    """Write ``index.html`` (and ``print.html`` for the PDF) into ``out_dir``."""
    nb, chapters = combine_notebooks(executed)
    context = {**context, "chapters": chapters}
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "index.html"
    try:
        screen = unique_heading_ids(export_html(nb, context, print_variant=False))
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
            "--generate-pdf-document-outline",
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

#: Seconds one ``quarto render`` may take before the run fails with a RenderError (the
#: default report renders in well under a minute; a hung Typst or deno would otherwise
#: block ``make report`` forever).
QUARTO_TIMEOUT_S = 600
#: The two documents of the Quarto project in a run's build folder: the same chapters,
#: their outputs prepared for HTML (interactive charts, HTML tables) or for Typst (PNG
#: charts, Typst tables). One document each, so numbering, contents and links span chapters.
QUARTO_HTML_DOC = "report.ipynb"
QUARTO_PDF_DOC = "report-pdf.ipynb"
#: The chapters' tables keep their own HTML (``html-table-processing: none``), so they get
#: their look here: compact, ruled, numbers right-aligned, wide ones scroll in their column.
QUARTO_TABLE_CSS = (
    "table.report-table{display:block;max-width:100%;overflow-x:auto;border-collapse:collapse;"
    "font-size:.85rem;margin:.5rem 0 1rem}"
    "table.report-table th,table.report-table td{padding:.2rem .5rem;"
    "border-bottom:1px solid #dee2e6;vertical-align:top}"
    "table.report-table thead th{border-bottom:2px solid #495057}"
    "table.report-table td.num{text-align:right;font-variant-numeric:tabular-nums}"
)
#: Where Vega's JS goes in the Quarto HTML (replaced after rendering).
VEGA_PLACEHOLDER = '<script type="application/x-gpu-report" id="vega-bundle"></script>'
_DOC_SUBTITLE = "Which platform fits ML training and inference, by how much, how sure we are"
CHAPTER_LINK = re.compile(r"\]\((\d\d-[A-Za-z0-9._-]+)\.ipynb(#[^)\s]*)?\)")
_INTERNAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")
_HTML_ID = re.compile(r"""\sid\s*=\s*["']([^"']+)["']""")
#: A chart's PNG inside its upgradeable HTML (analysis.charts.render_bundle).
_CHART_IMG = re.compile(r'<img alt="([^"]*)" src="data:image/png;base64,[A-Za-z0-9+/=]+"[^>]*>')
_MD_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{#([^}\s]+)[^}]*\})?\s*$", re.MULTILINE)


def rewrite_chapter_links(markdown: str) -> str:
    """Links to another chapter's notebook as links inside the one report document.

    Chapters link to each other as Quarto users write it (``90-appendix.ipynb#A-x``, which
    a per-chapter Quarto website resolves); in the combined report that is ``#A-x``, and a
    link to a whole chapter (``40-tco.ipynb``) goes to its heading ``#40-tco``.

    >>> rewrite_chapter_links("[u](90-appendix.ipynb#A-utilization), [t](40-tco.ipynb)")
    '[u](#A-utilization), [t](#40-tco)'
    """
    return CHAPTER_LINK.sub(lambda m: f"]({m.group(2) or '#' + m.group(1)})", markdown)


def _pandoc_id(text: str) -> str:
    """Pandoc's auto identifier for a heading (close enough for link checks)."""
    text = re.sub(r"[^\w\s-]", "", re.sub(r"<[^>]+>", "", text)).strip().lower()
    return re.sub(r"\s+", "-", text)


def _markdown_block(fmt: str, content: str) -> str:
    """A pandoc raw block (``{=html}`` / ``{=typst}``) with a fence longer than any inside."""
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{{={fmt}}}\n{content}\n{fence}\n"


def _output_ids(nb: nbformat.NotebookNode) -> set[str]:
    ids: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for title, explicit in _MD_HEADING.findall(cell.source):
                ids.add(explicit or _pandoc_id(title))
        for out in cell.get("outputs", []) or []:
            ids.update(_HTML_ID.findall(str(out.get("data", {}).get("text/html", ""))))
    return ids


def _quarto_outputs(
    outputs: list[Any], target: str, known: set[str]
) -> list[nbformat.NotebookNode]:
    """A code cell's outputs as Quarto should read them for ``target`` (html or typst).

    Quarto adds require.js and jQuery from a CDN to any HTML page whose notebook has a
    ``text/html`` output, and inlines each HTML table's CSS with one subprocess per table on
    the Typst path; neither happens to ``text/markdown`` outputs holding raw blocks. So:
    HTML target -> every ``text/html`` becomes a raw HTML block in ``text/markdown`` (the
    chart's upgrade script stays, Vega's JS is in the page head); Typst target -> tables
    become Typst tables, charts keep only their PNG. Key-results outputs are dropped (they
    feed results.json, not the reader).
    """
    from analysis.results import MIME as RESULTS_MIME
    from analysis.typst_tables import html_tables_to_typst

    kept = []
    for out in outputs:
        out = copy.deepcopy(out)
        data = out.get("data")
        if data is None:
            kept.append(out)
            continue
        if RESULTS_MIME in data:
            continue
        html_text = data.get("text/html")
        if isinstance(html_text, list):
            html_text = "".join(html_text)
        keep: dict[str, Any] = {}
        if target == "html":
            if html_text:
                # Vega draws the chart from its spec in place of the PNG: dropping the PNG
                # (5 of the 6 MB of chapter output) halves Quarto's HTML render time; its
                # alt text stays as the placeholder.
                html_text = _CHART_IMG.sub(
                    r'<span class="chart-placeholder" role="img" aria-label="\1">\1</span>',
                    html_text,
                )
                keep["text/markdown"] = _markdown_block("html", html_text)
            else:
                keep = {
                    k: v for k, v in data.items() if not k.endswith("+json") and k != "text/html"
                }
        else:
            typst = html_tables_to_typst(html_text, known) if html_text else None
            if typst:
                keep["text/markdown"] = _markdown_block("typst", typst)
            elif "image/png" in data:
                keep["image/png"] = data["image/png"]
            else:
                keep = {k: v for k, v in data.items() if k in ("text/markdown", "text/plain")}
        if not keep:
            continue
        out["data"] = keep
        out["metadata"] = {}
        kept.append(out)
    return kept


def quarto_notebook(
    executed: list[Path], target: str, context: dict[str, Any]
) -> tuple[nbformat.NotebookNode, list[dict[str, str]]]:
    """Every chapter in one notebook for Quarto, its outputs prepared for ``target``.

    Each chapter opens with a level-1 heading whose id is the chapter id (the contents and
    cross-chapter links point there); its front-matter cell, the ``parameters`` /
    ``injected-parameters`` cells and key-results outputs are dropped; links to other
    chapters' notebooks become in-document links. A link to an id the document does not
    have fails here, naming the chapter, instead of as a Typst error or a dead HTML link.
    """
    import yaml

    notebooks = [(p, nbformat.read(p, as_version=4)) for p in executed]
    known = {p.stem for p, _ in notebooks}
    for _, nb in notebooks:
        known |= _output_ids(nb)
    doc = nbformat.v4.new_notebook()
    doc.metadata = copy.deepcopy(notebooks[0][1].metadata) if notebooks else {}
    for key in ("papermill", "jupytext", "widgets"):
        doc.metadata.pop(key, None)
    doc.cells.append(
        nbformat.v4.new_raw_cell("---\n" + yaml.safe_dump(context, sort_keys=False) + "---")
    )
    chapters: list[dict[str, str]] = []
    dead: list[str] = []
    outline_done = target == "html"
    for path, nb in notebooks:
        meta = front_matter(nb)
        cid = path.stem
        title = str(meta.get("title", cid))
        chapters.append({"id": cid, "title": title})
        doc.cells.append(nbformat.v4.new_markdown_cell(_quarto_heading(cid, title, meta)))
        cells = nb.cells[1:] if meta else nb.cells
        for i, raw in enumerate(cells):
            if _hidden(raw) or (raw.cell_type == "raw" and not raw.metadata.get("raw_mimetype")):
                continue
            prepared = _prepare_quarto_cell(raw, f"{cid}-{i}"[:64], target, known)
            if prepared is None:
                continue  # the PDF leaves details out (the HTML and its CSVs carry them)
            cell, detail = prepared
            if not outline_done and _opens_section(cell):
                # The memo (the first chapter up to its first section) is page 1; the
                # one contents page follows it.
                doc.cells.append(
                    nbformat.v4.new_markdown_cell(_markdown_block("typst", TYPST_CONTENTS))
                )
                outline_done = True
            if cell.cell_type == "markdown":
                dead += [
                    f"{cid}: link to #{t}"
                    for t in _INTERNAL_LINK.findall(cell.source)
                    if t not in known
                ]
            doc.cells.extend(_with_detail(cell, detail))
    if dead:
        raise RenderError(
            "links to ids that no chapter has (the report would carry dead links): "
            + "; ".join(dead)
        )
    return doc, chapters


def _quarto_heading(cid: str, title: str, meta: dict[str, Any]) -> str:
    """A chapter's level-1 heading (id = chapter id) and its description line."""
    heading = f"# {markdown_text(title)} {{#{cid} .report-chapter}}"
    if meta.get("description"):
        heading += f"\n\n[{markdown_text(str(meta['description']))}]{{.chapter-description}}"
    return heading


def _opens_section(cell: nbformat.NotebookNode) -> bool:
    """Whether ``cell`` is a markdown cell that starts a ``##`` section."""
    return cell.cell_type == "markdown" and cell.source.lstrip().startswith("## ")


def _prepare_quarto_cell(
    cell: nbformat.NotebookNode, cell_id: str, target: str, known: set[str]
) -> tuple[nbformat.NotebookNode, str | None] | None:
    """A copy of ``cell`` ready for Quarto and its detail label (None: leave the cell out).

    A detail cell (``#| detail: ...``) is HTML-only (folded into ``<details>``); links to
    other chapters become in-document links; outputs are prepared for ``target``.
    """
    cell = copy.deepcopy(cell)
    cell["id"] = cell_id
    detail = cell_options(cell.source).get(DETAIL_OPTION) if cell.cell_type == "code" else None
    if detail is not None:
        if target != "html":
            return None
        cell.source = "\n".join(
            ln
            for ln in cell.source.splitlines()
            if not ln.strip().startswith(f"#| {DETAIL_OPTION}:")
        )
    if cell.cell_type == "markdown":
        cell.source = rewrite_chapter_links(cell.source)
    elif cell.cell_type == "code":
        cell.outputs = _quarto_outputs(cell.get("outputs", []), target, known)
        cell.metadata.pop("tags", None)
    return cell, detail


def _with_detail(cell: nbformat.NotebookNode, detail: str | None) -> list[nbformat.NotebookNode]:
    """``cell``, wrapped in an HTML ``<details>`` block labelled ``detail`` when it has one."""
    if detail is None:
        return [cell]
    opening = f'<details class="report-detail"><summary>{html_text(detail)}</summary>'
    return [
        nbformat.v4.new_markdown_cell(_markdown_block("html", opening)),
        cell,
        nbformat.v4.new_markdown_cell(_markdown_block("html", "</details>")),
    ]


def _quarto_format(name: str) -> dict[str, Any]:
    """``format.<name>`` of the project's ``_quarto.yml`` (the options users see there)."""
    import yaml

    config = yaml.safe_load(paths.QUARTO_PROJECT.read_text(encoding="utf-8")) or {}
    return copy.deepcopy((config.get("format") or {}).get(name) or {})


def _typst_header(footer: str, title: str = "", subject: str = "") -> str:
    """Typst set-up before the body: metadata, the footer, each chapter on a new page.

    The footer carries scenario, date and renderer and "page n of N"; every level-1
    heading (a chapter) starts a page except the first, so that the memo shares page 1
    with the title block.
    """
    meta = f"#set document(author: {typst_string(PDF_AUTHOR)}"
    if subject:
        meta += f", description: {typst_string(subject)}"
    meta += ")\n"
    return (
        meta + "#set page(footer: context text(size: 8pt, fill: luma(90))["
        f"{typst_text(footer)} #h(1fr) page #counter(page).display() of "
        "#counter(page).final().first()])\n"
        "#show heading.where(level: 1): it => context {\n"
        "  if counter(heading).get().first() > 1 { pagebreak(weak: true) }\n"
        "  it\n"
        "}\n"
    )


#: The contents page the PDF carries after the memo (chapters only: one page).
TYPST_CONTENTS = "#pagebreak()\n#outline(title: [Contents], depth: 1)\n#pagebreak()"


def _typst_title_page(context: dict[str, Any]) -> str:
    """One line under Quarto's title block: scenario, version, commit (the memo follows)."""
    line = (
        f"Scenario {typst_text(context['scenario'])} · version {typst_text(context['version'])}"
        f" · commit {typst_text(context['commit'])} · rendered by {typst_text(context['renderer'])}"
    )
    return f"#text(size: 8pt, fill: luma(90))[{line}]\n"


def write_quarto_project(
    executed: list[Path], project: Path, context: dict[str, Any], formats: tuple[str, ...]
) -> list[tuple[str, Path, str, float]]:
    """Write the run's Quarto project into ``project``.

    Returns ``(phase, document, output name, seconds spent preparing it)`` per format.

    The project's ``_quarto.yml`` only sets the project up (render list, no execution);
    each document's front matter carries its format, from ``format.html`` /
    ``format.typst`` of the root ``_quarto.yml`` plus what a published report needs: the
    footer naming the renderer, Vega's JS in the page head (interactive charts, offline),
    a title page and one contents in the PDF. ``$`` is not a math delimiter (prices).
    """
    import yaml

    project.mkdir(parents=True, exist_ok=True)
    footer = footer_text(context)
    subtitle = f"Scenario {context['scenario']} · version {context['version']}"
    docs: list[tuple[str, Path, str, float]] = []
    t = time.perf_counter()
    if "html" in formats:
        # Vega's JS goes in after Quarto (a placeholder here): pandoc and Quarto's HTML
        # post-processing would otherwise parse its 0.9 MB, about 2.5 s of the HTML phase.
        (project / "_vega.html").write_text(
            f"{VEGA_PLACEHOLDER}\n<style>{QUARTO_TABLE_CSS}</style>\n", "utf-8"
        )
        (project / "_footer.html").write_text(
            f'<footer class="report-footer"><p>{html_text(footer)}</p></footer>\n', "utf-8"
        )
        fmt = _quarto_format("html")
        fmt.update(
            {
                "from": "markdown-tex_math_dollars",
                "embed-resources": True,
                # the tables are the chapters' own HTML (report-table class, styled by
                # report.css below); Quarto's re-parse of each adds nothing but time
                "html-table-processing": "none",
                "include-in-header": ["_vega.html"],
                "include-after-body": ["_footer.html"],
            }
        )
        nb, _ = quarto_notebook(
            executed,
            "html",
            {
                "title": markdown_text(context["title"]),
                "subtitle": markdown_text(subtitle),
                "format": {"html": fmt},
            },
        )
        nbformat.write(nb, project / QUARTO_HTML_DOC)
        docs.append(("html", project / QUARTO_HTML_DOC, "report.html", time.perf_counter() - t))
    t = time.perf_counter()
    if "pdf" in formats:
        (project / "_report-header.typ").write_text(
            _typst_header(footer, context["title"], context.get("description", "")), "utf-8"
        )
        (project / "_title-page.typ").write_text(_typst_title_page(context), "utf-8")
        fmt = _quarto_format("typst")
        fmt.update(
            {
                "from": "markdown-tex_math_dollars",
                "toc": False,  # the page after the memo carries the one contents
                # the Typst source stays in the build folder: scripts/screenshots.py renders
                # page 1 from it where no PDF rasterizer (pdftoppm) is installed
                "keep-typ": True,
                "echo": False,
                "include-in-header": ["_report-header.typ"],
                "include-before-body": ["_title-page.typ"],
            }
        )
        nb, _ = quarto_notebook(
            executed,
            "typst",
            {
                "title": markdown_text(context["title"]),
                "subtitle": _DOC_SUBTITLE,
                "format": {"typst": fmt},
            },
        )
        nbformat.write(nb, project / QUARTO_PDF_DOC)
        docs.append(("pdf", project / QUARTO_PDF_DOC, "report-pdf.pdf", time.perf_counter() - t))
    config = {
        "project": {
            "type": "default",
            "output-dir": "_output",
            "render": [d[1].name for d in docs],
        },
        "execute": {"enabled": False},
    }
    (project / "_quarto.yml").write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
    return docs


def render_quarto(
    executed: list[Path],
    build_dir: Path,
    out_dir: Path,
    context: dict[str, Any],
    formats: tuple[str, ...],
    *,
    quarto: str | None = None,
    timeout: int = QUARTO_TIMEOUT_S,
) -> dict[str, float]:
    """Render the executed notebooks with Quarto in ``build_dir/quarto`` (its own project).

    Writes ``index.html`` and ``report.pdf`` into ``out_dir``: one HTML document and one PDF
    holding every chapter. One ``quarto render`` per format, so each phase's time is its
    own; returns ``{"html": s, "pdf": s}`` for the formats rendered.
    ``quarto``: the binary to use (the renderer's); found on PATH when not given.
    """
    quarto = quarto or find_quarto()
    if quarto is None:
        raise RenderError("quarto is not on PATH")
    project = build_dir / "quarto"
    docs = write_quarto_project(executed, project, context, formats)
    out_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    final = {"html": "index.html", "pdf": "report.pdf"}
    for phase, doc, produced, prepared_s in docs:
        t = time.perf_counter() - prepared_s  # the phase includes preparing its document
        try:
            proc = subprocess.run(
                [quarto, "render", doc.name, "--no-execute"],
                cwd=project,
                capture_output=True,
                text=True,
                check=False,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise RenderError(
                f"quarto render {doc.name} ({phase}) did not finish in {timeout} s "
                f"(project {project}); raise QUARTO_TIMEOUT_S or render with "
                "GPU_REPORT_NO_QUARTO=1 (the fallback renderer)"
            ) from None
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise RenderError(
                f"quarto render {doc.name} ({phase}) failed in {project} "
                f"(exit {proc.returncode}):\n{tail}"
            )
        src = project / "_output" / produced
        if not src.is_file():
            raise RenderError(f"quarto did not produce {src}")
        if phase == "html":
            page = src.read_text(encoding="utf-8")
            if page.count(VEGA_PLACEHOLDER) != 1:
                raise RenderError(f"quarto dropped the Vega placeholder from {src}")
            page = page.replace(VEGA_PLACEHOLDER, f"<script>{vega_bundle()}</script>", 1)
            (out_dir / final[phase]).write_text(page, encoding="utf-8")
        else:
            shutil.copy2(src, out_dir / final[phase])
        timings[phase] = time.perf_counter() - t
    return timings
