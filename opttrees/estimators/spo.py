"""scikit-learn style SPO tree and forest estimators (``fit(X, C)``: features and cost vectors).

``predict(X)`` returns decisions, ``predict_cost(X)`` the predicted cost vectors, ``score`` the negative
normalised regret of the predicted decisions (the paper's normalised extra travel time, negated so that
larger is better, as sklearn expects). With a unique optimum for each predicted cost — the paper's
standing assumption — this is exactly the negative normalised SPO loss.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import NotFittedError

from ..data.prepared import check_sample_weight
from ..errors import InputError
from ..oracles.registry import make_decision_problem
from ..dp.spo import SPO_MAX_DEPTH
from ..params import BOOLEAN, DEPTH, NONE, InstanceOf, Interval, Method, Needs, Options, Satisfies, describe, methods
from ..spo.forest import fit_forest, forest_mean_cost
from ..data.costs import check_costs_fit
from ..spo.greedy import grow_spo_tree
from ..spo.loss import decision_regret, normalized_extra_cost
from ..spo.objective import spot_norm, spot_objective
from ..spo.pruning import prune_alpha, prune_on_validation, prune_zero_gain, refit_nodes
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from .common import TreeAttributesMixin, check_X_fitted, root_leaf
from ..sklearn_export import feature_importances
from .skeleton import Fit


#: the exact methods optimise the SPO loss itself
SPO_CRITERION = Needs("criterion", (Options("spo"),), "this method optimises the SPO loss; use criterion='spo'")

class SPONotFittedError(NotFittedError, InputError):
    """sklearn's NotFittedError that is also an opttrees InputError (either ``except`` catches it)."""


def resolve_max_features(mf, p: int):
    """Number of features tried per node (None = all) from a ``max_features`` that passed its rules."""
    if mf is None:
        return None
    if mf == "sqrt":
        return max(1, int(np.sqrt(p)))
    if mf == "log2":
        return max(1, int(np.log2(p)))
    if isinstance(mf, (int, np.integer)):
        if mf > p:
            raise InputError(f"max_features={mf!r} is above the number of features ({p}): expected "
                             f"{describe(SPOForest.parameter_rules()['max_features'])}")
        return int(mf)
    return max(1, int(mf * p))


#: what ``decision_problem`` accepts (:func:`opttrees.oracles.make_decision_problem` checks the protocol)
DECISION_PROBLEM = Satisfies(lambda v: isinstance(v, (str, dict)) or hasattr(v, "solve"),
                             "a DecisionProblem, a problem name or a {type: ...} mapping")
SPO_SHARED_RULES = {
    "decision_problem": [DECISION_PROBLEM, NONE],
    "max_depth": [DEPTH, NONE],
    "min_samples_leaf": [Interval("real", 0, closed="neither")],
    "criterion": [Options("spo", "mse")],
    "quantile_step": [Interval("real", 0, 1, closed="right"), NONE],
}


class _SPOBase(OptTreesEstimator):
    _parameter_rules = SPO_SHARED_RULES

    def _check_fitted(self):
        if not hasattr(self, "n_features_in_"):
            raise SPONotFittedError(f"This {type(self).__name__} instance is not fitted yet (not fitted); call "
                                    "fit(X, C) before using this estimator.")

    def score(self, X, C, sample_weight=None) -> float:
        """Negative normalised SPO loss (Σ ω regret / Σ ω |z*|) of the predicted decisions."""
        self._check_fitted()
        return -normalized_extra_cost(self.problem_, self.predict(X), C, sample_weight)


def _split_validation(X, C, w, frac, random_state):
    n = X.shape[0]
    n_val = int(np.floor(frac * n))
    if n_val < 1 or n - n_val < 1:
        raise InputError(f"validation_fraction={frac} leaves no validation or no training rows (n={n})")
    perm = np.random.default_rng(random_state).permutation(n)
    va, tr = perm[:n_val], perm[n_val:]
    return (X[tr], C[tr], w[tr]), (X[va], C[va], w[va])


def _cost_factor(C: np.ndarray) -> float:
    """The power of two that brings the largest cost magnitude to about 1 (1.0 for all-zero or tiny ranges)."""
    big = float(np.abs(C).max()) if C.size else 0.0
    if not (np.isfinite(big) and big > 0):
        return 1.0
    return float(2.0 ** -round(math.log2(big)))


