"""The HTML tree viewer in a real browser: Playwright driving Debian's Chromium (never a downloaded browser).

Skipped when the Python package ``playwright`` or ``/usr/bin/chromium`` is missing (``apt-get install
chromium``; ``pip install playwright`` installs no browser by itself). Set ``OPTTREES_VIEWER_SCREENSHOT=path``
to also save a screenshot of the iris depth-3 viewer (the one in ``docs/viewer.png``).
"""
import os
import shutil

import numpy as np
import pytest
from sklearn.datasets import load_diabetes, load_iris

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.tree import HYPERPLANE, LEAF, Tree, leaf_tree
from opttrees.viz import write_html

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IRIS_NAMES = ["setosa", "versicolor", "virginica"]

try:
    from playwright import sync_api
except ImportError as exc:   # not installed, or installed without a working dependency (greenlet)
    pytest.skip(f"the browser tests need playwright (pip install playwright): {exc}", allow_module_level=True)
if shutil.which(CHROMIUM) is None:
    pytest.skip(f"the browser tests need Debian's Chromium at {CHROMIUM} (apt-get install chromium)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Viewer:
    """A loaded page plus everything it reported: console errors, uncaught exceptions, network requests."""

    def __init__(self, browser, path, viewport=(1200, 800)):
        self.errors, self.requests = [], []
        self.page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)

    def visible_nodes(self) -> set[int]:
        return {int(n) for n in self.page.eval_on_selector_all(
            ".node", "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.node)")}

    def path_nodes(self) -> set[int]:
        return {int(n) for n in self.page.eval_on_selector_all(".node.on-path", "els => els.map(e => e.dataset.node)")}

    def click(self, t: int):
        self.page.click(f'.node[data-node="{t}"]')


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, y, OptimalTreeClassifier(max_depth=3, method="greedy", random_state=0).fit(X, y).tree_


@pytest.fixture
def iris_viewer(browser, iris, tmp_path):
    X, y, tree = iris
    summary = {"solve": {"status": "optimal", "objective": 0.04, "bound": 0.04, "gap": 0.0, "runtime": 1.5}}
    viewer = Viewer(browser, write_html(tree, tmp_path / "index.html", title="iris", summary=summary, X=X, y=y,
                                        class_names=IRIS_NAMES))
    yield viewer
    viewer.page.close()


def descendants(tree: Tree, t: int) -> set[int]:
    out, stack = set(), [t]
    while stack:
        s = stack.pop()
        if not tree.is_leaf(s):
            kids = [int(tree.children_left[s]), int(tree.children_right[s])]
            out.update(kids)
            stack += kids
    return out


