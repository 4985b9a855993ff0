"""``method="dp"`` of the classifier and the regressor: the dynamic program (:mod:`opttrees.dp`) on the prepared
data under the fit's deadline and Ctrl-C, with side constraints by the constrained DP.

Shared here (not written once per estimator): the DP's settings (:data:`DP_RULES`) and where they apply
(:data:`DP_USES`), the unconstrained run (:func:`fit_dp_tree`, also the classifier's route and pre-build start),
the constrained run and its one ``max_num_nodes`` error (:func:`fit_dp`).
"""
from __future__ import annotations

from ..constraints.binding import user_labels
from ..constraints.dp_routes import solve_dp_constrained
from ..errors import InputError
from ..params import NONE, Interval, Options, n_workers, uses
from .fitcontrol import warn_time_limit

#: the settings of the dynamic program (``method="dp"``, ``warm_start="dp"``), one rule each
DP_RULES = {
    "cluster": [NONE, Options("dask")],
    "binarization": [Options("auto", "exact", "quantile", "midpoints")],
    "n_thresholds": [Interval("int", 1)],
    "max_num_nodes": [Interval("int", 0), NONE],
}

#: where the DP's settings apply (the spec reads them: :func:`opttrees.params.applies_table`)
DP_USES = (uses("binarization"), uses("n_thresholds"), uses("max_num_nodes"), uses("cluster"))


def fit_dp_tree(est, data, ctl, max_num_nodes=None, share: float = 1.0, stage: str = "dp", binarization=None):
    """The DP's optimal tree over ``est``'s binarisation of ``data`` -> (Tree, SolveResult).

    Misclassification for classification data, squared error for regression data (``data.task``).
    The search gets ``share`` of the time the fit has left (all of it for ``method="dp"``; a start leaves
    the rest to the solver) and stops on Ctrl-C or the deadline with its best tree and a valid bound.
    """
    from ..dp import ClassificationTask, RegressionTask, solve_dp

    task = ClassificationTask() if data.task == "classification" else RegressionTask()
    binarization = binarization or est.binarization
    with ctl.stage(stage):
        if getattr(est, "cluster", None) == "dask" and stage == "dp":
            tree, res = _dp_on_cluster(est, data, ctl, task, max_num_nodes, binarization)
        else:
            # prepare() dropped the rows of weight 0 (one min-leaf rule for every method): every row here counts
            tree, res = solve_dp(data.X, data.y, task=task, max_depth=int(est.max_depth),
                                 max_num_nodes=max_num_nodes, min_samples_leaf=int(est.min_samples_leaf),
                                 alpha=float(est.alpha), sample_weight=data.sample_weight, binarization=binarization,
                                 n_thresholds=int(est.n_thresholds), n_jobs=n_workers(getattr(est, "n_jobs", 1)),
                                 time_limit=ctl.time(share), verbose=bool(est.verbose))
    if res.status != "optimal" and share == 1.0:    # the fit's own answer was cut short (a start is only a start)
        ctl.mark_cut_short(stage)
    tree.feature_names = data.feature_names
    if data.codec is not None:      # the DP saw the label codes 0..K-1: give the tree the user's labels
        tree.classes = list(data.codec.classes)
    return tree, res


def _dp_on_cluster(est, data, ctl, task, max_num_nodes, binarization):
    """``method="dp"`` with ``cluster="dask"``: the continuous search's root features shared out over the
    process's Dask Client (:func:`opttrees.dp.cluster.solve_dp_continuous_cluster`; the same optimum as one process)."""
    from ..cluster import current_client
    from ..dp.cluster import solve_dp_continuous_cluster

    if binarization not in ("auto", "exact"):
        raise InputError(f"cluster='dask' runs the continuous search over every midpoint: binarization must be "
                         f"'auto' or 'exact', not {binarization!r}")
    return solve_dp_continuous_cluster(current_client(type(est).__name__), data.X, data.y, task=task,
                                       max_depth=int(est.max_depth), max_num_nodes=max_num_nodes,
                                       min_samples_leaf=int(est.min_samples_leaf), alpha=float(est.alpha),
                                       sample_weight=data.sample_weight, time_limit=ctl.time())


def fit_dp(est, fit, constrained_warning: str | None = None):
    """``method="dp"`` for a prepared fit (:class:`~opttrees.estimators.skeleton.Fit`): the DP's tree, with
    ``solve_result_`` set. With side constraints, the constrained DP: group fairness by the Pareto DP, feature
    budgets by maximal feature sets (:func:`opttrees.constraints.dp_routes.solve_dp_constrained`); over every midpoint
    (``binarization`` "auto", "exact", "midpoints") its optimum is the constrained optimum.
    ``constrained_warning``: what the time-limit warning of a constrained run names (None: no warning)."""
    data, ctl = fit.data, fit.ctl
    if fit.ctx is None:
        tree, est.solve_result_ = fit_dp_tree(est, data, ctl, est.max_num_nodes)
        warn_time_limit(est, ctl, "the dynamic program (best tree so far, see solve_result_.bound)")
        return tree
    if est.max_num_nodes is not None:
        raise InputError("max_num_nodes cannot be combined with constraints (the constrained DP bounds the depth "
                         "only)")
    regression = data.task == "regression"
    extra = {"regression": True} if regression else {"n_jobs": n_workers(getattr(est, "n_jobs", 1))}
    with ctl.stage("dp"):
        tree, est.solve_result_ = solve_dp_constrained(
            fit.ctx.cons, data.X, data.y if regression else user_labels(data), int(est.max_depth),
            int(est.min_samples_leaf), float(est.alpha), data.sample_weight, ctl.time(), data.feature_names,
            binarization=est.binarization, n_thresholds=int(est.n_thresholds), **extra)
    if est.solve_result_.status != "optimal":
        ctl.mark_cut_short("dp")
    if constrained_warning is not None:
        warn_time_limit(est, ctl, constrained_warning)
    return tree
