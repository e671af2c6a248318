"""Schema definitions of every dataset in ``data/`` (one module per family of tables).

:data:`ALL` is the registry the loaders, the validators and the generated data dictionary
(``data/README.md``) are built from. Add a table by defining a :class:`analysis.schema.Table`
in the module of its family and listing it in that module's ``TABLES``.
"""

from __future__ import annotations

from importlib import import_module

from analysis.schema import Table

_FAMILIES = ("sources", "specs", "models", "benchmarks", "prices", "claims", "assumptions")


def _collect() -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for family in _FAMILIES:
        try:
            module = import_module(f"analysis.tables.{family}")
        except ModuleNotFoundError as err:
            if err.name == f"analysis.tables.{family}":
                continue  # family not defined yet
            raise
        for table in module.TABLES:
            if table.name in tables:
                raise RuntimeError(f"table name {table.name!r} defined twice")
            tables[table.name] = table
    return tables


ALL: dict[str, Table] = _collect()
