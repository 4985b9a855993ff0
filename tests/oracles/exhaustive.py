"""One independent exhaustive oracle for every exact route at depth <= 3 (issue 38): numpy only, no opttrees.

:func:`optimum` is the best normalised objective ``loss / L-hat + alpha * splits`` over every parallel-split tree
of depth <= ``max_depth`` whose splits are midpoints of the rows at the node (the guarded midpoint of
``tests/oracles/bruteforce.py``: ``(a + b) / 2`` if ``a < mid <= b`` else ``b``; a row goes left iff
``x < threshold``), so the split set is every partition of a node's rows by a cut between two distinct values of
one feature, which is the split set of CART, the OCT MIO and the DP over every midpoint. Rules, as opttrees states
them (``opttrees.data.prepare``, ``opttrees.objectives``):

- a row of weight 0 is dropped before anything else (it gives no threshold, no class, and counts toward no leaf);
- ``min_samples_leaf`` counts the remaining rows of a leaf, whatever their weights;
- L-hat is the root leaf's loss: weighted errors of the majority class (1.0 when that is 0), or the weighted
  squared error about the weighted mean by two passes (1.0 for a constant target, i.e. a spread of at most
  8 ulps of the largest magnitude, or a non-positive result);
- ``max_num_nodes`` bounds the number of splits; constraints on the feature set (``features``), on the features
  allowed at a depth (``allowed_at_depth``) and a minimum leaf weight are optional.

The search is a memoised recursion over (row subset as a bitmask, depth left, split budget); leaf statistics are
sums read from byte tables, so depth 3 on 16 rows x 3 features takes a fraction of a second.

:func:`tree_objective` scores any fitted tree by its predictions and leaf assignment on the training rows (what
a route's returned tree really achieves), and :func:`feasibility` says whether it keeps the rules.
The generators (:func:`instance`) make the data the audit of issue 38 found hard: ties, duplicate rows with other
labels, values one float apart and 1e-9 apart, huge offsets (1e6 + small), zero weights, integer and float
weights, 2-4 classes and squared-error targets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

INF = math.inf
EPS = float(np.finfo(np.float64).eps)


def guarded_mid(a: float, b: float) -> float:
    """The threshold between neighbouring distinct values a < b: their midpoint, or b when none lies between."""
    mid = (a + b) / 2
    return mid if a < mid <= b else b


def is_constant(y) -> bool:
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return True
    lo, hi = float(y.min()), float(y.max())
    return bool(hi - lo <= 8 * EPS * max(abs(lo), abs(hi)))


def baseline(y, w, task: str) -> float:
    """L-hat: the root leaf's loss (never 0)."""
    if task == "classification":
        codes = np.unique(y, return_inverse=True)[1]
        c = np.bincount(codes, weights=w)
        b = float(c.sum() - c.max())
        return b if b > 0 else 1.0
    y = np.asarray(y, dtype=np.float64)
    if is_constant(y):
        return 1.0
    mu = float(np.sum(w * y) / np.sum(w))
    mu += float(np.sum(w * (y - mu)) / np.sum(w))
    b = float(np.sum(w * (y - mu) ** 2))
    return b if b > 0 and np.isfinite(b) else 1.0


@dataclass
class Optimum:
    """The oracle's answer: ``objective`` (normalised; inf when no tree is feasible), the raw ``cost``
    (loss + alpha * L-hat * splits), ``baseline`` (L-hat), ``tree`` (nested tuples: ("leaf",) or
    ("split", feature, threshold, left, right)), and the rows kept (positive weight)."""

    objective: float
    cost: float
    baseline: float
    tree: tuple | None
    kept: np.ndarray
    n_subproblems: int = 0
    notes: dict = field(default_factory=dict)


class _Tables:
    """Sums of per-row quantities over a row bitmask, by one lookup per byte of the mask."""

    def __init__(self, cols: np.ndarray):
        n = cols.shape[0]
        self.nbytes = max(1, (n + 7) // 8)
        bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)    # (256, 8)
        self.tabs = []
        for b in range(self.nbytes):
            chunk = np.zeros((8, cols.shape[1]))
            rows = cols[8 * b: 8 * b + 8]
            chunk[: len(rows)] = rows
            self.tabs.append([tuple(r) for r in (bits @ chunk)])

    def sums(self, m: int) -> tuple:
        out = None
        for t in self.tabs:
            v = t[m & 255]
            out = v if out is None else tuple(a + c for a, c in zip(out, v))
            m >>= 8
        return out


