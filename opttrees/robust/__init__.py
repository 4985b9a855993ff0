"""Robust trees under distribution shift: calibration of the uncertainty set, the exact adversary
(Algorithm 1), and evaluation on shifted test sets."""
from .adversary import AttackResult, Path, ShiftSet, attack, tree_paths, worst_case_accuracy
from .calibration import (budget, calibrate, gamma_binary, gamma_bounded, gamma_categorical, gamma_unbounded,
                          truncated_root)
from .shift import sample_shifts, shifted_accuracy

__all__ = ["AttackResult", "Path", "ShiftSet", "attack", "tree_paths", "worst_case_accuracy", "budget",
           "calibrate", "gamma_binary", "gamma_bounded", "gamma_categorical", "gamma_unbounded",
           "truncated_root", "sample_shifts", "shifted_accuracy"]
