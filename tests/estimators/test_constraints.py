"""Constrained optimal trees (issue 30): every constraint's MIO optimum equals brute-force enumeration on tiny
data (OCT with HiGHS and SCIP, FlowOCT, BendersOCT, ORT), errors name the problem, starts are repaired to
feasibility, violations are reported honestly."""
from __future__ import annotations

import warnings

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles.bruteforce import best_constrained_classifier, best_constrained_regressor
from oracles.cases import tiny_classification, tiny_regression
from opttrees import BendersOCTClassifier, FlowOCTClassifier, OptimalTreeClassifier, OptimalTreeRegressor
from opttrees import constraints
from opttrees.data.prepared import prepare
from opttrees.errors import InputError, SolverError, SpecError, VerificationWarning
from opttrees.formulations.oct import OCT

NAMES = ["x0", "x1", "g"]


#: (constraint, whether the protected column is kept out of the splits); each binds on most seeds used below
#: (the constrained optimum has more errors than the unconstrained one), so the tests can fail
CLASSIFICATION_CASES = {
    "statistical_parity": (lambda: constraints.StatisticalParity("g", 0.1), True),
    "statistical_parity_split": (lambda: constraints.StatisticalParity("g", 0.2, allow_split=True), False),
    "conditional_statistical_parity": (lambda: constraints.ConditionalStatisticalParity("g", 0.25, legit="x0"), True),
    "predictive_equality": (lambda: constraints.PredictiveEquality("g", 0.1), True),
    "equal_opportunity": (lambda: constraints.EqualOpportunity("g", 0.1), True),
    "equalized_odds": (lambda: constraints.EqualizedOdds("g", 0.2), True),
    "max_features": (lambda: constraints.MaxFeatures(1), False),
    "feature_cost": (lambda: constraints.FeatureCost({"x0": 3.0, "x1": 1.0, "g": 1.0}, 2.0), False),
    "forbid_features": (lambda: constraints.ForbidFeatures(["x0"], at_depths=[0, 1]), False),
    "monotone": (lambda: constraints.Monotone("x0", -1), False),
    "min_leaf_per_class": (lambda: constraints.MinLeafPerClass(3), False),
    "min_leaf_weight": (lambda: constraints.MinLeafWeight(4.0), False),
}


def brute_errors(X, y, cons, exclude_protected):
    data = prepare(X, y)
    bound = [c.validate(data) for c in cons]
    feats = [0, 1] if exclude_protected else None
    best, tree = best_constrained_classifier(X.to_numpy(), y, 2, bound, features=feats, names=NAMES)
    return best, tree


def fitted_errors(est, X, y):
    return float((est.predict(X) != y).sum())


