"""Issue 26, section 3: fixed variables compile, honest fit statuses, ORT/ORT-L leaf values and objectives.

1. ``Var.fix()`` on a formulation's variables (the README's research snippet) compiles on both solvers: a fixed
   variable is a column with bounds lo = hi = its value and keeps that value after the solve (and after a warm
   start); a fix that makes the model infeasible gives status "infeasible" and a clear error from extract().
2. A fit whose solver ran out of time without a solution says ``fit_status_ == "time_limit"``.
3. ORT returns the partition's mean (squared) / median (absolute) in every leaf, and the reported objective is
   that tree's own.
4. ORT-L squared loss on SCIP: the solver's point is never worse than the warm start it was given (SCIP's
   epigraph row of the quadratic objective is scaled so its feasibility slack cannot buy a false proof), and
   the estimator keeps the MIO's tree.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris

from opttrees import BendersOCTClassifier, FlowOCTClassifier, OptimalTreeRegressor, RobustTreeClassifier
from opttrees.data.binarized import BinarizedData
from opttrees.data.prepared import prepare
from opttrees.errors import SolverError
from opttrees.estimators.fitcontrol import FitControl
from opttrees.formulations import OCT
from opttrees.formulations.flow import FlowOCT, objective_weights
from opttrees.formulations.benders import BendersOCT
from opttrees.formulations.ort import ORT
from opttrees.formulations.ort_linear import ORTLinear
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.heuristics.linear_leaves import linear_local_search, linear_tree_objective
from opttrees.objectives import weighted_median
from opttrees.solvers import solve
from opttrees.solvers.result import finish
from oracles.flow import brute_force as flow_brute_force, instance
from oracles.parallel_trees import parallel_brute_force

SOLVERS = ["highs", "scip"]
README = Path(__file__).resolve().parents[2] / "README.md"


def readme_research_snippet() -> str:
    text = README.read_text()
    at = text.index("Research access to the formulation itself:")
    block = re.search(r"```python\n(.*?)```", text[at:], re.S)
    assert block is not None
    return block.group(1)


# ----------------------------------------------------------------------------------------- 1. fixed variables
@pytest.mark.parametrize("solver", SOLVERS)
def test_readme_research_snippet_with_a_fixed_root_runs(solver, tmp_path, monkeypatch):
    code = readme_research_snippet()
    assert "f.model.tree.d[1].fix(1)" in code
    assert 'res = solve(f, "scip", time_limit=120,' in code
    code = code.replace('res = solve(f, "scip", time_limit=120,', "res = solve(f, SOLVER, time_limit=3,")
    monkeypatch.chdir(tmp_path)   # the snippet makes results/ and writes results/oct.lp there
    X, y = load_iris(return_X_y=True)
    ns = {"X": X, "y": y, "SOLVER": solver}
    exec(compile(code, "README research snippet", "exec"), ns)
    res, tree, f = ns["res"], ns["tree"], ns["f"]
    assert res.has_solution and res.status in ("optimal", "time_limit"), res.summary()
    assert f.model.tree.d[1].fixed and f.model.tree.d[1].value == 1
    assert tree.feature[0] >= 0                  # the root really splits
    assert tree.n_splits >= 1 and abs(f.tree_objective(tree) - res.objective) < 1e-6
    assert (tmp_path / "results" / "oct.lp").exists()


@pytest.mark.parametrize("solver", SOLVERS)
def test_fixed_values_survive_a_warm_start_that_disagrees(solver):
    """A depth-0 start sets d[1] = 0; the user's d[1] = 1 and a[3, 1] = 1 win, and the root splits on x3."""
    X, y = load_iris(return_X_y=True)
    data = prepare(X, y)
    f = OCT(data, max_depth=1, alpha=0.0)
    f.model.tree.d[1].fix(1)
    f.model.tree.a[3, 1].fix(1)
    res = solve(f, solver, time_limit=10, warm_start=cart_classifier_tree(data, 0))
    assert res.has_solution, res.summary()
    assert f.model.tree.d[1].value == 1 and f.model.tree.a[3, 1].value == 1
    assert f.model.tree.d[1].fixed and f.model.tree.a[3, 1].fixed
    tree = f.extract()
    assert tree.feature[0] == 3
    assert res.proven_optimal and res.objective == pytest.approx(0.5, abs=1e-6)   # 50 errors / 100 (one split)


