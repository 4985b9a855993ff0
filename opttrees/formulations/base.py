"""The formulation contract every model builder in :mod:`opttrees.formulations` follows (docs/architecture.md, 'Contracts').

A formulation takes **one prepared-data object** (:class:`opttrees.data.PreparedData`, or
:class:`opttrees.data.binarized.BinarizedData` for the flow family) plus its parameters, and exposes:

- ``model`` — the Pyomo block it built, with readable component names users can extend;
- ``warm_start(tree)`` — set every variable from a :class:`~opttrees.tree.Tree`;
- ``extract()`` — decode the solution into a Tree, re-route the training data through it and insist the
  recomputed objective equals the solver's (a mismatch is a formulation bug, never silently accepted);
- ``separator`` — for decomposition models (BendersOCT, RobustOCT) the object returning violated cuts; None
  elsewhere.

**Blocks (OMLT style).** ``block=None`` (default): the formulation owns a fresh ``ConcreteModel`` and adds its
``Objective``. ``block=<a Pyomo block inside your model>``: it builds onto that block and adds **no**
Objective, so several formulations (or your own variables and constraints) can share one model. Either way the
block holds ``objective_expr``, a Pyomo ``Expression`` of the formulation's objective, and ``sense``
(``pyo.minimize`` = 1 or ``pyo.maximize`` = -1) says which way it wants to go. Combine several on one model
by minimising the sum of ``sense * objective_expr`` (each term positively weighted), e.g.::

    m = pyo.ConcreteModel(); m.a = pyo.Block(); m.b = pyo.Block()
    fa = OCT(prepare(Xa, ya), 2, block=m.a)                                # minimises
    fb = FlowOCT(BinarizedData.from_binary(Z, y), 2, block=m.b)           # maximises
    m.obj = pyo.Objective(expr=fa.sense * m.a.objective_expr + fb.sense * m.b.objective_expr)
    solve(m, "highs"); ta, tb = fa.extract(), fb.extract()                  # each re-verified on its own

``extract()`` verifies each formulation against its own ``objective_expr``; a part pushed the wrong way by the
combined objective (a negative weight) can leave its auxiliary variables slack and fails that check.
"""
from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.block import BlockData
from pyomo.core.expr.visitor import identify_variables

from ..errors import InputError, SolverError, VerificationError, VerificationWarning

if TYPE_CHECKING:
    from ..tree import Tree

#: objective agreement required between the solver and the re-routed tree
VERIFY_ATOL = 1e-5
VERIFY_RTOL = 1e-6


class Separator(Protocol):
    """What the solver layer needs of a decomposition model's ``separator``: the violated cuts at a point
    (``value(var)`` reads it). ``separate_fractional`` and ``repair`` are optional and looked up by name."""

    def separate(self, value) -> list: ...


class IncumbentSeparator:
    """What every separator at integer incumbents keeps (BendersOCT's, RobustOCT's): its formulation ``f``, the
    calls and cuts it counts for the solve's statistics, and ``sepa_freq``, whether SCIP also separates its LP
    points (:mod:`opttrees.solvers.scip`); :meth:`_incumbent` reads the incumbent a call separates."""

    def __init__(self, formulation, sepa_freq: int):
        self.f = formulation
        self.n_calls = 0
        self.n_cuts = 0
        self.sepa_freq = sepa_freq

    def _incumbent(self, value):
        """(formulation, its model, the incumbent at ``value``) for one call of ``separate``, counted."""
        self.n_calls += 1
        f = self.f
        return f, f.model, f.struct.incumbent(f.model, value)


def reconcile(form, tree_objective: float) -> None:
    """The invariant for every MIO: the reported objective is the returned tree's recomputed one."""
    if form.last_result is not None:
        form.last_result.reconcile(tree_objective)


