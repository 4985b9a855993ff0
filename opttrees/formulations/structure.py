"""The Bertsimas–Dunn tree encoding shared by OCT, ORT and the SPOT MILP.

Maximal tree of depth D in heap numbering: branch nodes 1..2^D-1, leaves 2^D..2^(D+1)-1, children of t are
2t (left) and 2t+1 (right). Variables: a[j,t] (feature j used at t), b[t] threshold in [0,1], d[t] (t splits),
z[i,t] (point i in leaf t), l[t] (leaf t non-empty). Point i goes left at m iff a_m·x_i < b_m.

The thesis's left-branch row (2.13) is wrong where a node does not split (a=0, b=0 gives 0 <= 0, so points may
go left). We use ``a_m·(x_i + eps - eps_min) + eps_min <= b_m + (1 + eps_max)(1 - z_it)`` which, with a = 0,
forces z_it = 0: every point goes right at a non-splitting node, as the Tree semantics say.

:class:`HyperplaneStructure` is the OCT-H block of model (3.3) (shared by OCT-H and ORT-H): continuous
coefficients with a fixed margin mu, and :meth:`HyperplaneStructure.fit_margin` to make any tree a feasible start.
"""
from __future__ import annotations

import numbers
import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data.prepared import MIN_SAFE_GAP, PreparedData, RankedFeatures, split_between
from ..errors import InputError
from ..params import check_depth as _check_depth
from ..tree import HYPERPLANE, LEAF, Tree


def check_depth(max_depth) -> int:
    return _check_depth(max_depth, 8, "the MIO has n*2^depth binaries; use method='local-search' or 'greedy'")

