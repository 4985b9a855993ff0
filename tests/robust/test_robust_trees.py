"""RobustOCT: zero budget == nominal; optimum == exhaustive adversary; adversary == enumeration; calibration."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from opttrees.data.binarized import BinarizedData, ThermometerData
from opttrees.errors import InputError
from opttrees.estimators.robust import RobustTreeClassifier
from opttrees.formulations.flow import FlowOCT
from opttrees.formulations.robust import RobustOCT
from opttrees.robust import (ShiftSet, attack, budget, calibrate, gamma_binary, gamma_bounded, gamma_categorical,
                             gamma_unbounded, sample_shifts, truncated_root)
from opttrees.robust.calibration import paper_poly_22, paper_poly_25
from opttrees.solvers import solve
from oracles.robust import depth1_trees, exhaustive_worst_case

SOLVERS = ["highs", "scip"]


# ------------------------------------------------------------------------------------------ the model
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_robust_optimum_equals_best_depth1_tree_under_exhaustive_adversary(solver, seed):
    rng = np.random.default_rng(seed)
    n, F, K = 5, 2, 2
    X = rng.integers(0, 4, (n, F)).astype(float)
    y = (X[:, 0] >= 2).astype(int)
    y[rng.integers(n)] ^= 1
    S = ShiftSet(rng.uniform(1, 2, (n, F)), [1.2, 2.1, 3.3][seed])
    f = RobustOCT(ThermometerData.from_integer(X, y, K), 1, S)
    res = solve(f, solver=solver)
    assert res.proven_optimal
    f.extract()
    ref = max(exhaustive_worst_case(t, X, y, S) for t in depth1_trees(X, K))
    assert abs(res.objective - ref) < 1e-6
    assert f.worst_case_correct == ref


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("depth", [1, 2])
def test_zero_budget_equals_nominal_flow_model(solver, depth):
    rng = np.random.default_rng(5 + depth)
    n, F, K = 30, 3, 3
    X = rng.integers(0, 4, (n, F)).astype(float)
    y = np.where(X[:, 0] + X[:, 1] > 3, 1, np.where(X[:, 2] > 1, 2, 0))
    y[rng.random(n) < 0.2] = 0
    f = RobustOCT(ThermometerData.from_integer(X, y, K), depth, ShiftSet(np.ones((n, F)), 0.0))
    r = solve(f, solver=solver)
    nominal = FlowOCT(BinarizedData.from_binary(f.Z, y, K), depth)
    rn = solve(nominal, solver="highs")
    assert r.proven_optimal and rn.proven_optimal
    assert abs(r.objective - rn.objective) < 1e-6
    tree = f.extract()
    assert f.worst_case_correct == int(round(rn.objective)) == int((tree.predict(X) == y).sum())


def golden_data():
    X = np.array([[0, 0]] * 7 + [[1, 0]] * 3 + [[1, 1]] + [[0, 1]] * 2, dtype=float)
    y = np.array([0] * 7 + [1] * 3 + [0] + [1] * 2)
    costs = np.array([[1, 4]] * 5 + [[4, 4]] * 5 + [[4, 1]] + [[4, 4]] * 2, dtype=float)
    return X, y, costs


def published_tree(depth, eps):
    """The trees the authors' test suite expects for the small example (as opttrees Trees, x < 0.5 = left)."""
    from opttrees.tree import LEAF, Tree
    if depth == 0:
        return Tree([LEAF], [LEAF], [LEAF], [0], [[0, 0]], label=[0], n_features=2)
    if depth == 1:   # split on X2
        return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [1, LEAF, LEAF], [0.5, 0, 0], np.zeros((3, 2)), label=[0, 0, 1])
    if eps == 2:     # XOR: perfect
        return Tree([1, 3, 5, LEAF, LEAF, LEAF, LEAF], [2, 4, 6, LEAF, LEAF, LEAF, LEAF], [0, 1, 1, -1, -1, -1, -1],
                    [0.5, 0.5, 0.5, 0, 0, 0, 0], np.zeros((7, 2)), label=[0, 0, 0, 0, 1, 1, 0])
    # split X2, then X1 under X2 = 1; predict 1 only at (0, 1)
    return Tree([1, LEAF, 3, LEAF, LEAF], [2, LEAF, 4, LEAF, LEAF], [1, -1, 0, -1, -1], [0.5, 0, 0.5, 0, 0],
                np.zeros((5, 2)), label=[0, 0, 0, 1, 0])


