"""Prescriptive trees (issue 14): OPT by local search, DP and MIO against brute force; the objective against the
thesis's formulas written out per row; OPT-L against scikit-learn's lasso; policy trees (teacher scores,
cross-fitting, pystreed); the estimators' API and bad input."""
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import Lasso
from sklearn.neighbors import KNeighborsRegressor

from opttrees.prescriptive.dp import solve_dp_prescriptive
from opttrees.errors import InputError
from opttrees.estimators.prescriptive import OptimalPrescriptiveTree, PolicyTree
from opttrees.prescriptive import teacher as tch
from opttrees.data.prescriptive import prepare_prescriptive
from opttrees.prescriptive.objective import (KIND_LINEAR, KIND_OPT, KIND_POLICY, make_problem, outcomes,
                                             tree_objective)
from opttrees.prescriptive.search import greedy_prescriptive, local_search_prescriptive
from opttrees.tree import Tree
from oracles.prescriptive import brute_force


# ------------------------------------------------------------------------------------------------ oracles
def tiny(seed, n=12, p=2, levels=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    t = rng.integers(0, 2, n)
    t[:2] = [0, 1]
    y = rng.normal(size=n) + X[:, 0] * (t - 0.5)
    return X, t, y, rng


def thesis_objective(tree, X, t, y, mu, alpha, m):
    """(6.3) with the (6.4) counterfactuals, written out row by row, scaled as objective.py documents."""
    leaf = tree.apply(X)
    tau = tree.label[leaf]
    presc = pred = 0.0
    for i in range(len(y)):
        same = (leaf == leaf[i]) & (t == tau[i])
        presc += y[i] if tau[i] == t[i] else y[same].mean()
        own = (leaf == leaf[i]) & (t == t[i])
        pred += (y[i] - y[own].mean()) ** 2
    n, s = len(y), y.std()
    return mu * (presc / n - y.mean()) / s + (1 - mu) * pred / (n * s * s) + alpha * tree.n_splits


# ------------------------------------------------------------------------------ exact methods agree
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", [KIND_OPT, KIND_POLICY])
def test_dp_and_local_search_reach_the_brute_force_optimum(seed, kind):
    X, t, y, rng = tiny(seed)
    data = prepare_prescriptive(X, t, y)
    nt, msl = [(1, 1), (2, 1), (1, 2)][seed % 3]
    gamma = rng.normal(size=(len(y), 2)) if kind == KIND_POLICY else None
    prob = make_problem(data, kind, mu=[0.5, 1.0, 0.0][seed % 3] if kind == KIND_OPT else 1.0, n_treatment=nt,
                        min_samples_leaf=msl, gamma=gamma)
    for depth in (1, 2):
        best = brute_force(prob, depth, 0.01)
        tree, res = solve_dp_prescriptive(prob, depth, 0.01, binarization="midpoints")
        assert res.proven_optimal and res.objective == pytest.approx(best, abs=1e-9)
        assert tree_objective(tree, prob, 0.01) == pytest.approx(best, abs=1e-9)
        ls = local_search_prescriptive(prob, depth, 0.01, n_restarts=40, random_state=seed)
        assert ls.objective == pytest.approx(best, abs=1e-9)
        assert ls.tree.depth <= depth


@pytest.mark.parametrize("kind", [KIND_OPT, KIND_POLICY])
def test_dp_depth_three_is_no_worse_than_the_local_search(kind):
    X, t, y, rng = tiny(7, n=30, p=3, levels=6)
    gamma = rng.normal(size=(30, 2)) if kind == KIND_POLICY else None
    prob = make_problem(prepare_prescriptive(X, t, y), kind, mu=0.5, n_treatment=2, gamma=gamma)
    tree, res = solve_dp_prescriptive(prob, 3, 0.005, binarization="midpoints")
    ls = local_search_prescriptive(prob, 3, 0.005, n_restarts=60, random_state=0)
    assert res.objective <= ls.objective + 1e-9
    assert res.objective <= solve_dp_prescriptive(prob, 2, 0.005, binarization="midpoints")[1].objective + 1e-12


def test_greedy_is_a_feasible_tree_no_better_than_the_optimum():
    X, t, y, _ = tiny(3, n=40, p=3)
    prob = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=1.0, n_treatment=3)
    g = greedy_prescriptive(prob, 2, 0.0)
    opt = solve_dp_prescriptive(prob, 2, 0.0, binarization="midpoints")[1].objective
    assert np.isfinite(tree_objective(g, prob)) and tree_objective(g, prob) >= opt - 1e-12


