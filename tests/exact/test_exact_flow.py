"""FlowOCT and BendersOCT against the exhaustive oracle on 0/1 features (issue 38): HiGHS and SCIP, from the DP
(start and bound, ``warm_start="auto", dp_bound="auto"``) and from CART alone (``warm_start="greedy",
dp_bound=False``), depth 2 and 3, regularization 0 to 0.3, with sample weights (zeros included).

On 0/1 data each feature is one binary column, the split set of every midpoint, so the flow optimum
``max (1 - lam) * weighted correct - lam * splits`` is the oracle's ``(1 - lam) * (W - L-hat * objective)`` with
``alpha = lam / ((1 - lam) * L-hat)`` (``oracles.exact_routes.flow_judge``; the flow models have no minimum leaf).
"""
from functools import lru_cache

import numpy as np
import pytest

from oracles import exact_routes

ROUTES = [(cls, solver, start) for cls in ("flow", "benders") for solver in ("highs", "scip") for start in ("dp", "cart")]


@lru_cache(maxsize=None)
def _draw(seed):
    c = exact_routes.case("binary", "classification", seed, depths=(2, 3), min_leaves=(1,))
    c["lam"] = float(np.random.default_rng([seed, 31]).choice([0.0, 0.0, 0.1, 0.2, 0.3]))
    return c


def _cases(seeds):
    return [pytest.param(seed, cls, solver, start, id=f"binary-{seed}-{cls}-{solver}-{start}")
            for seed in seeds for cls, solver, start in ROUTES]


def _run(seed, cls, solver, start):
    from opttrees import BendersOCTClassifier, FlowOCTClassifier

    c = _draw(seed)
    est = {"flow": FlowOCTClassifier, "benders": BendersOCTClassifier}[cls](
        max_depth=c["max_depth"], regularization=c["lam"], solver=solver, time_limit=60,
        warm_start="auto" if start == "dp" else "greedy", dp_bound="auto" if start == "dp" else False)
    est = exact_routes.fit(est, c["inst"])
    bad = exact_routes.flow_judge(est, c["inst"], c["lam"], c["max_depth"])
    exact_routes.check(bad, f"{cls}-{solver}-{start}", c, f"regularization={c['lam']}")


@pytest.mark.parametrize("seed, cls, solver, start", _cases(range(3)))
def test_flow_route_fast(seed, cls, solver, start):
    _run(seed, cls, solver, start)


@pytest.mark.slow
@pytest.mark.parametrize("seed, cls, solver, start", _cases(range(100_000, 100_040)))
def test_flow_route_slow(seed, cls, solver, start):
    _run(seed, cls, solver, start)
