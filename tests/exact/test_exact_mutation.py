"""The suite catches a broken bound (issue 38, "check a mutation of each bound makes it fail").

Each mutation makes one lower bound of the continuous search (``opttrees.dp.continuous``, depth >= 3) too strong
by a positive ``eps`` (a wrapper, no source edit), and the oracle comparison on a fixed set of depth-3 instances
with ``min_samples_leaf=1`` (where the unmutated search is right, see the first test) must then find at least
one wrong "optimal":

- ``interval``: the bound of a run of root thresholds (``_Searcher.search_feature``'s ``bound(a, b)``), made
  from the left sides' values that ``_Searcher.evaluate`` returns (``valsL``);
- ``right_lb``: the right side's lower bound reused from the neighbouring threshold (``evaluate``'s
  ``right_lb``);
- ``depth_two``: the lower bound the depth-two routine reports for a subproblem it could not solve under its
  upper bound (``_Problem.d2``'s ``lb``), which the depth-3 cache keeps;
- ``point``: the per-position bound that closes root thresholds from an interval's ends
  (``continuous_kernels.shrink`` as the depth-3 refinement calls it);

and, with ``min_samples_leaf`` 2 or 3 (instances where the search is right since issue 38 item 1 was fixed):

- ``monotone``: the unsound bound of issue 38 item 1 put back (``_Problem.monotone`` forced True: a side's
  optimum assumed never to fall when rows are added, which a minimum leaf size breaks);
- ``relaxed``: the values of the relaxed searcher (the problem without the minimum leaf, whose optimum gives the
  interval bounds and the reused right-side bounds under a minimum leaf) made too strong.

Not mutated, because no wrapper reaches them: the bounds inside numba kernels (the depth-two routine's interval
and per-position bounds in ``continuous_kernels``, tested directly against every position's exact cost in
``tests/dp/test_continuous_point_bound.py``, and every bound of the binary engine ``dp/engine.py``: cached, similarity and
upper bounds). The engine's switches (``use_upper_bound``, ``use_lower_bound``, ``use_similarity_bound``, ...)
only turn a bound off, which keeps the search exact (slower), so they are no mutation either; the binary engine
is still checked by the DP suite (``binarization="midpoints"``, and "auto" on few distinct values).
"""
from functools import lru_cache

import numpy as np
import pytest

import opttrees.dp.continuous as CONT
from oracles import exact_routes

SEEDS = range(60)
FAMILY = "long"


@lru_cache(maxsize=None)
def _cases(min_leaves=(1,)):
    out = []
    for seed in SEEDS:
        task = "classification" if seed % 2 else "regression"
        c = exact_routes.case(FAMILY, task, 7_000 + seed, depths=(3,), min_leaves=min_leaves, alphas=(0.0, 0.01))
        out.append((c, exact_routes.oracle(c["inst"], task=task, **exact_routes.params_of(c))))
    return out


def _wrong_optimal(task_filter=None, min_leaves=(1,)) -> int:
    wrong = 0
    for c, opt in _cases(min_leaves):
        if task_filter and c["task"] != task_filter:
            continue
        est = exact_routes.fit(exact_routes.dp_estimator(c["task"], "exact", **exact_routes.params_of(c)), c["inst"])
        assert est.solve_result_.timings.get("engine") == "continuous"
        bad = exact_routes.judge(est, c["inst"], opt, task=c["task"], **exact_routes.params_of(c))
        wrong += any("'optimal'" in b for b in bad)
    return wrong


def _mutate(monkeypatch, which: str, eps: float):
    if which == "interval":
        orig = CONT._Searcher.evaluate

        def evaluate(self, *args, **kw):
            best, low, tree, vl, vr = orig(self, *args, **kw)
            return best, low, tree, np.asarray(vl) + eps, vr
        monkeypatch.setattr(CONT._Searcher, "evaluate", evaluate)
    elif which == "right_lb":
        orig = CONT._Searcher.evaluate

        def evaluate(self, so, xs, m, d, B, f, i, inc, right_lb, *rest):
            return orig(self, so, xs, m, d, B, f, i, inc, {k: v + eps for k, v in right_lb.items()}, *rest)
        monkeypatch.setattr(CONT._Searcher, "evaluate", evaluate)
    elif which == "point":
        orig = CONT.kernels.shrink

        def shrink(*args):
            return orig(*args[:-1], args[-1] + eps)
        monkeypatch.setattr(CONT.kernels, "shrink", shrink)
    elif which == "monotone":
        orig = CONT._Problem.__init__

        def init(self, *args, **kw):
            orig(self, *args, **kw)
            self.monotone = True
        monkeypatch.setattr(CONT._Problem, "__init__", init)
    elif which == "relaxed":
        orig_relax, orig_solve = CONT._Problem.without_min_leaf, CONT._Searcher.solve

        def without_min_leaf(self):
            relaxed = orig_relax(self)
            relaxed.mutant = True
            return relaxed

        def solve(self, *args, **kw):
            cost, lb, tree = orig_solve(self, *args, **kw)
            if getattr(self.prob, "mutant", False):
                return cost + eps, lb + eps, tree
            return cost, lb, tree
        monkeypatch.setattr(CONT._Problem, "without_min_leaf", without_min_leaf)
        monkeypatch.setattr(CONT._Searcher, "solve", solve)
    elif which == "depth_two":
        orig = CONT._Problem.d2

        def d2(self, *args, **kw):
            cost, lb, tree = orig(self, *args, **kw)
            return cost, (lb + eps if cost == np.inf else lb), tree
        monkeypatch.setattr(CONT._Problem, "d2", d2)
    else:
        raise ValueError(which)


MIN_LEAF = (2, 3)


def test_the_unmutated_search_is_right_on_these_instances():
    assert _wrong_optimal() == 0
    assert _wrong_optimal(min_leaves=MIN_LEAF) == 0


# eps: one unit weight (classification costs are weighted error counts, so a bound too strong by less than the
# smallest weight can still be valid by integrality); for the standardised squared error a tenth of a unit
@pytest.mark.parametrize("which", ["interval", "right_lb", "depth_two", "point"])
def test_a_too_strong_bound_is_caught(monkeypatch, which):
    _mutate(monkeypatch, which, 1.0)
    caught = _wrong_optimal()
    assert caught >= 1, f"mutation {which!r} (+1.0) gave no wrong 'optimal' on {len(SEEDS)} instances"


@pytest.mark.parametrize("which", ["monotone", "relaxed"])
def test_a_too_strong_bound_under_a_minimum_leaf_is_caught(monkeypatch, which):
    _mutate(monkeypatch, which, 1.0)
    caught = _wrong_optimal(min_leaves=MIN_LEAF)
    assert caught >= 1, f"mutation {which!r} gave no wrong 'optimal' on {len(SEEDS)} instances with a minimum leaf"
