"""Helpers shared by the estimators: the solver seed, feature names, and prediction from one fitted Tree.

Parameter rules live in :mod:`opttrees.params` and :mod:`opttrees.estimators.base`, not here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..data.prepared import PreparedData, check_X
from ..errors import InputError
from ..params import check_param
from ..sklearn_export import feature_importances, set_node_statistics
from ..sklearn_export import to_sklearn as tree_to_sklearn
from ..tidy import _tol, _worse, tidy_tree
from ..tree import Tree


def solver_seed(random_state) -> int:
    """An integer seed for the solver from any sklearn-style ``random_state`` (None, int, RandomState, Generator)."""
    check_param("random_state", random_state)
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2 ** 31))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 31))
    return int(random_state) % (2 ** 31)


def feature_names_in(X):
    """sklearn's ``feature_names_in_`` convention: only for DataFrames with string column names."""
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        return list(X.columns)
    return None


def check_X_fitted(est, X) -> np.ndarray:
    """X as the fitted estimator saw it: DataFrame columns are matched by name, not position.

    A DataFrame whose columns are reordered would otherwise be routed silently through the wrong features.
    """
    enc = _fitted_encoding(est)
    if enc is not None and isinstance(X, pd.DataFrame):
        # fitted on category columns: the raw table is re-encoded by column name (reordered columns are fine,
        # unseen categories get 0 in every one-hot feature of their column, with a warning); a DataFrame of the
        # one-hot features themselves is picked by name
        return est.tree_._input(X)
    names = getattr(est, "feature_names_in_", None)
    if names is not None and isinstance(X, pd.DataFrame):
        names = [str(c) for c in names]
        cols = [str(c) for c in X.columns]
        missing = [c for c in names if c not in cols]
        if cols != names and len(missing) < len(names):   # no shared name at all: fitted on arrays, positional
            if missing:
                raise InputError(f"X is missing the column(s) {missing} seen at fit time "
                                 f"(fitted on {names})")
            X = X.set_axis(cols, axis=1)[names]
    return check_X(X, est.n_features_in_)


def record_display_bounds(est, X) -> None:
    """Give the fitted trees their training rows' display bounds (:meth:`~opttrees.tree.Tree.set_display_bounds`),
    so every printed threshold (text, DOT, pictures, HTML, the saved JSON) routes those rows as the tree does.

    ``X``: the training features as the trees split on them (original units): a ``PreparedData`` (then every row
    the caller gave, the rows of weight 0 that ``prepare`` dropped included: snapping moves none of them), or
    the matrix itself. Called at the end of every estimator's ``fit``.
    """
    if isinstance(X, PreparedData):
        X = X.all_rows_X
    for attr in ("tree_", "unpruned_tree_", "greedy_tree_"):
        tree = getattr(est, attr, None)
        if isinstance(tree, Tree):
            tree.set_display_bounds(X)


def record_node_stats(est, X, y=None, sample_weight=None, criterion: str | None = None, n_classes: int | None = None,
                      node_loss=None) -> None:
    """Record the training rows' node statistics on ``est.tree_`` and set ``est.feature_importances_``
    (:mod:`opttrees.sklearn_export`: scikit-learn's ``n_node_samples``, ``weighted_n_node_samples``, ``impurity``
    and importances). ``X``: the training features as the tree splits on them; ``criterion`` ("gini",
    "squared_error", "absolute_error") with ``y``, or ``node_loss`` (each node's total training loss as a leaf).
    Called at the end of every single-tree estimator's ``fit``, after :func:`record_display_bounds`."""
    tree = est.tree_
    set_node_statistics(tree, X, y, sample_weight, criterion=criterion, n_classes=n_classes, node_loss=node_loss)
    est.feature_importances_ = feature_importances(tree, X, sample_weight)


class TreeAttributesMixin:
    """scikit-learn's tree attributes for an estimator whose fitted model is one Tree in ``tree_``: ``apply``,
    ``decision_path``, ``get_depth``, ``get_n_leaves`` and ``to_sklearn`` (``feature_importances_`` is set by
    :func:`record_node_stats` at the end of ``fit``). X is checked as ``predict`` checks it (DataFrame columns
    by name, category columns re-encoded)."""

    tree_: Tree
    #: the scikit-learn criterion naming the impurity in the tree's node statistics (``to_sklearn``)
    _sklearn_criterion = "gini"

    def _fitted_tree(self) -> Tree:
        check_is_fitted(self, "tree_")
        return self.tree_

    def apply(self, X) -> np.ndarray:
        """(n,) the id of the leaf each row of X reaches (node ids of ``tree_``; routing: left iff a.x < b)."""
        return self._fitted_tree().apply(check_X_fitted(self, X))

    def decision_path(self, X):
        """(n, n_nodes) scipy CSR indicator of the nodes each row of X passes through, root to leaf, as
        scikit-learn's ``decision_path`` (:meth:`opttrees.tree.Tree.decision_path`)."""
        return self._fitted_tree().decision_path(check_X_fitted(self, X))

    def get_depth(self) -> int:
        """The depth of the fitted tree (0 for a single leaf)."""
        return self._fitted_tree().depth

    def get_n_leaves(self) -> int:
        """The number of leaves of the fitted tree."""
        return self._fitted_tree().n_leaves

    def to_sklearn(self):
        """The fitted tree as a fitted ``sklearn.tree.DecisionTreeClassifier`` / ``DecisionTreeRegressor``: same
        splits, leaf values, node statistics and predictions (:func:`opttrees.sklearn_export.to_sklearn`: every
        training row and every float32 value routes alike), for ``sklearn.tree.export_text``, ``plot_tree``,
        ``export_graphviz``, skl2onnx and SHAP. InputError for hyperplane splits, linear leaves and the trees
        scikit-learn cannot hold."""
        tree = self._fitted_tree()
        names = getattr(self, "feature_names_in_", None)
        if tree.encoding is not None and not tree.encoding.is_trivial:
            names = None        # the scikit-learn tree reads the one-hot features (their names are the default)
        return tree_to_sklearn(tree, criterion=self._sklearn_criterion, classes=getattr(self, "classes_", None),
                               feature_names_in=names)


