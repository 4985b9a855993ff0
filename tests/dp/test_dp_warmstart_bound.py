"""The dynamic program as warm start of FlowOCT / BendersOCT / the SPOT MILP, and as a bound given to solve().

Checked against brute force on tiny data: the DP start is a feasible start that the MIO scores exactly as the
DP does; the final result is never worse than it; a proof from the DP bound says so (``proof == "dp-bound"``)
and never claims more than brute force allows, also after side constraints are added to ``form.model``; a
bound that does not belong to the model (another formulation, an edited objective, removed or relaxed rows,
a split set the MIO can beat) is refused with an InputError.
"""
import dataclasses
import logging

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracles.bruteforce import best_subtree, brute_force_cost, brute_force_objective
from oracles.flow import brute_force as flow_brute_force
from oracles.spo import brute_objective as spo_brute_objective
from oracles.spo import tiny as spo_tiny
from opttrees.data.binarized import BinarizedData
from opttrees.data.prepared import prepare
from opttrees.dp.bound import dp_bound, dp_for_formulation
from opttrees.errors import InputError
from opttrees.estimators.flow import BendersOCTClassifier, FlowOCTClassifier
from opttrees.estimators.spo import SPOTree
from opttrees.estimators.spot_mio import fit_spot_mio
from opttrees.formulations.benders import BendersOCT
from opttrees.formulations.flow import FlowOCT
from opttrees.formulations.oct import OCT
from opttrees.formulations.octh import OCTH
from opttrees.data.costs import prepare_costs
from opttrees.formulations.spot import SPOTFormulation
from opttrees.objectives import misclassification_baseline
from opttrees.solvers import solve
from opttrees.solvers.result import ObjectiveBound, finish, settle_with_bound


def oct_data(seed, n=12, p=2, k=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, p)).round(1), rng.integers(0, k, n)


def flow_data(seed, n=20, C=4, K=2):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (n, C))
    y = (Z[:, 0] ^ (rng.random(n) < 0.3)).astype(int) if K == 2 else rng.integers(0, K, n)
    return Z, y


def oct_root_excluded(X, y, depth, alpha, nmin, j):
    """Brute-force optimum of OCT when the root may not split on feature j (a side constraint)."""
    K = int(y.max()) + 1
    w = np.ones(len(y))
    base = misclassification_baseline(y, K, w)
    idx = np.arange(len(y))
    best = best_subtree(X, y, idx, 0, K, 0.0, nmin, w)
    for f in range(X.shape[1]):
        if f == j:
            continue
        vals = np.unique(X[:, f])
        for t in (vals[:-1] + vals[1:]) / 2:
            left, right = idx[X[:, f] < t], idx[X[:, f] >= t]
            best = min(best, alpha * base + best_subtree(X, y, left, depth - 1, K, alpha * base, nmin, w)
                       + best_subtree(X, y, right, depth - 1, K, alpha * base, nmin, w))
    return best / base


def flow_root_excluded(Z, y, K, depth, lam, s, c0):
    """Brute-force flow optimum when the root may not branch on column c0."""
    rows = np.arange(len(y))
    best = (1 - lam) * np.bincount(y, weights=s, minlength=K).max()
    for c in range(Z.shape[1]):
        if c == c0:
            continue
        go = Z[:, c] == 1
        sub = [flow_brute_force(Z[r], y[r], K, depth - 1, lam, s[r]) for r in (rows[~go], rows[go])]
        best = max(best, sub[0] + sub[1] - lam)
    return best


# ------------------------------------------------------------------------------------------------ starts
@pytest.mark.parametrize("cls,solver", [(FlowOCT, "highs"), (BendersOCT, "highs"), (BendersOCT, "scip")])
@pytest.mark.parametrize("seed,lam,objective,K", [(0, 0.0, "accuracy", 2), (1, 0.1, "balanced_accuracy", 3)])
def test_flow_dp_start_is_feasible_with_the_same_objective(cls, solver, seed, lam, objective, K):
    Z, y = flow_data(seed, K=K)
    w = np.random.default_rng(seed).integers(1, 3, len(y)).astype(float)
    form = cls(BinarizedData.from_binary(Z, y, sample_weight=w), 2, regularization=lam, objective=objective)
    run = dp_for_formulation(form)
    # the DP over the formulation's own columns is the flow optimum, number for number
    assert run.objective == pytest.approx(flow_brute_force(Z, y, K, 2, lam, form.s), abs=1e-9)
    assert run.objective == pytest.approx(form.tree_objective(run.tree), abs=1e-12)
    res = solve(form, solver, warm_start=run.tree, time_limit=60)
    assert res.start_objective == pytest.approx(run.objective, abs=1e-7)
    form.extract()
    assert res.objective >= run.objective - 1e-7          # maximisation: never worse than the start
    assert res.proof == ("solver" if res.proven_optimal else None)