def _cap(d: int) -> int:
    return (1 << d) - 1


def optimum(X, y, *, task: str = "classification", max_depth: int = 3, min_samples_leaf: int = 1, alpha: float = 0.0,
            sample_weight=None, max_num_nodes: int | None = None, features=None, allowed_at_depth=None,
            min_leaf_weight: float | None = None, with_tree: bool = True) -> Optimum:
    """The exhaustive optimum (see the module docstring). ``features``: the only features splits may use;
    ``allowed_at_depth(depth)``: the features allowed at a node of that depth (root 0), or None for all;
    ``min_leaf_weight``: every leaf's rows weigh at least this much."""
    X = np.asarray(X, dtype=np.float64)
    n0 = X.shape[0]
    w = np.ones(n0) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    kept = np.flatnonzero(w > 0)
    X, w = X[kept], w[kept]
    y = np.asarray(y)[kept]
    n, p = X.shape
    if n > 62:
        raise ValueError("the oracle is for tiny data (at most 62 rows of positive weight)")
    base = baseline(y, w, task)
    pen = alpha * base
    if task == "classification":
        classes, codes = np.unique(y, return_inverse=True)
        K = len(classes)
        onehot = np.zeros((n, K))
        onehot[np.arange(n), codes] = w
        tables = _Tables(onehot)

        def leaf_loss(m):
            c = tables.sums(m)
            return sum(c) - max(c)
    else:
        yf = np.asarray(y, dtype=np.float64)
        mu = float(np.sum(w * yf) / np.sum(w))
        mu += float(np.sum(w * (yf - mu)) / np.sum(w))
        z = yf - mu                                   # centred: sums of squares meet no offset
        tables = _Tables(np.column_stack([w, w * z, w * z * z]))

        def leaf_loss(m):
            W, S1, S2 = tables.sums(m)
            return max(S2 - S1 * S1 / W, 0.0)
    wt = _Tables(w[:, None])
    feats = list(range(p)) if features is None else sorted(int(j) for j in features)
    # per feature: the prefix masks of its sorted order at every boundary between distinct values
    prefixes = {}
    for j in range(p):
        order = np.argsort(X[:, j], kind="stable")
        xs = X[order, j]
        masks, m = [], 0
        for k in range(n - 1):
            m |= 1 << int(order[k])
            if xs[k] < xs[k + 1]:
                masks.append(m)
        prefixes[j] = masks
    nmin = max(1, int(min_samples_leaf))
    leaf_cache: dict = {}

    def leaf(m):
        v = leaf_cache.get(m)
        if v is None:
            if m.bit_count() < nmin or (min_leaf_weight is not None and wt.sums(m)[0] < min_leaf_weight - 1e-12):
                v = INF
            else:
                v = leaf_loss(m)
            leaf_cache[m] = v
        return v

    def allowed(depth_here):
        if allowed_at_depth is None:
            return feats
        a = allowed_at_depth(depth_here)
        return feats if a is None else [j for j in feats if j in set(a)]

    cuts_cache: dict = {}

    def cuts(m, depth_here):
        key = (m, depth_here) if allowed_at_depth is not None else m
        c = cuts_cache.get(key)
        if c is None:
            seen = {}
            for j in allowed(depth_here):
                for P in prefixes[j]:
                    L = m & P
                    if L and L != m and L not in seen:
                        R = m ^ L
                        if L.bit_count() >= nmin and R.bit_count() >= nmin:
                            seen[L] = j
            c = cuts_cache[key] = list(seen.items())
        return c

    memo: dict = {}

    def best(m, d, B):
        B = min(B, _cap(d))
        key = (m, d, B)
        v = memo.get(key)
        if v is not None:
            return v
        v = leaf(m)
        if d > 0 and B > 0:
            cd = _cap(d - 1)
            splits = [(kl, B - 1 - kl) for kl in range(B) if kl <= cd and B - 1 - kl <= cd]
            for L, _ in cuts(m, max_depth - d):
                R = m ^ L
                for kl, kr in splits:
                    c = pen + best(L, d - 1, kl)
                    if c >= v:
                        continue
                    c += best(R, d - 1, kr)
                    if c < v:
                        v = c
        memo[key] = v
        return v

    full = (1 << n) - 1
    B0 = _cap(max_depth) if max_num_nodes is None else int(max_num_nodes)
    cost = best(full, max_depth, B0)

    def build(m, d, B):
        B = min(B, _cap(d))
        target = best(m, d, B)
        if leaf(m) <= target:
            return ("leaf",)
        cd = _cap(d - 1)
        for L, j in cuts(m, max_depth - d):
            R = m ^ L
            for kl in range(B):
                kr = B - 1 - kl
                if kl > cd or kr > cd:
                    continue
                if pen + best(L, d - 1, kl) + best(R, d - 1, kr) <= target:
                    rows_l = [i for i in range(n) if L >> i & 1]
                    rows_r = [i for i in range(n) if R >> i & 1]
                    thr = guarded_mid(float(X[rows_l, j].max()), float(X[rows_r, j].min()))
                    return ("split", j, thr, build(L, d - 1, kl), build(R, d - 1, kr))
        raise AssertionError("the oracle's optimum has no tree")

    tree = build(full, max_depth, B0) if with_tree and cost < INF else None
    return Optimum(cost / base if cost < INF else INF, cost, base, tree, kept, len(memo))


