"""What every formulation object provides (see DESIGN.md, 'Formulations')."""
from __future__ import annotations

import pyomo.environ as pyo

from ..errors import VerificationError

#: objective agreement required between the solver and the re-routed tree
VERIFY_ATOL = 1e-5
VERIFY_RTOL = 1e-6


def reconcile(form, tree_objective: float) -> None:
    """The invariant for every MIO: the reported objective is the returned tree's recomputed one."""
    if form.last_result is not None:
        form.last_result.reconcile(tree_objective)


class Formulation:
    """A Pyomo model plus the glue between it and Tree objects.

    Subclasses build ``self.model`` and implement ``warm_start(tree)`` (set every variable from a Tree) and
    ``_decode()`` (Pyomo values -> Tree). ``extract()`` decodes, then re-routes the training data through the
    tree and insists the recomputed objective equals the solver's: a mismatch is a formulation bug.
    """

    model: pyo.ConcreteModel
    separator = None
    last_result = None

    def warm_start(self, tree) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decode(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def tree_objective(self, tree) -> float:  # pragma: no cover - abstract
        """The formulation's objective recomputed by routing the training data through ``tree``."""
        raise NotImplementedError

    def model_objective(self) -> float:
        return float(pyo.value(self.model.objective))

    def extract(self, verify: bool = True):
        """The solution as a Tree; with ``verify``, re-routed and checked, and the last SolveResult's objective
        replaced by the tree's own (see :meth:`SolveResult.reconcile`)."""
        tree = self._decode()
        if verify:
            self.verify(tree)
            reconcile(self, self.tree_objective(tree))
        return tree

    def verify(self, tree) -> None:
        solver_obj = self.model_objective()
        routed = self.tree_objective(tree)
        if abs(solver_obj - routed) > VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            raise VerificationError(
                f"{type(self).__name__}: the decoded tree's objective {routed:.9g} (training data re-routed) "
                f"differs from the solver's {solver_obj:.9g}; this is a formulation bug — please report it")