def _costs_to_user(tree, g: float):
    """An SPO tree fitted on costs C * f with its cost vectors and regrets in C's units (g = 1 / f); its
    decisions and weights are unchanged."""
    if g == 1.0 or tree is None:
        return tree
    out = copy.copy(tree)
    out.value = np.asarray(tree.value, dtype=np.float64) * g
    out.extras = {k: (np.asarray(v, dtype=np.float64) * g if k in ("train_loss", "train_spo") else v)
                  for k, v in tree.extras.items()}
    return out


@dataclass
class CostData:
    """An SPO fit's prepared data: the training features, costs (scaled by ``factor``) and weights, the feature
    names, and the validation rows (or None)."""

    X: np.ndarray
    C: np.ndarray
    w: np.ndarray
    feature_names: list | None
    val: tuple | None
    factor: float

    @property
    def p(self) -> int:
        return self.X.shape[1]


class SPOTree(TreeAttributesMixin, SolverMixin, _SPOBase):
    """A decision tree trained on the SPO loss (SPOT, Elmachtoub et al.): leaves hold cost vectors whose
    decisions minimise the regret of the decisions they induce.

    Parameters
    ----------
    decision_problem : DecisionProblem, str or dict
        The optimisation problem, e.g. ``GridShortestPath(4, 4)``, or a name / mapping such as
        ``{"type": "news", "seed": 10}`` (:func:`opttrees.oracles.make_decision_problem`). Required, and by
        keyword like every parameter: ``SPOTree(decision_problem=pr, max_depth=2)``.
    max_depth : int or None, default=None
        Maximum depth (None: unrestricted; the MILP needs an int).
    min_samples_leaf : float, default=20
        Minimum total sample weight per leaf.
    method : {"greedy", "mio", "dp"}, default="greedy"
        ``"greedy"``: recursive partitioning; ``"mio"``: the SPOT MILP warm-started by greedy and run as a
        solution improver under ``time_limit`` (never worse than greedy on the training loss); ``"dp"``: the
        exact SPOT-objective tree over a binarisation of the features (``binarization``) by dynamic
        programming (:func:`opttrees.dp.solve_dp_spo`; integer ``max_depth`` up to 4, leaves of at least
        ``ceil(min_samples_leaf)`` rows).
    criterion : {"spo", "mse"}, default="spo"
        SPOT, or the paper's CART baseline on the same engine.
    quantile_step : float in (0, 1] or None, default=0.01
        Candidate thresholds at these quantiles of a node's unique values (None: all values); greedy and
        ``"mio"`` only.
    binarization : {"quantile", "midpoints"}, default="quantile"
        Candidate splits of ``method="dp"`` and ``warm_start="dp"`` (:class:`~opttrees.data.binarizers.Binarizer`):
        at most ``n_thresholds`` midpoints per feature, or every midpoint.
    n_thresholds : int, default=10
        Thresholds per feature for ``binarization="quantile"``.
    prune : bool, default=True
        Prune by cost complexity on validation data (``X_val``/``C_val`` given to fit, or a random
        ``validation_fraction`` of the training rows); without validation data the tree is pruned at
        ``alpha`` (``criterion="mse"``: only splits that do not lower the training loss are removed).
    validation_fraction : float in [0, 1), default=0.0
        Share of the training rows held out for pruning when no validation data is given.
    alpha : float, default=1e-4
        Cost per split in the SPOT objective, on the **normalised** scale:
        F(T) = Σ ω (c·w_T(x) − z*(c)) / Σ ω |z*(c)|  +  alpha · splits(T)
        (training normalised SPO loss, the unit of ``score``; :func:`opttrees.spo.spot_objective`). The MILP
        minimises F, and greedy trees without validation data are pruned to minimise F. The default is a
        small pooling term: a split must lower the training regret by 0.01% of the total optimal cost. The
        paper's code uses α_p = 1e-4 in mean-regret units (``Σy − Σz* + α_p·n·splits``); α_p = alpha ·
        Σω|z*| / Σω, so on its shortest-path data its 1e-4 is alpha ≈ 8e-6 (deg 2) to ≈ 1.4e-7 (deg 10);
        :func:`opttrees.spo.alpha_from_paper` converts.
    solver : {"highs", "scip"}, default="highs"
        MILP solver (``method="mio"``).
    time_limit : float or None, default=60.0
        Seconds for the whole ``method="mio"`` or ``"dp"`` fit (None or ``inf``: no limit); the DP returns
        its best tree so far (the optimum of the deepest depth it completed).
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    warm_start : {"auto", "greedy", "dp"} or None, default="auto"
        ``"auto"``: "dp" (with the DP over every midpoint, which also gives the bound) when that DP is
        predicted to fit half of the time left (the SPO DP calls the oracle for every candidate leaf: about
        4e-7 s x columns^depth x rows), else "greedy"; ``solve_result_.plan`` says which and why. Start of the
        MILP (``method="mio"``): greedy SPOT; or the better (on the MILP's objective) of greedy
        SPOT and the SPO dynamic program's tree over the MILP's features (``binarization``, up to depth 4;
        it may use half of the time left); None: no start. The result is never worse than the start.
    dp_bound : bool or "auto", default="auto"
        ``"auto"``: as ``warm_start``. ``method="mio"``: give the MILP the DP optimum over *every* midpoint of
        its features as an objective
        bound; the fit is proven optimal (``solve_result_.proof == "dp-bound"``) when the MILP's tree reaches
        it. Exact but slow for large n (the SPO DP calls the oracle for every candidate split).
    x_precision : int or None, default=None
        None: the MILP sees the exact features (it routes on each feature's rank scale, so close values need
        no rounding). An integer rounds them to this many decimals on the [0, 1] scale first, as the paper's
        code does (fewer distinct values); a proof is then a proof for the rounded features only, so the
        result is not reported as optimal when rounding merged values.
    random_state : int, numpy Generator or None, default=0
        Seeds the validation split.
    verbose : bool or int, default=False
        Show live solver progress.

    Attributes
    ----------
    tree_ : Tree
        The fitted (pruned) tree; leaves hold mean cost vectors and their decisions.
    problem_ : DecisionProblem
        The decision problem built from ``decision_problem``.
    objective_ : float
        The fitted tree's SPOT objective on the training rows (training normalised SPO loss + alpha * splits).
    unpruned_tree_ : Tree
        The greedy tree before pruning (``method="greedy"``).
    greedy_tree_, solve_result_, mio_info_
        The greedy start, the MILP's SolveResult and details (``method="mio"``; ``solve_result_`` is None for
        greedy, the dynamic program's SolveResult for ``method="dp"``; ``mio_info_["start_source"]`` says
        which tree started the MILP).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_importances_ : ndarray of shape (n_features,)
        The normalised decrease of the training SPO regret at each feature's splits (each node deciding
        ``w*(mean cost)`` as a leaf), as scikit-learn defines importances; ``apply``, ``decision_path``,
        ``get_depth()`` and ``get_n_leaves()`` as in scikit-learn (``to_sklearn()`` refuses: no scikit-learn tree
        holds decisions).

    Examples
    --------
    >>> from opttrees import SPOTree
    >>> from opttrees.experiments.spo_data import shortest_path_data
    >>> D = shortest_path_data(200, deg=2, noise=0.25, grid=(3, 3), n_test=100, seed=0)
    >>> spot = SPOTree(decision_problem=D.problem, max_depth=2, min_samples_leaf=10).fit(D.X, D.C)
    >>> spot.predict(D.X_test).shape == (100, D.problem.n_decisions), -spot.score(D.X_test, D.C_test) < 0.5
    (True, True)
    """

    _parameter_rules = {   # plus SPO_SHARED_RULES and SOLVER_RULES for the others
        "method": [Options("greedy", "mio", "dp")],
        "binarization": [Options("quantile", "midpoints")],
        "n_thresholds": [Interval("int", 1)],
        "prune": [BOOLEAN],
        "validation_fraction": [Interval("real", 0, 1, closed="left")],
        "x_precision": [Interval("int", 0), NONE],
        "warm_start": warm_start_rules("auto", "greedy", "dp"),
        "dp_bound": [BOOLEAN, Options("auto")],
        "random_state": [Interval("int", 0), InstanceOf(np.random.Generator, "a numpy Generator"), NONE],
    }

    _methods = methods(
        Method("mio", (SPO_CRITERION, Needs("max_depth", (DEPTH,), "the MILP has a fixed depth: an integer max_depth"))),
        Method("dp", (SPO_CRITERION, Needs("max_depth", (Interval("int", 0, SPO_MAX_DEPTH),), f"expected an integer "
                      f"in [0, {SPO_MAX_DEPTH}] (the SPO dynamic program searches a fixed depth)"))),
    )

    def __init__(self, *, decision_problem=None, max_depth=None, min_samples_leaf=20, method="greedy",
                 criterion="spo", quantile_step=0.01, binarization="quantile", n_thresholds=10, prune=True,
                 validation_fraction=0.0, alpha=1e-4, solver="highs", time_limit=60.0, mip_gap=1e-6, x_precision=None,
                 warm_start="auto", dp_bound="auto", random_state=0, verbose=False):
        store_params(self, locals())

    def fit(self, X, C, sample_weight=None, X_val=None, C_val=None, sample_weight_val=None):
        """Fit on features X and cost vectors C (Ctrl-C and ``time_limit``: :mod:`opttrees.estimators.fitcontrol`).

        ``method="mio"`` / ``"dp"``: ``time_limit`` covers the whole fit; Ctrl-C returns the best tree so far
        (the greedy start, or the DP's shallower optimum, at worst). ``method="greedy"`` has no partial tree:
        Ctrl-C raises KeyboardInterrupt at once.
        """
        return self._fit(X, C, sample_weight=sample_weight, X_val=X_val, C_val=C_val,
                         sample_weight_val=sample_weight_val)

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    _untimed_methods = ("greedy",)

    def _prepare(self, X, C, sample_weight=None, X_val=None, C_val=None, sample_weight_val=None) -> Fit:
        if self.decision_problem is None:
            raise InputError("SPOTree needs decision_problem=<a DecisionProblem>, e.g. GridShortestPath(4, 4)")
        pr = self.problem_ = make_decision_problem(self.decision_problem)
        names = list(map(str, X.columns)) if hasattr(X, "columns") else None
        X, C, w = check_costs_fit(pr, X, C, sample_weight)
        if (X_val is None) != (C_val is None):
            raise InputError("give both X_val and C_val, or neither")
        val = None
        if X_val is not None:
            Xv, Cv, wv = check_costs_fit(pr, X_val, C_val, sample_weight_val)
            if Xv.shape[1] != X.shape[1]:
                raise InputError(f"X_val has {Xv.shape[1]} features but X has {X.shape[1]}")
            val = (Xv, Cv, wv)
        elif self.prune and self.validation_fraction:
            (X, C, w), val = _split_validation(X, C, w, self.validation_fraction, self.random_state)
        # one positive factor (a power of two: exact) brings the costs to about 1: decisions are invariant to it and
        # regret scales with it, so every method sees the same problem, and the MILP meets no 1e9 coefficients
        f = _cost_factor(C)
        C = C * f
        val = None if val is None else (val[0], val[1] * f, val[2])
        _, z = pr._solve_min(pr.sign * C)
        norm = spot_norm(pr, C, w, z=z)
        # a validation-pruned tree was chosen on held-out rows, a criterion="mse" tree on another loss: they are
        # tidied, not compared with the leaf
        compared = not (self.prune and val is not None) and self.criterion == "spo"
        return Fit(CostData(X, C, w, names, val, f), score=lambda t: spot_objective(pr, t, X, C, w, alpha=self.alpha,
                                                                                      norm=norm, z=z),
                   leaf=(lambda t: refit_nodes(root_leaf(t), pr, X, C, w)) if compared else None, display=X,
                   to_user=lambda t: _costs_to_user(t, 1.0 / f),
                   # importances: the decrease of the training SPO regret (each node's decision w*(mean cost) as a leaf)
                   stats=lambda t: dict(X=X, sample_weight=w, node_loss=refit_nodes(t, pr, X, C, w).extras["train_spo"] / f))

    def _pruned(self, fit, tree):
        """Every method's tree pruned: on the validation rows, at ``alpha`` (SPO loss), or where no split gains."""
        d, pr = fit.data, self.problem_
        if self.prune and d.val is not None:
            return prune_on_validation(tree, pr, *d.val, criterion=self.criterion)
        if self.criterion == "spo":
            return prune_alpha(tree, self.alpha, spot_norm(pr, d.C, d.w))
        return prune_zero_gain(tree)

    def _fit_greedy(self, fit):
        from ..interrupt import raise_on_sigint

        d = fit.data
        with raise_on_sigint():    # polls nothing and has no partial tree: Ctrl-C raises at once
            tree = grow_spo_tree(self.problem_, d.X, d.C, d.w, max_depth=self.max_depth,
                                 min_samples_leaf=self.min_samples_leaf, criterion=self.criterion,
                                 quantile_step=self.quantile_step, feature_names=d.feature_names)
        self.unpruned_tree_ = _costs_to_user(tree, 1.0 / d.factor)
        return self._pruned(fit, tree)

    def _fit_mio(self, fit):
        from .spot_mio import spot_mio

        d = fit.data
        tree, info = spot_mio(self._run_mio, fit.ctl, self.problem_, d.X, d.C, d.w, depth=int(self.max_depth),
                              min_samples_leaf=self.min_samples_leaf, alpha=self.alpha,
                              quantile_step=self.quantile_step, x_precision=self.x_precision,
                              feature_names=d.feature_names, warm_start=self.warm_start or None,
                              dp_bound=self.dp_bound if self.dp_bound == "auto" else bool(self.dp_bound),
                              binarization=self.binarization, n_thresholds=int(self.n_thresholds))
        self.greedy_tree_ = _costs_to_user(info["greedy_tree"], 1.0 / d.factor)
        self.mio_info_ = info
        return self._pruned(fit, tree)

    def _fit_dp(self, fit):
        from ..dp import solve_dp_spo

        d = fit.data
        with fit.ctl.stage("dp"):
            tree, res = solve_dp_spo(d.X, d.C, self.problem_, max_depth=int(self.max_depth), alpha=self.alpha,
                                     min_samples_leaf=max(int(np.ceil(self.min_samples_leaf)), 1), sample_weight=d.w,
                                     binarization=self.binarization, n_thresholds=int(self.n_thresholds),
                                     time_limit=fit.ctl.time())
        if res.status != "optimal":
            fit.ctl.mark_cut_short("dp")
        if d.feature_names is not None:
            tree.feature_names = d.feature_names
        self.solve_result_ = res
        return self._pruned(fit, refit_nodes(tree, self.problem_, d.X, d.C, d.w))   # per-node regrets, for pruning

    def predict(self, X) -> np.ndarray:
        self._check_fitted()
        return self.tree_.predict(check_X_fitted(self, X))

    def predict_cost(self, X) -> np.ndarray:
        """The leaf mean cost vector for every row of X."""
        self._check_fitted()
        return self.tree_.value[self.tree_.apply(check_X_fitted(self, X))]

    def _fitted_tree(self):
        self._check_fitted()
        return self.tree_

    def training_loss(self, X, C, sample_weight=None) -> float:
        """Mean weighted regret of the tree's decisions on (X, C).

        The SPOT objective's loss term (what ``alpha`` is weighed against) divides by Σ ω |z*| instead of
        Σ ω and equals ``-score(X, C)``; see :func:`opttrees.spo.spot_objective`.
        """
        self._check_fitted()
        X = check_X_fitted(self, X)
        C = self.problem_.check_costs(C)
        if C.shape[0] != X.shape[0]:
            raise InputError(f"X has {X.shape[0]} rows but C has {C.shape[0]}: lengths must match")
        try:
            w = check_sample_weight(sample_weight, len(C))
        except (TypeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"sample_weight must be numbers; got {sample_weight!r}") from None
        reg = decision_regret(self.problem_, self.predict(X), C)
        return float(w @ reg / w.sum())


