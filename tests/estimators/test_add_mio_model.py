"""The worked example of docs/architecture.md ("Adding an MIO model"): a formulation, a registry line and an
MIO job give a working estimator, exact against the DP with the same split budget."""
import importlib.util
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from opttrees import OptimalTreeClassifier
from opttrees import registry
from opttrees.registry import models

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "split_budget_oct.py"


@contextmanager
def _fresh_registry():
    """The registry as a new process has it (built-ins not yet registered), restored afterwards."""
    saved, flag = dict(registry.MODELS), registry._builtins_registered
    registry.MODELS.clear()
    registry._builtins_registered = False
    try:
        yield
    finally:
        registry.MODELS.clear()
        registry.MODELS.update(saved)
        registry._builtins_registered = flag


def _example():
    spec = importlib.util.spec_from_file_location("split_budget_oct", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 3)), 1)          # ties on every feature
    X[:, 2] = X[:, 0] + rng.choice([0.0, 1e-9], n)      # near-equal values
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.2, n) > 0.8, "a", "b")
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [1, 2])
def test_split_budget_mio_equals_the_dp_with_the_same_budget(seed, k):
    mod = _example()
    X, y = _data(seed)
    est = mod.SplitBudgetTreeClassifier(max_depth=2, max_splits=k, alpha=0.01, time_limit=60, solver="highs").fit(X, y)
    dp = OptimalTreeClassifier(max_depth=2, method="dp", max_num_nodes=k, alpha=0.01).fit(X, y)
    res = est.solve_result_
    assert res.proven_optimal and est.tree_.n_splits <= k
    assert res.objective == pytest.approx(dp.objective_, abs=1e-7)
    assert res.plan["start"] == "greedy" and res.plan["solver"] == "highs"
    assert set(est.predict(X)) <= {"a", "b"}


def test_the_budget_binds_and_the_registry_line_makes_it_a_model_type():
    mod = _example()
    X, y = _data(3)
    free = OptimalTreeClassifier(max_depth=2, method="dp", alpha=0.0).fit(X, y)
    assert free.tree_.n_splits > 1                       # so a budget of one split binds
    with _fresh_registry():
        mod.register()
        est = models()["oct-split-budget"].make(max_depth=2, max_splits=1, time_limit=60).fit(X, y)
    assert est.tree_.n_splits == 1 and est.solve_result_.proven_optimal
    assert est.solve_result_.objective > free.objective_ + 1e-9


def test_registering_before_the_first_use_keeps_the_built_in_types():
    """register_model before any models() call: the built-in types are all there with the new one (a registry
    filled on first use only when empty hid every built-in type before)."""
    with _fresh_registry():
        builtin = set(models())                          # models() first: the built-in types
    assert {"oct", "cart", "flow-oct", "spot-mio", "policy-tree"} <= builtin
    mod = _example()
    with _fresh_registry():
        mod.register()                                   # the first use of the registry
        assert set(models()) == builtin | {"oct-split-budget"}
        assert models()["oct-split-budget"].estimator is mod.SplitBudgetTreeClassifier
        # a user's type of a built-in name replaces it, also when registered first
        registry.MODELS.clear()
        registry._builtins_registered = False
        registry.register_model("oct", mod.SplitBudgetTreeClassifier, "mine")
        assert models()["oct"].description == "mine" and set(models()) == builtin
    assert "oct-split-budget" not in models() and models()["oct"].estimator.__name__ == "OptimalTreeClassifier"