@pytest.mark.parametrize("case", sorted(CLASSIFICATION_CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_oct_highs_equals_brute_force(case, seed):
    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(seed)
    best, _ = brute_errors(X, y, [make()], exclude)
    clf = OptimalTreeClassifier(max_depth=2, constraints=[make()], time_limit=120).fit(X, y)
    assert clf.solve_result_.proven_optimal, clf.solve_result_.status
    assert fitted_errors(clf, X, y) == best
    assert all(v["satisfied"] for v in clf.constraint_report(X, y).values())
    assert set(clf.constraint_values_) == {make().name}


@pytest.mark.parametrize("case", sorted(CLASSIFICATION_CASES))
def test_oct_scip_and_flow_equal_brute_force(case):
    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(2)
    best, _ = brute_errors(X, y, [make()], exclude)
    for est in (OptimalTreeClassifier(max_depth=2, constraints=[make()], solver="scip", warm_start=None,
                                      dp_bound=False, time_limit=120),
                FlowOCTClassifier(max_depth=2, constraints=[make()], binarization="midpoints", time_limit=120)):
        est.fit(X, y)
        assert est.solve_result_.proven_optimal, (type(est).__name__, est.solve_result_.status)
        assert fitted_errors(est, X, y) == best, type(est).__name__
        assert all(v["satisfied"] for v in est.constraint_report(X, y).values())


@pytest.mark.parametrize("case", ["statistical_parity", "equalized_odds", "monotone", "min_leaf_per_class",
                                  "max_features"])
@pytest.mark.parametrize("solver", ["scip", "highs"])
def test_benders_equals_brute_force(case, solver):
    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(3)
    best, _ = brute_errors(X, y, [make()], exclude)
    est = BendersOCTClassifier(max_depth=2, constraints=[make()], binarization="midpoints", solver=solver,
                               time_limit=120).fit(X, y)
    assert est.solve_result_.proven_optimal
    assert fitted_errors(est, X, y) == best


REGRESSION_CASES = {
    "monotone_up": lambda: constraints.Monotone("x1", +1),
    "monotone_down": lambda: constraints.Monotone("x0", -1),
    "max_features": lambda: constraints.MaxFeatures(1),
    "feature_cost": lambda: constraints.FeatureCost([2.0, 1.0], 1.5),
    "forbid_features": lambda: constraints.ForbidFeatures("x0", at_depths=[1]),
    "min_leaf_weight": lambda: constraints.MinLeafWeight(3.0),
}


@pytest.mark.parametrize("case", sorted(REGRESSION_CASES))
@pytest.mark.parametrize("seed", [0, 1])
def test_ort_equals_brute_force(case, seed):
    X, y = tiny_regression(seed)
    data = prepare(X, y, task="regression")
    bound = [REGRESSION_CASES[case]().validate(data)]
    best, _ = best_constrained_regressor(X.to_numpy(), y, 2, bound, names=["x0", "x1"])
    reg = OptimalTreeRegressor(method="mio", loss="absolute", max_depth=2, warm_start="greedy",
                               constraints=[REGRESSION_CASES[case]()], time_limit=120).fit(X, y)
    assert reg.solve_result_.proven_optimal, reg.solve_result_.status
    assert np.abs(y - reg.predict(X)).sum() == pytest.approx(best, abs=1e-6)
    assert all(v["satisfied"] for v in reg.constraint_report(X, y).values())


def test_several_constraints_at_once():
    X, y = tiny_classification(4, n=12)
    cons = [constraints.StatisticalParity("g", 0.2), constraints.MaxFeatures(1), constraints.MinLeafWeight(2)]
    best, _ = brute_errors(X, y, cons, True)
    clf = OptimalTreeClassifier(max_depth=2, constraints=cons, time_limit=120).fit(X, y)
    assert fitted_errors(clf, X, y) == best
    assert set(clf.constraint_values_) == {"statistical_parity", "max_features", "min_leaf_weight"}


def test_constraint_costs_accuracy_and_gap_is_met():
    """A binding fairness constraint: the unconstrained optimum has a gap above delta, the constrained one not."""
    X, y = tiny_classification(5, n=16)
    free = OptimalTreeClassifier(max_depth=2, time_limit=60).fit(X, y)
    gap = free.fairness_gap(X, y, "g")
    assert gap > 0.05
    fair = OptimalTreeClassifier(max_depth=2, time_limit=120, constraints=[constraints.StatisticalParity("g", 0.05)]).fit(X, y)
    assert fair.fairness_gap(X, y, "g") <= 0.05 + 1e-9
    assert fair.score(X, y) <= free.score(X, y)
    assert fair.constraint_values_["statistical_parity"] == pytest.approx(fair.fairness_gap(X, y, "g"))


# ------------------------------------------------------------------------------------------------- errors
def test_validation_errors_name_the_problem():
    X, y = tiny_classification(0)
    data = prepare(X, y)
    with pytest.raises(InputError, match="delta must be a number in"):
        constraints.StatisticalParity("g", 1.5)
    with pytest.raises(InputError, match="'race' is not a column of X"):
        constraints.StatisticalParity("race", 0.1).validate(data)
    with pytest.raises(InputError, match="out of range"):
        constraints.EqualOpportunity(7, 0.1).validate(data)
    with pytest.raises(InputError, match="legit="):
        constraints.ConditionalStatisticalParity("g", 0.1)
    with pytest.raises(InputError, match="direction must be"):
        constraints.Monotone("x0", 2)
    with pytest.raises(InputError, match="every cost must be"):
        constraints.FeatureCost({"x0": -1}, 1)
    with pytest.raises(InputError, match="at_depths"):
        constraints.ForbidFeatures("x0", at_depths=[-1])
    with pytest.raises(InputError, match="exceeds the total sample weight"):
        constraints.MinLeafWeight(100).validate(data)
    y3 = np.arange(len(y)) % 3
    with pytest.raises(InputError, match="binary classification"):
        constraints.StatisticalParity("g", 0.1).validate(prepare(X, y3))
    with pytest.raises(InputError, match="one value only"):
        constraints.StatisticalParity("g", 0.1).validate(prepare(X.assign(g=1.0), y))


@pytest.mark.parametrize("kwargs", [{"method": "greedy"}, {"method": "local-search"}, {"method": "dp"},
                                    {"split_type": "hyperplane"}])
def test_methods_that_cannot_honour_constraints(kwargs):
    X, y = tiny_classification(0)
    with pytest.raises(InputError, match=r"cannot be honoured.*honoured by OptimalTreeClassifier\(method='mio'\)"):
        OptimalTreeClassifier(max_depth=2, constraints=[constraints.MinLeafPerClass(2)], **kwargs).fit(X, y)


def test_regressor_rejects_classification_constraints_and_heuristics():
    X, y = tiny_regression(0)
    with pytest.raises(InputError, match="classification constraint"):
        OptimalTreeRegressor(method="mio", constraints=[constraints.StatisticalParity("x0", 0.1)]).fit(X, y)
    with pytest.raises(InputError, match="cannot be honoured by method='local-search'"):
        OptimalTreeRegressor(constraints=[constraints.MaxFeatures(1)]).fit(X, y)
    with pytest.raises(InputError, match="constraints"):
        OptimalTreeRegressor(constraints=["not a constraint"]).fit(X, y)


@pytest.mark.parametrize("est", [OptimalTreeClassifier(max_depth=2, time_limit=60),
                                 FlowOCTClassifier(max_depth=2, binarization="midpoints", time_limit=60)])
def test_infeasible_constraints_give_a_clear_error(est):
    X, y = tiny_classification(0)
    majority = int(max(np.bincount(y)))
    est.set_params(constraints=[constraints.MinLeafPerClass(majority + 1)])
    with pytest.raises(SolverError, match="no tree of depth <= 2 satisfies the constraints"):
        est.fit(X, y)


# ------------------------------------------------------------------------------------------------- starts
def test_repair_prunes_to_the_best_feasible_tree():
    from opttrees.heuristics.cart import cart_classifier_tree
    from opttrees.constraints.start_repair import _prunings
    from opttrees.heuristics.core import make_problem, objective, refit_leaves

    X, y = tiny_classification(6, n=30)
    data = prepare(X, y)
    prob = make_problem(data)
    cart = cart_classifier_tree(data, 3, 1, 0.0, 0)
    cons = [constraints.MaxFeatures(1).validate(data)]
    assert not cons[0].satisfied(cart, data.X, y)
    fixed, note = constraints.repair(cart, cons, data.X, y, None, lambda t: refit_leaves(t, prob),
                           lambda t: objective(t, prob, 0.0))
    assert fixed is not None and cons[0].satisfied(fixed, data.X, y)
    assert "pruned" in note
    # the best of every pruning
    best = min(objective(refit_leaves(cart.prune(sorted(cut)), prob), prob, 0.0)
               for cut in _prunings(cart) if cut
               and cons[0].satisfied(refit_leaves(cart.prune(sorted(cut)), prob), data.X, y))
    assert objective(fixed, prob, 0.0) == pytest.approx(best)
    impossible = [constraints.MinLeafWeight(len(y) + 0.5)]
    assert constraints.repair(cart, impossible, data.X, y, None, lambda t: refit_leaves(t, prob),
                    lambda t: objective(t, prob, 0.0))[0] is None


@pytest.mark.parametrize("case", ["statistical_parity", "monotone", "max_features", "min_leaf_per_class"])
def test_warm_start_sets_every_constraint_variable_feasibly(case):
    """A feasible tree as warm start gives a point satisfying every row of the constrained model."""
    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(1)
    _, tree = brute_errors(X, y, [make()], exclude)
    data = prepare(X, y)
    form = OCT(data, 2)
    make().add_to(form)
    form.warm_start(tree)
    for con in form.model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        assert body is not None
        if con.has_lb():
            assert body >= pyo.value(con.lower) - 1e-9, con.name
        if con.has_ub():
            assert body <= pyo.value(con.upper) + 1e-9, con.name


class TaggedOCT(OCT):
    """A subclass of a built-in formulation (no change to the model): it keeps the constraints' support."""


@pytest.mark.parametrize("case", ["statistical_parity", "max_features", "min_leaf_per_class"])
def test_a_subclass_keeps_its_constraints(case):
    """Constraints read the formulation through constraint_view(), not its class name: a subclass of OCT takes them,
    its warm start sets their variables (no monkey-patched warm_start) and its MIO optimum equals brute force."""
    from opttrees.solvers import solve

    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(1)
    best, tree = brute_errors(X, y, [make()], exclude)
    form = TaggedOCT(prepare(X, y), 2, 1, 0.0)
    blk = make().add_to(form)
    assert form.model.component(blk.local_name) is blk and "warm_start" not in vars(form)
    form.warm_start(tree)
    for con in form.model.component_data_objects(pyo.Constraint, active=True):
        assert con.lb is None or pyo.value(con.body) >= con.lb - 1e-9, con.name
        assert con.ub is None or pyo.value(con.body) <= con.ub + 1e-9, con.name
    res = solve(form, "highs", warm_start=tree, time_limit=120)
    assert res.proven_optimal
    assert float((form.extract().predict(X.to_numpy()) != y).sum()) == best


def test_formulations_without_a_constraint_view_are_refused():
    from opttrees.formulations.octh import OCTH

    X, y = tiny_classification(1)
    with pytest.raises(InputError, match="constraints are supported on .* got OCTH"):
        constraints.MaxFeatures(1).add_to(OCTH(prepare(X, y), 1))


def test_dp_bound_is_kept_as_a_relaxation():
    X, y = tiny_classification(5, n=16)
    clf = OptimalTreeClassifier(max_depth=2, dp_bound=True, warm_start="dp", time_limit=120,
                                constraints=[constraints.StatisticalParity("g", 0.05)]).fit(X, y)
    res = clf.solve_result_
    assert res.plan["bound"] == "dp-bound"
    assert res.external_bound["value"] <= clf.objective_ + 1e-9
    assert res.proven_optimal


def test_violation_is_a_warning_and_unverified():
    from opttrees.constraints.binding import ConstraintContext, verify
    from opttrees.heuristics.cart import cart_classifier_tree
    from opttrees.solvers.result import finish

    X, y = tiny_classification(6, n=30)
    data = prepare(X, y)
    tree = cart_classifier_tree(data, 3, 1, 0.0, 0)
    est = OptimalTreeClassifier()
    est.solve_result_ = finish("highs", "", "optimal", 0.0, 0.0, 0.0, 0, [])
    ctx = ConstraintContext(est, [constraints.MaxFeatures(1).validate(data)], data, None, None)
    with pytest.warns(VerificationWarning, match="breaks constraint"):
        verify(est, tree, ctx)
    assert est.solve_result_.status == "unverified" and not est.solve_result_.proven_optimal
    assert est.constraint_values_["max_features"] > 1


# ------------------------------------------------------------------------------------------------- values
def test_values_on_new_data_and_helpers():
    X, y = tiny_classification(7, n=20)
    clf = OptimalTreeClassifier(max_depth=2, time_limit=60,
                                constraints=[constraints.EqualOpportunity("g", 0.2), constraints.MaxFeatures(2)]).fit(X, y)
    Xn, yn = tiny_classification(8, n=20)
    rep = clf.constraint_report(Xn, yn)
    assert set(rep) == {"equal_opportunity", "max_features"}
    pred = clf.predict(Xn)
    pos = (yn == 1)
    rates = [pred[pos & (Xn.g.values == v)].mean() for v in (0.0, 1.0)]
    assert rep["equal_opportunity"]["value"] == pytest.approx(abs(rates[0] - rates[1]))
    assert clf.fairness_gap(Xn, yn, "g", notion="equal_opportunity") == pytest.approx(abs(rates[0] - rates[1]))
    with pytest.raises(InputError, match="not a fairness notion"):
        clf.fairness_gap(Xn, yn, "g", notion="parity")


@given(seed=st.integers(0, 10_000), delta=st.floats(0.0, 1.0))
def test_single_leaf_is_always_fair_and_gap_matches_definition(seed, delta):
    from opttrees.heuristics.cart import cart_classifier_tree

    X, y = tiny_classification(seed, n=25)
    data = prepare(X, y)
    tree = cart_classifier_tree(data, 2, 1, 0.0, 0)
    leaf = tree.prune([0])
    for cls in constraints.FAIRNESS:
        kw = {"legit": "x0"} if cls is constraints.ConditionalStatisticalParity else {}
        c = cls("g", delta, **kw)
        assert c.value(leaf, X, y) == 0.0 and c.satisfied(leaf, X, y)
    pred = tree.predict(X)
    g = X.g.to_numpy()
    rates = [pred[g == v].mean() for v in np.unique(g)]
    expected = max(rates) - min(rates) if len(rates) > 1 else 0.0
    assert constraints.StatisticalParity("g", delta).value(tree, X, y) == pytest.approx(expected)


# ------------------------------------------------------------------------------------------------- specs
def test_spec_constraints_field_errors():
    from opttrees.spec import parse_spec

    base = {"data": {"dataset": "iris"}, "model": {"type": "oct", "max_depth": 1}}
    with pytest.raises(SpecError, match=r"model.constraints\[0\].*unknown constraint 'parity'"):
        parse_spec({**base, "constraints": [{"type": "parity"}]})
    with pytest.raises(SpecError, match=r"model.constraints\[0\] \(statistical_parity\): missing field\(s\) \['delta'\]"):
        parse_spec({**base, "constraints": [{"type": "statistical_parity", "protected": "sex"}]})
    with pytest.raises(SpecError, match=r"unknown field\(s\) \['delt'\]"):
        parse_spec({**base, "constraints": [{"type": "statistical_parity", "protected": "sex", "delt": 0.1}]})
    with pytest.raises(SpecError, match="delta must be a number in"):
        parse_spec({**base, "constraints": [{"type": "statistical_parity", "protected": "sex", "delta": 2}]})
    with pytest.raises(SpecError, match="takes no constraints"):
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": "robust-oct"},
                    "constraints": [{"type": "max_features", "k": 1}]})
    with pytest.raises(SpecError, match="does not apply to model type 'cart'"):
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart"},
                    "constraints": [{"type": "max_features", "k": 1}]})
    spec = parse_spec({**base, "constraints": [{"type": "max_features", "k": 1}]})
    assert spec.model_params["constraints"] == [{"type": "max_features", "k": 1}]


