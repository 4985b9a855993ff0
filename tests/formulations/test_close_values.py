"""Values that are close: no false optimum, no crash (the MIO routes axis-parallel splits on the rank scale).

Before: ``feature_epsilon`` rounded the scaled values to 9 decimals, so 500000 and 500000.0002 on a [0, 1e6]
range merged and both solvers proved a tree with 2 errors "optimal" where 0 errors is possible; with 1,000+
distinct values the epsilon rows sat inside the solvers' feasibility tolerance and ``extract`` raised
VerificationError. Every "optimal" below must equal brute force, and nothing may raise.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles.bruteforce import brute_force_objective
from opttrees import OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.data.prepared import prepare, rank_scale, split_between
from opttrees.errors import VerificationError, VerificationWarning
from opttrees.formulations import OCT
from opttrees.solvers import solve

SOLVERS = ["highs", "scip"]
CLOSE = np.array([0, 250000, 500000, 500000.0002, 750000, 1e6]).reshape(-1, 1)
CLOSE_Y = np.array([0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("warm_start,dp_bound", [("greedy", False), (None, False), ("dp", True), (None, True)])
def test_close_values_split_and_proof(solver, warm_start, dp_bound):
    clf = OptimalTreeClassifier(max_depth=1, method="mio", solver=solver, time_limit=30, warm_start=warm_start,
                                dp_bound=dp_bound).fit(CLOSE, CLOSE_Y)
    res = clf.solve_result_
    assert clf.objective_ == pytest.approx(0.0, abs=1e-9)
    assert res.status == "optimal" and res.proven_optimal
    assert res.objective == pytest.approx(clf.objective_, abs=1e-9)
    assert 500000 < clf.tree_.threshold[0] <= 500000.0002
    assert (clf.predict(CLOSE) == CLOSE_Y).all()


@pytest.mark.parametrize("solver", SOLVERS)
def test_close_values_regressor_absolute(solver):
    y = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0])
    reg = OptimalTreeRegressor(max_depth=1, method="mio", loss="absolute", solver=solver, time_limit=30).fit(CLOSE, y)
    assert reg.objective_ == pytest.approx(0.0, abs=1e-9)
    assert reg.solve_result_.proven_optimal
    assert np.allclose(reg.predict(CLOSE), y)


@pytest.mark.parametrize("solver", SOLVERS)
def test_float_noise_values(solver):
    # 0.1 + 0.2 and 0.3 are neighbouring floats: no midpoint lies between them
    x = np.array([0.1, 0.2, 0.3, 0.1 + 0.2, 0.4, 0.5]).reshape(-1, 1)
    y = np.array([0, 0, 0, 1, 1, 1])
    ref = brute_force_objective(x, y, 1)
    assert ref == 0.0
    clf = OptimalTreeClassifier(max_depth=1, method="mio", solver=solver, time_limit=30, warm_start=None).fit(x, y)
    assert clf.objective_ == pytest.approx(0.0, abs=1e-9) and clf.solve_result_.proven_optimal
    assert clf.tree_.threshold[0] == 0.1 + 0.2     # x < 0.30000000000000004 sends 0.3 left, 0.1 + 0.2 right
    assert (clf.predict(x) == y).all()


def test_heuristics_separate_close_values():
    for method in ("greedy", "local-search", "dp"):
        kw = {"binarization": "midpoints"} if method == "dp" else {}
        clf = OptimalTreeClassifier(max_depth=1, method=method, time_limit=30, **kw).fit(CLOSE, CLOSE_Y)
        assert clf.objective_ == pytest.approx(0.0, abs=1e-12), method


@given(st.floats(1e-12, 1e-12), st.data())
def test_split_between_is_exact(_, data):
    lo = data.draw(st.floats(-1e300, 1e300, allow_nan=False))
    hi = data.draw(st.floats(-1e300, 1e300, allow_nan=False).filter(lambda v: v > lo))
    t = split_between(lo, hi)
    assert lo < t <= hi
    nxt = float(np.nextafter(lo, np.inf))
    assert lo < split_between(lo, nxt) <= nxt


def test_rank_scale_keeps_every_distinct_value():
    x = np.array([[0.3], [0.1 + 0.2], [0.3], [1e6], [1e6 + 1e-9]])
    R, gap, values = rank_scale(x)
    assert len(values[0]) == 4 and gap[0] == pytest.approx(1 / 3)
    assert np.allclose(R[:, 0], [0, 1 / 3, 0, 2 / 3, 1])


def gapped_instance(seed, n=7):
    """One feature whose neighbouring values are 1e-12 .. 1e-3 of the range apart, and a noise feature."""
    rng = np.random.default_rng(seed)
    gaps = 10.0 ** rng.uniform(-12, -3, n - 1)
    gaps[rng.integers(n - 1)] = 1.0                     # one wide gap sets the range
    x0 = 1000.0 + np.concatenate([[0.0], np.cumsum(gaps)]) * 1e5
    x1 = rng.integers(0, 3, n).astype(float)
    X = np.column_stack([rng.permutation(x0), x1])
    y = rng.integers(0, 2, n)
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[0]
    return X, y


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_tiny_gaps_equal_brute_force(solver, seed):
    X, y = gapped_instance(seed)
    ref = brute_force_objective(X, y, 2)
    for warm_start in ("greedy", None):
        with warnings.catch_warnings():
            warnings.simplefilter("error", VerificationWarning)
            clf = OptimalTreeClassifier(max_depth=2, method="mio", solver=solver, time_limit=30,
                                        warm_start=warm_start).fit(X, y)
        res = clf.solve_result_
        assert res.status == "optimal"
        assert clf.objective_ == pytest.approx(ref, abs=1e-9), (warm_start, clf.tree_)


def test_oct_model_on_rank_scale_many_distinct_values():
    """1,200 distinct values per feature: the rows' gaps are 1/1199, not 1e-6 (checked on the model itself)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 2)) * 1e-3 + 5.0
    y = (X[:, 0] + X[:, 1] > 10.0).astype(int)
    f = OCT(prepare(X, y), 1)
    assert f.structure.eps_min == pytest.approx(1 / 1199)
    assert np.allclose(np.sort(f.structure.Xr[:, 0]), np.arange(1200) / 1199)


