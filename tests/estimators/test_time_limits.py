"""time_limit is the wall time of the whole fit (encoding, warm start, build, hand-off, solve, extraction).

For every model type of the spec registry that uses a solver, a fit with a 3 s limit on data it could not
finish in 3 s must end within max(2 s, 5 %) of the limit. Builds that would run past the limit are
abandoned (the start tree is returned); local search stops starting restarts.
"""
import re
import time
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from opttrees.estimators import FlowOCTClassifier, OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.experiments.spo_data import shortest_path_data
from opttrees.spec import MODELS, _register_builtin

LIMIT = 3.0
SLACK = max(2.0, 0.05 * LIMIT)


def _noisy(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n) > 0).astype(int)
    return X, y


def _noisy_regression(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)
    return X, X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n)


def _trial(n, p, seed=0):
    """Observational data for a prescriptive tree: X and the two-column target [treatment, outcome]."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(2)
    t = rng.integers(0, 2, n)
    return X, np.column_stack([t, X[:, 0] * t + X[:, 1] + rng.normal(size=n)])


def _robust_data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 10, size=(300, 6)).astype(float)
    y = (X[:, 0] + X[:, 1] * X[:, 2] / 5 + 2 * rng.normal(size=300) > 9).astype(int)
    return X, y


def _spo_data():
    d = shortest_path_data(n=200, deg=4, noise=0.5, p=5, seed=0)
    return d.X, d.C, d.problem


# model type -> (model params, data); each runs well past 3 s without a limit (proofs take minutes)
CASES = {
    # the DP start and bound ("auto") prove this one at once since the continuous DP: the CART start keeps it long
    "oct": lambda: ({"max_depth": 2, "warm_start": "greedy", "dp_bound": False}, _noisy(300, 6)),
    # the DP start and bound ("auto") prove this one in seconds: the CART start keeps it a long solve
    "flow-oct": lambda: ({"max_depth": 3, "warm_start": "greedy", "dp_bound": False}, _noisy(400, 8)),
    "benders-oct": lambda: ({"max_depth": 3}, _noisy(1000, 10)),
    "robust-oct": lambda: ({"max_depth": 2, "rho": 0.9, "lam": 0.9}, _robust_data()),
    "spot-mio": lambda: ({"max_depth": 2, "min_samples_leaf": 5}, _spo_data()),
    "ort-mio": lambda: ({"max_depth": 2, "loss": "absolute"}, _noisy_regression(300, 6)),
    "opt-mio": lambda: ({"max_depth": 2}, _trial(120, 4)),
}


def _solver_models():
    if not MODELS:
        _register_builtin()
    return sorted(name for name, e in MODELS.items()
                  if "solver" in e.defaults() and e.fixed.get("method", "mio") == "mio"
                  and name not in ("oct-local-search", "cart", "spot", "ort", "ort-linear"))


def test_every_solver_model_type_has_a_case():
    assert set(_solver_models()) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_time_limit_covers_the_whole_fit(name):
    if not MODELS:
        _register_builtin()
    params, data = CASES[name]()
    entry = MODELS[name]
    if name == "spot-mio":
        X, C, problem = data
        params = {**params, "decision_problem": problem}
        data = (X, C)
    if name == "ort-mio":   # numba compiles the local-search kernels once per installation: not part of a fit
        OptimalTreeRegressor(max_depth=1, n_restarts=1, loss="absolute").fit(*_noisy_regression(20, 3))
    est = entry.make(**params, time_limit=LIMIT)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        entry.fit(est, *data)
    wall = time.perf_counter() - t0
    res = est.solve_result_
    assert wall <= LIMIT + SLACK, f"{name}: {wall:.2f} s for time_limit={LIMIT} ({est.fit_timings_}, {res.timings})"
    # on a loaded machine the limit may pass before the solver starts: then the solver has no solution (the fit
    # returns its start tree, test_a_build_longer_than_the_limit_is_abandoned_for_the_start_tree)
    assert est.fit_status_ == "time_limit" and res.termination == "time_limit", (est.fit_status_, res.status)
    assert res.status == ("time_limit" if res.has_solution else "no_solution"), res.status
    assert not res.proven_optimal
    assert est.tree_.n_leaves >= 1
    if name != "spot-mio" and res.has_solution:   # SPOT's result comes from fit_spot_mio (times its own stages)
        assert "build" in res.timings and res.timings["n_nonzeros"] > 0


def test_a_build_longer_than_the_limit_is_abandoned_for_the_start_tree():
    X, y = _noisy(600, 8)
    t0 = time.perf_counter()
    with pytest.warns(UserWarning, match="no solution"):
        est = FlowOCTClassifier(max_depth=2, binarization="midpoints", time_limit=1.0).fit(X, y)
    wall = time.perf_counter() - t0
    assert wall <= 1.0 + 2.0, est.fit_timings_
    res = est.solve_result_
    assert est.fit_status_ == "time_limit" and res.termination == "time_limit" and res.status == "no_solution"
    assert not res.has_solution and est.tree_.n_splits >= 1      # the CART start tree
    assert "during the model build" in est.solve_result_.message


def test_huge_explicit_binarisation_warns_with_the_model_size():
    X, y = _noisy(2000, 30)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FlowOCTClassifier(max_depth=2, binarization="midpoints", time_limit=0.5).fit(X, y)
    size = [str(w.message) for w in caught if "nonzeros" in str(w.message)]
    assert size and re.search(r"about [\d,]+ rows x [\d,]+ columns and [\d,]+ nonzeros", size[0]), size


@pytest.mark.parametrize("est", [
    OptimalTreeClassifier(max_depth=4, method="local-search", n_restarts=100000, time_limit=1.0),
    OptimalTreeRegressor(max_depth=4, n_restarts=100000, time_limit=1.0),
], ids=["classifier", "regressor"])
def test_local_search_stops_at_the_time_limit(est):
    X, y = _noisy(2000, 10)
    if isinstance(est, OptimalTreeRegressor):
        y = X[:, 0] + X[:, 1] * X[:, 2]
    clone(est).set_params(n_restarts=2).fit(X[:50], y[:50])     # compile the kernels outside the timed fit
    t0 = time.perf_counter()
    with pytest.warns(UserWarning, match="time_limit"):
        est.fit(X, y)
    wall = time.perf_counter() - t0
    assert wall <= 1.0 + 2.0
    assert est.fit_status_ == "time_limit" and est.tree_.n_leaves >= 2


def test_the_hand_off_to_the_solver_counts_against_the_time_limit():
    """A model with many rows: a limit that expires during compile_model stops there, with an honest result."""
    import pyomo.environ as pyo

    from opttrees.solvers import solve

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 5999)
    m.x = pyo.Var(m.I, within=pyo.Binary)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.x[(i + 1) % 6000] <= 1)
    m.o = pyo.Objective(expr=sum(m.x[i] for i in m.I), sense=pyo.maximize)
    res = solve(m, "highs", time_limit=1e-6)
    assert res.status == "no_solution" and not res.proven_optimal
    assert "handing the model to the solver" in res.message
    assert solve(m, "highs", time_limit=60).objective == 3000


def test_highs_presolve_is_skipped_when_it_cannot_fit_in_the_time_left():
    """HiGHS presolve ignores interrupts and its time limit: big models with little time left go without it."""
    from opttrees.solvers.highs import PRESOLVE_SECONDS_PER_MNZ, presolve_fits

    assert presolve_fits(5_000_000, None)                    # no limit: always
    assert presolve_fits(500_000, 0.1)                       # small models: presolve is quick
    need = 2 * PRESOLVE_SECONDS_PER_MNZ * 5.0
    assert not presolve_fits(5_000_000, need - 1) and presolve_fits(5_000_000, need + 1)