def test_spec_run_from_csv_with_protected_column(tmp_path):
    from opttrees.spec import load_spec, run_spec

    X, y = tiny_classification(9, n=24)
    df = X.rename(columns={"g": "sex"}).assign(label=np.where(y == 1, "yes", "no"))
    df.to_csv(tmp_path / "fair.csv", index=False)
    (tmp_path / "fair.yaml").write_text(
        "data: {csv: fair.csv, target: label}\n"
        "model: {type: oct, max_depth: 2}\n"
        "constraints:\n  - {type: statistical_parity, protected: sex, delta: 0.1}\n"
        "solver: {time_limit: 120}\noutput: out\n")
    report = run_spec(load_spec(tmp_path / "fair.yaml"))
    sp = report["constraints"]["train"]["statistical_parity"]
    assert sp["satisfied"] and sp["value"] <= 0.1 + 1e-9
    (tmp_path / "bad.yaml").write_text(
        "data: {csv: fair.csv, target: label}\nmodel: {type: oct, max_depth: 2}\n"
        "constraints:\n  - {type: statistical_parity, protected: race, delta: 0.1}\n")
    with pytest.raises(SpecError, match="'race' is not a column of X"):
        run_spec(load_spec(tmp_path / "bad.yaml"), write=False)


def test_research_api_add_to_names_blocks():
    X, y = tiny_classification(0)
    form = OCT(prepare(X, y), 2)
    b1 = constraints.StatisticalParity("g", 0.1).add_to(form)
    b2 = constraints.StatisticalParity("g", 0.2).add_to(form)
    assert b1.local_name == "statistical_parity" and b2.local_name == "statistical_parity_2"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert form.model.component("constraint_predictions") is not None


