# The two commands a new user runs are `make up` and `make test` (see README.md).
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install compile up services test test-fast lint bench docs

$(BIN)/colony: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,docs]'
	touch $@

install: $(BIN)/colony

# Byte-compile the checkout (pip compiles only what it installs into the venv). Where the
# machine sets PYTHONDONTWRITEBYTECODE, every process would otherwise compile it again as it
# imports it: each gateway, CLI call and flow run the tests start. Only changed files are redone.
COMPILED := colony flows tasks blocks tools seed_paths bench tests
compile: install
	$(BIN)/python -m compileall -q $(COMPILED)

# `make up PORT=4300 GATEWAY_PORT=8788` moves the Prefect server and the gateway.
up: compile
	$(BIN)/colony up $(if $(PORT),--port $(PORT)) $(if $(GATEWAY_PORT),--gateway-port $(GATEWAY_PORT))

services:
	bash scripts/services.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/mypy docs/gen docs/examples
	$(BIN)/mkdocs build --strict --quiet

# Tests run on WORKERS processes (pytest-xdist); tests sharing one Prefect server stay on one.
WORKERS ?= 4
FAST := not (docker or postgres or prefect or node or moto or slow)

test: compile services lint
	$(BIN)/pytest --cov -n $(WORKERS) --dist loadgroup --durations=10

# The inner loop: no Docker, PostgreSQL, Prefect server, Node or moto, and not the slowest tests.
# It is CPU-bound, so one worker per core and one more (the full suite waits on servers: WORKERS).
FAST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test-fast: compile
	$(BIN)/pytest -m "$(FAST)" -n $(FAST_WORKERS) --dist loadgroup -q

bench: install
	$(BIN)/python -m bench

# MkDocs' plugins print notices about MkDocs' future on every build; the build output is what matters.
export NO_MKDOCS_2_WARNING := 1
export DISABLE_MKDOCS_2_WARNING := true

# The documentation site, into site/: every reference page generated from the code, strict (a broken link fails).
docs: install
	$(BIN)/mkdocs build --strict
