# The two commands a new user runs are `make up` and `make test` (see README.md).
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install up services test lint bench docs

$(BIN)/colony: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/colony

up: install
	$(BIN)/colony up

services:
	bash scripts/services.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: install services lint
	$(BIN)/pytest --cov

bench: install
	$(BIN)/python -m bench

docs: install
	$(BIN)/colony tools docs --output docs/reference/tools.md
