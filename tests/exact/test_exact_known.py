"""The reproducers of issue 38 that concern an "optimal" answer, judged by the exhaustive oracle (the oracle's
optimum is asserted first, so each case also pins the issue's numbers), and on these tiny instances every route
must also prove its optimum (status "optimal"). Marked xfail while the item is open:
turn the item's switch in ``oracles.exact_routes.KNOWN`` off (or drop the mark) once its fix has landed."""
import numpy as np
import pytest

from oracles import exact_routes
from oracles.exhaustive import optimum


def _xfail(item):
    why = f"issue 38 item {item}" if isinstance(item, int) else f"known: {item} (not in issue 38)"
    return [pytest.mark.xfail(strict=False, reason=why)] if exact_routes.KNOWN[item] else []


X1 = np.array([[1, 1], [2, 0], [0, 21], [0, 12], [0, 14], [1, 10], [0, 18], [0, 3], [1, 19], [2, 17], [2, 13],
               [2, 16]], float)
Y1 = np.array([1, 1, 2, 0, 0, 2, 0, 0, 2, 3, 2, 3])
XR = np.array([[0.0], [3], [5], [5], [9], [10], [11], [12], [14], [15], [17], [18]])
YR = np.array([-2.0, 1, -3, -1, 11, 5, -5, 7, 0, 1, 24, 26])


def _inst(X, y, w=None):
    return {"X": X, "y": y, "w": w, "style": "issue 38", "weights": "none" if w is None else "given"}


@pytest.mark.parametrize("binarization", [pytest.param("exact", marks=_xfail(1)), "midpoints", "auto"])
def test_item1_classification(binarization):
    inst = _inst(X1, Y1)
    opt = exact_routes.oracle(inst, task="classification", max_depth=3, min_samples_leaf=2)
    assert opt == 0.0                                  # a tree with no error exists
    est = exact_routes.fit(exact_routes.dp_estimator("classification", binarization, 3, 2, 0.0), inst)
    assert not exact_routes.judge(est, inst, opt, task="classification", alpha=0.0,
                              min_samples_leaf=2, max_depth=3, require_optimal=True)


@pytest.mark.parametrize("route", [pytest.param("dp-auto", marks=_xfail(1)),
                                   pytest.param("mio-highs-dpbound", marks=_xfail(1))])
def test_item1_many_midpoints(route):
    """More than 100 midpoints: "auto" and the default MIO's DP bound take the continuous search."""
    Xw = np.hstack([X1] + [X1[:, 1:] + 100 * k for k in range(1, 10)])
    inst = _inst(Xw, Y1)
    opt = exact_routes.oracle(inst, task="classification", max_depth=3, min_samples_leaf=2)
    assert opt == 0.0
    est = (exact_routes.dp_estimator("classification", "auto", 3, 2, 0.0) if route == "dp-auto"
           else exact_routes.mio_classifier("highs", "auto", 3, 2, 0.0))
    est = exact_routes.fit(est, inst)
    assert not exact_routes.judge(est, inst, opt, task="classification", alpha=0.0,
                              min_samples_leaf=2, max_depth=3, require_optimal=True)


@pytest.mark.parametrize("binarization", [pytest.param("exact", marks=_xfail(1)), "midpoints"])
def test_item1_regression(binarization):
    inst = _inst(XR, YR)
    opt = exact_routes.oracle(inst, task="regression", max_depth=3, min_samples_leaf=2)
    assert opt == pytest.approx(0.0863372, abs=1e-7)
    est = exact_routes.fit(exact_routes.dp_estimator("regression", binarization, 3, 2, 0.0), inst)
    assert not exact_routes.judge(est, inst, opt, task="regression", alpha=0.0, min_samples_leaf=2, max_depth=3, require_optimal=True)


@pytest.mark.parametrize("route", [pytest.param("mio", marks=_xfail(2)), "dp"])
def test_item2_min_leaf_on_values_one_float_apart(route):
    from opttrees import OptimalTreeClassifier

    X = np.array([[1 + 2 ** -51], [1.0], [1.0], [1 + 2 ** -52], [2.0], [1 + 2 ** -51], [1.0], [np.nextafter(1.0, 0)],
                  [2.0], [1.0]])
    y = np.array([0, 0, 0, 0, 1, 1, 0, 0, 1, 0])
    w = np.array([3.0, 2, 3, 3, 1, 2, 3, 3, 3, 1])
    inst = _inst(X, y, w)
    opt = exact_routes.oracle(inst, task="classification", max_depth=1, min_samples_leaf=3)
    est = exact_routes.fit(OptimalTreeClassifier(max_depth=1, min_samples_leaf=3, method=route, time_limit=60), inst)
    assert not exact_routes.judge(est, inst, opt, task="classification", alpha=0.0,
                              min_samples_leaf=3, max_depth=1, require_optimal=True)


