"""spo/costs.py: an SPO fit's cost data (checks, validation rows, one exact cost factor) and what it computes."""
import numpy as np
import pytest

from opttrees.datasets.spo import shortest_path_data
from opttrees.errors import InputError
from opttrees.oracles import GridShortestPath
from opttrees.spo import grow_spo_tree, spot_objective
from opttrees.spo.costs import CostData, cost_factor


def _data(n=60):
    D = shortest_path_data(n, deg=4, noise=0.25, p=3, n_test=0, grid=(3, 3), seed=2)
    return GridShortestPath(3, 3), D.X, D.C


def test_costs_are_scaled_by_an_exact_power_of_two_and_trees_come_back_in_the_callers_units():
    pr, X, C = _data()
    d = CostData.prepare(pr, X, C * 1000.0)
    assert d.factor == 2.0 ** -round(np.log2(np.abs(C * 1000.0).max()))
    np.testing.assert_array_equal(d.C, C * 1000.0 * d.factor)   # a power of two: exact
    tree = d.refit(grow_spo_tree(pr, d.X, d.C, d.w, max_depth=2, min_samples_leaf=5))
    user = d.to_user(tree)
    np.testing.assert_allclose(user.value, tree.value / d.factor)
    np.testing.assert_allclose(user.extras["train_spo"], tree.extras["train_spo"] / d.factor)
    np.testing.assert_array_equal(user.extras["decision"], tree.extras["decision"])
    assert cost_factor(np.zeros((3, 2))) == 1.0


def test_the_objective_is_scale_free_and_equals_spot_objective():
    pr, X, C = _data()
    small, big = CostData.prepare(pr, X, C), CostData.prepare(pr, X, C * 1e6)
    tree = grow_spo_tree(pr, X, C, max_depth=2, min_samples_leaf=5)
    assert small.objective(1e-3)(tree) == pytest.approx(big.objective(1e-3)(tree), rel=1e-9)
    assert small.objective(1e-3)(tree) == pytest.approx(spot_objective(pr, tree, small.X, small.C, small.w,
                                                                      alpha=1e-3), rel=1e-12)


def test_validation_rows_given_or_split_off():
    pr, X, C = _data(40)
    d = CostData.prepare(pr, X, C, validation_fraction=0.25, random_state=0)
    assert d.X.shape[0] == 30 and d.val[0].shape[0] == 10
    np.testing.assert_allclose(np.sort(np.concatenate([d.X[:, 0], d.val[0][:, 0]])), np.sort(X[:, 0]))
    given = CostData.prepare(pr, X[:30], C[:30], X_val=X[30:], C_val=C[30:])
    assert given.val[0].shape[0] == 10 and given.X.shape[0] == 30
    np.testing.assert_allclose(given.val[1], C[30:] * given.factor)   # the same factor as the training costs
    with pytest.raises(InputError, match="give both X_val and C_val"):
        CostData.prepare(pr, X, C, X_val=X)
    with pytest.raises(InputError, match="X_val has 2 features but X has 3"):
        CostData.prepare(pr, X, C, X_val=X[:, :2], C_val=C)
    with pytest.raises(InputError, match="leaves no validation or no training rows"):
        CostData.prepare(pr, X, C, validation_fraction=0.01)


def test_named_columns_name_the_refitted_trees_features():
    pd = pytest.importorskip("pandas")
    pr, X, C = _data()
    d = CostData.prepare(pr, pd.DataFrame(X, columns=["u", "v", "w"]), C)
    tree = grow_spo_tree(pr, d.X, d.C, d.w, max_depth=1, min_samples_leaf=5)
    assert d.refit(tree).feature_names == ["u", "v", "w"]
