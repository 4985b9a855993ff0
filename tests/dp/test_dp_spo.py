"""SPO trees by dynamic programming (opttrees.dp.spo): optimum == brute force over every tree; bad input; the
depth-two solver (the default engine) == the reference recursion (``_engine="python"``) == brute force."""

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opttrees.dp import spo as spo_mod
from opttrees.dp.spo import solve_dp_spo
from opttrees.errors import InputError
from opttrees.interrupt import STOP
from opttrees.oracles import GridShortestPath
from opttrees.spo.objective import spot_norm, spot_objective
from oracles.spo import brute_spo


@pytest.mark.parametrize("seed,depth,alpha", [(0, 1, 0.0), (1, 2, 0.0), (2, 2, 0.01), (3, 0, 0.0)])
def test_spo_dp_equals_brute_force(seed, depth, alpha):
    rng = np.random.default_rng(seed)
    prob = GridShortestPath(2, 3)
    n = 24
    X = rng.integers(0, 4, (n, 2)).astype(float)
    C = 1 + rng.random((n, prob.n_decisions)) + np.outer(X[:, 0], np.linspace(0, 1, prob.n_decisions))
    tree, res = solve_dp_spo(X, C, prob, max_depth=depth, alpha=alpha, binarization="midpoints")
    from opttrees.data.binarizers import Binarizer
    Xb = Binarizer(strategy="midpoints").fit_transform(X)
    from opttrees.spo.objective import spot_norm
    norm = spot_norm(prob, C)
    assert res.proven_optimal
    assert res.objective == pytest.approx(brute_spo(Xb, C, prob, depth, alpha, norm), abs=1e-9)
    # the reported objective is the returned tree's own SPOT objective
    assert spot_objective(prob, tree, X, C, alpha=alpha) == pytest.approx(res.objective, abs=1e-9)
    assert tree.depth <= depth


def test_spo_bad_problem_and_time_limit():
    X = np.zeros((5, 2))
    with pytest.raises(InputError, match="DecisionProblem"):
        solve_dp_spo(X, np.ones((5, 3)), object())
    prob = GridShortestPath(2, 2)
    with pytest.raises(InputError, match="max_depth"):
        solve_dp_spo(X, np.ones((5, prob.n_decisions)), prob, max_depth=9)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    C = 1 + rng.random((300, prob.n_decisions))
    tree, res = solve_dp_spo(X, C, prob, max_depth=3, time_limit=0.3)
    assert res.status in ("time_limit", "optimal")
    assert res.bound <= res.objective + 1e-12


# --- the depth-two solver (the default engine) against the reference recursion and brute force ---------------------

@contextlib.contextmanager
def pair_sums(method, max_bytes=None):
    """Force how the depth-two solver gets its pair sums ("chains" / "dense"), or leave subproblems whose pair sums
    take more than ``max_bytes`` to the recursion."""
    old = spo_mod.PAIR_SUMS, spo_mod.MAX_PAIR_BYTES
    spo_mod.PAIR_SUMS = method
    if max_bytes is not None:
        spo_mod.MAX_PAIR_BYTES = max_bytes
    try:
        yield
    finally:
        spo_mod.PAIR_SUMS, spo_mod.MAX_PAIR_BYTES = old


def tied_instance(seed, n, p, levels, grid, dup):
    """Integer features (ties), costs on a coarse grid (equal leaf costs), the first ``dup`` rows repeated."""
    rng = np.random.default_rng(seed)
    prob = GridShortestPath(*grid)
    X = rng.integers(0, levels, (n, p)).astype(float)
    C = np.round(1 + rng.random((n, prob.n_decisions)) * 2 + np.outer(X[:, 0] - 1, rng.random(prob.n_decisions)), 1)
    if dup:
        X = np.vstack([X, X[:dup]])
        C = np.vstack([C, C[:dup]])
    return prob, X, C


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(4, 14), p=st.integers(1, 3), levels=st.integers(2, 5),
       grid=st.sampled_from([(2, 2), (2, 3)]), dup=st.integers(0, 3), depth=st.integers(0, 3),
       msl=st.integers(1, 3), alpha=st.sampled_from([0.0, 0.01]), weighted=st.booleans(),
       method=st.sampled_from(["auto", "chains", "dense", "left"]))
