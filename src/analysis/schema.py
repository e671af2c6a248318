"""Metadata as code: every dataset's columns, types, units and constraints, defined once.

Each table in ``data/`` is described by a :class:`Table` (in :mod:`analysis.tables`); the
same definition validates the CSV on load (via pandera) and generates the data dictionary
``data/README.md``, so the two cannot drift. Validation errors name the file, the row (as
the 1-based CSV line number, header = line 1), the column and what is allowed.

Speed: a table whose every value is plainly valid (numbers written as plain decimals,
no empty required cell, every constraint met) is coerced and checked with a few vectorized
pandas operations (:func:`_fast_validate`), which gives the same frame pandera gives (a
unit test compares the two on every table); anything else, including every invalid file,
goes through pandera, whose failure cases make the error messages. pandera itself is
imported only then (its import and first validation cost ~0.5 s per process).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

import pandas as pd

from analysis.errors import DataValidationError as DataValidationError

if TYPE_CHECKING:
    import pandera.pandas as pa

DType = Literal["str", "float", "int", "bool", "date"]

_PANDERA_TYPES: dict[str, object] = {
    "str": str,
    "float": float,
    "int": "Int64",
    "bool": "boolean",
    "date": str,
}


@dataclass(frozen=True)
class Col:
    """One column: name (with unit suffix), type, unit, meaning and constraints."""

    name: str
    dtype: DType
    description: str
    unit: str = ""
    required: bool = True  #: False = empty cells allowed
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    isin: Sequence[str] | None = None
    pattern: str | None = None

    def allowed(self) -> str:
        """Human-readable constraint summary (also used in the data dictionary)."""
        parts: list[str] = []
        if self.gt is not None:
            parts.append(f"> {self.gt:g}")
        if self.ge is not None:
            parts.append(f">= {self.ge:g}")
        if self.le is not None:
            parts.append(f"<= {self.le:g}")
        if self.isin is not None:
            parts.append("one of " + ", ".join(f"`{v}`" for v in self.isin))
        if self.pattern is not None:
            parts.append(f"matches `{self.pattern}`")
        if self.dtype == "date":
            parts.append("ISO date YYYY-MM-DD")
        if not self.required:
            parts.append("may be empty")
        return "; ".join(parts)

    def pandera_column(self) -> pa.Column:
        """The pandera column (type, checks, nullability) for this definition."""
        import pandera.pandas as pa

        checks = []
        if self.gt is not None:
            checks.append(pa.Check.gt(self.gt))
        if self.ge is not None:
            checks.append(pa.Check.ge(self.ge))
        if self.le is not None:
            checks.append(pa.Check.le(self.le))
        if self.isin is not None:
            checks.append(pa.Check.isin(list(self.isin)))
        if self.pattern is not None:
            checks.append(pa.Check.str_matches(self.pattern))
        if self.dtype == "date":
            checks.append(pa.Check.str_matches(DATE_RE))
        return pa.Column(
            _PANDERA_TYPES[self.dtype],
            checks=checks,
            nullable=not self.required,
            coerce=True,
            required=True,
            description=self.description,
            title=self.unit or None,
        )


@dataclass(frozen=True)
class Table:
    """A dataset: where it lives, what a row is, its key and its columns."""

    name: str
    path: str  #: relative to ``data/``
    description: str
    columns: tuple[Col, ...]
    key: tuple[str, ...] = ()
    #: Extra whole-table checks: each returns a list of error strings (empty = fine).
    checks: tuple[Callable[[pd.DataFrame], list[str]], ...] = field(default=())

    @property
    def column_names(self) -> list[str]:
        """Column names in schema order."""
        return [c.name for c in self.columns]

    def schema(self) -> pa.DataFrameSchema:
        """The pandera schema built from the column definitions."""
        import pandera.pandas as pa

        return pa.DataFrameSchema(
            {c.name: c.pandera_column() for c in self.columns},
            strict=True,
            ordered=False,
            name=self.name,
        )

    def validate(self, df: pd.DataFrame, source: str | Path | None = None) -> pd.DataFrame:
        """Validate (and coerce) a frame read from ``source``; raise on the first problems."""
        where = str(source or self.path)
        missing = [c for c in self.column_names if c not in df.columns]
        extra = [c for c in df.columns if c not in self.column_names]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing column(s) {missing}")
            if extra:
                parts.append(f"unexpected column(s) {extra}")
            raise DataValidationError(
                f"{where}: {'; '.join(parts)}. Expected columns: {', '.join(self.column_names)}."
            )
        df = df.reset_index(drop=True)
        out = _fast_validate(self, df)
        if out is None:
            out = self._pandera_validate(df, where)
        problems: list[str] = []
        if self.key:
            dup = out.duplicated(list(self.key), keep=False)
            for idx in out.index[dup][:10]:
                keyval = ", ".join(f"{k}={out.at[idx, k]!r}" for k in self.key)
                problems.append(f"row {idx + 2}: duplicated key ({keyval})")
        for check in self.checks:
            problems.extend(check(out))
        if problems:
            raise DataValidationError(f"{where}: " + "; ".join(problems[:20]))
        return out[self.column_names]

    def _pandera_validate(self, df: pd.DataFrame, where: str) -> pd.DataFrame:
        """Coerce and check with pandera; raise with the failure cases formatted."""
        from pandera.errors import SchemaError, SchemaErrors

        try:
            return self.schema().validate(df, lazy=True)
        except SchemaErrors as err:
            raise DataValidationError(_format_failures(where, err.failure_cases, self)) from None
        except SchemaError as err:  # pragma: no cover - lazy=True collects into SchemaErrors
            raise DataValidationError(f"{where}: {err}") from None

    def read(self, data_dir: Path) -> pd.DataFrame:
        """Read ``data_dir / path`` as strings, then validate and coerce."""
        path = data_dir / self.path
        try:
            raw = read_raw_csv(path)
        except FileNotFoundError:
            raise DataValidationError(f"{path}: file not found (table {self.name!r}).") from None
        except IsADirectoryError:
            raise DataValidationError(f"{path}: is a folder, not a CSV file.") from None
        except pd.errors.EmptyDataError:
            raise DataValidationError(
                f"{path}: empty file (table {self.name!r} needs a header row: "
                f"{', '.join(self.column_names)})."
            ) from None
        except UnicodeDecodeError as err:
            raise DataValidationError(
                f"{path}: not UTF-8 text (byte offset {err.start}); is it a binary file?"
            ) from None
        except (pd.errors.ParserError, ValueError) as err:
            msg = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
            raise DataValidationError(f"{path}: not a valid CSV file ({msg}).") from None
        except OSError as err:
            raise DataValidationError(f"{path}: cannot read ({err.strerror}).") from None
        return self.validate(raw, path)


def read_raw_csv(source: str | Path | IO[str]) -> pd.DataFrame:
    """A CSV as :meth:`Table.validate` expects it: every cell a string, empty cells NA.

    Only empty cells are missing (``keep_default_na=False``): "NA" or "null" stay text, so
    what a file holds is what the schema checks.
    """
    return pd.read_csv(source, dtype=str, keep_default_na=False, na_values=[""])


#: Plain decimal numbers (what the fast path accepts; anything else goes to pandera).
_FLOAT_RE = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_INT_RE = r"[+-]?\d+"
DATE_RE = r"^\d{4}-\d{2}-\d{2}$"


def _fast_column(col: Col, s: pd.Series) -> pd.Series | None:
    """``s`` coerced to ``col``'s type if every value is plainly valid, else None."""
    if not isinstance(s.dtype, pd.StringDtype):
        return None
    if col.pattern is not None and col.dtype not in ("str", "date"):
        return None
    present = s.notna().to_numpy(dtype=bool)
    if col.required and not present.all():
        return None
    text = s[present]
    out = _fast_coerce(col, s, text)
    if out is None or not _fast_bounds_hold(col, out[present]):
        return None
    for pattern in (col.pattern, DATE_RE if col.dtype == "date" else None):
        if pattern is not None and not text.str.match(pattern).all():
            return None
    return out


