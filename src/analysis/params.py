"""Run settings: the :class:`Scenario` model and loading it from ``params/*.yaml``.

Analytical decisions taken here:

* Every model is frozen and rejects unknown keys, so a typo in a parameter file is an
  error, not a silently ignored setting.
* Accelerator and model ids are checked against :mod:`analysis.ids`; an unknown id is
  reported with the closest known ids.
* The scenario name becomes a folder under ``reports/``; only ``[A-Za-z0-9][A-Za-z0-9._-]*``
  is allowed, so ``../x``, ``/etc`` or an empty name cannot escape that folder.
* Values are strict: numbers must be finite (``.inf``/``.nan`` are refused), a boolean is not
  a number, a quoted ``"5"`` is not a number, and every numeric parameter has a plausibility
  range (its bounds are in the error message): a 1e30 server price or a utilization of
  1e-300 is a typo, not a scenario. YAML 1.2 floats (``1e12``, ``1.0e15``) are numbers,
  not the strings YAML 1.1 makes of them.
* Tiers are listed tightest first (non-decreasing TPOT bound, unbounded last) with unique
  names; the inference lengths must fit the model's context; the candidates must include
  at least one *shipping* part of each vendor (announced parts are projections, never a
  side of the comparison on their own).
* Parameter files are read by a hardened YAML loader (:func:`safe_load_yaml`): UTF-8 only,
  at most :data:`MAX_PARAMS_BYTES`, no duplicate keys, at most :data:`MAX_ALIASES` aliases
  and :data:`MAX_NODES` nodes after alias expansion (a 381-byte "billion laughs" file
  expands to gigabytes), nesting at most :data:`MAX_DEPTH` deep. Messages quote user input
  as a short excerpt only.
* ``measurements`` entries (files or folders of ``ingest bench`` rows, relative to the
  project root) must exist, be readable and pass the ``user_benchmarks`` schema, so a
  wrong path or a raw benchmark file is reported here, naming the file, not in a chapter.
* Defaults that are not measured facts (utilization, PUE, porting effort ...) live in the
  assumptions register (``data/assumptions/``); the values here mirror it and a data test
  keeps the two in step.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)

from analysis import data, ids, paths
from analysis.errors import ParamsError as ParamsError
from analysis.schema import DataValidationError
from analysis.textsafe import excerpt, one_line

# ``\Z``, not ``$``: ``$`` also matches before a trailing newline ("x\n" passed).
SAFE_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")

#: Limits of the YAML loader (see the module docstring). A real parameter file is ~2 KB,
#: uses no aliases and nests 3 levels deep.
MAX_PARAMS_BYTES = 256 * 1024
MAX_ALIASES = 64
MAX_NODES = 20_000
MAX_DEPTH = 32
#: At most this many problems are listed per file (the count says how many there were).
MAX_PROBLEMS = 20
#: Longest title / description / tier name (characters).
MAX_TITLE = 200
MAX_DESCRIPTION = 500
MAX_TIER_NAME = 60
#: At most this many latency tiers (each is a column of every inference table).
MAX_TIERS = 8
#: At most this many ``measurements`` entries (files or folders) in one scenario.
MAX_MEASUREMENTS = 64


def _finite(*, gt: float | None = None, ge: float | None = None, le: float | None = None) -> Any:
    """A strict, finite float with plausibility bounds (ints are accepted, bools are not)."""
    return Annotated[float, Strict(), Field(gt=gt, ge=ge, le=le, allow_inf_nan=False)]


def _int(*, ge: int | None = None, gt: int | None = None, le: int | None = None) -> Any:
    """A strict int (``true`` and ``5.0`` are not ints) within bounds."""
    return Annotated[int, Strict(), Field(ge=ge, gt=gt, le=le)]


#: $/GPU-hour: cloud list prices run ~$1-15 (data/prices/rental_quotes.csv); $1,000 is
#: two orders of magnitude above any quote, so anything higher is a typo (cents? a total?).
GpuHourUsd = _finite(gt=0, le=1_000.0)
#: One 8-GPU server: ~$200k-$600k in data/prices/purchase_prices.csv; bounds are 100x apart.
ServerPriceUsd = _finite(ge=1_000.0, le=50_000_000.0)
EngineerMonths = _finite(ge=0, le=10_000.0)
Bool = Annotated[bool, Strict()]


def _require_known(values: Iterable[str], kind: str, known: tuple[str, ...]) -> None:
    """Raise on the first of ``values`` not in ``known``, naming the closest known ids."""
    for value in values:
        if value not in known:
            raise ValueError(ids.unknown_id_message(kind, value, known))


def _label(v: str, what: str, limit: int) -> str:
    """A one-line, non-blank label of at most ``limit`` characters (no control characters)."""
    if not v.strip():
        raise ValueError(f"{what} must not be blank")
    if one_line(v) != v:
        raise ValueError(f"{what} must be one line without control characters (tabs, newlines)")
    if len(v) > limit:
        raise ValueError(f"{what} is {len(v)} characters long; at most {limit} are allowed")
    return v


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=False, validate_default=True, str_strict=True
    )


class LatencyTier(_Strict):
    """One inference latency tier: an upper bound on time per output token, and on TTFT."""

    name: str = Field(description="Label shown in tables, e.g. 'interactive (<50 ms)'.")
    # 1 ms per token is ~4x faster than any measured MLPerf Interactive result; a minute
    # per token (or an hour to the first token) is no latency bound at all.
    tpot_ms_max: _finite(ge=1.0, le=60_000.0) | None = Field(
        description="Upper bound on time per output token in ms; null = unbounded."
    )
    ttft_ms_max: _finite(ge=1.0, le=3_600_000.0) | None = Field(
        description="Upper bound on time to first token in ms; null = unbounded."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _label(v, "tier name", MAX_TIER_NAME)

    def bounds_text(self) -> str:
        """The tier's real bounds in words (the name is the user's label; this is what holds).

        >>> LatencyTier(name="x", tpot_ms_max=50, ttft_ms_max=2000).bounds_text()
        'under 50 ms per token, first token within 2 s'
        >>> LatencyTier(name="x", tpot_ms_max=None, ttft_ms_max=None).bounds_text()
        'with no latency bound'
        """
        parts = []
        if self.tpot_ms_max is not None:
            parts.append(f"under {self.tpot_ms_max:g} ms per token")
        if self.ttft_ms_max is not None:
            t = self.ttft_ms_max
            parts.append(
                f"first token within {t / 1000:g} s"
                if t >= 1000
                else f"first token within {t:g} ms"
            )
        return ", ".join(parts) if parts else "with no latency bound"


def _default_tiers() -> tuple[LatencyTier, ...]:
    # The article's tiers: "sub-50 millisecond latency targets" and "100+ milliseconds".
    # We read its latency targets as time per output token (TPOT); the TTFT bounds follow
    # MLPerf's llama2-70b Interactive/Server pairs (450 ms / 2 s) and an offline-like 10 s.
    return (
        LatencyTier(name="<50 ms", tpot_ms_max=50.0, ttft_ms_max=2000.0),
        LatencyTier(name="50-100 ms", tpot_ms_max=100.0, ttft_ms_max=5000.0),
        LatencyTier(name="no latency bound", tpot_ms_max=None, ttft_ms_max=None),
    )


class Inference(_Strict):
    """The inference workload the report sizes candidates for."""

    model: str = Field("llama2-70b", description="Model id (data/models/), e.g. 'llama2-70b'.")
    precision: Literal["bf16", "fp8", "fp4"] = Field(
        "fp8", description="Weight/activation precision used for serving."
    )
    isl: _int(gt=0, le=1_000_000) = Field(2048, description="Input (prompt) length in tokens.")
    osl: _int(gt=0, le=1_000_000) = Field(256, description="Output length in tokens.")
    gpus_per_replica: _int(ge=1, le=72) = Field(
        8, description="Accelerators per serving replica (tensor parallel)."
    )
    tiers: tuple[LatencyTier, ...] = Field(
        default_factory=_default_tiers,
        description="Latency tiers, tightest first; see the inference chapter.",
        min_length=1,
        max_length=MAX_TIERS,
    )

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        _require_known([v], "model", ids.MODELS)
        return v

    @field_validator("tiers")
    @classmethod
    def _tiers_ordered(cls, v: tuple[LatencyTier, ...]) -> tuple[LatencyTier, ...]:
        names = [t.name.strip().casefold() for t in v]
        dupes = sorted({t.name for t, n in zip(v, names, strict=True) if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tier names must be unique; listed more than once: {dupes}")

        def bound(x: float | None) -> float:
            return math.inf if x is None else x

        for i in range(1, len(v)):
            a, b = v[i - 1], v[i]
            if (bound(b.tpot_ms_max), bound(b.ttft_ms_max)) < (
                bound(a.tpot_ms_max),
                bound(a.ttft_ms_max),
            ):
                raise ValueError(
                    f"tiers must be listed tightest first (by TPOT bound, then TTFT; null = "
                    f"unbounded, last): tier {i} {b.name!r} is tighter than tier {i - 1} "
                    f"{a.name!r}"
                )
        return v

    @model_validator(mode="after")
    def _fits_context(self) -> Inference:
        context = _context_length(self.model)
        if context is not None and self.isl + self.osl > context:
            raise ValueError(
                f"isl + osl = {self.isl + self.osl:,} tokens exceeds {self.model}'s context "
                f"length of {context:,} tokens (data/models/models.csv)"
            )
        return self


class Training(_Strict):
    """The training job the report sizes candidates for."""

    model: str = Field("llama3.1-70b", description="Model id (data/models/) to train.")
    precision: Literal["bf16", "fp8", "fp4"] = Field("bf16", description="Training precision.")
    # A fine-tuning run is ~1e8 tokens; the largest published pre-training runs ~4e13 (Llama
    # 4: "more than 30 trillion tokens"), so 1e15 leaves 25x headroom.
    tokens: _finite(ge=1.0e6, le=1.0e15) = Field(1.0e12, description="Training token budget.")
    cluster_gpus: _int(ge=1, le=131072) = Field(
        1024, description="GPUs in the cluster the job runs on."
    )
    seq_len: _int(ge=128, le=1_000_000) = Field(
        8192, description="Training sequence length in tokens."
    )
    # Published global batches run 0.5M-60M tokens (GPT-3 3.2M, Llama 3 405B 16M).
    global_batch_tokens: _finite(ge=1.0e3, le=1.0e9) = Field(
        16.0e6, description="Global batch size in tokens."
    )

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        _require_known([v], "model", ids.MODELS)
        return v


class Cost(_Strict):
    """How the hardware is paid for, and the facility inputs of owning it."""

    mode: Literal["buy", "rent"] = Field("buy", description="'buy' (own the servers) or 'rent'.")
    rental_pool: str = Field(
        "neocloud-list/on-demand",
        description=(
            "Which rental quotes a comparison uses: '<provider class>/<term>', provider class "
            "hyperscaler-list, neocloud-list or marketplace-spot, term on-demand, 1-year, "
            "3-year or spot. Only quotes of this pool are compared."
        ),
    )
    gpu_hour_usd: dict[str, GpuHourUsd] = Field(
        default_factory=dict,
        description="Your own $/GPU-hour per accelerator id; overrides the quote table.",
    )
    server_price_usd: dict[str, ServerPriceUsd] = Field(
        default_factory=dict,
        description="Your own purchase price per 8-GPU server; overrides the estimates.",
    )
    # Below 1% the fleet is idle (cost per token explodes by 100x); above 1 is impossible.
    utilization: _finite(ge=0.01, le=1.0) = Field(
        0.7, description="Fraction of hours the fleet does useful work."
    )
    pue: _finite(ge=1.0, le=3.0) = Field(1.3, description="Facility power usage effectiveness.")
    # Retail electricity runs ~$0.03-0.40/kWh worldwide; $5 is an order above any tariff.
    electricity_usd_per_kwh: _finite(ge=0, le=5.0) = Field(0.08, description="Electricity price.")
    # Colocation ~$100-300 per kW-month (data/prices/facility.csv); $5,000 is 15x the top.
    colocation_usd_per_kw_month: _finite(ge=0, le=5_000.0) = Field(
        150.0, description="Colocation price per kW of IT load per month."
    )
    depreciation_years: _finite(ge=0.5, le=15) = Field(
        5.0, description="Useful life over which capex is recovered."
    )
    cost_of_capital: _finite(ge=0, le=1) = Field(
        0.08, description="Annual cost of capital (discount rate) for the capital recovery factor."
    )
    fleet_gpus: _int(ge=1, le=1_000_000) = Field(
        1024, description="GPUs in the fleet over which one-off platform costs are amortized."
    )
    porting_engineer_months: dict[str, EngineerMonths] = Field(
        default_factory=lambda: {"AMD": 12.0, "NVIDIA": 0.0},
        description="One-off porting and ramp-up effort per vendor, in engineer-months.",
    )
    # A loaded engineer-month is ~$15k-40k; $1M is 25x the top of that.
    engineer_month_usd: _finite(ge=0, le=1_000_000.0) = Field(
        25_000.0, description="Loaded cost of one engineer-month."
    )
    mc_draws: _int(ge=100, le=10_000_000) = Field(
        100_000, description="Monte Carlo draws for cost intervals."
    )
    # numpy's legacy seeding takes 32-bit seeds; the bound keeps every generator happy.
    seed: _int(ge=0, le=2**32 - 1) = Field(20261130, description="Seed of every random draw.")

    @field_validator("gpu_hour_usd", "server_price_usd")
    @classmethod
    def _known_accelerators(cls, v: dict[str, float]) -> dict[str, float]:
        _require_known(v, "accelerator", ids.ACCELERATORS)
        return v

    @field_validator("rental_pool")
    @classmethod
    def _known_pool(cls, v: str) -> str:
        _require_known([v], "rental pool", ids.RENTAL_POOLS)
        return v

    @field_validator("porting_engineer_months")
    @classmethod
    def _known_vendors(cls, v: dict[str, float]) -> dict[str, float]:
        _require_known(v, "vendor", ids.VENDORS)
        return v


class Scenario(_Strict):
    """A complete report scenario: who is deciding, between what, for which workloads."""

    name: str = Field(description="Folder name under reports/: letters, digits, '.', '_', '-'.")
    title: str = Field(description="Report title.")
    description: str = Field("", description="One line shown by `python -m analysis scenarios`.")
    candidates: tuple[str, ...] = Field(
        ("H100-SXM", "H200", "B200", "MI300X", "MI325X", "MI355X"),
        description="Accelerator ids to compare (both vendors), shipping parts.",
        min_length=2,
    )
    include_announced: Bool = Field(
        False, description="Also show announced parts (VR200, MI455X) as labelled projections."
    )
    inference: Inference = Field(default_factory=Inference, description="Inference workload.")
    training: Training = Field(default_factory=Training, description="Training job.")
    cost: Cost = Field(default_factory=Cost, description="Buy/rent and facility inputs.")
    measurements: tuple[str, ...] = Field(
        (),
        description=(
            "Your own benchmark runs: files or folders of rows written by `python -m analysis "
            "ingest bench` (relative paths are relative to the project root). The report "
            "calibrates the inference model on them and adds the chapter 'Your measurements'."
        ),
        max_length=MAX_MEASUREMENTS,
    )

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not SAFE_NAME.match(v) or v in {".", ".."}:
            raise ValueError(
                f"scenario name {v!r} is not a safe folder name: use 1-64 letters, digits, "
                "'.', '_' or '-', starting with a letter or digit (no '/', no '..')"
            )
        return v

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return _label(v, "title", MAX_TITLE)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return v if not v else _label(v, "description", MAX_DESCRIPTION)

    @field_validator("candidates")
    @classmethod
    def _known_candidates(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        _require_known(v, "accelerator", ids.ACCELERATORS)
        if len(set(v)) != len(v):
            raise ValueError(f"candidates list an accelerator twice: {list(v)}")
        return v

    @field_validator("measurements")
    @classmethod
    def _ingested_rows(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for entry in v:
            if not entry.strip() or one_line(entry) != entry:
                raise ValueError("a measurements entry must be a non-blank, one-line path")
        if v:
            try:
                data.load_measurements(v)
            except DataValidationError as err:
                raise ValueError(
                    f"{one_line(err)[:600]} (measurements are the rows `python -m analysis "
                    "ingest bench` writes)"
                ) from None
        return v

    @model_validator(mode="after")
    def _both_vendors(self) -> Scenario:
        shipping = ids.shipping(self.candidates)
        missing = [v for v in ids.VENDORS if not any(ids.vendor_of(a) == v for a in shipping)]
        if missing:
            raise ValueError(
                "candidates must include at least one shipping AMD (MI...) and one shipping "
                f"NVIDIA accelerator; no shipping {' or '.join(missing)} part in "
                f"{list(self.candidates)} (announced parts {', '.join(ids.ACCELERATORS_ANNOUNCED)}"
                " are shown as projections with include_announced: true)"
            )
        return self

    @property
    def accelerators(self) -> tuple[str, ...]:
        """Candidates plus, when asked for, the announced parts (shown as projections)."""
        if not self.include_announced:
            return self.candidates
        return self.candidates + tuple(
            a for a in ids.ACCELERATORS_ANNOUNCED if a not in self.candidates
        )


def _context_length(model: str) -> int | None:
    """The model's context length from data/models/ (None when the table cannot be read).

    A broken models table is reported by the data validation, which runs before any
    chapter; it must not masquerade as a parameter error here.
    """
    try:
        value = data.get_model(model)["context_length"]
    except (DataValidationError, KeyError, ValueError, OSError):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --- the YAML loader ---------------------------------------------------------------------


class _Refused(yaml.YAMLError):
    """A parameter file the loader will not expand (aliases, depth, duplicate keys)."""

    def __init__(self, message: str, mark: Any = None) -> None:
        super().__init__(message)
        self.problem = message
        self.problem_mark = mark


class _ParamsLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader with bounded aliases, nesting and size, and no duplicate keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Refused(
                    f"more than {MAX_ALIASES} aliases (*name): parameter files do not need "
                    "them, and expanding them is how a small file becomes gigabytes",
                    self.peek_event().start_mark,
                )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(
                    f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self) -> Any:  # noqa: D102
        node = self.get_single_node()
        if node is None:
            return None
        _check_expanded_size(node)
        return self.construct_document(node)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:  # noqa: D102
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # unhashable key: SafeConstructor reports it below
                    continue
                if first is not None:
                    raise _Refused(
                        f"duplicate key {excerpt(key)} (first at line {first.line + 1}): "
                        "the second would silently win; keep one",
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


# YAML 1.1 (PyYAML) reads ``1e12`` and ``1.0e15`` as strings (it wants a dot and a signed
# exponent); YAML 1.2, and every reader of these files, reads them as numbers.
_ParamsLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _check_expanded_size(root: Any) -> None:
    """Refuse a node graph that expands to more than :data:`MAX_NODES` nodes, or a cycle."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: Any) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise _Refused("a recursive alias (a node that contains itself)", node.start_mark)
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > MAX_NODES:
                raise _Refused(
                    f"expands to more than {MAX_NODES:,} values (aliases repeated inside aliases?)",
                    node.start_mark,
                )
        active.discard(key)
        sizes[key] = total
        return total

    size(root)