def test_depth_two_solver_equals_the_recursion_and_brute_force(seed, n, p, levels, grid, dup, depth, msl, alpha,
                                                               weighted, method):
    prob, X, C = tied_instance(seed, n, p, levels, grid, dup)
    w = np.random.default_rng(seed + 1).integers(1, 3, len(X)).astype(float) if weighted else None
    kw = dict(max_depth=depth, alpha=alpha, min_samples_leaf=msl, sample_weight=w, binarization="midpoints")
    _, ref = solve_dp_spo(X, C, prob, _engine="python", **kw)
    with pair_sums("auto", -1) if method == "left" else pair_sums(method):   # no pair sums fit in -1 bytes
        tree, res = solve_dp_spo(X, C, prob, **kw)
    assert res.status == ref.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, abs=1e-12)
    assert spot_objective(prob, tree, X, C, sample_weight=w, alpha=alpha) == pytest.approx(res.objective, abs=1e-12)
    assert tree.depth <= depth
    assert min(np.bincount(tree.apply(X))[tree.leaves]) >= msl
    if method == "left":   # no pair sums made (a subproblem that no column can split is still solved as a leaf)
        assert res.timings["depth_two_dense"] == 0
    elif depth >= 2:
        assert res.timings["depth_two_calls"] > 0
    from opttrees.data.binarizers import Binarizer
    Xb = Binarizer(strategy="midpoints").fit_transform(X)
    norm = spot_norm(prob, C, w)
    assert res.objective == pytest.approx(brute_spo(Xb, C, prob, depth, alpha, norm, msl, w), abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(8, 30), p=st.integers(1, 3), levels=st.integers(2, 5),
       dup=st.integers(0, 5), msl=st.integers(1, 3), method=st.sampled_from(["auto", "chains", "dense"]))
def test_depth_two_solver_at_depth_four(seed, n, p, levels, dup, msl, method):
    """Depth four: depth-two subproblems two splits below the root (leaf keys of four splits)."""
    prob, X, C = tied_instance(seed, n, p, levels, (2, 3), dup)
    kw = dict(max_depth=4, alpha=0.001, min_samples_leaf=msl, binarization="midpoints")
    _, ref = solve_dp_spo(X, C, prob, _engine="python", **kw)
    with pair_sums(method):
        tree, res = solve_dp_spo(X, C, prob, **kw)
    assert res.objective == pytest.approx(ref.objective, abs=1e-12)
    assert spot_objective(prob, tree, X, C, alpha=0.001) == pytest.approx(res.objective, abs=1e-12)


@pytest.mark.parametrize("method", ["chains", "dense"])
def test_depth_two_solver_on_2000_rows_with_ties_and_near_equal_costs(method):
    """A user-sized table: integer features (many ties), duplicated rows, costs 1e-9 apart; the default engine finds
    a tree of the reference engine's objective, and its leaf cache answers most leaves at depth three."""
    rng = np.random.default_rng(7)
    prob = GridShortestPath(3, 3)
    n = 2000
    X = rng.integers(0, 6, (n, 4)).astype(float)
    X[1000:1500] = X[:500]
    C = 1 + rng.integers(0, 3, (n, prob.n_decisions)) * 1e-9 + np.outer(X[:, 0] == 2, np.arange(prob.n_decisions)
                                                                           % 2) * (1 + 1e-9)
    C[1000:1500] = C[:500]
    for depth, msl in ((2, 1), (3, 30)):
        kw = dict(max_depth=depth, min_samples_leaf=msl, n_thresholds=5)
        _, ref = solve_dp_spo(X, C, prob, _engine="python", **kw)
        with pair_sums(method):
            tree, res = solve_dp_spo(X, C, prob, **kw)
        assert res.status == "optimal"
        assert res.objective == pytest.approx(ref.objective, rel=1e-12, abs=1e-15)
        assert spot_objective(prob, tree, X, C) == pytest.approx(res.objective, rel=1e-12, abs=1e-15)
        if depth == 3:
            assert res.timings["leaf_cache_hits"] > 0
            assert res.timings["oracle_rows"] < ref.timings["oracle_rows"]


