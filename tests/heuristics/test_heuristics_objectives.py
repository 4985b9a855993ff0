"""Shared objectives: regression baselines and the one-code-path tree objective."""
import numpy as np
import pytest

from opttrees import objectives as obj
from opttrees.data.prepared import prepare
from opttrees.heuristics import local_search


def test_regression_baselines_and_losses():
    y = np.array([1.0, 2.0, 4.0, 10.0])
    w = np.array([1.0, 2.0, 1.0, 1.0])
    mu = np.average(y, weights=w)
    assert obj.squared_baseline(y, w) == pytest.approx(np.sum(w * (y - mu) ** 2))
    assert obj.weighted_median(y, w) == 2.0
    assert obj.absolute_baseline(y, w) == pytest.approx(np.sum(w * np.abs(y - 2.0)))
    assert obj.squared_baseline(np.ones(5)) == 1.0 and obj.absolute_baseline(np.ones(5)) == 1.0
    leaf = np.array([0, 0, 1, 1])
    sq = obj.node_losses(leaf, y, 2, "squared", sample_weight=w)
    assert sq[0] == pytest.approx(2 / 3) and sq[1] == pytest.approx(18.0)
    ab = obj.node_losses(leaf, y, 2, "absolute")
    assert ab[0] == pytest.approx(1.0) and ab[1] == pytest.approx(6.0)


def test_tree_objective_agrees_with_classification_objective():
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = rng.integers(0, 3, 80)
    t = local_search(prepare(X, y), 2, 0.01, n_restarts=5, random_state=0)
    a = obj.tree_objective(t, X, y, "misclassification", 0.01, n_classes=3)
    b = obj.classification_objective(t, X, y, 3, alpha=0.01)
    c = obj.tree_objective(t, X, y, "misclassification", 0.01, n_classes=3, refit_leaves=False)
    assert a == pytest.approx(b) == pytest.approx(c)
    assert obj.tree_complexity(t) == t.n_splits
