# Everyday entry points. `make demo` and `make test` are the README's two quick-start commands.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: demo test lint bench mutation clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.test-installed $(VENV)/.installed

$(VENV)/.mutation-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[mutation]'
	touch $@ $(VENV)/.test-installed $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/vaultmem --vault sample-vault reindex
	$(BIN)/vaultmem --vault sample-vault search "heat pump tariff" --limit 5
	$(BIN)/vaultmem --vault sample-vault show "Maya Chen"

test: $(VENV)/.test-installed
	$(BIN)/python -m pytest

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check vaultmem tests bench
	$(BIN)/ruff format --check vaultmem
	$(BIN)/mypy

# Mutation testing (docs/TESTING.md): slow, not in CI. `make mutation MODULES="resolver dates"`
# runs some modules; ARGS="--retest" only the mutants not killed last time.
mutation: $(VENV)/.mutation-installed
	nice -n 19 $(BIN)/python -m tests.mutation.run $(ARGS) $(MODULES)

bench: $(VENV)/.installed
	$(BIN)/python bench/reindex.py
	$(BIN)/python bench/search.py

clean:
	rm -rf $(VENV) sample-vault/.vaultmem .pytest_cache .mutation
