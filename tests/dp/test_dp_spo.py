"""SPO trees by dynamic programming (opttrees.dp.spo): optimum == brute force over every tree; bad input."""

import numpy as np
import pytest

from opttrees.dp.spo import solve_dp_spo
from opttrees.errors import InputError
from opttrees.oracles import GridShortestPath
from opttrees.spo.objective import spot_objective
from oracles.spo import brute_spo


@pytest.mark.parametrize("seed,depth,alpha", [(0, 1, 0.0), (1, 2, 0.0), (2, 2, 0.01), (3, 0, 0.0)])
def test_spo_dp_equals_brute_force(seed, depth, alpha):
    rng = np.random.default_rng(seed)
    prob = GridShortestPath(2, 3)
    n = 24
    X = rng.integers(0, 4, (n, 2)).astype(float)
    C = 1 + rng.random((n, prob.n_decisions)) + np.outer(X[:, 0], np.linspace(0, 1, prob.n_decisions))
    tree, res = solve_dp_spo(X, C, prob, max_depth=depth, alpha=alpha, binarization="midpoints")
    from opttrees.encoding import Binarizer
    Xb = Binarizer(strategy="midpoints").fit_transform(X)
    from opttrees.spo.objective import spot_norm
    norm = spot_norm(prob, C)
    assert res.proven_optimal
    assert res.objective == pytest.approx(brute_spo(Xb, C, prob, depth, alpha, norm), abs=1e-9)
    # the reported objective is the returned tree's own SPOT objective
    assert spot_objective(prob, tree, X, C, alpha=alpha) == pytest.approx(res.objective, abs=1e-9)
    assert tree.depth <= depth


def test_spo_bad_problem_and_time_limit():
    X = np.zeros((5, 2))
    with pytest.raises(InputError, match="DecisionProblem"):
        solve_dp_spo(X, np.ones((5, 3)), object())
    prob = GridShortestPath(2, 2)
    with pytest.raises(InputError, match="max_depth"):
        solve_dp_spo(X, np.ones((5, prob.n_decisions)), prob, max_depth=9)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    C = 1 + rng.random((300, prob.n_decisions))
    tree, res = solve_dp_spo(X, C, prob, max_depth=3, time_limit=0.3)
    assert res.status in ("time_limit", "optimal")
    assert res.bound <= res.objective + 1e-12