class SPOForest(_SPOBase):
    """Bagged greedy SPO trees (or, with ``criterion="mse"``, the CART forest), aggregated by mean cost.

    Parameters
    ----------
    decision_problem : DecisionProblem, str or dict
        As for :class:`SPOTree` (required; by keyword).
    n_estimators : int, default=100
        Number of trees.
    max_depth : int or None, default=None
        Maximum depth of each tree (None: unrestricted).
    min_samples_leaf : float, default=20
        Minimum total sample weight per leaf.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features tried at each node: an int >= 1, a float in (0, 1] (that fraction of the features),
        "sqrt", "log2", or None (all).
    criterion : {"spo", "mse"}, default="spo"
        Split criterion of each tree.
    quantile_step : float in (0, 1] or None, default=0.01
        Candidate thresholds at these quantiles of a node's unique values (None: all values).
    bootstrap : bool, default=True
        Train each tree on a bootstrap sample (counts become sample weights).
    n_jobs : int or None, default=None
        Parallel jobs for the trees (joblib; -1: all cores).
    random_state : int or None, default=0
        Seeds the bootstrap samples and feature draws.

    Attributes
    ----------
    estimators_ : list of Tree
        The fitted trees.
    problem_, n_features_in_
        As for :class:`SPOTree`.

    Examples
    --------
    Five trees on the SPOT paper's shortest-path data; each prediction is a path (0/1 per edge):

    >>> from opttrees import SPOForest
    >>> from opttrees.experiments.spo_data import shortest_path_data
    >>> D = shortest_path_data(200, deg=2, noise=0.25, grid=(3, 3), n_test=100, seed=0)
    >>> forest = SPOForest(decision_problem=D.problem, n_estimators=5, max_depth=3, n_jobs=1).fit(D.X, D.C)
    >>> paths = forest.predict(D.X_test)
    >>> paths.shape == (100, D.problem.n_decisions), set(paths.ravel().round(6)) <= {0.0, 1.0}
    (True, True)
    """

    _parameter_rules = {   # plus SPO_SHARED_RULES for the others
        "n_estimators": [Interval("int", 1)],
        "max_features": [Interval("int", 1), Interval("real", 0, 1, closed="right"), Options("sqrt", "log2"),
                         NONE],
        "bootstrap": [BOOLEAN],
        "random_state": [Interval("int", 0), NONE],
    }

    def __init__(self, *, decision_problem=None, n_estimators=100, max_depth=None, min_samples_leaf=20,
                 max_features="sqrt", criterion="spo", quantile_step=0.01, bootstrap=True, n_jobs=None,
                 random_state=0):
        store_params(self, locals())

    def fit(self, X, C, sample_weight=None):
        self._check_params()
        if self.decision_problem is None:
            raise InputError("SPOForest needs decision_problem=<a DecisionProblem>")
        pr = self.problem_ = make_decision_problem(self.decision_problem)
        X, C, w = check_costs_fit(pr, X, C, sample_weight)
        p = X.shape[1]
        mf = resolve_max_features(self.max_features, p)
        self.n_features_in_ = p
        self.estimators_ = fit_forest(pr, X, C, w, n_estimators=int(self.n_estimators), max_depth=self.max_depth,
                                      min_samples_leaf=self.min_samples_leaf, criterion=self.criterion,
                                      quantile_step=self.quantile_step, max_features=mf, bootstrap=self.bootstrap,
                                      n_jobs=self.n_jobs, random_state=self.random_state)
        return self

    def predict_cost(self, X) -> np.ndarray:
        self._check_fitted()
        return forest_mean_cost(self.estimators_, check_X_fitted(self, X))

    @property
    def feature_importances_(self) -> np.ndarray:
        """(p,) the mean over the trees of each tree's normalised decrease of its training SPO regret (on its
        bootstrap sample, as scikit-learn's forests: trees with no split left out), normalised to sum 1
        (:func:`opttrees.sklearn_export.feature_importances`)."""
        self._check_fitted()
        per = [feature_importances(t, node_weight=t.extras["weight"], node_loss=t.extras["train_spo"])
               for t in self.estimators_ if t.n_nodes > 1]
        if not per:
            return np.zeros(self.n_features_in_)
        mean = np.mean(per, axis=0)
        return mean / mean.sum() if mean.sum() > 0 else mean

    def apply(self, X) -> np.ndarray:
        """(n, n_estimators) the leaf each row of X reaches in every tree."""
        self._check_fitted()
        X = check_X_fitted(self, X)
        return np.column_stack([t.apply(X) for t in self.estimators_])

    def decision_path(self, X):
        """(indicator, n_nodes_ptr) as scikit-learn's forests: a CSR (n, total nodes) matrix of every tree's path,
        tree ``i``'s nodes in columns ``n_nodes_ptr[i]:n_nodes_ptr[i + 1]``."""
        from scipy import sparse
        self._check_fitted()
        X = check_X_fitted(self, X)
        paths = [t.decision_path(X) for t in self.estimators_]
        ptr = np.concatenate([[0], np.cumsum([p.shape[1] for p in paths])])
        return sparse.hstack(paths, format="csr"), ptr

    def predict(self, X) -> np.ndarray:
        """One oracle call on the averaged predicted cost vectors."""
        self._check_fitted()
        return self.problem_.solve(self.predict_cost(X))[0]
