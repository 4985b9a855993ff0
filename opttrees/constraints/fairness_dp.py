r"""Group-fairness constraints for the Pareto dynamic program (:mod:`opttrees.constraints.pareto`): the five notions of
:mod:`opttrees.constraints` (statistical parity, conditional statistical parity, predictive equality, equal
opportunity, equalized odds) as one separable task.

Every notion bounds, on some strata :math:`S` of the rows (all rows; the rows of each legitimate value; the
negatives; the positives; both), the gap between the positive-prediction rates of two groups a, b:
:math:`\rho_a(S) - \rho_b(S) \le \delta`. As in the STreeD paper's eq. (11) for demographic parity, each ordered
pair (S, a, b) gets one value component that sums over leaves,

.. math:: g_{S,a,b} = \sum_{i \in S_a} \frac{w_i}{W_{S_a}} [\hat y_i = +] + \sum_{i \in S_b} \frac{w_i}{W_{S_b}}
    [\hat y_i \ne +] = 1 + \rho_a(S) - \rho_b(S),

so the constraint is :math:`g_{S,a,b} \le 1 + \delta`. Components only grow as a tree is assembled from its
subtrees, so a partial front past the bound is dropped (anti-monotone), and the best feasible vector at the
root has the fewest weighted errors. With ``alpha > 0`` a last component counts leaves and the score is
errors / L̂ + alpha * (leaves - 1), the shared objective.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .pareto import _ParetoTask


class GroupFairnessTask(_ParetoTask):
    """Minimise weighted errors (plus ``alpha`` per split on the normalised scale) subject to group-rate gaps.

    Parameters
    ----------
    pairs : list of (mask_a, mask_b, delta)
        Boolean row masks of the two sides of each compared (stratum, group) pair, in one direction; the
        reverse direction is added here.
    positive : label or None
        The class counted as :math:`\\hat y = +` (None: the larger label).
    alpha : float
        Cost per split on the normalised objective (errors / baseline errors).
    """

    def __init__(self, pairs, positive=None, alpha: float = 0.0):
        self.pairs = pairs
        self.positive = positive
        self.alpha = float(alpha)

    def prepare(self, y, n, w):
        y, one = self._binary_labels(y, n, self.positive, "group fairness")
        code, self.w = self.code, w
        comps, limits = [], []
        for A, B, delta in self.pairs:
            A, B = np.asarray(A, bool), np.asarray(B, bool)
            if A.shape != (n,) or B.shape != (n,):
                raise InputError(f"group masks must have one entry per row ({n})")
            WA, WB = float(w[A].sum()), float(w[B].sum())
            if WA <= 0 or WB <= 0:
                continue
            for P, Q, WP, WQ in ((A, B, WA, WB), (B, A, WB, WA)):
                c = np.zeros((2, n))
                c[one] += w * P / WP           # predicted + in P
                c[1 - one] += w * Q / WQ       # predicted - in Q
                comps.append(c)
                limits.append(1.0 + float(delta))
        k = 1 + len(comps) + (1 if self.alpha > 0 else 0)
        contrib = np.zeros((2, n, k))
        for lab in range(2):
            contrib[lab, :, 0] = w * (code != lab)
        for m, c in enumerate(comps):
            contrib[:, :, 1 + m] = c
        self.contrib = contrib
        counts = np.bincount(code, weights=w, minlength=2)
        self.baseline = float(counts.sum() - counts.max()) or 1.0
        self.limits = np.concatenate([[np.inf], limits, [np.inf] if self.alpha > 0 else []])
        # score = errors / baseline + alpha * (leaves - 1): an additive cost over leaves, less alpha
        self.cost_weights = np.zeros(k)
        self.cost_weights[0] = 1.0 / self.baseline
        self.cost_offset = 0.0
        self.leaf_extra = None
        # each pair's two directions sum to a constant over a row subset: see _ParetoTask.tied
        self.tied = np.arange(1, 1 + len(comps))
        if self.alpha > 0:
            self.cost_weights[-1] = self.alpha
            self.cost_offset = -self.alpha
            self.leaf_extra = np.zeros(k)
            self.leaf_extra[-1] = 1.0      # one leaf

    def score(self, V: np.ndarray) -> np.ndarray:
        s = V[:, 0] / self.baseline
        if self.alpha > 0:
            s = s + self.alpha * (V[:, -1] - 1.0)
        return np.where(self.feasible(V), s, np.inf)
