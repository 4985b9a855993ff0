"""Squared loss and baselines that hold for any offset and scale of y; the target map of opttrees.data."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees import objectives as obj
from opttrees.data.prepared import TargetScaling, is_constant_target, prepare, standardize_target
from opttrees.tree import LEAF, Tree


def _two_leaves(offset, scale, n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n)
    y = offset + scale * (x + 0.3 * rng.normal(size=n))
    return x, y


@pytest.mark.parametrize("offset,scale", [(0.0, 1.0), (1e6, 0.01), (1e9, 1.0), (0.0, 1e-9), (0.0, 1e9),
                                          (1000.0, 1e-3)])
def test_node_losses_and_baseline_are_stable(offset, scale):
    x, y = _two_leaves(offset, scale)
    x0, y0 = _two_leaves(0.0, 1.0)
    base = obj.squared_baseline(y)
    assert base == pytest.approx(obj.squared_baseline(y0) * scale ** 2, rel=1e-6)
    per = obj.node_losses(x, y, 2, "squared")
    per0 = obj.node_losses(x0, y0, 2, "squared")
    np.testing.assert_allclose(per / base, per0 / obj.squared_baseline(y0), rtol=1e-6)
    assert obj.absolute_baseline(y) == pytest.approx(obj.absolute_baseline(y0) * scale, rel=1e-6)


def test_constant_target_is_relative_to_its_own_scale():
    assert is_constant_target(np.full(5, 1e6))
    assert is_constant_target(np.full(5, 1e6) + np.array([0, 1, 0, 1, 0]) * np.spacing(1e6))
    assert not is_constant_target(1e-9 * np.arange(5.0))          # tiny but not constant
    assert obj.squared_baseline(np.full(4, 3e7)) == 1.0
    assert obj.squared_baseline(1e-9 * np.arange(4.0)) == pytest.approx(5e-18)


@settings(max_examples=30)
@given(loc=st.sampled_from([0.0, 1.0, -1e6, 1e9]), e=st.integers(-9, 9), seed=st.integers(0, 100))
def test_target_scaling_round_trip(loc, e, seed):
    rng = np.random.default_rng(seed)
    y = loc + 10.0 ** e * rng.normal(size=20)
    ts = TargetScaling.fit(y)
    z = ts.transform(y)
    if is_constant_target(y):          # 1e9 + 1e-9 noise: equal in doubles, relative to their magnitude
        assert ts.scale == 1.0
        return
    assert ts.scale > 0 and np.log2(ts.scale) == round(np.log2(ts.scale))     # a power of two: exact
    # centred to the precision y holds (loc is a double: one unit in its last place, in y' units)
    assert abs(np.average(z)) <= 1e-9 + np.spacing(abs(ts.loc)) / ts.scale and 0.5 <= np.std(z) <= 2.0
    np.testing.assert_allclose(ts.values_to_user(z), y, rtol=1e-12, atol=1e-12 * max(abs(loc), 10.0 ** e))


def test_constant_target_maps_with_scale_one():
    ts = TargetScaling.fit(np.full(6, 1e9))
    assert ts.scale == 1.0 and np.all(ts.transform(np.full(6, 1e9)) == 0.0)


def test_tree_to_user_maps_constants_and_linear_leaves():
    ts = TargetScaling(loc=100.0, scale=4.0)
    cl, cr = np.array([1, LEAF, LEAF]), np.array([2, LEAF, LEAF])
    const = Tree(cl, cr, np.array([0, LEAF, LEAF]), np.array([0.5, 0, 0]), np.array([[0.0], [-1.0], [1.0]]),
                 task="regression", n_features=2)
    out = ts.tree_to_user(const)
    np.testing.assert_allclose(out.value[:, 0], [100.0, 96.0, 104.0])
    np.testing.assert_array_equal(const.value[:, 0], [0.0, -1.0, 1.0])          # the input is not changed
    lin = Tree(cl, cr, np.array([0, LEAF, LEAF]), np.array([0.5, 0, 0]),
               np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.0], [-1.0, 0.0, 3.0]]), task="linear", n_features=2)
    X = np.array([[0.2, 1.0], [0.9, -2.0]])
    np.testing.assert_allclose(ts.tree_to_user(lin).predict(X), 100.0 + 4.0 * lin.predict(X))


def test_standardize_target_once():
    X = np.arange(10.0).reshape(-1, 1)
    d = standardize_target(prepare(X, 1e9 + np.arange(10.0), task="regression"))
    assert d.target is not None and abs(d.y.mean()) < 1e-12
    assert standardize_target(d) is d                     # already standardised: as it is
    c = prepare(X, np.arange(10) % 2, task="classification")
    assert standardize_target(c) is c
