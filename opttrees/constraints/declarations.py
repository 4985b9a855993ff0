r"""Declarative side constraints for optimal trees: fairness, feature budgets, monotonicity, leaf support.

Each constraint is one small object. It

- ``validate(data)`` — checks itself against the training data (a :class:`~opttrees.data.PreparedData` or a
  :class:`~opttrees.data.binarized.BinarizedData`) and returns a *bound* copy (column names resolved to indices,
  the positive class fixed); bad settings raise :class:`~opttrees.errors.InputError` naming the problem;
- ``add_to(formulation)`` — adds its rows to the formulation's Pyomo model, on a ``Block`` named after it
  (``model.statistical_parity``, ``model.max_features``, ...; a second one of the same kind gets ``_2``);
- ``value(tree, X, y, sample_weight=None)`` — the constraint's value for a :class:`~opttrees.tree.Tree` on
  data, by routing the rows through the tree exactly as :meth:`Tree.apply` does;
- ``satisfied(tree, X, y, sample_weight=None, tol=1e-6)`` — ``value`` compared with ``bound``
  (``sense`` says which way: ``"<="`` or ``">="``).

Formulations that take constraints: :class:`~opttrees.formulations.OCT` and
:class:`~opttrees.formulations.ORT` (parallel splits, the Bertsimas–Dunn block: ``a[j,t]``, ``d[t]``,
``z[i,t]``, ``l[t]``, labels ``c[k,t]`` / leaf values ``beta[t]``) and
:class:`~opttrees.formulations.FlowOCT` / :class:`~opttrees.formulations.BendersOCT` (the flow block:
``b[n,c]``, ``p[n]``, ``w[n,k]``). Constraints that need each row's prediction on the flow family add an
exact routing block for the distinct binary rows (the flows of FlowOCT only count correct rows, and
BendersOCT has no per-row variables at all).

**Per-row predictions** (fairness). Binary classification with positive class :math:`+`; :math:`\hat y_i`
is 1 iff row i is predicted positive. Bertsimas–Dunn block:

.. math::

    q_{it} \le z_{it},\quad q_{it} \le c_{+t},\quad q_{it} \ge z_{it} + c_{+t} - 1,\quad
    \hat y_i = \textstyle\sum_{t \in \mathcal T_L} q_{it},\qquad q \in [0, 1]

(each row is in exactly one leaf, so :math:`\hat y_i = c_{+,t(i)}`). Flow block, per distinct binary row u
(:math:`r_{un}`: u reaches node n; :math:`s_{un}`: u is predicted at n; :math:`q_{un} = s_{un} w_{n+}`):

.. math::

    r_{u1} = 1,\quad r_{u,2n} \le \textstyle\sum_{c: Z_{uc} = 0} b_{nc},\quad
    r_{u,2n+1} \le \sum_{c: Z_{uc} = 1} b_{nc},\quad r_{un} = r_{u,2n} + r_{u,2n+1} + s_{un},\quad
    s_{un} \le p_n\\
    s_{un} = r_{un}\ (n \in \mathcal L),\qquad q_{un} \le s_{un},\ q_{un} \le w_{n+},\
    q_{un} \ge s_{un} + w_{n+} - 1,\qquad \hat y_u = \textstyle\sum_n q_{un}

With integral :math:`b, p` the flow has one path, so :math:`r, s, q` are integral too.

The monotone constraint is defined on *split-separated leaves* (see :class:`Monotone`), which is exactly what
its rows encode; the other constraints are exact restatements of their definitions.
"""
from __future__ import annotations

import copy
import numbers

import numpy as np
import pyomo.environ as pyo

from ..errors import InputError
from ..tree import HYPERPLANE, Tree

#: default tolerance of :meth:`Constraint.satisfied` (fractions of rates, counts and weights)
TOL = 1e-6
#: at most this many groups in a protected column (a numeric column with many values is not a group label)
MAX_GROUPS = 50


# =============================================================================================== data helpers
class _Info:
    """What a constraint reads from training data: X (original units), label codes, classes, weights, names."""

    def __init__(self, data):
        self.X = np.asarray(data.X, dtype=np.float64)
        self.n, self.p = self.X.shape
        self.task = getattr(data, "task", "classification")
        self.y = np.asarray(data.y)
        self.w = np.asarray(data.sample_weight, dtype=np.float64)
        names = getattr(data, "feature_names", None)
        self.names = None if names is None else [str(c) for c in names]
        if self.task == "classification":
            codec = getattr(data, "codec", None)
            classes = list(codec.classes) if codec is not None else getattr(data, "classes", None)
            self.classes = list(classes) if classes is not None else list(range(int(getattr(data, "n_classes", 0))))
        else:
            self.classes = None


