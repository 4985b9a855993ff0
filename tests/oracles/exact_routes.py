"""Every route of opttrees that can say "optimal", fitted on one instance and judged by the exhaustive oracle
(:mod:`oracles.exhaustive`, which imports nothing of opttrees) — the brute-force suite of issue 38.

:func:`judge` returns the list of what is wrong with one fit (empty: honest):

- status "optimal" with an objective (``solve_result_.objective`` or ``objective_``) other than the oracle's;
- a returned tree whose own objective, recomputed from its predictions, is better than the optimum (then the
  oracle or the tree's feasibility is wrong), or which breaks ``min_samples_leaf``, ``max_depth`` or the node
  limit, or whose ``objective_`` is not its own;
- a reported bound above the optimum (below it, for the maximised flow objective);
- status "unverified" (the route's own tree or claim did not check out: on these tiny instances every exact route
  should prove its optimum), and with ``require_optimal`` (the DP, whose runs take milliseconds here) any
  status but "optimal".
"""
from __future__ import annotations

import warnings

import numpy as np

from oracles.exhaustive import optimum, tree_objective

#: relative tolerance of every comparison with the oracle (normalised objectives are O(1))
RTOL = 1e-7


def close(a: float, b: float, rtol: float = RTOL) -> bool:
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def fit(est, inst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(inst["X"], inst["y"], sample_weight=inst["w"])


def judge(est, inst, opt: float, *, task: str, alpha: float, min_samples_leaf: int = 1, max_depth: int,
          max_num_nodes: int | None = None, rtol: float = RTOL, require_optimal: bool = False) -> list[str]:
    """What is wrong with the fitted estimator ``est`` on ``inst`` against the oracle's optimum ``opt``."""
    bad = []
    X, y, w = inst["X"], inst["y"], inst["w"]
    tree = est.tree_
    r = est.solve_result_
    own, sizes = tree_objective(tree.apply(X), est.predict(X), y, task=task, n_splits=int(tree.n_splits),
                                alpha=alpha, sample_weight=w)
    if sizes.min() < min_samples_leaf:
        bad.append(f"a leaf of {sizes.min()} rows (min_samples_leaf={min_samples_leaf})")
    if tree.depth > max_depth:
        bad.append(f"depth {tree.depth} > {max_depth}")
    if max_num_nodes is not None and tree.n_splits > max_num_nodes:
        bad.append(f"{tree.n_splits} splits > max_num_nodes={max_num_nodes}")
    if own < opt - rtol * max(1.0, abs(opt)):
        bad.append(f"the tree scores {own!r}, better than the optimum {opt!r}")
    if not close(own, float(est.objective_), rtol):
        bad.append(f"objective_ {est.objective_!r} is not the tree's own {own!r}")
    if r is not None:
        if r.status == "optimal" and not (close(float(r.objective), opt, rtol) and close(own, opt, rtol)):
            bad.append(f"'optimal' {r.objective!r} (tree {own!r}, proof {getattr(r, 'proof', None)!r}), "
                       f"optimum {opt!r}")
        if r.bound is not None and np.isfinite(r.bound) and r.bound > opt + rtol * max(1.0, abs(opt)):
            bad.append(f"bound {r.bound!r} above the optimum {opt!r}")
        if r.status == "unverified" or (require_optimal and r.status != "optimal"):
            bad.append(f"status {r.status!r} (objective {r.objective!r}, tree {own!r}, optimum {opt!r})")
    return bad


def oracle(inst, *, task, max_depth, min_samples_leaf=1, alpha=0.0, max_num_nodes=None, **kw) -> float:
    return float(optimum(inst["X"], inst["y"], task=task, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                         alpha=alpha, sample_weight=inst["w"], max_num_nodes=max_num_nodes, with_tree=False,
                         **kw).objective)


# ------------------------------------------------------------------------------------------------ the routes
def dp_estimator(task, binarization, max_depth, min_samples_leaf, alpha, max_num_nodes=None, constraints=None):
    from opttrees import OptimalTreeClassifier, OptimalTreeRegressor

    cls = OptimalTreeClassifier if task == "classification" else OptimalTreeRegressor
    return cls(method="dp", binarization=binarization, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
               alpha=alpha, max_num_nodes=max_num_nodes, time_limit=120, constraints=constraints)


def mio_classifier(solver, dp_bound, max_depth, min_samples_leaf, alpha, constraints=None, time_limit=120):
    """The default OCT MIO; ``dp_bound`` False also starts from CART (nothing of the DP), "auto" is the default."""
    from opttrees import OptimalTreeClassifier

    ws = "auto" if dp_bound == "auto" else "greedy"
    return OptimalTreeClassifier(max_depth=max_depth, min_samples_leaf=min_samples_leaf, alpha=alpha, solver=solver,
                                 dp_bound=dp_bound, warm_start=ws, time_limit=time_limit, constraints=constraints)


def mio_regressor(max_depth, min_samples_leaf, alpha, time_limit=120):
    """The ORT MIO with squared loss (a quadratic MIO: SCIP), from the greedy start."""
    from opttrees import OptimalTreeRegressor

    return OptimalTreeRegressor(method="mio", solver="scip", loss="squared", warm_start="greedy",
                                max_depth=max_depth, min_samples_leaf=min_samples_leaf, alpha=alpha,
                                time_limit=time_limit)


def flow_judge(est, inst, lam: float, max_depth: int) -> list[str]:
    """FlowOCT / BendersOCT maximise (1 - lam) * weighted correct - lam * splits on the binary columns (0/1 data:
    one column per feature, the same split set as every midpoint). That is (1 - lam) * (W - L-hat * objective)
    with alpha = lam / ((1 - lam) * L-hat) on the oracle's scale."""
    from oracles.exhaustive import baseline

    X, y, w = inst["X"], np.asarray(inst["y"]), inst["w"]
    ww = np.ones(len(y)) if w is None else np.asarray(w, float)
    keep = ww > 0
    base = baseline(y[keep], ww[keep], "classification")
    W = float(ww.sum())
    alpha = lam / ((1 - lam) * base)
    o = optimum(X, y, task="classification", max_depth=max_depth, alpha=alpha, sample_weight=w, with_tree=False)
    best = (1 - lam) * (W - base * o.objective)
    tree, r = est.tree_, est.solve_result_
    errors = float(ww[keep][est.predict(X)[keep] != y[keep]].sum())
    own = (1 - lam) * (W - errors) - lam * tree.n_splits
    tol = RTOL * max(1.0, abs(best))
    bad = []
    if tree.depth > max_depth:
        bad.append(f"depth {tree.depth} > {max_depth}")
    if own > best + tol:
        bad.append(f"the tree scores {own!r}, better than the optimum {best!r}")
    if r.status == "optimal" and not (abs(float(r.objective) - best) <= tol and abs(own - best) <= tol):
        bad.append(f"'optimal' {r.objective!r} (tree {own!r}, proof {getattr(r, 'proof', None)!r}), optimum {best!r}")
    if r.bound is not None and np.isfinite(r.bound) and r.bound < best - tol:
        bad.append(f"bound {r.bound!r} below the optimum {best!r} (maximised)")
    if r.status == "unverified":
        bad.append(f"status {r.status!r} (objective {r.objective!r}, tree {own!r}, optimum {best!r})")
    return bad


# ------------------------------------------------------------------------------------------------ the cases
#: instance families: ``narrow`` every value style of the generator (ties, duplicates, one ulp and 1e-9 apart,
#: 1e6 offsets) on 2-3 features; ``wide`` 4-6 features (where the continuous search's bounds are stressed most);
#: ``wide10`` 10 continuous features, more than 100 midpoints, so ``binarization="auto"`` and the MIO's DP bound
#: take the continuous search; ``binary`` 0/1 features (the flow models' data)
FAMILIES = {
    "narrow": dict(n=(8, 16), p=(2, 3)),
    "wide": dict(n=(10, 14), p=(4, 6)),
    "wide10": dict(n=(12, 14), p=(10, 10), styles=("normal",), weights=("none", "int", "float")),
    "binary": dict(n=(8, 16), p=(2, 4), binary=True),
    "small": dict(n=(7, 10), p=(2, 3)),
    # integer weights (zeros included) times 1e-9 or 1e9: the normalised objective is the same as unscaled
    "scaled": dict(n=(8, 12), p=(2, 3), weights=("tiny", "huge")),
    # more rows of distinct values: more root thresholds, so the interval bounds of the continuous search act
    "long": dict(n=(16, 20), p=(3, 4), styles=("normal", "offset", "ulp", "ties"), weights=("none", "int")),
}


def case(family: str, task: str, seed: int, *, depths=(2, 3, 3, 3), min_leaves=(1, 1, 2, 3, 4),
         alphas=(0.0, 0.0, 0.01, 0.05, 0.2), nodes=(None,)) -> dict:
    """One instance of ``family`` with its parameters, all drawn from ``seed``: {"inst", "task", "max_depth",
    "min_samples_leaf", "alpha", "max_num_nodes", "family", "seed"}; min_samples_leaf is capped by the rows."""
    from oracles.exhaustive import instance

    inst = instance(seed, task=task, **FAMILIES[family])
    rng = np.random.default_rng([seed, 7919, len(family), 0 if task == "classification" else 1])
    rows = len(inst["y"]) if inst["w"] is None else int((np.asarray(inst["w"]) > 0).sum())
    nn = nodes[int(rng.integers(len(nodes)))]
    return {"inst": inst, "task": task, "family": family, "seed": seed,
            "max_depth": int(rng.choice(depths)), "min_samples_leaf": min(int(rng.choice(min_leaves)), rows),
            "alpha": float(rng.choice(alphas)), "max_num_nodes": None if nn is None else int(nn)}


def params_of(c: dict) -> dict:
    return {k: c[k] for k in ("max_depth", "min_samples_leaf", "alpha", "max_num_nodes")}


def reproducer(c: dict, route: str) -> str:
    from oracles.exhaustive import instance_repr

    return f"{route}: " + instance_repr(c["inst"], **params_of(c))


# ------------------------------------------------------------------------------------------- known wrong answers
#: Known bugs that the suite caught (issue 38's on main f0044b5), one switch each: True while the bug is open,
#: False once its fix has landed, and the cases it excused must then pass. A case fails as expected (xfail,
#: reason "known (issue 38 item N)") only when it is of the item's kind (:func:`known_bugs`) *and* every
#: complaint about it is one the item explains (:data:`SIGNATURES`); any other complaint fails the test as usual.
KNOWN = {
    # item 1: the continuous search ("exact"; "auto" and the MIO's DP bound on > 100 midpoints) returned a worse
    # tree as "optimal" at depth 3 with min_samples_leaf >= 2 (fixed on main by e419c8a)
    1: False,
    # item 2: values one float apart: the CART start's midpoint rounded onto the upper value and a leaf below
    # min_samples_leaf appeared (the MIO from the greedy start kept it as "unverified") (fixed by d68b581)
    2: False,
    # item 3: ForbidFeatures(..., at_depths=...) with the MIO: the single leaf, "unverified" (fixed by d33176c)
    3: False,
    # item 4: a target constant to a few ulps (L-hat 1.0) was split on its noise (fixed by d68b581)
    4: False,
    # not in issue 38 (found by this suite): the OCT MIO without the DP bound is not invariant to the scale of
    # sample_weight: weights times 1e9 give a false "optimal" on HiGHS (or "infeasible"), times 1e-9 "unverified",
    # "limit" or an objective_ that is not the returned tree's (test_exact_known.py has the reproducers)
    "scale": False,
}

#: the complaints of :func:`judge` each item explains
SIGNATURES = {
    1: ("'optimal'", "above the optimum"),
    2: ("a leaf of", "status 'unverified'", "better than the optimum", "is not the tree's own"),
    3: ("status 'unverified'",),
    4: ("'optimal'", "above the optimum"),
    "scale": ("'optimal'", "above the optimum", "status 'unverified'", "is not the tree's own"),
}


def known_bugs(route: str, c: dict) -> list:
    """The items of issue 38 a case may meet on main f0044b5 (none: it must pass)."""
    out = []
    deep_minleaf = c["max_depth"] >= 3 and c["min_samples_leaf"] >= 2
    continuous = route.endswith("exact") or (route.endswith("auto") and c["family"] == "wide10")
    if KNOWN[1] and deep_minleaf and route.startswith("dp-") and continuous:
        out.append(1)
    if KNOWN[1] and deep_minleaf and route.startswith("mio-") and route.endswith("-dpbound") and c["family"] == "wide10":
        out.append(1)
    if KNOWN[2] and route.startswith(("mio-", "ort-")) and c["min_samples_leaf"] >= 2 and "ulp" in c["inst"]["style"]:
        out.append(2)
    if KNOWN[3] and route.startswith("mio-") and c.get("constraint") == "forbid_at":
        out.append(3)
    if KNOWN["scale"] and route.startswith(("mio-", "ort-")) and c["inst"]["weights"] in ("tiny", "huge"):
        out.append("scale")
    return out


def check(bad: list[str], route: str, c: dict, what: str = "") -> None:
    """Pass (no complaint), xfail (only complaints a known item of :data:`KNOWN` explains, on a case of its kind),
    or fail with the complaints and a pasteable reproducer."""
    import pytest

    if not bad:
        return
    items = known_bugs(route, c)
    sigs = [sig for item in items for sig in SIGNATURES[item]]
    if items and all(any(sig in b for sig in sigs) for b in bad):
        pytest.xfail(f"known ({', '.join(f'issue 38 item {i}' if isinstance(i, int) else i for i in items)}): "
                     f"{bad[0]}")
    raise AssertionError(f"{bad}\n{reproducer(c, f'{route} {what}'.strip())}")