# ------------------------------------------------------------------------------------------------- the DP
FAIR_CASES = ["statistical_parity", "statistical_parity_split", "conditional_statistical_parity",
              "predictive_equality", "equal_opportunity", "equalized_odds"]


@pytest.mark.parametrize("case", FAIR_CASES)
@pytest.mark.parametrize("seed", [1, 2])
def test_pareto_dp_equals_brute_force_and_mio(case, seed):
    make, exclude = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(seed, n=14)
    best, _ = brute_errors(X, y, [make()], exclude)
    dp = OptimalTreeClassifier(method="dp", binarization="midpoints", constraints=[make()]).fit(X, y)
    assert dp.solve_result_.status == "optimal"
    assert fitted_errors(dp, X, y) == best
    assert all(v["satisfied"] for v in dp.constraint_report(X, y).values())
    mio = OptimalTreeClassifier(max_depth=2, constraints=[make()], time_limit=120).fit(X, y)
    assert mio.objective_ == pytest.approx(dp.objective_)


@pytest.mark.parametrize("case", ["statistical_parity", "equalized_odds"])
def test_pareto_dp_with_alpha_equals_mio(case):
    make, _ = CLASSIFICATION_CASES[case]
    X, y = tiny_classification(4, n=14)
    dp = OptimalTreeClassifier(method="dp", binarization="midpoints", alpha=0.05, constraints=[make()]).fit(X, y)
    mio = OptimalTreeClassifier(max_depth=2, alpha=0.05, constraints=[make()], time_limit=120).fit(X, y)
    assert mio.solve_result_.proven_optimal
    assert dp.objective_ == pytest.approx(mio.objective_)