def test_spot_dp_start_is_feasible_with_the_same_objective():
    pr, X, C, _ = spo_tiny(4, n=14)
    form = SPOTFormulation(prepare_costs(pr, X, C), pr, max_depth=2, min_samples_leaf=2, alpha=0.01)
    run = dp_for_formulation(form, binarization="quantile", n_thresholds=3)
    assert run.start_feasible and run.bound is None and "quantile" in run.why_no_bound
    res = solve(form, "highs", warm_start=run.tree, time_limit=60)
    assert form.start_objective == pytest.approx(run.objective, abs=1e-9)
    if res.start_objective is not None:
        assert res.start_objective == pytest.approx(run.objective, abs=1e-7)
    form.extract()
    assert res.objective <= run.objective + 1e-7
    # over every midpoint the DP is the MILP optimum (brute force)
    exact = dp_for_formulation(form, binarization="midpoints")
    assert exact.objective == pytest.approx(spo_brute_objective(pr, X, C, np.ones(len(X)), 2, 2, 0.01), abs=1e-9)


def test_fit_spot_mio_dp_start_never_worse():
    pr, X, C, w = spo_tiny(5, n=16)
    tree, info = fit_spot_mio(pr, X, C, w, depth=2, min_samples_leaf=2, alpha=0.01, time_limit=60, x_precision=None,
                              warm_start="dp", n_thresholds=3)
    assert info["start_source"] in ("dp", "greedy") and "dp_result" in info
    assert info["start_objective"] <= info["dp_objective"] + 1e-9
    if info["start_source"] == "dp":
        assert info["start_objective"] == pytest.approx(info["dp_objective"], abs=1e-9)
    if "mio_objective_rounded" in info:
        assert info["mio_objective_rounded"] <= info["start_objective"] + 1e-7
    assert info["objective"] <= min(info["dp_objective_raw"], info["greedy_objective"]) + 1e-12


@given(seed=st.integers(0, 10_000), depth=st.integers(0, 2), lam=st.sampled_from([0.0, 0.03, 0.3]),
       objective=st.sampled_from(["accuracy", "balanced_accuracy"]), K=st.integers(2, 3))
def test_flow_dp_relaxation_is_exact(seed, depth, lam, objective, K):
    """Over the formulation's own columns the DP optimum is the flow optimum (weights, lambda, absent classes)."""
    rng = np.random.default_rng(seed)
    Z, y = rng.integers(0, 2, (9, 3)), rng.integers(0, K, 9)
    w = rng.integers(0, 3, 9).astype(float) + (rng.random(9) < 0.5)
    form = FlowOCT(BinarizedData.from_binary(Z, y, n_classes=K + 1, sample_weight=w), depth, regularization=lam,
                   objective=objective)
    run = dp_for_formulation(form)
    truth = flow_brute_force(Z, y, K + 1, depth, lam, form.s)
    assert run.bound.value == pytest.approx(truth, abs=1e-9) and run.bound.sense == -1
    assert form.tree_objective(run.tree) == pytest.approx(truth, abs=1e-9)


def test_spot_bound_with_weights_and_min_leaf_weight_is_a_relaxation():
    pr, X, C, w = spo_tiny(8, n=12)            # weights 1-2: the MILP's minimum leaf *weight* is 3
    form = SPOTFormulation(prepare_costs(pr, X, C, w), pr, max_depth=2, min_samples_leaf=3, alpha=0.01)
    run = dp_for_formulation(form)
    truth = spo_brute_objective(pr, X, C, w, 2, 3, 0.01)
    assert run.details["min_samples_leaf"] == 2 and run.bound.value <= truth + 1e-9
    if run.start_feasible:
        assert run.objective >= truth - 1e-9


