"""``constraints=[...]`` bound to one fit: which methods honour them, start repair, the post-fit check.

The constraint objects are :mod:`opttrees.constraints.declarations` and :mod:`opttrees.constraints.fairness`;
this module binds them to a fit (the estimator is passed in, never imported; the estimator-side pieces that need
the fit pipeline, ``ConstrainedMixin`` and the constrained DP start, are :mod:`opttrees.estimators.constrained`):

- :func:`bind` checks that the estimator's method can honour every constraint (an InputError naming the methods
  that can) and binds them to the prepared data;
- :class:`ConstraintContext` wraps a formulation's constructor so the rows are added as part of the build, and
  repairs start trees (DP, greedy/CART, local search, fallbacks) to feasibility: the MIO is never handed a
  start that violates a constraint (:func:`opttrees.constraints.repair`: the best feasible pruning, else none);
- :func:`verify` re-routes the training data through the returned tree, sets ``constraint_values_`` and, on a
  violation beyond the tolerance, warns (:class:`~opttrees.errors.VerificationWarning`) and marks the result
  "unverified" (the fit never raises for a tolerance effect);
- :class:`ConstrainedMixin` gives ``constraint_report(X, y)`` and ``fairness_gap(X, y, protected)`` on new data.

The DP's optimum of the unconstrained problem still bounds a constrained MIO (it relaxes it), so a DP bound is
kept; its tree is a start only once repaired.
"""
from __future__ import annotations

import warnings
import numpy as np

from ..errors import InputError, SolverError, VerificationWarning
from ..params import NONE, Satisfies
from .checks import all_satisfied, check_constraints, report
from .dp_routes import dp_part
from .fairness import FAIRNESS
from .start_repair import repair as repair_start

#: the parameter rule of ``constraints`` (every MIO estimator that takes them)
CONSTRAINT_RULES = {"constraints": [NONE, Satisfies(lambda v: check_constraints(v) is not None,
                                                    "a list of opttrees.constraints objects (or spec mappings)")]}

HONOUR_CLASSIFICATION = ("OptimalTreeClassifier(method='mio'), FlowOCTClassifier and BendersOCTClassifier (and "
                         "OptimalTreeClassifier(method='dp') for the five group-fairness notions and the feature budgets "
                         "max_features, feature_cost and forbid_features at every depth)")
HONOUR_REGRESSION = ("OptimalTreeRegressor(method='mio') with leaf_model='constant' and split_type='parallel' "
                     "(and OptimalTreeRegressor(method='dp') for the feature budgets max_features, feature_cost and "
                     "forbid_features at every depth)")


def bind(est, data, can: bool, why: str = "") -> list:
    """The estimator's ``constraints`` bound to ``data``; ``can``: whether its current settings honour them."""
    cons = check_constraints(getattr(est, "constraints", None))
    if not cons:
        return []
    who = type(est).__name__
    if data.task == "regression":
        for c in cons:
            if "regression" not in c.tasks:
                raise InputError(f"{who}: {type(c).__name__} is a classification constraint; it is honoured by "
                                 f"{HONOUR_CLASSIFICATION}")
    if not can:
        honour = HONOUR_REGRESSION if data.task == "regression" else HONOUR_CLASSIFICATION
        raise InputError(f"{who}: constraints={[type(c).__name__ for c in cons]} cannot be honoured {why}; "
                         f"they are honoured by {honour}")
    return [c.validate(data) for c in cons]


def user_labels(data) -> np.ndarray:
    codec = getattr(data, "codec", None)
    return np.asarray(codec.classes)[data.y] if codec is not None else np.asarray(data.y)


