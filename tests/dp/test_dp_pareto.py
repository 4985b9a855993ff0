"""Pareto-front dynamic program (opttrees.constraints.pareto): F1 and demographic parity == brute force over all trees."""
import numpy as np
import pytest

from opttrees.constraints.pareto import DemographicParityTask, F1Task, nondominated, solve_dp_pareto
from opttrees.errors import InputError


def all_values(Z, contrib, depth):
    """Value vectors of every labelled tree of depth <= depth on binary columns (0 left)."""
    def rec(rows, d):
        out = [contrib[k, rows].sum(axis=0) for k in range(contrib.shape[0])]
        if d == 0:
            return out
        for f in range(Z.shape[1]):
            go = Z[rows, f] == 1
            if go.all() or not go.any():
                continue
            L, R = rec(rows[~go], d - 1), rec(rows[go], d - 1)
            out += [a + b for a in L for b in R]
        return out
    return np.array(rec(np.arange(Z.shape[0]), depth))


def data(seed, n=16, p=3):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (n, p))
    y = (Z[:, 0] & Z[:, 1] | (rng.random(n) < 0.25)).astype(int)
    return Z, y, rng


@pytest.mark.parametrize("seed,depth", [(0, 1), (1, 2), (2, 2), (3, 0)])
def test_f1_equals_brute_force(seed, depth):
    Z, y, rng = data(seed)
    task = F1Task()
    tree, res, front = solve_dp_pareto(Z, y, task, max_depth=depth)
    allv = all_values(Z, task.contrib, depth)
    assert res.objective == pytest.approx(task.score(allv).min(), abs=1e-12)
    # the returned tree really has that F1
    pred = tree.predict(Z.astype(float))
    tp = np.sum((pred == 1) & (y == 1))
    fp = np.sum((pred == 1) & (y == 0))
    fn = np.sum((pred == 0) & (y == 1))
    assert 1 - 2 * tp / (2 * tp + fp + fn) == pytest.approx(res.objective)
    # the front is exactly the nondominated set of all trees' values
    ref = allv[nondominated(allv)]
    assert sorted(map(tuple, ref)) == sorted(map(tuple, front))


@pytest.mark.parametrize("seed,depth,delta", [(0, 1, 0.1), (1, 2, 0.05), (2, 2, 0.2), (4, 2, 0.0)])
def test_demographic_parity_equals_brute_force(seed, depth, delta):
    Z, y, rng = data(seed)
    a = rng.integers(0, 2, len(y))
    a[:2] = [0, 1]
    task = DemographicParityTask(a, delta=delta)
    tree, res, front = solve_dp_pareto(Z, y, task, max_depth=depth)
    allv = all_values(Z, task.contrib, depth)
    assert res.objective == pytest.approx(task.score(allv).min(), abs=1e-12)
    pred = tree.predict(Z.astype(float))
    gap = abs((pred[a == 1] == 1).mean() - (pred[a == 0] == 1).mean())
    assert gap <= delta + 1e-9
    assert (pred != y).sum() == pytest.approx(res.objective)


def test_pareto_bad_input():
    Z, y, _ = data(0)
    with pytest.raises(InputError, match="task"):
        solve_dp_pareto(Z, y, "f1")
    with pytest.raises(InputError, match="group"):
        solve_dp_pareto(Z, y, DemographicParityTask(np.zeros(3)))
    with pytest.raises(InputError, match="Xb"):
        solve_dp_pareto(Z + 0.5, y, F1Task())


# ------------------------------------------------------------------ the pruned search (return_front=False)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from opttrees.constraints.fairness_dp import GroupFairnessTask  # noqa: E402


def all_values_ml(Z, task, depth, ml):
    """Every labelled tree's value vector (leaf vectors via the task, so per-leaf constants count), with every
    leaf holding at least ``ml`` rows."""
    def rec(rows, d):
        out = list(task.leaf_vectors(rows)) if len(rows) >= ml else []
        if d == 0:
            return out
        for f in range(Z.shape[1]):
            go = Z[rows, f] == 1
            if go.sum() < max(1, ml) or (~go).sum() < max(1, ml):
                continue
            L, R = rec(rows[~go], d - 1), rec(rows[go], d - 1)
            out += [a + b for a in L for b in R]
        return out
    return np.array(rec(np.arange(Z.shape[0]), depth))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(0, 3), delta=st.sampled_from([0.0, 0.05, 0.15, 0.3]),
       notion=st.sampled_from(["parity", "odds", "conditional"]), alpha=st.sampled_from([0.0, 0.0, 0.05]),
       ml=st.integers(1, 3), weighted=st.booleans())
