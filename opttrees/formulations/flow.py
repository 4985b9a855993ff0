"""FlowOCT (Aghaei, Gómez, Vayanos 2021): the strong max-flow formulation on binary split columns.

Each sample sends at most one unit of flow from a source through the tree to a sink; an arc to a child is
open only if the node's chosen column sends the sample that way, and the arc to the sink only if the node
predicts the sample's label. The flow equals 1 iff the sample is classified correctly, and the LP
relaxation is much tighter than big-M routing (no big-M at all). The model is written out in
:class:`FlowOCT`'s docstring.

Shared pieces used by BendersOCT and RobustOCT live here too:

- :class:`FlowStructure` — the tree block ``b[n, c]`` (node n branches on column c), ``p[n]`` (n predicts),
  ``w[n, k]`` (n predicts class k) on a complete tree with BFS numbering 1..2^(d+1)-1 (children 2n, 2n+1);
- routing of binary rows through an incumbent, and min-cut expressions (the Benders cut);
- decoding to a :class:`~opttrees.tree.Tree` in original units.

Columns (:mod:`opttrees.data.binarized`): ``Z[i, c] = 1`` means sample i goes **right** on column c. A column
decodes to a split ``x_j < t`` (left iff true), so ``Z[i, c] = 1[x_ij >= t]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data.binarized import BinarizedData
from ..params import check_param
from ..errors import InputError, VerificationError
from ..objectives import class_counts
from ..params import check_depth as _check_depth
from ..tree import LEAF, Tree
from .base import Formulation
from .constraint_view import FlowConstraintView

VERIFY_TOL = 1e-5


# ---------------------------------------------------------------------------------------------- helpers
def objective_weights(y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None, objective: str) -> np.ndarray:
    """Per-sample weights s_i: the sample weights (accuracy) or class-balanced ones with the same total."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if objective == "accuracy":
        return w
    if objective == "balanced_accuracy":
        per_class = np.bincount(y, weights=w, minlength=n_classes)
        present = per_class > 0
        scale = np.zeros(n_classes)
        scale[present] = w.sum() / (present.sum() * per_class[present])
        return w * scale[y]
    raise InputError(f"objective must be 'accuracy' or 'balanced_accuracy'; got {objective!r}")


def check_depth(depth) -> int:
    return _check_depth(depth, 8, "too deep for a complete-tree flow model")

def check_regularization(lam) -> float:
    """The flow papers' lambda in [0, 1) (the shared ``regularization`` rule), as a float."""
    return float(check_param("regularization", lam))


@dataclass
class Incumbent:
    """A tree on the complete-tree layout as plain arrays (what separators and decoders work on)."""

    branch: np.ndarray   # (n_nodes+1,) column index at branching nodes, -1 elsewhere (index 0 unused)
    predict: np.ndarray  # (n_nodes+1,) class index at prediction nodes, -1 elsewhere

    @property
    def n_splits(self) -> int:
        return int((self.branch >= 0).sum())


