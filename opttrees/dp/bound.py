"""The dynamic program as warm start and bound of a MIO formulation: one DP run over the MIO's own split set.

Why here: the DP optimum is a bound for a MIO only when the DP problem *relaxes* it, and that depends on the
formulation: same depth, same objective on the same scale, a minimum leaf size no stricter, and a split set
holding every partition the MIO can realise. This module states that relation once per formulation
(:func:`dp_for_formulation`) and refuses every other case with an InputError:

- **OCT** (:class:`~opttrees.dp.relaxation.OCTRelaxation`, from ``opttrees.formulations.oct.OCT``): the MIO
  splits at any threshold of the scaled features, which realises exactly the partitions of the midpoints of the
  training features (scaling is monotone). The DP over *all midpoints of every row's values* (weight-0 rows count
  for the minimum leaf size too), with the same ``alpha``, ``min_samples_leaf``, depth and sample weights, has
  the same optimum, number for number. Quantile thresholds give a feasible start but no bound.
- **FlowOCT / BendersOCT** (:class:`~opttrees.dp.relaxation.FlowRelaxation`): the DP over the formulation's own
  binary columns and weights ``s_i``. The flow objective ``(1 - lam) * sum s_i correct_i - lam * splits`` is
  ``(1 - lam) * (S - (errors + pen * splits))`` with ``pen = lam / (1 - lam)``, so the DP (split cost ``pen``)
  minimises the same function; its lower bound maps to an upper bound of the maximisation. No minimum leaf size
  on either side.
- **SPOT MILP** (:class:`~opttrees.dp.relaxation.SPOTRelaxation`, from ``SPOTFormulation``): the DP over all
  midpoints of the features the MILP sees (its rounded ``data.X``), the same ``alpha`` and normalisation N; the
  MILP's minimum leaf *weight* becomes a minimum row count no stricter than it (``ceil(N_min / max weight)``;
  exactly ``ceil(N_min)`` with unit weights).

Anything else (a formulation whose ``dp_relaxation()`` is None, e.g. OCT-H or a subclass that scores trees
otherwise, a formulation built on a block of a bigger model, a depth the DP cannot search) is refused. Rows a
subclass adds, and side constraints added to ``form.model`` afterwards, are fine: they only move the MIO optimum
away from the bound (the DP's tree of a subclass is a start only when the model admits it,
``Relaxation.admits``). Removing or relaxing the formulation's own rows is not: the bound records every row and
variable domain of the model when it is made (make it before editing the model) and ``solve`` refuses it when
one was deactivated, deleted, edited, unfixed or had its domain or bounds widened; independently of that record,
a deactivated formulation row or a relaxed integer variable of the formulation is always refused. A formulation
says what this module needs through one method of the Formulation contract, ``dp_relaxation()`` (a
:mod:`opttrees.dp.relaxation` object: the model, its data, how it scores a tree and reads its solution, the
integer variables and the rows it deactivates by design); this module reads nothing else of the formulation,
imports nothing from the layers above it and names no class of theirs.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from ..data.binarizers import Binarizer
from ..errors import InputError, VerificationError
from ..interrupt import STOP
from ..objectives import misclassification_baseline
from ..solvers.result import ObjectiveBound, SolveResult
from ..tree import Tree
from .api import MAX_DEPTH, solve_dp, solve_dp_columns
from .relaxation import FlowRelaxation, OCTRelaxation, Relaxation, SPOTRelaxation
from .spo import SPO_MAX_DEPTH, solve_dp_spo
from .tasks import ClassificationTask, EngineData

#: DP tree objective and the formulation's own objective of that tree must agree this closely
AGREE_TOL = 1e-7



@dataclass
class DPRun:
    """One DP run over a formulation's split set.

    ``tree``: the DP's best tree (in original units; a feasible warm start of the formulation, see
    ``start_feasible``); ``result``: the DP's SolveResult; ``objective``: that tree's objective in the
    formulation's own units (what the MIO scores it); ``bound``: an :class:`ObjectiveBound` when the DP
    problem relaxes the formulation, else None with ``why_no_bound``.
    """

    tree: Tree
    result: SolveResult
    objective: float
    bound: ObjectiveBound | Callable[[], ObjectiveBound] | None     # a callable: made on demand
    why_no_bound: str = ""
    start_feasible: bool = True
    details: dict = field(default_factory=dict)


def relaxation_of(form) -> Relaxation:
    """The DP problem that relaxes ``form`` (``form.dp_relaxation()``); an InputError when there is none."""
    describe = getattr(form, "dp_relaxation", None)
    relaxation = describe() if callable(describe) else None
    if not isinstance(relaxation, (OCTRelaxation, FlowRelaxation, SPOTRelaxation)):
        raise InputError(f"objective_bound: no dynamic program relaxes a {type(form).__qualname__} (the DP bound is "
                         "defined for OCT, FlowOCT, BendersOCT, SPOTFormulation and their subclasses that score "
                         "trees as they do: a formulation's dp_relaxation() says which problem relaxes it)")
    if not relaxation.owns_model:
        raise InputError("objective_bound: the formulation was built on a block of a bigger model, whose objective "
                         "is not the formulation's; a DP bound holds only for a formulation that owns its model")
    return relaxation


def dp_bound(form, time_limit: float | None = None) -> ObjectiveBound:
    """The DP optimum (or anytime lower bound) of the relaxation of ``form``, as an :class:`ObjectiveBound`.

    Pass it to ``opttrees.solvers.solve(form, objective_bound=...)``.
    Raises InputError when no DP problem relaxes ``form`` (see the module docstring).
    """
    run = dp_for_formulation(form, binarization="midpoints", time_limit=time_limit)
    if run.bound is None:   # pragma: no cover - midpoints always give a bound where a relation exists
        raise InputError(f"objective_bound: {run.why_no_bound}")
    return run.bound() if callable(run.bound) else run.bound


def dp_for_formulation(form, binarization: str = "midpoints", n_thresholds: int = 10,
                       time_limit: float | None = None, bound: bool = True, verbose=False) -> DPRun:
    """Run the DP over ``form``'s split set: its tree (a warm start) and, when it relaxes ``form``, a bound.

    ``binarization``/``n_thresholds`` choose the candidate splits of the continuous-split models (OCT, SPOT):
    "midpoints" is the MIO's own split set (start and bound); "quantile" a subset (a start only). Flow models
    always use their own binary columns. ``bound=False`` skips making the bound (it records the model's rows,
    which costs a pass over a large model) when only the start is wanted.
    """
    rel = relaxation_of(form)
    if binarization not in ("quantile", "midpoints"):
        raise InputError(f"binarization must be 'quantile' or 'midpoints'; got {binarization!r}")
    if isinstance(rel, OCTRelaxation):
        run = _oct(form, rel, binarization, n_thresholds, time_limit, verbose=verbose)
    elif isinstance(rel, FlowRelaxation):
        run = _flow(form, rel, binarization, n_thresholds, time_limit, verbose=verbose)
    else:
        assert isinstance(rel, SPOTRelaxation)
        run = _spot(form, rel, binarization, n_thresholds, time_limit, verbose=verbose)
    run.details.setdefault("formulation", rel.name)
    if run.start_feasible and not rel.exact and not rel.admits(run.tree):
        # a subclass's own rows (or side constraints) exclude the DP's tree: a bound, not a start
        run.start_feasible = False
        run.details["start"] = "the DP's tree breaks a row of the model: not a start"
    if run.bound is not None and bound and STOP.is_set():
        # after Ctrl-C no solver starts and nothing is proven: skip the model record (0.2-0.8 s on 50k rows)
        run.bound, run.why_no_bound = None, "interrupted (Ctrl-C) before the bound was made"
    elif run.bound is not None and bound:
        run.bound = run.bound() if callable(run.bound) else run.bound
    elif run.bound is not None:
        run.bound, run.why_no_bound = None, "not asked for (bound=False)"
    return run


# ------------------------------------------------------------------------------------------------ OCT
def _oct(form, rel: OCTRelaxation, binarization, n_thresholds, time_limit, verbose=False) -> DPRun:
    D, ml, alpha = rel.max_depth, rel.min_samples_leaf, rel.alpha
    _check_depth(D, MAX_DEPTH)
    # prepare() dropped the weight-0 rows; every midpoint: the continuous search or the binary engine, whichever
    # suits the data (both exact over OCT's split set); quantiles: a Binarizer
    binarizer = Binarizer(binarization, int(n_thresholds)).fit(rel.X) if binarization == "quantile" else None
    try:
        tree, res = solve_dp(rel.X, rel.y, ClassificationTask(), max_depth=D, min_samples_leaf=ml, alpha=alpha,
                             sample_weight=rel.sample_weight, binarizer=binarizer, binarization="auto",
                             time_limit=time_limit, verbose=bool(verbose))
    except InputError as exc:
        if binarization != "midpoints":
            raise
        raise InputError(f"the DP over every midpoint (the split set that makes it a bound of OCT) cannot run "
                         f"here: {exc}") from None
    if not math.isclose(res.dp_baseline, rel.baseline, rel_tol=1e-12, abs_tol=1e-12):
        raise VerificationError(f"DP bound: the DP's normalisation {res.dp_baseline!r} is not {rel.name}'s "
                                f"{rel.baseline!r}")
    # the DP saw the label codes 0..K-1: the tree may be returned as it is (a fallback), so it gets the labels
    tree.classes, tree.feature_names = list(rel.classes or []), list(rel.feature_names or [])
    own = rel.tree_objective(tree)
    _agree(own, res.objective, rel.name)
    details = {"relaxation": "oct", "max_depth": D, "alpha": alpha, "min_samples_leaf": ml,
               "split_set": (f"quantile ({len(binarizer.threshold_)} binary columns)" if binarizer is not None else
                             f"every midpoint ({res.timings.get('engine', 'binary')} search)"), **_dp_facts(res)}
    bound, why = _bound_if_midpoints(binarization, form, rel, res.bound, details,
                                     "quantile thresholds are a subset of the splits OCT can make: the DP optimum "
                                     "over them is no bound")
    if bound is not None:
        bound, why = _if_relaxation(bound, res, D, ml, alpha, rel.sample_weight, "every midpoint")
    return DPRun(tree, res, own, bound, why, True, details)


# ------------------------------------------------------------------------------------------------ flow
class _CodedClassificationTask(ClassificationTask):
    """Misclassification on labels that already are codes 0..K-1 (classes absent from y keep their code)."""

    def __init__(self, n_classes: int):
        self.n_classes = int(n_classes)

    def prepare(self, y, n: int, w: np.ndarray) -> EngineData:
        code = np.asarray(y, dtype=np.int64)
        return self._classes_data(code, self.n_classes, w, list(range(self.n_classes)))


def _flow(form, rel: FlowRelaxation, binarization, n_thresholds, time_limit, verbose=False) -> DPRun:
    D, lam = rel.max_depth, rel.regularization
    _check_depth(D, MAX_DEPTH)
    s = np.asarray(rel.weights, dtype=np.float64)
    K = rel.n_classes
    pen = lam / (1.0 - lam)
    base = misclassification_baseline(rel.y, K, s)
    tree, res = solve_dp_columns(rel.Z, rel.X, rel.split_of_col, rel.y, task=_CodedClassificationTask(K),
                                 max_depth=D, alpha=pen / base, sample_weight=s, time_limit=time_limit,
                                 feature_names=rel.feature_names, verbose=bool(verbose))
    tree.classes = rel.classes if rel.classes is not None else tree.classes
    scale = res.dp_baseline
    total = float(s.sum())
    own = rel.tree_objective(tree)
    _agree(own, (1 - lam) * (total - res.objective * scale), rel.name)
    upper = (1 - lam) * (total - res.bound * scale)
    details = {"relaxation": "flow", "max_depth": D, "regularization": lam, "min_samples_leaf": 1,
               "split_set": f"the formulation's {rel.Z.shape[1]} binary columns", **_dp_facts(res)}
    bound, why = _if_relaxation(_make_bound(form, rel, upper, -1, details), res, D, 1, pen / base, s, "columns")
    return DPRun(tree, res, own, bound, why, True, details)


# ------------------------------------------------------------------------------------------------ SPOT
def _spot(form, rel: SPOTRelaxation, binarization, n_thresholds, time_limit, verbose=False) -> DPRun:
    D = rel.max_depth
    if D > SPO_MAX_DEPTH:
        raise InputError(f"objective_bound: the SPO dynamic program searches depths up to {SPO_MAX_DEPTH}; this "
                         f"SPOT MILP has max_depth={D}")
    w = np.asarray(rel.weights, dtype=np.float64)
    nmin = float(rel.min_leaf_weight)
    unit = bool(np.all(w == 1.0))
    # a leaf of weight >= nmin holds at least ceil(nmin / max w) rows: a row count no stricter than the MILP's
    wmax = float(w.max()) if len(w) and w.max() > 0 else 1.0
    ml = max(1, math.ceil(nmin - 1e-9) if unit else math.ceil(nmin / wmax - 1e-9))
    binarizer = Binarizer(binarization, int(n_thresholds)).fit(rel.X)
    tree, res = solve_dp_spo(rel.X, rel.costs, rel.problem, max_depth=D, alpha=rel.alpha, min_samples_leaf=ml,
                             sample_weight=w, binarizer=binarizer, time_limit=time_limit)
    if rel.feature_names is not None:
        tree.feature_names = list(rel.feature_names)
    own = rel.tree_objective(tree)
    _agree(own, res.objective, "SPOT MILP")
    leaf_w = np.bincount(tree.apply(rel.X), weights=w, minlength=tree.n_nodes)[tree.leaves]
    feasible = bool(np.all(leaf_w >= nmin - 1e-9))
    details = {"relaxation": "spot", "max_depth": D, "alpha": rel.alpha, "min_samples_leaf": ml,
               "min_leaf_weight": nmin, "split_set": f"{binarization} ({len(binarizer.threshold_)} binary columns)",
               **_dp_facts(res)}
    bound, why = _bound_if_midpoints(binarization, form, rel, res.bound, details,
                                     "quantile thresholds are a subset of the splits the SPOT MILP can make: the "
                                     "DP optimum is no bound")
    return DPRun(tree, res, own, bound, why, feasible, details)


# ------------------------------------------------------------------------------------------------ helpers
def _check_depth(D: int, limit: int) -> None:
    if D > limit:
        raise InputError(f"objective_bound: the dynamic program searches depths up to {limit}; got max_depth={D}")


def _agree(own: float, dp: float, what: str) -> None:
    if abs(own - dp) > AGREE_TOL * max(1.0, abs(own)):
        raise VerificationError(f"DP bound: the DP tree scores {dp:.12g} in the DP but {own:.12g} in the {what} "
                                "objective; the DP problem is not this formulation's (please report it)")


def _if_relaxation(bound, res: SolveResult, depth: int, min_leaf: int, alpha: float, weights, split_set: str):
    """(bound, "") when the DP's record of what it solved (:attr:`SolveResult.problem`) relaxes the MIO's
    problem: same depth, no node limit, a minimum leaf size no stricter, the same alpha, the same rows of positive
    weight and total weight, and the MIO's split set; else (None, why). Checked at the source: whatever a caller
    passed on the way, a proof rests only on the problem the DP says it solved."""
    got = res.problem
    w = np.asarray(weights, dtype=np.float64)
    want = {"max_depth": int(depth), "max_num_nodes": None, "alpha": float(alpha), "n_rows": int((w > 0).sum()),
            "weight_sum": float(w.sum()), "split_set": split_set}
    for key, value in want.items():
        have = got.get(key, "missing")
        same = (isinstance(value, float) and isinstance(have, float)
                and math.isclose(have, value, rel_tol=1e-12, abs_tol=1e-12)) or have == value
        if not same:
            return None, f"the DP solved another problem than the MIO's ({key} {have!r}, the MIO's {value!r}): no bound"
    if not isinstance(got.get("min_samples_leaf"), int) or got["min_samples_leaf"] > int(min_leaf):
        return None, (f"the DP's min_samples_leaf {got.get('min_samples_leaf')!r} is stricter than the MIO's "
                      f"{int(min_leaf)}: no bound")
    return bound, ""


def _dp_facts(res: SolveResult) -> dict:
    return {"method": "dp", "dp_status": res.status, "dp_objective": res.objective, "dp_runtime": res.runtime}


def _bound_if_midpoints(binarization: str, form, rel: Relaxation, value: float, details: dict, why_not: str):
    """(bound thunk, "") for a minimising DP over every midpoint; (None, ``why_not``) over quantile thresholds,
    a subset of the model's splits, whose optimum bounds nothing."""
    if binarization == "midpoints":
        return _make_bound(form, rel, value, 1, details), ""
    return None, why_not


