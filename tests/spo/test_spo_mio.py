"""SPOT MILP: optimum == exhaustive enumeration on tiny instances (both solvers); never worse than greedy."""
import numpy as np
import pytest

from opttrees.estimators.spo import SPOTree
from opttrees.experiments.spo_data import shortest_path_data
from opttrees.estimators.spot_mio import fit_spot_mio
from opttrees.data.costs import prepare_costs
from opttrees.formulations.spot import SPOTFormulation
from opttrees.oracles import NewsRecommendation
from opttrees.spo import grow_spo_tree
from oracles.spo import brute_objective, leaf_loss, tiny

ALPHA = 1e-4


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("depth,seed", [(1, 0), (1, 1), (2, 2), (2, 3)])
def test_mio_equals_enumeration(solver, depth, seed):
    pr, X, C, w = tiny(seed, n=12 if depth == 2 else 14)
    tree, info = fit_spot_mio(pr, X, C, w, depth=depth, min_samples_leaf=2, alpha=ALPHA, solver=solver,
                              time_limit=120, quantile_step=None, x_precision=None)
    res = info["result"]
    assert res.proven_optimal
    brute = brute_objective(pr, X, C, w, depth, 2, ALPHA)
    assert res.objective == pytest.approx(brute, abs=1e-6)
    assert info["objective"] == pytest.approx(brute, abs=1e-6)
    # the greedy start is feasible with its own objective
    assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    assert res.start_objective == pytest.approx(info["greedy_objective"], abs=1e-7)
    assert info["objective"] <= info["greedy_objective"] + 1e-9


def test_mio_never_worse_than_greedy_under_time_limit():
    D = shortest_path_data(80, deg=8, noise=0.25, p=3, grid=(3, 3), n_test=200, seed=5)
    tree, info = fit_spot_mio(D.problem, D.X, D.C, depth=2, min_samples_leaf=8, time_limit=3, solver="highs")
    res = info["result"]
    if res.has_solution:   # a loaded machine may spend the 3 s before the MILP starts: then greedy is returned
        assert res.objective <= res.start_objective + 1e-7
        assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    else:
        assert info["source"] == "greedy" and res.termination == "time_limit"
    assert info["objective"] <= info["greedy_objective"] + 1e-12
    est = SPOTree(decision_problem=D.problem, max_depth=2, min_samples_leaf=8, method="mio", time_limit=3, prune=False).fit(D.X, D.C)
    g = SPOTree(decision_problem=D.problem, max_depth=2, min_samples_leaf=8, prune=False).fit(D.X, D.C)
    assert est.training_loss(D.X, D.C) <= g.training_loss(D.X, D.C) + 1e-12


def test_mio_maximisation_news():
    nw = NewsRecommendation.random(d=4, m=3, seed=12)
    rng = np.random.default_rng(3)
    X = np.round(rng.random((12, 2)), 1)
    P = np.clip(0.2 + 0.3 * np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1]]) + 0.05 * rng.random((12, 4)), 0, 1)
    w = np.ones(12)
    tree, info = fit_spot_mio(nw, X, P, w, depth=1, min_samples_leaf=2, alpha=ALPHA, solver="highs",
                              quantile_step=None, time_limit=60, x_precision=None)
    assert info["result"].proven_optimal
    assert info["result"].objective == pytest.approx(brute_objective(nw, X, P, w, 1, 2, ALPHA), abs=1e-6)