class FlowStructure:
    """The b/p/w tree block on a complete binary tree of depth ``depth`` over ``n_cols`` binary columns."""

    def __init__(self, depth: int, n_cols: int, n_classes: int):
        self.depth = depth
        self.n_cols = n_cols
        self.n_classes = n_classes
        self.internal = list(range(1, 2 ** depth))
        self.leaves = list(range(2 ** depth, 2 ** (depth + 1)))
        self.nodes = self.internal + self.leaves
        self.cols = list(range(n_cols))
        self.classes = list(range(n_classes))

    @staticmethod
    def ancestors(n: int) -> list[int]:
        out = []
        while n > 1:
            n //= 2
            out.append(n)
        return out

    def build(self, m: pyo.Block) -> None:
        """Add b, p, w and the structure rows to block ``m`` (a formulation's model or a block of a bigger one)."""
        m.N = pyo.Set(initialize=self.internal, ordered=True)
        m.L = pyo.Set(initialize=self.leaves, ordered=True)
        m.NODES = pyo.Set(initialize=self.nodes, ordered=True)
        m.C = pyo.Set(initialize=self.cols, ordered=True)
        m.K = pyo.Set(initialize=self.classes, ordered=True)
        m.b = pyo.Var(m.N, m.C, within=pyo.Binary)
        m.p = pyo.Var(m.NODES, within=pyo.Binary)
        m.w = pyo.Var(m.NODES, m.K, within=pyo.Binary)
        cols = self.cols

        def branch_or_predict(m, n):
            terms = [m.b[n, c] for c in cols] + [m.p[n]] + [m.p[a] for a in self.ancestors(n)]
            return LinearExpression(terms) == 1

        def leaf_predict(m, n):
            return LinearExpression([m.p[n]] + [m.p[a] for a in self.ancestors(n)]) == 1

        m.branch_or_predict = pyo.Constraint(m.N, rule=branch_or_predict)
        m.leaf_predict = pyo.Constraint(m.L, rule=leaf_predict)
        m.one_label = pyo.Constraint(m.NODES, rule=lambda m, n: LinearExpression([m.w[n, k] for k in self.classes]) == m.p[n])

    # ----------------------------------------------------------------------------------- incumbents
    def incumbent(self, m, value=pyo.value) -> Incumbent:
        """Read the (integer) tree from the model through ``value(var)`` (rounded)."""
        size = 2 ** (self.depth + 1)
        branch = -np.ones(size, dtype=np.int64)
        predict = -np.ones(size, dtype=np.int64)
        # walk from the root so unreachable nodes are ignored
        stack = [1]
        while stack:
            n = stack.pop()
            if value(m.p[n]) > 0.5 or n in m.L:
                ks = [k for k in self.classes if value(m.w[n, k]) > 0.5]
                predict[n] = ks[0] if ks else 0
                continue
            cs = [c for c in self.cols if value(m.b[n, c]) > 0.5]
            if not cs:  # not integral / inconsistent; treat as prediction of class 0
                predict[n] = 0
                continue
            branch[n] = cs[0]
            stack += [2 * n, 2 * n + 1]
        return Incumbent(branch, predict)

    def route(self, inc: Incumbent, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Prediction node of every row of the binary matrix Z, and the (n, depth+1) path (0-padded)."""
        n = Z.shape[0]
        node = np.ones(n, dtype=np.int64)
        path = np.zeros((n, self.depth + 1), dtype=np.int64)
        path[:, 0] = 1
        done = inc.predict[node] >= 0
        for lev in range(1, self.depth + 1):
            act = ~done
            if not act.any():
                break
            nd = node[act]
            col = inc.branch[nd]
            node[act] = 2 * nd + Z[np.nonzero(act)[0], col]
            path[act, lev] = node[act]
            done = inc.predict[node] >= 0
        return node, path

    def cut_coefficients(self, inc: Incumbent, Z: np.ndarray, y: np.ndarray, path: np.ndarray,
                         weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Sum over rows of the min-cut value of each row's decision path, as coefficient arrays.

        For row i with path n_1..n_k: w[n_j, y_i] for every path node, the off-path child's capacity
        ``sum_{c: Z[i,c] != dir_j} b[n_j, c]`` at every non-final node, and both children (all b) at a
        final internal node. Returns (coef_b (size, C), coef_w (size, K)), indexed by node id.
        """
        size = 2 ** (self.depth + 1)
        cb = np.zeros((size, self.n_cols))
        cw = np.zeros((size, self.n_classes))
        wts = np.ones(len(y)) if weights is None else weights
        first_internal_leaf = 2 ** self.depth
        for lev in range(self.depth + 1):
            nd = path[:, lev]
            on = nd > 0
            if not on.any():
                continue
            rows = np.nonzero(on)[0]
            nd = nd[on]
            np.add.at(cw, (nd, y[rows]), wts[rows])
            nxt = path[rows, lev + 1] if lev < self.depth else np.zeros(len(rows), dtype=np.int64)
            internal = nd < first_internal_leaf
            final = nxt == 0
            # final internal node: every column of that node is in the cut
            fi = internal & final
            if fi.any():
                np.add.at(cb, nd[fi], wts[rows[fi]][:, None] * np.ones(self.n_cols))
            mid = ~final
            if mid.any():
                went_right = (nxt[mid] % 2 == 1).astype(np.int8)
                off = (Z[rows[mid]] != went_right[:, None]).astype(np.float64)
                np.add.at(cb, nd[mid], wts[rows[mid]][:, None] * off)
        return cb, cw

    def expression(self, m, cb: np.ndarray, cw: np.ndarray):
        """Linear expression sum cb[n,c] b[n,c] + sum cw[n,k] w[n,k] (only nonzero terms)."""
        coefs, vars_ = [], []
        for n, c in zip(*np.nonzero(cb)):
            if n in m.N:
                coefs.append(float(cb[n, c]))
                vars_.append(m.b[int(n), int(c)])
        for n, k in zip(*np.nonzero(cw)):
            coefs.append(float(cw[n, k]))
            vars_.append(m.w[int(n), int(k)])
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=vars_)

    # ----------------------------------------------------------------------------------- Tree <-> incumbent
    def to_tree(self, inc: Incumbent, split_of_col, X: np.ndarray, y: np.ndarray, n_classes: int,
                sample_weight=None, classes=None, feature_names=None, n_features=None) -> Tree:
        """Decode to a Tree in original units; leaf class counts come from routing the training data."""
        cl: list[int] = []
        cr: list[int] = []
        feat: list[int] = []
        thr: list[float] = []
        lab: list[int] = []
        index: dict[int, int] = {}   # flow node -> Tree node

        def rec(n):
            t = len(feat)
            index[n] = t
            cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); lab.append(0)
            if inc.branch[n] >= 0:
                j, tt = split_of_col(int(inc.branch[n]))
                feat[t], thr[t] = j, tt
                cl[t] = rec(2 * n)
                cr[t] = rec(2 * n + 1)
            else:
                lab[t] = int(inc.predict[n])
            return t

        rec(1)
        k = len(feat)
        tree = Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), np.zeros((k, n_classes)),
                    task="classification", label=np.asarray(lab),
                    classes=list(classes) if classes is not None else None, feature_names=feature_names,
                    n_features=n_features if n_features is not None else X.shape[1])
        leaf = tree.apply(X)
        tree.value = class_counts(leaf, y, n_classes, k, sample_weight)
        tree.extras = {"flow_node": np.array(sorted(index, key=lambda n: index[n]))}
        return tree

    def from_tree(self, tree: Tree, col_of_split) -> Incumbent:
        """Place a Tree (depth <= self.depth) on the complete layout; splits mapped by ``col_of_split``."""
        if tree.task != "classification" or tree.label is None:
            raise InputError("a warm start must be a classification tree with leaf labels")
        if tree.depth > self.depth:
            raise InputError(f"warm-start tree has depth {tree.depth} > max_depth {self.depth}")
        size = 2 ** (self.depth + 1)
        branch = -np.ones(size, dtype=np.int64)
        predict = -np.ones(size, dtype=np.int64)

        def rec(t, n):
            if tree.is_leaf(t):
                predict[n] = int(tree.label[t])
                return
            if tree.feature[t] < 0:
                raise InputError("warm-start tree has a hyperplane split; flow models need parallel splits")
            branch[n] = col_of_split(int(tree.feature[t]), float(tree.threshold[t]))
            rec(tree.children_left[t], 2 * n)
            rec(tree.children_right[t], 2 * n + 1)

        rec(0, 1)
        return Incumbent(branch, predict)

    def set_values(self, m, inc: Incumbent) -> None:
        """Set b, p, w from an incumbent (pruned nodes get p = 0, w = 0, b = 0)."""
        for n in self.internal:
            for c in self.cols:
                m.b[n, c].set_value(1 if inc.branch[n] == c else 0)
        for n in self.nodes:
            m.p[n].set_value(1 if inc.predict[n] >= 0 else 0)
            for k in self.classes:
                m.w[n, k].set_value(1 if inc.predict[n] == k else 0)


