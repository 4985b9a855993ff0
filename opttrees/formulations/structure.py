"""The Bertsimas–Dunn tree encoding shared by OCT, ORT and the SPOT MILP.

Maximal tree of depth D in heap numbering: branch nodes 1..2^D-1, leaves 2^D..2^(D+1)-1, children of t are
2t (left) and 2t+1 (right). Variables: a[j,t] (feature j used at t), b[t] threshold in [0,1], d[t] (t splits),
z[i,t] (point i in leaf t), l[t] (leaf t non-empty). Point i goes left at m iff a_m·x_i < b_m.

The thesis's left-branch row (2.13) is wrong where a node does not split (a=0, b=0 gives 0 <= 0, so points may
go left). We use ``a_m·(x_i + eps - eps_min) + eps_min <= b_m + (1 + eps_max)(1 - z_it)`` which, with a = 0,
forces z_it = 0: every point goes right at a non-splitting node, as the Tree semantics say.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data import PreparedData
from ..errors import InputError
from ..params import check_depth as _check_depth
from ..tree import HYPERPLANE, LEAF, Tree


def check_depth(max_depth) -> int:
    return _check_depth(max_depth, 8, "the MIO has n*2^depth binaries; use method='local-search' or 'greedy'")

class BDStructure:
    """Index sets, routing helpers and the Pyomo block for one depth-D tree over ``data``."""

    def __init__(self, data: PreparedData, max_depth: int, min_samples_leaf: int = 1, routing: str = "thesis"):
        if routing not in ("thesis", "aggregated"):
            raise InputError(f"routing must be 'thesis' or 'aggregated'; got {routing!r}")
        self.routing = routing
        self.data = data
        self.D = check_depth(max_depth)
        self.min_samples_leaf = int(min_samples_leaf)
        self.branch = list(range(1, 2 ** self.D))
        self.leaves = list(range(2 ** self.D, 2 ** (self.D + 1)))
        self.J = [int(j) for j in np.nonzero(data.splittable)[0]]
        eps = data.eps[self.J] if self.J else np.array([1.0])
        self.eps_min, self.eps_max = float(eps.min()), float(eps.max())
        if self.eps_min < 1e-6:
            import warnings
            warnings.warn(f"smallest feature gap after scaling is {self.eps_min:.2e}, close to solver "
                          "tolerances; points may be misrouted (the solution is re-verified)", stacklevel=3)

    # ----------------------------------------------------------------- tree geometry
    def ancestors(self, t: int) -> tuple[list[int], list[int]]:
        """(A_L(t), A_R(t)): ancestors whose left / right branch leads to t."""
        left, right = [], []
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
        d, X = self.data, self.data.Xs
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
            blk.split_below_split = pyo.Constraint(TB[1:], rule=lambda m, t: m.d[t] <= m.d[t // 2])
            blk.one_leaf = pyo.Constraint(range(n), rule=lambda m, i: sum(m.z[i, t] for t in TL) == 1)
            blk.leaf_used = pyo.Constraint(range(n), TL, rule=lambda m, i, t: m.z[i, t] <= m.l[t])
            blk.min_leaf = pyo.Constraint(
                TL, rule=lambda m, t: sum(m.z[i, t] for i in range(n)) >= self.min_samples_leaf * m.l[t])
            Xl = X.tolist()
            epsJ = [float(d.eps[j]) - emin for j in J]
            if self.routing == "thesis":
                # one row per (point, leaf, ancestor), as in (2.13)/(2.14)
                left_idx, right_idx = [], []
                for t in TL:
                    al, ar = self.ancestors(t)
                    left_idx.extend((i, t, m) for m in al for i in range(n))
                    right_idx.extend((i, t, m) for m in ar for i in range(n))
                zsets = {(t, m): [t] for t in TL for m in range(1, 2 ** self.D)}
            else:
                # one row per (point, ancestor, side): z summed over the leaves below that side (tighter LP,
                # same integer solutions since each point is in exactly one leaf)
                left_idx = [(i, 2 * m, m) for m in TB for i in range(n)]
                right_idx = [(i, 2 * m + 1, m) for m in TB for i in range(n)]
                zsets = {(c, m): self.leaves_below(c) for m in TB for c in (2 * m, 2 * m + 1)}

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
            right_vals = d.Xs[col >= thr, j]
            blk.d[h].set_value(1)
            blk.a[j, h].set_value(1)
            blk.b[h].set_value(float(right_vals.min()))
            rec(tree.children_left[node], 2 * h)
            rec(tree.children_right[node], 2 * h + 1)

        rec(0, 1)
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
    def decode(self, blk: pyo.Block) -> tuple[dict, np.ndarray]:
        """Read the split structure: returns ({heap node: (feature, threshold in original units)}, point leaves)."""
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
        """Midpoint (original units) between the feature values the MIO sends left and right."""
        d = self.data
        cut = b - d.eps[j] / 2
        xs, x = d.Xs[:, j], d.X[:, j]
        left, right = x[xs < cut], x[xs >= cut]
        if len(left) and len(right):
            return float((left.max() + right.min()) / 2)
        return float(d.scaling.inverse(np.full((1, d.p), b))[0, j]) if not len(left) else float(left.max() + 1.0)

    def skeleton(self, splits: dict) -> tuple[list, list, list, list, list]:
        """Flat Tree arrays for the decoded splits; a non-splitting node is replaced by its right subtree.

        Returns (children_left, children_right, feature, threshold, heap_leaf_of_node) where the last entry maps
        each tree node to the heap leaf whose points it holds (-1 for branch nodes).
        """
        cl, cr, feat, thr, heap = [], [], [], [], []

        def new():
            cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); heap.append(-1)
            return len(cl) - 1

        def rec(h):
            while h < 2 ** self.D and h not in splits:
                h = 2 * h + 1  # non-splitting node: everything goes right
            node = new()
            if h >= 2 ** self.D:
                heap[node] = h
                return node
            j, t = splits[h]
            feat[node], thr[node] = j, t
            left = rec(2 * h)
            right = rec(2 * h + 1)
            cl[node], cr[node] = left, right
            return node

        rec(1)
        return cl, cr, feat, thr, heap


def _rebuild(tree: Tree, spec) -> Tree:
    """Build a Tree from a nested ('split', t, L, R) / ('leaf', t) spec reusing ``tree``'s node payloads."""
    cl, cr, feat, thr, nodes = [], [], [], [], []

    def rec(s):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0); nodes.append(s[1])
        if s[0] == "split":
            t = s[1]
            feat[k], thr[k] = tree.feature[t], tree.threshold[t]
            cl[k] = rec(s[2])
            cr[k] = rec(s[3])
        return k

    rec(spec)
    nodes = np.array(nodes)
    return Tree(cl, cr, feat, thr, tree.value[nodes], task=tree.task,
                label=None if tree.label is None else tree.label[nodes],
                coef=None if tree.coef is None else tree.coef[nodes], classes=tree.classes,
                feature_names=tree.feature_names, n_features=tree.n_features,
                extras={k: v[nodes] for k, v in tree.extras.items()})