def test_dp_rejects_constraints_it_cannot_solve():
    X, y = tiny_classification(0)
    with pytest.raises(InputError, match="the DP solves group fairness and feature budgets only"):
        OptimalTreeClassifier(method="dp", constraints=[constraints.MinLeafPerClass(2)]).fit(X, y)
    with pytest.raises(InputError, match="the DP solves group fairness and feature budgets only"):
        OptimalTreeClassifier(method="dp", constraints=[constraints.ForbidFeatures(["x0"], at_depths=[0])]).fit(X, y)


def test_fairness_dp_solves_the_constrained_problem_and_bounds_the_mio():
    """With the DP bound on, group fairness is solved by the Pareto DP over every midpoint: its tree starts the
    MIO and its optimum is the bound; with a constraint no DP solves (MinLeafPerClass) the unconstrained DP bound
    stays."""
    X, y = tiny_classification(5, n=16)
    fair = OptimalTreeClassifier(max_depth=2, dp_bound=True, time_limit=120,
                                 constraints=[constraints.StatisticalParity("g", 0.05)]).fit(X, y)
    eb = fair.solve_result_.external_bound
    assert fair.solve_result_.plan["start"] == "fairness-dp"
    assert eb["relaxation"].startswith("none") and eb["value"] == pytest.approx(fair.objective_)
    assert eb["unconstrained_dp_bound"] < eb["value"]
    plain = OptimalTreeClassifier(max_depth=2, dp_bound=True, time_limit=120,
                                  constraints=[constraints.MinLeafPerClass(2)]).fit(X, y)
    assert plain.solve_result_.external_bound["relaxation"] == "oct"
    best, _ = brute_errors(X, y, [constraints.StatisticalParity("g", 0.05)], True)
    assert fitted_errors(fair, X, y) == best


