import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opttrees.errors import InputError
from opttrees.tree import HYPERPLANE, LEAF, Tree


def small_tree():
    # root: x0 < 0.5 ; right child: hyperplane 1*x0 + 2*x1 < 2
    return Tree(children_left=[1, LEAF, 3, LEAF, LEAF], children_right=[2, LEAF, 4, LEAF, LEAF],
                feature=[0, LEAF, HYPERPLANE, LEAF, LEAF], threshold=[0.5, 0, 2.0, 0, 0],
                value=[[5, 5], [4, 0], [1, 5], [1, 0], [0, 5]], label=[0, 0, 1, 0, 1],
                coef=[[0, 0], [0, 0], [1, 2], [0, 0], [0, 0]], classes=["no", "yes"], feature_names=["a", "b"])


def test_routing_is_strict_left():
    t = small_tree()
    X = np.array([[0.49, 9], [0.5, 0], [0.5, 0.75], [1.0, 0.5]])
    # 0.5 is not < 0.5 -> right; then 0.5 + 0 < 2 -> left (leaf 3); 0.5+1.5=2 not < 2 -> leaf 4
    assert list(t.apply(X)) == [1, 3, 4, 4]
    assert list(t.predict(X)) == ["no", "no", "yes", "yes"]
    assert t.depth == 2 and t.n_leaves == 3 and t.n_splits == 2


def test_predict_proba_rows_sum_to_one():
    p = small_tree().predict_proba(np.random.default_rng(0).random((10, 2)))
    assert np.allclose(p.sum(1), 1)


def test_json_round_trip_and_exports(tmp_path):
    t = small_tree()
    path = tmp_path / "t.json"
    t.to_json(path)
    t2 = Tree.from_json(path)
    X = np.random.default_rng(1).random((50, 2)) * 2
    assert list(t2.predict(X)) == list(t.predict(X))
    assert "a < 0.5" in t.export_text() and "+2*b" in t.export_text()
    assert t.to_dot().startswith("digraph")


def test_bad_json():
    with pytest.raises(InputError, match="not found"):
        Tree.from_json("/nonexistent/tree.json")
    with pytest.raises(InputError, match="format"):
        Tree.from_dict({"task": "classification"})
    with pytest.raises(InputError, match="malformed"):
        Tree.from_json("{not json")


def test_wrong_feature_count():
    with pytest.raises(InputError, match="fitted with 2"):
        small_tree().predict(np.zeros((2, 3)))


@st.composite
def random_trees(draw):
    p = draw(st.integers(1, 4))
    depth = draw(st.integers(0, 4))
    cl, cr, feat, thr = [], [], [], []

    def rec(d):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0)
        if d < depth and draw(st.booleans()):
            feat[k] = draw(st.integers(0, p - 1))
            thr[k] = draw(st.floats(-2, 2))
            cl[k] = rec(d + 1)
            cr[k] = rec(d + 1)
        return k

    rec(0)
    m = len(cl)
    labels = draw(st.lists(st.integers(0, 2), min_size=m, max_size=m))
    return Tree(cl, cr, feat, thr, np.ones((m, 3)), label=labels, classes=[-1, 0, 1], n_features=p)


@given(random_trees(), st.integers(0, 2 ** 16))
def test_routing_matches_reference_and_round_trip(tree, seed):
    X = np.random.default_rng(seed).uniform(-2.5, 2.5, (30, tree.n_features))

    def ref(x):
        t = 0
        while tree.children_left[t] != LEAF:
            t = tree.children_left[t] if x[tree.feature[t]] < tree.threshold[t] else tree.children_right[t]
        return t

    assert list(tree.apply(X)) == [ref(x) for x in X]
    again = Tree.from_dict(json.loads(json.dumps(tree.to_dict())))
    assert np.array_equal(again.predict(X), tree.predict(X))