class ConstraintContext:
    """The bound constraints of one fit, the training data, and how to refit and score a start tree."""

    def __init__(self, est, cons: list, data, refit, score):
        self.est, self.cons, self.data = est, cons, data
        self.refit, self.score = refit, score
        self.notes: list[str] = []
        self.y = user_labels(data)
        #: the constrained problem's optimum when a DP solved it exactly over the MIO's own split set (it then
        #: bounds the MIO: :meth:`tighten`)
        self.bound_value: float | None = None
        #: whether that DP solved the constrained problem itself (else a relaxation: the constraints it solves only)
        self.bound_exact = False

    def __bool__(self) -> bool:
        return bool(self.cons)

    def make(self, make):
        """``make`` followed by every constraint's ``add_to`` (one build stage, under the fit's deadline)."""
        def build(*args, **kwargs):
            form = make(*args, **kwargs)
            for c in self.cons:
                c.add_to(form)
            return form
        return build

    def repair(self, tree, what: str):
        """``tree`` made feasible (the best feasible pruning), or None; the note is kept for the plan."""
        if tree is None or not self.cons:
            return tree
        fixed, note = repair_start(tree, self.cons, self.data.X, self.y, self.data.sample_weight, self.refit, self.score)
        if fixed is not tree:
            self.notes.append(f"{what}: {note}")
        return fixed

    def guard(self, score, sense: int = 1):
        """``score`` where every constraint holds, else the worst value (so tidying and the single-leaf check
        never trade a constraint for objective)."""
        worst = np.inf if sense == 1 else -np.inf
        return lambda tree: score(tree) if self.satisfied(tree) else worst

    def tighten(self, bound):
        """The DP bound of the unconstrained problem (a relaxation), raised to :attr:`bound_value` when the
        constrained DP solved the problem with the constraints it can solve (group fairness, feature budgets)
        over the same split set (still a "dp-bound"; its details say which relaxation, "none: the constrained
        problem (constrained DP)" or "only <the constraints the DP solved> (constrained DP)", and keep the
        unconstrained value)."""
        import dataclasses

        if bound is None or self.bound_value is None or bound.sense * (self.bound_value - bound.value) <= 0:
            return bound
        return dataclasses.replace(bound, value=float(self.bound_value),
                                   details={**bound.details, "relaxation": "none: the constrained problem (constrained DP)"
                                            if self.bound_exact else "only " + ", ".join(
                                                c.describe() for c in dp_part(self.cons)) + " (constrained DP)",
                                            "unconstrained_dp_bound": bound.value,
                                            "constraints": [c.describe() for c in self.cons]})

    def satisfied(self, tree) -> bool:
        return tree is not None and all_satisfied(self.cons, tree, self.data.X, self.y, self.data.sample_weight)

    def infeasible(self, res) -> None:
        """A clear error when the solver proved that no tree satisfies the constraints."""
        if res is not None and res.status == "infeasible":
            raise SolverError(f"{type(self.est).__name__}: no tree of depth <= {self.est.max_depth} satisfies the "
                              f"constraints {[c.describe() for c in self.cons]} on the training data (the solver "
                              "proved the model infeasible); loosen a bound or allow a deeper tree")


def own_objective(prob, alpha: float):
    """The shared objective charging each leaf its own prediction (label or value), not the best one: a
    constrained tree's labels need not be the majority ones (:func:`opttrees.objectives.tree_objective`)."""
    from ..objectives import tree_objective

    return lambda tree: tree_objective(tree, prob.X, prob.y, prob.loss, alpha, prob.data.n_classes or None,
                                       prob.baseline, prob.data.sample_weight, refit_leaves=False)


def verify(est, tree, ctx: ConstraintContext | None) -> None:
    """``constraint_values_`` on the training data; a violation is a VerificationWarning and "unverified"."""
    if ctx is None or not ctx.cons:
        est.constraint_values_ = {}
        return
    rep = report(ctx.cons, tree, ctx.data.X, ctx.y, ctx.data.sample_weight)
    est.constraint_values_ = {k: v["value"] for k, v in rep.items()}
    bad = {k: v for k, v in rep.items() if not v["satisfied"]}
    res = getattr(est, "solve_result_", None)
    if res is not None and ctx.notes:
        plan = dict(getattr(res, "plan", None) or {})
        plan["constraint_notes"] = list(ctx.notes)
        res.plan = plan
    if bad:
        what = "; ".join(f"{k} = {v['value']:.6g} (must be {v['sense']} {v['bound']:g})" for k, v in bad.items())
        warnings.warn(f"{type(est).__name__}: the returned tree breaks constraint(s) on the training data: {what}; "
                      "a solver tolerance effect or an interrupted fit — the result is not a proof",
                      VerificationWarning, stacklevel=3)
        if res is not None:
            res.unproven("the returned tree breaks a constraint on the training data", unverified=True)


def dp_start_name(cons) -> str:
    """The plan's name for a constrained-DP start: "fairness-dp" (the Pareto DP) or "feature-set-dp"."""
    return "fairness-dp" if any(isinstance(c, FAIRNESS) for c in dp_part(cons)) else "feature-set-dp"