# ------------------------------------------------------------------------------------------------ the bound
def test_dp_bound_proves_oct_and_records_where_the_proof_came_from():
    X, y = oct_data(0, n=14)
    alpha, nmin = 0.05, 2
    form = OCT(prepare(X, y), 2, nmin, alpha)
    run = dp_for_formulation(form)
    opt = brute_force_objective(X, y, 2, alpha, nmin)
    assert run.objective == pytest.approx(opt, abs=1e-12) and run.bound.value == pytest.approx(opt, abs=1e-12)
    res = solve(form, warm_start=run.tree, objective_bound=run.bound, time_limit=60)
    assert res.proven_optimal and res.status == "optimal" and res.proof == "dp-bound"
    assert res.external_bound["provenance"] == "dp-bound" and res.external_bound["proved"] == "reached"
    assert res.external_bound["relaxation"] == "oct" and res.external_bound["row"] is True
    tree = form.extract()
    assert res.proof == "dp-bound" and res.objective == pytest.approx(form.tree_objective(tree), abs=1e-12)
    assert res.to_dict()["proof"] == "dp-bound" and "DP bound" in res.summary()
    # without the row the solve stops at the start, which reaches the bound
    form2 = OCT(prepare(X, y), 2, nmin, alpha)
    res2 = solve(form2, warm_start=dp_for_formulation(form2).tree, objective_bound=dp_bound(form2), bound_row=False,
                 time_limit=60)
    assert res2.proof == "dp-bound" and res2.external_bound["row"] is False and res2.node_count == 0


def test_solver_proof_says_solver():
    X, y = oct_data(1, n=10)
    form = OCT(prepare(X, y), 1, 1, 0.0)
    res = solve(form, time_limit=60)
    assert res.proven_optimal and res.proof == "solver" and res.external_bound is None


@pytest.mark.parametrize("cls,solver", [(FlowOCTClassifier, "highs"), (BendersOCTClassifier, "scip")])
def test_flow_estimators_with_dp_start_and_bound(cls, solver):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3)).round(2)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, "yes", "no")
    est = cls(max_depth=2, warm_start="dp", dp_bound=True, solver=solver, regularization=0.02,
              time_limit=60).fit(X, y)
    res = est.solve_result_
    assert res.proven_optimal and res.proof == "dp-bound"
    assert res.start_objective == pytest.approx(res.objective, abs=1e-7)
    f = est.formulation_
    assert res.objective == pytest.approx(flow_brute_force(f.Z, f.y, 2, 2, 0.02, f.s), abs=1e-7)
    assert set(est.predict(X)) <= {"yes", "no"} and "dp" in est.fit_timings_


def test_spotree_dp_start_and_bound():
    pr, X, C, _ = spo_tiny(6, n=16)
    est = SPOTree(decision_problem=pr, method="mio", max_depth=2, min_samples_leaf=2, alpha=0.01, warm_start="dp", dp_bound=True,
                  x_precision=None, time_limit=60, prune=False).fit(X, C)
    assert est.mio_info_["start_source"] == "dp"
    assert est.solve_result_.proven_optimal and est.solve_result_.proof == "dp-bound"
    assert est.solve_result_.objective == pytest.approx(
        spo_brute_objective(pr, X, C, np.ones(len(X)), 2, 2, 0.01), abs=1e-9)


# ------------------------------------------------------------------------------------------------ side constraints
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_oct_side_constraints_never_give_a_false_proof(seed):
    X, y = oct_data(seed, n=10)
    alpha, nmin = 0.02, 1
    form = OCT(prepare(X, y), 2, nmin, alpha)
    run = dp_for_formulation(form)
    bound = run.bound
    j = int(run.tree.feature[0]) if run.tree.n_splits else 0
    # a binding side constraint: the DP's root feature is forbidden at the root
    form.model.side = pyo.Constraint(expr=form.model.tree.a[j, 1] == 0)
    res = solve(form, objective_bound=bound, time_limit=60)
    tree = form.extract()
    assert res.objective == pytest.approx(form.tree_objective(tree), abs=1e-9)   # the tree's own objective
    assert tree.n_splits == 0 or tree.feature[0] != j
    truth = oct_root_excluded(X, y, 2, alpha, nmin, j)
    assert res.objective >= truth - 1e-9 and res.objective >= bound.value - 1e-9
    if res.proven_optimal:
        assert res.objective == pytest.approx(truth, abs=1e-9)
        if truth > bound.value + 1e-6:   # the DP bound alone cannot prove it: the proof leans on the row
            assert res.external_bound["proved"] == "solver-with-row"


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_flow_side_constraints_never_give_a_false_proof(solver):
    Z, y = flow_data(7, n=18, C=4)
    s, lam = np.ones(len(y)), 0.05
    run = dp_for_formulation(BendersOCT(BinarizedData.from_binary(Z, y), 2, regularization=lam))
    c0 = int(run.tree.feature[0])
    sides = {   # side constraint -> brute-force optimum under it
        "root not on the DP's root column": (lambda m: m.b[1, c0] == 0, flow_root_excluded(Z, y, 2, 2, lam, s, c0)),
        "one split at most": (lambda m: sum(m.b.values()) <= 1, flow_brute_force(Z, y, 2, 1, lam, s)),
    }
    seen = set()
    for name, (rule, truth) in sides.items():
        for bound_row in (True, False):
            f = BendersOCT(BinarizedData.from_binary(Z, y), 2, regularization=lam)
            b = dp_bound(f)                                # made before the side constraint: still valid
            f.model.side = pyo.Constraint(expr=rule(f.model))
            res = solve(f, solver, warm_start=None if bound_row else run.tree, objective_bound=b,
                        bound_row=bound_row, time_limit=60)
            tree = f.extract()
            assert res.objective == pytest.approx(f.tree_objective(tree), abs=1e-7), name
            assert res.objective <= truth + 1e-7 and truth <= b.value + 1e-7, name
            if res.proven_optimal:
                assert res.objective == pytest.approx(truth, abs=1e-7), name
                seen.add(res.external_bound.get("proved"))
    assert "reached" in seen          # the DP bound proved the non-binding case


