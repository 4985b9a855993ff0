"""Tree pictures: the matplotlib drawing (boxes, class names, PNG/SVG files) and the HTML viewer's content."""
import dataclasses
import json
import re
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes, load_iris

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.errors import InputError
from opttrees.tree import HYPERPLANE, LEAF, Tree, leaf_tree
from opttrees.viz import MissingDependencyError, plot_tree, save_picture, tree_to_html, write_html
from opttrees.viz import html as viz_html
from opttrees.viz.stats import node_stats

IRIS_NAMES = ["setosa", "versicolor", "virginica"]
HOSTILE = '</script><script>alert("x")</script>&amp;<b>'


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y


@pytest.fixture(scope="module")
def iris_tree(iris):
    X, y = iris
    return OptimalTreeClassifier(max_depth=3, method="greedy", random_state=0).fit(X, y).tree_


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    tree = OptimalTreeRegressor(max_depth=2, method="greedy", random_state=0).fit(X, y).tree_
    return X, y, tree


def hyperplane_tree(names=None):
    """Root: x0 - 2 x1 + 0.5 x3 < 0.3; its right child splits x2 < 1.5; class counts on the leaves."""
    coef = np.zeros((5, 4))
    coef[0] = [1.0, -2.0, 0.0, 0.5]
    return Tree(children_left=[1, LEAF, 3, LEAF, LEAF], children_right=[2, LEAF, 4, LEAF, LEAF],
                feature=[HYPERPLANE, LEAF, 2, LEAF, LEAF], threshold=[0.3, 0, 1.5, 0, 0],
                value=[[0, 0], [5, 1], [0, 0], [2, 7], [1, 0]], label=[0, 0, 1, 1, 0], coef=coef,
                classes=["no", "yes"], feature_names=names)


