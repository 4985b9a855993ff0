"""Prescriptive trees as estimators: OptimalPrescriptiveTree (thesis ch. 6, OPT / OPT-L) and PolicyTree (STreeD's
policy trees from teacher scores).

Both learn from observational data ``(X, treatment, outcome)``: ``fit(X, treatment, outcome)``,
``predict(X)`` gives the prescribed treatment (a label of ``classes_``), ``predict_outcomes(X)`` the estimated
outcome of every treatment (columns in ``classes_`` order). ``sense`` says whether smaller (``"min"``, the
thesis's convention) or larger (``"max"``) outcomes are better. The objective and how its two terms are scaled
are documented in :mod:`opttrees.prescriptive.objective`.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..prescriptive.dp import PRESCRIPTIVE_MAX_DEPTH, solve_dp_prescriptive
from ..errors import InputError
from ..params import NONE, SHARED_RULES, Interval, Method, Needs, Options, Satisfies, methods
from ..prescriptive import teacher as tch
from ..data.prescriptive import as_vector, check_n_treatment, check_outcome, prepare_prescriptive, split_target
from ..prescriptive.objective import (KIND_LINEAR, KIND_OPT, KIND_POLICY, fill_payload, leaf_costs, make_problem,
                                      node_statistics, outcomes, tree_objective)
from ..prescriptive.search import greedy_prescriptive, local_search_prescriptive
from .base import OptTreesEstimator, SolverMixin, store_params
from .common import TreeAttributesMixin, check_X_fitted, root_leaf
from .fitcontrol import warn_time_limit
from .pipeline import MIO
from .skeleton import Fit

#: deepest tree method='mio' builds (the structure block has n * 2^depth binaries)
MIO_MAX_DEPTH = 3

_LIST_LIKE = Satisfies(lambda v: not isinstance(v, (str, bytes)) and len(list(v)) >= 2,
                       "a list of at least two treatment labels")
_MODEL = Satisfies(lambda v: hasattr(v, "fit"), "a scikit-learn estimator")

COMMON_RULES = {
    "sense": [Options("min", "max")],
    "treatments": [_LIST_LIKE, NONE],
    "max_cuts": [Options("auto"), Interval("int", 1), NONE],
    "binarization": [Options("quantile", "midpoints")],
    "n_thresholds": [Interval("int", 1)],
}


#: the dynamic program searches up to this depth
DP_DEPTH = Needs("max_depth", (Interval("int", 0, PRESCRIPTIVE_MAX_DEPTH),), f"the dynamic program searches trees of "
                 f"depth <= {PRESCRIPTIVE_MAX_DEPTH}; use method='local-search'")
#: OPT-L's linear counterfactuals are fitted by the heuristics only
CONSTANT_COUNTERFACTUALS = Needs("counterfactuals", (Options("constant"),), "counterfactuals='linear' (OPT-L) is "
                                 "fitted by method='local-search' or 'greedy'; this method solves constant ones")

class _PrescriptiveTreeBase(TreeAttributesMixin, OptTreesEstimator):
    """predict / predict_outcomes / score (and :class:`~opttrees.estimators.common.TreeAttributesMixin`) for
    estimators whose model is one prescription Tree."""

    #: the rule of ``n_treatment`` in :func:`~opttrees.data.prescriptive.prepare_prescriptive` (None: none)
    _n_treatment_rule: int | None = None

    def fit(self, X, treatment, outcome=None):
        """Fit on features X, observed treatments and outcomes (or one two-column target [treatment, outcome])."""
        return self._fit(X, treatment, outcome)

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    def _prepare(self, X, treatment, outcome=None, **fit_args) -> Fit:
        treatment, outcome = split_target(treatment, outcome)
        data = prepare_prescriptive(X, treatment, outcome, self.sense, self.treatments, self.min_samples_leaf,
                                    self._n_treatment_rule)
        alpha = float(self.alpha)
        fit = Fit(data, display=data.X, classes=np.asarray(data.classes, dtype=object if any(
                      isinstance(c, str) for c in data.classes) else None), notes=fit_args)
        fit.score = lambda t: tree_objective(t, fit.problem, alpha)
        fit.leaf = lambda t: fill_payload(root_leaf(t), fit.problem)
        fit.refit = lambda t: fill_payload(t, fit.problem)
        # importances: the decrease of the objective's loss (each node's leaf cost, before normalisation)
        fit.stats = lambda t: dict(X=data.X, node_loss=leaf_costs(fit.problem, node_statistics(t, fit.problem)[0])[0])
        return fit

    def _local_search(self, fit, verbose=False):
        with fit.ctl.stage("local_search"):
            return local_search_prescriptive(fit.problem, self.max_depth, float(self.alpha), self.n_restarts,
                                             self.random_state, self.n_jobs, self.max_cuts, time_limit=fit.ctl.time(),
                                             verbose=verbose)

    def _fit_local_search(self, fit):
        res = self._local_search(fit, self.verbose)
        if res.stopped:
            fit.ctl.mark_cut_short("local search")
        warn_time_limit(self, fit.ctl, "the local search (best of the restarts completed)")
        return res.tree

    def _fit_greedy(self, fit):
        with fit.ctl.stage("greedy"):
            return greedy_prescriptive(fit.problem, self.max_depth, float(self.alpha), self.max_cuts)

    def _fit_dp(self, fit):
        with fit.ctl.stage("dp"):
            tree, self.solve_result_ = solve_dp_prescriptive(fit.problem, self.max_depth, float(self.alpha),
                                                             self.binarization, self.n_thresholds,
                                                             time_limit=fit.ctl.time(), verbose=self.verbose)
        if self.solve_result_.status in ("time_limit", "interrupted"):
            fit.ctl.mark_cut_short("dp")
        warn_time_limit(self, fit.ctl, "the dynamic program (best depth finished)")
        return tree

    def predict(self, X):
        """The prescribed treatment of every row (labels of ``classes_``)."""
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)))

    def predict_outcomes(self, X):
        """(n, n_treatments) estimated outcome of every treatment (columns in ``classes_`` order), in outcome units."""
        check_is_fitted(self, "tree_")
        return outcomes(self.tree_, check_X_fitted(self, X))

    def policy_value(self, X, treatment, outcome=None):
        """Estimated mean outcome of following the tree on (X, treatment, outcome), the thesis's (6.1) / n: the
        observed outcome where the prescription equals the observed treatment, the tree's estimate elsewhere."""
        check_is_fitted(self, "tree_")
        treatment, outcome = split_target(treatment, outcome)
        Xa = check_X_fitted(self, X)
        n = len(Xa)
        t = as_vector(treatment, n, "treatment")
        y = check_outcome(outcome, n)
        known = np.isin(t, self.classes_)
        if not known.all():
            raise InputError(f"treatment contains {t[~known][0]!r}, which is not one of the fitted treatments "
                             f"{list(self.classes_)}")
        code = self.tree_.label[self.tree_.apply(Xa)]
        est = outcomes(self.tree_, Xa)[np.arange(n), code]
        same = t == np.asarray(self.classes_)[code]
        return float(np.where(same, y, est).mean())

    def score(self, X, treatment, outcome=None):
        """The estimated policy value (:meth:`policy_value`), signed so that larger is better (negated when
        ``sense="min"``): what ``GridSearchCV`` and the spec reports maximise."""
        v = self.policy_value(X, treatment, outcome)
        return -v if self.sense == "min" else v