def _decode(data: bytes, source: str) -> str:
    """UTF-8 text of a parameter file (a UTF-8 byte-order mark is allowed)."""
    if b"\x00" in data:
        raise ParamsError(
            f"{source}: not a text file (it contains NUL bytes); a parameter file is "
            "UTF-8 YAML text."
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ParamsError(
            f"{source}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start} "
            "cannot be decoded as UTF-8); save the file as UTF-8."
        ) from None


def safe_load_yaml(data: bytes | str, source: str = "<params>") -> Any:
    """Parse a parameter file's YAML with the hardened loader.

    Raises:
        ParamsError: too large, not UTF-8, a YAML syntax error, a duplicate key, too many
            aliases or too deep; the message names ``source`` and the line.
    """
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > MAX_PARAMS_BYTES:
        raise ParamsError(
            f"{source}: {size:,} bytes is too large for a parameter file "
            f"(at most {MAX_PARAMS_BYTES:,} bytes)."
        )
    text = _decode(data, source) if isinstance(data, bytes) else data
    loader = None
    try:
        loader = _ParamsLoader(text)  # the reader checks characters here already
        return loader.get_single_data()
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        kind = "refused" if isinstance(err, _Refused) else "YAML syntax error"
        raise ParamsError(f"{source}: {kind}{where}: {one_line(problem)[:300]}.") from None
    except RecursionError:
        raise ParamsError(f"{source}: refused: nested too deeply.") from None
    finally:
        if loader is not None:
            loader.dispose()


# --- messages ----------------------------------------------------------------------------


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(
        excerpt(p, 40) if not isinstance(p, str) else one_line(p)[:40] for p in loc
    ) or ("(top level)")


def format_validation_error(err: ValidationError, source: str) -> str:
    """One line per problem: file, key path, what was wrong and what is allowed.

    At most :data:`MAX_PROBLEMS` problems are listed, and user input is quoted as a short
    excerpt, so a hostile file cannot make the message large.
    """
    errors = err.errors(include_url=False)
    lines = [f"{source}: invalid parameters ({len(errors)} problem(s))."]
    for e in errors[:MAX_PROBLEMS]:
        loc = _format_loc(tuple(p for p in e["loc"] if p not in {"function-after"}))
        msg = one_line(e["msg"].removeprefix("Value error, "))
        if len(msg) > 400:
            msg = msg[:400] + "..."
        if e["type"] == "extra_forbidden":
            parent = e["loc"][:-1]
            model: type[BaseModel] = Scenario
            for part in parent:
                field = model.model_fields.get(str(part))
                ann = getattr(field, "annotation", None) if field else None
                if isinstance(ann, type) and issubclass(ann, BaseModel):
                    model = ann
            allowed = ", ".join(model.model_fields)
            msg = f"unknown key. Allowed keys here: {allowed}"
        elif e["type"] in {"float_type", "int_type", "bool_type"} and isinstance(
            e.get("input"), bool | str
        ):
            want = {"float_type": "a number", "int_type": "a whole number"}.get(
                e["type"], "true or false"
            )
            msg = f"must be {want} (without quotes), not {type(e['input']).__name__}"
        got = e.get("input")
        got_s = (
            ""
            if e["type"] in {"extra_forbidden", "missing"} or isinstance(got, dict)
            else f" (got {excerpt(got)})"
        )
        lines.append(f"  - key `{loc}`: {msg}{got_s}")
    if len(errors) > MAX_PROBLEMS:
        lines.append(f"  ... and {len(errors) - MAX_PROBLEMS} more problem(s).")
    return "\n".join(lines)


def parse_scenario(raw: Any, source: str = "<params>") -> Scenario:
    """Validate an already-parsed mapping into a :class:`Scenario`."""
    if not isinstance(raw, dict):
        raise ParamsError(
            f"{source}: expected a mapping of keys to values at the top level, "
            f"got {type(raw).__name__}."
        )
    try:
        return Scenario.model_validate(raw)
    except ValidationError as err:
        raise ParamsError(format_validation_error(err, source)) from None
    except RecursionError:
        raise ParamsError(f"{source}: refused: nested too deeply.") from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML parameter file (with :func:`safe_load_yaml`).

    Raises:
        ParamsError: the file is missing, too large, not UTF-8, not valid YAML, or fails
            validation; the message names the file and the key path.
    """
    path = Path(path)
    source = one_line(str(path))
    try:
        if path.is_dir():
            raise ParamsError(f"{source}: is a folder, not a parameter file.")
        with path.open("rb") as fh:
            data = fh.read(MAX_PARAMS_BYTES + 1)
    except OSError as err:
        raise ParamsError(f"{source}: cannot read parameter file ({err.strerror}).") from None
    raw = safe_load_yaml(data, source)
    return parse_scenario(raw, source)


def scenario_to_parameters(scenario: Scenario) -> dict[str, Any]:
    """The papermill parameters injected into every chapter: the scenario as plain data."""
    return {"scenario": scenario.model_dump(mode="json")}


def scenario_from_parameters(scenario: dict[str, Any] | None) -> Scenario:
    """The notebooks' validation cell: the injected plain-data scenario, or the default one.

    An empty mapping (the value in each notebook's ``parameters`` cell) means
    ``params/default.yaml``, so a notebook opened by hand runs the default report.
    """
    if not scenario:
        return load_scenario(paths.DEFAULT_PARAMS)
    return parse_scenario(scenario, "<injected parameters>")


# --- the README's parameter reference (generated from the model) ---------------------------

#: Markers around the generated section in README.md (`make params-readme` rewrites it).
README_BEGIN = "<!-- parameter reference: generated by `make params-readme`, do not edit -->"
README_END = "<!-- end of parameter reference -->"


def _type_text(annotation: Any) -> str:
    """A field's type in a reader's words (``float``, ``list[str]``, ``"buy" | "rent"``)."""
    import typing

    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(f'"{a}"' for a in args)
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join("null" if a is type(None) else _type_text(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        name = "list" if name == "tuple" else name  # YAML writes a list either way
        inner = ", ".join(_type_text(a) for a in args if a is not Ellipsis)
        return f"{name}[{inner}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    return getattr(annotation, "__name__", str(annotation))


def _default_text(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, tuple) and value and isinstance(value[0], BaseModel):
        return f"{len(value)} entries (see the default file)"
    if isinstance(value, dict | tuple | list | str) and not value:
        return "empty"
    return f"`{value}`"


def parameter_reference() -> str:
    """The README's parameter reference: every key of a parameter file, from :class:`Scenario`.

    One table per section (top level, then each nested model), with the key, its type, its
    default and its description as the model defines them, so the README cannot drift from
    the validation.
    """

    def rows(model: type[BaseModel]) -> list[str]:
        out = ["| key | type | default | meaning |", "|---|---|---|---|"]
        for name, f in model.model_fields.items():
            cells = [f.description or "", _type_text(f.annotation), _default_text(f)]
            desc, typ, default = (c.replace("|", "\\|").replace("\n", " ") for c in cells)
            out.append(f"| `{name}` | {typ} | {default} | {desc} |")
        return out

    parts = [
        README_BEGIN,
        "",
        "Every key a parameter file may set (unknown keys are rejected). Generated from the "
        "`Scenario` model in `src/analysis/params.py`.",
        "",
        "### Top level",
        "",
        *rows(Scenario),
    ]
    seen: set[str] = set()

    def nested(model: type[BaseModel], prefix: str) -> None:
        import typing

        for name, f in model.model_fields.items():
            cands = [f.annotation, *typing.get_args(f.annotation)]
            for c in cands:
                if isinstance(c, type) and issubclass(c, BaseModel) and c.__name__ not in seen:
                    seen.add(c.__name__)
                    key = f"{prefix}{name}"
                    parts.extend(["", f"### `{key}` ({c.__name__})", "", *rows(c)])
                    nested(c, f"{key}.")

    nested(Scenario, "")
    parts += ["", README_END]
    return "\n".join(parts)


def readme_with_reference(readme: str) -> str:
    """``readme`` with its parameter-reference section replaced by :func:`parameter_reference`.

    Raises ``ValueError`` when the README lacks the markers.
    """
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md has no parameter reference markers ({README_BEGIN!r})")
    return readme[:start] + parameter_reference() + readme[end + len(README_END) :]