def _column(col, names, p: int, what: str) -> int:
    """The index of column ``col`` (an index or a name among ``names``)."""
    if isinstance(col, (bool, np.bool_)):
        raise InputError(f"{what} must be a column name or index; got {col!r}")
    if isinstance(col, numbers.Integral):
        if not 0 <= int(col) < p:
            raise InputError(f"{what}={col!r} is out of range: X has {p} columns (0..{p - 1})")
        return int(col)
    if isinstance(col, str):
        if names is None:
            raise InputError(f"{what}={col!r} names a column, but X has no column names (pass a DataFrame, or the "
                             "column's index)")
        if col not in names:
            onehot = [c for c in names if c.startswith(f"{col}=")]
            if onehot:
                raise InputError(f"{what}={col!r}: the text column {col!r} was one-hot encoded into {onehot}; name "
                                 "one of those 0/1 columns (its two values are the groups), or give the column as "
                                 "numbers")
            raise InputError(f"{what}={col!r} is not a column of X; columns: {names}")
        return names.index(col)
    raise InputError(f"{what} must be a column name or index; got {type(col).__name__} {col!r}")


def _names_of(X, tree: Tree | None):
    if hasattr(X, "columns"):
        return [str(c) for c in X.columns]
    if tree is not None and tree.feature_names is not None:
        return [str(c) for c in tree.feature_names]
    return None


def _matrix(X) -> np.ndarray:
    return np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=np.float64)


def _weights(w, n: int) -> np.ndarray:
    return np.ones(n) if w is None else np.asarray(w, dtype=np.float64)


def _used_features(tree: Tree) -> set[int]:
    out: set[int] = set()
    for t in range(tree.n_nodes):
        if tree.is_leaf(t):
            continue
        f = int(tree.feature[t])
        if f == HYPERPLANE and tree.coef is not None:
            out.update(int(j) for j in np.nonzero(tree.coef[t])[0])
        elif f >= 0:
            out.add(f)
    return out


def _split_features(tree: Tree, t: int) -> set[int]:
    f = int(tree.feature[t])
    if f == HYPERPLANE and tree.coef is not None:
        return {int(j) for j in np.nonzero(tree.coef[t])[0]}
    return {f} if f >= 0 else set()


def _leaves_under(tree: Tree, t: int) -> list[int]:
    out, stack = [], [t]
    while stack:
        u = stack.pop()
        if tree.is_leaf(u):
            out.append(u)
        else:
            stack += [int(tree.children_left[u]), int(tree.children_right[u])]
    return out


# =============================================================================================== formulation views
def _view(form):
    """The formulation's constraint view (:meth:`Formulation.constraint_view`); InputError when it has none."""
    view_of = getattr(form, "constraint_view", None)
    view = view_of() if callable(view_of) else None
    if view is None:
        raise InputError(f"constraints are supported on OCT, ORT (parallel splits), FlowOCT, BendersOCT and their "
                         f"subclasses (formulations whose constraint_view() describes their model); got "
                         f"{type(form).__name__}")
    return view


def _block(form, name: str) -> pyo.Block:
    m = form.model
    k, base = 1, name
    while m.component(name) is not None:
        k += 1
        name = f"{base}_{k}"
    blk = pyo.Block()
    m.add_component(name, blk)
    return blk


