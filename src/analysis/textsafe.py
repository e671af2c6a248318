"""User text is data: the one place it is escaped for HTML, Markdown, Typst and the terminal.

Analytical decisions taken here:

* Scenario titles, tier names, descriptions, file paths and anything else a parameter file
  or a command line supplies reach four languages: HTML (the fallback template, the
  key-results table, Quarto's index), Markdown (the summary's prose, rendered by nbconvert's
  mistune or by pandoc), Typst (Quarto's PDF footer) and rich's console markup (the CLI's
  messages). Each has one function here; every builder of those languages calls it at the
  point where the string is spliced in, so a ``<script>`` in a title is shown, not run.
* Markdown from users is rendered as text, never as Markdown: every ASCII punctuation
  character that CommonMark or pandoc could read as syntax is backslash-escaped, and the
  HTML-special ``<``, ``>`` and ``&`` become entities (so neither raw HTML, an autolink
  ``<javascript:...>``, a ``[link](javascript:...)`` nor emphasis survives).
* Control characters (newlines included) in one-line user text are replaced by a space
  before escaping: a newline would end a Markdown list item or a Typst line.
* Messages quote user input as a short excerpt (:func:`excerpt`): an error about a 10 MB
  string or an expanded YAML alias must not print the input back.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = [
    "console_text",
    "excerpt",
    "html_text",
    "markdown_code",
    "markdown_text",
    "one_line",
    "script_json_text",
    "typst_text",
]

#: C0/C1 control characters and the Unicode line/paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: ASCII punctuation CommonMark allows to be backslash-escaped, minus the three that become
#: entities below (``&``, ``<``, ``>``): a backslash before them would show literally in
#: pandoc's output.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~\"'$:=^])")
_TYPST_SPECIAL = re.compile(r"([\\#\[\]$*_`<>@~=/+\-\"'])")
#: Longest quote of user input in an error message (characters).
EXCERPT_CHARS = 80


def one_line(text: Any) -> str:
    r"""``text`` as a string with control characters (newlines too) replaced by spaces.

    >>> one_line("a\nb\tc")
    'a b c'
    """
    return _CONTROL.sub(" ", "" if text is None else str(text))


def html_text(text: Any) -> str:
    """``text`` safe as HTML element content or a quoted attribute value.

    >>> html_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape("" if text is None else str(text), quote=True)


def markdown_text(text: Any) -> str:
    r"""``text`` shown literally by a Markdown renderer (mistune, pandoc), on one line.

    >>> markdown_text("[x](javascript:alert(1)) <b>*y*</b>")
    '\\[x\\]\\(javascript\\:alert\\(1\\)\\) &lt;b&gt;\\*y\\*&lt;/b&gt;'
    """
    s = one_line(text)
    s = _MARKDOWN_SPECIAL.sub(r"\\\1", s)
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_code(text: Any) -> str:
    """``text`` as a Markdown code span (literal: no Markdown or HTML inside it).

    A backtick would close the span early, so it is replaced by a quote.

    >>> markdown_code("a`<b>")
    "`a'<b>`"
    """
    return "`" + one_line(text).replace("`", "'") + "`"


def typst_text(text: Any) -> str:
    r"""``text`` as literal Typst markup content (inside ``[...]``), on one line.

    >>> typst_text("#exec[x] $y$")
    '\\#exec\\[x\\] \\$y\\$'
    """
    return _TYPST_SPECIAL.sub(r"\\\1", one_line(text))


def script_json_text(json_text: str) -> str:
    r"""JSON text safe inside a ``<script>`` element: ``<``, ``>``, ``&`` as JSON escapes.

    Still the same JSON value; no ``</script>``, ``<!--`` or ``<script`` can appear in it.

    >>> script_json_text('{"a": "</script><!--"}')
    '{"a": "\\u003c/script\\u003e\\u003c!--"}'
    """
    return json_text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def console_text(text: Any) -> str:
    r"""``text`` printed as is by rich (``[/]`` or ``[link=...]`` are not parsed as markup).

    >>> console_text("[bold]x[/]")
    '\\[bold]x\\[/]'
    """
    from rich.markup import escape

    return escape("" if text is None else str(text))


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A short ``repr`` of ``value`` for messages: at most ``limit`` characters.

    Containers are summarised by type and size instead of being printed.

    >>> excerpt("x" * 200)[:12], len(excerpt("x" * 200)) <= 80
    ("'xxxxxxxxxxx", True)
    >>> excerpt(list(range(1000)))
    'a list of 1000 items'
    """
    if isinstance(value, list | tuple | set | frozenset | dict):
        kind = "mapping" if isinstance(value, dict) else type(value).__name__
        return f"a {kind} of {len(value)} items"
    try:
        s = repr(value)
    except Exception:  # noqa: BLE001 - a hostile object's repr must not crash a message
        s = f"<{type(value).__name__}>"
    s = one_line(s)
    if len(s) > limit:
        s = s[: limit - 14] + f"... ({len(s)} chars)"
    return s[:limit]