def test_fairness_dp_bound_is_a_relaxation_with_other_constraints():
    X, y = tiny_classification(1, n=14)
    cons = [constraints.StatisticalParity("g", 0.1), constraints.MaxFeatures(1), constraints.MinLeafPerClass(2)]
    best, _ = brute_errors(X, y, cons, True)
    clf = OptimalTreeClassifier(max_depth=2, dp_bound=True, time_limit=120, constraints=cons).fit(X, y)
    eb = clf.solve_result_.external_bound
    assert eb["relaxation"].startswith("only statistical_parity") and "max_features" in eb["relaxation"]
    assert "min_leaf_per_class" not in eb["relaxation"]
    assert eb["value"] <= clf.objective_ + 1e-9
    assert clf.solve_result_.proven_optimal
    assert fitted_errors(clf, X, y) == best


@pytest.mark.parametrize("cls", [FlowOCTClassifier, BendersOCTClassifier])
def test_flow_models_get_the_fairness_dp_start_and_bound(cls):
    X, y = tiny_classification(5, n=16)
    est = cls(max_depth=2, binarization="midpoints", time_limit=120,
              constraints=[constraints.StatisticalParity("g", 0.05)]).fit(X, y)
    assert est.solve_result_.plan["start"] == "fairness-dp"
    assert est.solve_result_.external_bound["relaxation"].startswith("none")
    assert est.solve_result_.proven_optimal
    best, _ = brute_errors(X, y, [constraints.StatisticalParity("g", 0.05)], True)
    assert fitted_errors(est, X, y) == best


def test_constraints_survive_clone_and_get_params():
    from sklearn.base import clone

    est = OptimalTreeClassifier(max_depth=2, constraints=[constraints.StatisticalParity("g", 0.1), constraints.MaxFeatures(1)])
    copy = clone(est)
    assert [type(c) for c in copy.get_params()["constraints"]] == [constraints.StatisticalParity, constraints.MaxFeatures]
    assert copy.get_params()["constraints"][0].delta == 0.1
    X, y = tiny_classification(0)
    copy.fit(X, y)
    assert est.constraints[0]._bound_info is None     # the user's objects are never bound in place
