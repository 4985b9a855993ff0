"""The regressor's two leaf models, as objects the estimator declares (``leaf_model="constant"`` / ``"linear"``):
what each fit judges trees by, how the local search and the MIO fit them, and how the tree returns to y's units.

:class:`ConstantLeaves`: ORT / ORT-H, each leaf the mean (squared loss) or the median (absolute loss) of its rows.
:class:`LinearLeaves`: ORT-L / ORT-LH, a lasso (or l0-penalised) linear model in every leaf: the penalty is made
unit-free (``leaf_penalty`` / s_y for l1), ``coef_bound`` goes to the standardised y the MIO sees, the local search
is :func:`~opttrees.heuristics.linear_leaves.linear_local_search` and the MIO :class:`~opttrees.formulations.ORTLinear`
from a start computed first (any feasible tree's objective bounds its coefficients).

Both read the estimator's settings (``est``) and the prepared :class:`~opttrees.estimators.skeleton.Fit`; the
regressor's ``_prepare`` calls :meth:`declare`, its method hooks :meth:`local_search` and :meth:`mio`, each inside
:meth:`quiet`.
"""
from __future__ import annotations

import contextlib
import math
import warnings
from functools import partial
from typing import Any

import numpy as np

from ..data.prepared import TargetScaling
from ..errors import InputError
from ..dp.planner import START_SHARE
from ..formulations.ort import ORT
from ..formulations.ort_linear import ORTLinear
from ..heuristics.core import LeafProblem, objective, refit_leaves
from ..heuristics.linear_leaves import check_leaf_penalty, linear_leaf_tree, linear_local_search, linear_tree_objective
from .common import root_leaf
from .pipeline import MIO, Start


def target_scaling(data) -> TargetScaling:
    """How the prepared data's y was standardised (identity when it was not)."""
    return data.target if data.target is not None else TargetScaling()


class ConstantLeaves:
    """ORT / ORT-H leaves: the mean or median of the leaf's rows (``loss``)."""

    def __init__(self, est):
        self.est: Any = est

    def declare(self, fit, raw) -> None:
        """The fit's score (the normalised objective), its single leaf and the tree in y's units (the exact means /
        medians of the caller's y; a constrained tree keeps its own leaf values)."""
        prob, alpha = fit.problem, float(self.est.alpha)
        fit.score = lambda t: objective(t, prob, alpha)
        fit.leaf = lambda t: refit_leaves(root_leaf(t), prob)
        loss = self.est.loss

        def to_user(tree):
            user = target_scaling(fit.data).tree_to_user(tree)
            return user if fit.ctx is not None else refit_leaves(user, LeafProblem(raw, raw.X, raw.y, loss))
        fit.to_user = to_user

    @contextlib.contextmanager
    def quiet(self):
        yield

    def local_search(self, fit, share: float = 1.0):
        return self.est._local_search(fit, share)

    def mio(self, fit):
        """ORT / ORT-H from the plan's start; the greedy tree is the fallback when the fit stops before any tree."""
        est = self.est
        build = partial(ORT, fit.data, est.max_depth, est.min_samples_leaf, est.alpha, loss=est.loss,
                        split_type=est.split_type, margin=float(est.hyperplane_margin))
        return est._run_mio(fit.ctl, MIO(build, fit.score, fallback=lambda: est._greedy(fit, "fallback"),
                                         sources={"greedy": lambda plan: est._greedy(fit, "warm_start"),
                                                  "local-search": lambda plan: est._local_search(fit, START_SHARE)},
                                         constraints=fit.ctx)).tree


