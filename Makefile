# eukhe: install into .venv and run the checks. Needs only python3 + pip.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo lint types pytest laws test clean

venv: $(STAMP)

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e '.[dev]'
	touch $(STAMP)

demo: venv
	$(BIN)/eukhe demo

lint: venv
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

types: venv
	$(BIN)/mypy --strict src/eukhe/rules src/eukhe/laws

pytest: venv
	$(BIN)/pytest

laws: venv
	$(BIN)/eukhe laws

test: venv
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory types
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory laws

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find . -name "*.egg-info" -type d -prune -exec rm -rf {} +
