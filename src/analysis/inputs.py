"""The model inputs as one value: every validated table, the derived frames, and the fits.

:class:`Inputs` is what the modelling code reads instead of loading files: a frozen
object holding the validated tables by name (read lazily through its ``reader``), the
wide spec frame and the model frame (:attr:`Inputs.specs`, :attr:`Inputs.models`), and a
per-instance memo of derived results (calibrations, fits: :meth:`Inputs.derived`). A new
instance therefore starts with no derived result. The one exception is opt-in and keyed by
content: a result asked to ``persist`` (the scenario-independent fits and validations) passes
through the instance's ``store``, which ``load_inputs`` sets to
:mod:`analysis.derived_store` (on only where a report run enables it).

``analysis.data.load_inputs()`` builds one from ``data/`` (or another root) and
``analysis.data.default_inputs()`` keeps the process-wide one (``data.clear_cache()``
drops it). Tests build one from small frames with :meth:`Inputs.from_tables`.

This module must not import :mod:`analysis.data` or :mod:`analysis.paths`
(tests/unit/test_architecture.py checks it): it knows tables, not files.

Derivations fixed here (they were ``data.load_specs`` / ``data.load_models``):

* :attr:`Inputs.specs` is the one wide view of the accelerator tables: one row per
  accelerator, every numeric field with a ``<field>_source`` (a ``source_id``) and a
  ``<field>_basis`` column beside it. Empty values stay NaN; they are never filled.
* :attr:`Inputs.specs` also carries, per dense tensor format, ``<format>_node_tflops_per_w``:
  the highest spec rate per watt of TDP among the vendor's earlier parts (earlier launch
  year) on the same process node, NaN where none (what bounds a same-node refresh's
  sustained rate, :data:`analysis.inference.SAME_NODE_RATE_PER_WATT_GAIN`).
* :attr:`Inputs.models` derives the KV-cache size per token from the attention layout
  (GQA, sliding-window GQA, or DeepSeek's multi-head latent attention).
* Both check that every canonical id of :mod:`analysis.ids` has its rows and that every
  ``source_id`` they cite exists in the ``sources`` table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd

from analysis import ids
from analysis.schema import DataValidationError
from analysis.tables.specs import FIELD_UNITS

__all__ = ["Inputs", "SPEC_FIELDS", "resolve", "set_default_provider", "source_problems"]

T = TypeVar("T")

#: Numeric spec fields, in the order :attr:`Inputs.specs` shows them.
SPEC_FIELDS: tuple[str, ...] = tuple(FIELD_UNITS)
_INT_FIELDS = ("launch_year", "scaleup_domain_gpus")
_IDENTITY_COLUMNS = (
    "accelerator",
    "vendor",
    "name",
    "status",
    "architecture",
    "die",
    "process_node",
    "package",
    "hbm_type",
    "scaleup_interconnect",
    "scaleup_topology",
)
#: Dense tensor formats whose rate per watt of an earlier same-node part is derived.
NODE_RATE_FORMATS = ("bf16", "fp8", "fp4")
#: Bytes per element of a BF16 KV cache.
_BF16_BYTES = 2


def _table_label(name: str) -> str:
    return f"table {name!r}"


def source_problems(
    name: str, df: pd.DataFrame, known: set[str], where: Callable[[str], str] = _table_label
) -> list[str]:
    """Rows of table ``name`` whose source columns cite an unknown source.

    Source columns: ``source_id`` and ``*_source_id`` (one id), ``*_sources`` (ids
    separated by ``;``, e.g. the claims' ``fact_sources``). ``where`` names a table in the
    messages (``data`` passes the file path).
    """
    single = [c for c in df.columns if c == "source_id" or c.endswith("_source_id")]
    lists = [c for c in df.columns if c.endswith("_sources")]
    problems = []
    for col in single + lists:
        for i, cell in df[col].items():
            if pd.isna(cell):
                continue
            ids_ = [s.strip() for s in str(cell).split(";")] if col in lists else [cell]
            problems += [
                f"{where(name)}: row {int(str(i)) + 2}, column {col!r}: unknown source {s!r} "
                f"(not in {where('sources')})"
                for s in ids_
                if s not in known
            ]
    return problems


def raise_problems(problems: list[str]) -> None:
    """One :class:`DataValidationError` listing the first 20 problems, if any."""
    if problems:
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise DataValidationError("; ".join(problems[:20]) + more)


def _missing_ids(where: str, present: pd.Series, wanted: tuple[str, ...], kind: str) -> list[str]:
    have = set(present)
    return [
        f"{where}: no row for {kind} {m!r} (every id in analysis.ids needs one)"
        for m in wanted
        if m not in have
    ]


def _node_rate_per_watt(specs: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per dense format: the best spec TFLOPS per watt of TDP of each part's predecessors.

    Predecessors: the same vendor's parts on the same process node launched in an earlier
    year (H100 for H200; B200 and GB200 for B300 and GB300). NaN where a part has none or a
    value is missing. A refresh on one node keeps the node's energy per operation, so at
    full tensor load its sustained rate is bounded by its TDP times this (see
    :data:`analysis.inference.SAME_NODE_RATE_PER_WATT_GAIN`).
    """
    vendor = specs["vendor"].astype(str).to_numpy()
    node = specs["process_node"].astype(str).to_numpy()
    year = pd.to_numeric(specs["launch_year"], errors="coerce").to_numpy(dtype=float)
    tdp = pd.to_numeric(specs["tdp_w"], errors="coerce").to_numpy(dtype=float)
    known = (specs["vendor"].notna() & specs["process_node"].notna()).to_numpy()
    earlier = (
        (vendor[:, None] == vendor[None, :])
        & (node[:, None] == node[None, :])
        & (year[None, :] < year[:, None])
        & known[:, None]
        & known[None, :]
    )  # an unknown node is no one's predecessor (nor a refresh of anything)
    out = {}
    for fmt in NODE_RATE_FORMATS:
        rate = pd.to_numeric(specs[f"{fmt}_dense_tflops"], errors="coerce").to_numpy(dtype=float)
        per_w = np.where((tdp > 0) & (rate > 0), rate / tdp, np.nan)
        cand = np.where(earlier & np.isfinite(per_w)[None, :], per_w[None, :], -np.inf)
        best = cand.max(axis=1) if len(per_w) else per_w
        out[f"{fmt}_node_tflops_per_w"] = np.where(np.isfinite(best), best, np.nan)
    return out


def _kv_bytes_per_token(models: pd.DataFrame, bytes_per_element: int = _BF16_BYTES) -> pd.Series:
    """KV-cache bytes per token of context that grow with context length (all layers)."""
    per_layer_gqa = models["kv_heads"] * models["head_dim"] * 2 * bytes_per_element
    per_layer_mla = (models["kv_lora_rank"] + models["qk_rope_head_dim"]) * bytes_per_element
    growing_layers = models["layers"] - models["sliding_window_layers"].fillna(0)
    out = np.where(
        models["attention_type"] == "mla",
        models["layers"] * per_layer_mla,
        growing_layers * per_layer_gqa,
    )
    return pd.Series(out, index=models.index).astype("int64")


def _kv_window_bytes(models: pd.DataFrame, bytes_per_element: int = _BF16_BYTES) -> pd.Series:
    """Fixed KV bytes per sequence held by sliding-window layers (0 without them)."""
    per_layer = models["kv_heads"] * models["head_dim"] * 2 * bytes_per_element
    out = models["sliding_window_layers"].fillna(0) * models["sliding_window"].fillna(0) * per_layer
    return out.astype("int64")


@dataclass(frozen=True, eq=False)
class Inputs:
    """Every table the models read, the derived frames, and a memo of derived fits.

    Attributes:
        reader: returns the validated table of a name (called at most once per name).
        where: how error messages name a table (a file path for ``data/``).
        measurements: a team's ingested benchmark rows (``user_benchmarks`` format) when
            the scenario lists ``measurements``; ``None`` otherwise.
        store: keeps a derived result asked to persist beyond this instance,
            ``store(key, factory)`` returning the kept value or ``factory()``
            (``load_inputs``: :mod:`analysis.derived_store`, named by the data folder's
            content); ``None``: the per-instance memo only. Like ``reader``, it is where
            files are touched, so this module does no I/O of its own.
    """

    reader: Callable[[str], pd.DataFrame]
    where: Callable[[str], str] = _table_label
    measurements: pd.DataFrame | None = None
    store: Callable[[object, Callable[[], object]], object] | None = None
    _memo: dict[object, object] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_tables(
        cls, tables: Mapping[str, pd.DataFrame], measurements: pd.DataFrame | None = None
    ) -> Inputs:
        """Inputs over the given frames (already in the tables' validated form).

        For tests: a table not in ``tables`` raises ``KeyError`` naming it when a model
        asks for it.
        """
        frames = dict(tables)

        def reader(name: str) -> pd.DataFrame:
            if name not in frames:
                raise KeyError(f"table {name!r} not in these inputs (have {', '.join(frames)})")
            return frames[name]

        return cls(reader=reader, measurements=measurements)

    def derived(self, key: object, factory: Callable[[], T], *, persist: bool = False) -> T:
        """``factory()`` computed once per instance and ``key`` (a fit, a calibration).

        ``persist``: also pass it through :attr:`store` (when these inputs have one and
        no team measurements), so another process over the same tables and code reads it
        back instead of recomputing. For the expensive results that depend on the inputs
        alone (the calibrations, the held-out validations); ``key`` must then be made of
        strings, numbers and tuples.
        """
        memo = self._memo
        if key not in memo:
            if persist and self.store is not None and self.measurements is None:
                memo[key] = self.store(key, factory)
            else:
                memo[key] = factory()
        return memo[key]  # type: ignore[return-value]

    def _frame(self, name: str) -> pd.DataFrame:
        return self.derived(("table", name), lambda: self.reader(name))

    def table(self, name: str) -> pd.DataFrame:
        """The validated table ``name``: a cheap copy (copy-on-write) the caller may modify."""
        return self._frame(name).copy(deep=False)

    @property
    def specs(self) -> pd.DataFrame:
        """One row per accelerator: identity, every numeric value, its source and basis.

        See ``analysis.data.load_specs`` for the columns. A cheap copy on each access.
        """
        return self.derived("specs", self._build_specs).copy(deep=False)

    @property
    def models(self) -> pd.DataFrame:
        """One row per model plus the derived KV-cache sizes (see ``data.load_models``)."""
        return self.derived("models", self._build_models).copy(deep=False)

    def _build_specs(self) -> pd.DataFrame:
        ident = self._frame("accelerators")
        values = self._frame("accelerator_values")
        problems = _missing_ids(
            self.where("accelerators"), ident["accelerator"], ids.ACCELERATORS, "accelerator"
        )
        have = set(zip(values["accelerator"], values["field"], strict=True))
        problems += [
            f"{self.where('accelerator_values')}: no row for accelerator {a!r}, field {f!r} "
            "(every accelerator needs every field; leave the value empty with a note if "
            "unknown)"
            for a in ids.ACCELERATORS
            for f in SPEC_FIELDS
            if (a, f) not in have
        ]
        known = set(self._frame("sources")["source_id"])
        problems += source_problems("accelerators", ident, known, self.where)
        problems += source_problems("accelerator_values", values, known, self.where)
        raise_problems(problems)

        wide = values.pivot(
            index="accelerator", columns="field", values=["value", "source_id", "basis"]
        )
        out = ident[list(_IDENTITY_COLUMNS)].set_index("accelerator")
        for f in SPEC_FIELDS:
            out[f] = wide[("value", f)]
        for f in _INT_FIELDS:
            out[f] = out[f].round().astype("Int64")
        for f in SPEC_FIELDS:
            out[f"{f}_source"] = wide[("source_id", f)]
        for f in SPEC_FIELDS:
            out[f"{f}_basis"] = wide[("basis", f)]
        by_id = ident.set_index("accelerator")
        out["identity_source"] = by_id["source_id"]
        out["process_source"] = by_id["process_source_id"]
        out["die_source"] = by_id["die_source_id"]
        for f, v in _node_rate_per_watt(out).items():
            out[f] = v
        out["label"] = np.where(out["status"] == "announced", out.index + " (announced)", out.index)
        order = [a for a in ids.ACCELERATORS if a in out.index]
        return out.loc[order].reset_index()

    def _build_models(self) -> pd.DataFrame:
        models = self._frame("models").copy()
        problems = _missing_ids(self.where("models"), models["model"], ids.MODELS, "model")
        known = set(self._frame("sources")["source_id"])
        problems += source_problems("models", models, known, self.where)
        raise_problems(problems)
        models["kv_bytes_per_token_bf16"] = _kv_bytes_per_token(models)
        models["kv_window_bytes_bf16"] = _kv_window_bytes(models)
        order = [m for m in ids.MODELS if m in set(models["model"])]
        return models.set_index("model").loc[order].reset_index()


#: Where :func:`resolve` gets the default inputs: registered by ``analysis.data`` (the
#: facade layer), so modelling code never imports the loader.
_PROVIDER: list[Callable[[], Inputs]] = []


def set_default_provider(provider: Callable[[], Inputs]) -> None:
    """Register the function that returns the default inputs (``data.default_inputs``)."""
    _PROVIDER[:] = [provider]


def resolve(inputs: Inputs | None) -> Inputs:
    """``inputs``, or the registered default inputs when ``None``.

    Raises:
        RuntimeError: ``None`` and no default registered (import a facade such as
            ``analysis.inference``, or ``analysis.data``, first; or pass ``inputs``).
    """
    if inputs is not None:
        return inputs
    if not _PROVIDER:
        raise RuntimeError(
            "no default inputs registered: import analysis.data (or a facade package such "
            "as analysis.inference) first, or pass inputs="
        )
    return _PROVIDER[0]()
