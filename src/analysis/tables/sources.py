"""The sources register: one row per document a value in ``data/`` is taken from.

Analytical decisions taken here:

* Every value row in every other table points here through a ``source_id``; a data test
  fails when a referenced id is missing, so a figure cannot lose its provenance.
* ``accessed`` is the day the document was read (vendor pages change without notice), and
  ``access_via`` says what was read: this project's machines reach no live web page, so a
  URL's document is read through a search index's stored copy (``stored-copy``); the
  copy's own crawl date is not shown to us, so ``accessed`` is the day we read the copy,
  not a visit to the live page. A price or document date is never taken from
  ``accessed``: price tables carry their own ``quote_date`` / ``price_date``.
* ``kind`` says how much weight a source carries: a vendor ``datasheet`` or ``whitepaper``
  outranks a ``press-release`` or a third-party ``article``. A row without a URL (an
  ``estimate``, a file shipped beside the repository) must say in ``notes`` where the
  document is or how the estimate was made.
* Rows are kept sorted by ``source_id`` so that concurrent additions merge cleanly.
"""

from __future__ import annotations

import pandas as pd

from analysis.schema import Col, Table

#: Kinds of source, roughly from most to least authoritative.
SOURCE_KINDS: tuple[str, ...] = (
    "datasheet",
    "whitepaper",
    "product-page",
    "documentation",
    "model-card",
    "config",
    "paper",
    "mlperf",
    "press-release",
    "blog",
    "pricing",
    "article",
    "estimate",
)

SOURCE_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"

#: How a source was read: a search index's stored copy of the URL, the live page, a file
#: shipped beside the repository, or nothing to read (our own estimates).
ACCESS_VIA: tuple[str, ...] = ("stored-copy", "live", "local-file", "none")


def source_id_col(description: str, name: str = "source_id") -> Col:
    """A column that cites a row of ``sources.csv`` by its ``source_id``.

    The loaders in :mod:`analysis.data` check that every cited id exists (any column named
    ``source_id`` or ``*_source_id``).
    """
    return Col(name, "str", description, pattern=SOURCE_ID_PATTERN)


def _url_or_note(df: pd.DataFrame) -> list[str]:
    """A source without a URL (an estimate, a file shipped beside the repo) explains itself."""
    bad = df["url"].isna() & df["notes"].isna()
    return [
        f"row {i + 2}, column 'url': empty value with empty notes (a source without a URL "
        "must say in `notes` where it is or how the estimate was made)"
        for i in df.index[bad]
    ]


def _access_via_matches_url(df: pd.DataFrame) -> list[str]:
    """A source read from a copy or the live page has a URL; one read from nothing has none."""
    needs_url = df["access_via"].isin(["stored-copy", "live"])
    bad = (needs_url & df["url"].isna()) | (~needs_url & df["url"].notna())
    return [
        f"row {i + 2}, column 'access_via': {df.at[i, 'access_via']!r} with "
        f"{'no URL' if needs_url[i] else 'a URL'} (stored-copy/live need a URL; "
        "local-file/none have none)"
        for i in df.index[bad]
    ]


def _sorted_ids(df: pd.DataFrame) -> list[str]:
    """Rows are sorted by ``source_id`` (keeps concurrent appends mergeable)."""
    ids = df["source_id"].tolist()
    for i, (a, b) in enumerate(zip(ids, ids[1:], strict=False)):
        if b < a:
            return [f"row {i + 3}, column 'source_id': {b!r} sorts before {a!r}; keep rows sorted"]
    return []


SOURCES = Table(
    name="sources",
    path="sources.csv",
    description=(
        "Every document a value in `data/` is taken from. Other tables reference a row by "
        "`source_id`. Rows are sorted by `source_id`."
    ),
    key=("source_id",),
    columns=(
        Col(
            "source_id",
            "str",
            "Stable short id, lower case (e.g. `nvidia-h100-datasheet`).",
            pattern=SOURCE_ID_PATTERN,
        ),
        Col(
            "url",
            "str",
            "Exact URL of the document used; empty only when `notes` says where "
            "the document is or how the estimate was made.",
            required=False,
            pattern=r"^https?://",
        ),
        Col("title", "str", "Title of the document as published."),
        Col("publisher", "str", "Organisation or author that published it."),
        Col(
            "accessed",
            "date",
            "Day the document was read; with `access_via = stored-copy`, the day we read "
            "the stored copy (its crawl date is not known), not a visit to the live page.",
        ),
        Col(
            "access_via",
            "str",
            "What was read: a search index's stored copy of `url`, the live page, a file "
            "beside the repository, or nothing (an estimate).",
            isin=ACCESS_VIA,
        ),
        Col(
            "kind",
            "str",
            "What sort of source it is (authority decreases down the list).",
            isin=SOURCE_KINDS,
        ),
        Col(
            "notes",
            "str",
            "What it is used for; caveats; how an estimate was made.",
            required=False,
        ),
    ),
    checks=(_url_or_note, _access_via_matches_url, _sorted_ids),
)

TABLES = (SOURCES,)