def test_warm_start_objective_matches_greedy_tree():
    pr, X, C, w = tiny(7, n=16)
    g = grow_spo_tree(pr, X, C, w, max_depth=2, min_samples_leaf=2, quantile_step=None)
    form = SPOTFormulation(prepare_costs(pr, X, C, w), pr, max_depth=2, min_samples_leaf=2, alpha=ALPHA)
    form.warm_start(g)
    from pyomo.environ import value
    assert value(form.model.objective) == pytest.approx(form.tree_objective(g), abs=1e-9)
    for c in form.model.component_data_objects(__import__("pyomo.environ").environ.Constraint, active=True):
        lo, body, hi = c.lower, value(c.body), c.upper
        assert (lo is None or body >= value(lo) - 1e-7) and (hi is None or body <= value(hi) + 1e-7), c.name


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10**5), depth=st.integers(1, 2), solver=st.sampled_from(["highs", "scip"]))
def test_mio_never_worse_than_its_greedy_start_property(seed, depth, solver):
    D = shortest_path_data(30, deg=6, noise=0.25, p=2, grid=(2, 3), n_test=0, seed=seed)
    w = np.random.default_rng(seed).integers(1, 3, 30).astype(float)
    # 4 s: under a loaded CI the 0.65 s build left too little of 1.5 s for the hand-off, and the solver never ran
    tree, info = fit_spot_mio(D.problem, D.X, D.C, w, depth=depth, min_samples_leaf=3, solver=solver, time_limit=4)
    res = info["result"]
    assert res.start_objective == pytest.approx(info["greedy_objective_rounded"], abs=1e-7)
    if res.has_solution:
        assert res.objective <= res.start_objective + 1e-7
    assert info["objective"] <= info["greedy_objective"] + 1e-12
    assert tree.depth <= depth


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_mio_with_binary_pyomo_knapsack_equals_enumeration(solver):
    """SPOT MILP over a user MILP region (binary knapsack, max sense) at depth 1 == brute force."""
    from oracles.bruteforce import KNAPSACK_CAPACITY, KNAPSACK_WEIGHTS as wts, binary_knapsack_problem
    prob = binary_knapsack_problem()
    rng = np.random.default_rng(2)
    X = np.round(rng.random((12, 2)), 1)
    V = np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1]]) + 0.3 * rng.random((12, 4))
    w = np.ones(12)
    tree, info = fit_spot_mio(prob, X, V, w, depth=1, min_samples_leaf=2, alpha=ALPHA, solver=solver,
                              quantile_step=None, time_limit=30, x_precision=None)
    res = info["result"]
    assert res.proven_optimal
    brute = brute_objective(prob, X, V, w, 1, 2, ALPHA)
    assert res.objective == pytest.approx(brute, abs=1e-6)
    assert info["objective"] == pytest.approx(brute, abs=1e-6)
    # the tree's leaf decisions are feasible 0/1 knapsack solutions
    W = tree.predict(X)
    assert np.all(np.isin(W, (0.0, 1.0))) and np.all(W @ wts <= KNAPSACK_CAPACITY + 1e-9)


# ------------------------------------------------------------------------------------------ one alpha scale
# The SPOT objective is F(T) = Σ ω regret / Σ ω |z*| + alpha · splits everywhere (issue 10 item 3). These tests
# compare greedy pruning's value of F, the MILP model's value and the shared evaluator on the same trees, and
# recompute the alpha at which one split stops paying by hand, so a scale change on any side fails.
from pyomo.environ import value as pyo_value  # noqa: E402

from opttrees.solvers import solve  # noqa: E402
from opttrees.spo import (alpha_from_paper, alpha_to_paper, prune_alpha, pruning_path, refit_nodes,  # noqa: E402
                          spot_norm, spot_objective, stored_objective)
from opttrees.tree import LEAF, Tree  # noqa: E402


def by_hand_norm(pr, C, w):
    """Σ ω |z*(c)| straight from the oracle (not through spot_norm)."""
    return float(w @ np.abs(pr.solve(C)[1]))


def random_tree(pr, X, C, w, depth, rng):
    """A random parallel-split tree of depth <= depth whose every split leaves points on both sides."""
    left, right, feat, thr = [], [], [], []

    def grow(idx, d):
        t = len(left)
        left.append(LEAF), right.append(LEAF), feat.append(LEAF), thr.append(0.0)
        if d == depth or rng.random() < 0.25:
            return t
        cands = [(j, np.unique(X[idx, j])) for j in range(X.shape[1])]
        cands = [(j, u) for j, u in cands if len(u) > 1]
        if not cands:
            return t
        j, u = cands[rng.integers(len(cands))]
        k = rng.integers(1, len(u))
        s = 0.5 * (u[k - 1] + u[k])
        feat[t], thr[t] = j, s
        go = X[idx, j] < s
        left[t] = grow(idx[go], d + 1)
        right[t] = grow(idx[~go], d + 1)
        return t

    grow(np.arange(len(X)), 0)
    m = len(left)
    skel = Tree(left, right, feat, thr, np.zeros((m, pr.n_decisions)), task="spo", n_features=X.shape[1],
                extras={"decision": np.zeros((m, pr.n_decisions))})
    return refit_nodes(skel, pr, X, C, w)


def all_pruned_objectives(tree, alpha, norm):
    """F of every pruned subtree (brute force), from the stored node regrets."""
    L = tree.extras["train_spo"]

    def rec(t):   # list of (regret, splits) of every pruning of the subtree at t
        out = [(L[t], 0)]
        if tree.children_left[t] != LEAF:
            for a in rec(tree.children_left[t]):
                for b in rec(tree.children_right[t]):
                    out.append((a[0] + b[0], a[1] + b[1] + 1))
        return out
    return [r / norm + alpha * k for r, k in rec(0)]


