# Radar — the two commands of README.md are `make up` and `make test`.
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: up install system-deps materialize test bench ui

## Set everything up, then materialize every asset on ../shared/corpus (or RADAR_CORPUS_DIR).
up: install materialize

system-deps:
	@command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -q '^spa$$' && tesseract --list-langs 2>/dev/null | grep -q '^por$$' || \
	  ( $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q tesseract-ocr tesseract-ocr-eng tesseract-ocr-spa tesseract-ocr-por )

$(BIN)/activate:
	$(PY) -m venv $(VENV)

# torch first, pinned: the CPU wheel; an unpinned torch would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml $(BIN)/activate
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[st,test]'
	touch $@

install: system-deps $(VENV)/.installed

materialize: install
	$(BIN)/radar materialize

ui: install
	$(BIN)/radar ui

## The test suite (real PostgreSQL, real Tesseract, real encoders).
test: install
	$(BIN)/python -m pytest -q

bench: install
	$(BIN)/python evals/bench_pipeline.py
