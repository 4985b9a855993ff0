"""The ``constraints`` parameter read and checked: a spec mapping to a constraint (:func:`from_dict`), a list
of them (:func:`check_constraints`), and the check of a fitted tree against them (:func:`report`,
:func:`all_satisfied`).
"""
from __future__ import annotations

from ..errors import InputError
from ..tree import Tree
from .declarations import (TOL, Constraint, FeatureCost, ForbidFeatures, MaxFeatures, MinLeafPerClass, MinLeafWeight,
                           Monotone)
from .fairness import (ConditionalStatisticalParity, EqualizedOdds, EqualOpportunity, PredictiveEquality,
                       StatisticalParity)

#: spec ``type:`` names -> classes
CONSTRAINT_TYPES: dict[str, type[Constraint]] = {
    "statistical_parity": StatisticalParity,
    "conditional_statistical_parity": ConditionalStatisticalParity,
    "predictive_equality": PredictiveEquality,
    "equal_opportunity": EqualOpportunity,
    "equalized_odds": EqualizedOdds,
    "max_features": MaxFeatures,
    "feature_cost": FeatureCost,
    "forbid_features": ForbidFeatures,
    "monotone": Monotone,
    "min_leaf_per_class": MinLeafPerClass,
    "min_leaf_weight": MinLeafWeight,
}


def from_dict(d: dict, where: str = "constraints") -> Constraint:
    """A constraint from a spec entry ``{type: statistical_parity, protected: sex, delta: 0.05}``."""
    import inspect

    if not isinstance(d, dict):
        raise InputError(f"{where}: each constraint must be a mapping with a 'type' field; got {d!r}")
    if "type" not in d:
        raise InputError(f"{where}: a constraint has no 'type' field; one of {sorted(CONSTRAINT_TYPES)}")
    kind = d["type"]
    if kind not in CONSTRAINT_TYPES:
        raise InputError(f"{where}.type: unknown constraint {kind!r}; one of {sorted(CONSTRAINT_TYPES)}")
    cls = CONSTRAINT_TYPES[kind]
    params = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    fields = {k: v for k, v in d.items() if k != "type"}
    unknown = sorted(set(fields) - set(params))
    if unknown:
        raise InputError(f"{where} ({kind}): unknown field(s) {unknown}; allowed: {params}")
    required = [p for p, v in inspect.signature(cls.__init__).parameters.items()
                if p != "self" and v.default is inspect.Parameter.empty]
    missing = [p for p in required if p not in fields]
    if missing:
        raise InputError(f"{where} ({kind}): missing field(s) {missing}")
    try:
        return cls(**fields)
    except InputError as exc:
        raise InputError(f"{where} ({kind}): {exc}") from None


def check_constraints(constraints, where: str = "constraints") -> list[Constraint]:
    """The ``constraints`` parameter as a list of Constraint objects (dicts are read by :func:`from_dict`)."""
    if constraints is None:
        return []
    if isinstance(constraints, (Constraint, dict)):
        constraints = [constraints]
    out = []
    for k, c in enumerate(constraints):
        if isinstance(c, dict):
            c = from_dict(c, f"{where}[{k}]")
        if not isinstance(c, Constraint):
            raise InputError(f"{where}[{k}] is not a constraint (opttrees.constraints.StatisticalParity, "
                             f"MaxFeatures, ...): got {type(c).__name__}")
        out.append(c)
    return out


def report(constraints, tree: Tree, X, y=None, sample_weight=None, tol: float = TOL) -> dict:
    """{name: {"value", "bound", "sense", "satisfied"}} for every constraint (names made unique)."""
    out = {}
    for c in constraints:
        key, k = c.name, 1
        while key in out:
            k += 1
            key = f"{c.name}_{k}"
        v = c.value(tree, X, y, sample_weight)
        out[key] = {"value": v, "bound": c.bound, "sense": c.sense, "satisfied": c.satisfied(tree, X, y, sample_weight, tol)}
    return out


def all_satisfied(constraints, tree: Tree, X, y=None, sample_weight=None, tol: float = TOL) -> bool:
    return all(c.satisfied(tree, X, y, sample_weight, tol) for c in constraints)