# ------------------------------------------------------------------------------ the objective itself
@pytest.mark.parametrize("mu", [0.0, 0.5, 1.0])
def test_objective_is_the_thesis_formula_row_by_row(mu):
    X, t, y, _ = tiny(11, n=60, p=3)
    prob = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=mu, n_treatment=1)
    tree = local_search_prescriptive(prob, 2, 0.01, n_restarts=5, random_state=0).tree
    assert tree_objective(tree, prob, 0.01) == pytest.approx(thesis_objective(tree, X, t, y, mu, 0.01, 2), rel=1e-9)


@settings(max_examples=15)
@given(scale=st.floats(0.01, 100), shift=st.floats(-1e3, 1e3), seed=st.integers(0, 5))
def test_objective_and_tree_do_not_depend_on_the_outcome_units(scale, shift, seed):
    X, t, y, _ = tiny(seed, n=25)
    a = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=0.5)
    b = make_problem(prepare_prescriptive(X, t, scale * y + shift), KIND_OPT, mu=0.5)
    ta, ra = solve_dp_prescriptive(a, 2, 0.01, binarization="midpoints")
    tb, rb = solve_dp_prescriptive(b, 2, 0.01, binarization="midpoints")
    assert ra.objective == pytest.approx(rb.objective, abs=1e-7)
    assert tree_objective(ta, b, 0.01) == pytest.approx(rb.objective, abs=1e-7)


def test_sense_max_is_sense_min_of_the_negated_outcome():
    X, t, y, _ = tiny(4, n=40, p=3)
    lo = OptimalPrescriptiveTree(max_depth=2, method="dp", binarization="midpoints").fit(X, t, y)
    hi = OptimalPrescriptiveTree(max_depth=2, method="dp", binarization="midpoints", sense="max").fit(X, t, -y)
    assert lo.objective_ == pytest.approx(hi.objective_)
    assert np.array_equal(lo.predict(X), hi.predict(X))
    assert np.allclose(lo.predict_outcomes(X), -hi.predict_outcomes(X))
    assert lo.score(X, t, y) == pytest.approx(hi.score(X, t, -y))


def test_leaves_without_an_eligible_treatment_are_infeasible():
    X = np.arange(8.0).reshape(-1, 1)
    t = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    y = np.array([0, 0, 0, 0, 5, 5, 5, 5.0])
    prob = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=1.0, n_treatment=2)
    # x < 1 leaves one row of treatment 0 on the left: no treatment has n_treatment rows there
    split = Tree([1, -1, -1], [2, -1, -1], [0, -1, -1], [1.0, 0, 0], np.zeros((3, 2)), task="prescription",
                 label=[0, 0, 0], n_features=1)
    assert tree_objective(split, prob) == np.inf
    tree, res = solve_dp_prescriptive(prob, 2, binarization="midpoints")
    assert np.isfinite(res.objective)
    counts = np.asarray(tree.extras["treatment_counts"])[tree.leaves]
    assert (counts[np.arange(len(counts)), tree.label[tree.leaves]] >= 2).all()


