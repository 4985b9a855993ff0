"""Adding an MIO model to opttrees: a formulation, a registry line and a Method configuration.

The model: OCT with a budget on the number of splits (at most ``max_splits`` branch nodes split), a row the
thesis's model does not have. Everything else a fit needs -- the deadline and Ctrl-C, the solver hand-off,
re-verifying the solver's tree, never returning a tree worse than the start, the fallback when the solver
finds nothing -- comes from the MIO pipeline (:mod:`opttrees.estimators.pipeline`).

Run it: ``python examples/split_budget_oct.py`` (fits on iris and checks the MIO against the dynamic program
with the same split budget, ``OptimalTreeClassifier(method="dp", max_num_nodes=K)``).
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np
import pyomo.environ as pyo

from opttrees.data.prepared import prepare
from opttrees.estimators.base import OptTreesEstimator, SolverMixin, store_params
from opttrees.estimators.fitcontrol import controlled_fit
from opttrees.estimators.pipeline import MIO, Start
from opttrees.formulations.oct import OCT
from opttrees.heuristics.cart import cart_classifier_tree
from opttrees.heuristics.core import make_problem, objective
from opttrees.params import Interval
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


# 2. The estimator: parameters as data, then one MIO job for the pipeline.
class SplitBudgetTreeClassifier(SolverMixin, OptTreesEstimator):
    """Optimal classification tree with at most ``max_splits`` splits, by the SplitBudgetOCT MIO.

    Parameters
    ----------
    max_depth, min_samples_leaf, alpha : as for :class:`opttrees.OptimalTreeClassifier`
    max_splits : int, default=2
        Most branch nodes that may split.
    solver, time_limit, mip_gap, threads, random_state, verbose : the solver settings of every MIO estimator
    """

    _parameter_rules = {"max_splits": [Interval("int", 0)]}   # plus SHARED_RULES and SOLVER_RULES

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, max_splits=2, solver="auto", time_limit=60,
                 mip_gap=1e-6, threads=1, random_state=0, verbose=False):
        store_params(self, locals())

    def fit(self, X, y):
        self._check_params()
        with controlled_fit(self, self._time_limit()) as ctl:
            data = prepare(X, y, "classification", min_samples_leaf=self.min_samples_leaf)
            prob, alpha = make_problem(data), float(self.alpha)
            # a start inside the budget: CART of the deepest full depth with at most max_splits splits
            depth = min(int(self.max_depth), int(math.log2(int(self.max_splits) + 1)))
            cart = ctl.run("warm_start", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                           self.random_state, cheap=True)
            out = self._run_mio(ctl, MIO(
                build=partial(SplitBudgetOCT, data, int(self.max_depth), self.min_samples_leaf, alpha,
                              max_splits=int(self.max_splits)),
                score=lambda tree: objective(tree, prob, alpha),
                starts=[Start.of("greedy", cart)]))
            self.tree_ = out.tree
            self.classes_ = np.asarray(data.codec.classes)
        return self

    def predict(self, X):
        return self.tree_.predict(np.asarray(X, dtype=np.float64))


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