class Formulation(ABC):
    """A Pyomo model (or block) plus the glue between it and Tree objects; see the module docstring.

    Subclasses call :meth:`_new_block` then :meth:`_set_objective` while building, and implement
    ``_warm_start(tree)`` (Pyomo values <- Tree; :meth:`warm_start` calls it, then sets the side constraints'
    variables), ``_decode()`` (Pyomo values -> Tree) and ``tree_objective(tree)`` (the objective recomputed by
    routing the training data through a tree). ``extract()`` decodes and verifies. A formulation describes itself
    to the layers that add to it: :meth:`constraint_view` (side constraints) and :meth:`dp_relaxation` (the DP
    start and bound).
    """

    model: pyo.Block
    #: True when the formulation created ``model`` itself (and so added its Objective)
    owns_model: bool = True
    #: ``pyo.minimize`` (1) or ``pyo.maximize`` (-1)
    sense: int = pyo.minimize
    separator: Separator | None = None
    last_result = None
    #: the integer variables (component names) the DP bound relies on staying integer (see :meth:`dp_relaxation`)
    integer_components: tuple[str, ...] = ()
    #: rows this formulation deactivates itself while building (not a user's edit)
    inactive_by_design: tuple[str, ...] = ()
    #: declared on a class itself (its own ``__dict__``; a subclass may add rows): its model is exactly the problem
    #: of its :meth:`dp_relaxation`, so the DP's tree is feasible without a check
    dp_exact: bool = False
    #: ``extract()`` raises :class:`VerificationError` when the re-routed tree's objective differs from the
    #: solver's; by default (False) it warns, returns the tree with its own objective and marks the result
    #: "unverified" (not a proof): a solver tolerance effect must not cost the user the tree
    strict = False

    # ------------------------------------------------------------------ building
    def _new_block(self, block, name: str) -> pyo.Block:
        """The block to build on: the caller's (checked) or a fresh ConcreteModel this formulation owns."""
        if block is None:
            self.owns_model = True
            return pyo.ConcreteModel(name=name)
        if not isinstance(block, BlockData):
            raise InputError(f"block must be a constructed Pyomo block (e.g. model.part = pyo.Block()); got "
                             f"{type(block).__name__}")
        if block.component("objective_expr") is not None:
            raise InputError(f"block {block.name!r} already holds a formulation; give each formulation its own block")
        self.owns_model = False
        return block

    def _set_objective(self, expr, sense: int) -> None:
        """``model.objective_expr`` always; ``model.objective`` (the Objective) only on an owned model."""
        m = self.model
        self.sense = sense
        m.objective_expr = pyo.Expression(expr=expr)
        if self.owns_model:
            m.objective = pyo.Objective(expr=m.objective_expr, sense=sense)
        # the formulation's own rows (every other row is the user's; see _refit_allowed)
        self._own_rows = {id(c) for c in m.component_objects(pyo.Constraint, descend_into=True)}

    @property
    def max_depth(self) -> int:
        """The depth the model encodes: its heap structure's ``D`` (formulations without one override this)."""
        return self.structure.D  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ contract
    def warm_start(self, tree) -> None:
        """Set every variable of the model from ``tree``: the formulation's own (:meth:`_warm_start`), then those
        the side constraints added (through the :meth:`constraint_view`, when constraints were added)."""
        self._warm_start(tree)
        view = self.__dict__.get("_constraint_view")
        if view is not None:
            view.set_start()

    @abstractmethod
    def _warm_start(self, tree) -> None:
        """Set every variable of the formulation's own model from ``tree``."""

    @abstractmethod
    def _decode(self):
        """The solution in the Pyomo variables as a Tree (no verification)."""

    @abstractmethod
    def tree_objective(self, tree) -> float:
        """The formulation's objective recomputed by routing the training data through ``tree``."""

    # ------------------------------------------------------------------ what the formulation says of itself
    def constraint_view(self):
        """What side constraints (:mod:`opttrees.constraints`) read of this model: a
        :class:`~opttrees.formulations.constraint_view.ConstraintView`, or None when the model takes no side
        constraints (the default). Subclasses inherit their parent's view."""
        return None

    def _view_of(self, kind):
        """This formulation's constraint view of class ``kind``, made once (its start hooks live on it)."""
        view = self.__dict__.get("_constraint_view")
        if view is None:
            view = self._constraint_view = kind(self)
        return view

    def dp_relaxation(self):
        """The dynamic program's problem that relaxes this MIO (an :class:`opttrees.dp.relaxation.Relaxation`),
        or None when no DP relaxes it (the default). :mod:`opttrees.dp.bound` reads only this.

        Subclasses inherit it: rows a subclass adds only move the MIO's optimum away from the DP's (the DP's tree
        is then checked against the model before it serves as a start, :meth:`admits`). A subclass that scores
        trees differently (overrides ``tree_objective``) gets None from the built-in formulations'
        implementations (:meth:`_relaxation_common`); one that widens the split set must return None itself.
        """
        return None

    def _relaxation_common(self, declared_by: type[Formulation]) -> dict | None:
        """The fields every :class:`~opttrees.dp.relaxation.Relaxation` of this object shares, for the relaxation
        ``declared_by`` (a class) defines; None when this object's class scores trees otherwise than
        ``declared_by`` (it overrides ``tree_objective``), so the relaxation may not hold."""
        cls = type(self)
        if cls.tree_objective is not declared_by.tree_objective:
            return None
        return dict(name=cls.__name__, model=self.model, owns_model=bool(self.owns_model),
                    max_depth=int(self.max_depth), tree_objective=self.tree_objective,
                    solution_objective=self._solution_objective, admits=self.admits,
                    exact=bool(vars(cls).get("dp_exact", False)), integer_components=tuple(self.integer_components),
                    inactive_by_design=tuple(self.inactive_by_design))

    def _solution_objective(self) -> tuple[float | None, str]:
        """The tree loaded in the model (as the solver assigned it) and its objective: ``(objective, "")``, or
        ``(None, why)`` when the DP bound cannot speak about that point (formulations with a DP relaxation)."""
        try:
            tree = self._decode()
        except VerificationError as exc:
            return None, str(exc)
        return self.tree_objective(tree), ""

    def admits(self, tree, tol: float = 1e-6) -> bool:
        """Whether ``tree``, set as the model's start (:meth:`warm_start`), satisfies every active row of the model
        within ``tol`` (scaled by the row's size): a feasible point of the model as it stands."""
        try:
            self.warm_start(tree)
        except InputError:
            return False
        for row in self.model.model().component_data_objects(pyo.Constraint, active=True, descend_into=True):
            body = pyo.value(row.body, exception=False)
            if body is None:
                return False
            lower, upper = pyo.value(row.lower), pyo.value(row.upper)
            slack = tol * (1.0 + abs(body))
            if (lower is not None and body < lower - slack) or (upper is not None and body > upper + slack):
                return False
        return True

    def model_objective(self) -> float:
        """The solver's value of this formulation's own objective (its part of a shared model)."""
        return float(pyo.value(self.model.objective_expr))

    def extract(self, verify: bool = True):
        """The solution as a Tree; with ``verify``, re-routed and checked, and the last SolveResult's objective
        replaced by the tree's own (see :meth:`SolveResult.reconcile`).

        Formulations whose leaf values are continuous variables (ORT, ORT-L) then refit them on the solver's
        partition (:meth:`_refit_leaves`): a solver stops within its tolerances, not at the leaf values the
        objective defines. The returned tree is the refit one, and the SolveResult reports its objective
        (:meth:`SolveResult.refit`: never worse than the solver's point; the bound stays valid).
        """
        res = self.last_result
        if res is not None and not res.has_solution:
            from ..solvers.result import STATUSES
            raise SolverError(f"{type(self).__name__}.extract(): the last solve returned no solution (status "
                              f"{res.status!r}: {STATUSES.get(res.status, res.message)}); there is no tree to decode")
        tree = self._decode()
        if verify:
            self.verify(tree)
            reconcile(self, self.tree_objective(tree))
        # a better point of the same model, routing every row as the solver did: void splits dropped, then
        # (ORT, ORT-L) leaf values refit on the partition
        better = self._drop_void_splits(tree)
        refit = self._refit_leaves(better) if self._refit_allowed() else None
        if refit is not None:
            better = refit
        if better is not tree:
            tree = better
            if verify and self.last_result is not None:
                self.last_result.refit(self.tree_objective(tree), self.sense)
        return tree

    def _drop_void_splits(self, tree):
        """Splits that send no training row one way, or split a leaf into two predicting the same, are removed
        (:func:`opttrees.tidy.tidy_tree`: every training prediction stays) for the models on the Bertsimas–Dunn
        block; a step that would break a side constraint's check in ``tidy_keeps`` (added with the constraint's
        rows) is not taken."""
        from ..tidy import tidy_tree
        from .structure import BDStructure

        if isinstance(getattr(self, "structure", None), BDStructure):
            keeps = getattr(self, "tidy_keeps", ())
            return tidy_tree(tree, self.data.X, keep=(lambda t: all(k(t) for k in keeps)) if keeps else None)
        return tree

    def _refit_leaves(self, tree: Tree) -> Tree | None:
        """``tree`` with better leaf values for the same partition (a point of the same model), or None."""
        return None

    def _refit_allowed(self) -> bool:
        """Leaf values may be refit unless the user pinned them: a fixed leaf variable (the variables of the
        formulation's own block, outside ``model.tree``) or a row added by the user that mentions one."""
        leaf_vars: set[int] = set()
        for comp in self.model.component_objects(pyo.Var, descend_into=False):
            for v in comp.values():
                if v.fixed:
                    return False
                leaf_vars.add(id(v))
        own: set[int] = getattr(self, "_own_rows", set())   # ids of the rows the formulation added itself
        for con in self.model.model().component_objects(pyo.Constraint, active=True, descend_into=True):
            if id(con) in own:
                continue
            for row in con.values():
                if row.active and any(id(v) in leaf_vars for v in identify_variables(row.body)):
                    return False
        return True

    def verify(self, tree) -> None:
        solver_obj = self.model_objective()
        routed = self.tree_objective(tree)
        if abs(solver_obj - routed) > VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            mismatch(self, f"the decoded tree's objective {routed:.9g} (training data re-routed) differs from the "
                           f"solver's {solver_obj:.9g}")