@pytest.mark.parametrize("depth,eps", [(0, 2), (1, 2), (2, 2), (2, 5)])
def test_published_small_example_worst_case_optimum(depth, eps):
    """The small example of the authors' test suite: our optimum equals their tree's exact worst case."""
    from opttrees.robust import worst_case_accuracy
    X, y, costs = golden_data()
    S = ShiftSet(costs, eps)
    clf = RobustTreeClassifier(max_depth=depth, solver="scip").fit(X, y, costs=costs, budget=eps)
    assert clf.solve_result_.proven_optimal
    wc = clf.formulation_.worst_case_correct
    assert wc == int(round(clf.solve_result_.objective))
    pub = published_tree(depth, eps)
    assert wc == worst_case_accuracy(pub, X, y, S).worst_case_correct
    if (depth, eps) != (1, 2):   # (1, 2) has a tie with another depth-1 tree
        assert clf.predict(X).tolist() == pub.predict(X).tolist() or depth == 0


def test_published_small_example_depth1_matches_exhaustive():
    X, y, costs = golden_data()
    S = ShiftSet(costs, 2.0)
    clf = RobustTreeClassifier(max_depth=1, solver="highs").fit(X, y, costs=costs, budget=2.0)
    ref = max(exhaustive_worst_case(t, X, y, S) for t in depth1_trees(X, 2))
    assert clf.formulation_.worst_case_correct == ref
    # the published depth-1 robust tree splits on X2 (predictions [0]*10 + [1]*3)
    assert clf.predict(X).tolist() == [0] * 10 + [1] * 3 or exhaustive_worst_case(
        lambda Z: np.where(Z[:, 1] >= 1, 1, 0), X, y, S) == ref


# ------------------------------------------------------------------------------------------ adversary
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["two", "up", "down", "bounded", "cat"]))
def test_algorithm1_equals_enumeration_for_fixed_trees(seed, kind):
    rng = np.random.default_rng(seed)
    n = 3
    if kind == "cat":
        a = rng.integers(0, 3, n)
        X = np.column_stack([np.eye(3)[a], rng.integers(0, 3, n)]).astype(float)
        S = ShiftSet(rng.uniform(0.5, 2, (n, 4)), rng.uniform(0, 3), groups=[[0, 1, 2]])
    else:
        X = rng.integers(0, 3, (n, 2)).astype(float)
        direction = {"up": [1, 1], "down": [-1, -1]}.get(kind)
        lower, upper = ([0, 0], [2, 2]) if kind == "bounded" else (None, None)
        S = ShiftSet(rng.uniform(0.5, 2, (n, 2)), rng.uniform(0, 3), lower=lower, upper=upper, direction=direction)
    y = rng.integers(0, 2, n)
    from opttrees.robust.adversary import Path
    F = X.shape[1]
    f, th = int(rng.integers(F)), int(rng.integers(0, 2))
    inf = np.full(F, np.inf)
    lo_r = -inf.copy(); lo_r[f] = th + 1
    hi_l = inf.copy(); hi_l[f] = th
    kl, kr = int(rng.integers(2)), int(rng.integers(2))
    paths = [Path(-inf, hi_l, kl, 2), Path(lo_r, inf, kr, 3)]
    predict = lambda Z: np.where(Z[:, f] >= th + 1, kr, kl)
    res = attack(X, y, S, paths, predict(X))
    assert res.worst_case_correct == exhaustive_worst_case(predict, X, y, S)
    assert res.spent <= S.budget + 1e-9
    assert np.array_equal(predict(res.X_shifted) == y, res.correct_nominal & ~res.attacked)


