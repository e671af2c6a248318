"""Renderer selection and the fallback's PDF step, without a real browser."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from analysis import render
from analysis.textsafe import markdown_text


def _fake_chromium(folder: Path) -> Path:
    """A stand-in for Chromium: prints a version, or writes the --print-to-pdf file."""
    exe = folder / "fake-chromium"
    exe.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then echo "Chromium 1.2.3"; exit 0; fi\n'
        'for a in "$@"; do case "$a" in --print-to-pdf=*) '
        'printf "%%PDF-1.4" > "${a#--print-to-pdf=}";; esac; done\n',
        encoding="utf-8",
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_select_renderer_keeps_the_chromium_it_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exe = _fake_chromium(tmp_path)
    monkeypatch.setenv("GPU_REPORT_NO_QUARTO", "1")
    monkeypatch.setenv("CHROMIUM", str(exe))
    renderer = render.select_renderer(("html", "pdf"))
    assert renderer.name == "fallback"
    assert renderer.executable == str(exe)
    assert renderer.pdf_tool == "headless Chromium 1.2.3"
    assert "executable" not in renderer.as_dict()  # a local path stays out of the manifest


def test_select_renderer_without_chromium_fails_only_for_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_REPORT_NO_QUARTO", "1")
    monkeypatch.setenv("CHROMIUM", str(tmp_path / "absent"))
    assert render.select_renderer(("html",)).executable is None
    with pytest.raises(render.RenderError, match="no Chromium found"):
        render.select_renderer(("html", "pdf"))


def test_print_pdf_uses_the_given_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _fake_chromium(tmp_path)
    monkeypatch.setenv("CHROMIUM", str(tmp_path / "absent"))  # PATH search would find none
    page = tmp_path / "print.html"
    page.write_text("<html></html>", encoding="utf-8")
    pdf = render.print_pdf(page, tmp_path / "report.pdf", chromium=str(exe))
    assert pdf.read_bytes().startswith(b"%PDF")
    with pytest.raises(render.RenderError, match="needs Chromium"):
        render.print_pdf(page, tmp_path / "other.pdf")


def test_print_variant_drops_vega_and_adds_the_footer() -> None:
    context = {
        "renderer": 'fallback "x"',
        "version": "v0001-20261130T061500Z-ab",
        "scenario": "s1",
        "date": "2026-11-30",
    }
    screen = (
        f"<html><head><script>{render.vega_bundle()}</script></head>"
        '<body class="jp-Notebook report"></body></html>'
    )
    out = render.print_variant_of(screen, context)
    assert render.vega_bundle() not in out
    assert 'class="jp-Notebook report report-print"' in out
    # scenario, the version's date and the renderer, escaped for CSS content
    assert 'Scenario s1 · version of 2026-11-30 · Rendered by fallback \\"x\\"' in out
    assert "__REPORT_FOOTER__" not in out


# --- Quarto: the one-document project, without a real Quarto ---------------------------


def _executed_chapter(folder: Path, name: str, markdown: str, html_out: str) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_raw_cell(f'---\ntitle: "{name} title"\n---'),
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_markdown_cell(markdown),
        nbformat.v4.new_code_cell("show()"),
    ]
    nb.cells[-1].outputs = [
        nbformat.v4.new_output(
            "display_data", data={"text/html": html_out, "text/plain": "a table"}
        )
    ]
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


TABLE = (
    '<style type="text/css">#T_t_row0_col1 { background-color: #ff0000; }</style>'
    '<table id="T_t" class="report-table"><thead><tr><th>Id</th><th>Value</th></tr></thead>'
    '<tbody><tr><td><a id="A-x"></a><code>A-x</code></td>'
    '<td id="T_t_row0_col1" class="num">1_000 #</td></tr></tbody></table>'
)


def _fake_quarto(folder: Path, body: str) -> Path:
    exe = folder / "fake-quarto"
    exe.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


CONTEXT = {
    "title": "T",
    "scenario": "ci",
    "version": "v0001",
    "renderer": "Quarto 9.9",
    "commit": "abc",
}


def test_quarto_documents_hold_every_chapter_without_cdn_triggers(tmp_path: Path) -> None:
    import nbformat

    a = _executed_chapter(tmp_path, "10-a", "See [x](20-b.ipynb#A-x) and [b](20-b.ipynb).", "")
    b = _executed_chapter(tmp_path, "20-b", "## Register", TABLE)
    docs = render.write_quarto_project([a, b], tmp_path / "q", CONTEXT, ("html", "pdf"))
    assert [d[0] for d in docs] == ["html", "pdf"]
    html_nb = nbformat.read(tmp_path / "q" / render.QUARTO_HTML_DOC, as_version=4)
    text = json_dump(html_nb)
    # titles are user-visible text, escaped as Markdown (textsafe), with the chapter id
    for cid in ("10-a", "20-b"):
        heading = f"# {markdown_text(cid + ' title')} {{#{cid}"
        assert heading in text or heading.replace("\\", "\\\\") in text
    assert "[x](#A-x)" in text and "[b](#20-b)" in text  # cross-chapter links, in-document
    assert "x = 1" not in text  # parameters cell dropped
    outputs = [o for c in html_nb.cells if c.cell_type == "code" for o in c.outputs]
    # no text/html output anywhere: Quarto would add require.js/jQuery from a CDN
    assert outputs and all("text/html" not in o.get("data", {}) for o in outputs)
    pdf_nb = nbformat.read(tmp_path / "q" / render.QUARTO_PDF_DOC, as_version=4)
    typst = json_dump(pdf_nb)
    assert "{=typst}" in typst and "<table" not in typst  # no juice subprocess per table
    assert "#metadata(none)<A-x>" in typst


def json_dump(nb) -> str:
    import json

    return json.dumps(nb, ensure_ascii=False)


def test_a_link_to_a_missing_id_fails_naming_the_chapter(tmp_path: Path) -> None:
    a = _executed_chapter(tmp_path, "10-a", "See [x](20-b.ipynb#A-missing).", "")
    b = _executed_chapter(tmp_path, "20-b", "text", TABLE)
    with pytest.raises(render.RenderError, match=r"10-a: link to #A-missing"):
        render.write_quarto_project([a, b], tmp_path / "q", CONTEXT, ("pdf",))


def test_render_quarto_times_each_format_and_copies_one_document_each(tmp_path: Path) -> None:
    a = _executed_chapter(tmp_path, "10-a", "text", TABLE)
    exe = _fake_quarto(
        tmp_path,
        'mkdir -p _output; case "$2" in *pdf*) printf "%%PDF" > _output/report-pdf.pdf;; '
        f"*) echo '<html><head>{render.VEGA_PLACEHOLDER}</head></html>' > _output/report.html;; "
        "esac\n",
    )
    out = tmp_path / "out"
    timings = render.render_quarto(
        [a], tmp_path / "build", out, CONTEXT, ("html", "pdf"), quarto=str(exe)
    )
    assert set(timings) == {"html", "pdf"} and all(v > 0 for v in timings.values())
    assert (out / "report.pdf").read_bytes() == b"%PDF"
    page = (out / "index.html").read_text(encoding="utf-8")
    assert render.vega_bundle() in page and render.VEGA_PLACEHOLDER not in page


def test_render_quarto_timeout_is_a_clear_error(tmp_path: Path) -> None:
    a = _executed_chapter(tmp_path, "10-a", "text", TABLE)
    exe = _fake_quarto(tmp_path, "sleep 30\n")
    with pytest.raises(render.RenderError, match=r"did not finish in 1 s.*GPU_REPORT_NO_QUARTO"):
        render.render_quarto(
            [a],
            tmp_path / "build",
            tmp_path / "out",
            CONTEXT,
            ("html",),
            quarto=str(exe),
            timeout=1,
        )


def test_render_quarto_failure_names_the_document(tmp_path: Path) -> None:
    a = _executed_chapter(tmp_path, "10-a", "text", TABLE)
    exe = _fake_quarto(tmp_path, "echo 'ERROR: typst says no' >&2; exit 3\n")
    with pytest.raises(render.RenderError, match=r"report-pdf.ipynb \(pdf\) failed.*exit 3"):
        render.render_quarto(
            [a], tmp_path / "build", tmp_path / "out", CONTEXT, ("pdf",), quarto=str(exe)
        )


def test_sync_check_flags_a_review_pair_beside_its_notebook(tmp_path: Path) -> None:
    import shutil

    from analysis import paths
    from analysis.devtools.pairs import sync_notebooks

    folder = tmp_path / "notebooks"
    (folder / "py").mkdir(parents=True)
    shutil.copy2(paths.NOTEBOOKS / "10-data.ipynb", folder)
    shutil.copy2(paths.NOTEBOOKS / "py" / "10-data.py", folder / "py")
    assert sync_notebooks(check=True, folder=folder) == []
    shutil.copy2(paths.NOTEBOOKS / "py" / "10-data.py", folder)  # where Quarto skips it
    (problem,) = sync_notebooks(check=True, folder=folder)
    assert "notebooks/10-data.py" in problem and "move it to notebooks/py/10-data.py" in problem
