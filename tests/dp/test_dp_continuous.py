"""The continuous-feature DP (opttrees.dp.continuous): optimum == brute force over every midpoint, == the
binary engine over every midpoint, the same tree for any n_jobs, anytime bounds, bad input."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracles.bruteforce import brute_force_cost
from opttrees.dp import CostSensitiveTask, RegressionTask, solve_dp
from opttrees.dp.continuous import solve_dp_continuous
from opttrees.errors import InputError


@st.composite
def small_problem(draw):
    n = draw(st.integers(3, 13))
    p = draw(st.integers(1, 3))
    style = draw(st.sampled_from(["ties", "near", "normal", "constant"]))
    rng = np.random.default_rng(draw(st.integers(0, 10 ** 6)))
    if style == "ties":
        X = rng.integers(0, 3, (n, p)).astype(float)
    elif style == "near":          # values 1e-12 apart: every one is still its own split
        X = 0.3 + rng.integers(0, 4, (n, p)) * 1e-12 * rng.choice([1, 1e6], size=p)
    elif style == "constant":
        X = rng.normal(size=(n, p))
        X[:, 0] = 7.0
    else:
        X = rng.normal(size=(n, p))
    loss = draw(st.sampled_from(["mis", "mis3", "cost", "sq"]))
    K = 3 if loss == "mis3" else 2
    y = rng.integers(0, K, n) if loss != "sq" else rng.normal(size=n).round(2)
    w = rng.integers(1, 4, n).astype(float) if draw(st.booleans()) else np.ones(n)
    depth = draw(st.integers(1, 3))
    nodes = draw(st.sampled_from([None, 1, 2, 3]))
    minleaf = draw(st.sampled_from([1, 1, 2, 3]))
    alpha = draw(st.sampled_from([0.0, 0.0, 0.1]))
    return X, y, w, loss, depth, nodes, minleaf, alpha


def _task(loss, y):
    if loss == "sq":
        return RegressionTask(), None
    if loss == "cost":
        M = np.array([[0.0, 1.0], [3.0, 0.0]])
        return CostSensitiveTask(M, classes=[0, 1]), M
    return None, None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_problem())
def test_optimum_equals_brute_force(prob):
    X, y, w, loss, depth, nodes, minleaf, alpha = prob
    if len(y) < minleaf:
        return
    task, M = _task(loss, y)
    tree, res = solve_dp_continuous(X, y, task=task, max_depth=depth, max_num_nodes=nodes, min_samples_leaf=minleaf,
                                    alpha=alpha, sample_weight=w)
    base = res.dp_baseline
    want = brute_force_cost(X, y, depth, nodes, alpha * base, minleaf, w, "sq" if loss == "sq" else
                            "cost" if loss == "cost" else "mis", M)
    assert res.status == "optimal"
    assert res.objective * base == pytest.approx(want, rel=1e-9, abs=1e-9)
    assert res.bound == pytest.approx(res.objective)
    assert tree.n_splits <= (2 ** depth - 1 if nodes is None else nodes)
    assert tree.depth <= depth


# issue 38, item 1: with a minimum leaf size a side's optimum can fall when rows are added (a split becomes
# feasible), so interval bounds built on subset monotonicity cut off the optimum at depth 3
MINLEAF_X = np.array([[1, 1], [2, 0], [0, 21], [0, 12], [0, 14], [1, 10], [0, 18], [0, 3], [1, 19], [2, 17], [2, 13],
                      [2, 16]], float)
MINLEAF_Y = np.array([1, 1, 2, 0, 0, 2, 0, 0, 2, 3, 2, 3])


@pytest.mark.parametrize("binarization", ["exact", "midpoints"])
def test_min_leaf_at_depth_three_finds_the_optimum(binarization):
    from opttrees import OptimalTreeClassifier
    clf = OptimalTreeClassifier(method="dp", max_depth=3, min_samples_leaf=2, binarization=binarization)
    clf.fit(MINLEAF_X, MINLEAF_Y)
    assert clf.solve_result_.status == "optimal"
    assert (clf.predict(MINLEAF_X) != MINLEAF_Y).sum() == 0      # the old bound called a 1-error tree optimal
    assert brute_force_cost(MINLEAF_X, MINLEAF_Y, 3, minleaf=2) == 0


def test_min_leaf_regression_at_depth_three_finds_the_optimum():
    X = np.array([[0.], [3], [5], [5], [9], [10], [11], [12], [14], [15], [17], [18]])
    y = np.array([-2., 1, -3, -1, 11, 5, -5, 7, 0, 1, 24, 26])
    tree, res = solve_dp_continuous(X, y, task=RegressionTask(), max_depth=3, min_samples_leaf=2)
    assert res.status == "optimal"
    assert res.objective * res.dp_baseline == pytest.approx(brute_force_cost(X, y, 3, minleaf=2, loss="sq"), rel=1e-9)
    assert res.objective == pytest.approx(0.0863372093, rel=1e-8)    # the old bound stopped at 0.0865552


def test_default_mio_proof_by_dp_bound_is_sound_with_min_leaf():
    """More than 100 midpoints: the default MIO's DP start and bound come from the continuous search."""
    from opttrees import OptimalTreeClassifier
    Xw = np.hstack([MINLEAF_X] + [MINLEAF_X[:, 1:] + 100 * k for k in range(1, 10)])
    clf = OptimalTreeClassifier(max_depth=3, min_samples_leaf=2, time_limit=60).fit(Xw, MINLEAF_Y)
    assert clf.solve_result_.status == "optimal"
    assert (clf.predict(Xw) != MINLEAF_Y).sum() == 0