# ------------------------------------------------------------------------------ OPT-L
def test_opt_linear_objective_and_outcomes_match_sklearn_lasso():
    rng = np.random.default_rng(0)
    n, lam, mu = 120, 0.02, 0.5
    X = rng.normal(size=(n, 3))
    t = rng.integers(0, 2, n)
    y = X[:, 0] + t * X[:, 1] + 0.2 * rng.normal(size=n)
    data = prepare_prescriptive(X, t, y)
    prob = make_problem(data, KIND_LINEAR, mu=mu, n_treatment=3, lam=lam)
    tree = greedy_prescriptive(prob, 1)
    leaf = tree.apply(X)
    Lhat, s = data.baseline, data.scale
    presc = pred = pen = 0.0
    est = np.zeros((n, 2))
    for node in tree.leaves:
        rows = leaf == node
        for k in range(2):
            g = rows & (t == k)
            model = Lasso(alpha=lam * Lhat / (2 * g.sum()), tol=1e-12, max_iter=100000).fit(data.Xs[g], y[g])
            est[rows, k] = model.predict(data.Xs[rows])
            pred += ((y[g] - model.predict(data.Xs[g])) ** 2).sum()
            pen += np.abs(model.coef_).sum()
        k = tree.label[node]
        presc += est[rows, k].sum()
    expected = mu * (presc / n - y.mean()) / s + (1 - mu) * (pred / Lhat + lam * pen) + 0.0 * tree.n_splits
    assert tree_objective(tree, prob) == pytest.approx(expected, rel=1e-6)
    assert np.allclose(outcomes(tree, X), est, atol=1e-6)


def test_opt_linear_with_a_huge_lambda_is_opt_with_constant_leaves():
    X, t, y, _ = tiny(2, n=50, p=3)
    data = prepare_prescriptive(X, t, y)
    const = make_problem(data, KIND_OPT, mu=0.5, n_treatment=2)
    linear = make_problem(data, KIND_LINEAR, mu=0.5, n_treatment=2, lam=1e6)
    tree = solve_dp_prescriptive(const, 2, binarization="midpoints")[0]
    assert tree_objective(tree, linear) == pytest.approx(tree_objective(tree, const), rel=1e-9)


def test_opt_linear_local_search_improves_on_greedy_and_predicts_from_a_saved_tree():
    rng = np.random.default_rng(1)
    n = 200
    X = rng.normal(size=(n, 4))
    t = rng.integers(0, 2, n)
    y = X[:, 1] + np.where(X[:, 0] > 0, 1.0, -1.0) * (t - 0.5) * 2 + 0.1 * rng.normal(size=n)
    greedy = OptimalPrescriptiveTree(max_depth=2, counterfactuals="linear", method="greedy", n_treatment=5).fit(X, t, y)
    ls = OptimalPrescriptiveTree(max_depth=2, counterfactuals="linear", n_restarts=6, n_treatment=5,
                                 random_state=0).fit(X, t, y)
    assert ls.objective_ <= greedy.objective_ + 1e-9
    assert (ls.predict(X) == (X[:, 0] <= 0)).mean() > 0.9     # treatment 1 is worse where x0 > 0
    saved = Tree.from_json(ls.tree_.to_json())
    assert np.allclose(outcomes(saved, X), ls.predict_outcomes(X))


# ------------------------------------------------------------------------------ policy trees
def test_teacher_scores_are_the_textbook_formulas():
    t = np.array([0, 1, 1, 0])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    mu = np.array([[1.5, 0.0], [0.0, 1.0], [0.5, 2.5], [3.0, 1.0]])
    e = np.array([0.5, 0.25, 0.5, 0.8])
    assert np.allclose(tch.teacher_scores("dm", t, y, 2, mu, None), mu)
    ipw = tch.teacher_scores("ipw", t, y, 2, None, e)
    assert np.allclose(ipw, [[2, 0], [0, 8], [0, 6], [5, 0]])
    dr = tch.teacher_scores("dr", t, y, 2, mu, e)
    assert np.allclose(dr, mu + [[-1, 0], [0, 4], [0, 1], [1.25, 0]])


