# One-command set-up: every target builds the local virtualenv it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# the package alone (make demo), then the test, plot and export extras (make test: ONNX and SHAP are tested)
STAMP := $(VENV)/.installed
DEV := $(VENV)/.installed-dev
# numba kernels compiled once after install (opttrees warmup); redone when a kernel module changes. The list of
# kernel files is opttrees/kernel_modules.py's (the one list; warmup and the cache fingerprints read it too)
WARM := $(VENV)/.warm
KERNELS := $(shell $(PY) opttrees/kernel_modules.py)

.PHONY: demo warmup test test-slow lint bench clean

# --no-compile: no .pyc for every installed module up front (Python writes one for each module it imports);
# halved the demo's install on 2 cores (about 80 -> 38 s)
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --no-compile --disable-pip-version-check -e .
	touch $(STAMP)

$(DEV): $(STAMP)
	$(BIN)/pip install -q --no-compile --disable-pip-version-check -e ".[dev,plot,export]"
	touch $(DEV)

$(WARM): $(STAMP) $(KERNELS)
	$(BIN)/opttrees warmup
	touch $(WARM)

warmup: $(WARM)

# the demo compiles only the kernels its fit calls, inside the fit (announced, counted in its time limit);
# `make warmup` / `make test` compile every kernel
demo: $(STAMP)
	$(BIN)/opttrees solve examples/iris_oct.yaml

# lint and types first: zero findings is part of a green test run
lint: $(DEV)
	$(BIN)/ruff check opttrees tests benchmarks examples
	$(BIN)/mypy opttrees

test: lint $(DEV) $(WARM)
	$(BIN)/python -m pytest -q -n 2 tests

test-slow: $(DEV) $(WARM)
	$(BIN)/python -m pytest -q -n 2 -m slow tests

bench: $(DEV)
	$(BIN)/python benchmarks/bench_oct_build.py

clean:
	rm -rf $(VENV) build *.egg-info results
