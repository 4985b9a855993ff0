"""The Tree value object: how a tree was found does not matter here.

Routing convention, used everywhere in opttrees: a branch node with coefficients ``a`` and threshold ``b``
sends a point **left iff a·x < b** (strict), otherwise right (the thesis's convention). A parallel split is
``a = e_j``. Thresholds and coefficients are in the user's original feature units. scikit-learn sends
``x <= t`` left; :func:`opttrees.heuristics.cart.tree_from_sklearn` converts, and
:func:`opttrees.sklearn_export.to_sklearn` converts back (float32 thresholds, as scikit-learn compares). All
routing goes through :meth:`Tree.apply` and :meth:`Tree.decision_path` (one implementation, ``Tree._walk``); all
pruning of a tree's structure through :meth:`Tree.prune` (weakest-link pruning itself is :mod:`opttrees.pruning`).

Categories: a tree fitted on a table with text columns carries its :class:`~opttrees.data.TableEncoding` in
``encoding`` (saved in the JSON). Its splits on a one-hot feature read ``colour != red`` / ``colour = red``
(:meth:`Tree.split_text`, the one place splits become text), and ``predict``/``apply`` accept the raw table,
re-encoding it with the categories seen in training.

Printed thresholds (text, DOT, pictures, HTML) never contradict the tree: :func:`format_threshold` rounds a
threshold only as far as every training value stays on its side. The training values come from
:attr:`Tree.display_bounds` (each split's nearest training values either side), which estimators record at
the end of ``fit`` (:meth:`Tree.set_display_bounds`) and the JSON keeps; without them thresholds print exactly.

Nodes are stored in flat arrays (node 0 is the root); ``children_left[t] == -1`` marks a leaf.
Leaf payloads by ``task``:

- ``"classification"``: ``value`` = class counts (weighted), ``label`` = predicted class index;
- ``"regression"``: ``value`` = the constant prediction(s), one column per output;
- ``"linear"``: ``value`` = ``[intercept, coef_1 .. coef_p]`` in original units, so ``predict`` evaluates
  ``intercept + coef·x`` on raw X (ORT-L, :mod:`opttrees.heuristics.linear_leaves`); a branch node may carry
  the model fitted on all its rows, which it keeps when :meth:`Tree.prune` makes it a leaf;
- ``"spo"``: ``value`` = the leaf's mean cost vector, ``extras["decision"]`` = its optimal decision;
- ``"prescription"``: ``label`` = treatment index into ``classes``, ``value`` = per-treatment outcome means.

Every estimator also records, at the end of ``fit``, the training rows' node statistics in ``extras`` under
scikit-learn's names, ``n_node_samples``, ``weighted_n_node_samples`` and ``impurity``
(:mod:`opttrees.sklearn_export`): regression leaves print their row count from them (``[rows 15]``), and
``to_sklearn`` and the feature importances read them.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from .data.table import TableEncoding
from .data.prepared import check_X
from .errors import InputError

LEAF = -1
HYPERPLANE = -2
TASKS = ("classification", "regression", "linear", "spo", "prescription")


def _to_py(v):
    """numpy scalar -> JSON-friendly Python scalar."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _json_classes(classes):
    """Class labels as JSON values; labels JSON cannot hold (bytes, dates) get a clear error, not a TypeError."""
    if classes is None:
        return None
    out = [_to_py(c) for c in classes]
    bad = [c for c in out if not isinstance(c, (str, int, float, bool))]
    if bad:
        raise InputError(f"class label {bad[0]!r} of type {type(bad[0]).__name__} cannot be saved to JSON; "
                         "use str, int, float or bool labels")
    return out


def _as_array(name: str, v, dtype, ndims) -> np.ndarray:
    """``v`` as an array of ``dtype`` with a dimension count in ``ndims``; InputError naming the field if not."""
    try:
        a = np.asarray(v, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"Tree.{name} is malformed: {exc}") from None
    if ndims is not None and a.ndim not in ndims:
        raise InputError(f"Tree.{name} must be a {' or '.join(f'{k}-D' for k in ndims)} array of numbers; got "
                         f"{a.ndim}-D" + (f" ({type(v).__name__})" if not isinstance(v, (list, np.ndarray)) else ""))
    return a


def _encoding_from_dict(d: dict) -> TableEncoding:
    """The saved ``encoding`` mapping as a TableEncoding; every wrong type is an InputError naming the field
    (checked here, so TableEncoding.from_dict only ever sees the types it expects)."""
    def bad(field, want, got):
        return InputError(f"tree JSON: 'encoding.{field}' must be {want}; got {type(got).__name__}")

    cols = d.get("columns")
    if not isinstance(cols, list) or not all(isinstance(c, (str, int, float)) for c in cols):
        raise bad("columns", "a list of column names", cols)
    cats = d.get("categories")
    if cats is not None and (not isinstance(cats, dict) or not all(
            isinstance(v, list) and all(isinstance(c, (str, int, float, bool)) for c in v) for v in cats.values())):
        raise bad("categories", "a mapping of column names to lists of categories", cats)
    if not isinstance(d.get("missing", "error"), str):
        raise bad("missing", "a string", d.get("missing"))
    fill = d.get("fill")
    if fill is not None and (not isinstance(fill, dict)
                             or not all(isinstance(v, (str, int, float, bool)) for v in fill.values())):
        raise bad("fill", "a mapping of column names to values", fill)
    return TableEncoding.from_dict(d)