def test_pruned_fairness_search_equals_brute_force(seed, depth, delta, notion, alpha, ml, weighted):
    """The budget-pruned search (root merge without a front, fronts cut at the incumbent) finds the optimum of
    every labelled tree, and its tree has that score and meets every gap."""
    rng = np.random.default_rng(seed)
    n, p = 14, 3
    Z = rng.integers(0, 2, (n, p))
    y = ((Z[:, 0] ^ Z[:, 1]) | (rng.random(n) < 0.3)).astype(int)
    g = rng.integers(0, 2, n).astype(bool)
    g[:2] = [False, True]
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    if notion == "parity":
        pairs = [(g, ~g, delta)]
    elif notion == "odds":
        pos = y == 1
        pairs = [(g & pos, ~g & pos, delta), (g & ~pos, ~g & ~pos, delta)]
    else:
        legit = Z[:, 2] == 1
        pairs = [(g & legit, ~g & legit, delta), (g & ~legit, ~g & ~legit, delta)]
    ref_task = GroupFairnessTask(pairs, alpha=alpha)
    ref_task.prepare(y, n, np.ones(n) if w is None else w)
    best = ref_task.score(all_values_ml(Z, ref_task, depth, ml)).min()
    task = GroupFairnessTask(pairs, alpha=alpha)
    tree, res, front = solve_dp_pareto(Z, y, task, max_depth=depth, min_samples_leaf=ml, sample_weight=w,
                                       return_front=False)
    assert front is None and res.status == "optimal"
    assert res.objective == pytest.approx(best, abs=1e-9)
    # the tree itself: route the rows, sum its leaves' vectors, score them
    leaf = tree.apply(Z.astype(float))
    lab = tree.label[leaf]
    V = sum(task.contrib[lab[i], i] for i in range(n)) + (
        0 if task.leaf_extra is None else task.leaf_extra * len(np.unique(leaf)))
    assert task.score(V[None])[0] == pytest.approx(best, abs=1e-9)
    assert np.bincount(leaf).max() >= 1 and min(np.bincount(leaf)[np.unique(leaf)]) >= ml
    # the front search agrees
    tree2, res2, _ = solve_dp_pareto(Z, y, GroupFairnessTask(pairs, alpha=alpha), max_depth=depth,
                                     min_samples_leaf=ml, sample_weight=w)
    assert res2.objective == pytest.approx(best, abs=1e-9)


def test_pruned_search_time_limit_returns_best_so_far():
    """A zero time limit still returns a feasible tree (the best found before the deadline) and an honest status."""
    rng = np.random.default_rng(0)
    Z = rng.integers(0, 2, (300, 12))
    y = (Z[:, 0] | Z[:, 1]).astype(int)
    g = rng.integers(0, 2, 300).astype(bool)
    tree, res, _ = solve_dp_pareto(Z, y, GroupFairnessTask([(g, ~g, 0.05)]), max_depth=3, time_limit=0.0,
                                   return_front=False)
    assert res.status == "time_limit" and res.bound is None
    pred = tree.predict(Z.astype(float))
    assert abs((pred[g] == 1).mean() - (pred[~g] == 1).mean()) <= 0.05 + 1e-9


@pytest.mark.parametrize("return_front", [False, True])
def test_ctrl_c_inside_the_search_stops_it_with_the_best_tree_so_far(monkeypatch, return_front):
    """A real SIGINT in the middle of the front search (the shared driver's Ctrl-C handling) ends it with status
    interrupted and the deepest finished depth's tree, instead of a KeyboardInterrupt; the flag is clear after."""
    import os
    import signal

    from opttrees.constraints import pareto
    from opttrees.interrupt import STOP
    rng = np.random.default_rng(0)
    Z = rng.integers(0, 2, (300, 12))
    y = (Z[:, 0] | Z[:, 1]).astype(int)
    g = rng.integers(0, 2, 300).astype(bool)
    calls = [0]
    front = pareto._Search.front

    def counting(self, rows, d, budget):
        calls[0] += 1
        if calls[0] == 40:
            os.kill(os.getpid(), signal.SIGINT)
        return front(self, rows, d, budget)

    monkeypatch.setattr(pareto._Search, "front", counting)
    task = GroupFairnessTask([(g, ~g, 0.05)])
    if return_front:      # no anytime tree without the whole root front: a clear error, not a traceback
        with pytest.raises(InputError, match="stopped \\(interrupted\\)"):
            solve_dp_pareto(Z, y, task, max_depth=3, return_front=True)
    else:
        tree, res, _ = solve_dp_pareto(Z, y, task, max_depth=3, return_front=False)
        assert res.status == "interrupted" and res.bound is None and calls[0] >= 40
        pred = tree.predict(Z.astype(float))
        assert abs((pred[g] == 1).mean() - (pred[~g] == 1).mean()) <= 0.05 + 1e-9
    assert not STOP.is_set()