def _fast_coerce(col: Col, s: pd.Series, text: pd.Series) -> pd.Series | None:
    """``s`` as ``col``'s dtype when every present value (``text``) plainly is one, else None."""
    try:
        if col.dtype in ("str", "date"):
            return s
        if col.dtype == "float":
            return s.astype("float64") if text.str.fullmatch(_FLOAT_RE).all() else None
        if col.dtype == "int":
            return s.astype("Int64") if text.str.fullmatch(_INT_RE).all() else None
    except (ValueError, TypeError, OverflowError):
        return None
    return None  # bool and anything new: pandera decides


def _fast_bounds_hold(col: Col, v: pd.Series) -> bool:
    """Whether every present value meets ``col``'s bounds and allowed set."""
    if col.gt is not None and not (v > col.gt).all():
        return False
    if col.ge is not None and not (v >= col.ge).all():
        return False
    if col.le is not None and not (v <= col.le).all():
        return False
    return col.isin is None or bool(v.isin(list(col.isin)).all())


def _fast_validate(table: Table, df: pd.DataFrame) -> pd.DataFrame | None:
    """The coerced frame pandera would return when nothing fails; None = ask pandera."""
    cols = {c.name: c for c in table.columns}
    out = {}
    for name in df.columns:
        coerced = _fast_column(cols[name], df[name])
        if coerced is None:
            return None
        out[name] = coerced
    return pd.DataFrame(out, index=df.index)