def format_threshold(t) -> str:
    """The threshold ``t`` of a rule ``x < t`` as text: exactly ``t`` (its shortest round-trip decimal), so the
    printed rule routes every value, training or new, as the tree does. The one rule every export prints
    thresholds with (text, DOT, PNG/SVG, HTML); thresholds are short because :func:`snap_threshold` made them so
    at ``fit``, not because the printing rounds them.

    >>> format_threshold(504.5)
    '504.5'
    >>> format_threshold(0.1 + 0.2)
    '0.30000000000000004'
    """
    t = float(t)
    if t == 0 or (math.isfinite(t) and 1e-4 <= abs(t) < 1e16):
        return np.format_float_positional(t, unique=True, trim="-")     # 2 rather than 2.0, no exponent
    return repr(t)


def snap_threshold(t: float, left_max: float, right_min: float) -> float:
    """A threshold with few significant digits that routes the training values exactly as ``t`` does.

    ``left_max`` is the largest training value sent left (``x < t``), ``right_min`` the smallest sent right. The
    result is ``t`` rounded to the fewest significant digits that stay within the middle half of that gap
    (``|t' - t| <= (right_min - left_max) / 4`` and ``left_max < t' <= right_min``): a midpoint such as
    0.15000000000000002 between 0.1 and 0.2 becomes 0.15, 12345.5 between 12340 and 12351 becomes 12346, and
    between neighbouring floats ``t`` stays as it is. Unknown or stale bounds (``t`` outside them) give ``t``.

    >>> snap_threshold(0.1 / 2 + 0.2 / 2, 0.1, 0.2)
    0.15
    >>> snap_threshold(12345.5, 12340, 12351)
    12346.0
    """
    t, lo, hi = float(t), float(left_max), float(right_min)
    if not (math.isfinite(t) and math.isfinite(lo) and math.isfinite(hi) and lo < t <= hi):
        return t
    room = (hi - lo) / 4
    for digits in range(1, 18):
        c = float(f"{t:.{digits}g}")
        if lo < c <= hi and abs(c - t) <= room:
            return c
    return t


_JSON_LISTS = ("children_left", "children_right", "feature", "threshold", "value")
_JSON_OPTIONAL = {"label": list, "coef": list, "classes": list, "feature_names": list, "extras": dict,
                  "encoding": dict, "display_bounds": list}


def _check_json_fields(d: dict) -> None:
    """The types of a saved tree's fields (values are checked by ``Tree.__post_init__``)."""
    def bad(name, want):
        return InputError(f"tree JSON: {name!r} must be {want}; got {type(d[name]).__name__}")

    for name in _JSON_LISTS:
        if name in d and not isinstance(d[name], list):
            raise bad(name, "a list")
    for name, kind in _JSON_OPTIONAL.items():
        if d.get(name) is not None and not isinstance(d[name], kind):
            raise bad(name, f"a {'list' if kind is list else 'mapping'} or null")
    if "task" in d and not isinstance(d["task"], str):
        raise bad("task", f"one of {TASKS}")
    n = d.get("n_features")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise bad("n_features", "an integer or null")
    if d.get("feature_names") is not None and not all(isinstance(f, str) for f in d["feature_names"]):
        raise InputError("tree JSON: 'feature_names' must be a list of strings")
    if d.get("classes") is not None and not all(isinstance(c, (str, int, float, bool)) for c in d["classes"]):
        raise InputError("tree JSON: 'classes' must be a list of labels (strings, numbers or booleans)")


def _bounds_from_json(rows):
    """Saved display bounds (null: unbounded) as an (n_nodes, 2) array, or None when absent (older files)."""
    if rows is None:
        return None
    if not all(isinstance(r, list) and len(r) == 2 and all(v is None or (isinstance(v, (int, float))
                                                                          and not isinstance(v, bool)) for v in r)
               for r in rows):
        raise InputError("tree JSON: 'display_bounds' must be a list of [left_max, right_min] pairs of numbers "
                         "or nulls")
    return np.array([[-math.inf if lo is None else lo, math.inf if hi is None else hi] for lo, hi in rows],
                    dtype=np.float64).reshape(len(rows), 2)


