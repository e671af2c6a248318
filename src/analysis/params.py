"""Run settings: the :class:`Scenario` model and loading it from ``params/*.yaml``.

Analytical decisions taken here:

* Every model is frozen and rejects unknown keys, so a typo in a parameter file is an
  error, not a silently ignored setting.
* Accelerator and model ids are checked against :mod:`analysis.ids`; an unknown id is
  reported with the closest known ids.
* The scenario name becomes a folder under ``reports/``; only ``[A-Za-z0-9][A-Za-z0-9._-]*``
  is allowed, so ``../x``, ``/etc`` or an empty name cannot escape that folder.
* Defaults that are not measured facts (utilization, PUE, porting effort ...) live in the
  assumptions register (``data/assumptions/``); the values here mirror it and a data test
  keeps the two in step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analysis import ids

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

PositiveFloat = Annotated[float, Field(gt=0)]
NonNegativeFloat = Annotated[float, Field(ge=0)]
Fraction = Annotated[float, Field(gt=0, le=1)]


def _require_known(values: Iterable[str], kind: str, known: tuple[str, ...]) -> None:
    """Raise on the first of ``values`` not in ``known``, naming the closest known ids."""
    for value in values:
        if value not in known:
            raise ValueError(ids.unknown_id_message(kind, value, known))


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=False, validate_default=True)


class LatencyTier(_Strict):
    """One inference latency tier: an upper bound on time per output token, and on TTFT."""

    name: str = Field(description="Label shown in tables, e.g. 'interactive (<50 ms)'.")
    tpot_ms_max: PositiveFloat | None = Field(
        description="Upper bound on time per output token in ms; null = unbounded."
    )
    ttft_ms_max: PositiveFloat | None = Field(
        description="Upper bound on time to first token in ms; null = unbounded."
    )


def _default_tiers() -> tuple[LatencyTier, ...]:
    # The article's tiers: "sub-50 millisecond latency targets" and "100+ milliseconds".
    # We read its latency targets as time per output token (TPOT); the TTFT bounds follow
    # MLPerf's llama2-70b Interactive/Server pairs (450 ms / 2 s) and an offline-like 10 s.
    return (
        LatencyTier(name="<50 ms", tpot_ms_max=50.0, ttft_ms_max=2000.0),
        LatencyTier(name="50-100 ms", tpot_ms_max=100.0, ttft_ms_max=5000.0),
        LatencyTier(name=">100 ms", tpot_ms_max=None, ttft_ms_max=None),
    )


class Inference(_Strict):
    """The inference workload the report sizes candidates for."""

    model: str = Field("llama2-70b", description="Model id (data/models/), e.g. 'llama2-70b'.")
    precision: Literal["bf16", "fp8", "fp4"] = Field(
        "fp8", description="Weight/activation precision used for serving."
    )
    isl: Annotated[int, Field(gt=0, le=1_000_000)] = Field(
        2048, description="Input (prompt) length in tokens."
    )
    osl: Annotated[int, Field(gt=0, le=1_000_000)] = Field(
        256, description="Output length in tokens."
    )
    gpus_per_replica: Annotated[int, Field(ge=1, le=72)] = Field(
        8, description="Accelerators per serving replica (tensor parallel)."
    )
    tiers: tuple[LatencyTier, ...] = Field(
        default_factory=_default_tiers,
        description="Latency tiers, tightest first; see the inference chapter.",
        min_length=1,
    )

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        _require_known([v], "model", ids.MODELS)
        return v


class Training(_Strict):
    """The training job the report sizes candidates for."""

    model: str = Field("llama3.1-70b", description="Model id (data/models/) to train.")
    precision: Literal["bf16", "fp8", "fp4"] = Field("bf16", description="Training precision.")
    tokens: PositiveFloat = Field(1.0e12, description="Training token budget.")
    cluster_gpus: Annotated[int, Field(ge=1, le=131072)] = Field(
        1024, description="GPUs in the cluster the job runs on."
    )
    seq_len: Annotated[int, Field(ge=128, le=1_000_000)] = Field(
        8192, description="Training sequence length in tokens."
    )
    global_batch_tokens: PositiveFloat = Field(16.0e6, description="Global batch size in tokens.")

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
    gpu_hour_usd: dict[str, PositiveFloat] = Field(
        default_factory=dict,
        description="Your own $/GPU-hour per accelerator id; overrides the quote table.",
    )
    server_price_usd: dict[str, PositiveFloat] = Field(
        default_factory=dict,
        description="Your own purchase price per 8-GPU server; overrides the estimates.",
    )
    utilization: Fraction = Field(0.7, description="Fraction of hours the fleet does useful work.")
    pue: Annotated[float, Field(ge=1.0, le=3.0)] = Field(
        1.3, description="Facility power usage effectiveness."
    )
    electricity_usd_per_kwh: NonNegativeFloat = Field(0.08, description="Electricity price.")
    colocation_usd_per_kw_month: NonNegativeFloat = Field(
        150.0, description="Colocation price per kW of IT load per month."
    )
    depreciation_years: Annotated[float, Field(gt=0, le=15)] = Field(
        5.0, description="Useful life over which capex is recovered."
    )
    cost_of_capital: Annotated[float, Field(ge=0, le=1)] = Field(
        0.08, description="Annual cost of capital (discount rate) for the capital recovery factor."
    )
    fleet_gpus: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        1024, description="GPUs in the fleet over which one-off platform costs are amortized."
    )
    porting_engineer_months: dict[str, NonNegativeFloat] = Field(
        default_factory=lambda: {"AMD": 12.0, "NVIDIA": 0.0},
        description="One-off porting and ramp-up effort per vendor, in engineer-months.",
    )
    engineer_month_usd: NonNegativeFloat = Field(
        25_000.0, description="Loaded cost of one engineer-month."
    )
    mc_draws: Annotated[int, Field(ge=100, le=10_000_000)] = Field(
        100_000, description="Monte Carlo draws for cost intervals."
    )
    seed: Annotated[int, Field(ge=0)] = Field(20261130, description="Seed of every random draw.")

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
    include_announced: bool = Field(
        False, description="Also show announced parts (VR200, MI455X) as labelled projections."
    )
    inference: Inference = Field(default_factory=Inference, description="Inference workload.")
    training: Training = Field(default_factory=Training, description="Training job.")
    cost: Cost = Field(default_factory=Cost, description="Buy/rent and facility inputs.")

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not SAFE_NAME.match(v) or v in {".", ".."}:
            raise ValueError(
                f"scenario name {v!r} is not a safe folder name: use 1-64 letters, digits, "
                "'.', '_' or '-', starting with a letter or digit (no '/', no '..')"
            )
        return v

    @field_validator("candidates")
    @classmethod
    def _known_candidates(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        _require_known(v, "accelerator", ids.ACCELERATORS)
        if len(set(v)) != len(v):
            raise ValueError(f"candidates list an accelerator twice: {list(v)}")
        return v

    @model_validator(mode="after")
    def _both_vendors(self) -> Scenario:
        amd = [a for a in self.candidates if ids.vendor_of(a) == "AMD"]
        if not amd or len(amd) == len(self.candidates):
            raise ValueError(
                "candidates must include at least one AMD (MI...) and one NVIDIA accelerator"
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


class ParamsError(ValueError):
    """A parameter file is unreadable or invalid; the message is meant for the user."""


def _format_loc(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def format_validation_error(err: ValidationError, source: str) -> str:
    """One paragraph per problem: file, key path, what was wrong and what is allowed."""
    lines = [f"{source}: invalid parameters ({err.error_count()} problem(s))."]
    for e in err.errors():
        loc = _format_loc(tuple(p for p in e["loc"] if p not in {"function-after"}))
        msg = e["msg"].removeprefix("Value error, ")
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
        got = e.get("input")
        got_s = (
            ""
            if e["type"] in {"extra_forbidden", "missing"} or isinstance(got, dict)
            else f" (got {got!r})"
        )
        lines.append(f"  - key `{loc}`: {msg}{got_s}")
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


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a YAML parameter file.

    Raises:
        ParamsError: the file is missing, is not valid YAML, or fails validation; the
            message names the file and the key path.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ParamsError(f"{path}: cannot read parameter file ({err.strerror}).") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ParamsError(f"{path}: YAML syntax error{where}: {problem}.") from None
    return parse_scenario(raw, str(path))


def scenario_to_parameters(scenario: Scenario) -> dict[str, Any]:
    """The papermill parameters injected into every chapter: the scenario as plain data."""
    return {"scenario": scenario.model_dump(mode="json")}


def scenario_from_parameters(scenario: dict[str, Any] | None) -> Scenario:
    """The notebooks' validation cell: the injected plain-data scenario, or the default one.

    An empty mapping (the value in each notebook's ``parameters`` cell) means
    ``params/default.yaml``, so a notebook opened by hand runs the default report.
    """
    from analysis import paths  # local import: params stays importable without data files

    if not scenario:
        return load_scenario(paths.DEFAULT_PARAMS)
    return parse_scenario(scenario, "<injected parameters>")