# --- reusable column groups ------------------------------------------------------------
def value_range_cols(value_description: str, le: float | None = None) -> tuple[Col, ...]:
    """``value``, ``low``, ``high`` and ``unit``: a non-negative figure with its plausible range.

    The shape of the tables whose values the Monte Carlo and the tornado chart swing
    through; pair it with ``range_check("value", "low", "high")``. ``le`` caps all three
    (tables whose unit varies by row use a :class:`KeyedRanges` check instead).
    """
    return (
        Col("value", "float", value_description, ge=0, le=le),
        Col("low", "float", "Low end of the plausible range.", ge=0, le=le),
        Col("high", "float", "High end of the plausible range.", ge=0, le=le),
        Col("unit", "str", "Unit of value/low/high."),
    )


# --- reusable whole-table checks (each returns error strings; empty = fine) -------------
def csv_rows(mask: pd.Series) -> list[int]:
    """1-based CSV line numbers (header = line 1) of the rows where ``mask`` is true."""
    return [int(i) + 2 for i in mask.index[mask]]


def range_check(value: str | None, low: str, high: str) -> Callable[[pd.DataFrame], list[str]]:
    """Check ``low <= high`` (and ``low <= value <= high`` when ``value`` is given)."""

    def check(df: pd.DataFrame) -> list[str]:
        bad = df[low] > df[high]
        if value is not None:
            bad = bad | (df[value] < df[low]) | (df[value] > df[high])
        what = f"{low} <= {value} <= {high}" if value else f"{low} <= {high}"
        return [f"row {r}: expected {what}" for r in csv_rows(bad.fillna(False))]

    return check


