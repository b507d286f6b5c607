# Tocsin — `make help` lists the targets. Every target installs what it needs.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help run test lint unit fuzz bench bench-report system-deps clean lock compose-test docs

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# Every dependency comes from requirements-dev.lock (the product's requirements.lock plus the test and
# lint tools): exact versions with their hashes (pip refuses anything else), then the project itself
# without resolving anything again. The image installs requirements.lock the same way.
$(STAMP): pyproject.toml requirements-dev.lock
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	$(BIN)/pip install -q --no-deps -e .
	@touch $(STAMP)

LOCK = UV_PYTHON_DOWNLOADS=never $(BIN)/uv pip compile pyproject.toml --generate-hashes --python-version 3.11 \
	--python $(BIN)/python --custom-compile-command "make lock" -q

lock: $(STAMP) ## Refresh the lock files from pyproject.toml (keeps pinned versions; UPGRADE=1 takes the newest allowed)
	@test -x $(BIN)/uv || $(BIN)/pip install -q uv
	$(LOCK) --extra dev $(if $(UPGRADE),--upgrade) -o requirements-dev.lock
	$(LOCK) -c requirements-dev.lock -o requirements.lock

system-deps: ## Install Java 17, Maven, PostgreSQL, promtool and Alertmanager if missing (Debian, as root)
	@scripts/system-deps.sh

run: $(STAMP) system-deps ## Run broker, database, API and worker on the embedded defaults (Ctrl-C stops all)
	$(BIN)/tocsin run

lint: $(STAMP) ## ruff (lint + format check), mypy --strict, the layout's import contracts (pyproject.toml), the docs site
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m scripts.reference --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The reference pages (docs/reference/) are generated from the code (scripts/reference/): `make docs`
# writes them, `make lint` fails when the committed ones differ, then builds the site with --strict
# (a broken link, a missing anchor or a page left out of mkdocs.yml's nav fails).
docs: $(STAMP) ## Regenerate docs/reference/ from the code, then serve the documentation site (http://127.0.0.1:8000)
	$(BIN)/python -m scripts.reference
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

unit: $(STAMP) ## Only the fast tests that need no broker or database server
	$(BIN)/python -m pytest -q tests/unit

test: $(STAMP) system-deps lint ## Lint, then every test against real Kafka, SQLite and PostgreSQL
	$(BIN)/python -m pytest -q

fuzz: $(STAMP) system-deps ## Longer hostile-input runs: schemathesis on every operation and hypothesis on every parser (TOCSIN_FUZZ_EXAMPLES, default 200)
	TOCSIN_FUZZ_EXAMPLES=$${TOCSIN_FUZZ_EXAMPLES:-200} $(BIN)/python -m pytest -q -s tests/api/test_openapi_fuzz.py tests/unit/test_parser_fuzz.py tests/unit/test_parser_fuzz_properties.py

bench: $(STAMP) ## Benchmarks (publish, IAM, exchange, control agent, webhook latency, recovery), each with a same-run baseline
	@scripts/system-deps.sh --bench
	$(BIN)/python -m tests.bench.run $(BENCH_ARGS)

# bench-results/latest.json (committed: its git history is the figures' history) is the one source of
# docs/benchmarks.md's figures table; `make bench BENCH_ARGS='--only publish'` replaces that section only.
bench-report: $(STAMP) ## Regenerate docs/benchmarks.md's figures table from bench-results/latest.json
	$(BIN)/python -m scripts.bench_report

# scripts/compose_test.py exits 3 when no container engine can run here (the reason printed); make turns
# every failure into its own status 2, so .ci/run calls the script directly to tell the two apart.
compose-test: ## The compose deployment for real: engine (installed/started if needed), build, up, publish → decided, down -v
	@python3 scripts/compose_test.py

clean: ## Remove the virtualenv and local state (var/)
	rm -rf $(VENV) var bench-results
