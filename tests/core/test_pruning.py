"""Weakest-link pruning (opttrees.pruning): brute force over all prunings, and its three callers unchanged."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.pruning import (optimal_pruning, optimal_subtree, pruning_objective, pruning_path,
                              split_costs)
from opttrees.tree import HYPERPLANE, LEAF, Tree


# ----------------------------------------------------------------- brute force
def all_prunings(tree, loss, cost):
    """(Σ leaf loss, Σ split cost, n_leaves, kept splits) of every pruned subtree, by enumeration."""
    def rec(t):
        out = [(loss[t], 0.0, 1, frozenset())]
        if tree.children_left[t] != LEAF:
            for a in rec(tree.children_left[t]):
                for b in rec(tree.children_right[t]):
                    out.append((a[0] + b[0], a[1] + b[1] + cost[t], a[2] + b[2], a[3] | b[3] | {t}))
        return out
    return rec(0)


def kept_splits(tree, collapsed):
    """Original ids of the splits that survive collapsing ``collapsed``."""
    return frozenset(int(t) for t in tree.preorder(stop=collapsed)
                     if tree.children_left[t] != LEAF and not collapsed[t])


@st.composite
def weighted_trees(draw, superadditive=True):
    """A random tree shape (depth <= 4) with per-node losses, split costs and a normaliser.

    With ``superadditive`` a split never raises the loss (loss[t] >= loss[left] + loss[right]), as for every
    loss whose leaf prediction is refitted; integer gains make ties frequent.
    """
    cl, cr = [], []

    def rec(d):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF)
        if d < 4 and draw(st.booleans()):
            cl[k] = rec(d + 1)
            cr[k] = rec(d + 1)
        return k

    rec(0)
    m = len(cl)
    tree = Tree(cl, cr, [0 if c != LEAF else LEAF for c in cl], np.zeros(m), np.zeros((m, 1)), task="regression",
                n_features=1)
    ints = st.integers(0, 6)
    loss = np.zeros(m)
    for t in tree.preorder()[::-1]:
        if cl[t] == LEAF:
            loss[t] = draw(ints)
        elif superadditive:
            loss[t] = loss[cl[t]] + loss[cr[t]] + draw(ints)
        else:
            loss[t] = draw(st.integers(0, 20))
    cost = np.where(np.array(cl) != LEAF, [draw(st.integers(1, 3)) for _ in range(m)], 0).astype(float)
    norm = draw(st.sampled_from([1.0, 2.5, 7.0]))
    return tree, loss, cost, norm


ALPHAS = [0.0, 0.05, 0.1, 1 / 3, 0.5, 1.0, 2.0, 10.0]


def check_optimal(tree, loss, cost, norm, alpha, collapsed):
    cands = all_prunings(tree, loss, cost)
    F = [s / norm + alpha * c for s, c, _, _ in cands]
    best = min(F)
    mine = [i for i, c in enumerate(cands) if c[3] == kept_splits(tree, collapsed)]
    assert len(mine) == 1
    assert F[mine[0]] == pytest.approx(best, abs=1e-9)
    # the smallest minimiser (Breiman's T(alpha)): no minimiser has fewer leaves
    assert cands[mine[0]][2] == min(c[2] for c, f in zip(cands, F) if f <= best + 1e-9)


@settings(max_examples=60, deadline=None)
@given(weighted_trees(superadditive=False))
def test_optimal_pruning_equals_brute_force(case):
    tree, loss, cost, norm = case
    for alpha in ALPHAS:
        mask = optimal_pruning(tree, loss, alpha, norm=norm, split_cost=cost)
        check_optimal(tree, loss, cost, norm, alpha, mask)
        # the pruned tree carries its nodes' losses and costs (extras move with their nodes)
        t2 = Tree(tree.children_left, tree.children_right, tree.feature, tree.threshold, tree.value,
                  task="regression", n_features=1, extras={"loss": loss, "cost": cost})
        sub = optimal_subtree(t2, loss, alpha, norm=norm, split_cost=cost)
        assert pruning_objective(sub, sub.extras["loss"], alpha, norm, sub.extras["cost"]) == pytest.approx(
            min(s / norm + alpha * c for s, c, _, _ in all_prunings(tree, loss, cost)), abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(weighted_trees(superadditive=True), st.sampled_from(["all", "first"]))
def test_pruning_path_gives_the_optimal_subtree_at_every_alpha(case, ties):
    tree, loss, cost, norm = case
    path = pruning_path(tree, loss, norm=norm, split_cost=cost, ties=ties,
                        **({"atol": 1e-15, "rtol": 0.0} if ties == "first" else {}))
    a = path.alphas
    assert a[0] == 0 and np.all(np.diff(a) >= 0)
    assert path.leaf_mask(len(path) - 1).tolist() == [t == 0 for t in range(tree.n_nodes)]  # ends at the root
    if ties == "first":
        assert all(len(p) == 1 for p in path.pruned[1:])
    else:
        assert np.all(np.diff(a[1:]) > 0)         # one subtree per distinct alpha (a[1] may be 0 = a[0])
    for k in range(1, len(path)):    # nested: T_k is T_{k-1} with more collapsed nodes
        assert np.all(path.collapsed(k - 1) <= path.collapsed(k))
    mids = [0.5 * (x + y) for x, y in zip(a[:-1], a[1:])] + [a[-1] + 1.0]
    for alpha in ALPHAS + list(a) + mids:
        k = path.index_at(alpha)
        check_optimal(tree, loss, cost, norm, alpha, path.collapsed(k))
        dp = optimal_pruning(tree, loss, alpha, norm=norm, split_cost=cost)
        assert kept_splits(tree, path.collapsed(k)) == kept_splits(tree, dp)
    # leaf_sums / leaf_mask agree with the pruned trees
    vals = np.arange(tree.n_nodes, dtype=float)
    for k in range(len(path)):
        sub = tree.prune(path.collapsed(k))
        assert path.leaf_sums(vals)[k] == path.leaf_mask(k) @ vals
        assert path.leaf_mask(k).sum() == sub.n_leaves == path.subtree(k).n_leaves


def test_path_ties_all_versus_first_by_hand():
    # root splits into two identical cherries: both are weakest links at alpha = 1
    tree = Tree([1, 3, 5, LEAF, LEAF, LEAF, LEAF], [2, 4, 6, LEAF, LEAF, LEAF, LEAF], [0, 0, 0, -1, -1, -1, -1],
                [0.5, 0.2, 0.8, 0, 0, 0, 0], np.zeros((7, 1)), task="regression", n_features=1)
    loss = np.array([10.0, 3, 3, 1, 1, 1, 1])
    p_all = pruning_path(tree, loss)
    assert p_all.alphas.tolist() == [0.0, 1.0, 4.0]
    assert [p.tolist() for p in p_all.pruned] == [[], [1, 2], [0]]
    p_first = pruning_path(tree, loss, ties="first")
    assert p_first.alphas.tolist() == [0.0, 1.0, 1.0, 4.0]
    assert [p.tolist() for p in p_first.pruned] == [[], [1], [2], [0]]
    assert p_all.index_at(1.0) == 1 and p_first.index_at(1.0) == 2 and p_first.index_at(0.999) == 0
    assert optimal_pruning(tree, loss, 1.0).tolist() == [False, True, True] + [False] * 4   # ties prune
    assert optimal_subtree(tree, loss, 4.0).n_nodes == 1
    assert pruning_objective(tree, loss, 0.5) == pytest.approx(4 + 1.5)
    # a split that raises the loss (possible for SPO regret) has a negative gain: alpha stays at 0
    p = pruning_path(tree, np.array([1.0, 3, 3, 1, 1, 1, 1]))
    assert p.alphas.tolist() == [0.0, 0.0]


def test_split_costs_count_hyperplane_coefficients():
    tree = Tree([1, LEAF, 3, LEAF, LEAF], [2, LEAF, 4, LEAF, LEAF], [0, LEAF, HYPERPLANE, LEAF, LEAF],
                [0.5, 0, 2.0, 0, 0], np.zeros((5, 1)), task="regression",
                coef=[[0, 0, 0], [0, 0, 0], [1, 0, 2], [0, 0, 0], [0, 0, 0]])
    assert split_costs(tree).tolist() == [1, 0, 2, 0, 0]


def test_bad_arguments():
    tree = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0, 0], np.zeros((3, 1)),
                task="regression")
    loss = np.array([3.0, 1.0, 1.0])
    with pytest.raises(InputError, match="one entry per node"):
        pruning_path(tree, loss[:2])
    with pytest.raises(InputError, match="alpha"):
        optimal_pruning(tree, loss, -0.1)
    with pytest.raises(InputError, match="alpha"):
        optimal_pruning(tree, loss, "0.1")
    with pytest.raises(InputError, match="norm"):
        optimal_pruning(tree, loss, 0.1, norm=0.0)
    with pytest.raises(InputError, match="split_cost must be positive"):
        pruning_path(tree, loss, split_cost=np.zeros(3))
    with pytest.raises(InputError, match="ties"):
        pruning_path(tree, loss, ties="some")


# ----------------------------------------------------------------- the three callers, unchanged
# Inputs are random trees with data drawn from them (no heuristic growth involved, so other modules' changes
# cannot move them); the expected values are what the pre-refactor pruners (three private copies) returned.
def random_split_tree(X, depth, rng, hyper=False):
    """Random parallel (with ``hyper``, some 2-feature hyperplane) splits at data values; top two levels split."""
    cl, cr, f, thr, coef = [], [], [], [], []

    def rec(d):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF); f.append(LEAF); thr.append(0.0); coef.append(np.zeros(X.shape[1]))
        if d < depth and (d < 2 or rng.random() < 0.7):
            if hyper and rng.random() < 0.5:
                a = np.zeros(X.shape[1])
                a[rng.choice(X.shape[1], 2, replace=False)] = rng.uniform(-1, 1, 2)
                proj = np.unique(X @ a)   # threshold between two projections: no point on the hyperplane
                f[k], coef[k], thr[k] = HYPERPLANE, a, float(proj[len(proj) // 2 - 1:][:2].mean())
            else:
                j = int(rng.integers(X.shape[1]))
                f[k], thr[k] = j, float(rng.choice(np.unique(X[:, j])[1:]))
            cl[k] = rec(d + 1)
            cr[k] = rec(d + 1)
        return k

    rec(0)
    return cl, cr, f, thr, np.array(coef)


def heuristics_case(seed, loss, hyper=False):
    """Data drawn from a random tree (labels / values per leaf plus noise), so its splits have varied gains."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((90, 3)), 1)
    cl, cr, f, thr, coef = random_split_tree(X[:60], 4, rng, hyper)
    leaf = Tree(cl, cr, f, thr, np.zeros((len(cl), 1)), task="regression", coef=coef, n_features=3).apply(X)
    if loss == "misclassification":
        y = np.where(rng.random(90) < 0.75, rng.integers(0, 3, len(cl))[leaf], rng.integers(0, 3, 90))
    else:
        y = np.round(rng.normal(0, 1, len(cl))[leaf] + 0.4 * rng.standard_normal(90), 2)
    tree = Tree(cl, cr, f, thr, np.zeros((len(cl), 1)), task="regression", n_features=3,
                coef=coef if hyper else None)
    return X[:60], y[:60], X[60:], y[60:], tree


