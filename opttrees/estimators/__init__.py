"""scikit-learn compatible estimators."""
from .classifier import OptimalTreeClassifier
from .flow import BendersOCTClassifier, FlowOCTClassifier, RobustTreeClassifier
from .spo import SPOForest, SPOTree
from .regressor import OptimalTreeRegressor
from .tuning import OptimalTreeCV

__all__ = ["OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV", "FlowOCTClassifier",
           "BendersOCTClassifier", "RobustTreeClassifier", "SPOTree", "SPOForest"]