def test_cross_fitting_never_predicts_a_row_with_a_model_that_saw_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    t = rng.integers(0, 2, 60)
    y = rng.normal(size=60)
    one_nn = KNeighborsRegressor(n_neighbors=1)
    in_sample = tch.cross_fit_outcomes(X, t, y, 2, one_nn, n_folds=1)
    assert np.allclose(in_sample[np.arange(60), t], y)          # a 1-NN model memorises its training rows
    crossed = tch.cross_fit_outcomes(X, t, y, 2, one_nn, n_folds=5, random_state=0)
    assert not np.isclose(crossed[np.arange(60), t], y).any()
    e = tch.cross_fit_propensity(X, t, 2, n_folds=3, random_state=0, clip=0.1)
    assert ((e >= 0.1) & (e <= 0.9)).all()


def test_policy_tree_matches_pystreed_on_binary_features():
    pystreed = pytest.importorskip("pystreed")
    rng = np.random.default_rng(0)
    n = 150
    X = rng.integers(0, 2, size=(n, 5))
    t = rng.integers(0, 2, n)
    mu = rng.normal(size=(n, 2)) + np.outer(X[:, 0], [1, -1])
    y = mu[np.arange(n), t] + 0.1 * rng.normal(size=n)
    ref = pystreed.STreeDPrescriptivePolicyGenerator(max_depth=2, teacher_method="DM").fit(
        X, np.column_stack([t, y, np.full(n, 0.5), mu]))
    ours = PolicyTree(max_depth=2, teacher="dm", sense="max").fit(X, t, y, outcome_estimates=mu)
    value = lambda pol: mu[np.arange(n), pol].sum()   # noqa: E731
    assert value(ours.predict(X)) == pytest.approx(value(ref.predict(X)), abs=1e-9)


@pytest.mark.parametrize("teacher", ["dm", "ipw", "dr"])
def test_policy_tree_recovers_a_clear_policy(teacher):
    rng = np.random.default_rng(3)
    n = 400
    X = rng.uniform(-1, 1, size=(n, 3))
    t = rng.integers(0, 2, n)
    y = np.where(t == (X[:, 0] > 0), 0.0, 1.0) + 0.1 * rng.normal(size=n)
    pt = PolicyTree(max_depth=1, teacher=teacher, n_folds=3, random_state=0,
                    outcome_model=KNeighborsRegressor(15)).fit(X, t, y, propensity=np.full(n, 0.5))
    assert (pt.predict(X) == (X[:, 0] > 0)).mean() > 0.9
    ls = clone(pt).set_params(method="local-search", n_restarts=10).fit(X, t, y, propensity=np.full(n, 0.5))
    assert ls.objective_ <= pt.objective_ + 1e-9     # every midpoint vs 10 quantile thresholds


# ------------------------------------------------------------------------------ estimator API
def test_estimator_api_labels_outcomes_json_and_two_column_target():
    X, t_num, y, _ = tiny(5, n=50, p=3)
    t = np.where(t_num == 1, "drug", "placebo")
    est = OptimalPrescriptiveTree(max_depth=2, n_restarts=5, random_state=0, n_treatment=2).fit(X, t, y)
    assert set(est.predict(X)) <= {"drug", "placebo"} and list(est.classes_) == ["drug", "placebo"]
    out = est.predict_outcomes(X)
    assert out.shape == (50, 2) and np.isfinite(out).all()
    assert np.array_equal(est.classes_[np.argmin(out, axis=1)], est.predict(X))
    d = json.loads(est.tree_.to_json())
    assert np.allclose(outcomes(Tree.from_dict(d), X), out)
    y2 = np.column_stack([t, y]).astype(object)
    again = clone(est).fit(X, y2)
    assert again.objective_ == pytest.approx(est.objective_)
    assert again.score(X, y2) == pytest.approx(est.score(X, t, y))


def test_estimator_methods_agree_with_each_other():
    X, t, y, _ = tiny(8, n=40, p=2)
    kw = dict(max_depth=2, alpha=0.01, n_treatment=2, binarization="midpoints")
    dp = OptimalPrescriptiveTree(method="dp", **kw).fit(X, t, y)
    ls = OptimalPrescriptiveTree(method="local-search", n_restarts=40, random_state=0, **kw).fit(X, t, y)
    assert dp.objective_ == pytest.approx(ls.objective_, abs=1e-9)
    assert dp.solve_result_.proven_optimal