@pytest.mark.parametrize("seed", range(40))
def test_min_leaf_depth_three_random(seed):
    """Depth 3 with a minimum leaf size, weights, offsets and node limits against brute force (the hypothesis test
    above draws depth 3 with min leaf rarely)."""
    r = np.random.default_rng(seed)
    n, p = int(r.integers(9, 14)), int(r.integers(2, 4))
    X = r.integers(0, int(r.integers(3, 12)), (n, p)).astype(float) + (1e6 if seed % 3 == 0 else 0.0)
    reg = seed % 4 == 0
    y = r.normal(size=n).round(1) if reg else r.integers(0, int(r.integers(2, 5)), n)
    w = r.integers(1, 4, n).astype(float) if seed % 2 else np.ones(n)
    ml, nodes = int(r.integers(2, 5)), (None if seed % 5 else int(r.integers(2, 7)))
    tree, res = solve_dp_continuous(X, y, task=RegressionTask() if reg else None, max_depth=3, max_num_nodes=nodes,
                                    min_samples_leaf=ml, sample_weight=w, alpha=0.01 * (seed % 3))
    base = res.dp_baseline
    want = brute_force_cost(X, y, 3, nodes, 0.01 * (seed % 3) * base, ml, w, "sq" if reg else "mis")
    assert res.status == "optimal"
    assert res.objective * base == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_zero_weight_rows_are_absent():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    w = np.array([1.0, 0.0, 1.0, 1.0])
    tree, res = solve_dp_continuous(X, y, max_depth=1, sample_weight=w)
    want = brute_force_cost(X[w > 0], y[w > 0], 1)
    assert res.objective * res.dp_baseline == pytest.approx(want)


@pytest.mark.parametrize("loss", ["mis", "sq"])
@pytest.mark.parametrize("depth", [2, 3])
def test_equals_binary_engine_over_every_midpoint(loss, depth):
    rng = np.random.default_rng(depth)
    X = rng.normal(size=(160, 4)).round(2)
    if loss == "mis":
        y, task = (X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=160) > 0).astype(int), None
    else:
        y, task = X[:, 0] ** 2 + np.sin(3 * X[:, 2]) + 0.1 * rng.normal(size=160), RegressionTask()
    _, exact = solve_dp(X, y, task=task, max_depth=depth, binarization="exact")
    _, binary = solve_dp(X, y, task=task, max_depth=depth, binarization="midpoints")
    assert exact.timings["engine"] == "continuous" and binary.timings["engine"] == "binary"
    assert exact.status == binary.status == "optimal"
    assert exact.objective == pytest.approx(binary.objective, rel=1e-9)


