"""Adding an MIO model to opttrees: a formulation, an estimator that declares its model, and a registry line.

The model: OCT with a budget on the number of splits (at most ``max_splits`` branch nodes split), a row the
thesis's model does not have. Everything else a fit needs comes with no further code: from the one template
``fit`` (:mod:`opttrees.estimators.skeleton`: parameter checks, category columns, ``classes_``,
``n_features_in_``, ``feature_names_in_``, tidying, side constraints, display bounds, feature importances,
``fit_status_``; ``score`` from scikit-learn's ClassifierMixin) and from the MIO pipeline
(:mod:`opttrees.estimators.pipeline`: the planner's start, bound and solver, the deadline and Ctrl-C, the solver
hand-off, re-verifying the solver's tree, never returning a tree worse than the start, the fallback).

Run it: ``python examples/split_budget_oct.py`` (fits on iris and checks the MIO against the dynamic program
with the same split budget, ``OptimalTreeClassifier(method="dp", max_num_nodes=K)``).
"""
from __future__ import annotations

import math
from functools import partial

import pyomo.environ as pyo
from sklearn.base import ClassifierMixin

from opttrees.dp.planner import DPCost
from opttrees.estimators.base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from opttrees.estimators.common import FittedTreeMixin
from opttrees.constraints.binding import CONSTRAINT_RULES
from opttrees.estimators.constrained import ConstrainedMixin
from opttrees.estimators.pipeline import MIO, Start
from opttrees.estimators.skeleton import classification_fit
from opttrees.formulations.oct import OCT
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.params import BOOLEAN, Interval, Options
from opttrees.registry import register_model


# 1. The formulation: OCT plus one row on the split indicators d_t of its tree block.
class SplitBudgetOCT(OCT):
    """OCT (thesis model (2.24)) with at most ``max_splits`` splits: sum_t d_t <= max_splits."""

    def __init__(self, data, max_depth=2, min_samples_leaf=1, alpha=0.0, max_splits=1, **kwargs):
        self.max_splits = int(max_splits)
        super().__init__(data, max_depth, min_samples_leaf, alpha, **kwargs)
        tree = self.model.tree
        self.model.split_budget = pyo.Constraint(expr=sum(tree.d[t] for t in self.structure.branch)
                                                 <= self.max_splits)


# 2. The estimator: parameters as data, the data prepared as every classifier's, and one MIO job.
class SplitBudgetTreeClassifier(ConstrainedMixin, FittedTreeMixin, ClassifierMixin, SolverMixin, OptTreesEstimator):
    """Optimal classification tree with at most ``max_splits`` splits, by the SplitBudgetOCT MIO.

    Parameters
    ----------
    max_depth, min_samples_leaf, alpha, warm_start, dp_bound, constraints : as for OptimalTreeClassifier
    max_splits : int, default=2
        Most branch nodes that may split.
    solver, time_limit, mip_gap, threads, random_state, verbose : the solver settings of every MIO estimator
    """

    _parameter_rules = {"max_splits": [Interval("int", 0)], "warm_start": warm_start_rules("auto", "greedy"),
                        "dp_bound": [BOOLEAN, Options("auto")], **CONSTRAINT_RULES}   # plus SHARED, SOLVER_RULES

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, max_splits=2, solver="auto", time_limit=60,
                 mip_gap=1e-6, threads=1, random_state=0, verbose=False, warm_start="auto", dp_bound="auto",
                 constraints=None):
        store_params(self, locals())

    def _prepare(self, X, y, sample_weight=None):
        return classification_fit(self, X, y, sample_weight)

    def _fit_mio(self, fit):
        # a start inside the budget: CART of the deepest full depth with at most max_splits splits
        depth = min(int(self.max_depth), int(math.log2(int(self.max_splits) + 1)))
        cart = fit.ctl.run("warm_start", cart_classifier_tree, fit.data, depth, self.min_samples_leaf,
                           float(self.alpha), self.random_state, cheap=True)
        build = partial(SplitBudgetOCT, fit.data, int(self.max_depth), self.min_samples_leaf, float(self.alpha),
                        max_splits=int(self.max_splits))
        job = MIO(build, fit.score, starts=[Start.of("greedy", cart)], constraints=fit.ctx)
        return self._run_mio(fit.ctl, job, dp_bound=self.dp_bound,
                             cost=DPCost.of_ranks(fit.data, int(self.max_depth))).tree


# 3. The registry line: a spec's ``model: {type: oct-split-budget}`` and ``opttrees models`` now know it.
def register() -> None:
    register_model("oct-split-budget", SplitBudgetTreeClassifier,
                   "OCT with at most max_splits splits (examples/split_budget_oct.py)")


def main(argv=None) -> None:
    import argparse

    from sklearn.datasets import load_iris

    from opttrees import OptimalTreeClassifier

    ap = argparse.ArgumentParser(description="Fit SplitBudgetOCT on iris (every third row) for several budgets "
                                             "and compare with the DP under the same split budget.")
    ap.add_argument("--max-depth", type=int, default=2, help="depth of the tree the MIO chooses from (default 2)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[1, 2, 3],
                    help="the max_splits values to fit, one MIO and one DP each (default 1 2 3)")
    ap.add_argument("--time-limit", type=float, default=60.0,
                    help="seconds for each MIO fit, including the model build (default 60)")
    args = ap.parse_args(argv)
    X, y = load_iris(return_X_y=True)
    X, y = X[::3], y[::3]
    for k in args.budgets:
        mio = SplitBudgetTreeClassifier(max_depth=args.max_depth, max_splits=k, time_limit=args.time_limit).fit(X, y)
        dp = OptimalTreeClassifier(max_depth=args.max_depth, method="dp", max_num_nodes=k).fit(X, y)
        print(f"max_splits={k}: MIO {mio.solve_result_.status}, objective {mio.solve_result_.objective:.6f}, "
              f"{mio.tree_.n_splits} splits; DP objective {dp.objective_:.6f}")


if __name__ == "__main__":
    main()