def _make_bound(form, rel: Relaxation, value: float, sense: int, details: dict):
    """A thunk making the :class:`ObjectiveBound` (and its record of the model) when :func:`dp_for_formulation`
    is asked for it."""
    return lambda: _bound_now(form, rel, value, sense, details)


def _bound_now(form, rel: Relaxation, value: float, sense: int, details: dict) -> ObjectiveBound:
    """The bound on ``form`` (the object :func:`~opttrees.solvers.solve` checks it against); everything it
    reads of the model comes from the relaxation ``rel``."""
    def check(_form):
        try:
            return rel.solution_objective()
        except (VerificationError, InputError) as exc:
            return None, str(exc)

    record = _record_model(rel.model)

    def check_model(_form):
        return _intact(rel.model, rel) or _unchanged(rel.model, record)

    return ObjectiveBound(value=float(value), sense=sense, provenance="dp-bound", formulation=form,
                          objective_expr=rel.model.objective_expr.expr, verify=check, details=dict(details),
                          check_model=check_model)


def _active_rows(m) -> list:
    return list(m.component_data_objects(pyo.Constraint, active=True, descend_into=True))


def _record_model(m) -> tuple[list, list]:
    """Every active row (with its expression object) and every variable's domain, bounds and fixing, now."""
    rows = [(c, c.expr) for c in _active_rows(m)]
    cols = [(v, v.is_integer(), v.lb, v.ub, v.fixed, v.value if v.fixed else None)
            for v in m.component_data_objects(pyo.Var, descend_into=True)]
    return rows, cols


