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
    ("children_left", "abc", "malformed"),
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
