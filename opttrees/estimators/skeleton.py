"""The one ``fit`` of every estimator: a template that validates, prepares the data once, binds the side
constraints, dispatches on ``method`` to one hook per method and runs the shared epilogue.

An estimator declares; it does not orchestrate. It writes:

- ``_prepare(X, *target, **fit_args) -> Fit``: the data (validated, encoded, scaled: once), the leaf-cost problem
  every method shares, and how the fitted tree is judged, refit and reported (the :class:`Fit` fields);
- one ``_fit_<method>(fit) -> Tree`` per value of ``method`` ("local-search" -> ``_fit_local_search``; an estimator
  without a ``method`` parameter writes ``_fit_mio``); the MIO hooks describe an ``MIO(...)`` job for
  ``self._run_mio`` (:mod:`opttrees.estimators.pipeline`);
- where it honours ``constraints``: ``_honours(fit) -> (can, why)`` (and ``_context(fit, cons)`` when its repairs
  are scored otherwise than by the shared objective).

:func:`run_fit` does the rest, in this order: the parameter rules and the method table (``_check_params``,
``_check_method``), ``solve_result_ = None``, one deadline and Ctrl-C (:func:`~opttrees.estimators.fitcontrol.
controlled_fit`), category columns one-hot encoded (:func:`~opttrees.estimators.common.encode_categories`),
``_prepare`` and the constraints bound (stage "prepare"), the method's hook, then the epilogue: tidying and the
single-leaf check (:func:`~opttrees.estimators.common.finish_fit`), ``tree_``, ``classes_``, ``n_features_in_``,
``feature_names_in_`` (scikit-learn's rule: a DataFrame with string column names), ``objective_``, the
constraints' check (``constraint_values_``), the tree in the user's units, display bounds, node statistics and
feature importances, ``fit_status_`` / ``fit_timings_``, and the verbose closing line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..constraints.checks import check_constraints
from ..tree import Tree
from .common import encode_categories, feature_names_in, finish_fit, record_display_bounds, record_node_stats
from ..constraints.binding import ConstraintContext, bind, own_objective, verify
from .fitcontrol import FitControl, controlled_fit


@dataclass
class Fit:
    """One fit's prepared state, made once by the estimator's ``_prepare`` and read by every method hook and the
    epilogue.

    ``data``: the prepared data (``X``, ``p``; a classifier's ``codec``). ``problem``: the leaf-cost problem the
    methods and the tidying share (built once). The epilogue's declarations: ``score`` (lower is better with
    ``sense`` 1) judges tidying and the single leaf ``leaf(tree)``, and gives ``objective_`` unless ``objective``
    is False; ``refit`` (tidying's payload refit), ``classes`` (``classes_``), ``display`` (what display bounds
    read; default ``data``; tidying reads ``data.X``, the features the tree splits), ``to_user`` (the tree in the
    caller's units), ``stats(tree)`` (:func:`record_node_stats`'s arguments, from the tree before
    ``to_user``) and ``report`` (the verbose closing line's label). Method hooks may set any of them (a flow
    fit's score is its built model's).
    """

    data: Any
    problem: Any = None
    score: Callable[[Tree], float] | None = None
    sense: int = 1
    leaf: Callable[[Tree], Tree] | None = None
    refit: Callable[[Tree], Tree] | None = None
    objective: bool = True
    classes: Any = None
    display: Any = None
    to_user: Callable[[Tree], Tree] | None = None
    stats: Callable[[Tree], dict] | None = None
    report: str | None = None
    #: set by the template: the fit control, the caller's X after category encoding, the encoding, the bound
    #: constraints (None without)
    ctl: FitControl = None  # type: ignore[assignment]
    X: Any = None
    encoding: Any = None
    ctx: ConstraintContext | None = None
    #: what the hooks pass on (e.g. the policy tree's fit arguments ``propensity`` and ``outcome_estimates``)
    notes: dict = field(default_factory=dict)


def run_fit(est, X, target: tuple, fit_args: dict):
    """The template ``fit`` of ``est`` (see the module docstring); returns ``est``."""
    est._check_params()
    est._check_method()
    method = getattr(est, "method", "mio")
    hook = getattr(est, "_fit_" + str(method).replace("-", "_"))
    est.solve_result_ = None
    with controlled_fit(est, None if method in est._untimed_methods else est._time_limit()) as ctl:
        with ctl.stage(est._prepare_stage):
            X, encoding = encode_categories(X)
            fit = est._prepare(X, *target, **fit_args)
            fit.ctl, fit.X, fit.encoding = ctl, X, encoding
            ctl.reserve_epilogue(fit.data.n if hasattr(fit.data, "n") else len(X))
            fit.ctx = bind_constraints(est, fit)
        if hasattr(est, "_problem"):     # a problem with stages of its own (the policy tree's teacher models)
            fit.problem = est._problem(fit)
        tree = hook(fit)
        epilogue(est, fit, tree)
    if fit.report and getattr(est, "verbose", False):
        from ..progress import fmt

        print(f"{fit.report}: objective {fmt(est.objective_)}, depth {est.tree_.depth}, {est.tree_.n_splits} splits")
    return est


def bind_constraints(est, fit: Fit) -> ConstraintContext | None:
    """The estimator's ``constraints`` bound to the prepared data (an InputError naming the methods that honour
    them when its settings cannot): the context every method hook and the epilogue read, or None."""
    if "constraints" not in est.get_params(deep=False):
        return None
    can, why = est._honours(fit) if hasattr(est, "_honours") else (True, "")
    cons = bind(est, fit.data, can, why)
    if not cons:
        return None
    if hasattr(est, "_context"):
        return est._context(fit, cons)
    from ..heuristics.core import refit_leaves

    problem = fit.problem
    ctx = ConstraintContext(est, cons, fit.data, lambda tree: refit_leaves(tree, problem),
                            own_objective(problem, float(est.alpha)))
    fit.score = ctx.score   # a constrained tree's leaves keep their own labels or values (need not be the best)
    return ctx


def classification_fit(est, X, y, sample_weight=None) -> Fit:
    """The :class:`Fit` of a classification tree (``_prepare`` of OptimalTreeClassifier and of a new MIO
    classifier): the prepared data (labels encoded, min-max scaling, weights), the misclassification problem built
    once, the normalised objective (errors / baseline + alpha * splits) judging tidying against the majority-class
    leaf, ``classes_`` and the gini node statistics."""
    from ..data.prepared import prepare
    from ..heuristics.core import make_problem, objective, refit_leaves
    from .common import root_leaf

    data = prepare(X, y, "classification", sample_weight, est.min_samples_leaf)
    assert data.codec is not None   # classification data: its labels' codec
    prob, alpha = make_problem(data), float(est.alpha)   # built once: presorted orders take seconds at 1e5 rows
    return Fit(data, prob, score=lambda t: objective(t, prob, alpha), leaf=lambda t: refit_leaves(root_leaf(t), prob),
               classes=np.asarray(data.codec.classes),
               stats=lambda t: dict(X=data.X, y=data.y, sample_weight=data.sample_weight, criterion="gini",
                                    n_classes=data.n_classes))


def flow_fit(data, model_data) -> Fit:
    """The :class:`~opttrees.estimators.skeleton.Fit` of the flow family (FlowOCT, BendersOCT, RobustOCT): the
    model's data as the problem, the majority-class leaf, no ``objective_``; the built model's own objective
    (maximised) judges the tidied tree (:func:`model_tree`), and without a built model (stopped before it) only the
    splits that change no training prediction are tidied."""
    from ..heuristics.core import leaf_problem, refit_leaves
    from .common import root_leaf

    def leaf(tree):
        one = refit_leaves(root_leaf(tree), leaf_problem(data))
        one.classes = list(data.codec.classes)
        return one
    return Fit(data, model_data, leaf=leaf, objective=False, classes=data.codec.classes,
               stats=lambda t: dict(X=data.X, y=data.y, sample_weight=data.sample_weight, criterion="gini",
                                    n_classes=data.n_classes))


def model_tree(est, fit, out):
    """The MIO outcome's tree, with ``formulation_`` set and the built model's objective judging the epilogue."""
    est.formulation_ = out.form
    if out.form is not None:
        fit.score, fit.sense = out.form.tree_objective, int(out.form.sense)
    return out.tree


def prescription_fit(data, alpha: float, notes: dict) -> Fit:
    """The :class:`Fit` of a prescription tree (OptimalPrescriptiveTree, PolicyTree) on its prepared data
    (:class:`~opttrees.data.prescriptive.PrescriptiveData`): the problem is built after (``_problem``: the
    teacher models have a stage of their own), and judges every tree: the normalised objective + alpha * splits,
    the single leaf and tidying's refit with the problem's payload, ``classes_`` the treatments (object dtype when
    any is a string), importances from the decrease of the objective's loss (each node's leaf cost, before
    normalisation). ``notes``: the fit arguments the problem needs (``propensity``, ``outcome_estimates``)."""
    from ..prescriptive.objective import fill_payload, leaf_costs, node_statistics, tree_objective
    from .common import root_leaf

    fit = Fit(data, display=data.X, classes=np.asarray(data.classes, dtype=object if any(
        isinstance(c, str) for c in data.classes) else None), notes=notes)
    fit.score = lambda t: tree_objective(t, fit.problem, alpha)
    fit.leaf = lambda t: fill_payload(root_leaf(t), fit.problem)
    fit.refit = lambda t: fill_payload(t, fit.problem)
    fit.stats = lambda t: dict(X=data.X, node_loss=leaf_costs(fit.problem, node_statistics(t, fit.problem)[0])[0])
    return fit


def dp_solvable_constraints(est) -> bool:
    """Whether the DP solves every one of ``est.constraints`` (group fairness, feature budgets)."""
    from ..constraints.dp_routes import dp_solvable

    return dp_solvable(check_constraints(est.constraints))


def epilogue(est, fit: Fit, tree: Tree) -> None:
    """What every fit ends with (see the module docstring), on the tree the method's hook returned."""
    ctx, score = fit.ctx, fit.score
    if ctx is not None and score is not None:   # no tidying step or single leaf may break a constraint
        score = ctx.guard(score, fit.sense)
    leaf = fit.leaf(tree) if fit.leaf is not None and tree is not None else None
    tree = finish_fit(est, tree, fit.data.X, score, fit.sense, leaf=leaf, refit=fit.refit, encoding=fit.encoding)
    est.tree_ = tree
    if fit.classes is not None:
        est.classes_ = fit.classes
    est.n_features_in_ = fit.data.p
    names = feature_names_in(fit.X)     # scikit-learn's rule: only for a DataFrame with string column names
    if names is not None:
        est.feature_names_in_ = np.asarray(names, dtype=object)
    if fit.objective and fit.score is not None:
        est.objective_ = fit.score(tree)
    if "constraints" in est.get_params(deep=False):
        verify(est, tree, ctx)
    if fit.to_user is not None:
        est.tree_ = fit.to_user(tree)
    record_display_bounds(est, fit.data if fit.display is None else fit.display)
    record_node_stats(est, **(fit.stats(tree) if fit.stats is not None else {}))


