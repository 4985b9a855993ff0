"""scikit-learn compatible estimators."""
from .classifier import OptimalTreeClassifier
from .regressor import OptimalTreeRegressor
from .tuning import OptimalTreeCV

__all__ = ["OptimalTreeClassifier", "OptimalTreeRegressor", "OptimalTreeCV"]
