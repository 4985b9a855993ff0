"""The one MIO pipeline (opttrees.estimators.pipeline): start choice, compare with the start, fallback, errors."""
from functools import partial

import numpy as np
import pytest

from opttrees.data.prepared import prepare
from opttrees.errors import SolverError
from opttrees.estimators.fitcontrol import FitControl
from opttrees.estimators.pipeline import MIO, DPUse, Start, run_mio
from opttrees.formulations.oct import OCT
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.heuristics.core import make_problem, objective
from opttrees.interrupt import stop_on_sigint


def _case(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(size=(n, 3)), 1)
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.2, n) > 1).astype(int)
    data = prepare(X, y)
    prob = make_problem(data)
    return data, (lambda tree: objective(tree, prob, 0.0))


def _run(job, time_limit=120.0):   # generous: these tests need the proof, and CI machines may be loaded
    with stop_on_sigint():
        return run_mio(job, FitControl(time_limit), "Test", verbose=False)


def test_the_best_start_is_handed_over_and_a_later_source_wins_a_tie():
    data, score = _case(n=16)
    stump = cart_classifier_tree(data, 1, 1, 0.0, 0)
    deeper = cart_classifier_tree(data, 2, 1, 0.0, 0)
    assert score(deeper) < score(stump)
    out = _run(MIO(partial(OCT, data, 2), score, [Start(deeper, "greedy"), Start(stump, "worse")],
                   solver_options={"solver": "highs"}))
    assert out.result.plan["start"] == "greedy" and out.start.tree is deeper
    tie = _run(MIO(partial(OCT, data, 2), score, [Start(deeper, "first"), Start(deeper, "second")],
                   solver_options={"solver": "highs"}))
    assert tie.result.plan["start"] == "second"
    assert out.source == "mio" and out.result.proven_optimal
    assert out.result.objective == pytest.approx(score(out.tree), abs=1e-9)


def test_the_dp_start_and_bound_prove_the_optimum():
    data, score = _case(1)
    greedy = cart_classifier_tree(data, 2, 1, 0.0, 0)
    out = _run(MIO(partial(OCT, data, 2), score, [Start(greedy, "greedy")], dp=DPUse(True, True),
                   solver_options={"solver": "highs"}))
    res = out.result
    assert res.proven_optimal and res.plan["bound"] == "dp-bound" and out.dp_run is not None
    assert score(out.tree) == pytest.approx(out.dp_run.objective, abs=1e-9)
    assert res.plan["start"] in ("dp", "greedy") and score(out.start.tree) <= score(greedy) + 1e-12


def test_a_dp_tree_that_reaches_the_dp_bound_is_proven_without_a_solver(monkeypatch):
    """The DP over the model's own split set gives a tree and a bound; when the tree reaches the bound it is
    optimal for the model, and the model is not handed to a solver (on 5,000 rows that hand-off took 15 s).
    The proof agrees with the solver's own proof on the same model."""
    import opttrees.solvers.api as api

    data, score = _case(4, n=16)
    greedy = cart_classifier_tree(data, 2, 1, 0.0, 0)
    solved = _run(MIO(partial(OCT, data, 2), score, [Start(greedy, "greedy")], solver_options={"solver": "highs"}))
    assert solved.result.proven_optimal and solved.result.proof == "solver"

    def no_solver(*args, **kwargs):
        raise AssertionError("the solver was called")
    monkeypatch.setattr(api, "_solve", no_solver)
    out = _run(MIO(partial(OCT, data, 2), score, [Start(greedy, "greedy")], dp=DPUse(True, True),
                   solver_options={"solver": "highs"}))
    res = out.result
    assert res.proven_optimal and res.proof == "dp-bound" and res.solver == "none" and res.status == "optimal"
    assert out.source == "mio" and res.plan["start"] == "dp" and res.plan["bound"] == "dp-bound"
    assert res.objective == pytest.approx(score(out.tree), abs=1e-9) == pytest.approx(solved.result.objective)
    assert res.bound == pytest.approx(res.objective) and "without a solver" in res.message
    # a start other than the DP's own tree (here: no DP start) still goes to the solver
    with pytest.raises(AssertionError, match="the solver was called"):
        _run(MIO(partial(OCT, data, 2), score, [Start(greedy, "greedy")], dp=DPUse(False, True),
                 solver_options={"solver": "highs"}))


def test_a_strictly_better_start_is_returned_and_the_result_says_so(monkeypatch):
    data, score = _case(2, n=16)
    good = cart_classifier_tree(data, 2, 1, 0.0, 0)
    root = cart_classifier_tree(data, 0, 1, 0.0, 0)
    monkeypatch.setattr(OCT, "extract", lambda self, verify=True: root)    # the solver's tree, made worse
    with pytest.warns(UserWarning, match="beats the MIO's tree"):
        out = _run(MIO(partial(OCT, data, 2), score, [Start(good, "greedy")], solver_options={"solver": "highs"}))
    assert out.tree is good and out.source == "greedy"
    res = out.result
    assert not res.proven_optimal and res.status == "unverified" and res.proof is None
    assert res.objective == pytest.approx(score(good), abs=1e-9)


def test_without_a_solution_the_start_then_the_fallback_then_a_clear_error():
    data, score = _case(3)
    leaf = cart_classifier_tree(data, 0, 1, 0.0, 0)
    build = partial(OCT, data, 2)
    opts = {"solver": "highs"}
    # a fit already out of time never starts the solver: no solution
    with pytest.warns(UserWarning, match="using the fallback tree"):
        out = _run(MIO(build, score, fallback=lambda: leaf, solver_options=opts), time_limit=1e-9)
    assert out.tree is leaf and out.source == "fallback" and not out.result.has_solution
    with pytest.warns(UserWarning, match="using the greedy tree"):
        out = _run(MIO(build, score, [Start(leaf, "greedy")], hand_start=False, solver_options=opts), time_limit=1e-9)
    assert out.source == "greedy" and out.result.plan["start"] is None
    with pytest.raises(SolverError, match="Test: the solver found no feasible tree .* no start tree"):
        _run(MIO(build, score, solver_options=opts), time_limit=1e-9)