HEURISTICS_BEFORE = {
    (0, "misclassification", False): dict(
        pruned=[2, 0], alphas=[0.0, 0.0, 0.213333333333], errors=[0.0333333333333, 0.0333333333333, 0.266666666667],
        tune=[0.0, 0.0333333333333]),
    (1, "misclassification", True): dict(
        pruned=[1, 9, 12, 6, 0], alphas=[0.0, 0.0, 0.0, 0.0, 0.0882352941176, 0.279411764706],
        errors=[0.166666666667, 0.166666666667, 0.166666666667, 0.166666666667, 0.433333333333, 0.466666666667],
        tune=[0.0, 0.166666666667]),
    (2, "squared", False): dict(
        pruned=[1, 10, 7, 6, 0], alphas=[0.0, 0.0, 0.000593420146243, 0.0216825708575, 0.0384592266844,
                                         0.392179599735],
        errors=[0.166600611754, 0.166600611754, 0.162791236582, 0.169813952328, 0.233065353112, 0.885951666667],
        tune=[0.0111379955019, 0.162791236582]),
    (3, "absolute", True): dict(
        pruned=[3, 18, 9, 16, 1, 0], alphas=[0.0, 0.0, 0.0, 0.0139141335005, 0.0162958320276, 0.0991329781678,
                                             0.111250391727],
        errors=[0.308333333333, 0.308333333333, 0.339333333333, 0.400666666667, 0.435333333333, 0.522333333333,
                0.596333333333],
        tune=[0.0, 0.308333333333]),
}


