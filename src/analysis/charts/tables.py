"""Tables (presentation only: never changes a value, only how it is shown)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from analysis import outputs
from analysis.charts.summary import _escape

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

#: Unit suffixes of column names (CONTRIBUTING: names carry their unit) -> header unit.
_UNIT_SUFFIXES = (
    ("_usd_per_gpu_hour", "USD/GPU-h"),
    ("_gpu_hour_usd", "USD/GPU-h"),
    ("_per_mtok", "USD/M tokens"),
    ("_usd", "USD"),
    ("_pct", "%"),
    ("_ms", "ms"),
    ("_tbps", "TB/s"),
    ("_gbps", "GB/s"),
    ("_tflops", "TFLOPS"),
    ("_gb", "GB"),
    ("_tb", "TB"),
    ("_kib", "KiB"),
    ("_mib", "MiB"),
    ("_min", "min"),
    ("_hours", "h"),
    ("_w", "W"),
)


_WORDS = {
    "bw": "bandwidth",
    "tp": "TP",
    "mfu": "MFU",
    "kv": "KV",
    "id": "id",
    "isl": "ISL",
    "osl": "OSL",
    "ttft": "TTFT",
    "tpot": "TPOT",
    "amd": "AMD",
    "nvidia": "NVIDIA",
    "gpu": "GPU",
    "gpus": "GPUs",
    "bf16": "BF16",
    "fp8": "FP8",
    "fp4": "FP4",
    "fp6": "FP6",
    "p05": "p5",
    "mtok": "M tokens",
    "tdp": "TDP",
    "hbm": "HBM",
    "mlperf": "MLPerf",
    "ape": "APE",
    "url": "URL",
    "flop": "FLOP",
}


def human_header(name: object) -> str:
    """A readable column header from a column name with its unit suffix.

    >>> human_header("memory_bw_tbps")
    'Memory bandwidth (TB/s)'
    >>> human_header("cost_per_mtok_p95")
    'Cost per M tokens p95'
    """
    if isinstance(name, tuple):
        return " / ".join(human_header(n) for n in name if str(n))
    text = str(name)
    unit = ""
    for suffix, label in _UNIT_SUFFIXES:
        if text.endswith(suffix) and len(text) > len(suffix):
            text, unit = text[: -len(suffix)], label
            break
    words = [_WORDS.get(w.lower(), w) for w in text.split("_") if w]
    if len(words) > 1 and words[0] == "n":  # n_gpus -> GPUs
        words = words[1:]
    head = " ".join(words)
    head = head[:1].upper() + head[1:] if head and not head[:1].isupper() else head
    return f"{head} ({unit})" if unit else head


def _fmt_number(value: Any, decimals: int | None) -> str:
    if value is None or isinstance(value, str):
        return "" if value is None else value
    if isinstance(value, bool):
        return "yes" if value else "no"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return "–"
    if decimals is None:
        decimals = _decimals_for([x])
    return f"{x:,.{decimals}f}"


def _fmt_label_int(value: Any) -> str:
    """An integer shown as a label: no separator, no decimals ("2024", "2"); "–" if NaN.

    >>> _fmt_label_int(2024.0), _fmt_label_int(2), _fmt_label_int(float("nan"))
    ('2024', '2', '–')
    """
    if value is None or isinstance(value, str):
        return "" if value is None else value
    x = float(value)
    return "–" if math.isnan(x) else f"{x:.0f}"


def _decimals_for(values: list[float]) -> int:
    """Decimals that suit a set of numbers: 319,300 | 12.3 | 1.93 | 0.506."""
    finite = [abs(v) for v in values if v == v and abs(v) != float("inf")]
    if not finite or all(v == int(v) for v in finite):
        return 0
    top = max(finite)
    return 0 if top >= 1000 else 1 if top >= 100 else 2 if top >= 1 else 3


def _is_number(v: Any) -> bool:
    return (
        isinstance(v, int | float)
        and not isinstance(v, bool)
        or (hasattr(v, "dtype") and getattr(v.dtype, "kind", "") in "iuf")
    )


class ReportTable:
    """A DataFrame shown for reading: curated columns, human headers, formatted numbers.

    HTML (``_repr_html_``) is a pandas Styler with a fixed uuid (deterministic output), no
    index unless it means something, text left-aligned and wrapped, numbers right-aligned
    with thousands separators; the plain-text repr is the same formatted table (no object
    address), for nbval and renderers that do not take HTML.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        uuid: str,
        numeric: set[str],
        caption: str | None = None,
        wide_text: tuple[str, ...] = (),
    ) -> None:
        self.frame = frame
        self.uuid = uuid
        self.numeric = numeric
        self.caption = caption
        self.wide_text = wide_text

    def styler(self) -> Styler:
        """The pandas Styler behind the HTML (cells classed ``num``, ``text`` or ``long``)."""
        df = self.frame
        classes = pd.DataFrame("", index=df.index, columns=df.columns)
        for c in df.columns:
            if c in self.numeric:
                classes[c] = "num"
            elif df[c].map(lambda v: max((len(w) for w in v.split()), default=0)).max() > 24:
                classes[c] = "text url"  # long unbreakable tokens (URLs, paths): wrap anywhere
            elif c in self.wide_text or df[c].map(len).max() > 40:
                classes[c] = "text long"
            elif df[c].map(len).max() <= 12:
                classes[c] = "text short"
            else:
                classes[c] = "text"
        st = (
            df.style.set_uuid(self.uuid)
            .hide(axis="index")
            .set_td_classes(classes)
            .format(escape="html")
            .map_index(
                lambda h: "text-align: right" if h in self.numeric else "text-align: left",
                axis="columns",
            )
            .set_table_attributes('class="report-table"')
        )
        if self.caption:
            st = st.set_caption(self.caption)
        return st

    def csv_text(self) -> str:
        """The table as displayed (headers and formatted values), as CSV."""
        return self.frame.to_csv(index=False)

    def download_link(self) -> str:
        """A link that saves the table as CSV, offline: the data travels in a data: URI.

        Percent-encoded, so no cell text (user text included) can close the attribute.
        """
        from urllib.parse import quote

        href = "data:text/csv;charset=utf-8," + quote(self.csv_text(), safe="")
        name = _escape(f"{self.uuid}.csv")
        return f'<a class="table-download" download="{name}" href="{href}">Download CSV</a>'

    def _repr_html_(self) -> str:
        return self.styler().to_html() + self.download_link()

    def __repr__(self) -> str:
        return self.frame.to_string(index=False)