def test_mio_reaches_the_dp_optimum_on_tiny_data():
    X, t, y, _ = tiny(1, n=10, p=2, levels=4)
    kw = dict(max_depth=1, alpha=0.02, n_treatment=2)
    dp = OptimalPrescriptiveTree(method="dp", binarization="midpoints", **kw).fit(X, t, y)
    mio = OptimalPrescriptiveTree(method="mio", n_restarts=1, random_state=0, time_limit=120, **kw).fit(X, t, y)
    assert mio.solve_result_.proven_optimal
    assert mio.objective_ == pytest.approx(dp.objective_, abs=1e-6)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("make, match", [
    (lambda X, t, y: (X, np.zeros(len(t)), y, {}), "only one value"),
    (lambda X, t, y: (X, t, np.where(np.arange(len(y)) == 3, np.nan, y), {}), "outcome contains 1 NaN"),
    (lambda X, t, y: (X, t[:-1], y, {}), "lengths must match"),
    (lambda X, t, y: (X, t, y[:-2], {}), "lengths must match"),
    (lambda X, t, y: (X, t, y, {"n_treatment": 1000}), "n_treatment=1000 is larger than the number of rows"),
    (lambda X, t, y: (X, t, y, {"treatments": [0, 1, 2]}), "treatments: 2 does not occur"),
    (lambda X, t, y: (X, t, y, {"treatments": [0, 5]}), "treatment contains 1, which is not in treatments"),
    (lambda X, t, y: (X, t, y, {"n_treatment": 0}), "n_treatment=0 is not valid"),
    (lambda X, t, y: (X, t, y, {"mu": 1.5}), "mu=1.5 is not valid"),
    (lambda X, t, y: (X, t, y, {"counterfactuals": "linear", "method": "dp"}), "counterfactuals='linear'"),
    (lambda X, t, y: (X, t, y, {"method": "dp", "max_depth": 6}), "max_depth=6 is not valid with method='dp'.*depth <= 4"),
    (lambda X, t, y: (X, t, y, {"method": "mio", "solver": "highs"}),
     "solver='highs' is not valid with method='mio'.*HiGHS does not support"),
])
def test_bad_input_names_the_problem(make, match):
    X, t, y, _ = tiny(0, n=20)
    Xb, tb, yb, kw = make(X, t, y)
    with pytest.raises(InputError, match=match):
        OptimalPrescriptiveTree(n_restarts=2, **kw).fit(Xb, tb, yb)


def test_policy_tree_bad_propensities_and_estimates():
    X, t, y, _ = tiny(0, n=20)
    with pytest.raises(InputError, match="propensity must lie strictly between 0 and 1"):
        PolicyTree(teacher="ipw").fit(X, t, y, propensity=np.where(np.arange(20) == 0, 1.0, 0.5))
    with pytest.raises(InputError, match=r"outcome_estimates must have shape \(20, 2\)"):
        PolicyTree(teacher="dm").fit(X, t, y, outcome_estimates=np.zeros((20, 3)))
    with pytest.raises(InputError, match="teacher='x' is not valid"):
        PolicyTree(teacher="x").fit(X, t, y)
    with pytest.raises(InputError, match="outcome is missing"):
        PolicyTree().fit(X, t)
    with pytest.raises(InputError, match="not one of the fitted treatments"):
        PolicyTree(teacher="ipw", n_folds=2).fit(X, t, y).score(X, t + 5, y)