def test_one_sided_and_categorical_models_solve_and_verify():
    rng = np.random.default_rng(9)
    n = 24
    a = rng.integers(0, 3, n)
    X = np.column_stack([np.eye(3)[a], rng.integers(0, 4, n)]).astype(float)
    y = ((a == 0) | (X[:, 3] >= 3)).astype(int)
    for S in (ShiftSet(np.full((n, 4), 1.0), 3.0, groups=[[0, 1, 2]]),
              ShiftSet(np.full((n, 4), 1.0), 3.0, direction=[0, 0, 0, 1], groups=[[0, 1, 2]])):
        f = RobustOCT(ThermometerData.from_integer(X, y, 2), 2, S)
        r = solve(f, "scip")
        f.extract()
        assert r.proven_optimal and f.worst_case_correct == int(round(r.objective))
        assert f.worst_case_correct <= int((y == y).sum())


# ------------------------------------------------------------------------------------------ calibration
def test_calibration_worked_cases():
    assert np.isclose(gamma_unbounded(0.9), np.log(10))
    for rho in (0.5, 0.6, 0.8, 0.95):
        assert np.isclose(gamma_binary(rho), np.log(rho / (1 - rho)))
        # binary = two-sided bounded on {0, 1}, x = 0: root (1 - rho)/rho
        if rho > 0.5:
            assert np.isclose(gamma_bounded(rho, [0.0], 0, 1)[0], np.log(rho / (1 - rho)))
            # a 2-valued categorical spends half the binary cost on each of its two columns
            assert np.isclose(2 * gamma_categorical(rho, 2), gamma_binary(rho))
    assert np.isclose(budget(0.9, 100), -100 * np.log(0.9))
    assert budget(1.0, 50) == 0.0
    g, e = calibrate(np.zeros((4, 2)), [0.9, 0.7], 0.5)
    assert g.shape == (4, 2) and np.allclose(g[:, 0], np.log(10)) and np.isclose(e, 4 * np.log(2))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.floats(0.0, 1.0))
def test_bounded_roots_solve_the_paper_equations_and_are_never_one(down, up, u):
    size = up + down + 1
    if size == 1:
        return
    rho = 1.0 / size + (1 - 1.0 / size) * (0.001 + 0.998 * u)   # strictly inside (1/(U-L+1), 1)
    x, L, U = down, 0, down + up
    r = truncated_root(rho, up, down)
    assert 0.0 < r < 1.0
    assert abs(paper_poly_25(r, rho, x, L, U)) < 1e-9
    r1 = truncated_root(rho, None, down)                         # one-sided lower bound (22)
    assert 0.0 < r1 < 1.0 and abs(paper_poly_22(r1, rho, x, L)) < 1e-9


def test_root_near_the_uniform_limit_and_invalid_rho():
    # just above the uniform limit the root is close to, but never equal to, 1
    r = truncated_root(1 / 5 + 1e-9, 2, 2)
    assert r < 1.0
    assert abs(paper_poly_25(1.0, 0.5, 2, 0, 4)) < 1e-12     # r = 1 is the spurious root of (25)
    assert truncated_root(0.5, 2, 2) < 1.0
    with pytest.raises(InputError, match="uniform limit"):
        truncated_root(0.19, 2, 2)                           # below 1/(U-L+1) = 0.2
    assert truncated_root(0.2, 2, 2) == 1.0                  # at the limit: uniform, gamma = 0
    with pytest.raises(InputError):
        gamma_binary(0.3)
    with pytest.raises(InputError):
        budget(0.0, 10)