class BDStructure:
    """Index sets, routing helpers and the Pyomo block for one depth-D tree over ``data``."""

    #: the strict "<" is modelled with the per-feature gaps eps (the hyperplane block uses a fixed margin)
    uses_feature_gaps = True

    def __init__(self, data: RankedFeatures, max_depth: int, min_samples_leaf: int = 1,
                 routing: str = "thesis"):
        if routing not in ("thesis", "aggregated"):
            raise InputError(f"routing must be 'thesis' or 'aggregated'; got {routing!r}")
        self.routing = routing
        self.data = data
        self.D = check_depth(max_depth)
        self.min_samples_leaf = int(min_samples_leaf)
        self.branch = list(range(1, 2 ** self.D))
        self.leaves = list(range(2 ** self.D, 2 ** (self.D + 1)))
        self.J = [int(j) for j in np.nonzero(data.splittable)[0]]
        self.values: list[np.ndarray] | None   # each feature's distinct values (rank scale only)
        if self.uses_feature_gaps:
            # axis-parallel splits route on each feature's rank scale (opttrees.data.prepared.rank_scale): neighbouring
            # distinct values are 1/(distinct values - 1) apart, far above solver tolerances, where the min-max
            # scale put them 1e-6..1e-12 apart on real data (rows violated "feasibly", false optima)
            self.Xr, self.eps, self.values = data.ranks
        else:
            self.Xr, self.eps, self.values = data.Xs, data.eps, None
        eps = self.eps[self.J] if self.J else np.array([1.0])
        self.eps_min, self.eps_max = float(eps.min()), float(eps.max())
        if self.uses_feature_gaps and self.eps_min < MIN_SAFE_GAP:
            import warnings
            warnings.warn(f"a feature has {int(round(1 / self.eps_min)) + 1} distinct values: on the rank scale "
                          f"neighbouring values are {self.eps_min:.1e} apart, close to solver tolerances; points "
                          "may be misrouted (every solution is re-verified)", stacklevel=3)

    # ----------------------------------------------------------------- tree geometry
    def ancestors(self, t: int) -> tuple[list[int], list[int]]:
        """(A_L(t), A_R(t)): ancestors whose left / right branch leads to t."""
        left: list[int] = []
        right: list[int] = []
        while t > 1:
            parent = t // 2
            (left if t % 2 == 0 else right).append(parent)
            t = parent
        return left, right

    def leaves_below(self, t: int) -> list[int]:
        lo, hi = t, t
        while lo < 2 ** self.D:
            lo, hi = 2 * lo, 2 * hi + 1
        return list(range(lo, hi + 1))

    def rightmost_leaf(self, t: int) -> int:
        while t < 2 ** self.D:
            t = 2 * t + 1
        return t

    # ----------------------------------------------------------------- model
    def build(self, blk: pyo.Block) -> None:
        """Add the structure variables and constraints to ``blk`` (call inside an active Pyomo model)."""
        d, X = self.data, self.Xr
        n, J, TB, TL = d.n, self.J, self.branch, self.leaves
        M1 = 1.0 + self.eps_max
        emin = self.eps_min
        with PauseGC():
            blk.a = pyo.Var(J, TB, domain=pyo.Binary)
            blk.b = pyo.Var(TB, bounds=(0.0, 1.0))
            blk.d = pyo.Var(TB, domain=pyo.Binary)
            blk.z = pyo.Var(range(n), TL, domain=pyo.Binary)
            blk.l = pyo.Var(TL, domain=pyo.Binary)
            blk.one_feature = pyo.Constraint(TB, rule=lambda m, t: sum(m.a[j, t] for j in J) == m.d[t])
            blk.threshold_off = pyo.Constraint(TB, rule=lambda m, t: m.b[t] <= m.d[t])
            self._add_leaf_rows(blk)
            Xl = X.tolist()
            epsJ = [float(self.eps[j]) - emin for j in J]
            left_idx, right_idx, zsets = self._routing_sets()

            def left_rule(m, i, t, node):
                xi = Xl[i]
                zs = zsets[t, node]
                coefs = [xi[j] + e for j, e in zip(J, epsJ)] + [-1.0] + [M1] * len(zs)
                vars_ = [m.a[j, node] for j in J] + [m.b[node]] + [m.z[i, u] for u in zs]
                return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=vars_) <= M1 - emin

            def right_rule(m, i, t, node):
                xi = Xl[i]
                zs = zsets[t, node]
                coefs = [xi[j] for j in J] + [-1.0] + [-1.0] * len(zs)
                vars_ = [m.a[j, node] for j in J] + [m.b[node]] + [m.z[i, u] for u in zs]
                return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=vars_) >= -1.0

            blk.route_left = pyo.Constraint(left_idx, rule=left_rule)
            blk.route_right = pyo.Constraint(right_idx, rule=right_rule)

    def _add_leaf_rows(self, blk: pyo.Block) -> None:
        """(2.5), (2.8), (2.6), (2.7): splits only below splits; each point in one leaf; leaf use and size."""
        n, TB, TL = self.data.n, self.branch, self.leaves
        blk.split_below_split = pyo.Constraint(TB[1:], rule=lambda m, t: m.d[t] <= m.d[t // 2])
        blk.one_leaf = pyo.Constraint(range(n), rule=lambda m, i: sum(m.z[i, t] for t in TL) == 1)
        blk.leaf_used = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.z[i, t] <= m.l[t])
        blk.min_leaf = pyo.Constraint(
            TL, rule=lambda m, t: sum(m.z[i, t] for i in range(n)) >= self.min_samples_leaf * m.l[t])

    def _routing_sets(self) -> tuple[list, list, dict]:
        """Index of the left and right routing rows, (point, leaf or child, ancestor), and the z's each row sums.

        ``routing="thesis"``: one row per (point, leaf, ancestor), as in (2.13)/(2.14). ``"aggregated"``: one
        row per (point, ancestor, side) with z summed over the leaves below that side (tighter LP, same integer
        solutions since each point is in exactly one leaf).
        """
        n, TB, TL = self.data.n, self.branch, self.leaves
        if self.routing == "thesis":
            left_idx: list[tuple[int, int, int]] = []
            right_idx: list[tuple[int, int, int]] = []
            for t in TL:
                al, ar = self.ancestors(t)
                left_idx.extend((i, t, m) for m in al for i in range(n))
                right_idx.extend((i, t, m) for m in ar for i in range(n))
            zsets = {(t, m): [t] for t in TL for m in range(1, 2 ** self.D)}
        else:
            left_idx = [(i, 2 * m, m) for m in TB for i in range(n)]
            right_idx = [(i, 2 * m + 1, m) for m in TB for i in range(n)]
            zsets = {(c, m): self.leaves_below(c) for m in TB for c in (2 * m, 2 * m + 1)}
        return left_idx, right_idx, zsets

    def complexity(self, blk: pyo.Block):
        """The complexity C of the objective: the number of splits, sum of d_t."""
        return sum(blk.d[t] for t in self.branch)

    # ----------------------------------------------------------------- warm start
    def normalise(self, tree: Tree) -> Tree:
        """Collapse splits that send no training point to one side (the MIO cannot express them)."""
        if tree.feature[tree.children_left != LEAF].min(initial=0) == HYPERPLANE:
            raise InputError("a hyperplane tree cannot warm-start a parallel-split formulation")
        X = self.data.X

        def rec(t, idx):
            if tree.is_leaf(t):
                return ("leaf", t)
            j = tree.feature[t]
            go_left = X[idx, j] < tree.threshold[t]
            li, ri = idx[go_left], idx[~go_left]
            if not self.data.splittable[j] or len(li) == 0:
                return rec(tree.children_right[t], ri)
            if len(ri) == 0:
                return rec(tree.children_left[t], li)
            return ("split", t, rec(tree.children_left[t], li), rec(tree.children_right[t], ri))

        return _rebuild(tree, rec(0, np.arange(X.shape[0])))

    def set_from_tree(self, blk: pyo.Block, tree: Tree) -> tuple[Tree, np.ndarray, dict]:
        """Set a, b, d, z, l from a (normalised) parallel-split tree.

        Returns the normalised tree, each point's heap leaf, and a map heap leaf -> tree leaf node.
        """
        tree = self.normalise(tree)
        if tree.depth > self.D:
            raise InputError(f"the warm-start tree has depth {tree.depth} > max_depth={self.D}")
        d = self.data
        for t in self.branch:
            blk.d[t].set_value(0)
            blk.b[t].set_value(0.0)
            for j in self.J:
                blk.a[j, t].set_value(0)
        heap_of: dict[int, int] = {}

        def rec(node, h):
            if tree.is_leaf(node):
                heap_of[node] = self.rightmost_leaf(h)
                return
            j = int(tree.feature[node])
            thr = tree.threshold[node]
            col = d.X[:, j]
            right_vals = self.Xr[col >= thr, j]
            blk.d[h].set_value(1)
            blk.a[j, h].set_value(1)
            blk.b[h].set_value(float(right_vals.min()))
            rec(tree.children_left[node], 2 * h)
            rec(tree.children_right[node], 2 * h + 1)

        rec(0, 1)
        return self._set_leaves(blk, tree, heap_of)

    def _set_leaves(self, blk: pyo.Block, tree: Tree, heap_of: dict) -> tuple[Tree, np.ndarray, dict]:
        """Set z and l from the tree's routing of the training data (tree leaf ``node`` sits at ``heap_of[node]``)."""
        d = self.data
        leaf_node = tree.apply(d.X)
        heap_leaf = np.array([heap_of[int(v)] for v in leaf_node])
        for t in self.leaves:
            blk.l[t].set_value(int((heap_leaf == t).any()))
        z = np.zeros((d.n, len(self.leaves)), dtype=int)
        z[np.arange(d.n), heap_leaf - 2 ** self.D] = 1
        for i in range(d.n):
            for k, t in enumerate(self.leaves):
                blk.z[i, t].set_value(int(z[i, k]))
        tree_leaf_of_heap = {h: node for node, h in heap_of.items()}
        return tree, heap_leaf, tree_leaf_of_heap

    # ----------------------------------------------------------------- decoding
    def decode(self, blk: pyo.Block, keep_unused: bool = True) -> tuple[dict, np.ndarray]:
        """Read the split structure: returns ({heap node: (feature, threshold in original units)}, point leaves).

        ``keep_unused`` only matters for hyperplane splits (:meth:`HyperplaneStructure.decode`); it is taken here
        so that a formulation on either structure decodes alike."""
        d = self.data
        splits = {}
        for t in self.branch:
            if pyo.value(blk.d[t]) > 0.5:
                j = max(self.J, key=lambda jj: pyo.value(blk.a[jj, t]))
                splits[t] = (j, self._threshold(j, float(pyo.value(blk.b[t]))))
        zval = np.array([[pyo.value(blk.z[i, t]) for t in self.leaves] for i in range(d.n)])
        heap_leaf = np.argmax(zval, axis=1) + 2 ** self.D
        return splits, heap_leaf

    def _threshold(self, j: int, b: float) -> float:
        """The split ``x_j < t`` in original units for the MIO's threshold ``b`` on the rank scale.

        Values whose rank lies below ``b - eps_j / 2`` go left (the rows put the left side at least eps_j below
        b, the right side at b or above); t is the midpoint of the largest left and the smallest right value
        (:func:`opttrees.data.prepared.split_between`, exact in floating point). With one side empty, t sends every
        training value to the occupied side.
        """
        assert self.values is not None  # parallel splits are on the rank scale
        u = self.values[j]
        ranks = np.arange(len(u)) * self.eps[j]          # the rank scale's values, as in self.Xr
        k = int(np.searchsorted(ranks, b - self.eps[j] / 2))   # values u[:k] go left
        if k <= 0:
            return float(u[0])
        if k >= len(u):
            return float(np.nextafter(u[-1], np.inf))
        return split_between(float(u[k - 1]), float(u[k]))

    def decoded_tree(self, blk: pyo.Block, task: str, width: int,
                     keep_unused: bool = True) -> tuple[Tree, list, np.ndarray]:
        """The solution's splits as a Tree whose payload (``width`` zero columns) the formulation then sets.

        Returns (tree, heap leaf of each node (-1 for a branch), heap leaf of each point); see :meth:`layout`.
        """
        splits, heap_leaf = self.decode(blk, keep_unused=keep_unused)
        cl, cr, feat, thr, coef, heap = self.layout(splits)
        hyper = any(f < 0 and cl[k] != LEAF for k, f in enumerate(feat))
        tree = Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), np.zeros((len(cl), width)),
                    task=task, coef=np.array(coef) if hyper else None, feature_names=self.data.feature_names,
                    n_features=self.data.p)
        return tree, heap, heap_leaf

    def skeleton(self, splits: dict) -> tuple[list, list, list, list, list]:
        """Flat Tree arrays for the decoded splits; a non-splitting node is replaced by its right subtree.

        Returns (children_left, children_right, feature, threshold, heap_leaf_of_node) where the last entry maps
        each tree node to the heap leaf whose points it holds (-1 for branch nodes).
        """
        cl, cr, feat, thr, _, heap = self.layout(splits)
        return cl, cr, feat, thr, heap

    def layout(self, splits: dict) -> tuple[list, list, list, list, list, list]:
        """:meth:`skeleton` plus one coefficient row per node (``splits[h]`` may be ``(feature, threshold, coef)``
        with ``feature = HYPERPLANE`` and ``coef`` in original units): (cl, cr, feature, threshold, coef, heap)."""
        cl, cr, feat, thr, coef, heap = [], [], [], [], [], []
        p = self.data.p

        def new():
            cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); heap.append(-1)
            coef.append(np.zeros(p))
            return len(cl) - 1

        def rec(h):
            while h < 2 ** self.D and h not in splits:
                h = 2 * h + 1  # non-splitting node: everything goes right
            node = new()
            if h >= 2 ** self.D:
                heap[node] = h
                return node
            j, t = splits[h][:2]
            feat[node], thr[node] = j, t
            if j == HYPERPLANE:
                coef[node] = np.asarray(splits[h][2], dtype=np.float64)
            left = rec(2 * h)
            right = rec(2 * h + 1)
            cl[node], cr[node] = left, right
            return node

        rec(1)
        return cl, cr, feat, thr, coef, heap


