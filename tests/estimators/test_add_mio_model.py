"""The worked example of docs/architecture.md ("Adding an MIO model"): a formulation, a registry line and an
estimator of at most 40 lines that only declares its model give a working estimator, exact against the DP with the
same split budget, with everything the built-ins have (classes_, n_features_in_, score, category columns, tidying,
side constraints, the DP's start and bound) and no further code."""
import ast
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
    assert res.plan["start"] in ("greedy", "dp") and res.plan["solver"] == "highs"
    # without the planner's DP: the greedy start and the solver alone, the same optimum
    plain = mod.SplitBudgetTreeClassifier(max_depth=2, max_splits=k, alpha=0.01, solver="highs", warm_start="greedy",
                                          dp_bound=False).fit(X, y)
    assert plain.solve_result_.plan["start"] == "greedy" and plain.solve_result_.plan["bound"] is None
    assert plain.solve_result_.objective == pytest.approx(dp.objective_, abs=1e-7)
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


def test_the_new_estimator_is_at_most_40_lines_and_declares_only():
    """The estimator's own code (class statement to its last line, docstring included) fits in 40 lines and
    orchestrates nothing: no fit, no controlled_fit, no prepare, no finish_fit of its own."""
    text = EXAMPLE.read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == "SplitBudgetTreeClassifier")
    source = ast.get_source_segment(text, node)
    assert node.end_lineno - node.lineno + 1 <= 40, node.end_lineno - node.lineno + 1
    for word in ("def fit(", "controlled_fit", "finish_fit", "classes_", "n_features_in_", "encode_categories"):
        assert word not in source


def test_the_new_estimator_gets_what_the_built_ins_have(monkeypatch):
    """classes_, n_features_in_, feature_names_in_, score, category columns, tidying, side constraints, the DP
    start and bound, fit_status_, from the template fit and the pipeline."""
    import pandas as pd

    import opttrees.estimators.skeleton as skeleton
    from opttrees.constraints import MaxFeatures

    mod = _example()
    X, y = _data(4, n=60)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["colour"] = pd.Categorical(np.where(X[:, 1] > 0.5, "red", "blue"))
    tidied = []
    real = skeleton.finish_fit

    def spy(est, tree, *args, **kwargs):
        tidied.append(type(est).__name__)
        return real(est, tree, *args, **kwargs)
    monkeypatch.setattr(skeleton, "finish_fit", spy)
    est = mod.SplitBudgetTreeClassifier(max_depth=2, max_splits=2, time_limit=60).fit(frame, y)
    assert tidied == ["SplitBudgetTreeClassifier"]                 # the epilogue's tidying and single-leaf check
    assert list(est.classes_) == ["a", "b"] and est.n_features_in_ == 5    # a, b, c and one feature per colour
    assert list(est.feature_names_in_) == ["a", "b", "c", "colour=blue", "colour=red"]
    assert est.tree_.encoding is not None and est.fit_status_ == "completed"
    assert 0.5 < est.score(frame, y) <= 1.0                         # predict re-encodes the raw table by name
    assert est.score(frame[["colour", "c", "b", "a"]], y) == est.score(frame, y)
    res = est.solve_result_
    assert res.plan["bound"] == "dp-bound" and res.proven_optimal   # the planner's DP bound over every midpoint
    assert est.feature_importances_.shape == (5,) and est.constraint_values_ == {}
    # side constraints: rows in the build, starts repaired, the returned tree checked
    one = mod.SplitBudgetTreeClassifier(max_depth=2, max_splits=3, time_limit=60,
                                        constraints=[MaxFeatures(1)]).fit(X, y)
    assert len(set(one.tree_.feature[one.tree_.feature >= 0])) <= 1
    assert one.constraint_values_ and one.solve_result_.proven_optimal
