"""Encodings (binarisation, integer, one-hot) and the regenerated robust-paper datasets."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from opttrees.encoding import Binarizer, IntegerEncoder, OneHotGroups
from opttrees.errors import InputError
from opttrees.experiments import datasets_robust as dr


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 3)),
              elements=st.integers(-5, 5).map(float)))
def test_binarizer_columns_decode_to_tree_routing(X):
    b = Binarizer().fit(X)
    Z = b.transform(X)
    for c in range(b.n_columns_):
        j, t = b.decode(c)
        # column 1 = goes right = not (x_j < t)
        assert np.array_equal(Z[:, c] == 1, ~(X[:, j] < t))
        assert b.encode_split(j, t) == c
    # midpoints: one column per adjacent pair of distinct values
    assert b.n_columns_ == sum(len(np.unique(X[:, j])) - 1 for j in range(X.shape[1]))


def test_binarizer_quantile_caps_thresholds_and_binary_feature_is_itself():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=200), rng.integers(0, 2, 200)])
    b = Binarizer("quantile", n_thresholds=5).fit(X)
    assert (b.feature_ == 0).sum() <= 5 and (b.feature_ == 1).sum() == 1
    Z = b.transform(X)
    assert np.array_equal(Z[:, b.feature_ == 1][:, 0], X[:, 1])
    with pytest.raises(InputError):
        Binarizer("bogus").fit(X)
    with pytest.raises(InputError):
        b.transform(X[:, :1])


def test_integer_encoder_identity_and_rank_decoding():
    X = np.array([[1, 0.5], [3, 2.0], [2, 7.5]])
    with pytest.raises(InputError):
        IntegerEncoder("identity").fit(X)
    e = IntegerEncoder("auto").fit(X)
    assert e.mode_ == "rank"
    Zi = e.transform(X)
    assert Zi[:, 1].tolist() == [0, 1, 2]
    # split z >= theta + 1 with theta = 0 on feature 1 -> x < midpoint(0.5, 2.0)
    t = e.decode_threshold(1, 0)
    assert t == 1.25
    assert np.array_equal(Zi[:, 1] >= 1, ~(X[:, 1] < t))
    assert np.allclose(e.inverse_transform(Zi), X)
    ei = IntegerEncoder().fit(X[:, :1])
    assert ei.mode_ == "identity" and ei.decode_threshold(0, 2) == 2.5


def test_one_hot_groups():
    df = pd.DataFrame({"a": ["x", "o", "b", "x"], "n": [1, 2, 3, 4]})
    oh = OneHotGroups(categorical=["a"]).fit(df)
    Z = oh.transform(df)
    assert oh.groups_ == [[0, 1, 2]] and Z.shape == (4, 4)
    assert np.all(Z[:, :3].sum(axis=1) == 1)
    with pytest.raises(InputError):
        oh.transform(pd.DataFrame({"a": ["q"], "n": [1]}))


@pytest.mark.parametrize("name", sorted(dr.LOADERS))
def test_regenerated_datasets_match_documented_counts(name):
    ds = dr.load(name)
    rows, counts = dr.DOCUMENTED[name]
    assert ds.n == rows == len(ds.X)
    assert ds.class_counts() == counts
    assert not ds.X.duplicated().any()   # complete enumerations: every row distinct


def test_monks_rules_spot_checks():
    m1, m2, m3 = dr.load_monks(1), dr.load_monks(2), dr.load_monks(3)
    X = m1.X.to_numpy()
    assert np.array_equal(m1.y, ((X[:, 0] == X[:, 1]) | (X[:, 4] == 1)).astype(int))
    assert np.array_equal(m2.y, ((X == 1).sum(1) == 2).astype(int))
    assert len(m3.X) == 432 and X[:, 4].max() == 4 and X[:, 2].max() == 2
    with pytest.raises(InputError):
        dr.load_monks(4)


def test_tic_tac_toe_boards_are_legal_endgames():
    ds = dr.load_tic_tac_toe()
    B = ds.X.to_numpy()
    nx, no = (B == "x").sum(1), (B == "o").sum(1)
    assert np.all((nx == no) | (nx == no + 1))
    assert set(ds.categorical) == set(ds.X.columns)
