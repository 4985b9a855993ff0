"""scikit-learn compatible estimators."""
from .regressor import OptimalTreeRegressor
from .tuning import OptimalTreeCV

__all__ = ["OptimalTreeRegressor", "OptimalTreeCV"]