class LinearLeaves(ConstantLeaves):
    """ORT-L / ORT-LH leaves: a linear model per leaf, penalised by ``leaf_penalty`` (``leaf_penalty_type``)."""

    #: the warning :func:`check_leaf_penalty` gives (once, at the caller of ``fit``)
    PENALTY_WARNING = "leaf_model='linear' with leaf_penalty=0"

    def declare(self, fit, raw) -> None:
        """The ORT-L objective of a tree's own leaf models (what the MIO counts; the local search's for l1), no
        single-leaf comparison, the tree in y's units; the leaf penalty's warning, once, at the caller of fit."""
        est, data = self.est, fit.data
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            check_leaf_penalty(est.leaf_penalty, data, est.min_samples_leaf)
        for w in said:      # stack: here, the regressor's _prepare, run_fit, _fit, fit, the caller
            warnings.warn(w.message, w.category, stacklevel=6)
        alpha, lam = float(est.alpha), self.penalty(data)
        fit.score = lambda tree: linear_tree_objective(tree, data, alpha, lam, loss=est.loss,
                                                       penalty=est.leaf_penalty_type, refit=False)
        fit.to_user = lambda tree: target_scaling(fit.data).tree_to_user(tree)

    @contextlib.contextmanager
    def quiet(self):
        """The leaf penalty's warning was given once (by :meth:`declare`); the search and the formulation check it
        again, quietly."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=self.PENALTY_WARNING)
            yield

    def penalty(self, data) -> float:
        """The penalty the search and the MIO see: per unit of coefficient (y's units), so ``leaf_penalty`` / s_y
        for l1, which makes ``leaf_penalty`` unit-free; l0 counts coefficients and needs no scaling."""
        lam = float(self.est.leaf_penalty)
        if self.est.leaf_penalty_type != "l1":
            return lam
        y, w = np.asarray(data.y, dtype=np.float64), np.asarray(data.sample_weight, dtype=np.float64)
        W = float(w.sum())
        mean = float((w * y).sum() / W) if W > 0 else 0.0
        s_y = math.sqrt(float((w * (y - mean) ** 2).sum()) / W) if W > 0 else 0.0
        return lam / s_y if s_y > 0 else lam

    def coef_bound(self, data):
        """``coef_bound`` (y's units per scaled feature unit) on the standardised y the MIO sees."""
        bound = self.est.coef_bound
        return None if bound is None else float(bound) / target_scaling(data).scale

    def local_search(self, fit, share: float = 1.0):
        est = self.est
        if est.cluster == "dask":
            raise InputError("cluster='dask' runs the constant-leaf local search and the DP; the linear-leaf local "
                             "search (leaf_model='linear') runs in this process: leave cluster=None")
        return fit.ctl.search("local_search", linear_local_search, fit.data, est.max_depth, est.alpha,
                              self.penalty(fit.data), est.min_samples_leaf, est.n_restarts, est.random_state,
                              split_type=est.split_type, n_hyperplane_restarts=est.n_hyperplane_restarts,
                              max_thresholds=est.max_thresholds, share=share, mark="local search")

    def mio(self, fit):
        """ORT-L / ORT-LH from the warm start (its lasso leaves fit squared loss whatever ``loss``), computed first:
        any feasible tree's objective bounds the coefficients (ORTLinear); the greedy tree with lasso leaves is the
        fallback when the fit stops before any tree."""
        est, lam = self.est, self.penalty(fit.data)

        def greedy(stage):
            tree = est._greedy(fit, stage)
            return None if tree is None else linear_leaf_tree(tree, fit.data, lam)

        start = None
        if est.warm_start == "local-search":
            start = Start.of("local-search", self.local_search(fit, START_SHARE))
        elif est.warm_start == "greedy":
            start = Start.of("greedy", greedy("warm_start"))
        # the slack keeps the start feasible
        build = partial(ORTLinear, fit.data, est.max_depth, est.min_samples_leaf, est.alpha, leaf_penalty=lam,
                        penalty=est.leaf_penalty_type, loss=est.loss, split_type=est.split_type,
                        margin=float(est.hyperplane_margin), coef_bound=self.coef_bound(fit.data),
                        upper_bound=1.0 if start is None else min(1.0, fit.score(start.tree) * (1 + 1e-6) + 1e-9))
        return est._run_mio(fit.ctl, MIO(build, fit.score, [start], fallback=lambda: greedy("fallback")),
                            warm_start=None).tree


#: ``leaf_model`` -> its leaf-model class
LEAF_MODELS = {"constant": ConstantLeaves, "linear": LinearLeaves}