def optimum_over_feature_sets(X, y, feasible_set, **kw) -> Optimum:
    """The best :func:`optimum` over every feature set S with ``feasible_set(S)`` (a tree uses a subset of S):
    feature budgets (MaxFeatures, FeatureCost, ForbidFeatures at every depth)."""
    import itertools

    p = np.asarray(X).shape[1]
    best = None
    for r in range(p + 1):
        for S in itertools.combinations(range(p), r):
            if feasible_set(set(S)):
                o = optimum(X, y, features=S, **kw)
                if best is None or o.objective < best.objective:
                    best = o
    assert best is not None
    return best


# ---------------------------------------------------------------------------------------- scoring a fitted tree
def tree_objective(leaf_ids, predictions, y, *, task: str, n_splits: int, alpha: float = 0.0, sample_weight=None):
    """The normalised objective a fitted tree really has on the training rows, from its leaf of every row and its
    predictions (rows of weight 0 dropped, as opttrees does); (objective, leaf sizes in rows)."""
    y = np.asarray(y)
    n = len(y)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    keep = w > 0
    y, w = y[keep], w[keep]
    pred = np.asarray(predictions)[keep]
    leaf_ids = np.asarray(leaf_ids)[keep]
    base = baseline(y, w, task)
    if task == "classification":
        loss = float(np.sum(w[pred != y]))
    else:
        d = np.asarray(y, dtype=np.float64) - np.asarray(pred, dtype=np.float64)
        loss = float(np.sum(w * d * d))
    sizes = np.unique(leaf_ids, return_counts=True)[1]
    return loss / base + alpha * n_splits, sizes