def test_spo_dp_stop_flag_and_time_limit_keep_the_deepest_finished_depth():
    """Ctrl-C (the STOP flag, set here by the oracle once the depth-three search runs) and a time limit that
    passes inside the depth-two solver: the tree of the deepest finished depth comes back, unproven."""
    rng = np.random.default_rng(3)

    class Stopping(GridShortestPath):
        calls = 0
        stop_at = -1

        def _solve_min(self, C):
            Stopping.calls += 1
            if Stopping.calls == self.stop_at:
                STOP.set()
            return super()._solve_min(C)

    prob = Stopping(3, 3)
    X = rng.normal(size=(400, 4))
    C = 1 + rng.random((400, prob.n_decisions)) + np.outer(X[:, 0] > 0, np.arange(prob.n_decisions) % 2)
    _, full = solve_dp_spo(X, C, prob, max_depth=3, n_thresholds=6)
    prob.stop_at = full.timings["oracle_calls"] - 3 + 1     # the first call of _solve_min is the rows' own optima
    Stopping.calls = 0
    try:
        tree, res = solve_dp_spo(X, C, prob, max_depth=3, n_thresholds=6)
    finally:
        STOP.clear()
    assert res.status == "interrupted" and not res.proven_optimal
    assert tree.depth <= 2 and res.timings["incumbent_depth"] == 2
    assert res.objective >= full.objective - 1e-12
    tree, res = solve_dp_spo(X, C, prob, max_depth=3, n_thresholds=6, time_limit=1e-9)
    assert res.status == "time_limit" and res.timings["incumbent_depth"] == 0 and tree.n_splits == 0


def test_depth_two_solver_with_long_chains():
    """More than 32 thresholds per feature (the chains' sums from the top by cumulative sums, not products)."""
    rng = np.random.default_rng(11)
    prob = GridShortestPath(2, 3)
    X = np.round(rng.random((150, 2)) * 60)
    C = 1 + rng.random((150, prob.n_decisions)) + np.outer(X[:, 0] > 30, np.arange(prob.n_decisions) % 2)
    kw = dict(max_depth=2, min_samples_leaf=5, binarization="midpoints", alpha=0.001)
    _, ref = solve_dp_spo(X, C, prob, _engine="python", **kw)
    with pair_sums("chains"):
        _, res = solve_dp_spo(X, C, prob, **kw)
    assert res.objective == pytest.approx(ref.objective, abs=1e-12)


@pytest.mark.parametrize("size", [40, 10 ** 6])
def test_leaf_cache_against_a_dict(size):
    """The depth-two solver's leaf-cost cache (open addressing in numpy, growing, emptied when full) answers what a
    dict holding the same inserts answers."""
    rng = np.random.default_rng(size)
    cache, ref = spo_mod._LeafCache(size), {}
    for _ in range(200):
        keys = np.unique(rng.integers(0, 3000, rng.integers(1, 300)))
        got = cache.get(keys)
        hit = ~np.isnan(got)
        assert all(ref[k] == g for k, g in zip(keys[hit].tolist(), got[hit].tolist()))
        if size > 3000:
            assert hit.tolist() == [k in ref for k in keys.tolist()]
        vals = rng.random(int((~hit).sum()))
        cache.put(keys[~hit], vals)
        if len(vals) <= size:                                       # a larger batch is not kept
            if len(ref) + len(vals) > size:                         # full: emptied, then this batch
                ref = {}
            ref.update(zip(keys[~hit].tolist(), vals.tolist()))
        assert cache.n == len(ref)
        every = np.array(sorted(ref), np.int64)
        assert np.array_equal(cache.get(every), np.array([ref[k] for k in every.tolist()]))
