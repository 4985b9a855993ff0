r"""Group fairness as side constraints (binary classification): statistical parity, conditional statistical
parity, predictive equality, equal opportunity and equalized odds, each a bound on the gap in
positive-prediction rate between the groups of a protected column (the rows they add to a formulation: the
per-row predictions of :mod:`opttrees.constraints.declarations`).
"""
from __future__ import annotations

import copy
import numbers

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..errors import InputError
from ..tree import Tree
from .declarations import MAX_GROUPS, TOL, Constraint, _column, _Info, _matrix, _used_features, _weights


class _Fairness(Constraint):
    r"""Group fairness over a protected column (binary classification): the gap in positive-prediction rate.

    For every stratum :math:`S` of the notion and every pair of groups :math:`a \ne b` of the protected column
    present in it, with weighted rates :math:`\rho_{g}(S) = \sum_{i \in S, g_i = g} w_i \hat y_i /
    \sum_{i \in S, g_i = g} w_i`:

    .. math:: -\delta \le \rho_a(S) - \rho_b(S) \le \delta

    ``value`` is the largest gap :math:`\max_{S, a, b} |\rho_a(S) - \rho_b(S)|`. The protected column is
    excluded from splitting (its split rows are fixed to 0) unless ``allow_split=True``.

    Parameters
    ----------
    protected : str or int
        The protected column (a name of X's columns, or its index). Its distinct values are the groups.
    delta : float in [0, 1]
        The largest allowed gap.
    positive : label or None
        The positive class; None: the larger of the two labels (``sorted(classes)[1]``).
    allow_split : bool, default False
        Let the tree split on the protected column.
    """

    tasks = ("classification",)
    notion = ""
    name = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.name = cls.notion   # block and report name: the notion

    def __init__(self, protected, delta: float, positive=None, allow_split: bool = False):
        self.protected = protected
        self.delta = delta
        self.positive = positive
        self.allow_split = allow_split
        self._check_fields()

    def _check_fields(self) -> None:
        d = self.delta
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Real) or not np.isfinite(d) or not 0 <= d <= 1:
            raise InputError(f"{type(self).__name__}: delta must be a number in [0, 1] (a gap between rates); got "
                             f"{d!r}")
        if not isinstance(self.allow_split, (bool, np.bool_)):
            raise InputError(f"{type(self).__name__}: allow_split must be True or False; got {self.allow_split!r}")
        if not isinstance(self.protected, (str, numbers.Integral)) or isinstance(self.protected, bool):
            raise InputError(f"{type(self).__name__}: protected must be a column name or index; got "
                             f"{self.protected!r}")

    @property
    def bound(self) -> float:
        return float(self.delta)

    def _bind(self, info: _Info) -> None:
        who = type(self).__name__
        self._j = _column(self.protected, info.names, info.p, f"{who}: protected")
        classes = info.classes or []
        if len(classes) != 2:
            raise InputError(f"{who} needs binary classification (two classes); y has {len(classes)}: {classes}")
        if self.positive is None:
            self._pos = 1
        else:
            match = [k for k, c in enumerate(classes) if c == self.positive or str(c) == str(self.positive)]
            if not match:
                raise InputError(f"{who}: positive={self.positive!r} is not a class of y; classes: {classes}")
            self._pos = match[0]
        groups = np.unique(info.X[:, self._j])
        if len(groups) < 2:
            raise InputError(f"{who}: the protected column {self.protected!r} has one value only ({groups[0]:g}); "
                             "there are no groups to compare")
        if len(groups) > MAX_GROUPS:
            raise InputError(f"{who}: the protected column {self.protected!r} has {len(groups)} distinct values; "
                             f"fairness compares groups (at most {MAX_GROUPS}): give a group label column")
        self._legit = None

    def _strata(self, y_pos: np.ndarray, X: np.ndarray) -> list[np.ndarray]:
        """Boolean masks of the rows each rate is conditioned on (y_pos: 1 where y is the positive class)."""
        raise NotImplementedError

    def _pairs(self, X, y_pos, w):
        """[(stratum mask, group a mask, group b mask)] for every stratum and pair of groups present in it."""
        g = X[:, self._j]
        out = []
        for S in self._strata(y_pos, X):
            present = [v for v in np.unique(g[S]) if w[S & (g == v)].sum() > 0]
            for a in range(len(present)):
                for b in range(a + 1, len(present)):
                    out.append((S, S & (g == present[a]), S & (g == present[b])))
        return out

    def _rows(self, view, blk) -> None:
        info = self._info()
        yhat, row_of = view.yhat(self._pos)
        y_pos = (info.y == self._pos).astype(np.int64)
        w = info.w
        blk.rows = pyo.ConstraintList()
        for _, A, B in self._pairs(info.X, y_pos, w):
            coef = np.zeros(len(yhat))
            np.add.at(coef, row_of[A], w[A] / w[A].sum())
            np.add.at(coef, row_of[B], -w[B] / w[B].sum())
            nz = np.nonzero(np.abs(coef) > 1e-15)[0]
            expr = LinearExpression(constant=0.0, linear_coefs=[float(coef[u]) for u in nz],
                                    linear_vars=[yhat[int(u)] for u in nz])
            blk.rows.add(expr <= float(self.delta))
            blk.rows.add(expr >= -float(self.delta))
        if not self.allow_split:
            blk.no_split = pyo.ConstraintList()
            for _, var in view.split_terms(self._j):
                blk.no_split.add(var == 0)

    def dp_pairs(self) -> list:
        """[(rows of side a, rows of side b, delta)] on the bound training data: what the Pareto DP bounds
        (:class:`opttrees.constraints.fairness_dp.GroupFairnessTask`)."""
        info = self._info()
        y_pos = (info.y == self._pos).astype(np.int64)
        return [(A, B, float(self.delta)) for _, A, B in self._pairs(info.X, y_pos, info.w)]

    def gaps(self, tree: Tree, X, y, sample_weight=None) -> list[float]:
        """Every |rate_a - rate_b| this notion compares (stratum by stratum, pair by pair)."""
        Xm = _matrix(X)
        j = self._column_for(self.protected, X, tree, f"{type(self).__name__}: protected")
        self_ = copy.copy(self)
        self_._j = j
        y = np.asarray(y)
        classes = list(tree.classes) if tree.classes is not None else sorted(np.unique(y).tolist())
        if len(classes) != 2:
            raise InputError(f"{type(self).__name__} needs binary classification; classes: {classes}")
        pos = classes[1] if self.positive is None else self.positive
        pred = np.asarray(tree.predict(Xm))
        yhat = (pred == pos) | (pred.astype(str) == str(pos))
        y_pos = ((y == pos) | (y.astype(str) == str(pos))).astype(np.int64)
        w = _weights(sample_weight, len(y))
        out = []
        for _, A, B in self_._pairs(Xm, y_pos, w):
            out.append(abs(float((w[A] * yhat[A]).sum() / w[A].sum() - (w[B] * yhat[B]).sum() / w[B].sum())))
        return out

    def value(self, tree: Tree, X, y=None, sample_weight=None) -> float:
        if y is None:
            raise InputError(f"{type(self).__name__}.value needs y")
        return max(self.gaps(tree, X, y, sample_weight), default=0.0)

    def splits_on_protected(self, tree: Tree, X=None) -> bool:
        """Whether ``tree`` splits on the protected column (which ``allow_split=False`` forbids)."""
        j = self._column_for(self.protected, X, tree, f"{type(self).__name__}: protected")
        return j in _used_features(tree)

    def satisfied(self, tree: Tree, X, y=None, sample_weight=None, tol: float = TOL) -> bool:
        """The gap is at most ``delta`` and, unless ``allow_split``, no split uses the protected column."""
        if not self.allow_split and self.splits_on_protected(tree, X):
            return False
        return super().satisfied(tree, X, y, sample_weight, tol)


