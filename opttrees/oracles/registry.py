"""Decision problems from plain data (spec files, JSON): ``{"type": "shortest_path", "rows": 4, "cols": 4}``.

Why: estimators keep ``decision_problem`` exactly as given (sklearn convention), so a spec/CLI can pass a
dict or a name and the object is built at fit time.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .base import DecisionProblem
from .grid import GridShortestPath
from .polytope import NewsRecommendation

PROBLEMS = {
    "shortest_path": "rows x cols north/east grid shortest path (keys: rows=4, cols=4)",
    "news": "news recommendation LP, maximisation (keys: A and b, or d=6, m=5, seed=10 for the paper's random sets)",
}


REQUIRED_METHODS = ("check_costs", "solve", "_solve_min", "worst_case_decisions", "cost_bounds")


def check_protocol(problem):
    """Raise InputError unless ``problem`` implements the DecisionProblem protocol (duck typing allowed).

    A :class:`DecisionProblem` subclass inherits everything but ``_solve_min``; a duck-typed object must
    provide ``n_decisions`` (int >= 1), ``sense`` ("min"/"max"), ``sign`` and the methods
    ``check_costs, solve, _solve_min, worst_case_decisions, cost_bounds`` (``add_to_block`` for the MILP).
    Subclassing DecisionProblem is the easy way to get all of them.
    """
    name = type(problem).__name__
    n = getattr(problem, "n_decisions", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"decision problem {name}: n_decisions must be an integer >= 1; got {n!r}")
    if getattr(problem, "sense", None) not in ("min", "max"):
        raise InputError(f"decision problem {name}: sense must be 'min' or 'max'; got {getattr(problem, 'sense', None)!r}")
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(problem, m, None))]
    if getattr(problem, "sign", None) not in (1.0, -1.0):
        missing.append("sign")
    if isinstance(problem, DecisionProblem) and type(problem)._solve_min is DecisionProblem._solve_min:
        missing.append("_solve_min")
    if missing:
        raise InputError(f"decision problem {name} does not implement the DecisionProblem protocol: missing "
                         f"{sorted(set(missing))}. Subclass opttrees.oracles.DecisionProblem and implement "
                         "_solve_min(C) -> (W, z)")
    return problem


def make_decision_problem(spec) -> DecisionProblem:
    """A DecisionProblem from an instance, a name (``"shortest_path"``) or a dict with a ``type`` key."""
    if isinstance(spec, DecisionProblem) or (hasattr(spec, "solve") and hasattr(spec, "n_decisions")):
        return check_protocol(spec)
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise InputError("decision_problem must be a DecisionProblem, a name, or a dict with a 'type' key; "
                         f"known types: {sorted(PROBLEMS)}")
    kw = {k: v for k, v in spec.items() if k != "type"}
    kind = spec["type"]
    try:
        if kind == "shortest_path":
            bad = set(kw) - {"rows", "cols"}
            if bad:
                raise InputError(f"decision_problem.{sorted(bad)[0]}: unknown field for shortest_path (rows, cols)")
            return GridShortestPath(kw.get("rows", 4), kw.get("cols", 4))
        if kind == "news":
            if "A" in kw or "b" in kw:
                bad = set(kw) - {"A", "b"}
                if bad or "A" not in kw or "b" not in kw:
                    raise InputError("decision_problem news: give both A and b (and nothing else), or d, m, seed")
                return NewsRecommendation(kw["A"], kw["b"])
            bad = set(kw) - {"d", "m", "seed"}
            if bad:
                raise InputError(f"decision_problem.{sorted(bad)[0]}: unknown field for news (A, b, d, m, seed)")
            return NewsRecommendation.random(kw.get("d", 6), kw.get("m", 5), kw.get("seed", 10))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"decision_problem {kind}: {exc}") from None
    raise InputError(f"unknown decision problem type {kind!r}; known: {sorted(PROBLEMS)}")
