"""Helpers shared by the estimators: the solver seed, feature names, and prediction from one fitted Tree.

Parameter rules live in :mod:`opttrees.params` and :mod:`opttrees.estimators.base`, not here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..data import check_X
from ..errors import InputError
from ..params import check_param
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

    ``X``: the training features as the trees split on them (the prepared matrix, original units). Called at the
    end of every estimator's ``fit``.
    """
    for attr in ("tree_", "unpruned_tree_", "greedy_tree_"):
        tree = getattr(est, attr, None)
        if isinstance(tree, Tree):
            tree.set_display_bounds(X)


class FittedTreeMixin:
    """predict / predict_proba / apply for estimators whose fitted model is one Tree in ``tree_``."""

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.predict_proba(check_X_fitted(self, X))

    def apply(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.apply(check_X_fitted(self, X))


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
    cats = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    if not cats:
        return X, None
    from ..data import TableEncoding, _as_2d_float

    other = X.drop(columns=cats)
    if other.shape[1]:
        _as_2d_float(other)     # the usual message for text / NaN / complex in the other columns
    enc = TableEncoding.fit(X, [str(c) for c in cats], "error")
    return enc.transform(X), enc


def _fitted_encoding(est):
    tree = getattr(est, "tree_", None)
    enc = getattr(tree, "encoding", None)
    return enc if enc is not None and not enc.is_trivial else None


# ------------------------------------------------------------------------------------------ tidy fitted trees
def _same_prediction(tree: Tree, a: int, b: int) -> bool:
    """Whether leaves ``a`` and ``b`` predict the same: class / treatment, decision (SPO), or exactly equal values."""
    if tree.task in ("classification", "prescription"):
        return tree.label is not None and tree.label[a] == tree.label[b]
    if tree.task == "spo":
        dec = tree.extras.get("decision")
        return dec is not None and np.array_equal(dec[a], dec[b])
    return np.array_equal(tree.value[a], tree.value[b])


def _new_id(tree: Tree, t: int) -> int:
    stop = np.zeros(tree.n_nodes, dtype=bool)
    stop[t] = True
    return int(np.flatnonzero(tree.preorder(stop=stop) == t)[0])


def _merge_leaves(tree: Tree, t: int) -> Tree:
    """``tree`` with branch ``t`` (two leaves predicting the same) made one leaf predicting it: class counts
    summed, the children's class / treatment / decision / value kept."""
    left, right = int(tree.children_left[t]), int(tree.children_right[t])
    out = tree.prune([t])
    k = _new_id(tree, t)
    if tree.task == "classification":
        out.value[k] = tree.value[left] + tree.value[right]
        out.label[k] = tree.label[left]
    elif tree.task == "prescription":
        out.label[k] = tree.label[left]
    elif tree.task == "spo":
        out.extras["decision"][k] = tree.extras["decision"][left]
    else:
        out.value[k] = tree.value[left]
    return out


def _skip_split(tree: Tree, t: int, keep: int) -> Tree:
    """``tree`` with branch ``t`` replaced by its child subtree ``keep`` (the side every training row takes)."""
    m = tree.n_nodes
    parent = tree.parents()
    cl, cr = tree.children_left.copy(), tree.children_right.copy()
    root = keep
    if t != 0:
        root, p = 0, parent[t]
        if cl[p] == t:
            cl[p] = keep
        else:
            cr[p] = keep
    order, stack = [], [root]
    while stack:    # preorder from the new root
        u = stack.pop()
        order.append(u)
        if cl[u] != -1:
            stack += [int(cr[u]), int(cl[u])]
    old = np.asarray(order, dtype=np.int64)
    new = np.full(m, -1, dtype=np.int64)
    new[old] = np.arange(len(old))
    branch = cl[old] != -1
    extras = {k: (v[old] if v.ndim and v.shape[0] == m else v.copy()) for k, v in tree.extras.items()}
    return Tree(np.where(branch, new[cl[old]], -1), np.where(branch, new[cr[old]], -1), tree.feature[old],
                tree.threshold[old], tree.value[old], task=tree.task,
                label=None if tree.label is None else tree.label[old],
                coef=None if tree.coef is None else tree.coef[old],
                classes=None if tree.classes is None else list(tree.classes),
                feature_names=None if tree.feature_names is None else list(tree.feature_names),
                n_features=tree.n_features, extras=extras, encoding=tree.encoding)


def _candidates(tree: Tree, X: np.ndarray):
    """Trees one tidying step away: a split that sends no training row one way replaced by the other side's
    subtree, then a split into two leaves that predict the same made one leaf."""
    path = tree.decision_path(X)
    reach = np.asarray(path.sum(axis=0)).ravel()
    for t in tree.preorder():
        if tree.is_leaf(t):
            continue
        left, right = int(tree.children_left[t]), int(tree.children_right[t])
        if reach[left] == 0 or reach[right] == 0:
            yield _skip_split(tree, t, right if reach[left] == 0 else left)
    for t in tree.preorder():
        if tree.is_leaf(t):
            continue
        left, right = int(tree.children_left[t]), int(tree.children_right[t])
        if tree.is_leaf(left) and tree.is_leaf(right) and _same_prediction(tree, left, right):
            yield _merge_leaves(tree, t)


def _worse(a: float, b: float, sense: int) -> float:
    """How much objective ``a`` is worse than ``b`` (positive: worse), for minimised (1) or maximised (-1) ones."""
    return sense * (a - b)


def _tol(v: float) -> float:
    return 1e-9 * max(1.0, abs(v)) if np.isfinite(v) else 0.0


def tidy_tree(tree: Tree, X: np.ndarray, score=None, sense: int = 1, refit=None) -> Tree:
    """``tree`` without splits that do nothing on its training rows ``X``: a split with an empty side (replaced by
    the occupied side's subtree) and a split into two leaves predicting the same (class, treatment, SPO decision,
    or exactly equal values; one leaf, class counts summed). Each step is kept only when ``score`` (the
    estimator's objective, minimised for ``sense=1``, maximised for -1) does not get worse, so the objective can
    only fall (by alpha per split removed); ``refit(tree)`` recomputes payloads that depend on the rows (e.g.
    prescriptions). Without a ``score`` only steps that keep every training prediction are taken (classification
    and regression trees)."""
    if tree is None or tree.n_splits == 0:
        return tree
    if score is None and tree.task not in ("classification", "regression", "linear"):
        return tree
    best = score(tree) if score is not None else 0.0
    changed = True
    while changed and tree.n_splits:
        changed = False
        for cand in _candidates(tree, X):
            if refit is not None:
                cand = refit(cand)
            s = score(cand) if score is not None else 0.0
            if score is None or _worse(s, best, sense) <= _tol(best):
                tree, best, changed = cand, s, True
                break
    return tree


def root_leaf(tree: Tree) -> Tree:
    """``tree`` cut back to its root: the one-leaf tree (payload to be refit by the caller)."""
    return tree.prune([0])


def _not_a_proof(res, own: float, sense: int, why: str) -> None:
    """The result of a solve whose tree was replaced by a strictly better one: the objective is the returned
    tree's, nothing is proven, and a bound the new objective passes (it did not hold) is dropped."""
    from ..solvers.result import SolutionStatus, relative_gap

    res.message = (res.message + "; " if res.message else "") + why
    if res.bound is not None and np.isfinite(res.bound) and sense * (res.bound - own) > 1e-9 * max(1.0, abs(own)):
        res.bound = None
    res.objective = float(own)
    res.proven_optimal, res.proof = False, None
    if res.status in ("optimal", "gap_limit"):
        res.status = "unverified"
    res.solution_status = SolutionStatus.FEASIBLE
    res.gap = relative_gap(res.objective, res.bound)


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
            if replaced:
                _not_a_proof(res, own, s, f"the single leaf ({own:.9g}) beats the solver's tree and is returned")
            else:
                res.refit(own, s)
    if encoding is not None and tree is not None:
        tree.encoding = encoding
        for attr in ("unpruned_tree_", "greedy_tree_"):
            other = getattr(est, attr, None)
            if isinstance(other, Tree) and other.n_features == tree.n_features:
                other.encoding = encoding
    return tree