# =============================================================================================== base class
class Constraint:
    """Base class: see the module docstring for the contract."""

    #: block and report name
    name: str = "constraint"
    #: "<=" (value at most bound) or ">=" (value at least bound)
    sense: str = "<="
    #: tasks the constraint applies to
    tasks: tuple = ("classification", "regression")
    #: methods that can honour it, per estimator kind (for error messages)
    _bound_info: _Info | None = None

    @property
    def bound(self) -> float:
        raise NotImplementedError

    def validate(self, data) -> "Constraint":
        """A copy of this constraint bound to ``data`` (names resolved); InputError when it cannot apply."""
        info = data if isinstance(data, _Info) else _Info(data)
        if info.task not in self.tasks:
            raise InputError(f"{self!r} needs {' or '.join(self.tasks)} data; the data is {info.task}")
        out = copy.copy(self)
        out._bound_info = info
        out._bind(info)
        return out

    def _bind(self, info: _Info) -> None:
        pass

    def _info(self) -> _Info:
        """The data this constraint is bound to (rows are added by the bound copy :meth:`validate` returns)."""
        assert self._bound_info is not None, "bind the constraint with validate(data) first"
        return self._bound_info

    def _bound_to(self, form) -> "Constraint":
        return self if self._bound_info is not None else self.validate(form.data)

    def add_to(self, formulation) -> pyo.Block:
        """Add this constraint's rows to ``formulation.model`` on a Block named after it; returns the Block.

        The formulation's ``warm_start(tree)`` then also sets the constraint's own variables (the per-row
        predictions, the routing block, the feature-use indicators) from the tree, so a start sets every
        variable of the model.
        """
        bound = self._bound_to(formulation)
        view = _view(formulation)
        blk = _block(formulation, self.name)
        bound._rows(view, blk)
        # extract() tidies the decoded tree: a step that breaks this constraint on the training data is not taken
        info = bound._info()
        y = info.y if info.task != "classification" or not info.classes else np.asarray(info.classes)[info.y]
        keeps = list(getattr(formulation, "tidy_keeps", ()))
        keeps.append(lambda tree: bound.satisfied(tree, info.X, y, info.w))
        formulation.tidy_keeps = keeps
        return blk

    def _rows(self, view, blk) -> None:
        raise NotImplementedError

    def value(self, tree: Tree, X, y=None, sample_weight=None) -> float:
        raise NotImplementedError

    def satisfied(self, tree: Tree, X, y=None, sample_weight=None, tol: float = TOL) -> bool:
        v = self.value(tree, X, y, sample_weight)
        return bool(v <= self.bound + tol) if self.sense == "<=" else bool(v >= self.bound - tol)

    def describe(self) -> str:
        return f"{self.name} {self.sense} {self.bound:g}"

    def __repr__(self) -> str:
        fields = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in fields.items())})"

    def _names(self, X, tree):
        """Column names of X (a DataFrame's), else the tree's, else those of the data it was bound to."""
        names = _names_of(X, tree) if X is not None else (None if tree.feature_names is None
                                                          else [str(c) for c in tree.feature_names])
        if names is None and self._bound_info is not None:
            names = self._bound_info.names
        return names

    def _column_for(self, col, X, tree, what):
        p = tree.n_features if tree.n_features is not None else _matrix(X).shape[1]
        return _column(col, self._names(X, tree), int(p), what)


# =============================================================================================== features
def _feature_list(features, info: _Info, who: str) -> list[int]:
    if isinstance(features, (str, numbers.Integral)):
        features = [features]
    try:
        feats = list(features)
    except TypeError:
        raise InputError(f"{who}: features must be a list of column names or indices; got {features!r}") from None
    if not feats:
        raise InputError(f"{who}: features is empty")
    return sorted({_column(f, info.names, info.p, f"{who}: feature") for f in feats})


def _used_vars(view, blk, features: list[int]) -> dict:
    """u[j] >= (node splits on j) for every node: u[j] = 1 when feature j is used anywhere."""
    terms = {j: view.split_terms(j) for j in features}
    feats = [j for j in features if terms[j]]
    blk.used = pyo.Var(feats, domain=pyo.Binary)
    blk.mark_used = pyo.ConstraintList()
    for j in feats:
        for _, expr in terms[j]:
            blk.mark_used.add(blk.used[j] >= expr)

    def start():   # at a warm start: u[j] = 1 when a node splits on j
        for j in feats:
            values = (pyo.value(e, exception=False) or 0.0 for _, e in terms[j])
            blk.used[j].set_value(float(max(values, default=0.0) > 0.5))

    view.add_start(start)
    return {j: blk.used[j] for j in feats}


class _CountBound(Constraint):
    """A constraint whose bound is a count ``k`` given at construction (an integer >= 0)."""

    k: int

    def __init__(self, k: int):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
            raise InputError(f"{type(self).__name__}: k must be an integer >= 0; got {k!r}")
        self.k = int(k)

    @property
    def bound(self):
        return float(self.k)


class MaxFeatures(_CountBound):
    r"""At most ``k`` distinct features used by the tree's splits.

    .. math:: u_j \ge (\text{node } t \text{ splits on } j)\ \forall j, t,\qquad \textstyle\sum_j u_j \le k,
        \qquad u_j \in \{0, 1\}

    ("node t splits on j" is :math:`a_{jt}` on the Bertsimas–Dunn block, :math:`\sum_{c \in C(j)} b_{tc}` on the
    flow block, :math:`C(j)` the binary columns of feature j.) ``value``: the number of features used.
    """

    name = "max_features"

    def _rows(self, view, blk):
        used = _used_vars(view, blk, list(range(self._bound_info.p)))
        blk.budget = pyo.Constraint(expr=sum(used.values()) <= self.k) if used else pyo.Constraint.Skip

    def value(self, tree, X=None, y=None, sample_weight=None):
        return float(len(_used_features(tree)))