def test_mismatch_warns_and_is_not_a_proof(monkeypatch):
    X, y = CLOSE, CLOSE_Y
    f = OCT(prepare(X, y), 1)
    res = solve(f, "highs", time_limit=20)
    assert res.proven_optimal
    true_objective = f.tree_objective
    monkeypatch.setattr(f, "tree_objective", lambda tree: true_objective(tree) + 0.5)   # a tolerance effect
    with pytest.warns(VerificationWarning, match="not a proof"):
        tree = f.extract()
    assert tree is not None
    assert res.status == "unverified" and not res.proven_optimal and res.proof is None
    assert res.objective == pytest.approx(0.5)
    f.strict = True
    with pytest.raises(VerificationError):
        f.extract()


def test_start_beating_the_mio_is_not_a_proof():
    from opttrees.solvers.result import finish

    res = finish("highs", "1", "optimal", 0.5, 0.5, 1.0, 3, [])
    assert res.proven_optimal
    res.replaced(0.25, 1, "the warm-start tree beats the solver's tree")
    assert res.status == "unverified" and not res.proven_optimal and res.proof is None
    assert res.objective == 0.25 and res.bound is None


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_make_classification_1500_depth2_returns_verified_tree(solver):
    from sklearn.datasets import make_classification

    X, y = make_classification(1500, 4, n_informative=3, n_redundant=0, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", VerificationWarning)
        clf = OptimalTreeClassifier(max_depth=2, method="mio", solver=solver, time_limit=120).fit(X, y)
    res = clf.solve_result_
    assert res.has_solution and res.status != "unverified"
    assert res.objective == pytest.approx(clf.objective_, abs=1e-9)
    errors = (clf.predict(X) != y).sum()
    assert clf.objective_ == pytest.approx(errors / min(np.bincount(y)), abs=1e-9)


@given(st.lists(st.floats(-1e300, 1e300, allow_nan=False), min_size=1, max_size=30), st.data())
def test_binarizer_midpoints_separate_neighbouring_floats(values, data):
    """Every binarised threshold lies in (a, b] for its adjacent distinct values a < b, also for floats one step
    apart (their midpoint rounds onto a) and near the overflow limit."""
    from opttrees.data.binarizers import midpoints
    v = np.asarray(values)
    k = data.draw(st.integers(0, len(v) - 1))
    v = np.append(v, np.nextafter(v[k], np.inf))          # a neighbouring float of one value
    u = np.unique(v)
    m = midpoints(v)
    assert len(m) == len(u) - 1
    assert np.all(u[:-1] < m) and np.all(m <= u[1:])


NEIGHBOURS = [np.array([1.0, (0.1 + 0.2) / 0.3]), np.array([0.3, 0.1 + 0.2]),
              np.array([1e15, np.nextafter(1e15, np.inf)])]


@pytest.mark.parametrize("vals", NEIGHBOURS, ids=["1-ulp", "0.3", "1e15"])
@pytest.mark.parametrize("make", ["dp-midpoints", "dp-quantile", "mio", "flow", "benders"])
def test_values_one_float_apart_are_split_and_an_optimum_is_one(vals, make):
    """Before: the midpoint of two neighbouring floats rounded onto the lower one, so no column separated them; the
    DP, FlowOCT and BendersOCT called the 50%-accuracy stump optimal and the MIO's DP bound contradicted its
    tree. Now every exact method separates them, and only at zero errors is it called optimal."""
    from opttrees.estimators.flow import BendersOCTClassifier, FlowOCTClassifier
    rng = np.random.default_rng(0)
    x = rng.choice(vals, 200)
    X = np.c_[x, rng.normal(size=200)]
    y = (x > vals.min()).astype(int)
    est = {"dp-midpoints": lambda: OptimalTreeClassifier(max_depth=1, method="dp", binarization="midpoints"),
           "dp-quantile": lambda: OptimalTreeClassifier(max_depth=1, method="dp", binarization="quantile"),
           "mio": lambda: OptimalTreeClassifier(max_depth=1, time_limit=30),
           "flow": lambda: FlowOCTClassifier(max_depth=1, time_limit=30),
           "benders": lambda: BendersOCTClassifier(max_depth=1, time_limit=30)}[make]()
    with warnings.catch_warnings():
        warnings.simplefilter("error", VerificationWarning)
        est.fit(X, y)
    assert est.score(X, y) == 1.0
    assert est.solve_result_.status == "optimal"


def test_a_split_is_matched_to_the_nearest_binarised_threshold():
    """Thresholds of values 1e-9 apart are all within np.isclose of each other: a split maps to its own column
    (the one routing the rows as it does), not the first close one."""
    from opttrees.data.binarizers import Binarizer
    x = 1 + np.arange(4) * 1e-9
    X = np.c_[np.repeat(x, 3)]
    b = Binarizer(strategy="midpoints").fit(X)
    for c, t in enumerate(b.threshold_):
        assert b.encode_split(0, float(t)) == c
        assert b.encode_split(0, float(t) + 1e-13) == c            # recomputed elsewhere: the nearest
        assert b.encode_split(0, float(t) + 1e-13, X=X) == c       # by routing
