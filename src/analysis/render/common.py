"""What both renderers share: the renderer record, footers, PDF metadata, tool discovery.

Also the cell options and hidden-cell rule, the chapter links and the Vega bundle.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat

from analysis import paths
from analysis.errors import RenderError
from analysis.textsafe import html_text

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

    def as_dict(self) -> dict[str, str | None]:
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


def footer_text(context: Mapping[str, object]) -> str:
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


def _template_text(name: str) -> str:
    return (paths.TEMPLATES / "report" / name).read_text(encoding="utf-8")


@cache
def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed as one script (inlined once per page)."""
    import vl_convert as vlc

    # The stubs make `snippet` required; without it the bundle is the whole library.
    bundle: str = vlc.javascript_bundle()  # type: ignore[call-arg]
    return bundle.replace("</script", "<\\/script")


CHAPTER_LINK = re.compile(r"\]\((\d\d-[A-Za-z0-9._-]+)\.ipynb(#[^)\s]*)?\)")


def rewrite_chapter_links(markdown: str) -> str:
    """Links to another chapter's notebook as links inside the one report document.

    Chapters link to each other as Quarto users write it (``90-appendix.ipynb#A-x``, which
    a per-chapter Quarto website resolves); in the combined report that is ``#A-x``, and a
    link to a whole chapter (``40-tco.ipynb``) goes to its heading ``#40-tco``.

    >>> rewrite_chapter_links("[u](90-appendix.ipynb#A-utilization), [t](40-tco.ipynb)")
    '[u](#A-utilization), [t](#40-tco)'
    """
    return CHAPTER_LINK.sub(lambda m: f"]({m.group(2) or '#' + m.group(1)})", markdown)