def page_data(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="opttrees-data">(.*?)</script>', page, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


def node_boxes(ax):
    return [t for t in ax.texts if (t.get_gid() or "").startswith("node-")]


def walk_path(tree: Tree, x: np.ndarray) -> list[int]:
    """Reference routing, one row at a time (left iff a·x < b)."""
    t, out = 0, [0]
    while tree.children_left[t] != LEAF:
        t = tree.children_left[t] if tree.split_coef(t) @ x < tree.threshold[t] else tree.children_right[t]
        out.append(int(t))
    return out


# ---------------------------------------------------------------------------------------------- matplotlib
@pytest.fixture(scope="module")
def mpl():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    return mpl


def test_plot_draws_one_box_per_node_with_class_names(mpl, iris_tree):
    import matplotlib.pyplot as plt
    ax = plot_tree(iris_tree, class_names=IRIS_NAMES)
    try:
        boxes = node_boxes(ax)
        assert len(boxes) == iris_tree.n_nodes
        assert {b.get_gid() for b in boxes} == {f"node-{t}" for t in range(iris_tree.n_nodes)}
        text = {b.get_gid(): b.get_text() for b in boxes}
        for t in range(iris_tree.n_nodes):
            if iris_tree.is_leaf(t):
                counts = iris_tree.value[t]
                for k, name in enumerate(IRIS_NAMES):     # class names on the leaf counts
                    assert f"{name}: {counts[k]:g}" in text[f"node-{t}"]
            else:
                assert text[f"node-{t}"].startswith(iris_tree.split_text(t, 3))
                assert f"n = {iris_tree.value[t].sum():g}" in text[f"node-{t}"]
    finally:
        plt.close(ax.figure)


def test_plot_on_given_axes_default_names_and_max_depth(mpl, iris_tree):
    from matplotlib.figure import Figure
    ax = Figure().add_subplot()
    assert plot_tree(iris_tree, ax) is ax
    labels = " ".join(t.get_text() for t in node_boxes(ax))
    assert "0: 50" in labels                           # no class_names: the tree's labels
    ax = Figure().add_subplot()
    plot_tree(iris_tree, ax, max_depth=1)
    depth = iris_tree.node_depths()
    assert len(node_boxes(ax)) == int((depth <= 1).sum())
    cut = [t for t in range(iris_tree.n_nodes) if depth[t] == 1 and not iris_tree.is_leaf(t)]
    assert sorted(t.get_gid() for t in ax.texts if (t.get_gid() or "").startswith("more-")) == \
        sorted(f"more-{t}" for t in cut)


@pytest.mark.parametrize("kind", ["regression", "hyperplane", "depth0"])
def test_plot_other_trees(mpl, kind, diabetes):
    from matplotlib.figure import Figure
    X = y = None
    if kind == "regression":
        X, y, tree = diabetes
    elif kind == "hyperplane":
        tree = hyperplane_tree()
    else:
        tree = leaf_tree([3.0, 1.0], label=0, classes=["a", "b"])
    ax = Figure().add_subplot()
    plot_tree(tree, ax, X=X, y=y)
    texts = {b.get_gid(): b.get_text() for b in node_boxes(ax)}
    assert len(texts) == tree.n_nodes
    if kind == "regression":
        assert "mean" in texts["node-0"] and f"n = {len(X)}" in texts["node-0"]
        assert texts[f"node-{tree.leaves[0]}"].startswith(f"predict {tree.value[tree.leaves[0], 0]:.3g}")
    if kind == "hyperplane":
        assert texts["node-0"].startswith(tree.split_text(0, 3)) and "*x1" in texts["node-0"]
    if kind == "depth0":
        assert texts["node-0"].splitlines()[:2] == ["a", "n = 4"]


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<?xml")])
def test_save_picture_writes_the_format(mpl, iris_tree, tmp_path, fmt, magic):
    path = save_picture(iris_tree, tmp_path / f"tree.{fmt}", class_names=IRIS_NAMES)
    data = path.read_bytes()
    assert data.startswith(magic) and len(data) > 1000
    if fmt == "svg":
        text = data.decode()
        assert "<svg" in text and all(f'id="node-{t}"' in text for t in range(iris_tree.n_nodes))
    other = save_picture(iris_tree, tmp_path / "no_suffix", fmt=fmt.upper())   # fmt wins over the suffix
    assert other.read_bytes().startswith(magic)


def test_plot_errors_name_the_parameter(mpl, iris_tree, tmp_path):
    with pytest.raises(InputError, match="fmt='pdf'"):
        save_picture(iris_tree, tmp_path / "tree.pdf")
    with pytest.raises(InputError, match="class_names has 2 names"):
        save_picture(iris_tree, tmp_path / "tree.png", class_names=["a", "b"])
    with pytest.raises(InputError, match="max_depth=-1"):
        plot_tree(iris_tree, max_depth=-1)
    with pytest.raises(InputError, match="precision=0"):
        plot_tree(iris_tree, precision=0)
    with pytest.raises(InputError, match="cannot write the picture"):
        save_picture(iris_tree, tmp_path / "missing" / "tree.png")
    with pytest.raises(InputError, match="must be an opttrees Tree"):
        plot_tree("tree.json")


def test_missing_matplotlib_names_the_extra(iris_tree, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # makes `import matplotlib` raise ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'opttrees\[plot\]'"):
        plot_tree(iris_tree)
    with pytest.raises(ImportError):                         # also an ImportError, for generic handlers
        plot_tree(iris_tree)


# ---------------------------------------------------------------------------------------------- HTML
def test_html_embeds_every_node(iris, iris_tree):
    X, y = iris
    summary = {"status": "completed", "model": "oct", "n_train": 150, "train_accuracy": 0.96,
               "spec": {"data": {"dataset": "iris"}},
               "solve": {"status": "time_limit", "objective": 0.04, "bound": 0.02, "gap": 0.5, "runtime": 10.25,
                         "solver": "highs", "node_count": 17, "trace": [{"time": 1}]}}
    page = tree_to_html(iris_tree, title="iris", summary=summary, X=X, y=y, class_names=IRIS_NAMES)
    data = page_data(page)
    assert data["tree"]["n_nodes"] == iris_tree.n_nodes and len(data["nodes"]) == iris_tree.n_nodes
    for t, node in enumerate(data["nodes"]):
        assert node["id"] == t
        if iris_tree.is_leaf(t):
            assert node["left"] is None and node["split"] is None
            assert node["pred"] == IRIS_NAMES[iris_tree.label[t]]
            assert node["counts"] == iris_tree.value[t].tolist()
        else:
            assert node["split"] == iris_tree.split_text(t)
            assert [node["left"], node["right"]] == [iris_tree.children_left[t], iris_tree.children_right[t]]
            assert nodes_json_sum(data, t) == node["counts"]
    assert data["classes"] == IRIS_NAMES and data["source"] == "tree"
    shown = dict(map(tuple, data["summary"]))
    assert shown["status"] == "time_limit" and shown["gap"] == "50%" and shown["runtime"] == "10.25 s"
    assert shown["objective"] == "0.04" and shown["bound"] == "0.02" and shown["data"] == "iris"
    assert shown["fit status"] == "completed" and shown["train accuracy"] == "0.96"
    rows = data["rows"]
    assert rows["total"] == rows["shown"] == 150 and rows["names"][:2] == ["0", "1"]
    for i in (0, 70, 149):
        assert rows["paths"][i] == walk_path(iris_tree, X.to_numpy()[i])
        assert rows["actual"][i] == IRIS_NAMES[int(y.iloc[i])]
    assert "<title>iris</title>" in page and 'http-equiv="Content-Security-Policy"' in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


def nodes_json_sum(data, t):
    left, right = data["nodes"][t]["left"], data["nodes"][t]["right"]
    return [a + b for a, b in zip(data["nodes"][left]["counts"], data["nodes"][right]["counts"])]


def test_html_escapes_hostile_names(iris):
    X, _ = iris
    names = [HOSTILE, "a<b", "c>d", "e&f"]
    tree = hyperplane_tree(names)
    tree = dataclasses.replace(tree, classes=[HOSTILE, "ok"])
    page = tree_to_html(tree, title=HOSTILE, X=X.to_numpy()[:5], row_names=[HOSTILE] * 5, class_names=None)
    assert page.count("<script") == 2 and page.count("</script>") == 2   # only the page's own two elements
    assert "<b>" not in page and 'alert("x")' not in page
    assert "&lt;/script&gt;" in page                                        # the title, escaped as text
    data = page_data(page)
    assert data["title"] == HOSTILE and data["classes"][0] == HOSTILE and data["rows"]["names"][0] == HOSTILE
    assert data["nodes"][0]["split"] == tree.split_text(0) and HOSTILE in data["nodes"][0]["split"]


def test_html_regression_summaries_match_the_data(diabetes):
    X, y, tree = diabetes
    data = page_data(tree_to_html(tree, X=X, y=y))
    yv = y.to_numpy()
    ind = tree.decision_path(X).toarray().astype(bool)
    for t, node in enumerate(data["nodes"]):
        rows = yv[ind[:, t]]
        assert node["n"] == len(rows)
        assert node["mean"] == pytest.approx(rows.mean()) and node["median"] == pytest.approx(np.median(rows))
        assert node["std"] == pytest.approx(rows.std())
        if tree.is_leaf(t):
            assert node["value"] == pytest.approx(tree.value[t, 0])
    assert data["source"] == "data" and data["classes"] is None
    bare = page_data(tree_to_html(tree))                    # no data: predictions only
    assert all(nd["n"] is None and "mean" not in nd for nd in bare["nodes"])
    assert bare["rows"] is None


def test_html_counts_from_data_when_the_tree_has_none(rng):
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] - 2 * X[:, 1] + 0.5 * X[:, 3] < 0.3, "yes", "no")
    tree = hyperplane_tree()
    tree.value[:] = 0                                        # e.g. a tree decoded without counts
    data = page_data(tree_to_html(tree, X=X, y=y))
    paths = [walk_path(tree, x) for x in X]
    for t, node in enumerate(data["nodes"]):
        expected = [sum(t in p and y[i] == c for i, p in enumerate(paths)) for c in ("no", "yes")]
        assert node["counts"] == expected and node["n"] == sum(expected)
    assert [data["rows"]["paths"][i] for i in range(60)] == paths
    assert data["rows"]["features"] == ["x0", "x1", "x2", "x3"]   # hyperplane features and the x2 split
    with pytest.raises(InputError, match="labels the tree does not know"):
        tree_to_html(tree, X=X, y=np.where(y == "yes", "maybe", y))