@pytest.mark.parametrize("key", list(HEURISTICS_BEFORE))
def test_heuristics_prune_path_and_tune_cp_unchanged(key):
    from opttrees.heuristics import prune_path, prune_to_alpha, tune_cp
    from opttrees.heuristics.core import make_problem, objective
    from opttrees.heuristics.pruning import _train_node_losses
    seed, loss, hyper = key
    X, y, Xv, yv, tree = heuristics_case(seed, loss, hyper)
    prob = make_problem(prepare(X, y, task="classification" if loss == "misclassification" else "regression"), loss)
    want = HEURISTICS_BEFORE[key]
    path = prune_path(tree, prob, Xv, yv)
    assert path.pruned == [None] + want["pruned"]
    assert path.alphas == pytest.approx(want["alphas"], rel=1e-10, abs=1e-13)
    assert path.errors == pytest.approx(want["errors"], rel=1e-10)
    assert tune_cp(tree, prob, Xv, yv) == pytest.approx(tuple(want["tune"]), rel=1e-10, abs=1e-13)
    # and prune_to_alpha is the best pruning, by brute force over all prunings, of the OCT/ORT objective itself
    R = _train_node_losses(tree, prob)[0]
    cands = all_prunings(tree, R, split_costs(tree))
    for alpha in [0.0, 0.01, 0.05, 0.2]:
        F = [s / prob.baseline + alpha * c for s, c, _, _ in cands]
        got = prune_to_alpha(tree, prob, alpha)
        assert objective(got, prob, alpha) == pytest.approx(min(F), abs=1e-9)
        assert got.n_leaves == min(c[2] for c, f in zip(cands, F) if f <= min(F) + 1e-9)


