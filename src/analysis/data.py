"""Loading and validating the datasets in ``data/``, and lookups by canonical id.

Every loader validates its table against the schema in :mod:`analysis.tables` (errors name
file, row and column) and returns a fresh copy, so callers may modify what they get.
Tables are read once per process (they are small) and cached.

Analytical decisions taken here:

* :func:`load_specs` is the one wide view of the accelerator tables: one row per
  accelerator, every numeric field with a ``<field>_source`` (a ``source_id``) and a
  ``<field>_basis`` column beside it. Empty values stay NaN (not supported / not
  published); they are never filled.
* Cross-table checks run on load: every canonical id of :mod:`analysis.ids` has its rows,
  every (accelerator, field) pair of the value table exists, and every ``source_id`` the
  spec and model tables cite exists in ``sources.csv``. :func:`check_source_references`
  runs the source check over every registered table.
* :func:`load_models` derives the KV-cache size per token from the attention layout
  (GQA, sliding-window GQA, or DeepSeek's multi-head latent attention), so a model's KV
  footprint is defined in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from analysis import derived_store, ids, paths
from analysis.inputs import SPEC_FIELDS as SPEC_FIELDS  # noqa: PLC0414 - re-exported
from analysis.inputs import Inputs, raise_problems, set_default_provider, source_problems
from analysis.schema import DataValidationError, read_raw_csv
from analysis.tables import ALL
from analysis.tables.benchmarks import USER_BENCHMARKS

__all__ = [
    "DataValidationError",
    "cache_generation",
    "check_source_references",
    "clear_cache",
    "count_sources_by_kind",
    "default_inputs",
    "get_accelerator",
    "get_model",
    "load_accelerators",
    "load_assumptions",
    "load_claims",
    "load_facility",
    "load_inputs",
    "load_mlperf_inference",
    "load_measurements",
    "load_mlperf_training",
    "load_models",
    "load_published_training",
    "load_training_holdout",
    "load_purchase_prices",
    "load_rental_quotes",
    "load_sources",
    "load_spec_values",
    "load_specs",
    "load_table",
    "measurement_files",
    "mlperf_coverage",
    "mlperf_coverage_matrix",
    "shared_models",
    "shared_specs",
    "spec_and_model_source_ids",
    "spec_basis_counts",
    "spec_estimates",
    "table_names",
    "validate_all",
]


def table_names() -> list[str]:
    """Names of every registered table, in registry order."""
    return list(ALL)


def _where(name: str, root: Path | None = None) -> str:
    return str((paths.DATA if root is None else root) / ALL[name].path)


def load_inputs(root: Path | None = None) -> Inputs:
    """The model inputs over the tables of ``root`` (default ``data/``), validated on read.

    Each table is read and validated (schema, then the cross-table checks of its derived
    frame) the first time a model asks for it; :func:`validate_all` reads them all.
    """
    base = paths.DATA if root is None else Path(root)

    def reader(name: str) -> pd.DataFrame:
        if name not in ALL:
            raise KeyError(f"unknown table {name!r}; known tables: {', '.join(ALL)}")
        return ALL[name].read(base)

    try:  # taken now: what these inputs read is this content (derived_store)
        digest: str | None = content_digest(base)
    except OSError:
        digest = None  # a folder that cannot be listed: nothing is stored

    def store(key: object, factory: Callable[[], object]) -> object:
        if digest is None:
            return factory()
        return derived_store.load_or_build(
            digest, key, factory, still=lambda: content_digest(base) == digest
        )

    return Inputs(reader=reader, where=lambda name: _where(name, base), store=store)


def content_digest(root: Path | None = None) -> str:
    """SHA-256 of every file under ``root`` (default ``data/``): what stored results are named by.

    See :mod:`analysis.derived_store`; a changed, added or removed file changes it.
    """
    base = paths.DATA if root is None else Path(root)
    return derived_store.files_digest((f for f in base.rglob("*") if f.is_file()), base)


#: The process-wide inputs (:func:`default_inputs`); :func:`clear_cache` empties it.
_DEFAULT: list[Inputs] = []


def default_inputs() -> Inputs:
    """The one process-wide :class:`~analysis.inputs.Inputs` over ``data/``.

    Every derived fit (calibrations) is memoized on it, so :func:`clear_cache` (a new
    instance) recomputes them all.
    """
    if not _DEFAULT:
        _DEFAULT.append(load_inputs())
    return _DEFAULT[0]


set_default_provider(default_inputs)


def cache_generation() -> int:
    """Identity of the current default inputs: changes whenever :func:`clear_cache` runs."""
    return id(default_inputs())


def shared_specs() -> pd.DataFrame:
    """The default inputs' spec frame (a cheap copy-on-write copy, like :func:`load_specs`)."""
    return default_inputs().specs


