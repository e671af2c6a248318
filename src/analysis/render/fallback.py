"""The fallback renderer: one combined notebook to HTML (nbconvert), printed to PDF by Chromium."""

from __future__ import annotations

import contextlib
import copy
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import nbformat

from analysis import paths
from analysis.errors import RenderError
from analysis.execute import front_matter
from analysis.render.common import (
    CHROMIUM_FLAGS,
    DETAIL_OPTION,
    HIDDEN_CELL_TAGS,
    PRINT_CSP,
    PRINT_TIMEOUT_S,
    PROFILE_PREFIX,
    VIRTUAL_TIME_BUDGET_MS,
    _chapter_heading,
    _hidden,
    _quiet_code,
    _template_text,
    cell_options,
    find_chromium,
    footer_text,
    rewrite_chapter_links,
    vega_bundle,
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


def _print_css(context: Mapping[str, object]) -> str:
    """The print stylesheet with the footer (scenario, date, renderer) on every page."""
    footer = footer_text(context)
    return _template_text("print.css").replace(
        "__REPORT_FOOTER__", footer.replace("\\", "\\\\").replace('"', '\\"')
    )


def export_html(
    nb: nbformat.NotebookNode, context: Mapping[str, object], *, print_variant: bool
) -> str:
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


def print_variant_of(screen: str, context: Mapping[str, object]) -> str:
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
    executed: list[Path], out_dir: Path, context: Mapping[str, object], *, want_print: bool
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