def test_html_depth0_and_feature_names():
    tree = leaf_tree([3.0, 1.0], label=0, classes=["a", "b"], n_features=1)
    data = page_data(tree_to_html(tree, feature_names=["only"]))
    assert len(data["nodes"]) == 1 and data["nodes"][0]["split"] is None and data["nodes"][0]["pred"] == "a"
    assert data["tree"]["depth"] == 0 and data["nodes"][0]["counts"] == [3.0, 1.0]
    named = page_data(tree_to_html(hyperplane_tree(), feature_names=["p", "q", "r", "s"]))
    assert named["nodes"][0]["split"] == "+1*p -2*q +0.5*s < 0.3"
    with pytest.raises(InputError, match="feature_names has 1 names"):
        tree_to_html(hyperplane_tree(), feature_names=["p"])


def test_html_truncates_rows_and_writes_files(tmp_path, rng, monkeypatch):
    monkeypatch.setattr(viz_html, "MAX_ROWS", 50)
    X = rng.normal(size=(80, 4))
    data = page_data(tree_to_html(hyperplane_tree(), X=X))
    assert data["rows"]["shown"] == 50 and data["rows"]["total"] == 80 and len(data["rows"]["paths"]) == 50
    path = write_html(hyperplane_tree(), tmp_path / "index.html", title="é ü")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>") and "é ü" in path.read_text("utf-8")
    with pytest.raises(InputError, match="cannot write the HTML page"):
        write_html(hyperplane_tree(), tmp_path / "missing" / "index.html")


