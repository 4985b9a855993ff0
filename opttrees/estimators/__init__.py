"""scikit-learn compatible estimators."""
from .classifier import OptimalTreeClassifier

__all__ = ["OptimalTreeClassifier"]