def test_side_constraint_that_does_not_bind_is_proven_by_the_bound():
    X, y = oct_data(3, n=12)
    form = OCT(prepare(X, y), 2, 1, 0.02)
    run = dp_for_formulation(form)
    j = int(run.tree.feature[0])
    form.model.side = pyo.Constraint(expr=form.model.tree.a[j, 1] == 1)    # the DP's own root feature
    res = solve(form, warm_start=run.tree, objective_bound=run.bound, time_limit=60)
    assert res.proof == "dp-bound" and res.objective == pytest.approx(run.objective, abs=1e-12)


# ------------------------------------------------------------------------------------------------ refusals
def test_refusals_name_the_problem():
    X, y = oct_data(2, n=10)
    form = OCT(prepare(X, y), 2, 1, 0.0)
    other = OCT(prepare(X, y), 2, 1, 0.0)
    with pytest.raises(InputError, match="provenance"):
        solve(form, objective_bound=0.5)
    with pytest.raises(InputError, match="another formulation"):
        solve(form, objective_bound=dp_bound(other))
    with pytest.raises(InputError, match="formulation object"):
        solve(form.model, objective_bound=dp_bound(form))
    b = dp_bound(form)
    with pytest.raises(InputError, match="provenance"):
        solve(form, objective_bound=dataclasses.replace(b, provenance="user"))
    # the split set: quantile thresholds are a subset of OCT's splits, so no bound
    assert dp_for_formulation(form, binarization="quantile", n_thresholds=1).bound is None
    # the objective: replaced, or edited
    form.model.objective_expr.expr = 2 * form.model.objective_expr.expr
    with pytest.raises(InputError, match="objective"):
        solve(form, objective_bound=b)


def test_refusal_of_formulations_the_dp_does_not_relax():
    X, y = oct_data(4, n=10)

    class ReweightedOCT(OCT):     # scores trees otherwise than OCT: OCT's relaxation may not hold
        def tree_objective(self, tree):
            return 2.0 * super().tree_objective(tree)

    with pytest.raises(InputError, match="no dynamic program relaxes a .*ReweightedOCT"):
        dp_bound(ReweightedOCT(prepare(X, y), 1))
    with pytest.raises(InputError, match="no dynamic program relaxes a OCTH"):
        dp_bound(OCTH(prepare(X, y), 1))
    m = pyo.ConcreteModel()
    m.part = pyo.Block()
    f = OCT(prepare(X, y), 1, block=m.part)
    with pytest.raises(InputError, match="block of a bigger model"):
        dp_bound(f)
    pr, Xs, C, _ = spo_tiny(0, n=8)
    deep = SPOTFormulation(prepare_costs(pr, Xs, C), pr, max_depth=5, min_samples_leaf=1, alpha=0.0)
    with pytest.raises(InputError, match="depths up to 4"):
        dp_bound(deep)