@pytest.mark.parametrize("field, value, message", [
    ("children_left", [0, LEAF, 3, LEAF, LEAF], "child index out of range"),     # root points to itself
    ("children_left", [1, LEAF, 1, LEAF, LEAF], "reached twice"),                # shared child
    ("children_right", [2, LEAF, 9, LEAF, LEAF], "out of range"),
    ("children_right", [2, LEAF, LEAF, LEAF, LEAF], "exactly one child"),
    ("feature", [5, LEAF, HYPERPLANE, LEAF, LEAF], "feature out of range"),
    ("label", [0, 0, 1, 0, 7], "labels"),
    ("children_left", "abc", "children_left.* must be a list"),
    ("label", None, "needs 'label'"),
])
def test_corrupt_json_is_rejected_with_a_named_problem(tmp_path, field, value, message):
    d = small_tree().to_dict()
    d[field] = value
    with pytest.raises(InputError, match=message):
        Tree.from_dict(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    with pytest.raises(InputError, match=message):
        Tree.from_json(path)


def test_cycle_deeper_in_the_tree_cannot_hang_predict():
    d = small_tree().to_dict()
    d["children_right"] = [2, LEAF, 2, LEAF, LEAF]      # node 2's right child is itself
    with pytest.raises(InputError, match="reached twice"):
        Tree.from_dict(d)


def test_directory_is_not_a_tree_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        Tree.from_json(tmp_path)


def test_dot_escapes_quotes_in_feature_names():
    t = small_tree()
    t.feature_names = ['len "in"', "b"]
    dot = t.to_dot()
    assert 'len \\"in\\" < 0.5' in dot
    body = [line for line in dot.splitlines() if "label=" in line]
    for line in body:      # every label string is closed exactly once: an even number of unescaped quotes
        assert line.replace('\\"', "").count('"') % 2 == 0, line


def test_labels_json_cannot_hold_give_a_clear_error():
    t = small_tree()
    t.classes = [b"no", b"yes"]
    with pytest.raises(InputError, match="cannot be saved to JSON"):
        t.to_json()


# ---------------------------------------------------------------- decision_path and prune
def test_decision_path_small_tree_with_a_hyperplane():
    t = small_tree()
    X = np.array([[0.49, 9], [0.5, 0], [0.5, 0.75], [1.0, 0.5]])
    D = t.decision_path(X)
    assert D.shape == (4, 5) and D.format == "csr"
    assert D.toarray().tolist() == [[1, 1, 0, 0, 0], [1, 0, 1, 1, 0], [1, 0, 1, 0, 1], [1, 0, 1, 0, 1]]
    assert [D.indices[D.indptr[i + 1] - 1] for i in range(4)] == list(t.apply(X))


@given(random_trees(), st.integers(0, 2 ** 16))
def test_decision_path_agrees_with_apply(tree, seed):
    X = np.random.default_rng(seed).uniform(-2.5, 2.5, (25, tree.n_features))
    D = tree.decision_path(X)
    assert D.shape == (25, tree.n_nodes)
    leaf = tree.apply(X)
    depth = tree.node_depths()
    for i in range(25):
        path = D.indices[D.indptr[i]:D.indptr[i + 1]]
        assert path[0] == 0 and path[-1] == leaf[i] and len(path) == depth[leaf[i]] + 1
        for u, v in zip(path[:-1], path[1:]):      # each step goes to a child of the previous node
            assert v in (tree.children_left[u], tree.children_right[u])
    assert np.all(D.data == 1)


@st.composite
def trees_and_cuts(draw):
    tree = draw(random_trees())
    m = tree.n_nodes
    tree.value = np.column_stack([np.arange(m), np.arange(m) ** 2, np.ones(m)]).astype(float)  # node ids
    tree.extras = {"node": np.arange(m) * 10, "scalar": np.array(7.0)}
    cut = draw(st.lists(st.integers(0, m - 1), max_size=m, unique=True))
    return tree, cut


@given(trees_and_cuts(), st.integers(0, 2 ** 16))
def test_prune_keeps_predictions_of_unpruned_rows_and_payloads(tc, seed):
    tree, cut = tc
    X = np.random.default_rng(seed).uniform(-2.5, 2.5, (40, tree.n_features))
    p = tree.prune(cut)
    assert p is not tree and tree.n_nodes == len(tree.value)        # the original is untouched
    # where each row stops in the original tree: its leaf, or the topmost pruned branch node on its path
    D = tree.decision_path(X)
    stop = []
    for i in range(len(X)):
        path = D.indices[D.indptr[i]:D.indptr[i + 1]]
        hit = [u for u in path if u in cut and tree.children_left[u] != LEAF]
        stop.append(hit[0] if hit else path[-1])
    stop = np.array(stop)
    new_leaf = p.apply(X)
    assert np.all(p.children_left[new_leaf] == LEAF)
    assert np.array_equal(p.value[new_leaf, 0], stop)                   # payload moved with its node
    assert np.array_equal(p.extras["node"][new_leaf], 10 * stop)
    assert np.array_equal(p.label[new_leaf], tree.label[stop])
    assert float(p.extras["scalar"]) == 7.0
    untouched = stop == tree.apply(X)
    assert np.array_equal(p.predict(X)[untouched], tree.predict(X)[untouched])
    # compact preorder numbering, and branch nodes of the result are exactly the kept splits
    assert np.array_equal(p.preorder(), np.arange(p.n_nodes))
    kept = [t for t in range(tree.n_nodes) if tree.children_left[t] != LEAF and t not in cut
            and not any(a in cut for a in _ancestors(tree, t))]
    assert p.n_splits == len(kept)
    again = Tree.from_json(p.to_json())
    assert np.array_equal(again.predict(X), p.predict(X))
    assert np.array_equal(again.value, p.value) and np.array_equal(again.extras["node"], p.extras["node"])


def _ancestors(tree, t):
    parent = tree.parents()
    out = []
    while parent[t] >= 0:
        t = parent[t]
        out.append(t)
    return out


def test_prune_small_tree_and_bad_arguments():
    t = small_tree()
    p = t.prune([2])
    assert p.n_nodes == 3 and p.n_splits == 1 and list(p.label) == [0, 0, 1]
    assert p.value.tolist() == [[5, 5], [4, 0], [1, 5]] and p.coef.shape == (3, 2)
    X = np.array([[0.2, 0.0], [0.9, 0.0], [0.9, 5.0]])
    assert list(p.predict(X)) == ["no", "yes", "yes"]
    assert t.prune([]).to_dict() == t.to_dict() and t.prune([1, 3]).to_dict() == t.to_dict()  # leaves: no-op
    assert t.prune(0).n_nodes == 1 and t.prune(np.arange(5) == 2).n_nodes == 3
    for bad, msg in [([5], "0..4"), ([-1], "0..4"), ([1.0], "integers"), (np.ones(3, bool), "shape")]:
        with pytest.raises(InputError, match=msg):
            t.prune(bad)


# ------------------------------------------------------------------ linear leaves (ORT-L)
def linear_tree():
    """x0 < 0.5 ? (1 + 2*a) : (-1 + 0.5*b); the root carries the model fitted on all its rows (3 - a)."""
    return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0, 0],
                [[3.0, -1.0, 0.0], [1.0, 2.0, 0.0], [-1.0, 0.0, 0.5]], task="linear", feature_names=["a", "b"])


