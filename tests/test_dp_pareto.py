"""Pareto-front dynamic program (opttrees.dp.pareto): F1 and demographic parity == brute force over all trees."""
import numpy as np
import pytest

from opttrees.dp.pareto import DemographicParityTask, F1Task, nondominated, solve_dp_pareto
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