def shared_models() -> pd.DataFrame:
    """The default inputs' model frame (a cheap copy-on-write copy)."""
    return default_inputs().models


def load_table(name: str) -> pd.DataFrame:
    """Validated contents of the table ``name`` (see ``data/README.md``)."""
    return default_inputs().table(name)


def clear_cache() -> None:
    """Forget the default inputs: every table and derived fit is read or fitted afresh."""
    _DEFAULT.clear()


# --- cross-table checks ------------------------------------------------------------------


def _source_problems(name: str, df: pd.DataFrame, known: set[str]) -> list[str]:
    return source_problems(name, df, known, _where)


def _raise(problems: list[str]) -> None:
    raise_problems(problems)


def check_source_references(tables: list[str] | None = None) -> None:
    """Every ``source_id`` (and ``*_source_id``) cited by ``tables`` exists in sources.csv.

    Args:
        tables: table names to check; ``None`` = every registered table.

    Raises:
        DataValidationError: naming file, row, column and the unknown id.
    """
    known = set(load_sources()["source_id"])
    names = [n for n in (tables or table_names()) if n != "sources"]
    _raise([p for n in names for p in _source_problems(n, load_table(n), known)])


def validate_all() -> None:
    """Load and check every table once, before any chapter runs.

    Each table against its schema (file, row, column, allowed values), every ``source_id``
    of every table against ``sources.csv``, and the derived views (the wide spec table with
    its per-id coverage, the model table with its KV sizes). A chapter kernel therefore
    never is the first to find a broken table.

    Raises:
        DataValidationError: the first broken table(s), naming file, row and column.
    """
    problems: list[str] = []
    for name in table_names():
        try:
            load_table(name)
        except DataValidationError as err:
            problems.append(str(err))
    _raise(problems)
    check_source_references()
    inputs = default_inputs()
    inputs.specs  # noqa: B018 - builds (and checks) the derived frames
    inputs.models  # noqa: B018


# --- accelerators ------------------------------------------------------------------------


def load_sources() -> pd.DataFrame:
    """Every cited source: ``source_id``, URL, title, publisher, access date, kind, notes."""
    return load_table("sources")


def load_accelerators() -> pd.DataFrame:
    """Identity and descriptive fields, one row per accelerator (``specs/accelerators.csv``)."""
    return load_table("accelerators")


def load_spec_values() -> pd.DataFrame:
    """Every numeric spec value with unit, basis, source and note (the long table)."""
    return load_table("accelerator_values")