def _intact(m, rel: Relaxation) -> str:
    """Why the model lost a row or an integrality of the formulation (checked without a record), or ""."""
    active = {id(c) for c in _active_rows(m)}
    for c in m.component_data_objects(pyo.Constraint, active=None, descend_into=pyo.Block):
        if id(c) not in active and c.parent_component().name not in rel.inactive_by_design:
            return f"the formulation's row {c.name} is not active"
    for name in rel.integer_components:
        comp = m.find_component(name)
        if comp is None:
            return f"the formulation's variable {name} is gone"
        if any(not v.is_integer() for v in comp.values()):
            return f"the formulation's integer variable {name} was relaxed"
    return ""


def _unchanged(m, record) -> str:
    """Why the model is no longer a restriction of the recorded one (a row gone or edited, a domain widened), or ""."""
    rows, cols = record
    active = {id(c) for c in _active_rows(m)}
    for c, expr in rows:
        if id(c) not in active or c.parent_block() is None or c.expr is not expr:
            return f"row {c.name} was deactivated, deleted or edited since the bound was made"
    inf = math.inf
    for v, integer, lb, ub, fixed, val in cols:
        if v.parent_block() is None:
            return f"variable {v.name} was deleted since the bound was made"
        if (integer and not v.is_integer()) or (fixed and (not v.fixed or v.value != val)) \
                or (-inf if v.lb is None else v.lb) < (-inf if lb is None else lb) \
                or (inf if v.ub is None else v.ub) > (inf if ub is None else ub):
            return f"variable {v.name} was relaxed (domain, bounds or fixing) since the bound was made"
    return ""