@pytest.mark.parametrize("solver", SOLVERS)
def test_fixing_a_leaf_label_keeps_it(solver):
    X, y = load_iris(return_X_y=True)
    f = OCT(prepare(X, y), max_depth=1, alpha=0.0)
    f.model.tree.d[1].fix(1)
    for k in range(3):        # the left leaf (heap node 2) must predict class 2
        f.model.c[k, 2].fix(int(k == 2))
    res = solve(f, solver, time_limit=10)
    assert res.proven_optimal, res.summary()
    tree = f.extract()
    assert tree.label[tree.children_left[0]] == 2
    assert [f.model.c[k, 2].value for k in range(3)] == [0, 0, 1]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("cls", [FlowOCT, BendersOCT])
def test_fixing_a_flow_branch_column(solver, cls):
    Z, y = instance(0, K=2)
    s = objective_weights(y, 2, None, "accuracy")
    f = cls(BinarizedData.from_binary(Z, y, 2), 1)
    f.model.b[1, 2].fix(1)                       # the root must branch on column 2
    res = solve(f, solver, time_limit=20)
    assert res.proven_optimal, res.summary()
    tree = f.extract()
    rows = np.arange(len(y))
    go = Z[:, 2] == 1
    best = lambda r: np.bincount(y[r], weights=s[r], minlength=2).max() if len(r) else 0.0
    assert res.objective == pytest.approx(best(rows[go]) + best(rows[~go]), abs=1e-6)
    assert res.objective <= flow_brute_force(Z, y, 2, 1, 0.0, s) + 1e-6
    assert tree.feature[0] >= 0 and f.model.b[1, 2].value == 1


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_infeasible_fix_gives_status_infeasible_and_a_clear_extract_error(solver):
    X, y = load_iris(return_X_y=True)
    data = prepare(X, y)
    for start in (None, cart_classifier_tree(data, 2)):
        f = OCT(data, max_depth=2, alpha=0.0)
        f.model.tree.d[1].fix(0)     # the root does not split ...
        f.model.tree.d[2].fix(1)     # ... but its left child does
        res = solve(f, solver, time_limit=10, warm_start=start)
        assert res.status == "infeasible" and not res.has_solution, res.summary()
        assert f.model.tree.d[1].value == 0 and f.model.tree.d[2].value == 1
        with pytest.raises(SolverError, match="no solution"):
            f.extract()


def test_a_fixed_variable_without_a_value_is_named():
    X, y = load_iris(return_X_y=True)
    f = OCT(prepare(X, y), max_depth=1)
    f.model.tree.b[1].fixed = True   # fixed, value None
    with pytest.raises(SolverError, match=r"tree\.b\[1\].*no value"):
        solve(f, "highs", time_limit=5)


# ----------------------------------------------------------------------------------------- 2. fit statuses
def test_a_solver_time_limit_without_a_solution_is_fit_status_time_limit():
    res = finish("scip", "", "time_limit", None, None, 0.5, 0, [])
    assert res.status == "no_solution"

    class Est:
        pass

    est = Est()
    FitControl(None).finish(est, res)
    assert est.fit_status_ == "time_limit"
    est2 = Est()
    FitControl(None).finish(est2, finish("scip", "", "infeasible", None, None, 0.5, 0, []))
    assert est2.fit_status_ == "completed"


@pytest.mark.parametrize("make", [
    lambda: BendersOCTClassifier(max_depth=2, solver="scip", time_limit=0.5, warm_start=None),
    lambda: FlowOCTClassifier(max_depth=2, solver="scip", time_limit=0.5, warm_start=None),
    lambda: RobustTreeClassifier(max_depth=2, solver="scip", time_limit=0.5, warm_start=None, rho=0.1, lam=0.9),
], ids=["benders", "flow", "robust"])
def test_fallback_after_the_time_limit_is_not_completed(make):
    X, y = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(X, y)
    res = est.solve_result_
    if res.proven_optimal:    # a machine fast enough to prove it in 0.5 s: nothing to check
        return
    assert est.fit_status_ == "time_limit", (res.status, res.termination)


# ----------------------------------------------------------------------------------------- 3. ORT leaf values
def _leaf_targets(tree, X, y, w, loss):
    leaf = tree.apply(X)
    for t in np.unique(leaf):
        m = leaf == t
        want = np.average(y[m], weights=w[m]) if loss == "squared" else weighted_median(y[m], w[m])
        yield tree.value[t, 0], want