def load_specs(
    include_announced: bool = True, accelerators: Iterable[str] | None = None
) -> pd.DataFrame:
    """One row per accelerator: identity, every numeric value, and its source and basis.

    Columns: ``accelerator, vendor, name, status, architecture, process_node, package,
    hbm_type, scaleup_interconnect``, the numeric fields (``launch_year, memory_gb,
    memory_bw_tbps, fp64/tf32/bf16/fp8/fp6/fp4_dense_tflops, tdp_w, scaleup_bw_gbps,
    scaleup_domain_gpus, scaleout_gbps_per_gpu``), ``<field>_source`` (a ``source_id``)
    and ``<field>_basis`` for each, ``identity_source``, ``process_source``,
    ``bf16/fp8/fp4_node_tflops_per_w`` (the best spec rate per watt of TDP of the vendor's
    earlier parts on the same process node, NaN where none; derived, see
    :class:`analysis.inputs.Inputs`) and ``label`` (the id, with " (announced)" appended
    for announced parts). Rows follow
    ``analysis.ids.ACCELERATORS``. NaN = not supported in hardware or not published.

    Args:
        include_announced: keep announced parts (``status == "announced"``).
        accelerators: keep only these ids (e.g. a scenario's ``accelerators``); rows stay
            in canonical order whatever the order given. ``None`` = every accelerator.

    Raises:
        ValueError: an id in ``accelerators`` is not in the spec table (the message names
            the closest known ids).
    """
    specs = default_inputs().specs
    if accelerators is not None:
        wanted = list(accelerators)
        known = tuple(specs["accelerator"])
        for a in wanted:
            if a not in known:
                raise ValueError(ids.unknown_id_message("accelerator", a, known))
        specs = specs[specs["accelerator"].isin(wanted)].reset_index(drop=True)
    if not include_announced:
        specs = specs[specs["status"] != "announced"].reset_index(drop=True)
    return specs


def get_accelerator(accelerator: str) -> pd.Series:
    """The :func:`load_specs` row of one accelerator id.

    Raises:
        ValueError: unknown id, with the closest known ids.
    """
    specs = default_inputs().specs
    match = specs[specs["accelerator"] == accelerator]
    if match.empty:
        raise ValueError(ids.unknown_id_message("accelerator", accelerator, ids.ACCELERATORS))
    return match.iloc[0].copy()


def spec_basis_counts(spec_values: pd.DataFrame | None = None) -> pd.DataFrame:
    """How many spec values of each field were obtained on each basis.

    Args:
        spec_values: the long value table (columns ``accelerator, field, basis``);
            ``None`` = :func:`load_spec_values`.

    Returns:
        One row per ``field`` (the index, sorted), one column per ``basis`` (sorted, e.g.
        ``derived, estimate, published, sparse_halved``), values the number of
        accelerators; 0 where a field has no value on that basis.

    >>> sv = pd.DataFrame({"accelerator": ["A", "B", "A"], "field": ["tdp_w", "tdp_w", "memory_gb"],
    ...                    "basis": ["published", "estimate", "published"]})
    >>> spec_basis_counts(sv).to_dict("index")
    {'memory_gb': {'estimate': 0, 'published': 1}, 'tdp_w': {'estimate': 1, 'published': 1}}
    """
    if spec_values is None:
        spec_values = load_spec_values()
    return spec_values.pivot_table(
        index="field", columns="basis", values="accelerator", aggfunc="count", fill_value=0
    )


def spec_estimates(spec_values: pd.DataFrame | None = None) -> pd.DataFrame:
    """The spec values with no published figure (``basis == "estimate"``), notes included.

    These are the values to replace first when vendors publish.

    Args:
        spec_values: the long value table; ``None`` = :func:`load_spec_values`.

    Returns:
        The matching rows, all columns, in table order, with a fresh 0..n-1 index.
    """
    if spec_values is None:
        spec_values = load_spec_values()
    return spec_values[spec_values["basis"] == "estimate"].reset_index(drop=True)