def test_html_bad_inputs_name_the_parameter(rng):
    tree = hyperplane_tree()
    with pytest.raises(InputError, match="y was given without X"):
        tree_to_html(tree, y=[0, 1])
    with pytest.raises(InputError, match="row_names has 2 names"):
        tree_to_html(tree, X=rng.normal(size=(5, 4)), row_names=["a", "b"])
    with pytest.raises(InputError, match="X has 3 features"):
        tree_to_html(tree, X=rng.normal(size=(5, 3)))
    with pytest.raises(InputError, match="summary must be a dict"):
        tree_to_html(tree, summary="optimal")
    with pytest.raises(InputError, match="precision=0"):
        tree_to_html(tree, precision=0)


def test_html_accepts_a_solve_result_object():
    class Result:                                            # anything with to_dict(), like SolveResult
        def to_dict(self):
            return {"status": "optimal", "objective": 1.5, "bound": 1.5, "gap": 0.0, "runtime": 2.0}
    shown = dict(map(tuple, page_data(tree_to_html(hyperplane_tree(), summary=Result()))["summary"]))
    assert shown == {"status": "optimal", "objective": "1.5", "bound": "1.5", "gap": "0%", "runtime": "2.00 s"}


def random_tree(seed: int, depth: int) -> Tree:
    """A random complete tree on 3 features with random class counts on its leaves."""
    r = np.random.default_rng(seed)
    m = 2 ** (depth + 1) - 1
    internal = np.arange(m) < 2 ** depth - 1
    cl = np.where(internal, 2 * np.arange(m) + 1, LEAF)
    cr = np.where(internal, 2 * np.arange(m) + 2, LEAF)
    value = np.where(internal[:, None], 0, r.integers(1, 5, size=(m, 3))).astype(float)
    return Tree(cl, cr, np.where(internal, r.integers(0, 3, m), LEAF), np.where(internal, r.normal(size=m), 0),
                value, label=value.argmax(axis=1), classes=["a", "b", "c"], n_features=3)


@given(seed=st.integers(0, 10_000), depth=st.integers(0, 4))
def test_node_counts_add_up(seed, depth):
    tree = random_tree(seed, depth)
    stats = node_stats(tree)
    for t in range(tree.n_nodes):
        if not tree.is_leaf(t):
            np.testing.assert_array_equal(stats.counts[t], stats.counts[tree.children_left[t]]
                                          + stats.counts[tree.children_right[t]])
    np.testing.assert_array_equal(stats.counts[0], tree.value[tree.leaves].sum(axis=0))


