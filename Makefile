# One-command set-up: every target builds the local virtualenv it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# numba kernels compiled once after install (opttrees warmup); redone when a kernel module changes
WARM := $(VENV)/.warm
KERNELS := $(wildcard opttrees/heuristics/kernels/*.py opttrees/heuristics/linear_leaves.py opttrees/dp/engine.py \
                      opttrees/dp/continuous_kernels.py opttrees/dp/pareto_kernels.py opttrees/dp/stats_kernels.py \
                      opttrees/prescriptive/_kernels.py)

.PHONY: demo warmup test test-slow lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[dev,plot]"
	touch $(STAMP)

$(WARM): $(STAMP) $(KERNELS)
	$(BIN)/opttrees warmup
	touch $(WARM)

warmup: $(WARM)

demo: $(WARM)
	$(BIN)/opttrees solve examples/iris_oct.yaml

# lint and types first: zero findings is part of a green test run
lint: $(STAMP)
	$(BIN)/ruff check opttrees tests benchmarks examples
	$(BIN)/mypy opttrees

test: lint $(WARM)
	$(BIN)/python -m pytest -q -n 2 tests

test-slow: $(WARM)
	$(BIN)/python -m pytest -q -n 2 -m slow tests

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_oct_build.py

clean:
	rm -rf $(VENV) build *.egg-info results
