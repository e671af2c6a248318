# The decision report's entry points. `make` (or `make help`) lists them.
# Every target bootstraps .venv from the lock file (requirements/lock.txt: every
# distribution pinned with hashes) on first use, or uses the active conda environment of
# environment.yml (CONDA_DEFAULT_ENV=gpu-decision-report), which installs the same lock.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PARAMS ?= params/default.yaml
FORMATS ?= html,pdf
# Day the raw MLPerf files in ../shared/data/mlperf were collected (their README says so).
MLPERF_ACCESSED ?= 2026-11-30

LOCK := requirements/lock.txt
# The one resolution command: `make lock` refreshes with it, `make lock-check` re-runs it
# keeping the current pins and fails when the result differs (pyproject.toml changed).
UV_COMPILE = $(PY) -m uv pip compile pyproject.toml requirements/bootstrap.in --extra dev \
	--universal --python-version 3.11 --generate-hashes --quiet \
	--custom-compile-command "make lock"
# Installs exactly the lock (hash-checked, no resolution), then the project itself without
# dependencies or build isolation, so its build tools are the locked ones too.
define install_locked
	$(1) -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(1) -m pip install --quiet --no-deps --no-build-isolation -e .
endef

ifeq ($(CONDA_DEFAULT_ENV),gpu-decision-report)
  PY := python
  STAMP := .conda.stamp
else
  PY := .venv/bin/python
  STAMP := .venv/.installed.stamp
endif

.PHONY: help snapshot report test test-fast test-latest nbval bench lint sync-check lock lock-check goldens validate sync data-readme params-readme contracts ingest scenarios clean system-deps

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "; print "Targets:"} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables: PARAMS=$(PARAMS) FORMATS=$(FORMATS)"

.venv/.installed.stamp: $(LOCK) pyproject.toml
	@test -x .venv/bin/python || python3 -m venv .venv
	$(call install_locked,.venv/bin/python)
	@touch $@

.conda.stamp: $(LOCK) pyproject.toml
	$(call install_locked,python)
	@touch $@

lock: $(STAMP) ## Re-resolve requirements/lock.txt: the newest versions pyproject.toml allows
	$(UV_COMPILE) --upgrade -o $(LOCK)
	@echo "$(LOCK) refreshed: run make test (and make goldens if chapter outputs moved), commit it"

lock-check: $(STAMP) ## Fail when requirements/lock.txt is out of date with pyproject.toml
	@tmp=$$(mktemp -d) && cp $(LOCK) $$tmp/lock.txt && \
	$(UV_COMPILE) -o $$tmp/lock.txt && \
	if diff -u $(LOCK) $$tmp/lock.txt > $$tmp/diff; then echo "$(LOCK) is in sync with pyproject.toml"; \
	else head -40 $$tmp/diff; echo "$(LOCK) is out of date: run make lock (or make lock-check to see why)" >&2; exit 1; fi

# Drift check: the newest releases pyproject.toml allows, in a venv of their own, so a
# release that breaks the report is found by a command rather than by a user.
test-latest: system-deps ## Run the suite against the newest allowed versions (.venv-latest, not the lock)
	@test -x .venv-latest/bin/python || python3 -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	.venv-latest/bin/python -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[dev]'
	.venv-latest/bin/python -m pip freeze --exclude-editable > .venv-latest/freeze.txt
	@echo "versions under test: .venv-latest/freeze.txt"
	GPU_REPORT_UNLOCKED=1 .venv-latest/bin/python -m pytest -n 2 --dist loadgroup

system-deps: ## Install Chromium (PDF rendering, browser tests) when missing; needs root
	@bash scripts/system-deps.sh

report: $(STAMP) system-deps ## Render the default report (HTML + PDF) to reports/default/latest/
	$(PY) -m analysis run --params $(PARAMS) --formats $(FORMATS)

validate: $(STAMP) ## Check a parameter file: make validate PARAMS=params/ci.yaml
	$(PY) -m analysis validate $(PARAMS)

scenarios: $(STAMP) ## List the bundled scenarios
	$(PY) -m analysis scenarios

test: $(STAMP) system-deps ## Run the whole test suite (what CI runs)
	$(PY) -m pytest -n 2 --dist loadgroup

test-fast: $(STAMP) ## Unit and data tests only (seconds)
	$(PY) -m pytest -m "not slow and not browser" -n 2

nbval: $(STAMP) ## Chapters vs their golden outputs only (repeat: for i in 1 2 3 4 5; do make nbval || break; done)
	$(PY) -m pytest tests/notebooks -n 2 --dist loadgroup

bench: $(STAMP) system-deps ## Time the model sweeps, Monte Carlo and each phase of `make report`
	$(PY) -m analysis bench --params $(PARAMS)

lint: $(STAMP) sync-check ## ruff check (complexity too) + format check, mypy, notebook pairs in sync
	$(PY) -m ruff check src tests notebooks
	$(PY) -m ruff format --check src tests
	$(PY) -m mypy

sync-check: $(STAMP) ## Check each notebook and its py:percent pair hold the same cells, no outputs
	$(PY) -m analysis sync --check

sync: $(STAMP) ## Sync each notebook with its py:percent pair (newest wins)
	$(PY) -m analysis sync

snapshot: $(STAMP) ## Regenerate tests/data/snapshots/models.json (model figures the refactor must keep)
	$(PY) tests/snapshot_models.py

goldens: $(STAMP) ## Regenerate the nbval golden notebooks from params/ci.yaml
	$(PY) -m analysis goldens

data-readme: $(STAMP) ## Regenerate data/README.md from the schema definitions
	$(PY) -m analysis data-readme

contracts: $(STAMP) ## Regenerate docs/contracts.md's key-results section from src/analysis/keys.py
	$(PY) -m analysis contracts

params-readme: $(STAMP) ## Regenerate README.md's parameter reference from the Scenario model
	$(PY) -m analysis params-readme

ingest: $(STAMP) ## Re-extract the MLPerf tables from ../shared/data/mlperf
	$(PY) -m analysis ingest mlperf --accessed $(MLPERF_ACCESSED) ../shared/data/mlperf/*.json ../shared/data/mlperf/training_llm_time_to_train_v4.0-v5.0.csv

clean: ## Remove build folders (reports/ is kept)
	rm -rf _build .pytest_cache .ruff_cache _site .quarto
