"""What actually produced a run's tree: the solver that ran, the route, and where the proof came from.

Why a separate reading of the solve record: an estimator names the solver it *would* use (``plan["solver"]``),
but the DP bound can prove a start optimal before any solver is called (``solve.solver == "none"``,
``proof == "dp-bound"``), a big-data fit can take the DP or the local search instead of the MIO
(``plan["route"]``), and a heuristic has no solve record at all. A comparison that credits the planned solver
compares DP runs under solver names; these functions say what happened, from the record alone (the ``solve``
section of a spec report, i.e. ``SolveResult.to_dict()``), for the CLI's summary line and every grid row.

Routes:

- ``solver``: a MIO solver (HiGHS, SCIP, ...) ran; its proof, if any, may still lean on the DP bound;
- ``dp-bound``: the DP's tree reached the DP bound, so the model was proven without handing it to a solver;
- ``dp-only``: a dynamic program is the method (``oct-dp``) or replaced the MIO (a fit too big to build);
- ``heuristic``: greedy, local search or CART: no bound, no proof.

Proof sources: ``solver`` (the MIO solver's own bound), ``dp-bound`` (an external bound from the DP),
``dp`` (the DP's own exhaustive search), ``none``.
"""
from __future__ import annotations

import math

ROUTES = ("solver", "dp-bound", "dp-only", "heuristic")
PROOFS = ("solver", "dp-bound", "dp", "none")
#: solver names of a result that are not MIO solvers
_NOT_MIO = {"none", "dp", ""}


def route_of(solve: dict | None) -> dict:
    """``{"solver_ran", "planned_solver", "route", "proof", "start", "bound_source"}`` of one solve record.

    ``solver_ran`` is the solver that actually ran ("highs", "scip", "dp" for a dynamic program, "none" when
    nothing ran); ``planned_solver`` the one the estimator was set to use; ``start`` the warm start's source
    ("dp", "greedy", ... or "none") and ``bound_source`` the external bound handed to the solve ("dp-bound" or
    "none").
    """
    if not solve:
        return {"solver_ran": "none", "planned_solver": None, "route": "heuristic", "proof": "none",
                "start": "none", "bound_source": "none"}
    plan = solve.get("plan") or {}
    ran = str(solve.get("solver") or "none")
    planned = plan.get("solver") or (ran if ran not in _NOT_MIO else None)
    proven = bool(solve.get("proven_optimal"))
    raw_proof = solve.get("proof") if proven else None
    if ran == "dp" or plan.get("route") == "dp":
        route = "dp-only"
        proof = "dp" if proven else "none"
    elif plan.get("route") == "local-search":
        route, proof = "heuristic", "none"
    elif ran == "none":
        route = "dp-bound" if raw_proof == "dp-bound" else "heuristic"
        proof = "dp-bound" if raw_proof == "dp-bound" else "none"
    else:
        route = "solver"
        proof = {"solver": "solver", "dp-bound": "dp-bound"}.get(str(raw_proof), "none" if not proven else "solver")
    start = plan.get("start")
    bound = plan.get("bound") or ((solve.get("external_bound") or {}).get("provenance"))
    return {"solver_ran": ran, "planned_solver": planned, "route": route, "proof": proof,
            "start": str(start) if start else "none", "bound_source": str(bound) if bound else "none"}


def solver_words(solve: dict | None) -> str:
    """The CLI's ``solver=...`` words: the solver that ran, and the planned one when it never ran.

    >>> solver_words({"solver": "none", "proven_optimal": True, "proof": "dp-bound", "plan": {"solver": "scip"}})
    'solver=none (scip not called: proven optimal by the DP bound)'
    >>> solver_words({"solver": "scip", "proven_optimal": True, "proof": "solver", "plan": {"solver": "scip"}})
    'solver=scip (proven optimal)'
    """
    r = route_of(solve)
    ran, planned, proof = r["solver_ran"], r["planned_solver"], r["proof"]
    if ran == "none" and planned:
        why = "proven optimal by the DP bound" if proof == "dp-bound" else "not needed"
        return f"solver=none ({planned} not called: {why})"
    if proof == "none" or not (solve or {}).get("proven_optimal"):
        return f"solver={ran}"
    return f"solver={ran} (proven optimal" + (" by the DP bound" if proof == "dp-bound" else "") + ")"


def first_incumbent_time(trace: list | None) -> float | None:
    """Seconds from the solve's start to its first incumbent (None when the trace has none)."""
    times = [float(p["time"]) for p in trace or [] if isinstance(p, dict) and p.get("primal") is not None
             and isinstance(p.get("time"), (int, float)) and math.isfinite(p["time"])]
    return min(times) if times else None