class FeatureCost(Constraint):
    r"""A budget on the cost of the features the tree uses (each feature's cost paid once, however often used).

    .. math:: u_j \ge (\text{node } t \text{ splits on } j)\ \forall j, t,\qquad
        \textstyle\sum_j \text{cost}_j\, u_j \le \text{budget}

    Parameters
    ----------
    costs : dict {column name or index: cost} or sequence of one cost per column
        Non-negative costs; columns missing from a dict cost 0.
    budget : float >= 0
    """

    name = "feature_cost"
    budget: float

    def __init__(self, costs, budget: float):
        if isinstance(budget, bool) or not isinstance(budget, numbers.Real) or not np.isfinite(budget) or budget < 0:
            raise InputError(f"FeatureCost: budget must be a finite number >= 0; got {budget!r}")
        if not isinstance(costs, dict):
            try:
                costs = list(costs)
            except TypeError:
                raise InputError(f"FeatureCost: costs must be a dict {{column: cost}} or a list of costs; got "
                                 f"{costs!r}") from None
        vals = costs.values() if isinstance(costs, dict) else costs
        for v in vals:
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
                raise InputError(f"FeatureCost: every cost must be a finite number >= 0; got {v!r}")
        self.costs: dict | list = costs
        self.budget = float(budget)

    @property
    def bound(self):
        return self.budget

    def _cost_vector(self, names, p) -> np.ndarray:
        c = np.zeros(p)
        if isinstance(self.costs, dict):
            for col, v in self.costs.items():
                c[_column(col, names, p, "FeatureCost: costs key")] += float(v)
        else:
            if len(self.costs) != p:
                raise InputError(f"FeatureCost: costs has {len(self.costs)} entries but X has {p} columns")
            c[:] = [float(v) for v in self.costs]
        return c

    def _bind(self, info):
        self._c = self._cost_vector(info.names, info.p)

    def _rows(self, view, blk):
        feats = [j for j in range(self._bound_info.p) if self._c[j] > 0]
        used = _used_vars(view, blk, feats)
        if used:
            blk.budget = pyo.Constraint(expr=sum(float(self._c[j]) * u for j, u in used.items()) <= self.budget)

    def value(self, tree, X=None, y=None, sample_weight=None):
        names = self._names(X, tree)
        p = tree.n_features if tree.n_features is not None else (_matrix(X).shape[1] if X is not None else None)
        c = self._c if p is None else self._cost_vector(names, int(p))
        return float(sum(c[j] for j in _used_features(tree)))


class ForbidFeatures(Constraint):
    r"""No split on the given features (at the given depths; the root has depth 0).

    .. math:: (\text{node } t \text{ splits on } j) = 0 \qquad \forall j \in F,\ t:\ \operatorname{depth}(t) \in D

    Depths are those of the returned tree, which is tidied (a split with an empty side is removed, moving the
    subtree below it up a level), so with ``at_depths`` a node at or above the deepest named depth splits only
    when rows reach both children (:math:`d_t \le \sum_{s \in \mathcal L(2t)} l_s` and the same for
    :math:`2t + 1`; on the flow block the routing block's :math:`\sum_u r_{u,2n}` and :math:`\sum_u r_{u,2n+1}`).

    ``value``: the number of splits that break it.
    """

    name = "forbid_features"

    def __init__(self, features, at_depths=None):
        self.features = features
        if at_depths is not None:
            if isinstance(at_depths, numbers.Integral):
                at_depths = [at_depths]
            at_depths = list(at_depths)
            for d in at_depths:
                if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
                    raise InputError(f"ForbidFeatures: at_depths must hold integers >= 0 (the root is depth 0); got "
                                     f"{d!r}")
        self.at_depths = at_depths

    @property
    def bound(self):
        return 0.0

    def _bind(self, info):
        self._f = _feature_list(self.features, info, "ForbidFeatures")

    def _rows(self, view, blk):
        blk.rows = pyo.ConstraintList()
        for j in self._f:
            for t, expr in view.split_terms(j):
                if self.at_depths is None or view.depth_of(t) in self.at_depths:
                    blk.rows.add(expr == 0)
        if self.at_depths is not None:
            # The returned tree is tidied: a split that sends every training row one way is removed and the
            # subtree below it moves up a level, so the depths the constraint names would be judged on another
            # tree than the model's. A node at or above the deepest named depth splits only when rows reach
            # both of its children (any tree without such void splits stays feasible; tidying then keeps depths).
            deepest = max(self.at_depths, default=-1)
            blk.both_sides = pyo.ConstraintList()
            for t in view.nodes:
                if view.depth_of(t) <= deepest:
                    split, left, right = view.split_sides(t)
                    blk.both_sides.add(split <= left)
                    blk.both_sides.add(split <= right)

    def value(self, tree, X=None, y=None, sample_weight=None):
        p = tree.n_features if tree.n_features is not None else _matrix(X).shape[1]
        feats = set(_feature_list(self.features, _NamesOnly(self._names(X, tree), p), "ForbidFeatures"))
        depth = tree.node_depths()
        bad = 0
        for t in range(tree.n_nodes):
            if not tree.is_leaf(t) and (self.at_depths is None or depth[t] in self.at_depths):
                bad += bool(_split_features(tree, t) & feats)
        return float(bad)