def test_linear_leaves_predict_on_raw_x_and_show_nonzero_terms_only(tmp_path):
    t = linear_tree()
    X = np.array([[0.25, 7.0], [0.5, 4.0], [2.0, -2.0]])
    np.testing.assert_allclose(t.predict(X), [1.5, 1.0, -2.0])
    assert t.n_features == 2 and t.leaf_model(2) == (-1.0, pytest.approx([0.0, 0.5]))
    text = t.export_text()
    assert "leaf 1: predict 1 +2*a" in text and "leaf 2: predict -1 +0.5*b" in text
    assert "0*b" not in text and "+0*a" not in text
    assert "predict 1 +2*a" in t.to_dot()
    path = tmp_path / "lin.json"
    t.to_json(path)
    back = Tree.from_json(path)
    assert back.task == "linear"
    np.testing.assert_array_equal(back.value, t.value)
    np.testing.assert_array_equal(back.predict(X), t.predict(X))


def test_linear_tree_without_names_infers_the_feature_count_from_the_payload():
    t = Tree([LEAF], [LEAF], [LEAF], [0.0], [[1.0, 0.0, 0.0, 2.0]], task="linear")
    assert t.n_features == 3
    np.testing.assert_allclose(t.predict(np.array([[9.0, 9.0, 1.0]])), [3.0])
    assert t.leaf_text(0) == "predict 1 +2*x2"


def test_pruned_linear_tree_predicts_with_the_branch_nodes_model():
    pruned = linear_tree().prune([0])
    assert pruned.n_nodes == 1 and pruned.task == "linear"
    np.testing.assert_allclose(pruned.predict(np.array([[2.0, 5.0]])), [1.0])


@pytest.mark.parametrize("value, message", [
    ([[0, 0], [1, 2], [3, 4]], "3 columns"),
    ([[0, 0, 0], [np.nan, 2, 0], [3, 4, 0]], "non-finite"),
])
def test_malformed_linear_payload_is_rejected(value, message):
    with pytest.raises(InputError, match=message):
        Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0, 0], value, task="linear", n_features=2)
    good = linear_tree().to_dict()
    good["value"] = value
    with pytest.raises(InputError, match=message):
        Tree.from_dict(good)


def test_leaf_model_needs_a_linear_tree():
    with pytest.raises(InputError, match="linear"):
        small_tree().leaf_model(1)