def mismatch(form, what: str) -> None:
    """A decoded tree disagrees with the solver: raise with ``form.strict``, else warn (the caller then reports
    the tree's own objective, and :meth:`SolveResult.reconcile` makes the result "unverified")."""
    text = f"{type(form).__name__}: {what}"
    if getattr(form, "strict", False):
        raise VerificationError(text + "; a formulation bug or a solver tolerance effect — please report it")
    warnings.warn(text + "; returning the tree with its own objective, not a proof (the solver's tolerances let "
                  "its point differ from the tree the data follows)", VerificationWarning, stacklevel=4)
    res = form.last_result
    if res is not None:
        res.unproven("", unverified=res.claims_optimality)


def leaf_size_shortfall(tree, node, weights, minimum: float, unit: str) -> str:
    """Why a non-empty leaf of ``tree`` holds less than ``minimum`` (rows routed to ``node``, each of weight
    ``weights[i]``, counted in ``unit``), or "" (an empty leaf is a split that could be dropped)."""
    size = np.bincount(node, weights=weights, minlength=tree.n_nodes)[tree.leaves]
    count = np.bincount(node, minlength=tree.n_nodes)[tree.leaves]
    small = (count > 0) & (size < minimum - 1e-9)
    if small.any():
        return f"a leaf holds {size[small].min():g} {unit}, below the minimum {minimum:g}"
    return ""
