# Two set-up commands for a fresh machine with Python 3.11 and make: `make demo`, `make test`.
PYTHON ?= python3
BIN := .venv/bin
# uv installs the locked environment; when the machine has none, pip installs it in .venv-uv.
UV = $$(command -v uv || echo .venv-uv/bin/uv)
# Bytecode compiled at install: where PYTHONDONTWRITEBYTECODE is set (this project's machines),
# every process otherwise recompiles what it imports (dagster and dbt: 8.6 s -> 3.7 s to load
# the definitions, measured). Our own packages too (uv compiles only what it installs): 54
# modules an extraction run loads, ~0.1 s of every run process's start.
export UV_COMPILE_BYTECODE := 1

.PHONY: install demo test test-quick lint format bench bench-scale soak profile profile-pack dagster screenshots clean

# What the product, the sandbox, DuckDB's shell and the UI need, without the test tools (the
# `dev` group, which `make test` adds). Quiet: one line, not a line per package. --inexact: a
# later `make demo` keeps the test tools `make test` installed.
$(BIN)/adwh: pyproject.toml uv.lock
	@command -v uv >/dev/null || test -x .venv-uv/bin/uv || \
		($(PYTHON) -m venv .venv-uv && .venv-uv/bin/pip install --quiet uv)
	@echo "adwh: installing the environment in .venv (a minute or two the first time)"
	@$(UV) sync --frozen --quiet --inexact --no-dev --python $(PYTHON)
	@$(BIN)/python -m compileall -q launcher pipelines assets transforms warehouse sandbox >/dev/null
	@touch $@

# The test tools (pytest, hypothesis, ruff, moto, …) on top.
$(BIN)/pytest: $(BIN)/adwh
	@echo "adwh: installing the test tools in .venv"
	@$(UV) sync --frozen --quiet --inexact --python $(PYTHON)
	@touch $@

# The environment alone (`.venv/bin/adwh`), for a machine that reads its own service.
install: $(BIN)/adwh

demo: $(BIN)/adwh
	@$(BIN)/adwh demo

lint: $(BIN)/pytest
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Three workers on this 2-core machine: the end-to-end tests spend much of their time waiting on
# daemons, sensors and polls (measured when the suite took 10-15 min: 2 workers 11.8 min,
# 3 workers 9.8, 1 worker 15). 7:33-7:43 from a fresh clone now: bench/SPEED.md, "Issue 57".
# Worksteal: a worker done with its share takes queued tests from the other's.
TEST_WORKERS ?= 3
# pytest keeps each test module as it rewrote it for its assertions (`__pycache__`), unless
# PYTHONDONTWRITEBYTECODE is set: every worker of every run then rewrites every module again
# (collection 3.6 -> 6.3 CPU-s a worker, measured). The tests write their bytecode.
test test-quick: export PYTHONDONTWRITEBYTECODE =
test: lint
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=20

# The quick loop while working on the library, the transforms or the warehouse: every test that
# starts no Dagster run, adwh command, server or process (tests/whole.py marks the others).
# `make test` is still the whole suite, and what CI runs.
test-quick: $(BIN)/pytest
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not whole" --durations=10

format: $(BIN)/pytest
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(BIN)/adwh
	$(UV) sync --frozen --python $(PYTHON) --group bench
	$(BIN)/python -m bench

# An agency of 1,000 accounts through deploy/'s instance (needs PostgreSQL on 127.0.0.1:5432, and
# Debian's chromium for the UI's load times): a 30-day backfill, then the daily job, each beside
# the fetch floor of its pages; writes bench/SCALE.md. SCALE_ACCOUNTS=50 for a quick look.
bench-scale: $(BIN)/adwh
	$(UV) sync --frozen --python $(PYTHON) --group bench --group docs
	$(BIN)/python -m bench.scale

# Long fault runs, many seeds and kills; rewrites RELIABILITY.md with what was injected and lost.
SEEDS ?= 3
KILLS ?= 4
soak: $(BIN)/adwh
	$(BIN)/python -m bench.soak --seeds $(SEEDS) --kills $(KILLS)

# Where a run's CPU goes (py-spy): PRESET and DAYS as for the benchmark; TABLES=metrics for the
# seven metrics tables the benchmark compares with dlt.
profile: $(BIN)/adwh
	$(UV) sync --frozen --python $(PYTHON) --group bench
	$(BIN)/python -m bench.profile $(or $(PRESET),large) $(or $(DAYS),30) $(TABLES)

# Where one pack's run spends its CPU (py-spy): PACK small accounts of the 1,000-account agency
# over DAYS, the run the daily schedule launches.
profile-pack: $(BIN)/adwh
	$(UV) sync --frozen --python $(PYTHON) --group bench
	$(BIN)/python -m bench.profile_pack $(or $(PACK),80) $(or $(DAYS),3)

dagster: $(BIN)/adwh
	$(BIN)/adwh ui

# The README's pictures of the Dagster UI after the demo (needs Debian's chromium package).
screenshots: $(BIN)/adwh
	$(UV) sync --frozen --python $(PYTHON) --group docs
	$(BIN)/python -m docs.screenshots

# The environments only: the homes (the per-user data folder, or ADWH_HOME) hold data.
clean:
	rm -rf .venv .venv-uv