class StatisticalParity(_Fairness):
    r"""Statistical (demographic) parity: :math:`|P(\hat y = + \mid g = a) - P(\hat y = + \mid g = b)| \le \delta`.

    One stratum, all rows. Rows (see :class:`_Fairness`): for every pair of groups a, b,
    :math:`-\delta \le \sum_{g_i = a} \frac{w_i}{W_a}\hat y_i - \sum_{g_i = b} \frac{w_i}{W_b}\hat y_i \le \delta`.
    """

    notion = "statistical_parity"

    def _strata(self, y_pos, X):
        return [np.ones(len(y_pos), dtype=bool)]


class ConditionalStatisticalParity(_Fairness):
    r"""Conditional statistical parity: statistical parity within each value :math:`\ell` of a legitimate column.

    .. math:: |P(\hat y = + \mid g = a, x_{\text{legit}} = \ell) - P(\hat y = + \mid g = b, x_{\text{legit}} = \ell)|
        \le \delta \quad \forall \ell, a, b

    Parameters
    ----------
    protected, delta, positive, allow_split
        As for :class:`StatisticalParity`.
    legit : str or int
        The legitimate factor (a column of X whose distinct values are the strata).
    """

    notion = "conditional_statistical_parity"

    def __init__(self, protected, delta: float, legit=None, positive=None, allow_split: bool = False):
        super().__init__(protected, delta, positive, allow_split)
        if legit is None:
            raise InputError("ConditionalStatisticalParity needs legit= (the column whose values are the strata)")
        if not isinstance(legit, (str, numbers.Integral)) or isinstance(legit, bool):
            raise InputError(f"ConditionalStatisticalParity: legit must be a column name or index; got {legit!r}")
        self.legit = legit

    def _bind(self, info):
        super()._bind(info)
        self._legit = _column(self.legit, info.names, info.p, "ConditionalStatisticalParity: legit")
        if self._legit == self._j:
            raise InputError("ConditionalStatisticalParity: legit and protected are the same column")
        if len(np.unique(info.X[:, self._legit])) > MAX_GROUPS:
            raise InputError(f"ConditionalStatisticalParity: legit={self.legit!r} has more than {MAX_GROUPS} distinct "
                             "values; give a column of strata")

    def gaps(self, tree, X, y, sample_weight=None):
        self_ = copy.copy(self)
        self_._legit = self._column_for(self.legit, X, tree, "ConditionalStatisticalParity: legit")
        return _Fairness.gaps(self_, tree, X, y, sample_weight)

    def _strata(self, y_pos, X):
        col = X[:, self._legit]
        return [col == v for v in np.unique(col)]


class PredictiveEquality(_Fairness):
    r"""Predictive equality: equal false-positive rates, :math:`|P(\hat y = + \mid y = -, g = a) -
    P(\hat y = + \mid y = -, g = b)| \le \delta` (one stratum: the negative rows)."""

    notion = "predictive_equality"

    def _strata(self, y_pos, X):
        return [y_pos == 0]


class EqualOpportunity(_Fairness):
    r"""Equal opportunity: equal true-positive rates, :math:`|P(\hat y = + \mid y = +, g = a) -
    P(\hat y = + \mid y = +, g = b)| \le \delta` (one stratum: the positive rows)."""

    notion = "equal_opportunity"

    def _strata(self, y_pos, X):
        return [y_pos == 1]


class EqualizedOdds(_Fairness):
    r"""Equalized odds: both equal opportunity and predictive equality (two strata, y = + and y = -), each gap
    at most :math:`\delta`."""

    notion = "equalized_odds"

    def _strata(self, y_pos, X):
        return [y_pos == 0, y_pos == 1]


#: the five group-fairness notions (the constraints the Pareto DP solves)
FAIRNESS = (StatisticalParity, ConditionalStatisticalParity, PredictiveEquality, EqualOpportunity, EqualizedOdds)