@pytest.mark.parametrize("solver", ["highs", "scip"])
@pytest.mark.parametrize("dp_bound", [pytest.param("auto", marks=_xfail(3)), pytest.param(False, marks=_xfail(3))])
def test_item3_forbid_features_at_a_depth(solver, dp_bound):
    from opttrees.constraints.declarations import ForbidFeatures

    X = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [0, 1], [1, 1], [2, 1], [3, 1]], float)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    inst = _inst(X, y)
    opt = optimum(X, y, max_depth=2, alpha=0.01, allowed_at_depth=lambda d: [0] if d == 0 else None).objective
    assert opt == pytest.approx(0.03)
    cons = [ForbidFeatures([1], at_depths=[0])]
    est = exact_routes.fit(exact_routes.mio_classifier(solver, dp_bound, 2, 1, 0.01, constraints=cons, time_limit=60), inst)
    bad = exact_routes.judge(est, inst, opt, task="classification", alpha=0.01, max_depth=2, require_optimal=True)
    bad += [] if cons[0].satisfied(est.tree_, X, y) else ["ForbidFeatures broken"]
    assert not bad


@pytest.mark.parametrize("route", [pytest.param("dp-exact", marks=_xfail(4)),
                                   pytest.param("dp-midpoints", marks=_xfail(4))])
def test_item4_nearly_constant_target(route):
    """y is constant to 1 ulp: L-hat is 1.0 (a constant target), the root leaf scores about 1e-20 and any split
    costs alpha."""
    X = np.arange(8.0)[:, None]
    y = np.array([1e6] * 4 + [np.nextafter(1e6, 2e6)] * 4)
    inst = _inst(X, y)
    opt = exact_routes.oracle(inst, task="regression", max_depth=1, alpha=0.01)
    assert opt < 1e-15
    est = exact_routes.fit(exact_routes.dp_estimator("regression", route.split("-")[1], 1, 1, 0.01), inst)
    assert not exact_routes.judge(est, inst, opt, task="regression", alpha=0.01, max_depth=1, require_optimal=True)


# --- not in issue 38: found by this suite (oracles.exact_routes.KNOWN["scale"]) -------------------------------
XS = np.array([[0, -0.86], [0, 0.99], [0, -4.0], [1, 0.75], [1, -0.61], [0, -0.84], [0, 0.26], [2, 0.0], [0, -0.08],
               [2, -0.99]])
YS = np.array([0, 1, 1, 0, 0, 0, 1, 0, 0, 0])


@pytest.mark.parametrize("scale", [pytest.param(1e9, marks=_xfail("scale")), 1.0])
def test_weights_times_1e9_give_a_false_optimal(scale):
    """Every weight 1e9 is the unweighted problem (2 errors, objective 2/3); the OCT MIO on HiGHS from the CART
    start said "optimal" 1.0 (3 errors; without a start: "infeasible", SCIP: time_limit)."""
    inst = _inst(XS, YS, np.full(10, scale))
    opt = exact_routes.oracle(inst, task="classification", max_depth=1)
    assert opt == pytest.approx(2 / 3)
    est = exact_routes.fit(exact_routes.mio_classifier("highs", False, 1, 1, 0.0, time_limit=60), inst)
    assert not exact_routes.judge(est, inst, opt, task="classification", alpha=0.0, max_depth=1, require_optimal=True)


@pytest.mark.parametrize("scale", [pytest.param(1e-9, marks=_xfail("scale")), 1.0])
def test_weights_times_1e_minus_9_objective_is_the_trees(scale):
    """Weights times 1e-9 (zeros included): SCIP returned a leaf labelled with the minority class ("unverified",
    objective 2.67) while ``objective_`` said 1.0, the majority leaf's."""
    X = np.array([[1.1, 0.500000002], [0.48, 0.500000001], [0.42, 0.500000002], [-1.95, 0.5], [-0.18, 0.5],
                  [-1.8, 0.5], [0.74, 0.500000001], [-1.47, 0.500000003], [-1.14, 0.500000002]])
    y = np.array([0, 1, 0, 0, 1, 0, 1, 1, 0])
    w = np.array([1.0, 0, 0, 2, 3, 0, 2, 3, 0]) * scale
    inst = _inst(X, y, w)
    opt = exact_routes.oracle(inst, task="classification", max_depth=2, min_samples_leaf=2)
    assert opt == pytest.approx(1.0)
    est = exact_routes.fit(exact_routes.mio_classifier("scip", False, 2, 2, 0.0, time_limit=60), inst)
    assert not exact_routes.judge(est, inst, opt, task="classification", alpha=0.0, min_samples_leaf=2, max_depth=2,
                       require_optimal=True)
