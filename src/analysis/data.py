"""Loading and validating the datasets in ``data/``, and lookups by canonical id.

Every loader validates its table against the schema in :mod:`analysis.tables` (errors name
file, row and column) and returns a fresh copy, so callers may modify what they get.
Tables are read once per process (they are small) and cached.
"""

from __future__ import annotations

from functools import cache

import pandas as pd

from analysis import paths
from analysis.schema import DataValidationError
from analysis.tables import ALL

__all__ = ["DataValidationError", "load_table", "table_names"]


def table_names() -> list[str]:
    """Names of every registered table, in registry order."""
    return list(ALL)


@cache
def _load_table_cached(name: str) -> pd.DataFrame:
    if name not in ALL:
        raise KeyError(f"unknown table {name!r}; known tables: {', '.join(ALL)}")
    return ALL[name].read(paths.DATA)


def load_table(name: str) -> pd.DataFrame:
    """Validated contents of the table ``name`` (see ``data/README.md``)."""
    return _load_table_cached(name).copy()


def clear_cache() -> None:
    """Forget cached tables (tests that write fixture data call this)."""
    _load_table_cached.cache_clear()


# Named loaders for every table (thin wrappers; specs and models add derived columns).
# Owners may replace a wrapper with a richer loader; the names are the public contract.
def load_sources() -> pd.DataFrame:
    """Every cited source: ``source_id``, URL, title, publisher, access date."""
    return load_table("sources")