def _dot_escape(text: str) -> str:
    """Text inside a quoted DOT label: backslashes and quotes escaped, line breaks as DOT's ``\\n``."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _decision_text(dec: np.ndarray, cost_vector: np.ndarray, precision: int, max_entries: int | None,
                   sep: str) -> str:
    """A SPO leaf: its decision (the first ``max_entries`` entries and a count when longer) and its cost."""
    shown = dec if max_entries is None or len(dec) <= max_entries else dec[:max_entries]
    entries = " ".join(f"{v:.{precision}g}" for v in shown)
    parts = [f"decision [{entries}{' …' if len(shown) < len(dec) else ''}]"]
    if len(shown) < len(dec):
        parts.append(f"{len(dec)} values, {int(np.count_nonzero(dec))} nonzero")
    if len(cost_vector) == len(dec):
        parts.append(f"cost {float(cost_vector @ dec):.{precision}g}")
    return sep.join(parts)


def _leaf_number(v: float, precision: int) -> str:
    """A leaf's predicted value with ``precision`` significant digits, but never fewer than its integer part
    has: 1000019.2 and 1000045.5 print as 1000019 and 1000046, not both as 1e+06."""
    v = float(v)
    digits = precision
    if math.isfinite(v) and abs(v) >= 1:
        digits = max(precision, min(int(math.floor(math.log10(abs(v)))) + 1, 17))
    return f"{v:.{digits}g}"


def _number(v: float) -> str:
    """A coefficient printed exactly: its shortest round-trip decimal (``1`` rather than ``1.0``)."""
    return format_threshold(v)


@dataclass(eq=False)
class Tree:
    children_left: np.ndarray
    children_right: np.ndarray
    feature: np.ndarray            # j for a parallel split, HYPERPLANE, or LEAF
    threshold: np.ndarray
    value: np.ndarray              # (n_nodes, m) leaf payload (see module docstring)
    task: str = "classification"
    label: np.ndarray | None = None
    coef: np.ndarray | None = None  # (n_nodes, p), rows used where feature == HYPERPLANE
    classes: list | None = None
    feature_names: list[str] | None = None
    n_features: int | None = None
    extras: dict = field(default_factory=dict)
    #: how a raw table's columns became these features (one-hot categories, imputed values); None for numeric input
    encoding: TableEncoding | None = None
    #: (n_nodes, 2) per branch node: the largest training value of a·x sent left and the smallest sent right
    #: (-inf / inf when none), recorded by :meth:`set_display_bounds`; printed thresholds stay between them
    display_bounds: np.ndarray | None = None

    def __post_init__(self):
        self.children_left = _as_array("children_left", self.children_left, np.int64, (1,))
        self.children_right = _as_array("children_right", self.children_right, np.int64, (1,))
        self.feature = _as_array("feature", self.feature, np.int64, (1,))
        self.threshold = _as_array("threshold", self.threshold, np.float64, (1,))
        self.value = np.atleast_2d(_as_array("value", self.value, np.float64, (0, 1, 2)))
        if self.value.shape[0] != len(self.feature) and len(self.feature) == 1:
            self.value = self.value.reshape(1, -1)
        if self.label is not None:
            self.label = _as_array("label", self.label, np.int64, (1,))
        if self.coef is not None:
            self.coef = _as_array("coef", self.coef, np.float64, (2,))
        if not isinstance(self.extras, Mapping):
            raise InputError(f"Tree.extras must be a mapping of names to arrays; got {type(self.extras).__name__}")
        self.extras = {k: _as_array(f"extras[{k!r}]", v, None, None) for k, v in self.extras.items()}
        if self.task not in TASKS:
            raise InputError(f"unknown tree task {self.task!r}; expected one of {TASKS}")
        if isinstance(self.encoding, dict):
            self.encoding = _encoding_from_dict(self.encoding)
        elif self.encoding is not None and not isinstance(self.encoding, TableEncoding):
            raise InputError(f"Tree.encoding must be a TableEncoding (in JSON: a mapping with a 'columns' list); "
                             f"got {type(self.encoding).__name__}")
        if self.n_features is not None and (isinstance(self.n_features, bool)
                                            or not isinstance(self.n_features, (int, np.integer))
                                            or self.n_features < 0):
            raise InputError(f"Tree.n_features must be an integer >= 0; got {self.n_features!r}")
        m = len(self.feature)
        for name in ("children_left", "children_right", "threshold"):
            if len(getattr(self, name)) != m:
                raise InputError(f"Tree.{name} has length {len(getattr(self, name))}, expected {m}")
        if self.value.shape[0] != m:
            raise InputError(f"Tree.value has {self.value.shape[0]} rows, expected {m}")
        if self.n_features is None:
            self.n_features = (len(self.feature_names) if self.feature_names is not None
                               else self.value.shape[1] - 1 if self.task == "linear"
                               else (self.coef.shape[1] if self.coef is not None else int(self.feature.max(initial=-1)) + 1))
        if self.feature_names is not None and len(self.feature_names) != self.n_features:
            raise InputError(f"Tree.feature_names has {len(self.feature_names)} names, the tree has "
                             f"{self.n_features} features")
        if self.display_bounds is not None:
            self.display_bounds = _as_array("display_bounds", self.display_bounds, np.float64, (2,))
            if self.display_bounds.shape != (m, 2) or np.isnan(self.display_bounds).any():
                raise InputError(f"Tree.display_bounds must be one [left_max, right_min] pair of numbers per node "
                                 f"({m}); got shape {self.display_bounds.shape}")
        self._check_structure()
        if self.encoding is not None and len(self.encoding.feature_names) != self.n_features:
            raise InputError(f"Tree.encoding describes {len(self.encoding.feature_names)} features, the tree has "
                             f"{self.n_features}")

    # typed views of the optional fields, for the places where the tree's kind guarantees them
    @property
    def p(self) -> int:
        """Number of features (always set by ``__post_init__``)."""
        assert self.n_features is not None
        return self.n_features

    def _coefs(self) -> np.ndarray:
        if self.coef is None:
            raise InputError("Tree has a hyperplane split but no coef matrix")
        return self.coef

    def _labels(self) -> np.ndarray:
        if self.label is None:
            raise InputError(f"a {self.task} Tree needs leaf labels")
        return self.label

    def _check_structure(self):
        """Reject arrays that are not a tree: a cycle would make routing loop forever, a bad index crash it."""
        m = len(self.feature)
        if m == 0:
            raise InputError("Tree has no nodes")
        cl, cr, f = self.children_left, self.children_right, self.feature
        internal = cl != LEAF
        if np.any(internal != (cr != LEAF)):
            t = int(np.nonzero(internal != (cr != LEAF))[0][0])
            raise InputError(f"Tree node {t} has exactly one child; a node has two children or none")
        kids = np.concatenate([cl[internal], cr[internal]])
        if kids.size and (kids.min() < 1 or kids.max() >= m):
            raise InputError(f"Tree child index out of range 1..{m - 1}: {kids[(kids < 1) | (kids >= m)][:3].tolist()}")
        seen = np.zeros(m, dtype=bool)
        stack = [0]
        while stack:
            t = stack.pop()
            if seen[t]:
                raise InputError(f"Tree arrays are not a tree: node {t} is reached twice from the root (a cycle or a shared child)")
            seen[t] = True
            if internal[t]:
                stack += [int(cl[t]), int(cr[t])]
        fi = f[internal]
        p = int(self.n_features)
        if np.any((fi >= p) | ((fi < 0) & (fi != HYPERPLANE))):
            raise InputError(f"Tree split feature out of range 0..{p - 1}: {fi[(fi >= p) | (fi < 0)][:3].tolist()}")
        if np.any(fi == HYPERPLANE) and (self.coef is None or self.coef.shape != (m, p)):
            raise InputError(f"Tree has hyperplane splits but coef is missing or not of shape ({m}, {p})")
        if not np.all(np.isfinite(self.threshold[internal])):
            raise InputError("Tree has a split with a non-finite threshold")
        if self.task == "linear":
            if self.value.shape[1] != p + 1:
                raise InputError(f"a linear-leaf Tree needs value rows [intercept, coef_1 .. coef_{p}] ({p + 1} "
                                 f"columns); got {self.value.shape[1]}")
            if not np.all(np.isfinite(self.value[~internal])):
                raise InputError("a linear-leaf Tree has a leaf with a non-finite intercept or coefficient")
        if self.label is not None and self.task in ("classification", "prescription"):
            n_classes = len(self.classes) if self.classes is not None else self.value.shape[1]
            lab = self.label[~internal] if len(self.label) == m else self.label
            if len(self.label) != m or (lab.size and (lab.min() < 0 or lab.max() >= n_classes)):
                raise InputError(f"Tree labels must be one per node ({m}) and in range 0..{n_classes - 1}")

    def _check_payload(self):
        """What predict needs (checked on load: a saved tree must predict)."""
        m = self.n_nodes
        if self.task in ("classification", "prescription") and self.label is None:
            raise InputError(f"a {self.task} tree needs 'label' (one per node)")
        if self.task == "spo":
            dec = self.extras.get("decision")
            if dec is None or dec.ndim != 2 or len(dec) != m:
                raise InputError(f"an spo tree needs extras['decision'] with one row (a decision vector) per node ({m})")

    # ------------------------------------------------------------------ structure
    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    def is_leaf(self, t: int) -> bool:
        return self.children_left[t] == LEAF

    @property
    def leaves(self) -> np.ndarray:
        return np.nonzero(self.children_left == LEAF)[0]

    @property
    def n_leaves(self) -> int:
        return int((self.children_left == LEAF).sum())

    @property
    def n_splits(self) -> int:
        return self.n_nodes - self.n_leaves

    def node_depths(self) -> np.ndarray:
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        stack = [(0, 0)]
        while stack:
            t, d = stack.pop()
            depth[t] = d
            if not self.is_leaf(t):
                stack.append((self.children_left[t], d + 1))
                stack.append((self.children_right[t], d + 1))
        return depth

    def preorder(self, stop=None) -> np.ndarray:
        """Node ids reachable from the root in preorder (node, its left subtree, its right subtree).

        Reversed, the order visits every child before its parent (bottom-up passes). ``stop``, a bool mask
        over the nodes, lists nodes whose subtrees are not entered (the nodes themselves are listed).
        """
        out, stack = [], [0]
        while stack:
            t = stack.pop()
            out.append(t)
            if self.children_left[t] != LEAF and (stop is None or not stop[t]):
                stack += [int(self.children_right[t]), int(self.children_left[t])]
        return np.array(out, dtype=np.int64)

    def parents(self) -> np.ndarray:
        """Parent id of every node (-1 for the root and for nodes no branch points to)."""
        parent = np.full(self.n_nodes, -1, dtype=np.int64)
        internal = np.nonzero(self.children_left != LEAF)[0]
        parent[self.children_left[internal]] = internal
        parent[self.children_right[internal]] = internal
        return parent

    def prune(self, nodes) -> "Tree":
        """A new tree with the given branch nodes turned into leaves and their descendants dropped.

        Parameters
        ----------
        nodes : iterable of int, or bool array of shape (n_nodes,)
            Node ids to make leaves (or a mask of them). Leaves and nodes below another pruned node are
            accepted and change nothing.

        Returns
        -------
        Tree
            The pruned tree, renumbered compactly in preorder (root 0, then the left subtree, then the right,
            as :meth:`preorder`). Every per-node payload moves with its node: ``value``, ``label``,
            ``coef`` rows, ``display_bounds`` rows (the same training rows reach a kept node) and each ``extras``
            array whose first dimension is ``n_nodes`` (other extras are copied as they are). A new leaf keeps
            the payload its node carried as a branch, so trees whose internal nodes carry no payload need their
            leaves refitted. ``self`` is not modified.

        Raises
        ------
        InputError
            If a node id is out of range or a mask has the wrong length.
        """
        m = self.n_nodes
        if isinstance(nodes, (int, np.integer)):
            nodes = [nodes]
        arr = nodes if isinstance(nodes, np.ndarray) else np.asarray(list(nodes))
        if arr.dtype == bool:
            if arr.shape != (m,):
                raise InputError(f"Tree.prune: a node mask must have shape ({m},); got {arr.shape}")
            cut = arr.copy()
        else:
            ids = arr.ravel()
            if ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= m):
                raise InputError(f"Tree.prune: node ids must be integers in 0..{m - 1}; got {ids[:5].tolist()}")
            cut = np.zeros(m, dtype=bool)
            cut[ids.astype(np.int64)] = True
        old = self.preorder(stop=cut)
        new = np.full(m, LEAF, dtype=np.int64)
        new[old] = np.arange(len(old))
        branch = (self.children_left[old] != LEAF) & ~cut[old]
        cl = np.where(branch, new[self.children_left[old]], LEAF)
        cr = np.where(branch, new[self.children_right[old]], LEAF)
        extras = {k: (v[old] if v.ndim and v.shape[0] == m else v.copy()) for k, v in self.extras.items()}
        return Tree(cl, cr, np.where(branch, self.feature[old], LEAF), np.where(branch, self.threshold[old], 0.0),
                    self.value[old], task=self.task, label=None if self.label is None else self.label[old],
                    coef=None if self.coef is None else self.coef[old],
                    classes=None if self.classes is None else list(self.classes),
                    feature_names=None if self.feature_names is None else list(self.feature_names),
                    n_features=self.n_features, extras=extras, encoding=self.encoding,
                    display_bounds=None if self.display_bounds is None else self.display_bounds[old])

    @property
    def depth(self) -> int:
        return int(self.node_depths()[self.leaves].max()) if self.n_nodes else 0

    def leaf_model(self, t: int) -> tuple[float, np.ndarray]:
        """(intercept, coefficients) of node ``t``'s linear model in original units (a ``"linear"`` tree)."""
        if self.task != "linear":
            raise InputError(f"leaf_model needs a linear-leaf tree (task 'linear'), not {self.task!r}")
        return float(self.value[t, 0]), self.value[t, 1:].copy()

    def split_coef(self, t: int) -> np.ndarray:
        """The split's coefficient vector a (dense, original units)."""
        a = np.zeros(self.p)
        if self.feature[t] >= 0:
            a[self.feature[t]] = 1.0
        elif self.feature[t] == HYPERPLANE:
            a[:] = self._coefs()[t]
        return a

    # ------------------------------------------------------------------ routing
    def feature_matrix(self, X) -> np.ndarray:
        """X as the checked feature matrix this tree routes (what ``apply`` and ``predict`` see): a raw table is
        re-encoded by the tree's :attr:`encoding`. For code outside the tree (pictures, reports) that must
        route rows exactly as the tree does."""
        return self._input(X)

    def _input(self, X) -> np.ndarray:
        """X as the features this tree splits on: a tree with an :attr:`encoding` also takes the raw table
        (text categories, missing values) and re-encodes it by column name; otherwise X is checked as it is."""
        if self.encoding is not None and isinstance(X, pd.DataFrame):
            names = self.encoding.feature_names
            cols = [str(c) for c in X.columns]
            if self.encoding.is_trivial or not set(names) <= set(cols):
                X = self.encoding.transform(X)
            else:   # already encoded (e.g. by the spec runner): pick the features by name
                X = X.set_axis(cols, axis=1)[names]
        return check_X(X, self.n_features)

    def _walk(self, X: np.ndarray):
        """Route the rows of a checked ``X`` level by level: the one routing rule of opttrees.

        Yields ``(rows, nodes)``: first every row at the root, then, for the rows still at a branch node, the
        node each moves to (left iff a·x < b, strict). Every row's nodes come out in path order.
        """
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = np.arange(X.shape[0])
        yield active, node.copy()
        while active.size:
            nd = node[active]
            internal = self.children_left[nd] != LEAF
            active, nd = active[internal], nd[internal]
            if not active.size:
                break
            f = self.feature[nd]
            go_left = np.empty(active.size, dtype=bool)
            par = f >= 0
            go_left[par] = X[active[par], f[par]] < self.threshold[nd[par]]
            hyp = ~par
            if hyp.any():
                go_left[hyp] = np.einsum("ij,ij->i", X[active[hyp]], self._coefs()[nd[hyp]]) < self.threshold[nd[hyp]]
            nxt = np.where(go_left, self.children_left[nd], self.children_right[nd])
            node[active] = nxt
            yield active, nxt

    def apply(self, X) -> np.ndarray:
        """Leaf id of every row of X (left iff a·x < b)."""
        X = self._input(X)
        leaf = np.zeros(X.shape[0], dtype=np.int64)
        for rows, nodes in self._walk(X):
            leaf[rows] = nodes
        return leaf

    def decision_path(self, X) -> sparse.csr_matrix:
        """Node indicator of every row's root-to-leaf path, like scikit-learn's ``decision_path``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to route, in the tree's original feature units.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes), dtype int64
            ``indicator[i, t] == 1`` iff row ``i`` passes through node ``t`` (routing: left iff a·x < b).
            Each row's stored indices are in path order, root first, so the last one is ``apply(X)[i]``.

        See Also
        --------
        apply : the leaf of every row (the last node of its path).
        """
        X = self._input(X)
        n = X.shape[0]
        row_parts, node_parts = zip(*self._walk(X))
        rows, nodes = np.concatenate(row_parts), np.concatenate(node_parts)
        order = np.argsort(rows, kind="stable")   # rows in order; each row's nodes stay in path order
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return sparse.csr_matrix((np.ones(len(rows), dtype=np.int64), nodes[order], indptr),
                                 shape=(n, self.n_nodes))

    def predict(self, X) -> np.ndarray:
        X = self._input(X)
        leaf = self.apply(X)
        if self.task == "classification" or self.task == "prescription":
            codes = self._labels()[leaf]
            return np.asarray(self.classes)[codes] if self.classes is not None else codes
        if self.task == "regression":
            return self.value[leaf, 0] if self.value.shape[1] == 1 else self.value[leaf]
        if self.task == "linear":
            v = self.value[leaf]
            return v[:, 0] + np.einsum("ij,ij->i", X, v[:, 1:])
        if self.task == "spo":
            return self.extras["decision"][leaf]
        raise InputError(f"predict is not defined for task {self.task!r}")

    def predict_proba(self, X) -> np.ndarray:
        if self.task != "classification":
            raise InputError("predict_proba needs a classification tree")
        leaf = self.apply(X)
        counts = self.value[leaf]
        tot = counts.sum(axis=1, keepdims=True)
        k = counts.shape[1]
        return np.where(tot > 0, counts / np.where(tot > 0, tot, 1), 1.0 / k)

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict:
        d = {
            "format": "opttrees.Tree/1",
            "task": self.task,
            "n_features": self.p,
            "feature_names": list(self.feature_names) if self.feature_names is not None else None,
            "classes": _json_classes(self.classes),
            "children_left": self.children_left.tolist(),
            "children_right": self.children_right.tolist(),
            "feature": self.feature.tolist(),
            "threshold": self.threshold.tolist(),
            "value": self.value.tolist(),
            "label": self.label.tolist() if self.label is not None else None,
            "coef": self.coef.tolist() if self.coef is not None else None,
            "extras": {k: v.tolist() for k, v in self.extras.items()},
        }
        if self.encoding is not None:
            d["encoding"] = self.encoding.to_dict()
        if self.display_bounds is not None:   # JSON has no infinity: an unbounded side is null
            d["display_bounds"] = [[v if math.isfinite(v) else None for v in row]
                                   for row in self.display_bounds.tolist()]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Tree":
        """A Tree from :meth:`to_dict`'s mapping; any missing or wrongly typed field is an InputError naming it."""
        if not isinstance(d, dict) or d.get("format") != "opttrees.Tree/1":
            raise InputError("not an opttrees tree (missing 'format': 'opttrees.Tree/1')")
        try:
            _check_json_fields(d)
            tree = cls(children_left=d["children_left"], children_right=d["children_right"], feature=d["feature"],
                       threshold=d["threshold"], value=d["value"], task=d["task"], label=d.get("label"),
                       coef=d.get("coef"), classes=d.get("classes"), feature_names=d.get("feature_names"),
                       n_features=d.get("n_features"), extras=d.get("extras") or {}, encoding=d.get("encoding"),
                       display_bounds=_bounds_from_json(d.get("display_bounds")))
            tree._check_payload()
            return tree
        except KeyError as exc:
            raise InputError(f"tree JSON is missing the field {exc.args[0]!r}") from None
        except InputError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"tree JSON has a malformed field: {exc}") from None

    def to_json(self, path: str | Path | None = None, indent: int | None = 1) -> str:
        """JSON text of the tree; also written to ``path`` when given."""
        s = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            Path(path).write_text(s)
        return s

    @classmethod
    def from_json(cls, src: str | Path) -> "Tree":
        """Load from JSON text or a file path."""
        text = str(src)
        if not text.lstrip().startswith("{"):
            p = Path(text)
            if not p.is_file():
                raise InputError(f"tree file not found: {p}")
            text = p.read_text()
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"tree JSON is malformed: {exc}") from None
        return cls.from_dict(d)

    def feature_name(self, j: int) -> str:
        """Name of feature ``j`` (``x{j}`` when the tree has no feature names)."""
        return self.feature_names[j] if self.feature_names is not None else f"x{j}"

    _fname = feature_name   # the former private name

    def _category(self, j: int) -> tuple[str, str] | None:
        """(column, category) when feature ``j`` is the one-hot indicator of a category, else None."""
        if self.encoding is None:
            return None
        col, cat = self.encoding.sources()[j]
        return None if cat is None else (col, cat)

    def split_text(self, t: int, precision: int = 4, negate: bool = False) -> str:
        """The test of branch node ``t`` as people read it: the condition that sends a row left ("true"), or
        with ``negate`` the right branch's. The one place splits become text (export_text, DOT, pictures).

        A split on the one-hot feature of a category reads ``colour != red`` (left: the row's colour is not
        red) and ``colour = red`` (right); other splits read ``x < 2.5`` / ``x >= 2.5``. The threshold is
        :func:`format_threshold` of the node's :attr:`display_bounds`: ``precision`` significant digits when
        that routes every training value as the tree does, more when needed, exact when the bounds are unknown.
        Hyperplane coefficients are printed exactly.
        """
        b = self.threshold[t]
        op = ">=" if negate else "<"
        j = int(self.feature[t])
        if j >= 0:
            cat = self._category(j)
            if cat is not None and 0 < b <= 1:   # left iff the 0/1 indicator is 0: the row is not in the category
                return f"{cat[0]} {'=' if negate else '!='} {cat[1]}"
            return f"{self.feature_name(j)} {op} {self.threshold_text(t, precision)}"
        terms = [f"{'-' if c < 0 else '+'}{_number(abs(c))}*{self.feature_name(j)}"
                 for j, c in enumerate(self._coefs()[t]) if c != 0]
        return f"{' '.join(terms) or '0'} {op} {self.threshold_text(t, precision)}"

    def threshold_text(self, t: int, precision: int | None = None) -> str:
        """Branch node ``t``'s threshold as printed: exactly (:func:`format_threshold`); ``precision`` is
        accepted for the exports' signature and not used (a rounded threshold would misroute new rows)."""
        return format_threshold(self.threshold[t])

    def set_display_bounds(self, X) -> "Tree":
        """Record, for every branch node, the largest training value of its test (``x_j``, or ``a·x`` for a
        hyperplane) among the rows of ``X`` it sends left and the smallest among those it sends right.

        Estimators call it at the end of ``fit`` with their training rows; the bounds travel in the JSON. Each
        threshold is then snapped to the shortest decimal near it in the middle of that gap
        (:func:`snap_threshold`): every training row is routed as before, and the threshold, printed exactly,
        is short (0.15, not 0.15000000000000002). Nodes no row reaches keep ``(-inf, inf)`` and their
        threshold. Returns ``self``.
        """
        X = self._input(X)
        bounds = np.tile([-np.inf, np.inf], (self.n_nodes, 1))
        path = self.decision_path(X).tocsc()

        def rows_at(node):
            return path.indices[path.indptr[node]:path.indptr[node + 1]]

        for t in np.nonzero(self.children_left != LEAF)[0]:
            rows = rows_at(t)
            if not rows.size:
                continue
            j = int(self.feature[t])
            if j >= 0:
                vals = X[rows, j]
            else:
                Xr = X[rows]
                vals = np.einsum("ij,ij->i", Xr, np.broadcast_to(self._coefs()[t], Xr.shape))
            go_left = np.isin(rows, rows_at(int(self.children_left[t])))   # as the tree routed them
            if go_left.any():
                bounds[t, 0] = vals[go_left].max()
            if (~go_left).any():
                bounds[t, 1] = vals[~go_left].min()
            self.threshold[t] = snap_threshold(self.threshold[t], bounds[t, 0], bounds[t, 1])
        self.display_bounds = bounds
        return self

    def leaf_text(self, t: int, precision: int = 4, max_entries: int | None = 8, sep: str = ", ") -> str:
        """A leaf's prediction as text. A SPO decision longer than ``max_entries`` (None: no limit) is summarised
        as its first entries, its length and nonzero count; SPO leaves also show the cost ``value·decision``
        of their decision under the leaf's mean cost. ``sep`` joins the parts of that summary."""
        if self.task == "classification":
            lab = self.classes[self._labels()[t]] if self.classes is not None else self._labels()[t]
            counts = ", ".join(f"{c:g}" for c in self.value[t])
            return f"predict {lab!s} [counts {counts}]"
        if self.task == "prescription":
            lab = self.classes[self._labels()[t]] if self.classes is not None else self._labels()[t]
            return f"treatment {lab!s}"
        if self.task == "regression":
            return "predict " + ", ".join(_leaf_number(v, precision) for v in self.value[t]) + self._rows_text(t)
        if self.task == "linear":   # intercept, then the non-zero terms only (lasso leaves are sparse)
            v = self.value[t]
            terms = [f"{c:+.{precision}g}*{self.feature_name(j)}" for j, c in enumerate(v[1:]) if c != 0]
            return f"predict {_leaf_number(v[0], precision)} {' '.join(terms)}".rstrip() + self._rows_text(t)
        if self.task == "spo":
            dec = self.extras.get("decision")
            if dec is None or dec.ndim != 2 or t >= len(dec):
                return "decision ?"
            return _decision_text(dec[t], self.value[t], precision, max_entries, sep)
        return ""

    def _rows_text(self, t: int) -> str:
        """`` [rows n]`` (`` [rows n, weight w]`` when weighted) from the node statistics an estimator records at fit
        (``extras["n_node_samples"]``, ``extras["weighted_n_node_samples"]``); empty without them. A regression
        leaf's counterpart of a classification leaf's class counts."""
        n, wn = self.extras.get("n_node_samples"), self.extras.get("weighted_n_node_samples")
        if n is None or n.shape != (self.n_nodes,):
            return ""
        text = f"rows {int(n[t])}"
        if wn is not None and wn.shape == (self.n_nodes,) and float(wn[t]) != float(n[t]):
            text += f", weight {float(wn[t]):g}"
        return f" [{text}]"

    def export_text(self, precision: int = 4) -> str:
        """Indented text rendering: each branch shows its test; the left child is the 'true' side."""
        lines = []

        def rec(t, indent):
            pad = "|   " * indent
            if self.is_leaf(t):
                lines.append(f"{pad}leaf {t}: {self.leaf_text(t, precision, max_entries=None)}")
                return
            cond = self.split_text(t, precision)
            lines.append(f"{pad}if {cond}:")
            rec(self.children_left[t], indent + 1)
            lines.append(f"{pad}else:  # {self.split_text(t, precision, negate=True)}")
            rec(self.children_right[t], indent + 1)

        rec(0, 0)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.export_text()

    def to_dot(self, precision: int = 4) -> str:
        """Graphviz DOT source (render with ``dot -Tpng``)."""
        out = ["digraph Tree {", '  node [shape=box, style="rounded", fontname="helvetica"];']
        for t in range(self.n_nodes):
            if self.is_leaf(t):
                text = _dot_escape(self.leaf_text(t, precision, sep="\n"))
                out.append(f'  {t} [label="{text}", style="rounded,filled", fillcolor="#eef5ff"];')
            else:
                text = _dot_escape(self.split_text(t, precision))
                out.append(f'  {t} [label="{text}"];')
                out.append(f'  {t} -> {self.children_left[t]} [label="true"];')
                out.append(f'  {t} -> {self.children_right[t]} [label="false"];')
        out.append("}")
        return "\n".join(out)

    # The two pictures are free functions of opttrees.viz over this class's public API; these methods only
    # delegate, importing viz on use (viz imports this module, never the other way round at import time).
    def plot(self, ax=None, **kw):
        """Draw the tree with matplotlib (the ``plot`` extra); see :func:`opttrees.viz.plot.plot_tree`."""
        from .viz.plot import plot_tree
        return plot_tree(self, ax, **kw)

    def to_html(self, path: str | Path | None = None, **kw) -> str:
        """Self-contained interactive HTML viewer (:func:`opttrees.viz.html.tree_to_html`), also written to
        ``path`` when given."""
        from .viz.html import tree_to_html
        text = tree_to_html(self, **kw)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def equivalent(self, other: "Tree", X) -> bool:
        """Same leaf partition and same predictions on X (a practical notion of 'same tree')."""
        return bool(np.array_equal(np.asarray(self.predict(X)), np.asarray(other.predict(X))))