def aggregate_rows(Z: np.ndarray, y: np.ndarray, s: np.ndarray):
    """Merge identical (row, label) pairs, summing weights: same optimum, smaller model."""
    key = np.concatenate([Z.astype(np.int64), y[:, None]], axis=1)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.ravel()
    return uniq[:, :-1].astype(np.int8), uniq[:, -1].astype(np.int64), np.bincount(inv, weights=s), inv


# ---------------------------------------------------------------------------------------------- FlowOCT
class FlowOCT(Formulation):
    r"""FlowOCT (Aghaei, Gómez, Vayanos 2021) on :class:`~opttrees.data.binarized.BinarizedData`.

    Build with ``FlowOCT(BinarizedData.from_prepared(data, binarizer), max_depth, regularization)`` (or
    ``BinarizedData.from_binary(Z, y)`` on a raw 0/1 matrix). Numbers refer to the robust-trees paper
    (Justin et al.), whose tree block (2) and flow graph (4)–(5) at zero shift are this model
    (docs/design-notes.md §4); :math:`\lambda` is ``regularization`` (the paper's :math:`R = 1 - \lambda`),
    :math:`s_i` the sample weights (accuracy) or class-balanced ones with the same total.

    .. math::

        \max\; & (1 - \lambda) \sum_i s_i\, z^i_{s,1} - \lambda \sum_{n \in \mathcal N} \sum_c b_{nc}
            && \text{(4) with the regulariser of §7.1.3}\\
        \text{s.t.}\; & \textstyle\sum_c b_{nc} + p_n + \sum_{m \in \mathcal A(n)} p_m = 1
            && \forall n \in \mathcal N \quad (2a)\\
        & \textstyle p_n + \sum_{m \in \mathcal A(n)} p_m = 1 && \forall n \in \mathcal L \quad (2b)\\
        & \textstyle\sum_k w_{nk} = p_n && \forall n \in \mathcal N \cup \mathcal L \quad (2c)\\
        & z^i_{n,l(n)} \le \textstyle\sum_{c: Z_{ic} = 0} b_{nc},\quad
            z^i_{n,r(n)} \le \sum_{c: Z_{ic} = 1} b_{nc} && \forall i, n \in \mathcal N \quad (5a), (5b)\\
        & z^i_{a(n),n} = z^i_{n,l(n)} + z^i_{n,r(n)} + z^i_{n,t} && \forall i, n \in \mathcal N \quad (5c)\\
        & z^i_{a(n),n} \le w_{n,y_i} \;(n \in \mathcal L),\quad z^i_{n,t} \le w_{n,y_i} \;(n \in \mathcal N)
            && (5d), (5e)\\
        & b, p, w \in \{0, 1\},\; z \in [0, 1] && (2d)\text{–}(2f)

    Model components: the tree block ``b[n, c]``, ``p[n]``, ``w[n, k]`` (:class:`FlowStructure`), the in-flows
    ``z[i, n]`` (``z[i, 1]`` is the source arc), the sink flows ``zt[i, n]`` of internal nodes (a leaf's sink
    flow is its in-flow), ``objective_expr``. Identical (row, label) pairs are merged with summed weights
    (``aggregate=True``) without changing the optimum.
    """

    integer_components = ('b', 'p', 'w')
    dp_exact = True

    def __init__(self, data: BinarizedData, max_depth: int = 2, regularization: float = 0.0,
                 objective: str = "accuracy", aggregate: bool = True, block=None):
        if not isinstance(data, BinarizedData):
            raise InputError(f"{type(self).__name__} needs a BinarizedData (BinarizedData.from_prepared(data, "
                             f"binarizer) or BinarizedData.from_binary(Z, y)); got {type(data).__name__}")
        self.data = data
        self.depth = check_depth(max_depth)
        self.lam = check_regularization(regularization)
        self.s = objective_weights(data.y, data.n_classes, data.sample_weight, objective)
        if aggregate:
            self.Zu, self.yu, self.su, self.inverse = aggregate_rows(self.Z, self.y, self.s)
        else:
            self.Zu, self.yu, self.su, self.inverse = self.Z, self.y, self.s, np.arange(len(self.y))
        self.struct = FlowStructure(self.depth, self.Z.shape[1], self.n_classes)
        self.model = self._new_block(block, type(self).__name__)
        with PauseGC():
            self._build()

    # the data, under the names the separators and research code use
    Z = property(lambda self: self.data.Z, doc="binary split columns (n, C); 1 = right")
    y = property(lambda self: self.data.y, doc="labels 0..K-1")
    X = property(lambda self: self.data.X, doc="original-units features (trees are decoded and re-verified on them)")
    n_classes = property(lambda self: self.data.n_classes)
    sample_weight = property(lambda self: self.data.sample_weight)

    @property
    def max_depth(self) -> int:
        return self.depth

    def split_of_col(self, c: int) -> tuple[int, float]:
        return self.data.split_of_col(c)

    def col_of_split(self, j: int, t: float) -> int:
        return self.data.col_of_split(j, t)

    def _build(self) -> None:
        st, Z, y, m = self.struct, self.Zu, self.yu, self.model
        st.build(m)
        rows = list(range(Z.shape[0]))
        m.I = pyo.Set(initialize=rows, ordered=True)
        m.z = pyo.Var(m.I, m.NODES, bounds=(0.0, 1.0))         # in-flow into node n (z[i,1] = source arc)
        m.zt = pyo.Var(m.I, m.N, bounds=(0.0, 1.0))            # flow from internal node n to the sink
        left_cols = [np.nonzero(Z[i] == 0)[0].tolist() for i in rows]
        right_cols = [np.nonzero(Z[i] == 1)[0].tolist() for i in rows]
        yl = y.tolist()
        idx_n = [(i, n) for i in rows for n in st.internal]
        idx_l = [(i, n) for i in rows for n in st.leaves]
        m.conserve = pyo.Constraint(idx_n, rule=lambda m, i, n: m.z[i, n] == LinearExpression(
            [m.z[i, 2 * n], m.z[i, 2 * n + 1], m.zt[i, n]]))
        m.cap_left = pyo.Constraint(idx_n, rule=lambda m, i, n: m.z[i, 2 * n] <= LinearExpression(
            [m.b[n, c] for c in left_cols[i]]))
        m.cap_right = pyo.Constraint(idx_n, rule=lambda m, i, n: m.z[i, 2 * n + 1] <= LinearExpression(
            [m.b[n, c] for c in right_cols[i]]))
        m.sink_internal = pyo.Constraint(idx_n, rule=lambda m, i, n: m.zt[i, n] <= m.w[n, yl[i]])
        m.sink_leaf = pyo.Constraint(idx_l, rule=lambda m, i, n: m.z[i, n] <= m.w[n, yl[i]])
        self._set_objective(self._accuracy_objective([m.z[i, 1] for i in rows], self.su.tolist()), pyo.maximize)

    def _accuracy_objective(self, correct_vars, weights) -> LinearExpression:
        """(1 - lam) * sum_i weights_i correct_i - lam * sum_{n, c} b[n, c]."""
        st, m, lam = self.struct, self.model, self.lam
        return LinearExpression(constant=0.0,
                                linear_coefs=[(1 - lam) * s for s in weights] + [-lam] * (len(st.internal) * len(st.cols)),
                                linear_vars=list(correct_vars) + [m.b[n, c] for n in st.internal for c in st.cols])

    # ---------------------------------------------------------------------------------------- API
    def incumbent(self, value=pyo.value) -> Incumbent:
        return self.struct.incumbent(self.model, value)

    def incumbent_objective(self, inc: Incumbent) -> float:
        """(1 - lam) * weighted correct - lam * splits, recomputed by routing the training rows."""
        node, _ = self.struct.route(inc, self.Z)
        correct = inc.predict[node] == self.y
        return float((1 - self.lam) * self.s[correct].sum() - self.lam * inc.n_splits)

    def tree_objective(self, tree: Tree) -> float:
        """The objective of a Tree, by routing the original-units training data through it."""
        pred = tree._labels()[tree.apply(self.X)]
        return float((1 - self.lam) * self.s[pred == self.y].sum() - self.lam * tree.n_splits)

    def _warm_start(self, tree: Tree) -> None:
        inc = self.struct.from_tree(tree, self.col_of_split)
        self.struct.set_values(self.model, inc)
        self._set_flows(inc)

    def _set_flows(self, inc: Incumbent) -> None:
        m = self.model
        node, path = self.struct.route(inc, self.Zu)
        correct = inc.predict[node] == self.yu
        for i in range(self.Zu.shape[0]):
            on = set(path[i][path[i] > 0].tolist()) if correct[i] else set()
            for n in self.struct.nodes:
                m.z[i, n].set_value(1.0 if n in on else 0.0)
            for n in self.struct.internal:
                m.zt[i, n].set_value(1.0 if (correct[i] and n == node[i]) else 0.0)

    def _decode(self) -> Tree:
        inc = self.incumbent()
        d = self.data
        tree = self.struct.to_tree(inc, self.split_of_col, d.X, d.y, d.n_classes, d.sample_weight, d.classes,
                                   d.feature_names)
        node, _ = self.struct.route(inc, self.Z)
        if not np.array_equal(tree._labels()[tree.apply(self.X)], inc.predict[node]):
            raise VerificationError("decoded tree routes the training data differently from the binary columns")
        return tree

    # ---------------------------------------------------------------------------------------- what the model says of itself
    def constraint_view(self):
        """Side constraints read the flow block (and add an exact routing of the distinct rows when they need it)."""
        return self._view_of(FlowConstraintView)

    def dp_relaxation(self):
        """The flow objective over the formulation's own binary columns and weights ``s_i`` (no minimum leaf
        size): the DP over those columns searches exactly the trees the model can express."""
        common = self._relaxation_common(FlowOCT)
        if common is None:
            return None
        from ..dp.relaxation import FlowRelaxation

        d = self.data
        return FlowRelaxation(**common, Z=self.Z, X=self.X, split_of_col=self.split_of_col, y=self.y, weights=self.s,
                              n_classes=int(self.n_classes), regularization=float(self.lam), classes=d.classes,
                              feature_names=d.feature_names)

    def verify(self, tree: Tree) -> None:
        """Re-route the training data through the decoded Tree and compare with the solver's objective.

        At a proven optimum they must be equal. A time-limited incumbent may under-count (a flow or g below
        1 for a correct row) but never over-count: a tree scoring less than the solver claims is a bug.
        """
        verify_at_most_as_good(self, tree, "the decoded tree scores")