def nested_predict(tree, X, y, sample_weight=None, task="classification"):
    """Leaf ids and optimal leaf predictions of one of the oracle's nested trees on X (for reproducers)."""
    X = np.asarray(X, dtype=np.float64)
    ids = np.zeros(len(X), dtype=np.int64)

    def walk(t, rows, k):
        if t[0] == "leaf":
            ids[rows] = k
            return k + 1
        go = X[rows, t[1]] < t[2]
        k = walk(t[3], rows[go], k)
        return walk(t[4], rows[~go], k)

    walk(tree, np.arange(len(X)), 0)
    w = np.ones(len(X)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    pred = np.empty(len(X), dtype=object if task == "classification" else np.float64)
    y = np.asarray(y)
    for k in np.unique(ids):
        r = (ids == k) & (w > 0)
        if not r.any():
            continue
        if task == "classification":
            labs, inv = np.unique(y[r], return_inverse=True)
            pred[ids == k] = labs[int(np.argmax(np.bincount(inv, weights=w[r])))]
        else:
            pred[ids == k] = float(np.average(y[r].astype(float), weights=w[r]))
    return ids, pred


def n_splits_of(tree) -> int:
    return 0 if tree is None or tree[0] == "leaf" else 1 + n_splits_of(tree[3]) + n_splits_of(tree[4])


# ------------------------------------------------------------------------------------------------- generators
#: per-feature value styles; "ulp": values one float apart, "nano": 1e-9 apart, "offset": 1e6 + small
STYLES = ("ties", "normal", "ulp", "nano", "offset", "dups")
#: weight kinds of the default draw; "tiny" / "huge" (integer weights times 1e-9 / 1e9, zeros included: the
#: normalised objective does not change) are drawn only when asked for
WEIGHTS = ("none", "int", "float", "zeros")


def _column(rng, n, style):
    if style == "ties":
        return rng.integers(0, 3, n).astype(float)
    if style == "normal":
        return rng.normal(size=n).round(2)
    if style == "ulp":                     # 1 + k ulps (k = -1..2): neighbouring floats
        base = rng.choice([1.0, 0.3, 1e6])
        k = rng.integers(-1, 3, n)
        out = np.empty(n)
        for i, s in enumerate(k):
            v = base
            for _ in range(abs(int(s))):
                v = np.nextafter(v, np.inf if s > 0 else -np.inf)
            out[i] = v
        return out
    if style == "nano":
        return 0.5 + rng.integers(0, 4, n) * 1e-9
    if style == "offset":
        return 1e6 + rng.choice([rng.integers(0, 5, n) * 0.25, rng.normal(size=n).round(3)])
    raise ValueError(style)


def instance(seed: int, *, task: str = "classification", n: tuple = (8, 16), p: tuple = (2, 3),
             styles=STYLES, weights=WEIGHTS, n_classes: tuple = (2, 4), binary: bool = False) -> dict:
    """A random tiny data set: {"X", "y", "w" (None or weights), "style", "weights"}; classification labels are
    0..K-1 with every class present among the rows of positive weight (so no route refuses it), regression
    targets have a real spread (not a constant target). ``binary``: 0/1 features (the flow models' data)."""
    rng = np.random.default_rng(seed)
    nn = int(rng.integers(n[0], n[1] + 1))
    pp = int(rng.integers(p[0], p[1] + 1))
    wkind = str(rng.choice(list(weights)))
    chosen = []
    if binary:
        X = rng.integers(0, 2, (nn, pp)).astype(float)
        chosen = ["binary"] * pp
    else:
        cols = []
        for _ in range(pp):
            s = str(rng.choice([s for s in styles if s != "dups"] or ["ties"]))
            chosen.append(s)
            cols.append(_column(rng, nn, s))
        X = np.column_stack(cols)
    if "dups" in styles and rng.random() < 0.35:        # duplicate rows (the same X, often another label)
        k = int(rng.integers(1, max(2, nn // 3)))
        src = rng.integers(0, nn, k)
        dst = rng.choice(nn, k, replace=False)
        X[dst] = X[src]
        chosen.append("dups")
    if task == "classification":
        K = int(rng.integers(n_classes[0], n_classes[1] + 1))
        signal = (X[:, 0] > np.median(X[:, 0])).astype(int) + (X[:, -1] > np.median(X[:, -1])).astype(int)
        y = np.where(rng.random(nn) < 0.6, signal % K, rng.integers(0, K, nn))
    else:
        mode = rng.choice(["plain", "offset", "small"])
        y = (X[:, 0] > np.median(X[:, 0])) * 2.0 + rng.normal(size=nn).round(2)
        if mode == "offset":
            y = 1e6 + y
        elif mode == "small":
            y = y * 1e-6
        K = 0
    if wkind == "none":
        w = None
    elif wkind == "int":
        w = rng.integers(1, 4, nn).astype(float)
    elif wkind == "float":
        w = rng.uniform(0.1, 2.0, nn).round(3)
    else:
        w = rng.integers(1, 4, nn).astype(float)
        w[rng.random(nn) < 0.25] = 0.0
        if (w > 0).sum() < 4:
            w[:4] = 1.0
        w = w * {"zeros": 1.0, "tiny": 1e-9, "huge": 1e9}[wkind]
    keep = np.ones(nn, bool) if w is None else w > 0
    if task == "classification":
        present = np.unique(y[keep])
        if len(present) < 2:                  # every route refuses a single class: make two
            i = np.flatnonzero(keep)[0]
            y[i] = (y[i] + 1) % max(K, 2)
        y = np.unique(y, return_inverse=True)[1]      # codes 0..K'-1 of the classes present
    elif is_constant(y[keep]):
        y = y + np.arange(nn) % 2
    return {"X": X, "y": y, "w": w, "style": "+".join(chosen), "weights": wkind}


def instance_repr(inst: dict, **params) -> str:
    """A pasteable reproducer of an instance and the route's parameters."""
    np.set_printoptions(precision=17, floatmode="unique")
    try:
        Xs = repr(inst["X"].tolist())
        ys = repr(np.asarray(inst["y"]).tolist())
        ws = "None" if inst["w"] is None else repr(np.asarray(inst["w"]).tolist())
    finally:
        np.set_printoptions()
    return f"X = np.array({Xs}); y = np.array({ys}); w = {ws}  # {params} style={inst['style']}"
