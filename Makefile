# Kitsune: `make demo` and `make test` work on a fresh clone of a machine with only Python.
# They create the virtual environment (.venv), install Kitsune and its pinned
# dependencies into it, and run. torch is pinned to 2.13.0 (the CPU wheel on disk
# here); the GPU machine has torch 2.11 + triton 3.6.0 and the code works with both.

PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.kitsune-installed
TORCH   ?= torch==2.13.0
TRITON  ?= triton==3.6.0

.PHONY: all demo test lit unit venv clean

all: test

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)" "$(TRITON)"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m kitsune.demo

test: lit unit

lit: $(STAMP)
	$(BIN)/lit -sv test/lit

unit: $(STAMP)
	$(BIN)/python -m pytest -q test/unit test/models

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