@dataclass(frozen=True)
class KeyedRanges:
    """Plausibility ranges of numeric columns whose unit depends on a row's key.

    For long tables (one row per accelerator and field, per facility parameter), where
    one column holds GB in one row and TFLOPS in the next, a single column bound means
    nothing. Used as a whole-table check: a value outside the range of its key, or a key
    without a range, is refused with the row, the column and the allowed range.
    """

    key: str
    columns: tuple[str, ...]
    #: ``{key value: (low, high)}``, inclusive; every key value a row may hold needs one.
    ranges: Mapping[str, tuple[float, float]]

    def __call__(self, df: pd.DataFrame) -> list[str]:
        """Error strings for the rows outside their key's range (empty = fine)."""
        problems = []
        unknown = ~df[self.key].isin(list(self.ranges))
        problems += [
            f"row {r}, column {self.key!r}: {df.at[r - 2, self.key]!r} has no plausibility "
            f"range in the schema (known: {', '.join(self.ranges)})"
            for r in csv_rows(unknown)
        ]
        low = df[self.key].map(lambda k: self.ranges.get(k, (None, None))[0])
        high = df[self.key].map(lambda k: self.ranges.get(k, (None, None))[1])
        for col in self.columns:
            v = df[col]
            bad = ~unknown & v.notna() & ((v < low) | (v > high))
            problems += [
                f"row {r}, column {col!r}: {v[r - 2]:g} is implausible for "
                f"{self.key} {df.at[r - 2, self.key]!r} (allowed: {low[r - 2]:g} to "
                f"{high[r - 2]:g})"
                for r in csv_rows(bad.fillna(False).astype(bool))
            ]
        return problems

    def describe(self) -> str:
        """One Markdown line per key for the data dictionary."""
        cols = ", ".join(f"`{c}`" for c in self.columns)
        lines = [f"Plausible {cols} by `{self.key}` (refused outside):", ""]
        lines += [f"- `{k}`: {lo:g} to {hi:g}" for k, (lo, hi) in self.ranges.items()]
        return "\n".join(lines)


def known_id_check(
    column: str, kind: str, known: Sequence[str]
) -> Callable[[pd.DataFrame], list[str]]:
    """Check that ``column`` holds known ids; the message suggests the closest ones."""
    from analysis.ids import unknown_id_message

    def check(df: pd.DataFrame) -> list[str]:
        bad = ~df[column].isin(list(known))
        return [
            f"row {r}, column {column!r}: "
            + unknown_id_message(kind, str(df.at[r - 2, column]), tuple(known))
            for r in csv_rows(bad)
        ]

    return check


def _format_failures(where: str, cases: pd.DataFrame, table: Table) -> str:
    cols = {c.name: c for c in table.columns}
    msgs = []
    for _, case in cases.head(20).iterrows():
        col = case.get("column")
        idx = case.get("index")
        row = f"row {int(idx) + 2}" if pd.notna(idx) else "column"
        allowed = cols[col].allowed() if col in cols else ""
        check = str(case.get("check"))
        value = case.get("failure_case")
        what = "empty value" if check == "not_nullable" else f"value {value!r} fails {check}"
        if check.startswith("coerce_dtype") or check.startswith("dtype"):
            what = f"value {value!r} is not of type {cols[col].dtype}" if col in cols else check
        msgs.append(
            f"{row}, column {col!r}: {what}" + (f" (allowed: {allowed})" if allowed else "")
        )
    return f"{where}: " + "; ".join(msgs)


def render_data_dictionary(tables: Sequence[Table]) -> str:
    """Markdown data dictionary for ``data/README.md`` (generated; do not edit by hand)."""
    out = [
        "# Data dictionary",
        "",
        "<!-- Generated by `python -m analysis data-readme` from src/analysis/tables.py;"
        " do not edit by hand. A test fails when this file is stale. -->",
        "",
        "Every value in these tables carries a source (a URL or an MLPerf result path, via",
        "`source_id` into `sources.csv` or a path column) and an access date. Vendor sparse",
        "figures are halved to dense and labelled; estimates carry a low/high range and say",
        "so; announced parts are flagged `status = announced`.",
        "",
    ]
    for t in tables:
        out += [f"## `{t.path}` ({t.name})", "", t.description, ""]
        if t.key:
            out += [f"Key: {', '.join(f'`{k}`' for k in t.key)}", ""]
        out += ["| column | type | unit | description | allowed |", "|---|---|---|---|---|"]
        for c in t.columns:
            desc = c.description.replace("|", "\\|")
            allowed = c.allowed().replace("|", "\\|")
            out.append(f"| `{c.name}` | {c.dtype} | {c.unit} | {desc} | {allowed} |")
        out.append("")
        for check in t.checks:
            if isinstance(check, KeyedRanges):
                out += [check.describe(), ""]
    return "\n".join(out)
