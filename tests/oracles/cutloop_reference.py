"""An independent reference for tests: a plain-Pyomo solve–separate–resolve loop (no opttrees.solvers)."""
import pyomo.environ as pyo


def solve_loop_reference(f, solver_name="appsi_highs", max_rounds=500):
    """Solve ``f``'s whole model with Pyomo's own solver interface, adding ``f.separator``'s cuts until none.

    The root model is solved (``f.model.model()``), so this also works for a formulation built on a block.
    """
    opt = pyo.SolverFactory(solver_name)
    for _ in range(max_rounds):
        opt.solve(f.model.model())
        cuts = f.separator.separate(pyo.value)
        if not cuts:
            return
        for c in cuts:
            f.model.cuts.add(c)
    raise RuntimeError("no convergence")