def test_refusal_when_the_formulation_was_relaxed():
    X, y = oct_data(5, n=10)
    # a formulation row deactivated before asking: refused even without a record
    form = OCT(prepare(X, y), 2, 3, 0.0)
    form.model.tree.min_leaf.deactivate()
    with pytest.raises(InputError, match="not active"):
        solve(form, objective_bound=dp_bound(form))
    form = OCT(prepare(X, y), 2, 3, 0.0)
    form.model.tree.d[1].domain = pyo.Reals
    with pytest.raises(InputError, match="relaxed"):
        solve(form, objective_bound=dp_bound(form))
    # changes after the bound was made: a row deleted, a bound widened, a row edited
    form = OCT(prepare(X, y), 2, 3, 0.0)
    b = dp_bound(form)
    form.model.u[0, 4].setub(2.0)
    with pytest.raises(InputError, match="relaxed"):
        solve(form, objective_bound=b)
    form = OCT(prepare(X, y), 2, 3, 0.0)
    b = dp_bound(form)
    form.model.del_component(form.model.one_label)
    with pytest.raises(InputError, match="deleted"):
        solve(form, objective_bound=b)
    # a side constraint after the bound is fine
    form = OCT(prepare(X, y), 2, 3, 0.0)
    b = dp_bound(form)
    form.model.side = pyo.Constraint(expr=form.model.tree.d[2] == 0)
    assert solve(form, objective_bound=b, time_limit=60).has_solution


