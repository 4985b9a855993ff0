"""scikit-learn compatible estimators (parameter rules: :mod:`opttrees.estimators.base`)."""
from .classifier import OptimalTreeClassifier
from .flow import BendersOCTClassifier, FlowOCTClassifier
from .prescriptive import OptimalPrescriptiveTree, PolicyTree
from .regressor import OptimalTreeRegressor
from .robust import RobustTreeClassifier
from .spo import SPOForest, SPOTree
from .tuning import OptimalTreeCV

__all__ = ["OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
           "BendersOCTClassifier", "RobustTreeClassifier", "SPOTree", "SPOForest", "OptimalPrescriptiveTree", "PolicyTree"]