@pytest.mark.parametrize("alpha", [0.0, 1e-4, 0.02])
def test_greedy_pruning_and_milp_objectives_agree_on_the_greedy_tree(alpha):
    """(a) the same tree has the same F in greedy pruning, the shared evaluator, the Pyomo model and the solver."""
    pr, X, C, w = tiny(7, n=16)
    norm = spot_norm(pr, C, w)
    assert norm == pytest.approx(by_hand_norm(pr, C, w), rel=1e-12)
    g = prune_alpha(grow_spo_tree(pr, X, C, w, max_depth=2, min_samples_leaf=2, quantile_step=None), alpha, norm)
    pruning_obj = stored_objective(g, alpha, norm)
    by_hand = float(w @ (np.einsum("ij,ij->i", C, g.predict(X)) - pr.solve(C)[1])) / by_hand_norm(pr, C, w) \
        + alpha * g.n_splits
    assert pruning_obj == pytest.approx(by_hand, abs=1e-9)
    assert spot_objective(pr, g, X, C, w, alpha=alpha) == pytest.approx(pruning_obj, abs=1e-9)
    form = SPOTFormulation(prepare_costs(pr, X, C, w), pr, max_depth=2, min_samples_leaf=2, alpha=alpha)
    assert form.norm == pytest.approx(norm, rel=1e-12)
    res = solve(form, solver="highs", time_limit=20, warm_start=g)
    assert form.tree_objective(g) == pytest.approx(pruning_obj, abs=1e-9)
    assert form.start_objective == pytest.approx(pruning_obj, abs=1e-9)
    assert res.start_objective == pytest.approx(pruning_obj, abs=1e-9)      # the solver's own evaluation
    # fit_spot_mio's greedy start is this very tree (pruned at the same alpha) and the MILP can only improve it
    _, info = fit_spot_mio(pr, X, C, w, depth=2, min_samples_leaf=2, alpha=alpha, quantile_step=None,
                           x_precision=None, time_limit=20)
    assert info["result"].start_objective == pytest.approx(pruning_obj, abs=1e-9)
    assert info["greedy_objective"] == pytest.approx(pruning_obj, abs=1e-9)
    assert info["objective"] <= pruning_obj + 1e-9


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), depth=st.integers(1, 2),
       alpha=st.sampled_from([0.0, 1e-5, 1e-3, 0.01, 0.05, 0.3]), maximise=st.booleans())
def test_pruning_and_milp_objectives_agree_on_random_trees_property(seed, depth, alpha, maximise):
    """(b) for random trees: pruning's F == the evaluator's F == the MILP model's F at the warm start, and
    prune_alpha returns the minimum of F over all pruned subtrees."""
    rng = np.random.default_rng(seed)
    if maximise:
        pr = NewsRecommendation.random(d=4, m=3, seed=12)
        X = np.round(rng.random((10, 2)), 1)
        C = np.clip(0.2 + 0.3 * np.column_stack([X[:, 0], 1 - X[:, 0], X[:, 1], 1 - X[:, 1]])
                    + 0.1 * rng.random((10, 4)), 0, 1)
        w = rng.integers(1, 3, 10).astype(float)
    else:
        pr, X, C, w = tiny(seed % 1000, n=10)
    norm = spot_norm(pr, C, w)
    assert norm == pytest.approx(by_hand_norm(pr, C, w), rel=1e-12)
    form = SPOTFormulation(prepare_costs(pr, X, C, w), pr, max_depth=depth, min_samples_leaf=1, alpha=alpha)
    for _ in range(3):
        t = random_tree(pr, X, C, w, depth, rng)
        f_prune = stored_objective(t, alpha, norm)
        assert spot_objective(pr, t, X, C, w, alpha=alpha) == pytest.approx(f_prune, abs=1e-9)
        assert form.tree_objective(t) == pytest.approx(f_prune, abs=1e-9)
        form.warm_start(t)
        assert pyo_value(form.model.objective) == pytest.approx(f_prune, abs=1e-9)
        p = prune_alpha(t, alpha, norm)
        assert stored_objective(p, alpha, norm) == pytest.approx(min(all_pruned_objectives(t, alpha, norm)),
                                                                 abs=1e-12)
        assert spot_objective(pr, p, X, C, w, alpha=alpha) == pytest.approx(stored_objective(p, alpha, norm),
                                                                            abs=1e-9)


