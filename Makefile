# The decision report's entry points. `make` (or `make help`) lists them.
# Every target bootstraps .venv and installs the project on first use, or uses the active
# conda environment of environment.yml (CONDA_DEFAULT_ENV=gpu-decision-report).

SHELL := /bin/bash
.DEFAULT_GOAL := help

PARAMS ?= params/default.yaml
FORMATS ?= html,pdf
# Day the raw MLPerf files in ../shared/data/mlperf were collected (their README says so).
MLPERF_ACCESSED ?= 2026-11-30

ifeq ($(CONDA_DEFAULT_ENV),gpu-decision-report)
  PY := python
  STAMP := .conda.stamp
else
  PY := .venv/bin/python
  STAMP := .venv/.installed.stamp
endif

.PHONY: help report test test-fast nbval bench lint goldens validate sync data-readme ingest scenarios clean system-deps

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "; print "Targets:"} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "Variables: PARAMS=$(PARAMS) FORMATS=$(FORMATS)"

.venv/.installed.stamp: pyproject.toml
	@test -x .venv/bin/python || python3 -m venv .venv
	.venv/bin/python -m pip install --quiet --upgrade pip
	.venv/bin/python -m pip install --quiet -e '.[dev]'
	@touch $@

.conda.stamp: pyproject.toml
	python -m pip install --quiet -e '.[dev]' --no-deps
	@touch $@

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

lint: $(STAMP) ## ruff check + format check, notebook pairs in sync
	$(PY) -m ruff check src tests notebooks
	$(PY) -m ruff format --check src tests
	$(PY) -m analysis sync --check

sync: $(STAMP) ## Sync each notebook with its py:percent pair (newest wins)
	$(PY) -m analysis sync

goldens: $(STAMP) ## Regenerate the nbval golden notebooks from params/ci.yaml
	$(PY) -m analysis goldens

data-readme: $(STAMP) ## Regenerate data/README.md from the schema definitions
	$(PY) -m analysis data-readme

ingest: $(STAMP) ## Re-extract the MLPerf tables from ../shared/data/mlperf
	$(PY) -m analysis ingest mlperf --accessed $(MLPERF_ACCESSED) ../shared/data/mlperf/*.json ../shared/data/mlperf/training_llm_time_to_train_v4.0-v5.0.csv

clean: ## Remove build folders (reports/ is kept)
	rm -rf _build .pytest_cache .ruff_cache _site .quarto
