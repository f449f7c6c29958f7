# Radar — the two commands of README.md are `make up` and `make test`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: up install system-deps dashboard materialize serve test test-fast test-quick check lint bench ui

## Set everything up, then run Radar: the Dagster daemon (UI on :3000) builds and keeps current every
## asset on ../shared/corpus (or RADAR_CORPUS_DIR) while the API and the dashboard serve on
## http://127.0.0.1:8000/tablero/ — lexical-only as soon as the BM25 index exists, then dense and
## re-ranked as their assets complete (/health lists the live stages). Ctrl-C stops both.
up: install
	$(BIN)/radar up --port 8000

system-deps:
	@command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -q '^spa$$' && tesseract --list-langs 2>/dev/null | grep -q '^por$$' || \
	  ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q tesseract-ocr tesseract-ocr-eng tesseract-ocr-spa tesseract-ocr-por )
	@command -v chromium >/dev/null || ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium )
	@command -v npm >/dev/null || ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q nodejs npm )
	@command -v redis-server >/dev/null || ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q redis-server )
	@docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q docker-compose )

$(BIN)/activate:
	$(PY) -m venv $(VENV)

# torch first, pinned: the CPU wheel; an unpinned torch would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml $(BIN)/activate
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[st,test,celery]'
	touch $@

# The dashboard's JS library (d3, from npm) and the boundaries simplified from ../shared/geo,
# copied into git-ignored static folders; nothing is loaded from a CDN at run time. Rebuilt only
# when build.py, the npm install or a boundary file is newer than the last build (build.py writes
# static/geo/sources.json last, so a failed build is redone on the next call).
SHARED_GEO := $(or $(RADAR_SHARED_DIR),../shared)/geo
DASHBOARD_BUILT := api/dashboard/static/geo/sources.json

api/dashboard/node_modules/.package-lock.json: api/dashboard/package-lock.json
	npm ci --prefix api/dashboard --no-audit --no-fund

$(DASHBOARD_BUILT): api/dashboard/build.py api/dashboard/node_modules/.package-lock.json $(wildcard $(SHARED_GEO)/*) | $(VENV)/.installed
	$(BIN)/python api/dashboard/build.py

dashboard: system-deps $(VENV)/.installed $(DASHBOARD_BUILT)

install: system-deps $(VENV)/.installed dashboard

materialize: install
	$(BIN)/radar materialize

serve: install
	@echo "Radar: API and dashboard on http://127.0.0.1:8000/tablero/ (OpenAPI on /docs)"
	$(BIN)/radar serve --port 8000

## The Dagster UI and daemon (sensors, automation, schedule) without the API.
ui: install
	$(BIN)/radar ui

## The test suite (real PostgreSQL, real Tesseract, real encoders, Chromium): lint, import
## contracts, then every test; a skipped test fails the run (RADAR_NO_SKIPS=1).
test: install lint
	RADAR_REQUIRE_BROWSER=1 RADAR_NO_SKIPS=1 $(BIN)/python -m pytest -q

# pytest-xdist (the test extra) when the venv has it: one worker per core, each test file on one
# worker (its module fixtures built once); each worker starts its own embedded PostgreSQL.
XDIST = $(shell $(BIN)/python -c 'import xdist' 2>/dev/null && echo "-n auto --dist loadfile")

## Everything except the tests marked slow (heavy models, OCR, browser, load), in parallel. Installs
## and builds only what changed since the last call (nothing, usually).
test-fast: install
	$(BIN)/python -m pytest -q -m "not slow" $(XDIST)

## The inner loop: the tests that need no PostgreSQL, no model and no Dagster run (markers pg,
## model, dagster, slow: tests/conftest.py), in parallel, with no install or build step; needs a
## venv made once by `make install`. Extra pytest arguments: make test-quick ARGS="-k chunk".
test-quick:
	@test -x $(BIN)/python || { echo "test-quick: no $(VENV) here; run 'make install' once first"; exit 1; }
	$(BIN)/python -m pytest -q -m "not slow and not pg and not model and not dagster" $(XDIST) $(ARGS)

## Before a commit: lint, import contracts and the quick tests (no install or build step unless
## pyproject.toml changed since the venv was made).
check: lint test-quick

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

bench: install
	$(BIN)/python evals/bench_pipeline.py