def test_shift_sampler_matches_the_calibrated_distributions():
    rng = np.random.default_rng(0)
    X = np.column_stack([np.zeros(2000), np.zeros(2000), np.eye(3)[np.zeros(2000, int)]])
    sets = sample_shifts(X, 0.7, rng, kinds=["unbounded", "binary", "unbounded", "unbounded", "unbounded"],
                         groups=[[2, 3, 4]], n_sets=5)
    d = sets[..., 0].ravel()
    assert abs((d == 0).mean() - 0.7) < 0.02                 # P(xi = 0) = rho
    assert abs(np.mean(d > 0) - np.mean(d < 0)) < 0.02       # symmetric
    assert abs((sets[..., 1] == 1).mean() - 0.3) < 0.02      # binary flips with 1 - rho
    blk = sets[..., 2:]
    assert np.all(blk.sum(-1) == 1) and abs((blk[..., 0] == 1).mean() - 0.7) < 0.02


def test_estimator_calibration_entry_point_and_errors():
    X, y, _ = golden_data()
    clf = RobustTreeClassifier(max_depth=1, solver="scip", rho=0.8, lam=0.9)
    costs, eps = clf.calibrated_costs(X)
    assert np.allclose(costs, np.log(5)) and np.isclose(eps, -13 * np.log(0.9))
    clf.fit(X, y)
    assert 0 <= clf.worst_case_train_accuracy_ <= clf.score(X, y)
    assert np.isclose(clf.worst_case_score(X, y), clf.worst_case_train_accuracy_)
    sh = clf.shift_score(X, y, n_sets=200)
    assert 0 <= sh["worst"] <= sh["average"] <= 1
    with pytest.raises(InputError, match="budget"):
        RobustTreeClassifier().fit(X, y, costs=np.ones_like(X))
    with pytest.raises(InputError, match="integer"):
        RobustTreeClassifier(encoding="identity").fit(X + 0.5 * np.arange(13)[:, None] / 13, y)


# ------------------------------------------------------------------------------------------ input hardening
def test_categorical_uniform_limit_is_zero_not_negative_and_fits():
    assert gamma_categorical(1 / 3, 3) == 0.0                 # log(...) = -5.55e-17 before clipping
    assert np.all(gamma_categorical(np.array([1 / 3, 0.5, 1 / 7 * 7 / 3]), 3) >= 0)
    rng = np.random.default_rng(0)
    X = np.column_stack([np.eye(3)[rng.integers(0, 3, 24)], rng.integers(0, 4, 24)])
    y = (X[:, 0] + (X[:, 3] > 1) > 0).astype(int)
    clf = RobustTreeClassifier(max_depth=1, rho=[1 / 3] * 3 + [0.9], lam=0.9, categorical_groups=[[0, 1, 2]])
    clf.fit(X, y)
    assert np.all(clf.shift_set_.gamma[:, :3] == 0.0)


def test_bounded_gamma_at_the_uniform_limit_is_zero_like_binary():
    assert gamma_binary(0.5) == 0.0
    g = gamma_bounded(0.5, [0.0, 1.0], 0, 1)                  # two-sided {0, 1}: rho = 1/(U-L+1)
    assert np.all(g == 0.0) and not np.any(np.signbit(g))
    assert np.all(gamma_bounded(0.2, [0.0, 2.0, 4.0], 0, 4) == 0.0)
    assert np.all(gamma_bounded(0.2 + 1e-14, [2.0], 0, 4) == 0.0)   # numerically at the limit
    with pytest.raises(InputError, match="uniform limit"):
        gamma_bounded(0.4, [0.0], 0, 1)
    g, _ = calibrate(np.array([[0.0], [1.0]]), 0.5, 0.9, kinds=["bounded"], lower=[0], upper=[1])
    assert np.all(g == 0.0)


