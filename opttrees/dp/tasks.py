"""Tasks of the dynamic program: what a leaf costs, what a split costs, and the leaf payload of the tree.

Why small classes: the engine (:mod:`opttrees.dp.engine`) only sees per-row statistics ``Z`` that add up
over a leaf, a leaf-cost kind, and per-column split costs. Each task turns (y, weights) into those arrays,
names its normalisation L̂ (the root-only tree's loss, as everywhere in opttrees) and writes the leaf
payloads of the returned Tree. Tasks whose leaf cost needs Python (an SPO oracle) or whose values are only
partially ordered (Pareto fronts) live in :mod:`opttrees.dp.spo` and :mod:`opttrees.constraints.pareto`.

Objective of every task: (sum of leaf losses + feature costs) / L̂ + alpha * (number of splits).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import objectives as obj
from ..data.prepared import LabelCodec, TargetScaling, _as_1d, is_constant_target
from ..errors import InputError

KIND_MISCLASSIFICATION, KIND_COST_MATRIX, KIND_SQUARED = 0, 1, 2


@dataclass
class EngineData:
    """What the engine needs from a task, for one training set."""

    kind: int
    Z: np.ndarray                      # (n, S) per-row statistics
    lab: np.ndarray                    # (n,) class index (one-hot statistics) or zeros
    onehot: bool
    K: int
    M: np.ndarray                      # (K, K) cost matrix (kind 1), else a 1x1 dummy
    baseline: float                    # L̂
    classes: list | None = None
    y: np.ndarray = field(default_factory=lambda: np.zeros(0))        # encoded labels / targets (payloads)
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))  # sample weights
    column_cost: np.ndarray | None = None      # per binary column: full test cost, discounted cost, group
    column_discount: np.ndarray | None = None
    column_group: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


class ClassificationTask:
    """Weighted misclassification with a constant label per leaf (labels of any type; ties -> lowest class)."""

    tree_task = "classification"
    @property
    def context_dependent(self) -> bool:
        """Whether a leaf's cost depends on its path (feature costs): the engine's caches key on it."""
        return False

    def prepare(self, y, n: int, w: np.ndarray) -> EngineData:
        y = _as_1d(y, n)
        codec = LabelCodec.fit(y)
        code = codec.encode(y)
        K = len(codec.classes)
        return self._classes_data(code, K, w, list(codec.classes))

    def _classes_data(self, code, K, w, classes) -> EngineData:
        Z = np.zeros((len(code), K))
        Z[np.arange(len(code)), code] = w
        base = obj.misclassification_baseline(code, K, w)
        return EngineData(KIND_MISCLASSIFICATION, Z, code.astype(np.int64), True, K, np.zeros((1, 1)), base,
                          classes, code, w)

    def leaf_payload(self, ed: EngineData, leaf: np.ndarray, n_nodes: int):
        counts = obj.class_counts(leaf, ed.y, ed.K, n_nodes, ed.weights)
        return counts, self.leaf_labels(ed, counts)

    def leaf_labels(self, ed: EngineData, counts: np.ndarray) -> np.ndarray:
        return obj.majority_label(counts)

    def leaf_losses(self, ed: EngineData, counts: np.ndarray) -> np.ndarray:
        return obj.misclassification_loss(counts)


class CostSensitiveTask(ClassificationTask):
    """Misclassification costs ``cost_matrix[true, predicted]`` and feature test costs (the seed's §4.4).

    ``feature_costs[j]`` is paid (per unit of sample weight reaching the node) the first time original
    feature j is tested on a root-to-leaf path; later tests of the same feature (another threshold of it)
    are free, and a feature whose ``groups[j]`` already had a member tested pays ``discount_costs[j]``
    instead. Classes are the sorted labels of y (or ``classes``); the matrix must be K x K, finite, >= 0.
    Feature costs make the cost of a split depend on the path, so the engine uses branch caching and no
    similarity bound for this task.
    """

    def __init__(self, cost_matrix, feature_costs=None, discount_costs=None, groups=None, classes=None):
        self.cost_matrix = cost_matrix
        self.feature_costs = feature_costs
        self.discount_costs = discount_costs
        self.groups = groups
        self.classes = classes

    @property
    def context_dependent(self) -> bool:
        return self.feature_costs is not None

    def prepare(self, y, n: int, w: np.ndarray) -> EngineData:
        y = _as_1d(y, n)
        if self.classes is not None:
            codec = LabelCodec(np.asarray(self.classes))
            if len(np.unique(codec.classes)) != len(codec.classes) or not np.all(np.sort(codec.classes) == codec.classes):
                raise InputError("CostSensitiveTask.classes must be sorted and distinct")
        else:
            codec = LabelCodec.fit(y)
        code = codec.encode(y)
        K = len(codec.classes)
        try:
            M = np.asarray(self.cost_matrix, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("cost_matrix must be a K x K array of numbers") from None
        if M.shape != (K, K):
            raise InputError(f"cost_matrix must have shape ({K}, {K}) (true class x predicted class, classes "
                             f"{list(codec.classes)}); got {M.shape}")
        if not np.isfinite(M).all() or (M < 0).any():
            raise InputError("cost_matrix must be finite and non-negative")
        ed = self._classes_data(code, K, w, list(codec.classes))
        ed.kind = KIND_COST_MATRIX
        ed.M = M
        root = np.bincount(code, weights=w, minlength=K) @ M
        ed.baseline = float(root.min()) if root.min() > 0 else 1.0
        return ed

    def column_costs(self, n_original: int, column_feature: np.ndarray):
        """Per binary column: (full cost, discounted cost, group id, block id) from per-feature settings."""
        if self.feature_costs is None:
            return None
        fc = self._per_feature("feature_costs", self.feature_costs, n_original)
        disc = fc if self.discount_costs is None else self._per_feature("discount_costs", self.discount_costs,
                                                                       n_original)
        if self.groups is None:
            gid = np.full(n_original, -1, np.int64)
        else:
            g = list(self.groups)
            if len(g) != n_original:
                raise InputError(f"groups must have one entry per feature ({n_original}); got {len(g)}")
            names: dict = {}
            gid = np.array([-1 if v is None else names.setdefault(v, len(names)) for v in g], np.int64)
        cf = np.asarray(column_feature, np.int64)
        return fc[cf], disc[cf], gid[cf], cf

    @staticmethod
    def _per_feature(name, v, p):
        a = np.asarray(v, dtype=np.float64)
        if a.ndim == 0:
            a = np.full(p, float(a))
        if a.shape != (p,):
            raise InputError(f"{name} must have one cost per feature ({p}); got shape {a.shape}")
        if not np.isfinite(a).all() or (a < 0).any():
            raise InputError(f"{name} must be finite and non-negative")
        return a

    def leaf_labels(self, ed: EngineData, counts: np.ndarray) -> np.ndarray:
        return np.argmin(counts @ ed.M, axis=1)

    def leaf_losses(self, ed: EngineData, counts: np.ndarray) -> np.ndarray:
        return (counts @ ed.M).min(axis=1)


class RegressionTask:
    """Squared error with a constant (the weighted mean) per leaf."""

    tree_task = "regression"
    context_dependent = False

    def prepare(self, y, n: int, w: np.ndarray) -> EngineData:
        y = _as_1d(y, n)
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("y must be numeric for RegressionTask") from None
        if not np.isfinite(y).all():
            raise InputError("y contains NaN/infinite values")
        # the engine works on y standardised (mean 0, spread about 1): its sums sum(w y^2) - sum(w y)^2 / sum(w)
        # do not cancel whatever y's offset, and its absolute tolerances mean the same whatever y's scale. Costs,
        # the baseline and the penalty are all in those units; the objective (cost / baseline) is y's.
        ts, z = TargetScaling.fit_transform(y, w)     # a constant y: z = 0 exactly (no split on rounding noise)
        Z = np.column_stack([w, w * z, w * z * z])
        base = obj.squared_baseline(z, w) if not is_constant_target(y) else 1.0
        return EngineData(KIND_SQUARED, Z, np.zeros(n, np.int64), False, 1, np.zeros((1, 1)), base, None, y, w,
                          extra={"z": z, "target": ts, "loss_scale": ts.scale ** 2})

    def leaf_payload(self, ed: EngineData, leaf: np.ndarray, n_nodes: int):
        pred = obj.leaf_predictions(leaf, ed.y, n_nodes, "squared", ed.weights)
        return pred.reshape(-1, 1), None

    def leaf_losses_of_tree(self, ed: EngineData, leaf, n_nodes):
        """Raw losses in the engine's units (standardised y), to check the search's costs."""
        return obj.node_losses(leaf, ed.extra.get("z", ed.y), n_nodes, "squared", sample_weight=ed.weights)
