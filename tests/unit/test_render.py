"""Renderer selection and the fallback's PDF step, without a real browser."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from analysis import render


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
    context = {"renderer": 'fallback "x"', "version": "v0001"}
    screen = (
        f"<html><head><script>{render.vega_bundle()}</script></head>"
        '<body class="jp-Notebook report"></body></html>'
    )
    out = render.print_variant_of(screen, context)
    assert render.vega_bundle() not in out
    assert 'class="jp-Notebook report report-print"' in out
    assert 'Rendered by fallback \\"x\\" | version v0001' in out  # escaped for CSS content
    assert "__REPORT_FOOTER__" not in out