def leaf_tree(value, task="classification", label=None, **kw) -> Tree:
    """A root-only tree (no split)."""
    return Tree(np.array([LEAF]), np.array([LEAF]), np.array([LEAF]), np.array([0.0]), np.atleast_2d(value),
                task=task, label=None if label is None else np.array([label]), **kw)


def heap_topology(split) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Preorder compaction of a heap-indexed tree (slot ``u``'s children at ``2u+1``, ``2u+2``; ``split[u]`` true
    where it branches) into the flat ``Tree`` layout.

    The searches (greedy/local search, DP, prescriptive) keep trees as fixed-size heap arrays; each decodes its own
    split data, but the compaction is one. Returns ``children_left``, ``children_right`` and each node's heap
    ``slot``, so a caller reads its per-slot split data as ``arr[slot]``.
    """
    split = np.asarray(split, dtype=bool)
    left: list[int] = []
    right: list[int] = []
    slot: list[int] = []

    def rec(u: int) -> int:
        k = len(slot)
        left.append(LEAF)
        right.append(LEAF)
        slot.append(u)
        if split[u]:
            lk = rec(2 * u + 1)
            left[k], right[k] = lk, rec(2 * u + 2)
        return k

    rec(0)
    return np.array(left, np.int64), np.array(right, np.int64), np.array(slot, np.int64)
