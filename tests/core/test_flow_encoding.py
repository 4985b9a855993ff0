"""Encodings (binarisation, integer, one-hot) and the regenerated robust-paper datasets."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from opttrees.data.binarizers import Binarizer, IntegerEncoder, OneHotGroups
from opttrees.errors import InputError
from opttrees.experiments import datasets_robust


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


@pytest.mark.parametrize("name", sorted(datasets_robust.LOADERS))
def test_regenerated_datasets_match_documented_counts(name):
    ds = datasets_robust.load(name)
    rows, counts = datasets_robust.DOCUMENTED[name]
    assert ds.n == rows == len(ds.X)
    assert ds.class_counts() == counts
    assert not ds.X.duplicated().any()   # complete enumerations: every row distinct


def test_monks_rules_spot_checks():
    m1, m2, m3 = datasets_robust.load_monks(1), datasets_robust.load_monks(2), datasets_robust.load_monks(3)
    X = m1.X.to_numpy()
    assert np.array_equal(m1.y, ((X[:, 0] == X[:, 1]) | (X[:, 4] == 1)).astype(int))
    assert np.array_equal(m2.y, ((X == 1).sum(1) == 2).astype(int))
    assert len(m3.X) == 432 and X[:, 4].max() == 4 and X[:, 2].max() == 2
    with pytest.raises(InputError):
        datasets_robust.load_monks(4)


def test_tic_tac_toe_boards_are_legal_endgames():
    ds = datasets_robust.load_tic_tac_toe()
    B = ds.X.to_numpy()
    nx, no = (B == "x").sum(1), (B == "o").sum(1)
    assert np.all((nx == no) | (nx == no + 1))
    assert set(ds.categorical) == set(ds.X.columns)


# ------------------------------------------------------------------------------------------ input hardening
def test_rank_encoding_of_unseen_values_routes_like_the_decoded_split():
    e = IntegerEncoder("rank").fit(np.array([[0.0], [1.0], [5.0]]))
    assert e.transform(np.array([[3.0]]))[0, 0] == 2            # 3 >= midpoint(1, 5) = 3 -> right
    assert e.transform(np.array([[2.9], [-7.0], [99.0]]))[:, 0].tolist() == [1, 0, 2]
    assert e.decode_threshold(0, 1) == 3.0


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, (8, 2), elements=st.floats(-50, 50, allow_nan=False, width=32)),
       arrays(np.float64, (12, 2), elements=st.floats(-80, 80, allow_nan=False, width=32)))
def test_rank_encoding_and_decoded_thresholds_agree_on_any_value(Xtr, Xte):
    e = IntegerEncoder("rank").fit(Xtr)
    Z = e.transform(Xte)
    for j in range(2):
        for theta in range(len(e.values_[j]) - 1):
            t = e.decode_threshold(j, theta)
            assert np.array_equal(Z[:, j] >= theta + 1, Xte[:, j] >= t)


def test_encoder_feature_names_and_set_output():
    df = pd.DataFrame({"a": [0.0, 1.0, 3.0], "b": [2.0, 2.0, 5.0]})
    e = IntegerEncoder().fit(df)
    assert e.get_feature_names_out().tolist() == ["a", "b"]
    out = e.set_output(transform="pandas").transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b"]
    en = IntegerEncoder().fit(df.to_numpy())
    assert en.get_feature_names_out().tolist() == ["x0", "x1"] and not hasattr(en, "feature_names_in_")
    with pytest.raises(InputError, match="expecting 2 features"):
        en.transform(np.zeros((2, 3)))
    oh = OneHotGroups(categorical=[0]).fit(np.array([[1.0, 0.5], [2.0, 0.7], [1.0, 0.1]]))
    assert oh.n_features_in_ == 2
    assert oh.get_feature_names_out().tolist() == ["0=1", "0=2", "1"]
    ohd = OneHotGroups(categorical=["c"]).fit(pd.DataFrame({"c": [10, 9, 10], "n": [1.0, 2.0, 3.0]}))
    assert ohd.get_feature_names_out().tolist() == ["c=9", "c=10", "n"]      # numeric order, clean names
    assert list(ohd.feature_names_in_) == ["c", "n"]
    with pytest.raises(InputError, match="missing"):
        OneHotGroups(categorical=["c"]).fit(pd.DataFrame({"c": ["a", None], "n": [1.0, 2.0]}))
    with pytest.raises(InputError, match="not numeric"):
        OneHotGroups().fit(pd.DataFrame({"c": ["a", "b"]}))


@pytest.mark.parametrize("est", [Binarizer(), IntegerEncoder(), IntegerEncoder("rank"), OneHotGroups()],
                         ids=["Binarizer", "IntegerEncoder", "IntegerEncoder-rank", "OneHotGroups"])
def test_encoders_pass_sklearn_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = check_estimator(est, on_fail=None)
    failed = [r["check_name"] for r in res if r["status"] == "failed"]
    assert failed == [], failed