def spec_and_model_source_ids(
    spec_values: pd.DataFrame | None = None,
    accelerators: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> list[str]:
    """Sorted ids of the sources the spec and model tables cite.

    Reads the value table's ``source_id``, the accelerator table's ``source_id`` (the
    identity source; not ``process_source_id``) and the model table's ``source_id``,
    ``params_source_id`` and ``checkpoint_sources`` (``;``-separated). Empty cells are
    skipped. (:func:`analysis.decision.cited_source_ids`
    reads every ``*_source*`` column instead, process nodes included.)

    Args:
        spec_values: ``None`` = :func:`load_spec_values`.
        accelerators: ``None`` = :func:`load_accelerators`.
        models: ``None`` = :func:`load_models`.

    >>> sv = pd.DataFrame({"source_id": ["b", "a"]})
    >>> acc = pd.DataFrame({"source_id": ["a"], "process_source_id": ["p"]})
    >>> m = pd.DataFrame({"source_id": ["c"], "params_source_id": [None]})
    >>> spec_and_model_source_ids(sv, acc, m)
    ['a', 'b', 'c']
    """
    if spec_values is None:
        spec_values = load_spec_values()
    if accelerators is None:
        accelerators = load_accelerators()
    if models is None:
        models = load_models()
    columns = [
        spec_values["source_id"],
        accelerators["source_id"],
        models["source_id"],
        models["params_source_id"],
    ]
    if "checkpoint_sources" in models:
        columns.append(models["checkpoint_sources"].dropna().str.split(";").explode().str.strip())
    return sorted({v for col in columns for v in col.dropna() if v})


def count_sources_by_kind(
    source_ids: Iterable[str], sources: pd.DataFrame | None = None
) -> pd.DataFrame:
    """How many of ``source_ids`` are of each ``kind`` in ``sources.csv``.

    Args:
        source_ids: the cited ids (e.g. :func:`spec_and_model_source_ids`); ids not in
            ``sources`` are not counted.
        sources: the source table (``source_id, kind``); ``None`` = :func:`load_sources`.

    Returns:
        Index ``kind`` (sorted), one column ``sources``; kinds no id has are left out.

    >>> src = pd.DataFrame({"source_id": ["a", "b", "c"], "kind": ["vendor", "paper", "vendor"]})
    >>> count_sources_by_kind(["a", "c", "b"], src)["sources"].to_dict()
    {'paper': 1, 'vendor': 2}
    """
    if sources is None:
        sources = load_sources()
    cited = sources[sources["source_id"].isin(set(source_ids))]
    return cited.groupby("kind").size().rename("sources").to_frame()


# --- models ------------------------------------------------------------------------------


def load_models() -> pd.DataFrame:
    """One row per model (``models/models.csv``) plus derived KV-cache sizes.

    Adds ``kv_bytes_per_token_bf16``: BF16 KV-cache bytes per token of context, summed
    over the layers whose cache grows with context (GQA: ``kv_heads x head_dim x 2 x 2``
    per layer; MLA: ``(kv_lora_rank + qk_rope_head_dim) x 2`` per layer), and
    ``kv_window_bytes_bf16``: the fixed KV of sliding-window layers per sequence
    (``sliding_window_layers x sliding_window x kv_heads x head_dim x 2 x 2``).
    KV cache for a sequence of ``n`` tokens = ``n x kv_bytes_per_token_bf16 +
    kv_window_bytes_bf16`` (for ``n`` >= the window).
    """
    return default_inputs().models


def get_model(model: str) -> pd.Series:
    """The :func:`load_models` row of one model id.

    Raises:
        ValueError: unknown id, with the closest known ids.
    """
    models = default_inputs().models
    match = models[models["model"] == model]
    if match.empty:
        raise ValueError(ids.unknown_id_message("model", model, ids.MODELS))
    return match.iloc[0].copy()


# --- tables other chapters own (thin wrappers; the names are the public contract) ----------


def load_mlperf_inference() -> pd.DataFrame:
    """MLPerf Inference LLM results (``benchmarks/mlperf_inference.csv``)."""
    return load_table("mlperf_inference")


def load_mlperf_training() -> pd.DataFrame:
    """MLPerf Training LLM results (``benchmarks/mlperf_training.csv``)."""
    return load_table("mlperf_training")


def load_published_training() -> pd.DataFrame:
    """Published pre-training throughput tables (``benchmarks/published_training.csv``)."""
    return load_table("published_training")


def load_training_holdout() -> pd.DataFrame:
    """MLPerf Training v5.1 forward-validation rows, never fitted.

    ``benchmarks/mlperf_training_v5.1_holdout.csv``: only the training validation's
    forward scheme reads them, to predict them.
    """
    return load_table("mlperf_training_holdout")


def load_rental_quotes() -> pd.DataFrame:
    """Cloud rental quotes per GPU-hour (``prices/``)."""
    return load_table("rental_quotes")


def load_purchase_prices() -> pd.DataFrame:
    """Server and GPU purchase price estimates (``prices/``)."""
    return load_table("purchase_prices")


def load_facility() -> pd.DataFrame:
    """Facility inputs: power, cooling, colocation (``prices/``)."""
    return load_table("facility")


def load_claims() -> pd.DataFrame:
    """The seed article's claims and how they are tested (``claims/``)."""
    return load_table("claims")


def load_assumptions() -> pd.DataFrame:
    """The assumptions register (``assumptions/``)."""
    return load_table("assumptions")


# --- a team's own measurements (scenario key `measurements`) ---------------------------


def measurement_files(entries: Iterable[str]) -> list[Path]:
    """The ingested-rows CSV files a scenario's ``measurements`` entries name.

    A relative entry is relative to the project root (:data:`analysis.paths.ROOT`, where
    ``ingest bench`` writes ``data/benchmarks/user/``), so a chapter kernel, nbval and the
    command line resolve it alike. A folder stands for every ``*.csv`` under it (sorted).

    Raises:
        DataValidationError: an entry that does not exist, is not readable, or is a folder
            without any ``.csv`` file.
    """
    out: list[Path] = []
    for entry in entries:
        p = Path(entry)
        p = p if p.is_absolute() else paths.ROOT / p
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.csv") if f.is_file())
            if not found:
                raise DataValidationError(
                    f"{entry}: folder holds no .csv file of ingested rows (write them with "
                    "`python -m analysis ingest bench FILE... --out {entry}`)"
                )
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise DataValidationError(
                f"{entry}: no such file or folder (relative paths are relative to the project "
                f"root {paths.ROOT})"
            )
    return out


def load_measurements(entries: Iterable[str]) -> pd.DataFrame:
    """Every ingested row of the files and folders in ``entries``, validated and stacked.

    Each file must be in the ``user_benchmarks`` format (what ``ingest bench`` writes);
    the same point listed twice (a file and its folder) is kept once. Empty ``entries``
    give an empty frame with the table's columns.

    Raises:
        DataValidationError: a missing or unreadable entry, or a file that fails the
            schema (the message names file, row and column).
    """
    frames = []
    for f in measurement_files(entries):
        try:
            raw = read_raw_csv(f)
        except pd.errors.EmptyDataError:
            raise DataValidationError(
                f"{f}: empty file; expected the ingested rows of `ingest bench` (columns "
                f"{', '.join(USER_BENCHMARKS.column_names)})"
            ) from None
        except UnicodeDecodeError as err:
            raise DataValidationError(f"{f}: not UTF-8 text (byte offset {err.start})") from None
        except (pd.errors.ParserError, ValueError) as err:
            msg = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
            raise DataValidationError(f"{f}: not a valid CSV file ({msg})") from None
        except OSError as err:
            raise DataValidationError(f"{f}: cannot read ({err.strerror})") from None
        if not {"tool", "source_sha256", "output_tokens_per_s_per_gpu"} <= set(raw.columns):
            raise DataValidationError(
                f"{f}: not a file of ingested rows (no columns tool, source_sha256, "
                "output_tokens_per_s_per_gpu); a raw benchmark result must be ingested first: "
                "python -m analysis ingest bench FILE --accelerator ID --model ID "
                "--precision P --tp N"
            )
        frames.append(USER_BENCHMARKS.validate(raw, f))
    if not frames:
        empty = {c.name: pd.Series(dtype=object) for c in USER_BENCHMARKS.columns}
        return pd.DataFrame(empty)
    out = pd.concat(frames, ignore_index=True)
    return out.drop_duplicates(list(USER_BENCHMARKS.key)).reset_index(drop=True)


# --- coverage ----------------------------------------------------------------------------


def mlperf_coverage(
    inference: pd.DataFrame | None = None, training: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Which accelerator has MLPerf results for which benchmark in which round.

    Args:
        inference: MLPerf Inference rows with columns ``round, accelerator, benchmark,
            scenario``; ``None`` = :func:`load_mlperf_inference`.
        training: MLPerf Training rows with ``round, accelerator, benchmark``;
            ``None`` = :func:`load_mlperf_training`.

    Returns:
        One row per (suite, round, benchmark, accelerator) with ``results`` (row count)
        and ``scenarios`` (comma-joined, sorted; empty for training), sorted by suite,
        benchmark, round and accelerator (canonical order).

    >>> inf = pd.DataFrame({"round": ["v5.1", "v5.1"], "accelerator": ["MI300X"] * 2,
    ...                     "benchmark": ["llama2-70b-99"] * 2,
    ...                     "scenario": ["Server", "Offline"]})
    >>> tr = pd.DataFrame({"round": ["v5.0"], "accelerator": ["B200"],
    ...                    "benchmark": ["llama31_405b"]})
    >>> cov = mlperf_coverage(inf, tr)
    >>> cov[["suite", "accelerator", "results", "scenarios"]].to_numpy().tolist()
    [['inference', 'MI300X', 2, 'Offline, Server'], ['training', 'B200', 1, '']]
    """
    if inference is None:
        inference = load_mlperf_inference()
    if training is None:
        training = load_mlperf_training()
    keys = ["suite", "round", "benchmark", "accelerator"]
    inf = inference.assign(suite="inference")[[*keys, "scenario"]]
    tr = training.assign(suite="training", scenario="")[[*keys, "scenario"]]
    both = pd.concat([inf, tr], ignore_index=True)
    out = both.groupby(keys, as_index=False).agg(
        results=("scenario", "size"),
        scenarios=("scenario", lambda s: ", ".join(sorted({x for x in s if x}))),
    )
    rank = {a: i for i, a in enumerate(ids.ACCELERATORS)}
    out["_rank"] = out["accelerator"].map(rank).fillna(len(rank))
    out = out.sort_values(["suite", "benchmark", "round", "_rank", "accelerator"])
    return out.drop(columns="_rank").reset_index(drop=True)


def mlperf_coverage_matrix(coverage: pd.DataFrame) -> pd.DataFrame:
    """:func:`mlperf_coverage` as a matrix: accelerator x (suite, benchmark) -> rounds.

    Cells list the rounds with results (e.g. ``"v4.1, v5.1"``), empty where there are
    none; rows follow the canonical accelerator order.

    >>> cov = pd.DataFrame({"suite": ["training"] * 2, "round": ["v4.0", "v5.0"],
    ...                     "benchmark": ["gpt3"] * 2, "accelerator": ["H100-SXM"] * 2})
    >>> mlperf_coverage_matrix(cov).loc["H100-SXM", ("training", "gpt3")]
    'v4.0, v5.0'
    """
    matrix = (
        coverage.groupby(["accelerator", "suite", "benchmark"])["round"]
        .agg(lambda rounds: ", ".join(sorted(set(rounds))))
        .unstack(["suite", "benchmark"], fill_value="")
        .sort_index(axis=1)
    )
    order = [a for a in ids.ACCELERATORS if a in matrix.index]
    order += sorted(set(matrix.index) - set(order))
    return matrix.loc[order]
