"""The exhaustive oracle itself (``oracles.exhaustive``): it agrees with the older, independent brute force of
``oracles.bruteforce``, its own tree scores its optimum, it follows opttrees' stated rules (zero weights, the
guarded midpoint, zero baselines), its generators make the data they promise, and it is fast enough."""
import time

import numpy as np
import pytest

from oracles.bruteforce import brute_force_cost
from oracles.exhaustive import (STYLES, baseline, guarded_mid, instance, n_splits_of, nested_predict, optimum,
                                optimum_over_feature_sets, tree_objective)


@pytest.mark.parametrize("seed", range(40))
def test_agrees_with_the_older_brute_force(seed):
    rng = np.random.default_rng([seed, 1])
    task = "classification" if seed % 2 else "regression"
    inst = instance(seed, task=task, n=(6, 10))
    depth, ml = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    alpha = float(rng.choice([0.0, 0.05]))
    nodes = [None, 1, 2, 3, 4][int(rng.integers(5))]
    o = optimum(inst["X"], inst["y"], task=task, max_depth=depth, min_samples_leaf=ml, alpha=alpha,
                sample_weight=inst["w"], max_num_nodes=nodes)
    k = o.kept
    w = None if inst["w"] is None else np.asarray(inst["w"])[k]
    want = brute_force_cost(inst["X"][k], np.asarray(inst["y"])[k], depth, nodes, alpha * o.baseline, ml, w,
                            "mis" if task == "classification" else "sq")
    assert o.cost == pytest.approx(want, rel=1e-9, abs=1e-9 * o.baseline)
    if o.tree is not None:   # the oracle's own tree keeps the rules and scores the optimum
        ids, pred = nested_predict(o.tree, inst["X"], inst["y"], inst["w"], task)
        own, sizes = tree_objective(ids, pred, inst["y"], task=task, n_splits=n_splits_of(o.tree), alpha=alpha,
                                    sample_weight=inst["w"])
        assert own == pytest.approx(o.objective, rel=1e-9, abs=1e-12)
        assert sizes.min() >= ml and n_splits_of(o.tree) <= (2 ** depth - 1 if nodes is None else nodes)


def test_guarded_midpoint_and_routing():
    a = 1.0
    b = np.nextafter(a, 2.0)
    assert guarded_mid(a, b) == b and a < b              # no float between: the upper value, a goes left
    X = np.array([[a], [a], [b], [b]])
    o = optimum(X, np.array([0, 0, 1, 1]), max_depth=1)
    assert o.objective == 0.0 and o.tree[2] == b
    X = 1e6 + np.array([[0.0], [1e-9], [2e-9], [3e-9]])
    assert optimum(X, np.array([0, 1, 0, 1]), max_depth=3).objective == 0.0


def test_zero_weight_rows_are_absent_and_zero_baselines_are_one():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2)).round(1)
    y = rng.integers(0, 3, 12)
    w = rng.integers(0, 3, 12).astype(float)
    w[:3] = [0.0, 1.0, 2.0]
    full = optimum(X, y, max_depth=2, min_samples_leaf=2, sample_weight=w)
    kept = optimum(X[w > 0], y[w > 0], max_depth=2, min_samples_leaf=2, sample_weight=w[w > 0])
    assert full.objective == kept.objective and full.baseline == kept.baseline
    # a pure target: L-hat would be 0, opttrees uses 1.0 (classification) and a constant y is 1.0 too
    assert baseline(np.array([1, 1, 1]), np.ones(3), "classification") == 1.0
    y6 = np.array([1e6] * 4 + [np.nextafter(1e6, 2e6)] * 4)
    assert baseline(y6, np.ones(8), "regression") == 1.0
    assert baseline(np.array([0.0, 1e-9]), np.ones(2), "regression") == pytest.approx(0.5e-18)


def test_feature_restrictions():
    X = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [1, 1], [2, 1], [3, 1]], float)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    assert optimum(X, y, max_depth=2, features=[0]).objective == pytest.approx(1.0)
    assert optimum(X, y, max_depth=2, alpha=0.01).objective == pytest.approx(0.01)
    # the item 3: feature 1 forbidden at the root: feature 0 first, then feature 1 below
    o = optimum(X, y, max_depth=2, alpha=0.01, allowed_at_depth=lambda d: [0] if d == 0 else None)
    assert o.objective == pytest.approx(0.03)
    assert optimum_over_feature_sets(X, y, lambda S: len(S) <= 1, max_depth=2).objective == 0.0
    assert optimum(X, y, max_depth=2, min_leaf_weight=5.0).objective == 1.0


def test_generators_make_the_promised_data():
    styles, weights, classes = set(), set(), set()
    one_ulp = nano = False
    for seed in range(300):
        inst = instance(seed)
        styles.update(inst["style"].split("+"))
        weights.add(inst["weights"])
        classes.add(int(np.max(inst["y"])) + 1)
        for j in range(inst["X"].shape[1]):
            v = np.unique(inst["X"][:, j])
            one_ulp |= bool(np.any(np.nextafter(v[:-1], np.inf) == v[1:]))
            nano |= bool(np.any(np.isclose(np.diff(v), 1e-9, rtol=1e-3, atol=0)))
        w = inst["w"]
        keep = np.ones(len(inst["y"]), bool) if w is None else np.asarray(w) > 0
        assert len(np.unique(np.asarray(inst["y"])[keep])) >= 2
    assert styles >= set(STYLES) and weights == {"none", "int", "float", "zeros"} and classes >= {2, 3, 4}
    assert one_ulp and nano
    offsets = [instance(s, task="regression")["y"] for s in range(30)]
    assert any(np.min(y) > 1e5 for y in offsets)


def test_depth_three_is_fast():
    inst = instance(5, n=(16, 16), p=(3, 3))
    t0 = time.perf_counter()
    for ml in (1, 2):
        for task in ("classification", "regression"):
            y = inst["y"] if task == "classification" else np.asarray(inst["y"], float) + inst["X"][:, 0]
            optimum(inst["X"], y, task=task, max_depth=3, min_samples_leaf=ml, sample_weight=inst["w"])
    assert time.perf_counter() - t0 < 4.0      # four solves; about 0.1 s in all on an idle core