def test_alpha_threshold_for_one_split_is_the_same_for_greedy_and_milp():
    """(c) by hand: one split pays iff alpha < (R_root − R_best) / Σ ω |z*|; greedy and MILP switch there."""
    pr, X, C, w = tiny(3, n=14)
    Cm = pr.sign * C
    _, z = pr._solve_min(Cm)
    N = by_hand_norm(pr, C, w)
    rows = np.arange(len(X))
    root = leaf_loss(pr, Cm, z, w, rows)
    best = min(leaf_loss(pr, Cm, z, w, rows[X[:, j] < s]) + leaf_loss(pr, Cm, z, w, rows[X[:, j] >= s])
               for j in range(X.shape[1]) for s in np.unique(X[:, j])[1:]
               if w[X[:, j] < s].sum() >= 2 and w[X[:, j] >= s].sum() >= 2)
    gain = (root - best) / N
    assert gain > 1e-3
    # the other scale (mean regret) would put the threshold elsewhere: this test tells them apart
    assert abs((root - best) / w.sum() - gain) > 0.5 * gain
    # the weakest-link path, given N, reports the same breakpoint
    g1 = grow_spo_tree(pr, X, C, w, max_depth=1, min_samples_leaf=2, quantile_step=None)
    assert pruning_path(g1, norm=spot_norm(pr, C, w))[-1][0] == pytest.approx(gain, rel=1e-9)
    for factor, splits in ((0.98, 1), (1.02, 0)):
        a = factor * gain
        expect = (best / N + a) if splits else root / N
        g = SPOTree(decision_problem=pr, max_depth=1, min_samples_leaf=2, quantile_step=None, alpha=a).fit(X, C, w)
        assert g.tree_.n_splits == splits
        assert spot_objective(pr, g.tree_, X, C, w, alpha=a) == pytest.approx(expect, abs=1e-9)
        _, info = fit_spot_mio(pr, X, C, w, depth=1, min_samples_leaf=2, alpha=a, quantile_step=None,
                               x_precision=None, time_limit=60)
        res = info["result"]
        assert res.proven_optimal and res.objective == pytest.approx(expect, abs=1e-7)
        assert info["formulation"].extract().n_splits == splits       # the MILP's own tree, before any pruning
        assert info["objective"] == pytest.approx(expect, abs=1e-9)
        m = SPOTree(decision_problem=pr, max_depth=1, min_samples_leaf=2, quantile_step=None, alpha=a, method="mio",
                    x_precision=None, time_limit=60).fit(X, C, w)
        assert m.tree_.n_splits == splits


def test_large_alpha_gives_the_root_only_tree_for_greedy_and_milp():
    pr, X, C, w = tiny(5, n=12)
    for method in ("greedy", "mio"):
        est = SPOTree(decision_problem=pr, max_depth=2, min_samples_leaf=2, quantile_step=None, alpha=2.0, method=method,
                      x_precision=None, time_limit=60).fit(X, C, w)
        assert est.tree_.n_splits == 0, method
    _, info = fit_spot_mio(pr, X, C, w, depth=2, min_samples_leaf=2, alpha=2.0, quantile_step=None,
                           x_precision=None, time_limit=60)
    assert info["result"].proven_optimal and info["formulation"].extract().n_splits == 0
    assert info["objective"] == pytest.approx(spot_objective(pr, info["greedy_tree"], X, C, w), abs=1e-9)


def test_alpha_conversion_to_the_paper_code():
    """Paper code: Σy − Σz* + α_p·n·splits (mean-regret units) ⇔ ours: α_p = alpha · Σω|z*| / Σω."""
    D = shortest_path_data(200, deg=2, noise=0.25, seed=0, n_test=0)
    mean_abs_z = np.abs(D.problem.solve(D.C)[1]).mean()
    assert alpha_to_paper(1e-4, D.problem, D.C) == pytest.approx(1e-4 * mean_abs_z, rel=1e-12)
    assert alpha_from_paper(1e-4, D.problem, D.C) == pytest.approx(1e-4 / mean_abs_z, rel=1e-12)
    assert alpha_from_paper(alpha_to_paper(3e-3, D.problem, D.C), D.problem, D.C) == pytest.approx(3e-3)
    # the two objectives differ by the constant factor N/n, so they rank trees identically
    t = grow_spo_tree(D.problem, D.X, D.C, max_depth=2, min_samples_leaf=20)
    N = spot_norm(D.problem, D.C)
    a = 1e-3
    paper = (np.einsum("ij,ij->i", D.C, t.predict(D.X)) - D.problem.solve(D.C)[1]).mean() \
        + alpha_to_paper(a, D.problem, D.C) * t.n_splits
    assert paper * len(D.C) / N == pytest.approx(spot_objective(D.problem, t, D.X, D.C, alpha=a), rel=1e-12)
