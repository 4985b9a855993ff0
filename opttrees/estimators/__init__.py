"""scikit-learn compatible estimators (parameter rules: :mod:`opttrees.estimators.base`).

``__all__`` is the one list of the public estimators: the package's public names (``opttrees.OptimalTreeClassifier``,
...) are read from it. The estimators load on first use (PEP 562), so reading the list imports none of them; the
imports under ``TYPE_CHECKING`` show the classes to type checkers and IDEs (ruff checks that they and ``__all__``
name the same classes).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__all__ = ["OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
           "BendersOCTClassifier", "RobustTreeClassifier", "SPOTree", "SPOForest", "OptimalPrescriptiveTree",
           "PolicyTree"]

#: the modules that define the estimators, looked through in this order on the first use of a name
_MODULES = ("classifier", "regressor", "tuning", "flow", "robust", "spo", "prescriptive")


def __getattr__(name: str):
    if name in __all__:
        for module in _MODULES:
            value = getattr(importlib.import_module(f".{module}", __name__), name, None)
            if value is not None:
                globals()[name] = value   # later look-ups skip this function
                return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from .classifier import OptimalTreeClassifier
    from .flow import BendersOCTClassifier, FlowOCTClassifier
    from .prescriptive import OptimalPrescriptiveTree, PolicyTree
    from .regressor import OptimalTreeRegressor
    from .robust import RobustTreeClassifier
    from .spo import SPOForest, SPOTree
    from .tuning import OptimalTreeCV
