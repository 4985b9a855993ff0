"""A formulation's warm start read off its compiled model: is the start vector feasible, and its objective."""
import numpy as np

from opttrees.solvers.checks import model_feasible as _model_feasible
from opttrees.solvers.compile import compile_model


# --- moved here from tests/formulations/test_octh_mio.py ---
def start_is_feasible(f) -> bool:
    cm = compile_model(f.model)
    x0 = cm.start_vector()
    return not np.isnan(x0).any() and _model_feasible(cm, x0)


def start_objective(f) -> float:
    cm = compile_model(f.model)
    return cm.objective_value(cm.start_vector())
