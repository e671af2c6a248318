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

The package: :mod:`~analysis.render.common` (what both renderers share),
:mod:`~analysis.render.fallback` (nbconvert HTML, Chromium PDF) and
:mod:`~analysis.render.quarto` (the Quarto project); every name is importable from
``analysis.render`` as before the split.
"""

from __future__ import annotations

from analysis.errors import RenderError
from analysis.render.common import (
    CHAPTER_LINK,
    CHROMIUM_FLAGS,
    CHROMIUM_NAMES,
    DETAIL_OPTION,
    HIDDEN_CELL_TAGS,
    OPTION_LINE,
    PDF_AUTHOR,
    PRINT_CSP,
    PRINT_TIMEOUT_S,
    PROFILE_PREFIX,
    VIRTUAL_TIME_BUDGET_MS,
    Renderer,
    cell_options,
    chromium_version,
    find_chromium,
    find_quarto,
    footer_text,
    rewrite_chapter_links,
    select_renderer,
    set_pdf_metadata,
    tool_version,
    vega_bundle,
    version_date,
)
from analysis.render.fallback import (
    combine_notebooks,
    export_html,
    print_pdf,
    print_variant_of,
    render_fallback_html,
    sweep_stale_profiles,
    unique_heading_ids,
)
from analysis.render.quarto import (
    QUARTO_HTML_DOC,
    QUARTO_PDF_DOC,
    QUARTO_TABLE_CSS,
    QUARTO_TIMEOUT_S,
    TYPST_CONTENTS,
    VEGA_PLACEHOLDER,
    quarto_notebook,
    render_quarto,
    write_quarto_project,
)

__all__ = [
    "CHAPTER_LINK",
    "CHROMIUM_FLAGS",
    "CHROMIUM_NAMES",
    "DETAIL_OPTION",
    "HIDDEN_CELL_TAGS",
    "OPTION_LINE",
    "PDF_AUTHOR",
    "PRINT_CSP",
    "PRINT_TIMEOUT_S",
    "PROFILE_PREFIX",
    "QUARTO_HTML_DOC",
    "QUARTO_PDF_DOC",
    "QUARTO_TABLE_CSS",
    "QUARTO_TIMEOUT_S",
    "RenderError",
    "Renderer",
    "TYPST_CONTENTS",
    "VEGA_PLACEHOLDER",
    "VIRTUAL_TIME_BUDGET_MS",
    "cell_options",
    "chromium_version",
    "combine_notebooks",
    "export_html",
    "find_chromium",
    "find_quarto",
    "footer_text",
    "print_pdf",
    "print_variant_of",
    "quarto_notebook",
    "render_fallback_html",
    "render_quarto",
    "rewrite_chapter_links",
    "select_renderer",
    "set_pdf_metadata",
    "sweep_stale_profiles",
    "tool_version",
    "unique_heading_ids",
    "vega_bundle",
    "version_date",
    "write_quarto_project",
]