class _NamesOnly:
    def __init__(self, names, p):
        self.names = None if names is None else [str(s) for s in names]
        self.p = int(p)


# =============================================================================================== monotone
class Monotone(Constraint):
    r"""The tree's output is monotone (``direction=+1``: non-decreasing, ``-1``: non-increasing) along a feature,
    on **split-separated leaves**.

    The output of a leaf is its value (regression) or its positive-class indicator (binary classification:
    1 when the leaf predicts the positive class). Two leaves s, t are *separated along j* when their lowest
    common ancestor m splits on feature j, s below its left child (:math:`x_j < \theta_m`) and t below its
    right child. The constraint is :math:`\text{direction}\cdot(f_t - f_s) \ge 0` for every such pair.

    It implies that the tree function is monotone in :math:`x_j` (two inputs that differ only in :math:`x_j`
    part at a node splitting on j, the smaller one going left), and is what the model encodes exactly; it is
    slightly stronger than monotonicity of the function, which also allows a violating pair whose boxes do
    not overlap in the other features. Rows (Bertsimas–Dunn block; :math:`f_t = c_{+t}` or :math:`\beta_t`,
    :math:`M` = 1 or the range of y; unused leaves, :math:`l_t = 0`, have no rows):

    .. math:: \text{direction}\,(f_s - f_t) \le M\,(1 - a_{jm}) + M\,(1 - l_s) + M\,(1 - l_t)
        \qquad \forall m, s \in \mathcal L(2m), t \in \mathcal L(2m + 1)

    On the flow block prediction nodes n (:math:`p_n = 1`) play the leaves and :math:`\sum_{c \in C(j)} b_{mc}`
    replaces :math:`a_{jm}`. ``value``: the largest violation over the tree's separated pairs (0 when
    monotone).
    """

    name = "monotone"

    def __init__(self, feature, direction: int = 1, positive=None):
        if direction not in (1, -1) or isinstance(direction, bool):
            raise InputError(f"Monotone: direction must be +1 (non-decreasing) or -1 (non-increasing); got "
                             f"{direction!r}")
        if not isinstance(feature, (str, numbers.Integral)) or isinstance(feature, bool):
            raise InputError(f"Monotone: feature must be a column name or index; got {feature!r}")
        self.feature = feature
        self.direction = int(direction)
        self.positive = positive

    @property
    def bound(self):
        return 0.0

    def _bind(self, info):
        self._j = _column(self.feature, info.names, info.p, "Monotone: feature")
        self._pos = None
        if info.task == "classification":
            if len(info.classes) != 2:
                raise InputError(f"Monotone on a classifier needs binary classification (a leaf's score is 1 for the "
                                 f"positive class); y has {len(info.classes)} classes")
            self._pos = 1
            if self.positive is not None:
                match = [k for k, c in enumerate(info.classes) if c == self.positive or str(c) == str(self.positive)]
                if not match:
                    raise InputError(f"Monotone: positive={self.positive!r} is not a class of y; classes: "
                                     f"{info.classes}")
                self._pos = match[0]

    def _rows(self, view, blk):
        terms = dict(view.split_terms(self._j))
        M = view.score_range()
        s_ = float(self.direction)
        blk.rows = pyo.ConstraintList()
        for m, s, t in view.separated_pairs():
            if m not in terms:
                continue
            blk.rows.add(s_ * (view.score(s, self._pos) - view.score(t, self._pos))
                         <= M * (1 - terms[m]) + M * (1 - view.used(s)) + M * (1 - view.used(t)))

    def _scores(self, tree: Tree, y=None) -> np.ndarray:
        if tree.task == "classification":
            labels = np.asarray(tree._labels())
            classes = list(tree.classes) if tree.classes is not None else [0, 1]
            if self.positive is None:
                pos = 1
            else:
                pos = [k for k, c in enumerate(classes) if c == self.positive or str(c) == str(self.positive)][0]
            return (labels == pos).astype(np.float64)
        return np.asarray(tree.value[:, 0], dtype=np.float64)

    def value(self, tree, X=None, y=None, sample_weight=None):
        j = self._column_for(self.feature, X, tree, "Monotone: feature")
        f = self._scores(tree)
        worst = 0.0
        for m in range(tree.n_nodes):
            if tree.is_leaf(m) or j not in _split_features(tree, m):
                continue
            L = _leaves_under(tree, int(tree.children_left[m]))
            R = _leaves_under(tree, int(tree.children_right[m]))
            for s in L:
                for t in R:
                    worst = max(worst, self.direction * (f[s] - f[t]))
        return float(worst)


