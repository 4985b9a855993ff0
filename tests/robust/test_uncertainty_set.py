"""robust/uncertainty.py: the uncertainty set from explicit costs and budget, a calibration, or neither."""
import numpy as np
import pytest

from opttrees.errors import InputError
from opttrees.robust.uncertainty import uncertainty_set

X = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])


def test_costs_per_feature_are_broadcast_to_every_row():
    S = uncertainty_set(X, np.array([1.0, 2.0]), 3.0)
    np.testing.assert_array_equal(S.gamma, np.array([[1.0, 2.0]] * 3))
    assert S.budget == 3.0


def test_neither_costs_nor_budget_is_the_nominal_set_or_the_calibration():
    nominal = uncertainty_set(X, None, None)
    assert nominal.budget == 0.0 and (nominal.gamma == 1.0).all()
    calls = []

    def calibrated(Xi):
        calls.append(Xi.shape)
        return np.full(Xi.shape, 0.5), 1.5
    S = uncertainty_set(X, None, None, calibrated)
    assert calls == [(3, 2)] and S.budget == 1.5 and (S.gamma == 0.5).all()
    assert uncertainty_set(X, None, 2.0).budget == 2.0   # a budget alone: unit costs


def test_bad_costs_are_named():
    with pytest.raises(InputError, match="costs were given without a budget"):
        uncertainty_set(X, np.ones(2), None)
    with pytest.raises(InputError, match=r"costs must have shape \(n, F\) = \(3, 2\) or \(F,\); got \(2, 2\)"):
        uncertainty_set(X, np.ones((2, 2)), 1.0)
