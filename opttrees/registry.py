"""The model types a spec file can name (``model.type``): estimator, fixed parameters, how to fit and score.

Why a module of its own: estimators know nothing about spec files or the CLI, and the spec and the CLI
read one table. Each entry exposes the estimator's parameter rules (:mod:`opttrees.params`), so a spec is
checked, and ``opttrees models --params`` is listed, from the declarations the estimator itself checks.
"""
from __future__ import annotations

import inspect
from functools import partial
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .estimators.base import OptTreesEstimator


def _fit_xy(est, X, y):
    return est.fit(X, y)


@dataclass
class ModelEntry:
    """How the spec and the CLI build, fit and score one model type."""

    name: str
    estimator: type[OptTreesEstimator]
    description: str
    fit: Callable[[Any, Any, Any], Any] = _fit_xy
    metric: str = "accuracy"
    fixed: dict = field(default_factory=dict)   # parameters the type sets (e.g. method="mio"), not settable

    def make(self, **params):
        """The estimator with the type's fixed parameters and ``params``."""
        return self.estimator(**{**self.fixed, **params})

    def parameter_rules(self) -> dict:
        """{name: rules} of every settable parameter, in signature order."""
        return {k: v for k, v in self.estimator.parameter_rules().items() if k not in self.fixed}

    def defaults(self) -> dict:
        """{name: default} of every settable parameter, in signature order."""
        sig = inspect.signature(self.estimator.__init__)
        return {k: p.default for k, p in sig.parameters.items() if k != "self" and k not in self.fixed}

    def methods(self) -> dict:
        """The estimator's method table (:class:`~opttrees.params.Method` by name; empty without ``method``)."""
        return dict(self.estimator._methods)


MODELS: dict[str, ModelEntry] = {}
#: whether the built-in model types are in MODELS (they are registered on the first use of the registry)
_builtins_registered = False


def register_model(name: str, estimator: type[OptTreesEstimator], description: str, fit=None, metric: str = "accuracy",
                   **fixed) -> None:
    """Register a spec ``model.type`` (replacing one of the same name, a built-in too); ``fixed`` parameters are
    always passed (e.g. method="mio")."""
    models()[name] = ModelEntry(name, estimator, description, fit or _fit_xy, metric, dict(fixed))


def models() -> dict[str, ModelEntry]:
    """The registry: the built-in model types (registered on first use, also when that use is a
    :func:`register_model`) and those registered since."""
    global _builtins_registered
    if not _builtins_registered:
        _builtins_registered = True       # first: the built-ins register through register_model, which calls this
        try:
            _register_builtin()
        except BaseException:
            _builtins_registered = False
            raise
    return MODELS


def _register_builtin() -> None:
    from .estimators import (BendersOCTClassifier, FlowOCTClassifier, OptimalPrescriptiveTree, OptimalTreeClassifier,
                             OptimalTreeCV, OptimalTreeRegressor, PolicyTree, RobustTreeClassifier, SPOForest, SPOTree)

    # one score a family (register_model's default, accuracy, for the classifiers): what the spec reports
    regression = partial(register_model, metric="r2")
    spo = partial(register_model, metric="normalised_spo_loss")
    prescriptive = partial(register_model, metric="policy_value")

    register_model("oct", OptimalTreeClassifier, "Bertsimas–Dunn OCT / OCT-H MIO (split_type: parallel | "
                   "hyperplane)", method="mio")
    register_model("cart", OptimalTreeClassifier, "greedy CART tree pruned with alpha (no solver)",
                   method="greedy")
    register_model("oct-local-search", OptimalTreeClassifier, "OCT / OCT-H by Dunn's local search with restarts",
                   method="local-search")
    register_model("oct-dp", OptimalTreeClassifier, "optimal classification tree over binarised features by dynamic "
                   "programming (STreeD; no solver)", method="dp")
    regression("ort", OptimalTreeRegressor, "ORT / ORT-H regression tree by local search (or greedy, dp, mio)")
    regression("ort-linear", OptimalTreeRegressor, "ORT-L / ORT-LH: lasso (linear) leaves by local search, or the "
               "ORT-L MIO with method: mio (absolute loss: HiGHS or SCIP; squared: SCIP)", leaf_model="linear")
    regression("ort-mio", OptimalTreeRegressor, "ORT / ORT-H MIO (4.8), warm-started by the local search "
               "(absolute loss: HiGHS or SCIP; squared: SCIP)", method="mio")
    regression("ort-dp", OptimalTreeRegressor, "optimal regression tree (squared loss) over binarised features by "
               "dynamic programming (STreeD)", method="dp")
    register_model("oct-cv", OptimalTreeCV, "OCT tuned by the thesis protocol (depth grid, alpha by batch pruning, "
                   "validation split, refit)", task="classification")
    register_model("cart-cv", OptimalTreeCV, "CART tuned as oct-cv (depth grid, alpha by cost-complexity pruning "
                   "on the validation split, refit): the thesis's CART baseline", task="classification",
                   method="greedy")
    regression("ort-cv", OptimalTreeCV, "ORT tuned by the thesis protocol (as oct-cv; loss squared or absolute)",
               task="regression")
    register_model("flow-oct", FlowOCTClassifier, "FlowOCT: strong max-flow MIO on binarised features")
    register_model("benders-oct", BendersOCTClassifier, "BendersOCT: FlowOCT master with lazy min-cut cuts")
    register_model("robust-oct", RobustTreeClassifier,
                   "RobustOCT: robust to feature shifts, calibrated by rho and lam (cut generation)")
    # SPO models: the data's targets are the cost columns (one per decision), e.g.
    # model: {type: spot, decision_problem: {type: shortest_path}, max_depth: 3}
    spo("spot", SPOTree, "greedy SPO tree (SPOT), pruned on validation if given", method="greedy")
    spo("spot-mio", SPOTree, "SPOT MILP warm-started by greedy SPOT (time-limited improver)", method="mio")
    spo("spot-dp", SPOTree, "exact SPOT-objective tree over binarised features by dynamic programming", method="dp")
    spo("spo-forest", SPOForest, "SPO forest: bagged greedy SPO trees, mean-cost aggregation")
    # prescriptive models: the target is two columns, e.g. data: {csv: trial.csv, target: [treatment, outcome]}
    prescriptive("opt", OptimalPrescriptiveTree, "Optimal Prescriptive Tree OPT(mu) by Dunn's local search "
                 "(counterfactuals: constant, or linear for OPT-L)", method="local-search")
    prescriptive("opt-dp", OptimalPrescriptiveTree, "OPT(mu), constant counterfactuals, exact over binarised "
                 "features by dynamic programming", method="dp")
    prescriptive("opt-mio", OptimalPrescriptiveTree, "OPT(mu) MIO on SCIP warm-started by the local search (tiny "
                 "data)", method="mio")
    prescriptive("pt", OptimalPrescriptiveTree, "Kallus's personalisation tree: greedy OPT with mu = 1",
                 method="greedy", mu=1.0)
    prescriptive("policy-tree", PolicyTree, "policy tree from DM/IPW/DR teacher scores (cross-fitted), exact by DP",
                 method="dp")
    prescriptive("policy-tree-local-search", PolicyTree, "policy tree from teacher scores by local search",
                 method="local-search")