# =============================================================================================== leaf support
class MinLeafPerClass(_CountBound):
    r"""Every non-empty leaf holds at least ``k`` training rows of the class it predicts.

    .. math:: \textstyle\sum_{i: y_i = c} z_{it} \ge k\, c_{ct} \qquad \forall c, t \in \mathcal T_L

    (on the flow block: :math:`\sum_u n_{uc}\, s_{un} \ge k\,(w_{nc} - 1 + e_n)`, :math:`e_n \ge s_{un}` marking a
    node that holds rows). ``value``: the smallest such count over the non-empty leaves.
    """

    name = "min_leaf_per_class"
    sense = ">="
    tasks = ("classification",)

    def _rows(self, view, blk):
        info = self._bound_info
        blk.rows = pyo.ConstraintList()
        for t in view.prediction_nodes():
            for c in range(len(info.classes)):
                cnt = view.count_expr(t, (info.y == c).astype(np.float64))
                if view.labels_mark_nonempty:
                    blk.rows.add(cnt >= self.k * view.label(t, c))
                else:
                    blk.rows.add(cnt >= self.k * (view.label(t, c) - 1 + view.nonempty(t)))

    def value(self, tree, X, y=None, sample_weight=None):
        leaf = tree.apply(_matrix(X))
        labels = np.asarray(tree.predict(_matrix(X)))
        y = np.asarray(y)
        out = np.inf
        for t in np.unique(leaf):
            rows = leaf == t
            out = min(out, float(np.sum(y[rows] == labels[rows][0])))
        return float(out) if np.isfinite(out) else 0.0


class MinLeafWeight(Constraint):
    r"""Every non-empty leaf holds training rows of total sample weight at least ``w``.

    .. math:: \textstyle\sum_i w_i z_{it} \ge w\, l_t \quad \forall t \in \mathcal T_L
        \qquad (\text{flow: } \sum_u W_u s_{un} \ge w\, e_n)

    ``value``: the smallest leaf weight over the non-empty leaves.
    """

    name = "min_leaf_weight"
    sense = ">="

    def __init__(self, w: float):
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not np.isfinite(w) or w < 0:
            raise InputError(f"MinLeafWeight: w must be a finite number >= 0; got {w!r}")
        self.w = float(w)

    @property
    def bound(self):
        return self.w

    def _bind(self, info):
        total = float(info.w.sum())
        if self.w > total + TOL:
            raise InputError(f"MinLeafWeight: w={self.w:g} exceeds the total sample weight {total:g}; no tree, not even "
                             "the single leaf, satisfies it")

    def _rows(self, view, blk):
        info = self._bound_info
        blk.rows = pyo.ConstraintList()
        for t in view.prediction_nodes():
            blk.rows.add(view.count_expr(t, info.w) >= self.w * view.nonempty(t))

    def value(self, tree, X, y=None, sample_weight=None):
        Xm = _matrix(X)
        leaf = tree.apply(Xm)
        w = _weights(sample_weight, Xm.shape[0])
        sums = np.bincount(leaf, weights=w, minlength=tree.n_nodes)
        used = np.unique(leaf)
        return float(sums[used].min()) if len(used) else 0.0