def _rebuild(tree: Tree, spec) -> Tree:
    """Build a Tree from a nested ('split', t, L, R) / ('leaf', t) spec reusing ``tree``'s node payloads."""
    cl: list[int] = []
    cr: list[int] = []
    feat: list[int] = []
    thr: list[float] = []
    node_list: list[int] = []

    def rec(s):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); node_list.append(s[1])
        if s[0] == "split":
            t = s[1]
            feat[k], thr[k] = tree.feature[t], tree.threshold[t]
            cl[k] = rec(s[2])
            cr[k] = rec(s[3])
        return k

    rec(spec)
    nodes = np.array(node_list)
    return Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), tree.value[nodes], task=tree.task,
                label=None if tree.label is None else tree.label[nodes],
                coef=None if tree.coef is None else tree.coef[nodes], classes=tree.classes,
                feature_names=tree.feature_names, n_features=tree.n_features,
                extras={k: v[nodes] for k, v in tree.extras.items()})


#: the thesis's fixed margin mu for the strict "<" of hyperplane splits (model (3.3)), in min-max scaled units
DEFAULT_MARGIN = 0.005


def check_margin(margin) -> float:
    """The hyperplane margin mu: a number in (0, 1] (0 would let a non-splitting node send points left)."""
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0.0 < float(margin) <= 1.0:
        raise InputError(f"margin must be a number in (0, 1] (the thesis uses {DEFAULT_MARGIN}); got {margin!r}")
    return float(margin)