def spo_case():
    from opttrees.experiments.spo_data import shortest_path_data
    from opttrees.spo import refit_nodes
    D = shortest_path_data(120, deg=4, noise=0.25, seed=3, n_test=100)
    cl, cr, f, thr, _ = random_split_tree(D.X, 4, np.random.default_rng(5))
    m, d = len(cl), D.C.shape[1]
    skel = Tree(cl, cr, f, thr, np.zeros((m, d)), task="spo", n_features=D.X.shape[1],
                extras={"decision": np.zeros((m, d))})
    return D, refit_nodes(skel, D.problem, D.X, D.C)


def test_spo_pruning_unchanged():
    from opttrees.spo import (node_loss_on, prune_alpha, prune_on_validation, prune_zero_gain, pruning_path as
                              spo_path, spot_norm, stored_objective)
    D, t = spo_case()
    pr = D.problem
    assert t.n_nodes == 25
    N = spot_norm(pr, D.C, None)
    assert N == pytest.approx(3691.84788392624, rel=1e-12)
    path = spo_path(t, norm=N)
    assert [a for a, _ in path] == pytest.approx([0.0, 0.0, 0.00112566576042, 0.0033490447152, 0.0104580633571],
                                                 rel=1e-10, abs=1e-15)
    assert [t.prune(mask).n_leaves for _, mask in path] == [13, 7, 4, 3, 1]
    on_val = {"spo": [0.745995318616, 0.828634254203, 0.197218768345, 0.473531262956, 0.0330832627815,
                      0.922461339567],
              "mse": [0.745995318616, 0.828634254203, 0.197218768345, 0.473531262956, 0.0330832627815,
                      0.991422081538, 0.155344349619, 0.959165971039, 0.922461339567, 0.415164612883,
                      0.0648066163675, 0.33863084595]}
    for crit, thr in on_val.items():
        pv = prune_on_validation(t, pr, D.X_test, D.C_test, criterion=crit)
        assert pv.threshold[pv.children_left != LEAF] == pytest.approx(thr, rel=1e-10)
    for alpha, splits, F in [(0.0, 6, 0.0695090451222), (0.002, 3, 0.0788860424035), (0.01, 2, 0.0962350871187),
                             (0.05, 0, 0.0971512138328)]:
        p = prune_alpha(t, alpha, N)
        assert p.n_splits == splits and stored_objective(p, alpha, N) == pytest.approx(F, rel=1e-10)
    assert prune_zero_gain(t).n_leaves == 7
    assert node_loss_on(t, pr, D.X_test, D.C_test, np.ones(100))[:5] == pytest.approx(
        [382.104709164, 280.180380321, 180.845818146, 54.4834728578, 5.60254786218], rel=1e-10)


