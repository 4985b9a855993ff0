import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opttrees.data.prepared import LabelCodec, check_X, feature_epsilon, prepare
from opttrees.errors import InputError


@pytest.mark.parametrize("X, y, msg", [
    (np.zeros((0, 2)), [], "0 rows"),
    (np.zeros((3, 2)), [0, 1], "lengths must match"),
    (np.array([[0.0, np.nan], [1, 2]]), [0, 1], "NaN"),
    (np.array([[0.0, np.inf], [1, 2]]), [0, 1], "NaN/infinite"),
    (pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}), [0, 1], "non-numeric column"),
    (np.array([["1", "a"], ["2", "b"]], dtype=object), [0, 1], "non-numeric"),
    (np.zeros((4, 2)), [1, 1, 1, 1], "only one class"),
    (np.arange(5.0), [0, 1, 0, 1, 0], "1-D"),
    (np.zeros((2, 2, 2)), [0, 1], "2-D"),
    (np.zeros((3, 0)), [0, 1, 0], "0 feature"),
    (np.zeros((3, 2)), [0.5, 1.25, 2.0], "continuous target"),
    (np.array([[1 + 2j, 0], [1, 2]]), [0, 1], "complex"),
    (pd.DataFrame({"a": [1 + 1j, 2]}), [0, 1], "complex"),
])
def test_bad_inputs_name_the_problem(X, y, msg):
    with pytest.raises(InputError, match=msg):
        prepare(X, y)


def test_fewer_rows_than_min_leaf():
    with pytest.raises(InputError, match="min_samples_leaf"):
        prepare(np.zeros((3, 1)), [0, 1, 0], min_samples_leaf=4)


def test_bad_weights():
    with pytest.raises(InputError, match="sample_weight"):
        prepare(np.eye(3), [0, 1, 0], sample_weight=[1, -1, 1])


@pytest.mark.parametrize("labels", [["cat", "dog", "cat", "emu"], [-1, 1, 1, -1], [2.5, 0.5, 2.5, 0.5],
                                    [True, False, True, True]])
def test_label_round_trip(labels):
    d = prepare(np.arange(8.0).reshape(4, 2), labels)
    assert list(d.codec.decode(d.y)) == list(labels)
    assert d.y.min() == 0 and d.y.max() == len(set(labels)) - 1


def test_unseen_label_rejected():
    codec = LabelCodec.fit(np.array(["a", "b"]))
    with pytest.raises(InputError, match="not seen"):
        codec.encode(np.array(["c"]))


def test_scaling_epsilon_and_constant_features():
    X = np.array([[0.0, 5.0, 1.0], [1.0, 5.0, 3.0], [3.0, 5.0, 3.0], [4.0, 5.0, 2.0]])
    d = prepare(X, [0, 1, 0, 1])
    assert np.allclose(d.Xs.min(0)[[0, 2]], 0) and np.allclose(d.Xs.max(0)[[0, 2]], 1)
    assert np.allclose(d.Xs[:, 1], 0)               # constant feature maps to 0
    assert np.allclose(d.eps, [0.25, 0.0, 0.5])      # smallest gaps between distinct scaled values
    assert list(d.splittable) == [True, False, True]
    assert np.allclose(d.scaling.inverse(d.Xs), X[:, [0, 1, 2]] * [1, 0, 1] + [0, 5, 0])


def test_epsilon_keeps_float_noise_distinct():
    """0.3 and 0.1 + 0.2 are distinct values a split can separate (rounding them together gave false optima);
    the MIO routes on the rank scale, where they are 1/3 apart."""
    X = np.array([[0.0], [0.3], [0.1 + 0.2], [1.0]])  # 0.3 and 0.1+0.2 differ by 5e-17
    assert feature_epsilon(X)[0] == pytest.approx(5.55e-17, rel=1e-2)
    assert prepare(X, [0, 0, 1, 1]).ranks[1][0] == pytest.approx(1 / 3)


def test_zero_weight_rows_are_dropped():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    d = prepare(X, [0, 1, 1, 1], sample_weight=[1, 0, 1, 1], min_samples_leaf=2)
    assert d.n == 3 and list(d.kept_rows) == [0, 2, 3] and list(d.X[:, 0]) == [0.0, 2.0, 3.0]
    with pytest.raises(InputError, match="positive weight"):
        prepare(X, [0, 1, 1, 1], sample_weight=[1, 0, 0, 1], min_samples_leaf=3)


def test_feature_names_kept():
    df = pd.DataFrame({"height": [1.0, 2.0], "weight": [3, 4]})
    assert prepare(df, [0, 1]).feature_names == ["height", "weight"]


def test_check_X_feature_count():
    with pytest.raises(InputError, match="fitted with 3"):
        check_X(np.zeros((2, 2)), 3)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=30))
def test_scaled_values_in_unit_interval(values):
    X = np.array(values).reshape(-1, 1)
    d = prepare(X, [i % 2 for i in range(len(values))]) if len(values) > 1 else None
    assert (d.Xs >= 0).all() and (d.Xs <= 1).all()
    assert (d.eps >= 0).all()


def test_integral_float_labels_are_classes():
    d = prepare(np.arange(6.0).reshape(3, 2), [1.0, 2.0, 1.0])
    assert list(d.codec.classes) == [1.0, 2.0]


def test_sparse_X_is_named():
    from scipy import sparse
    with pytest.raises(InputError, match="sparse matrix"):
        prepare(sparse.csr_matrix(np.eye(3)), [0, 1, 0])


def test_duplicate_column_names_are_an_error_naming_them():
    """Before: an AttributeError from deep inside the estimators (``X[c]`` is a DataFrame for a repeated name)."""
    from opttrees import OptimalTreeClassifier
    from opttrees.data.prepared import _as_2d_float
    X = pd.DataFrame(np.random.default_rng(0).random((40, 4)), columns=["a", "a", "b", 1])
    X2 = X.set_axis(["a", "b", 1, "1"], axis=1)          # 1 and "1" are one name once stored as text
    y = (X.iloc[:, 0] > 0.5).astype(int)
    for bad, name in ((X, "a"), (X2, "1")):
        with pytest.raises(InputError, match=f"duplicate column names \\['{name}'\\]"):
            _as_2d_float(bad)
        with pytest.raises(InputError, match="duplicate column names"):
            OptimalTreeClassifier(max_depth=1, method="greedy").fit(bad, y)
