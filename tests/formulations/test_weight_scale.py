"""The OCT MIO does not depend on the units of sample_weight: weights times 1e-9 or 1e9 give the same optimum as
unscaled ones (the model divides them by a power of two near their mean). Before, HiGHS called a worse tree
optimal with weights times 1e9 (found by the brute-force suite, tests/exact)."""
import numpy as np
import pytest

from oracles.bruteforce import brute_force_objective
from opttrees import OptimalTreeClassifier
from opttrees.data.prepared import prepare
from opttrees.formulations.oct import OCT


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("factor", [1e-9, 1e9])
@pytest.mark.parametrize("seed", [8, 9, 3])
def test_optimum_does_not_depend_on_the_weights_units(seed, factor, solver):
    r = np.random.default_rng(seed)
    n = int(r.integers(8, 13))
    X = r.integers(0, 5, (n, 2)).astype(float)
    y = r.integers(0, 3, n)
    w = r.integers(0, 4, n).astype(float)
    if w.sum() == 0:
        w[:] = 1.0
    clf = OptimalTreeClassifier(max_depth=2, dp_bound=False, warm_start="greedy", solver=solver, time_limit=60)
    clf.fit(X, y, sample_weight=w * factor)
    keep = w > 0
    want = brute_force_objective(X[keep], np.unique(y[keep], return_inverse=True)[1], 2, sample_weight=w[keep])
    assert clf.solve_result_.status == "optimal"
    assert clf.objective_ == pytest.approx(want, abs=1e-9)
    assert clf.solve_result_.objective == pytest.approx(clf.objective_, abs=1e-9)


def test_the_scale_is_an_exact_power_of_two_near_the_mean():
    X = np.arange(8, dtype=float).reshape(-1, 1)
    y = np.array([0, 1] * 4)
    form = OCT(prepare(X, y, sample_weight=np.full(8, 3e9)), 1)
    assert form.weight_scale == 2.0 ** 31 and np.log2(form.weight_scale) % 1 == 0