class FittedTreeMixin(TreeAttributesMixin):
    """predict / predict_proba (and :class:`TreeAttributesMixin`) for estimators whose fitted model is one Tree
    in ``tree_``."""

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.predict_proba(check_X_fitted(self, X))


# ------------------------------------------------------------------------------------------ category columns
def encode_categories(X):
    """(X, encoding) at the start of every estimator's ``fit``: a DataFrame's pandas ``category`` columns one-hot
    encoded as the CLI encodes text columns (:class:`~opttrees.data.TableEncoding`, one 0/1 feature
    ``column=category`` per category seen here), and the encoding, which :func:`finish_fit` attaches to the
    fitted tree (``Tree.encoding``: predict re-encodes a raw table by column name, unseen categories get zeros
    with a warning, text reads ``colour = red``). Anything else comes back as it is with ``None``.

    Plain object/string columns are not encoded: they stay an error naming ``astype("category")`` and
    ``pandas.get_dummies`` (an identifier column silently becoming thousands of features is worse).
    """
    if not isinstance(X, pd.DataFrame):
        return X, None
    from ..data.prepared import check_unique_columns
    check_unique_columns(X)
    cats = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return X, None
    from ..data.table import TableEncoding
    from ..data.prepared import _as_2d_float

    other = X.drop(columns=cats)
    if other.shape[1]:
        _as_2d_float(other)     # the usual message for text / NaN / complex in the other columns
    enc = TableEncoding.fit(X, [str(c) for c in cats], "error")
    return enc.transform(X), enc


def _fitted_encoding(est):
    tree = getattr(est, "tree_", None)
    enc = getattr(tree, "encoding", None)
    return enc if enc is not None and not enc.is_trivial else None


def root_leaf(tree: Tree) -> Tree:
    """``tree`` cut back to its root: the one-leaf tree (payload to be refit by the caller)."""
    return tree.prune([0])


def finish_fit(est, tree: Tree, X: np.ndarray, score=None, sense: int = 1, leaf=None, refit=None,
               encoding=None) -> Tree:
    """The one post-fit step of every estimator: tidy the returned tree, never return one worse than the
    trivial tree, keep ``solve_result_`` about the returned tree, and attach the category encoding.

    1. :func:`tidy_tree` (splits with an empty side, splits into two leaves predicting the same);
    2. ``leaf`` (the one-leaf tree with its payload: majority class, mean or median, ...) replaces the tree
       when ``score`` rates it strictly better, with a warning naming both objectives;
    3. ``est.solve_result_`` (when it has a solution and the tree changed) reports the returned tree's objective
       (on ``est.formulation_``'s objective when the estimator keeps one): :meth:`SolveResult.refit` after
       tidying (a better point of the same model; a proof stays one), and no proof after the leaf replaced it;
    4. ``encoding`` (from :func:`encode_categories`) goes on the tree.
    """
    original = tree
    tree = tidy_tree(tree, X, score, sense, refit)
    replaced = False
    if leaf is not None and score is not None and tree is not None:
        own, trivial = score(tree), score(leaf)
        if _worse(own, trivial, sense) > _tol(trivial):
            import warnings
            warnings.warn(f"{type(est).__name__}: the fitted tree's objective {own:.6g} is worse than the single "
                          f"leaf's {trivial:.6g} ({'maximised' if sense == -1 else 'minimised'}); returning the "
                          "single leaf", stacklevel=3)
            tree, replaced = leaf, True
    res = getattr(est, "solve_result_", None)
    if res is not None and getattr(res, "has_solution", False) and tree is not original:
        form = getattr(est, "formulation_", None)
        fn, s = ((form.tree_objective, int(form.sense)) if form is not None and hasattr(form, "tree_objective")
                 else (score, sense))
        if fn is not None:
            own = fn(tree)
            if form is not None and hasattr(form, "recomputed_objective"):
                form.recomputed_objective = own   # the returned tree's, not the solver's tree's before tidying
            if replaced:
                res.replaced(own, s, f"the single leaf ({own:.9g}) beats the solver's tree and is returned")
            else:
                res.refit(own, s)
    if encoding is not None and tree is not None:
        tree.encoding = encoding
        for attr in ("unpruned_tree_", "greedy_tree_"):
            other = getattr(est, attr, None)
            if isinstance(other, Tree) and other.n_features == tree.n_features:
                other.encoding = encoding
    return tree