def test_page_loads_offline_with_every_node(iris_viewer, iris):
    _, _, tree = iris
    v = iris_viewer
    assert v.errors == []
    assert all(u.startswith("file://") for u in v.requests), v.requests
    assert v.page.locator(".node").count() == tree.n_nodes
    assert v.visible_nodes() == set(range(tree.n_nodes))
    shown = v.page.eval_on_selector_all("#summary div", "els => els.map(e => [e.children[0].textContent, "
                                        "e.children[1].textContent])")
    assert shown == [["status", "optimal"], ["objective", "0.04"], ["bound", "0.04"], ["gap", "0%"],
                     ["runtime", "1.50 s"]]
    heads = v.page.eval_on_selector_all(".node .head", "els => els.map(e => e.textContent)")
    assert sorted(heads) == sorted(tree.split_text(t) if not tree.is_leaf(t) else IRIS_NAMES[tree.label[t]]
                                   for t in range(tree.n_nodes))
    boxes = [v.page.locator(f'.node[data-node="{t}"]').bounding_box() for t in range(tree.n_nodes)]
    for i, a in enumerate(boxes):                      # the layout never stacks one box over another
        for b in boxes[i + 1:]:
            assert (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                    or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_clicking_a_node_folds_its_subtree(iris_viewer, iris):
    _, _, tree = iris
    v = iris_viewer
    t = int(tree.children_right[0]) if not tree.is_leaf(int(tree.children_right[0])) else int(tree.children_left[0])
    hidden = descendants(tree, t)
    assert hidden
    v.click(t)
    assert v.visible_nodes() == set(range(tree.n_nodes)) - hidden
    assert v.page.get_attribute(f'.node[data-node="{t}"]', "aria-expanded") == "false"
    assert f"+ {len(hidden)} nodes folded" in v.page.locator(f'.node[data-node="{t}"]').inner_text()
    v.click(0)
    assert v.visible_nodes() == {0}
    v.click(0)
    assert v.visible_nodes() == set(range(tree.n_nodes)) - hidden      # the inner fold is remembered
    v.page.click("#expand-all")
    assert v.visible_nodes() == set(range(tree.n_nodes))
    v.page.click("#collapse-all")
    assert v.visible_nodes() == {0}
    assert v.errors == []


def test_selecting_a_row_highlights_its_path(iris_viewer, iris):
    X, y, tree = iris
    v = iris_viewer
    ind = tree.decision_path(X)
    v.page.click("#collapse-all")
    for i in (0, 70, 120):
        v.page.select_option("#row-select", str(i))
        path = set(ind.indices[ind.indptr[i]:ind.indptr[i + 1]].tolist())
        assert v.path_nodes() == path
        assert path <= v.visible_nodes()                 # folded nodes on the path open up
        assert v.page.locator("svg path.on-path").count() == len(path) - 1
        info = v.page.locator("#row-info").inner_text()
        assert f"reaches leaf {tree.apply(X.iloc[[i]])[0]}" in info and IRIS_NAMES[int(y.iloc[i])] in info
    v.page.select_option("#row-select", "")
    assert v.path_nodes() == set() and v.page.locator("svg path.on-path").count() == 0
    assert v.errors == []


def hyperplane_tree(names):
    coef = np.zeros((5, 3))
    coef[0] = [1.0, -2.0, 0.5]
    return Tree([1, LEAF, 3, LEAF, LEAF], [2, LEAF, 4, LEAF, LEAF], [HYPERPLANE, LEAF, 2, LEAF, LEAF],
                [0.3, 0, 1.5, 0, 0], [[0, 0], [5, 1], [0, 0], [2, 7], [1, 0]], label=[0, 0, 1, 1, 0], coef=coef,
                classes=["no", "yes"], feature_names=names)


@pytest.mark.parametrize("kind", ["regression", "hyperplane", "depth0"])
def test_other_trees_render(browser, tmp_path, kind):
    X = y = None
    if kind == "regression":
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        tree = OptimalTreeRegressor(max_depth=3, method="greedy", random_state=0).fit(X, y).tree_
    elif kind == "hyperplane":   # hostile names must show as text, never run as markup
        tree = hyperplane_tree(['<img src=x onerror="window.pwned=1">', "</script><script>window.pwned=2</script>",
                                "a&b"])
    else:
        tree = leaf_tree([3.0, 1.0], label=0, classes=["a", "b"])
    v = Viewer(browser, write_html(tree, tmp_path / "index.html", X=X, y=y))
    try:
        assert v.errors == [] and v.page.locator(".node").count() == tree.n_nodes
        assert v.visible_nodes() == set(range(tree.n_nodes))
        assert v.page.evaluate("window.pwned === undefined")
        head = v.page.locator('.node[data-node="0"] .head').inner_text()
        assert head == (tree.split_text(0) if tree.n_nodes > 1 else "a")
        if kind == "regression":
            assert "mean" in v.page.locator('.node[data-node="0"]').inner_text()
    finally:
        v.page.close()


@pytest.mark.skipif(not os.environ.get("OPTTREES_VIEWER_SCREENSHOT"), reason="set OPTTREES_VIEWER_SCREENSHOT=path")
def test_screenshot_for_docs(browser, tmp_path):
    """A real time-limited solve of iris at depth 3, one misclassified row followed; written for the docs."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    clf = OptimalTreeClassifier(max_depth=3, method="mio", time_limit=30, warm_start="greedy", random_state=0)
    clf.fit(X, y)
    wrong = int(np.nonzero(clf.predict(X) != y.to_numpy())[0][0])
    path = write_html(clf.tree_, tmp_path / "index.html", title="iris — OCT, depth 3 (30 s time limit)",
                      summary=clf.solve_result_, X=X, y=y, class_names=IRIS_NAMES)
    v = Viewer(browser, path, viewport=(1180, 760))
    v.page.select_option("#row-select", str(wrong))
    v.page.screenshot(path=os.environ["OPTTREES_VIEWER_SCREENSHOT"], full_page=True)
    assert v.errors == []