def test_same_tree_for_any_n_jobs():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 5)).round(1)        # many ties: many equally good trees
    y = (X[:, 0] + X[:, 3] > 0.2).astype(int) ^ (rng.random(600) < 0.2)
    trees = [solve_dp_continuous(X, y, max_depth=d, n_jobs=j)[0].to_json() for d in (2, 3) for j in (1, 2)]
    assert trees[0] == trees[1] and trees[2] == trees[3]


def test_auto_picks_the_continuous_search_on_many_midpoints():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 8))
    y = (X[:, 0] > 0).astype(int)
    assert solve_dp(X, y, max_depth=2)[1].timings["engine"] == "continuous"
    assert solve_dp(X.round(0), y, max_depth=2)[1].timings["engine"] == "binary"


def test_time_limit_returns_a_tree_and_a_valid_bound():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 6))
    y = ((X[:, 0] > 0) ^ (X[:, 1] * X[:, 2] > 0.1)).astype(int) ^ (rng.random(3000) < 0.1)
    tree, res = solve_dp_continuous(X, y, max_depth=4, time_limit=1.0)
    assert res.status == "time_limit"
    assert 0.0 <= res.bound <= res.objective
    assert tree.depth <= 4
    assert res.objective == pytest.approx(float(np.average(tree.predict(X) != y)) * len(y) / res.dp_baseline)


@pytest.mark.parametrize("minl", [1, 4])
def test_a_deep_search_stopped_after_its_first_level_has_a_bound_above_zero(monkeypatch, minl):
    """Depth >= 3 is searched coarse to fine over every root feature: once each feature's middle threshold is
    evaluated, every threshold interval has a bound, so a search stopped there reports a lower bound above 0
    (before, a feature not yet reached bounded nothing and the bound stayed 0 for minutes at 20,000 rows), and
    that bound is below the optimum."""
    import opttrees.dp.continuous as C
    from opttrees.interrupt import STOP
    rng = np.random.default_rng(4)
    X = rng.normal(size=(250, 4)).round(2)
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5]) ^ (rng.random(250) < 0.15)
    _, full = solve_dp_continuous(X, y, max_depth=3, min_samples_leaf=minl)
    assert full.proven_optimal
    evaluate = C._Searcher.evaluate
    seen = []

    def counted(self, so, xs, m, d, *args):
        if m == len(y) and d == 3:            # a root threshold
            seen.append(1)
            if len(seen) > X.shape[1]:        # the first level is over: one threshold per feature
                STOP.set()
        return evaluate(self, so, xs, m, d, *args)

    monkeypatch.setattr(C._Searcher, "evaluate", counted)
    try:
        tree, res = solve_dp_continuous(X, y, max_depth=3, min_samples_leaf=minl)
    finally:
        STOP.clear()
    assert res.status == "interrupted"
    assert 0.0 < res.bound <= full.objective + 1e-12
    assert res.objective >= full.objective - 1e-12