def _header(col: object, rename: Mapping[object, str]) -> str:
    """The table's own label, else the registry's header, else :func:`human_header`."""
    return (
        rename.get(col)
        or (outputs.header_of(col) if isinstance(col, str) else None)
        or human_header(col)
    )


def _decimals_of(col: object, decimals: Any) -> int | None:
    """The table's own decimals (one count, or per column), else the registry's."""
    if isinstance(decimals, dict):
        if col in decimals:
            return decimals[col]
    elif decimals is not None:
        return int(decimals)
    return outputs.decimals_of(col) if isinstance(col, str) else None


def table(
    df: pd.DataFrame,
    uuid: str,
    *,
    columns: Sequence[Hashable] | Mapping[Hashable, str | None] | None = None,
    decimals: int | Mapping[Hashable, int | None] | None = None,
    caption: str | None = None,
    wide_text: tuple[str, ...] = (),
    labels: Mapping[Hashable, str] | None = None,
) -> ReportTable:
    """Show ``df`` as a readable report table (values unchanged, formatting only).

    Args:
        df: the frame. A meaningful index (not a plain RangeIndex) becomes the first column.
        uuid: fixed id of the table (determinism; unique per table in the report).
        columns: column names to show, in order; a dict also renames (name -> header).
            Other headers come from :data:`analysis.outputs.OUTPUT_FIELDS`, else from
            :func:`human_header` (unit suffix -> "(unit)").
        decimals: decimals for every number column, or a dict per column name; by
            default the registry's decimals, else one count per column from its magnitude
            (per value where a column spans more than three orders of magnitude),
            thousands separators always.
        caption: a short line above the table.
        wide_text: text columns that get a minimum width (long notes, quotes).
        labels: headers for some columns where this table means something other than
            the registry's label (name -> header); ``columns`` as a dict does the same.
    """
    frame = df.copy()
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    if isinstance(frame.columns, pd.MultiIndex):
        frame.columns = [tuple(str(p) for p in c if str(p)) for c in frame.columns]
    rename: dict[Any, str] = {k: v for k, v in (labels or {}).items() if v}
    if columns is not None:
        frame = frame[list(columns)]
        if isinstance(columns, dict):
            rename.update({k: v for k, v in columns.items() if v})
    out = pd.DataFrame(index=range(len(frame)))
    numeric: set[str] = set()
    for col in frame.columns:
        header = _header(col, rename)
        values = frame[col].tolist()
        nums = [float(v) for v in values if _is_number(v)]
        dec = _decimals_of(col, decimals)
        if getattr(frame[col].dtype, "kind", "") in "iu":
            dec = 0
        if str(col).endswith("year") or str(col) in {"year", "tp", "pp", "dp"}:
            # years and parallelism degrees are labels, not quantities: 2024, TP 2
            out[header] = [_fmt_label_int(v) for v in values]
            numeric.add(header)
            continue
        if dec is None and nums:
            finite = [abs(v) for v in nums if v == v and v != 0 and abs(v) != float("inf")]
            spread = max(finite) / min(finite) if finite else 1.0
            dec = None if spread > 1000 else _decimals_for(nums)
        if nums and not any(isinstance(v, str) and v for v in values):
            numeric.add(header)
        out[header] = [_fmt_number(v, dec) for v in values]
    wide = tuple(_header(c, rename) for c in wide_text)
    return ReportTable(out, uuid, numeric, caption=caption, wide_text=wide)
