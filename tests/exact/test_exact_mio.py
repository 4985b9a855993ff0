"""The MIO routes against the exhaustive oracle (issue 38): the default ``OptimalTreeClassifier`` (OCT MIO) on
HiGHS and SCIP with the DP bound on (``dp_bound="auto"``, the default: the DP's start and bound, a
"dp-bound" proof) and off (``dp_bound=False`` from the CART start: the solver proves alone), and the ORT MIO
with squared loss (``OptimalTreeRegressor(method="mio", solver="scip")``).

With the DP bound a fit costs about one DP run, so those cases go to depth 3 on every family (on ``wide10`` the
bound comes from the continuous search); without it the solver's branch and bound takes seconds per fit, so
those cases are depth 2 on up to 16 rows and depth 3 on up to 10 rows, and fewer.
"""
from functools import lru_cache

import pytest

from oracles import exact_routes

SOLVERS = ("highs", "scip")


@lru_cache(maxsize=None)
def _draw(kind, family, seed):
    task = "regression" if kind.startswith("ort") else "classification"
    depths = {"deep": (2, 3, 3), "d2": (2,), "d3": (3,)}[kind.split("-")[-1]]
    return exact_routes.case(family, task, seed, depths=depths, min_leaves=(1, 1, 2, 3))


@lru_cache(maxsize=64)
def _case(kind, family, seed):
    c = _draw(kind, family, seed)
    return c, exact_routes.oracle(c["inst"], task=c["task"], **exact_routes.params_of(c))


def _route_name(kind, solver):
    if kind.startswith("ort"):
        return "ort-scip"
    return f"mio-{solver}-" + ("dpbound" if kind.startswith("bound") else "nobound")


def _cases(kind, family, seeds, solvers=SOLVERS):
    out = []
    for seed in seeds:
        for solver in solvers:
            out.append(pytest.param(kind, family, seed, solver, id=f"{kind}-{family}-{seed}-{_route_name(kind, solver)}"))
    return out


def _run(kind, family, seed, solver, time_limit=60):
    c, opt = _case(kind, family, seed)
    p = exact_routes.params_of(c)
    if kind.startswith("ort"):
        est = exact_routes.mio_regressor(p["max_depth"], p["min_samples_leaf"], p["alpha"], time_limit=time_limit)
    else:
        est = exact_routes.mio_classifier(solver, "auto" if kind.startswith("bound") else False, p["max_depth"],
                               p["min_samples_leaf"], p["alpha"], time_limit=time_limit)
    est = exact_routes.fit(est, c["inst"])
    bad = exact_routes.judge(est, c["inst"], opt, task=c["task"], **p)
    exact_routes.check(bad, _route_name(kind, solver), c)


FAST = (_cases("bound-deep", "narrow", range(6)) + _cases("bound-d3", "wide10", range(2))
        + _cases("nobound-d2", "small", range(2)) + _cases("ort-d2", "small", range(1, 3), ("scip",)))

S = 100_000
SLOW = (_cases("bound-deep", "narrow", range(S, S + 300)) + _cases("bound-d3", "wide", range(S, S + 60))
        + _cases("bound-d3", "wide10", range(S, S + 60))
        + _cases("nobound-d2", "narrow", range(S, S + 30)) + _cases("nobound-d3", "small", range(S, S + 6))
        + _cases("ort-d2", "small", range(S, S + 20), ("scip",)) + _cases("ort-d3", "small", range(S, S + 2), ("scip",))
        # sample weights times 1e-9 or 1e9 (zeros included)
        + _cases("bound-deep", "scaled", range(S, S + 60)) + _cases("nobound-d2", "scaled", range(S, S + 10))
        + _cases("ort-d2", "scaled", range(S, S + 6), ("scip",)))


@pytest.mark.parametrize("kind, family, seed, solver", FAST)
def test_mio_route_fast(kind, family, seed, solver):
    _run(kind, family, seed, solver)


@pytest.mark.slow
@pytest.mark.parametrize("kind, family, seed, solver", SLOW)
def test_mio_route_slow(kind, family, seed, solver):
    _run(kind, family, seed, solver)