class HyperplaneStructure(BDStructure):
    r"""The OCT-H tree block of thesis model (3.3), shared by OCT-H and ORT-H.

    Variables: a[j,t] in [-1, 1] (coefficient of feature j at node t), a_abs[j,t] >= |a[j,t]|, s[j,t] (feature
    j used at t), b[t] in [-1, 1], d, z, l as in :class:`BDStructure`. On features min-max scaled to [0, 1],
    :math:`\sum_j |a_{jt}| \le d_t` puts :math:`a_t^\top x_i` in [-1, 1], so M = 2 bounds every routing row.
    Point i goes left at m iff :math:`a_m^\top x_i + \mu \le b_m`, right iff :math:`a_m^\top x_i \ge b_m`: no
    training point may lie in the band (b - mu, b). At a node that does not split (a = 0, b = 0) the left row
    reads mu <= 0, so every point goes right; the thesis's rows are right here because mu > 0.

    The margin mu (``margin``, 0.005 as in the thesis, in scaled units where sum |a| <= 1) excludes splits
    that separate their points by less than mu; a local-search tree can hold such splits, so warm starts go
    through :meth:`fit_margin` first.
    """

    uses_feature_gaps = False

    def __init__(self, data: PreparedData, max_depth: int, min_samples_leaf: int = 1, routing: str = "aggregated",
                 margin: float = DEFAULT_MARGIN):
        super().__init__(data, max_depth, min_samples_leaf, routing)
        self.margin = check_margin(margin)

    # ----------------------------------------------------------------- model
    def build(self, blk: pyo.Block) -> None:
        X = self.data.Xs
        J, TB, TL, mu = self.J, self.branch, self.leaves, self.margin
        with PauseGC():
            blk.a = pyo.Var(J, TB, bounds=(-1.0, 1.0))
            blk.a_abs = pyo.Var(J, TB, bounds=(0.0, 1.0))
            blk.s = pyo.Var(J, TB, domain=pyo.Binary)
            blk.b = pyo.Var(TB, bounds=(-1.0, 1.0))
            blk.d = pyo.Var(TB, domain=pyo.Binary)
            blk.z = pyo.Var(range(self.data.n), TL, domain=pyo.Binary)
            blk.l = pyo.Var(TL, domain=pyo.Binary)
            blk.abs_above = pyo.Constraint(J, TB, rule=lambda m, j, t: m.a_abs[j, t] >= m.a[j, t])
            blk.abs_below = pyo.Constraint(J, TB, rule=lambda m, j, t: m.a_abs[j, t] >= -m.a[j, t])
            blk.l1_budget = pyo.Constraint(TB, rule=lambda m, t: sum(m.a_abs[j, t] for j in J) <= m.d[t])
            blk.coef_used_up = pyo.Constraint(J, TB, rule=lambda m, j, t: m.a[j, t] <= m.s[j, t])
            blk.coef_used_down = pyo.Constraint(J, TB, rule=lambda m, j, t: m.a[j, t] >= -m.s[j, t])
            blk.used_if_split = pyo.Constraint(J, TB, rule=lambda m, j, t: m.s[j, t] <= m.d[t])
            blk.split_uses_feature = pyo.Constraint(TB, rule=lambda m, t: sum(m.s[j, t] for j in J) >= m.d[t])
            blk.threshold_up = pyo.Constraint(TB, rule=lambda m, t: m.b[t] <= m.d[t])
            blk.threshold_down = pyo.Constraint(TB, rule=lambda m, t: m.b[t] >= -m.d[t])
            self._add_leaf_rows(blk)
            left_idx, right_idx, zsets = self._routing_sets()
            rows = [[(j, float(X[i, j])) for j in J if X[i, j] != 0.0] for i in range(self.data.n)]

            def left_rule(m, i, t, node):   # a.x + mu <= b + (2 + mu)(1 - z)
                zs = zsets[t, node]
                coefs = [v for _, v in rows[i]] + [-1.0] + [2.0 + mu] * len(zs)
                vars_ = [m.a[j, node] for j, _ in rows[i]] + [m.b[node]] + [m.z[i, u] for u in zs]
                return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=vars_) <= 2.0

            def right_rule(m, i, t, node):  # a.x >= b - 2(1 - z)
                zs = zsets[t, node]
                coefs = [v for _, v in rows[i]] + [-1.0] + [-2.0] * len(zs)
                vars_ = [m.a[j, node] for j, _ in rows[i]] + [m.b[node]] + [m.z[i, u] for u in zs]
                return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=vars_) >= -2.0

            blk.route_left = pyo.Constraint(left_idx, rule=left_rule)
            blk.route_right = pyo.Constraint(right_idx, rule=right_rule)

    def complexity(self, blk: pyo.Block):
        """The OCT-H complexity: the number of non-zero coefficients, sum of s_jt (sparse splits are cheaper)."""
        return sum(blk.s[j, t] for j in self.J for t in self.branch)

    # ----------------------------------------------------------------- one split in the MIO's terms
    def scaled_direction(self, tree: Tree, node: int) -> np.ndarray:
        """The split's coefficients on the scaled features (only the splittable ones; constant ones read 0)."""
        a = tree.split_coef(node) * self.data.scaling.span
        out = np.zeros(self.data.p)
        out[self.J] = a[self.J]
        return out

    def margin_split(self, a: np.ndarray, left: np.ndarray, right: np.ndarray, tol: float = 1e-9):
        """(a, b) with sum |a| = 1 along direction ``a`` that the MIO accepts for this partition, or None.

        ``left``/``right``: the node's training rows on each side. The MIO needs a.x + mu <= b on the left and
        a.x >= b on the right; b is put in the middle of the band that allows, so solver tolerances never
        flip a point. Returns None when the sides are closer than mu along ``a`` (or ``a`` is zero).
        """
        total = float(np.abs(a).sum())
        if total <= 0.0:
            return None
        a = a / total
        Xs = self.data.Xs
        hi = float((Xs[right] @ a).min()) if len(right) else 1.0 + self.margin
        lo = float((Xs[left] @ a).max()) if len(left) else -1.0 - self.margin
        lo_b, hi_b = max(lo + self.margin, -1.0), min(hi, 1.0)
        if lo_b > hi_b + tol:
            return None
        return a, float(min(max((lo_b + hi_b) / 2, -1.0), 1.0))

    def widest_split(self, a0: np.ndarray, left: np.ndarray, right: np.ndarray):
        """The largest-margin (a, b) with ``a0``'s support and signs that keeps the partition, or None.

        A linear program over a = sign(a0) * u, u_j >= min(|a0_j|, 1e-5) (no coefficient of the split is
        dropped, so its complexity stays), sum u <= 1, |b| <= 1: maximise g with a.x + g <= b on the left and
        a.x >= b on the right. Used when a split's own direction leaves less than mu (rotating it can widen
        the gap while every training point stays on its side).
        """
        from scipy.optimize import linprog

        S = np.nonzero(a0)[0]
        if not len(S):
            return None
        sign = np.sign(a0[S])
        lower = np.minimum(np.abs(a0[S]) / np.abs(a0[S]).sum(), 1e-5)
        XL, XR = self.data.Xs[left][:, S] * sign, self.data.Xs[right][:, S] * sign
        k = len(S)
        A = np.vstack([np.hstack([XL, -np.ones((len(left), 1)), np.ones((len(left), 1))]),
                       np.hstack([-XR, np.ones((len(right), 1)), np.zeros((len(right), 1))]),
                       np.r_[np.ones(k), 0.0, 0.0][None, :]])
        ub = np.r_[np.zeros(len(left) + len(right)), 1.0]
        cost = np.r_[np.zeros(k + 1), -1.0]
        bounds = [(lo, 1.0) for lo in lower] + [(-1.0, 1.0), (-2.0, 2.0)]
        res = linprog(cost, A_ub=A, b_ub=ub, bounds=bounds, method="highs")
        if res.status != 0:
            return None
        a = np.zeros(self.data.p)
        a[S] = sign * res.x[:k]
        return self.margin_split(a, left, right)

    # ----------------------------------------------------------------- warm start
    def fit_margin(self, tree: Tree, leaf_cost, split_cost: float) -> tuple[Tree, list[str]]:
        """A tree every split of which the MIO accepts with margin mu, and notes on what had to change.

        Each split keeps its partition of its training rows: first along its own direction, else rotated by
        :meth:`widest_split` (same support and signs, so the same complexity and objective). A split whose
        sides no such hyperplane separates by mu is replaced by the cheapest of: a leaf, its left subtree, its
        right subtree, or the same hyperplane with its threshold moved to the nearest gap of at least mu below
        or above (a few points change side), the subtrees below fitted in turn (``leaf_cost(rows)``: the raw
        loss of one leaf on ``rows``; ``split_cost``: alpha * L̂ per coefficient). The objective then changes,
        and the notes say where. Leaf payloads are copied from the tree; a caller refits them when notes are
        returned.
        """
        if tree.depth > self.D:
            raise InputError(f"the warm-start tree has depth {tree.depth} > max_depth={self.D}")
        X, Xs = self.data.X, self.data.Xs

        def rec(node, rows):
            """-> (spec, raw cost, notes); spec ('leaf', node) or ('split', node, a, go_left, left, right)."""
            if tree.is_leaf(node):
                return ("leaf", node), leaf_cost(rows), []
            a0 = self.scaled_direction(tree, node)
            go_left = X[rows] @ tree.split_coef(node) < tree.threshold[node]
            li, ri = rows[go_left], rows[~go_left]
            if not np.any(a0):   # splits on constant features only: every row goes one way, the split is void
                return rec(tree.children_left[node] if len(li) else tree.children_right[node], rows)
            fit = self.margin_split(a0, li, ri) or self.widest_split(a0, li, ri)
            if fit is not None:
                (left, cl, nl), (right, cr, nr) = rec(tree.children_left[node], li), rec(tree.children_right[node], ri)
                cost = cl + cr + split_cost * np.count_nonzero(fit[0])
                return ("split", node, fit[0], go_left, left, right), cost, nl + nr
            a = a0 / np.abs(a0).sum()
            options = [(("leaf", node), leaf_cost(rows), []), rec(tree.children_left[node], rows),
                       rec(tree.children_right[node], rows)]
            what = ["a leaf", "its left subtree", "its right subtree"]
            for side, shifted in self._nearest_wide_cuts(a, rows, go_left):
                (left, cl, nl), (right, cr, nr) = (rec(tree.children_left[node], rows[shifted]),
                                                   rec(tree.children_right[node], rows[~shifted]))
                options.append((("split", node, a, shifted, left, right),
                                cl + cr + split_cost * np.count_nonzero(a), nl + nr))
                what.append(f"the same hyperplane with its threshold moved {side} to the nearest gap >= margin "
                            f"({int(np.sum(shifted != go_left))} point(s) change side)")
            best = min(range(len(options)), key=lambda k: options[k][1])
            note = (f"the split at node {node} separates its training points by {_gap(Xs, a, li, ri):.3g} < margin "
                    f"{self.margin:g} (scaled units); replaced by {what[best]}")
            spec, cost, below = options[best]
            return spec, cost, [note] + below

        spec, _, notes = rec(0, np.arange(self.data.n))
        return self._spec_tree(tree, spec), notes

    def _nearest_wide_cuts(self, a: np.ndarray, rows: np.ndarray, go_left: np.ndarray) -> list:
        """Partitions of ``rows`` along ``a`` at the nearest gaps >= mu below and above the split's own cut:
        [("down" | "up", go_left mask)], each cut leaving both sides non-empty."""
        proj = self.data.Xs[rows] @ a
        v = np.unique(proj)
        wide = np.nonzero(np.diff(v) >= self.margin)[0]     # cut between v[k] and v[k + 1]
        if not len(wide):
            return []
        at = np.searchsorted(v, proj[go_left].max()) if go_left.any() else -1
        out = []
        below, above = wide[wide < at], wide[wide > at]
        if len(below):
            out.append(("down", proj <= v[below[-1]]))
        if len(above):
            out.append(("up", proj <= v[above[0]]))
        return out

    def _spec_tree(self, tree: Tree, spec) -> Tree:
        """The Tree of a :meth:`fit_margin` spec: splits in original units, payloads copied from ``tree``."""
        cl: list[int] = []
        cr: list[int] = []
        feat: list[int] = []
        thr: list[float] = []
        coef: list[np.ndarray] = []
        nodes: list[int] = []

        def rec(s, rows):
            k = len(cl)
            cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); nodes.append(s[1])
            coef.append(np.zeros(self.data.p))
            if s[0] == "split":
                _, _, a, go_left, left, right = s
                feat[k], thr[k], coef[k] = self.original_split(a, rows, go_left)
                cl[k] = rec(left, rows[go_left])
                cr[k] = rec(right, rows[~go_left])
            return k

        rec(spec, np.arange(self.data.n))
        idx = np.array(nodes)
        hyper = any(f == HYPERPLANE for f in feat)
        return Tree(np.asarray(cl), np.asarray(cr), np.asarray(feat), np.asarray(thr), tree.value[idx], task=tree.task,
                    label=None if tree.label is None else tree.label[idx],
                    coef=np.array(coef) if hyper else None, classes=tree.classes,
                    feature_names=tree.feature_names, n_features=tree.n_features)

    def original_split(self, a: np.ndarray, rows: np.ndarray, go_left: np.ndarray) -> tuple[int, float, np.ndarray]:
        """A scaled split ``a`` with partition ``go_left`` of ``rows`` in original units: (feature, threshold, coef).

        a.x in original units is a.xs plus a constant, so gaps are the same in both; the threshold sits midway
        between the two sides (with one side empty, a margin beyond the occupied side), and the Tree routes every
        training row exactly as the partition says. A single positive coefficient is exported as a parallel split
        (same routing and complexity, easier to read).
        """
        d = self.data
        coef = a / d.scaling.span
        proj = d.X[rows] @ coef
        left, right = proj[go_left], proj[~go_left]
        width = self.margin * float(np.abs(a).sum())
        if len(left) and len(right):
            t = (left.max() + right.min()) / 2
        elif len(right):
            t = right.min() - width
        elif len(left):
            t = left.max() + width
        else:
            t = float(np.sum(coef * d.scaling.lo))
        nz = np.nonzero(a)[0]
        if len(nz) == 1 and a[nz[0]] > 0:   # c x_j < t  <=>  x_j < t / c
            return int(nz[0]), float(t / coef[nz[0]]), np.zeros(d.p)
        return HYPERPLANE, float(t), coef

    def set_from_tree(self, blk: pyo.Block, tree: Tree) -> tuple[Tree, np.ndarray, dict]:
        """Set a, a_abs, s, b, d, z, l from a tree whose splits the MIO accepts (see :meth:`fit_margin`).

        Parallel splits are hyperplanes with one coefficient. Returns the tree, each point's heap leaf and a
        map heap leaf -> tree leaf node, as :meth:`BDStructure.set_from_tree`.
        """
        if tree.depth > self.D:
            raise InputError(f"the warm-start tree has depth {tree.depth} > max_depth={self.D}")
        for t in self.branch:
            blk.d[t].set_value(0)
            blk.b[t].set_value(0.0)
            for j in self.J:
                blk.a[j, t].set_value(0.0)
                blk.a_abs[j, t].set_value(0.0)
                blk.s[j, t].set_value(0)
        X = self.data.X
        heap_of: dict[int, int] = {}

        def rec(node, h, rows):
            if tree.is_leaf(node):
                heap_of[node] = self.rightmost_leaf(h)
                return
            go_left = X[rows] @ tree.split_coef(node) < tree.threshold[node]
            fit = self.margin_split(self.scaled_direction(tree, node), rows[go_left], rows[~go_left])
            if fit is None:
                raise InputError(f"the warm-start tree's split at node {node} separates its training points by "
                                 f"less than margin={self.margin:g}; pass the tree through fit_margin first")
            a, b = fit
            blk.d[h].set_value(1)
            blk.b[h].set_value(b)
            for j in self.J:
                blk.a[j, h].set_value(float(a[j]))
                blk.a_abs[j, h].set_value(abs(float(a[j])))
                blk.s[j, h].set_value(int(a[j] != 0.0))
            rec(tree.children_left[node], 2 * h, rows[go_left])
            rec(tree.children_right[node], 2 * h + 1, rows[~go_left])

        rec(0, 1, np.arange(self.data.n))
        return self._set_leaves(blk, tree, heap_of)

    # ----------------------------------------------------------------- decoding
    def decode(self, blk: pyo.Block, keep_unused: bool = True) -> tuple[dict, np.ndarray]:
        """({heap node: (feature or HYPERPLANE, threshold, coef)} in original units, each point's heap leaf).

        The partition at each node is the MIO's own (from z), so the Tree routes the training data as the
        solver did. ``keep_unused``: a feature with s = 1 but a = 0 (the solver may leave one in an incumbent;
        it costs alpha) is kept with a coefficient of 1e-9 so the tree's complexity is the MIO's; pass False
        when alpha = 0 (it then costs nothing and is dropped).
        """
        d = self.data
        zval = np.array([[pyo.value(blk.z[i, t]) for t in self.leaves] for i in range(d.n)])
        heap_leaf = np.argmax(zval, axis=1) + 2 ** self.D
        splits = {}
        for t in self.branch:
            if pyo.value(blk.d[t]) < 0.5:
                continue
            a = np.zeros(d.p)
            for j in self.J:
                if pyo.value(blk.s[j, t]) > 0.5:
                    v = float(pyo.value(blk.a[j, t]))
                    a[j] = v if abs(v) > 1e-12 else (1e-9 if keep_unused else 0.0)
            below = np.isin(heap_leaf, self.leaves_below(t))
            rows = np.nonzero(below)[0]
            left_mask = np.isin(heap_leaf[rows], self.leaves_below(2 * t))
            if not np.any(a):   # a split with no coefficient sends every point one way: keep that way
                a[self.J[0] if self.J else 0] = 1e-9
            splits[t] = self.original_split(a, rows, left_mask)
        return splits, heap_leaf


def _gap(Xs: np.ndarray, a: np.ndarray, left: np.ndarray, right: np.ndarray) -> float:
    """Distance along ``a`` between the closest left and right rows (inf with an empty side)."""
    if not len(left) or not len(right):
        return float("inf")
    return float((Xs[right] @ a).min() - (Xs[left] @ a).max())
