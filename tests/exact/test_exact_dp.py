"""The DP routes against the exhaustive oracle at depth <= 3 (issue 38): ``OptimalTreeClassifier`` and
``OptimalTreeRegressor`` with ``method="dp"`` and each exact binarization ("exact": the continuous search,
"midpoints": the binary engine, "auto": whichever suits the data), with min_samples_leaf, sample weights (zeros,
integers, floats, and integers times 1e-9 or 1e9), alpha and max_num_nodes, on ties, duplicates, values one ulp
and 1e-9 apart and 1e6 offsets.

Every case is one fit: a status "optimal" must carry the oracle's objective, the returned tree must not beat
the optimum or break a rule, and the bound must not exceed the optimum (``oracles.exact_routes.judge``).
The fast slice runs in ``make test``; the slow slice (``-m slow``) holds most of the 5,000+ instances.
"""
from functools import lru_cache

import pytest

from oracles import exact_routes

ROUTES = ("dp-exact", "dp-midpoints", "dp-auto")
NODES = (None, None, None, 1, 2, 3, 4, 5)


@lru_cache(maxsize=None)
def _draw(family, task, seed):
    return exact_routes.case(family, task, seed, nodes=NODES if family != "wide10" else (None,))


@lru_cache(maxsize=64)
def _case(family, task, seed):
    c = _draw(family, task, seed)
    return c, exact_routes.oracle(c["inst"], task=task, **exact_routes.params_of(c))


def _cases(family, task, seeds, routes=ROUTES):
    out = []
    for seed in seeds:
        for route in routes:
            out.append(pytest.param(family, task, seed, route, id=f"{family}-{task[:3]}-{seed}-{route}"))
    return out


def _run(family, task, seed, route):
    c, opt = _case(family, task, seed)
    est = exact_routes.fit(exact_routes.dp_estimator(task, route.split("-")[1], **exact_routes.params_of(c)), c["inst"])
    bad = exact_routes.judge(est, c["inst"], opt, task=task, require_optimal=True, **exact_routes.params_of(c))
    exact_routes.check(bad, route, c)


FAST = (_cases("narrow", "classification", range(24)) + _cases("narrow", "regression", range(12))
        + _cases("wide", "classification", range(6)) + _cases("wide", "regression", range(4))
        + _cases("wide10", "classification", range(4), ("dp-exact", "dp-auto"))
        + _cases("wide10", "regression", range(2), ("dp-exact", "dp-auto"))
        + _cases("scaled", "classification", range(4)) + _cases("scaled", "regression", range(2)))

S = 100_000     # the slow slice's seeds start here (none is in the fast slice)
SLOW = (_cases("narrow", "classification", range(S, S + 1000)) + _cases("narrow", "regression", range(S, S + 500))
        + _cases("wide", "classification", range(S, S + 200)) + _cases("wide", "regression", range(S, S + 100))
        + _cases("wide10", "classification", range(S, S + 100), ("dp-exact", "dp-auto"))
        + _cases("wide10", "regression", range(S, S + 60), ("dp-exact", "dp-auto"))
        + _cases("scaled", "classification", range(S, S + 100)) + _cases("scaled", "regression", range(S, S + 60)))


@pytest.mark.parametrize("family, task, seed, route", FAST)
def test_dp_route_fast(family, task, seed, route):
    _run(family, task, seed, route)


@pytest.mark.slow
@pytest.mark.parametrize("family, task, seed, route", SLOW)
def test_dp_route_slow(family, task, seed, route):
    _run(family, task, seed, route)
