"""The Quarto renderer: one Quarto project per run, one HTML document and one PDF (Typst)."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import nbformat

from analysis import paths
from analysis.errors import RenderError
from analysis.execute import front_matter
from analysis.render.common import (
    DETAIL_OPTION,
    PDF_AUTHOR,
    _hidden,
    cell_options,
    find_quarto,
    footer_text,
    rewrite_chapter_links,
    vega_bundle,
)
from analysis.textsafe import html_text, markdown_text, typst_text
from analysis.typst_tables import typst_string

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


_INTERNAL_LINK = re.compile(r"\]\(#([^)\s]+)\)")


_HTML_ID = re.compile(r"""\sid\s*=\s*["']([^"']+)["']""")


#: A chart's PNG inside its upgradeable HTML (analysis.charts.render_bundle).
_CHART_IMG = re.compile(r'<img alt="([^"]*)" src="data:image/png;base64,[A-Za-z0-9+/=]+"[^>]*>')


_MD_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*(?:\{#([^}\s]+)[^}]*\})?\s*$", re.MULTILINE)


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
    executed: list[Path], target: str, context: Mapping[str, object]
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


#: Width of a chart in the PDF, of the text width (see :func:`_typst_header`).
TYPST_CHART_WIDTH = "72%"


def _typst_header(footer: str, title: str = "", subject: str = "") -> str:
    """Typst set-up before the body: metadata, the footer, each chapter on a new page.

    The footer carries scenario, date and renderer and "page n of N"; every level-1
    heading (a chapter) starts a page except the first, so that the memo shares page 1
    with the title block. Charts take :data:`TYPST_CHART_WIDTH` of the text width: at
    full width most stood alone on a page (the default report ran to 28 pages against
    its 26-page budget; at 72 % it has 24, and the charts' labels stay about 6 pt).
    """
    meta = f"#set document(author: {typst_string(PDF_AUTHOR)}"
    if subject:
        meta += f", description: {typst_string(subject)}"
    meta += ")\n"
    return (
        meta
        + f"#set image(width: {TYPST_CHART_WIDTH})\n"
        + "#set page(footer: context text(size: 8pt, fill: luma(90))["
        f"{typst_text(footer)} #h(1fr) page #counter(page).display() of "
        "#counter(page).final().first()])\n"
        "#show heading.where(level: 1): it => context {\n"
        "  if counter(heading).get().first() > 1 { pagebreak(weak: true) }\n"
        "  it\n"
        "}\n"
    )


#: The contents page the PDF carries after the memo (chapters only: one page).
TYPST_CONTENTS = "#pagebreak()\n#outline(title: [Contents], depth: 1)\n#pagebreak()"


def _typst_title_page(context: Mapping[str, object]) -> str:
    """One line under Quarto's title block: scenario, version, commit (the memo follows)."""
    line = (
        f"Scenario {typst_text(context['scenario'])} · version {typst_text(context['version'])}"
        f" · commit {typst_text(context['commit'])} · rendered by {typst_text(context['renderer'])}"
    )
    return f"#text(size: 8pt, fill: luma(90))[{line}]\n"


def write_quarto_project(
    executed: list[Path], project: Path, context: Mapping[str, object], formats: tuple[str, ...]
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
            _typst_header(footer, str(context["title"]), str(context.get("description", ""))),
            "utf-8",
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
    context: Mapping[str, object],
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