def test_issue_example_squared_ort_on_scip_has_mean_leaves():
    X = np.array([[1, 2], [0, 2], [3, 3], [0, 2], [3, 2]], dtype=float)
    y = np.array([-1.5, -2, -0.2, -1.2, 1.1])
    est = OptimalTreeRegressor(method="mio", loss="squared", solver="scip", max_depth=1, min_samples_leaf=2,
                               alpha=0.05, time_limit=20).fit(X, y)
    leaves = sorted(float(est.tree_.value[t, 0]) for t in est.tree_.leaves)
    assert leaves == pytest.approx([-1.5666666666666667, 0.45], abs=1e-12)
    assert est.objective_ == pytest.approx(est.solve_result_.objective, rel=1e-12, abs=1e-12)
    assert est.solve_result_.status == "optimal"
    assert est.solve_result_.bound <= est.solve_result_.objective


@pytest.mark.parametrize("loss,solver", [("squared", "scip"), ("absolute", "highs"), ("absolute", "scip")])
def test_refit_respects_a_fixed_leaf_value(loss, solver):
    X = np.array([[1, 2], [0, 2], [3, 3], [0, 2], [3, 2]], dtype=float)
    y = np.array([-1.5, -2, -0.2, -1.2, 1.1])
    f = ORT(prepare(X, y, task="regression"), 1, loss=loss)
    f.model.beta[2].fix(-1.0)
    res = solve(f, solver, time_limit=20)
    tree = f.extract()
    assert res.has_solution
    assert -1.0 in tree.value[tree.leaves, 0]   # the user's leaf value, not the refit one


@st.composite
def regression_data(draw):
    n = draw(st.integers(4, 10))
    p = draw(st.integers(1, 2))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=p, max_size=p), min_size=n, max_size=n)),
                 dtype=float)
    y = np.array(draw(st.lists(st.integers(-20, 20), min_size=n, max_size=n)), dtype=float) / 7.0
    return X, y


@settings(max_examples=8)
@given(data=regression_data(), depth=st.integers(1, 2), alpha=st.sampled_from([0.0, 0.05]),
       case=st.sampled_from([("squared", "scip"), ("absolute", "highs"), ("absolute", "scip")]))
def test_ort_leaves_are_partition_optima_and_objective_is_the_trees(data, depth, alpha, case):
    X, y = data
    loss, solver = case
    est = OptimalTreeRegressor(method="mio", loss=loss, solver=solver, max_depth=depth, alpha=alpha,
                               warm_start="greedy", time_limit=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    res = est.solve_result_
    tree = est.tree_
    assert res.has_solution, res.summary()
    for have, want in _leaf_targets(tree, X, y, np.ones(len(y)), loss):
        assert have == pytest.approx(want, abs=1e-9)
    assert est.objective_ == pytest.approx(res.objective, rel=1e-9, abs=1e-12)
    assert res.bound is None or res.bound <= res.objective
    if res.proven_optimal:
        assert res.objective == pytest.approx(parallel_brute_force(X, y, depth, alpha, loss), abs=1e-6)


# ----------------------------------------------------------------------------------------- 4. ORT-L squared
def _ortl_data(seed, n=10):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(0, 1, (n, 2)), 2)
    y = np.where(X[:, 0] < 0.5, X[:, 1], -2 * X[:, 1]) + rng.normal(scale=0.1, size=n)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ort_linear_squared_scip_point_is_never_worse_than_its_start(seed):
    X, y = _ortl_data(seed)
    data = prepare(X, y, task="regression")
    lam = 0.05
    start = linear_local_search(data, 1, 0.0, lam, 1, 10, 0)
    s = linear_tree_objective(start, data, 0.0, lam, loss="squared", refit=False)
    f = ORTLinear(data, 1, leaf_penalty=lam, loss="squared", upper_bound=s * (1 + 1e-6) + 1e-9)
    res = solve(f, "scip", warm_start=start, time_limit=20)
    assert res.start_objective == pytest.approx(s, abs=1e-9)
    # the solver's own point (before the leaf refit of extract): SCIP's epigraph slack once made it ~1e-6 worse
    assert res.objective <= s + 1e-9, (res.objective, s, res.status)
    tree = f.extract()
    assert res.objective == pytest.approx(f.tree_objective(tree), abs=1e-12)
    assert res.objective <= s + 1e-9
    assert res.bound <= res.objective


@pytest.mark.parametrize("seed", [0, 3])
def test_ort_linear_estimator_keeps_the_mio_tree(seed):
    X, y = _ortl_data(seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = OptimalTreeRegressor(method="mio", leaf_model="linear", loss="squared", solver="scip", max_depth=1,
                                   leaf_penalty=0.05, time_limit=20).fit(X, y)
    assert not [w for w in caught if "beats the MIO" in str(w.message)]
    assert est.objective_ == pytest.approx(est.solve_result_.objective, rel=1e-9, abs=1e-12)
    assert est.solve_result_.status == "optimal"
