"""The constraint routes against the exhaustive oracle (issue 38), where the constrained optimum is a plain
restriction of the search: ``ForbidFeatures`` (every depth: fewer features; ``at_depths``: fewer features at a
depth), ``MaxFeatures`` and ``FeatureCost`` (the best over the feature sets within the budget) and
``MinLeafWeight`` (a leaf weight floor).

Routes: ``method="dp"`` with each exact binarization (the feature budgets the DP solves; classifier and
regressor), and the OCT MIO on HiGHS and SCIP with the DP bound on, and on HiGHS without it (every constraint).
"""
from functools import lru_cache

import numpy as np
import pytest

from oracles import exact_routes
from oracles.exhaustive import optimum, optimum_over_feature_sets

DP_KINDS = ("forbid", "maxf", "cost")
MIO_KINDS = ("forbid", "forbid_at", "maxf", "cost", "minw")


def constraint(kind, c, seed):
    """(constraints, oracle restriction) of one kind for case ``c``."""
    from opttrees.constraints.declarations import FeatureCost, ForbidFeatures, MaxFeatures, MinLeafWeight

    rng = np.random.default_rng([seed, 4099, len(kind)])
    p = c["inst"]["X"].shape[1]
    if kind == "forbid":
        j = int(rng.integers(p))
        return [ForbidFeatures([j])], {"features": [k for k in range(p) if k != j]}
    if kind == "forbid_at":
        j, d = int(rng.integers(p)), int(rng.integers(0, 2))
        others = [k for k in range(p) if k != j]
        return [ForbidFeatures([j], at_depths=[d])], {"allowed_at_depth": lambda dd: others if dd == d else None}
    if kind == "maxf":
        k = int(rng.integers(1, p))
        return [MaxFeatures(k)], {"feasible_set": lambda S: len(S) <= k}
    if kind == "cost":
        cost = rng.integers(1, 4, p).astype(float)
        budget = float(rng.integers(1, 5))
        return [FeatureCost(list(cost), budget)], {"feasible_set": lambda S: float(cost[list(S)].sum()) <= budget}
    if kind == "minw":
        w = c["inst"]["w"]
        total = float(len(c["inst"]["y"]) if w is None else np.sum(w))
        floor = round(total * float(rng.choice([0.1, 0.2, 0.3])), 3)
        return [MinLeafWeight(floor)], {"min_leaf_weight": floor}
    raise ValueError(kind)


@lru_cache(maxsize=None)
def _draw(route, task, seed, kind):
    # depth 3 where the DP solves the constrained problem (its bound proves it); the MIO alone proves depth 2
    dp_solves = route.startswith("dp-") or (route.endswith("dpbound") and kind in DP_KINDS)
    depths = (2, 3) if dp_solves else (2,)
    return exact_routes.case("small" if route.endswith("nobound") else "narrow", task, seed, depths=depths,
                  min_leaves=(1, 1, 2, 3), alphas=(0.0, 0.01, 0.05))


@lru_cache(maxsize=64)
def _case(route, task, seed, kind):
    c = dict(_draw(route, task, seed, kind), constraint=kind)
    cons, restriction = constraint(kind, c, seed)
    kw = dict(task=task, max_depth=c["max_depth"], min_samples_leaf=c["min_samples_leaf"], alpha=c["alpha"],
              sample_weight=c["inst"]["w"], with_tree=False)
    if "feasible_set" in restriction:
        opt = optimum_over_feature_sets(c["inst"]["X"], c["inst"]["y"], restriction["feasible_set"], **kw)
    else:
        opt = optimum(c["inst"]["X"], c["inst"]["y"], **kw, **restriction)
    return c, cons, float(opt.objective)


def _cases(routes, tasks, kinds, seeds):
    out = []
    for route in routes:
        for task in tasks:
            for kind in kinds:
                for seed in seeds:
                    out.append(pytest.param(route, task, seed, kind, id=f"{kind}-{task[:3]}-{seed}-{route}"))
    return out


def _run(route, task, seed, kind):
    c, cons, opt = _case(route, task, seed, kind)
    p = exact_routes.params_of(c)
    if route.startswith("dp-"):
        est = exact_routes.dp_estimator(task, route.split("-")[1], p["max_depth"], p["min_samples_leaf"], p["alpha"],
                             constraints=cons)
    else:
        solver, bound = route.split("-")[1:]
        est = exact_routes.mio_classifier(solver, "auto" if bound == "dpbound" else False, p["max_depth"],
                               p["min_samples_leaf"], p["alpha"], constraints=cons, time_limit=60)
    est = exact_routes.fit(est, c["inst"])
    bad = exact_routes.judge(est, c["inst"], opt, task=task, require_optimal=route.startswith("dp-"), **p)
    bad += [f"constraint {x!r} broken" for x in cons if not x.satisfied(est.tree_, c["inst"]["X"], c["inst"]["y"],
                                                                            c["inst"]["w"])]
    exact_routes.check(bad, route, c, repr(cons))


DP_ROUTES = ("dp-auto", "dp-exact", "dp-midpoints")
MIO_BOUND = ("mio-highs-dpbound", "mio-scip-dpbound")
TASKS = ("classification", "regression")
FAST = (_cases(DP_ROUTES, TASKS, DP_KINDS, range(3)) + _cases(MIO_BOUND, ("classification",), MIO_KINDS, range(1))
        + _cases(("mio-highs-nobound",), ("classification",), MIO_KINDS, range(1)))
S = 100_000
SLOW = (_cases(DP_ROUTES, TASKS, DP_KINDS, range(S, S + 60))
        + _cases(MIO_BOUND, ("classification",), MIO_KINDS, range(S, S + 20))
        + _cases(("mio-highs-nobound",), ("classification",), MIO_KINDS, range(S, S + 8)))


@pytest.mark.parametrize("route, task, seed, kind", FAST)
def test_constraint_route_fast(route, task, seed, kind):
    _run(route, task, seed, kind)


@pytest.mark.slow
@pytest.mark.parametrize("route, task, seed, kind", SLOW)
def test_constraint_route_slow(route, task, seed, kind):
    _run(route, task, seed, kind)