# ------------------------------------------------------------------------------ spec / CLI shape
def test_registry_shape_fits_a_csv_with_treatment_and_outcome_columns(tmp_path):
    """The registry entries the lead adds (report): ``target: [treatment, outcome]`` and the default (X, y) fit."""
    import pandas as pd

    from opttrees.prescriptive import synthetic as syn
    from opttrees.registry import MODELS, models, register_model
    from opttrees.spec import parse_spec, run_spec

    d = syn.make_experiment(1, 200, np.random.default_rng(0))
    df = pd.DataFrame(d.X[:, :4], columns=[f"x{k}" for k in range(1, 5)])
    df["treatment"] = np.where(d.treatment == 1, "drug", "placebo")
    df["outcome"] = d.outcome
    df.to_csv(tmp_path / "trial.csv", index=False)
    models()
    added = {"opt-test": (OptimalPrescriptiveTree, {"method": "dp"}, {}),
             "policy-test": (PolicyTree, {}, {"teacher": "ipw"})}
    try:
        for name, (cls, fixed, params) in added.items():
            register_model(name, cls, "test", metric="policy_value", **fixed)
            spec = parse_spec({"data": {"csv": str(tmp_path / "trial.csv"), "target": ["treatment", "outcome"],
                                        "test_size": 0.25},
                               "model": {"type": name, "max_depth": 2, "n_thresholds": 4, **params},
                               "output": str(tmp_path / name)}, tmp_path / "spec.yaml")
            report = run_spec(spec)
            assert np.isfinite(report["train_policy_value"]) and np.isfinite(report["test_policy_value"])
            saved = Tree.from_json(tmp_path / name / "tree.json")
            assert set(np.asarray(saved.classes)) == {"drug", "placebo"}
    finally:
        for name in added:
            MODELS.pop(name, None)


# ------------------------------------------------------------------------------ stopping, warm starts, MIO
def test_time_limit_keeps_the_best_tree_so_far():
    from opttrees.prescriptive import synthetic as syn

    d = syn.make_experiment(2, 1500, np.random.default_rng(0))
    with pytest.warns(UserWarning, match="time_limit"):
        est = OptimalPrescriptiveTree(max_depth=5, n_restarts=5000, time_limit=1.0, random_state=0).fit(
            d.X, d.treatment, d.outcome)
    assert est.fit_status_ == "time_limit" and np.isfinite(est.objective_)
    assert est.fit_timings_["total"] < 20


def test_restarts_do_not_depend_on_the_number_of_threads():
    X, t, y, _ = tiny(9, n=120, p=4, levels=12)
    kw = dict(max_depth=3, n_restarts=12, random_state=3, n_treatment=3)
    one = OptimalPrescriptiveTree(n_jobs=1, **kw).fit(X, t, y)
    two = OptimalPrescriptiveTree(n_jobs=2, **kw).fit(X, t, y)
    assert one.objective_ == two.objective_ and one.tree_.to_json() == two.tree_.to_json()


def test_improve_tree_never_worsens_its_start():
    from opttrees.prescriptive.search import improve_tree

    X, t, y, _ = tiny(6, n=80, p=3)
    prob = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=0.5, n_treatment=3)
    start = greedy_prescriptive(prob, 3, 0.002)
    better = improve_tree(prob, start, 3, 0.002, random_state=0)
    assert tree_objective(better, prob, 0.002) <= tree_objective(start, prob, 0.002) + 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_mio_depth_two_equals_brute_force_with_and_without_a_warm_start(seed):
    from opttrees.prescriptive.mio import OPTFormulation
    from opttrees.solvers import solve

    X, t, y, _ = tiny(seed, n=10, p=2, levels=4)
    prob = make_problem(prepare_prescriptive(X, t, y), KIND_OPT, mu=0.5, n_treatment=2)
    best = brute_force(prob, 2, 0.02)
    dp_tree, _ = solve_dp_prescriptive(prob, 2, 0.02, binarization="midpoints")
    for start in (None, dp_tree):
        form = OPTFormulation(prob, 2, 0.02)
        res = solve(form, solver="scip", time_limit=300, warm_start=start)
        tree = form.extract()
        assert res.proven_optimal and res.objective == pytest.approx(best, abs=1e-6)
        assert tree_objective(tree, prob, 0.02) == pytest.approx(best, abs=1e-6)