class OptimalPrescriptiveTree(SolverMixin, _PrescriptiveTreeBase):
    """Optimal Prescriptive Tree (Dunn's thesis ch. 6): OPT(mu) with constant or lasso (OPT-L) counterfactuals.

    Minimises mu * (prescription error) + (1 - mu) * (prediction error) + alpha * splits, each term scaled as
    documented in :mod:`opttrees.prescriptive.objective` (prescription: mean standardised outcome under the
    policy; prediction: squared error of the observed arm / L̂). Each leaf prescribes the eligible treatment with
    the best estimated total outcome; a treatment is eligible in a leaf when it has at least ``n_treatment`` rows
    there.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth (local search / greedy: at most 10; ``method="dp"``: at most 4).
    min_samples_leaf : int, default=1
        Minimum number of training rows in every leaf.
    alpha : float, default=0.0
        Penalty per split on the normalised objective's scale.
    mu : float, default=0.5
        Prescription factor in [0, 1]: 1 is Kallus's personalisation objective, 0 pure prediction; the thesis
        uses 0.5.
    n_treatment : int, default=1
        A leaf may prescribe a treatment only if at least this many of its rows received it; a leaf where no
        treatment qualifies is infeasible.
    counterfactuals : {"constant", "linear"}, default="constant"
        Leaf estimates of each treatment's outcome: the mean (OPT, (6.4)) or a lasso on the features (OPT-L,
        (6.6)-(6.9); local search and greedy only).
    lasso_lambda : float, default=0.01
        OPT-L's lasso weight on the normalised scale (per leaf and treatment, glmnet's λ = lasso_lambda * L̂ /
        (2 * rows), features scaled to [0, 1]).
    method : {"local-search", "greedy", "dp", "mio"}, default="local-search"
        Dunn's local search with ``n_restarts`` restarts; the greedy tree (with mu=1: Kallus's personalisation
        tree); the exact tree over a binarisation of the features by dynamic programming (constant
        counterfactuals; ``binarization="midpoints"`` searches the same splits as the local search); or the MIO
        of :mod:`opttrees.prescriptive.mio` on SCIP (our design, not the thesis's; constant counterfactuals, tiny
        data only), warm-started from the local search and stopped by ``time_limit``.
    sense : {"min", "max"}, default="min"
        Whether smaller or larger outcomes are better.
    treatments : list or None, default=None
        The treatments, in the order of ``classes_`` (None: the sorted distinct values of ``treatment``). Every
        listed treatment must occur in the data.
    n_restarts : int, default=100
        Local-search restarts.
    max_cuts : "auto", int or None, default="auto"
        Cut positions the local search evaluates per feature at each node visit (at rank quantiles): None every
        distinct cut (the thesis), "auto" every cut for constant leaves and 24 for OPT-L.
    binarization : {"quantile", "midpoints"}, default="quantile"
        Candidate splits of ``method="dp"``.
    n_thresholds : int, default=10
        Thresholds per feature for ``binarization="quantile"``.
    solver : {"scip"}, default="scip"
        The MIO solver (``method="mio"``): the model has a quadratic objective with integers, which HiGHS cannot
        solve, so only SCIP is accepted.
    mip_gap : float, default=1e-6
        Relative gap at which SCIP stops (``method="mio"``).
    random_state : int, RandomState instance or None, default=0
        Seeds the local search.
    n_jobs : int or None, default=1
        Threads for the restarts (-1: all cores).
    verbose : bool or int, default=False
        Print the objective and tree size after fitting.
    time_limit : float or None, default=None
        Seconds for the whole fit; the best tree so far is kept when it runs out (or on Ctrl-C).

    Attributes
    ----------
    tree_ : Tree
        The fitted tree (task "prescription": leaf labels index ``classes_``, ``value`` holds each treatment's
        estimated mean outcome, OPT-L leaves keep their models in ``extras["outcome_coef"]``).
    classes_ : ndarray
        The treatments.
    objective_ : float
        The tree's normalised objective on the training data.
    solve_result_ : SolveResult or None
        The dynamic program's or SCIP's result (``method="dp"`` / ``"mio"``).
    fit_status_, fit_timings_ : str, dict
        As for every opttrees estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from opttrees.estimators.prescriptive import OptimalPrescriptiveTree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> t = rng.integers(0, 2, 200)
    >>> y = np.where(t == (X[:, 0] > 0), 0.0, 1.0) + 0.1 * rng.normal(size=200)
    >>> opt = OptimalPrescriptiveTree(max_depth=1, n_restarts=5, random_state=0).fit(X, t, y)
    >>> opt.predict([[-0.5, 0.0], [0.5, 0.0]]).tolist()
    [0, 1]
    """

    _parameter_rules = {
        "mu": [Interval("real", 0, 1)],
        "n_treatment": [Interval("int", 1)],
        "counterfactuals": [Options("constant", "linear")],
        "lasso_lambda": [Interval("real", 0, closed="left")],
        "method": [Options("local-search", "greedy", "dp", "mio")],
        "solver": SHARED_RULES["solver"],
        "mip_gap": SHARED_RULES["mip_gap"],
        **COMMON_RULES,
    }

    _methods = methods(
        Method("mio", (CONSTANT_COUNTERFACTUALS, Needs("solver", (Options("scip", "auto", ignore_case=True),),
                                                       "the OPT MIO's objective is quadratic with integer variables, "
                                                       "which HiGHS does not support; use solver='scip'"),
                       Needs("max_depth", (Interval("int", 0, MIO_MAX_DEPTH),), f"the OPT MIO has n * 2^depth "
                             f"binaries; above depth {MIO_MAX_DEPTH} use method='dp' or 'local-search'"))),
        Method("dp", (CONSTANT_COUNTERFACTUALS, DP_DEPTH)),
    )

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, mu=0.5, n_treatment=1,
                 counterfactuals="constant", lasso_lambda=0.01, method="local-search", sense="min", treatments=None,
                 n_restarts=100, max_cuts="auto", binarization="quantile", n_thresholds=10, solver="scip",
                 mip_gap=1e-6, random_state=0, n_jobs=1, verbose=False, time_limit=None):
        store_params(self, locals())

    @property
    def _n_treatment_rule(self) -> int:   # type: ignore[override]
        return self.n_treatment

    def _auto_solver(self) -> tuple[str, str]:
        return "scip", "the OPT MIO's objective is quadratic with integer variables: SCIP"

    def _problem(self, fit):
        with fit.ctl.stage("prepare"):
            fit.report = "OptimalPrescriptiveTree"
            return make_problem(fit.data, KIND_LINEAR if self.counterfactuals == "linear" else KIND_OPT, self.mu,
                                self.n_treatment, self.min_samples_leaf, self.lasso_lambda)

    def _fit_mio(self, fit):
        """The OPT MIO from the local search's tree (with the whole time left), for the time that is left; the start
        when the solver finds no better tree (or is stopped before it starts)."""
        from ..prescriptive.mio import OPTFormulation

        job = MIO(partial(OPTFormulation, fit.problem, self.max_depth, float(self.alpha)), fit.score,
                  sources={"local-search": lambda plan: self._local_search(fit).tree})
        out = self._run_mio(fit.ctl, job, warm_start="local-search")
        warn_time_limit(self, fit.ctl, "the MIO (best tree found)")
        return out.tree