class SplitBudgetOCT(OCT):
    """OCT with at most ``k`` splits: a subclass that adds one row and keeps OCT's objective."""

    def __init__(self, data, max_depth, min_samples_leaf, alpha, k):
        super().__init__(data, max_depth, min_samples_leaf, alpha)
        tree = self.model.tree
        self.model.split_budget = pyo.Constraint(expr=sum(tree.d[t] for t in self.structure.branch) <= k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_subclass_that_adds_rows_keeps_the_dp_bound(seed):
    """The relaxation is inherited: the DP over every midpoint bounds OCT plus a split budget; its tree is a start
    only when the model admits it (here it splits more than the budget allows: a bound, not a start); the MIO
    from the bound reaches the brute-force optimum with the budget, and a proof never claims more."""
    X, y = oct_data(seed, n=12)
    alpha, nmin, k = 0.01, 1, 1
    form = SplitBudgetOCT(prepare(X, y), 2, nmin, alpha, k)
    relaxation = form.dp_relaxation()
    assert relaxation is not None and not relaxation.exact      # a subclass: its DP tree is checked
    assert OCT(prepare(X, y), 2, nmin, alpha).dp_relaxation().exact
    run = dp_for_formulation(form)
    assert run.bound is not None
    assert run.start_feasible == (run.tree.n_splits <= k)
    K = int(y.max()) + 1
    base = misclassification_baseline(y, K, np.ones(len(y)))
    truth = brute_force_cost(X, y, 2, nodes=k, pen=alpha * base, minleaf=nmin) / base
    assert run.bound.value <= truth + 1e-9
    res = solve(form, warm_start=run.tree if run.start_feasible else None, objective_bound=run.bound, time_limit=60)
    tree = form.extract()
    assert tree.n_splits <= k and res.objective == pytest.approx(truth, abs=1e-7)
    assert res.proven_optimal


def test_the_dp_tree_is_a_start_of_a_subclass_when_the_model_admits_it():
    X, y = oct_data(0, n=12)
    form = SplitBudgetOCT(prepare(X, y), 2, 1, 0.0, 3)       # a budget every depth-2 tree meets
    run = dp_for_formulation(form)
    assert run.start_feasible and run.bound is not None
    res = solve(form, warm_start=run.tree, objective_bound=run.bound, time_limit=60)
    assert res.proven_optimal and res.objective == pytest.approx(brute_force_objective(X, y, 2, 0.0, 1), abs=1e-9)


def test_a_subclass_of_flowoct_keeps_its_relaxation():
    Z, y = flow_data(2)

    class TaggedFlowOCT(FlowOCT):
        pass

    form = TaggedFlowOCT(BinarizedData.from_binary(Z, y), 2, regularization=0.05)
    run = dp_for_formulation(form)
    assert run.details["formulation"] == "TaggedFlowOCT" and run.bound is not None and run.start_feasible
    res = solve(form, warm_start=run.tree, objective_bound=run.bound, time_limit=60)
    assert res.proven_optimal and res.objective == pytest.approx(run.objective, abs=1e-9)


# ------------------------------------------------------------------------------------------------ settle rules
def _bound(value, sense=1, verified=None):
    return ObjectiveBound(value=value, sense=sense, provenance="dp-bound", formulation=None, objective_expr=None,
                          verify=lambda f: (verified, ""))


def test_settle_rules():
    # reaching the bound proves it; the solver's own objective must be the verified tree's
    res = settle_with_bound(finish("highs", "", "time_limit", 2.0, 1.0, 1.0, 0, []), _bound(2.0), 2.0)
    assert res.proven_optimal and res.proof == "dp-bound" and res.bound == 2.0 and res.gap == 0.0
    res = settle_with_bound(finish("highs", "", "time_limit", 2.0, 1.0, 1.0, 0, []), _bound(2.0), 2.5)
    assert not res.proven_optimal and "not the tree's" in res.message
    # a gap that stays open is no proof; the tighter bound is reported
    res = settle_with_bound(finish("highs", "", "time_limit", 3.0, 1.0, 1.0, 0, []), _bound(2.0), 3.0)
    assert not res.proven_optimal and res.bound == 2.0 and res.proof is None
    # maximisation
    res = settle_with_bound(finish("scip", "", "interrupted", 5.0, 9.0, 1.0, 0, []), _bound(5.0, -1), 5.0)
    assert res.proven_optimal and res.bound == 5.0
    # a solver proof with the row in the model leans on the bound; unverifiable -> revoked
    res = settle_with_bound(finish("highs", "", "optimal", 3.0, 3.0, 1.0, 0, []), _bound(2.0), 3.0, as_row=True)
    assert res.proven_optimal and res.proof == "dp-bound" and res.external_bound["proved"] == "solver-with-row"
    res = settle_with_bound(finish("highs", "", "optimal", 3.0, 3.0, 1.0, 0, []), _bound(2.0), None,
                            "a leaf holds 1 rows", as_row=True)
    assert not res.proven_optimal and res.proof is None and res.status == "limit"
    # no solution: nothing to prove
    res = settle_with_bound(finish("highs", "", "time_limit", None, 1.0, 1.0, 0, []), _bound(2.0), None)
    assert not res.proven_optimal and res.bound == 2.0


def test_a_point_beyond_the_bound_drops_it(caplog):
    with caplog.at_level(logging.WARNING):
        res = settle_with_bound(finish("highs", "", "optimal", 1.0, 1.0, 1.0, 0, []), _bound(2.0), 1.0,
                                as_row=True)
    assert res.external_bound["rejected"] and not res.proven_optimal and res.proof is None
    assert "beyond" in caplog.text
    res = settle_with_bound(finish("highs", "", "time_limit", 1.0, 0.5, 1.0, 0, []), _bound(2.0), None,
                            "a leaf holds 1 rows")
    assert res.bound == 0.5 and res.external_bound["rejected"] and not res.proven_optimal


def test_reconcile_keeps_or_revokes_a_dp_bound_proof():
    res = settle_with_bound(finish("highs", "", "time_limit", 2.0, 1.0, 1.0, 0, []), _bound(2.0), 2.0)
    res.reconcile(2.0 + 1e-9)
    assert res.proven_optimal and res.proof == "dp-bound"
    res = settle_with_bound(finish("highs", "", "time_limit", 2.0, 1.0, 1.0, 0, []), _bound(2.0), 2.0)
    res.reconcile(2.5)
    assert not res.proven_optimal and res.proof is None


# ------------------------------------------------------------------------------------------------ provenance
@pytest.mark.parametrize("change", [{"min_samples_leaf": 3}, {"alpha": 0.05}, {"max_num_nodes": 2},
                                    {"max_depth": 1}])
def test_no_bound_when_the_dp_solved_another_problem(monkeypatch, change):
    """The bound rests on what the DP says it solved (SolveResult.problem), not on what was meant to be passed:
    a DP run with a stricter minimum leaf, another alpha, a node limit or a shallower depth gives no bound."""
    import opttrees.dp.bound as bound_module

    X, y = oct_data(3)
    form = OCT(prepare(X, y), max_depth=2, min_samples_leaf=1, alpha=0.0)
    honest = dp_for_formulation(form)
    assert honest.bound is not None and honest.result.problem["split_set"] == "every midpoint"
    real = bound_module.solve_dp

    def other_problem(*args, **kw):
        return real(*args, **{**kw, **change})
    monkeypatch.setattr(bound_module, "solve_dp", other_problem)
    key = next(iter(change))
    try:
        run = dp_for_formulation(form)
    except Exception as exc:          # a changed objective is caught earlier, by scoring the DP tree in OCT's
        assert "DP bound" in str(exc)
        return
    assert run.bound is None and key in run.why_no_bound