class TableMethods:
    """The method hooks the classification and regression trees share on a prepared table: Dunn's local search
    (``loss``: the regressor's; None for classification) and the dynamic program (:func:`~.dp_fit.fit_dp`)."""

    #: what the time-limit warning of a constrained DP names (None: none)
    _constrained_dp_warning: str | None = None

    def _local_search(self, fit: Fit, share: float = 1.0):
        est: Any = self
        if getattr(est, "cluster", None) == "dask":    # the restarts on the process's Dask Client: the same tree
            from ..cluster import current_client
            from ..heuristics.cluster import local_search_cluster

            return fit.ctl.search("local_search", local_search_cluster, current_client(type(est).__name__), fit.data,
                                  est.max_depth, float(est.alpha), est.min_samples_leaf, est.n_restarts,
                                  est.split_type, est.random_state, est.n_hyperplane_restarts,
                                  getattr(est, "loss", None), share=share, mark="local search")
        from ..heuristics import local_search

        return fit.ctl.search("local_search", local_search, fit.data, est.max_depth, float(est.alpha),
                              est.min_samples_leaf, est.n_restarts, est.split_type, est.random_state, est.n_jobs,
                              est.n_hyperplane_restarts, getattr(est, "loss", None), share=share, mark="local search",
                              verbose=est.verbose)

    def _fit_local_search(self, fit: Fit):
        from .fitcontrol import warn_time_limit

        tree = self._local_search(fit)
        warn_time_limit(self, fit.ctl, "the local search (best of the restarts completed)")
        return tree

    def _fit_dp(self, fit: Fit):
        from .dp_fit import fit_dp

        return fit_dp(self, fit, self._constrained_dp_warning)