def payload_tree(task: str) -> Tree:
    """A one-split tree on 2 features for the payload kinds without class counts."""
    kw = {"task": task}
    if task == "linear":
        value = [[0, 0, 0], [1.0, 2.0, 0.0], [-1.0, 0.0, 0.5]]
    elif task == "spo":
        value = [[0, 0], [1.0, 3.0], [2.0, 1.0]]
        kw["extras"] = {"decision": np.array([[0, 0], [1, 0], [0, 1]])}
    else:
        value, kw = [[0, 0], [1.0, 2.0], [3.0, 0.5]], {**kw, "label": [0, 1, 0], "classes": ["drug A", "drug B"]}
    return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [1, LEAF, LEAF], [0.5, 0, 0], value, n_features=2, **kw)


@pytest.mark.parametrize("task", ["linear", "spo", "prescription"])
def test_other_payloads(mpl, task, rng):
    from matplotlib.figure import Figure
    tree = payload_tree(task)
    X = rng.normal(size=(30, 2))
    y = X[:, 0] if task == "linear" else None
    data = page_data(tree_to_html(tree, X=X, y=y))
    for t in (1, 2):
        expected = tree.leaf_text(t, sep="\n") if task != "prescription" else tree.classes[tree.label[t]]
        assert data["nodes"][t]["pred"] == expected
        assert data["nodes"][t]["n"] == int((tree.apply(X) == t).sum())
    if task == "linear":
        assert data["nodes"][0]["mean"] == pytest.approx(X[:, 0].mean())
    ax = Figure().add_subplot()
    plot_tree(tree, ax, X=X, y=y)
    assert len(node_boxes(ax)) == 3


@given(seed=st.integers(0, 10_000), depth=st.integers(0, 5), n=st.integers(1, 60))
def test_rows_grouped_by_node_match_decision_path(seed, depth, n):
    from opttrees.viz.stats import _Routed
    tree = random_tree(seed, depth)
    X = np.random.default_rng(seed + 1).normal(size=(n, 3))
    routed = _Routed(tree, X)
    ind = tree.decision_path(X).toarray().astype(bool)
    for t in range(tree.n_nodes):
        assert sorted(routed.rows(t).tolist()) == np.nonzero(ind[:, t])[0].tolist()
    np.testing.assert_array_equal(routed.n, ind.sum(axis=0))


def test_report_beside_a_saved_tree(tmp_path):
    from opttrees.viz.html import report_beside
    assert report_beside(tmp_path / "tree.json") is None
    (tmp_path / "report.json").write_text("{not json")
    assert report_beside(tmp_path / "tree.json") is None
    (tmp_path / "report.json").write_text(json.dumps({"model": "oct", "solve": {"status": "optimal"}}))
    report = report_beside(tmp_path / "tree.json")
    shown = dict(map(tuple, page_data(tree_to_html(hyperplane_tree(), summary=report))["summary"]))
    assert shown == {"status": "optimal", "model": "oct"}


def test_html_stats_of_a_table_with_category_columns_route_as_predict():
    """Before: ``to_html(X=X, y=y)`` on the training table with a pandas category column raised "non-numeric
    column ['colour']" (the picture ignored the tree's encoding). Now the node counts are those of predict."""
    import pandas as pd
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"size": rng.random(300).round(2),
                      "colour": pd.Categorical(rng.choice(["red", "green", "blue"], 300))})
    y = np.where((X["size"] > 0.5) ^ (X["colour"] == "red"), "yes", "no")
    clf = OptimalTreeClassifier(max_depth=2, method="dp").fit(X, y)
    data = page_data(clf.tree_.to_html(None, X=X, y=y))
    leaf_of = clf.tree_.apply(X)
    leaves = [node for node in data["nodes"] if node["split"] is None]
    assert len(leaves) == clf.tree_.n_leaves > 1
    for node in leaves:
        assert sum(node["counts"]) == (leaf_of == node["id"]).sum()