def verify_at_most_as_good(form, tree: Tree, what: str) -> None:
    """Maximisation models whose incumbent may under-count: the tree may score more than the solver claims,
    never less, and exactly as much at a proven optimum."""
    solver = form.model_objective()
    recomputed = form.tree_objective(tree)
    form.recomputed_objective = recomputed
    tol = VERIFY_TOL * max(1.0, abs(solver))
    proven = bool(getattr(form.last_result, "proven_optimal", False))
    if recomputed < solver - tol or (proven and abs(recomputed - solver) > tol):
        raise VerificationError(f"{type(form).__name__}: solver objective {solver:.9g} but {what} "
                                f"{recomputed:.9g}; this is a formulation bug — please report it")


def greedy_incumbent(Z: np.ndarray, y: np.ndarray, depth: int, n_classes: int, sample_weight=None,
                     random_state: int = 0) -> Incumbent:
    """CART (gini) on the binary columns, placed on the complete layout: a cheap feasible warm start."""
    from sklearn.tree import DecisionTreeClassifier

    size = 2 ** (depth + 1)
    branch = -np.ones(size, dtype=np.int64)
    predict = -np.ones(size, dtype=np.int64)
    if depth == 0 or Z.shape[1] == 0:
        predict[1] = int(np.argmax(np.bincount(y, weights=sample_weight, minlength=n_classes)))
        return Incumbent(branch, predict)
    clf = DecisionTreeClassifier(max_depth=depth, random_state=random_state).fit(Z, y, sample_weight=sample_weight)
    t = clf.tree_
    present = clf.classes_.astype(np.int64)

    def rec(node, n):
        if t.children_left[node] == -1:
            predict[n] = int(present[np.argmax(t.value[node][0])])
            return
        branch[n] = int(t.feature[node])                 # sklearn: x <= 0.5 goes left, i.e. column == 0
        rec(t.children_left[node], 2 * n)
        rec(t.children_right[node], 2 * n + 1)

    rec(0, 1)
    return Incumbent(branch, predict)