@pytest.mark.parametrize("after", [1, 3])
def test_a_deep_search_stopped_while_refining_keeps_the_bound_of_its_coarse_levels(monkeypatch, after):
    """A stop during the refinement (after the three coarse levels, 7 evaluations per feature) returns the bound the
    coarse levels proved, not 0: a feature left mid-search keeps the bound of its last finished level (before, its
    search returned 0 at the stop and that 0 became the answer's bound whenever the kernels outran the poll)."""
    import opttrees.dp.continuous as C
    from opttrees.interrupt import STOP
    rng = np.random.default_rng(4)
    X = rng.normal(size=(250, 4)).round(2)
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5]) ^ (rng.random(250) < 0.15)
    _, full = solve_dp_continuous(X, y, max_depth=3)
    evaluate = C._Searcher.evaluate
    seen = []

    def counted(self, so, xs, m, d, *args):
        if m == len(y) and d == 3:            # a root threshold
            seen.append(1)
            if len(seen) == 7 * X.shape[1] + after:
                STOP.set()
                self.prob.stop[0] = 1         # at once, not at the next poll
        return evaluate(self, so, xs, m, d, *args)

    monkeypatch.setattr(C._Searcher, "evaluate", counted)
    try:
        tree, res = solve_dp_continuous(X, y, max_depth=3)
    finally:
        STOP.clear()
    assert len(seen) > 7 * X.shape[1]
    assert res.status == "interrupted"
    assert 0.0 < res.bound <= full.objective + 1e-12
    assert res.objective >= full.objective - 1e-12


def test_bad_input():
    X = np.zeros((4, 2))
    y = np.array([0, 1, 0, 1])
    with pytest.raises(InputError, match="n_jobs"):
        solve_dp_continuous(X, y, n_jobs=0)
    with pytest.raises(InputError, match="feature costs"):
        solve_dp_continuous(X, y, task=CostSensitiveTask(1 - np.eye(2), feature_costs=[1.0, 1.0]))
    with pytest.raises(InputError, match="binarization"):
        solve_dp(X, y, binarization="exactly")
    with pytest.raises(InputError, match="switch of the binary engine"):
        solve_dp(X, y, binarization="exact", use_depth_two=False)
    with pytest.raises(InputError, match="NaN"):
        solve_dp_continuous(np.array([[np.nan], [1.0]]), [0, 1])
    with pytest.raises(InputError, match="one entry per row"):
        solve_dp_continuous(X, [0, 1])


def _best_rooted_at(X, y, f):
    """Brute force: the fewest errors of a depth-two tree whose root splits feature f (inf: f cannot split)."""
    def leaf(m):
        return min(int(y[m].sum()), int(m.sum() - y[m].sum()))

    def depth_one(m):
        best = leaf(m)
        for g in range(X.shape[1]):
            for t in np.unique(X[m, g])[1:]:
                best = min(best, leaf(m & (X[:, g] < t)) + leaf(m & (X[:, g] >= t)))
        return best
    out = np.inf
    for t in np.unique(X[:, f])[1:]:
        left = X[:, f] < t
        out = min(out, depth_one(left) + depth_one(~left))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_depth_two_with_tied_root_features_is_optimal_and_the_same_for_any_n_jobs(seed):
    # the lead feature is searched first and the others against its cost: whichever feature wins a tie, the tree is
    # optimal (brute force over the trees rooted at each feature), rooted where that optimum is attained, and the
    # same for every n_jobs
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, (60, 2)).astype(float)
    # features 1 and 3 (2 and 4) split the same rows at the same levels, but feature 1's extra values within a level
    # move its first evaluated threshold, so the lead feature is sometimes the later one
    jitter = np.round(rng.random(60) * 0.5, 2)
    X = np.column_stack([rng.integers(0, 4, 60), base[:, 0] + jitter, base[:, 1], base[:, 0] * 2, base[:, 1] + jitter])
    y = ((base[:, 0] > 1) ^ (base[:, 1] > 2)).astype(int)
    y[rng.random(60) < 0.15] ^= 1
    tree, res = solve_dp_continuous(X, y, max_depth=2)
    per = [_best_rooted_at(X, y, f) for f in range(X.shape[1])]
    errors = int((tree.predict(X) != y).sum())
    assert errors == min(per)
    assert per[tree.feature[0]] == errors
    for n_jobs in (2, 3):
        other, _ = solve_dp_continuous(X, y, max_depth=2, n_jobs=n_jobs)
        assert np.array_equal(other.feature, tree.feature) and np.array_equal(other.predict(X), tree.predict(X))
