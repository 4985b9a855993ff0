"""FlowOCT and BendersOCT: optimum == brute force and each other, on both solvers; warm starts; estimators."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from oracles.cutloop_reference import solve_loop_reference
from opttrees.data.binarized import BinarizedData
from opttrees.errors import InputError
from opttrees.estimators.flow import BendersOCTClassifier, FlowOCTClassifier
from opttrees.formulations.benders import BendersOCT
from opttrees.formulations.flow import FlowOCT, objective_weights
from opttrees.solvers import solve
from oracles.flow import brute_force, instance

SOLVERS = ["highs", "scip"]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("seed,depth,lam,objective,K", [
    (0, 1, 0.0, "accuracy", 2), (1, 2, 0.0, "accuracy", 3), (2, 2, 0.15, "accuracy", 2),
    (3, 2, 0.05, "balanced_accuracy", 3), (4, 0, 0.0, "accuracy", 2)])
def test_flow_and_benders_equal_brute_force(solver, seed, depth, lam, objective, K):
    Z, y = instance(seed, K=K)
    s = objective_weights(y, K, None, objective)
    ref = brute_force(Z, y, K, depth, lam, s)
    vals = []
    for cls in (FlowOCT, BendersOCT):
        f = cls(BinarizedData.from_binary(Z, y, K), depth, regularization=lam, objective=objective)
        res = solve(f, solver=solver)
        assert res.proven_optimal, res.status
        tree = f.extract()     # re-routes and verifies the objective
        assert abs(res.objective - ref) < 1e-6
        assert abs(f.tree_objective(tree) - ref) < 1e-6
        assert tree.depth <= depth
        vals.append(res.objective)
    assert abs(vals[0] - vals[1]) < 1e-6


def test_sample_weights_and_benders_reference_loop():
    Z, y = instance(7, n=20)
    w = np.random.default_rng(7).integers(1, 4, len(y)).astype(float)
    ref = brute_force(Z, y, 2, 2, 0.0, w)
    f = FlowOCT(BinarizedData.from_binary(Z, y, 2, sample_weight=w), 2)
    assert abs(solve(f, "highs").objective - ref) < 1e-6
    # duplicating rows == integer weights
    Zd, yd = np.repeat(Z, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    assert abs(solve(FlowOCT(BinarizedData.from_binary(Zd, yd, 2), 2), "highs").objective - ref) < 1e-6
    # an independent plain-Pyomo loop agrees with the solver layer's lazy machinery
    b = BendersOCT(BinarizedData.from_binary(Z, y, 2, sample_weight=w), 2)
    solve_loop_reference(b)
    assert abs(b.model_objective() - ref) < 1e-6


@pytest.mark.parametrize("cls", [FlowOCT, BendersOCT])
def test_warm_start_is_feasible_with_the_same_objective(cls):
    Z, y = instance(11, n=30, C=5)
    f = cls(BinarizedData.from_binary(Z, y, 2), 2)
    solve(f, "highs")
    tree = f.extract()
    g = cls(BinarizedData.from_binary(Z, y, 2), 2)
    res = solve(g, "scip", warm_start=tree)
    assert res.start_objective is not None and abs(res.start_objective - g.tree_objective(tree)) < 1e-6
    assert abs(res.objective - res.start_objective) < 1e-6


def test_estimators_on_numeric_data_agree_and_follow_sklearn_rules():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2)).round(1)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, "yes", "no")
    a = FlowOCTClassifier(max_depth=2, solver="highs").fit(X, y)
    b = BendersOCTClassifier(max_depth=2, solver="scip").fit(X, y)
    assert a.solve_result_.proven_optimal and b.solve_result_.proven_optimal
    assert a.score(X, y) == b.score(X, y)
    assert set(a.predict(X)) <= {"yes", "no"}
    assert a.predict_proba(X).shape == (40, 2)
    # threshold decoded to original units: routing with the Tree equals routing on binary columns
    c = clone(a)
    assert c.get_params()["max_depth"] == 2 and not hasattr(c, "tree_")
    gs = GridSearchCV(FlowOCTClassifier(solver="highs"), {"max_depth": [1, 2]}, cv=2).fit(X, y)
    assert gs.best_params_["max_depth"] in (1, 2)


def test_bad_inputs_raise_clear_errors():
    X, y = np.zeros((5, 2)), np.array([0, 1, 0, 1, 0])
    with pytest.raises(InputError, match="max_depth"):
        FlowOCTClassifier(max_depth=-1).fit(X + np.arange(5)[:, None], y)
    with pytest.raises(InputError, match="regularization"):
        FlowOCTClassifier(regularization=1.5).fit(X + np.arange(5)[:, None], y)
    with pytest.raises(InputError, match="objective"):
        FlowOCTClassifier(objective="f1").fit(X + np.arange(5)[:, None], y)
    with pytest.raises(InputError):
        FlowOCTClassifier().fit(X, y[:3])