@pytest.mark.parametrize("kw,match", [
    (dict(direction=[1]), "direction"),
    (dict(direction=[5, 0]), "direction"),
    (dict(direction=[0.5, 0]), "direction"),
    (dict(lower=[0, 0, 0]), "lower"),
    (dict(upper=[[1, 2]]), "upper"),
    (dict(lower=[3, 0], upper=[1, 5]), "lower"),
    (dict(categorical_groups=[[0, 5]]), "out of range"),
    (dict(categorical_groups=[[0, 1]]), "one-hot"),
    (dict(categorical_groups=[[0]]), "at least 2"),
    (dict(feature_kinds="binary"), "binary"),
    (dict(feature_kinds=["binary", "unbounded"]), "binary"),
    (dict(feature_kinds=["nope", "unbounded"]), "feature_kinds"),
    (dict(lower=[1, 0], feature_kinds=["bounded", "unbounded"]), "below lower"),
])
def test_uncertainty_set_parameters_are_validated(kw, match):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (20, 2)).astype(float)
    X[0, 0] = 0.0
    y = (X[:, 0] > 1).astype(int)
    with pytest.raises(InputError, match=match):
        RobustTreeClassifier(max_depth=1, rho=0.9, lam=0.9, **kw).fit(X, y)
    # same checks without calibration (explicit costs) and on ShiftSet itself
    with pytest.raises(InputError, match=match):
        RobustTreeClassifier(max_depth=1, **kw).fit(X, y, costs=np.ones(2), budget=1.0)


def test_shift_set_direct_validation_and_nan_bounds():
    with pytest.raises(InputError, match="direction"):
        ShiftSet(np.ones((3, 2)), 1.0, direction=[-2, 0])
    with pytest.raises(InputError, match="groups"):
        ShiftSet(np.ones((3, 2)), 1.0, groups=[[0, 2]])
    S = ShiftSet(np.ones((3, 2)), 1.0, lower=[np.nan, 0], upper=[np.nan, np.inf], kinds=["binary", "unbounded"])
    assert S.lower.tolist() == [0.0, 0.0] and S.upper.tolist() == [1.0, np.inf]
    with pytest.raises(InputError, match="one-hot"):
        ShiftSet(np.ones((2, 2)), 1.0, groups=[[0, 1]]).check_data(np.array([[1, 1], [0, 1]]))


def test_one_sided_bounded_sampling_matches_the_truncated_pmf():
    rho, x = 0.6, 2.0
    r = truncated_root(rho, None, 2)                            # lower bound L = 0 only: eq. (22)
    sets = sample_shifts(np.full((20000, 1), x), rho, 0, kinds=["bounded"], lower=[0.0], n_sets=1)
    d = sets[0, :, 0] - x
    assert d.min() >= -2                                        # never below the bound
    for z in (-2, -1, 0, 1, 2, 3):
        assert abs((d == z).mean() - rho * r ** abs(z)) < 0.012
    up = sample_shifts(np.full((20000, 1), 1.0), rho, 1, kinds=["bounded"], upper=[3.0], direction=[-1], n_sets=1)
    assert up.max() <= 1.0                                      # downward only, unbounded below
    assert abs((up == 1.0).mean() - rho) < 0.012


def test_shift_score_perturbs_in_the_rank_units_of_the_set():
    X = np.repeat(np.arange(10.0) * 10, 3)[:, None]             # values 0, 10, ..., 90
    y = (X[:, 0] >= 50).astype(int)
    clf = RobustTreeClassifier(max_depth=1, encoding="rank", rho=0.5, lam=1.0).fit(X, y)
    assert clf.score(X, y) == 1.0
    sh = clf.shift_score(X, y, n_sets=200)
    # one rank step moves 40 -> 50 across the split; a unit move in original units never would
    assert sh["worst"] < 1.0 and sh["average"] < 1.0


def test_per_entry_rho_on_data_of_another_size_is_a_clear_error():
    X, y, _ = golden_data()
    clf = RobustTreeClassifier(max_depth=1, rho=np.full(X.shape, 0.8), lam=0.9).fit(X, y)
    with pytest.raises(InputError, match="per training sample"):
        clf.shift_score(X[:5], y[:5], n_sets=10)
    with pytest.raises(InputError, match="per training sample"):
        clf.worst_case_score(X[:5], y[:5])
    assert 0 <= clf.shift_score(X[:5], y[:5], rho=0.8, n_sets=10)["worst"] <= 1
    with pytest.raises(InputError, match="rho"):
        sample_shifts(X, np.full((3, 3), 0.5), 0)