class PolicyTree(_PrescriptiveTreeBase):
    """Policy tree from teacher scores (the STreeD paper's prescriptive domain): the tree whose prescriptions have
    the best summed score, exact by dynamic programming or by local search.

    Scores (:mod:`opttrees.prescriptive.teacher`): direct method, inverse propensity weighting or doubly robust,
    from cross-fitted scikit-learn models (or user-supplied ``propensity`` / ``outcome_estimates`` at ``fit``).
    Objective: the mean standardised score of the prescribed treatments + alpha * splits.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth (``method="dp"``: at most 4; the heuristics: at most 10).
    min_samples_leaf : int, default=1
        Minimum number of training rows in every leaf.
    alpha : float, default=0.0
        Penalty per split on the normalised objective's scale.
    teacher : {"dr", "dm", "ipw"}, default="dr"
        How the per-row, per-treatment scores are made.
    outcome_model : regressor or None, default=None
        One clone per treatment predicts the outcome (DM, DR); None: a random forest (100 trees,
        min_samples_leaf=5).
    propensity_model : classifier or None, default=None
        Predicts the treatment (IPW, DR); None: logistic regression.
    n_folds : int, default=5
        Cross-fitting folds for both models (1: fit and predict in-sample).
    propensity_clip : float, default=0.01
        Estimated propensities are clipped to [clip, 1 - clip].
    n_treatment : int, default=0
        A leaf may prescribe a treatment only if at least this many of its rows received it (0: no rule, as in
        STreeD).
    method : {"dp", "local-search", "greedy"}, default="dp"
        Exact over a binarisation (``binarization``, ``n_thresholds``), Dunn's local search with ``n_restarts``
        restarts over every midpoint, or the greedy tree.
    sense : {"min", "max"}, default="min"
        Whether smaller or larger outcomes are better.
    treatments : list or None, default=None
        The treatments, in the order of ``classes_`` (None: the sorted distinct values of ``treatment``).
    max_cuts : "auto", int or None, default="auto"
        Cut positions the local search evaluates per feature at each node visit (None / "auto": every cut).
    n_restarts, binarization, n_thresholds, n_jobs, verbose
        As for :class:`OptimalPrescriptiveTree`.
    random_state : int, RandomState instance or None, default=0
        Seeds the cross-fitting folds, the default outcome model and the local search.
    time_limit : float or None, default=None
        Seconds for the whole fit (teacher models included); the best tree so far is kept when it runs out.

    Attributes
    ----------
    teacher_scores_ : ndarray of shape (n_samples, n_treatments)
        The training scores, in outcome units.
    tree_ : Tree
        The fitted tree; ``tree_.value`` holds each treatment's mean score per node.
    objective_ : float
        The tree's normalised objective (mean standardised score + alpha * splits).
    classes_, solve_result_, fit_status_, fit_timings_
        As for :class:`OptimalPrescriptiveTree` (``solve_result_``: the dynamic program's, ``method="dp"``).

    Examples
    --------
    Treatment 1 is better (a lower outcome) exactly where the first feature is positive:

    >>> import numpy as np
    >>> from opttrees.estimators.prescriptive import PolicyTree
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(300, 2))
    >>> t = np.arange(300) % 2
    >>> y = np.where(t == (X[:, 0] > 0), 0.0, 1.0)
    >>> PolicyTree(max_depth=1, teacher="ipw").fit(X, t, y, propensity=np.full(300, 0.5)).predict([[-0.5, 0], [0.5, 0]])
    array([0, 1])
    """

    _parameter_rules = {
        "teacher": [Options(*tch.TEACHERS)],
        "outcome_model": [_MODEL, NONE],
        "propensity_model": [_MODEL, NONE],
        "n_folds": [Interval("int", 1)],
        "propensity_clip": [Interval("real", 0, 0.5, closed="left")],
        "n_treatment": [Interval("int", 0)],
        "method": [Options("dp", "local-search", "greedy")],
        **COMMON_RULES,
    }

    _methods = methods(Method("dp", (DP_DEPTH,)))

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, teacher="dr", outcome_model=None,
                 propensity_model=None, n_folds=5, propensity_clip=0.01, n_treatment=0, method="dp", sense="min",
                 treatments=None, n_restarts=100, max_cuts="auto", binarization="quantile", n_thresholds=10,
                 random_state=0, n_jobs=1, verbose=False, time_limit=None):
        store_params(self, locals())

    def fit(self, X, treatment, outcome=None, propensity=None, outcome_estimates=None):
        """Fit on (X, treatment, outcome). ``propensity``: known P(observed treatment | x) per row (or an (n, m)
        matrix), used instead of the propensity model; ``outcome_estimates``: an (n, m) matrix of outcome
        predictions per treatment, used instead of the outcome model."""
        return self._fit(X, treatment, outcome, propensity=propensity, outcome_estimates=outcome_estimates)

    def _problem(self, fit):
        data, ctl = fit.data, fit.ctl
        propensity, outcome_estimates = fit.notes["propensity"], fit.notes["outcome_estimates"]
        with ctl.stage("prepare"):
            fit.report = f"PolicyTree ({self.teacher})"
            check_n_treatment(self.n_treatment, data.counts(), data.classes, allow_zero=True)
            e_obs = None if propensity is None else tch.check_propensity(propensity, data.treatment, data.m)
            mu_hat = None if outcome_estimates is None else tch.check_outcome_estimates(
                outcome_estimates, data.n, data.m, data.sense)
        with ctl.stage("teacher"):
            if self.teacher in ("dm", "dr") and mu_hat is None:
                mu_hat = tch.cross_fit_outcomes(data.X, data.treatment, data.y, data.m, self.outcome_model,
                                                self.n_folds, self.random_state)
            if self.teacher in ("ipw", "dr") and e_obs is None:
                e_obs = tch.cross_fit_propensity(data.X, data.treatment, data.m, self.propensity_model,
                                                 self.n_folds, self.random_state, self.propensity_clip)
            gamma = tch.teacher_scores(self.teacher, data.treatment, data.y, data.m, mu_hat, e_obs)
        self.teacher_scores_ = data.to_user(gamma)
        return make_problem(data, KIND_POLICY, 1.0, self.n_treatment, self.min_samples_leaf, gamma=gamma)