def test_cart_conversion_pruning_unchanged_and_optimal():
    from sklearn.tree import DecisionTreeClassifier

    from opttrees.heuristics.cart import cart_classifier_tree, prune_classification, tree_from_sklearn
    from opttrees.objectives import misclassification_baseline
    rng = np.random.default_rng(11)
    X = np.round(rng.random((150, 4)), 2)
    y = ((X[:, 0] + X[:, 1] > 1) ^ (X[:, 2] > 0.7)).astype(int) + (rng.random(150) < 0.15)
    d = prepare(X, y)
    before = {
        0.0: ([1, 2, 0, -1, 2, -1, -1, 3, -1, 0, -1, -1, 3, 3, -1, 1, -1, -1, 2, -1, 1, -1, -1],
              [0.875, 0.775, 0.77, 0.65, 0.41, 0.555, 0.165, 0.125, 0.915, 0.755, 0.975]),
        0.03: ([1, 2, 0, -1, -1, 3, -1, 0, -1, -1, -1], [0.875, 0.775, 0.77, 0.41, 0.555]),
        0.1: ([1, 2, 0, -1, -1, -1, -1], [0.875, 0.775, 0.77]),
    }
    # CART runs on rank indices since issue 26 (float32 merged close values): two cuts that sat exactly midway
    # between node values moved to the other gap around that midpoint (0.175 -> 0.165, 0.965 -> 0.975), same routing
    for alpha, (feat, thr) in before.items():
        t = cart_classifier_tree(d, 4, 2, alpha, random_state=0)
        assert t.feature.tolist() == feat
        assert t.threshold[t.children_left != LEAF] == pytest.approx(thr, rel=1e-12)
    assert cart_classifier_tree(d, 0).n_nodes == 1
    full = tree_from_sklearn(DecisionTreeClassifier(max_depth=3, random_state=0).fit(d.X, d.y), d)
    loss = full.value.sum(1) - full.value.max(1)
    base = misclassification_baseline(d.y, d.n_classes, d.sample_weight)
    cands = all_prunings(full, loss, np.ones(full.n_nodes))
    for alpha in [0.0, 0.01, 0.02, 0.05, 0.2]:
        p = prune_classification(full, d, alpha)
        F = [s / base + alpha * c for s, c, _, _ in cands]
        assert pruning_objective(p, p.value.sum(1) - p.value.max(1), alpha, norm=base) == pytest.approx(min(F),
                                                                                                    abs=1e-12)
        assert p.n_leaves == min(c[2] for c, f in zip(cands, F) if f <= min(F) + 1e-12)
        leaf = p.apply(X)                     # payloads moved with their nodes: counts are the leaves' own
        assert np.array_equal(p.value[p.leaves], np.array([np.bincount(d.y[leaf == t], minlength=3)
                                                           for t in p.leaves]))
