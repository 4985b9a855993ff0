"""Printed thresholds route every training value as the tree does (text, DOT, SVG, HTML), SPO leaf summaries,
and saved trees with wrongly typed fields are InputErrors naming the field (issue 27, sections 4 and 5)."""
import html
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees import OptimalTreeClassifier
from opttrees.errors import InputError
from opttrees.tree import HYPERPLANE, LEAF, Tree, format_threshold, snap_threshold

RULE = re.compile(r"(f\d+) (<|>=) (\S+?):?$")


def stump(t, names=("credit_score",), **kw):
    return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [t, 0, 0], [[0, 0], [3, 1], [1, 3]],
                label=[0, 0, 1], feature_names=list(names), **kw)


def routes_alike(printed: str, t: float, values) -> bool:
    v = np.asarray(values, dtype=float)
    return bool(np.array_equal(v < float(printed), v < t))


# ------------------------------------------------------------------------------------------ format_threshold
@pytest.mark.parametrize("values, t", [
    ([500, 503, 504, 505, 506, 520], 504.5),                      # integers: 504.5 must not become 504
    ([500000.0, 500000.0002], 500000.0001),                       # near-equal values
    ([0.3, 0.1 + 0.2], 0.1 + 0.2),                                # float noise: 0.3 vs 0.30000000000000004
    ([0.3, 0.1 + 0.2], np.nextafter(0.3, 1.0)),
    ([-505, -504.25, -3, 0], -504.2),                             # negative values
    ([-1e-9, 1e-9], 0.0),
    ([1e20, 1.0000000000000002e20], 1.0000000000000002e20),
    ([0.1, 0.2], 0.1 / 2 + 0.2 / 2),
    ([12340, 12351], 12345.5),
])
def test_a_snapped_threshold_routes_the_training_values_and_prints_exactly(values, t):
    v = np.asarray(values, dtype=float)
    lo, hi = v[v < t].max(), v[v >= t].min()
    s = snap_threshold(t, lo, hi)
    assert routes_alike(format_threshold(s), t, values)
    assert float(format_threshold(s)) == s                        # printed exactly
    assert abs(s - t) <= (hi - lo) / 4                            # stays in the middle half of the gap


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e15, 1e15), st.floats(0, 1e6), st.floats(0, 1))
def test_snapping_keeps_the_threshold_in_the_middle_of_its_gap(lo, width, frac):
    hi = lo + width
    t = lo + frac * (hi - lo)
    if not lo < t <= hi:
        t = hi
    if not lo < t <= hi:
        return
    s = snap_threshold(t, lo, hi)
    assert lo < s <= hi and abs(s - t) <= (hi - lo) / 4
    assert float(format_threshold(s)) == s


def test_format_threshold_examples():
    assert format_threshold(504.5) == "504.5"
    assert format_threshold(0.1 + 0.2) == "0.30000000000000004"
    assert format_threshold(505.0) == "505" and format_threshold(1234567.0) == "1234567"     # no '1.2e+06'
    for t in (504.5, 0.1 + 0.2, -2.4500000000000001, 1e-300, 123456789.123, 1e20):
        assert float(format_threshold(t)) == t
    assert snap_threshold(0.1 / 2 + 0.2 / 2, 0.1, 0.2) == 0.15
    assert snap_threshold(12345.5, 12340, 12351) == 12346
    assert snap_threshold(504.5, 600, 700) == 504.5               # stale bounds: unchanged
    assert snap_threshold(504.5, -np.inf, np.inf) == 504.5        # unknown bounds: unchanged


def test_the_printed_rule_routes_new_rows_as_predict_does():
    """Before: a split at 12345.5 between training values 12340 and 12351 printed as 'x0 < 12350', so a new
    row at 12348 went left by the text and right by predict. Now the fitted threshold is the printed one."""
    rng = np.random.default_rng(0)
    x = rng.choice([12340.0, 12351.0], 200)
    y = (x > 12345).astype(int)
    clf = OptimalTreeClassifier(max_depth=1, method="dp").fit(np.c_[x], y)
    m = re.search(r"x0 < (\S+?):?$", clf.tree_.export_text(), re.M) or re.search(r"< (\S+?):?$",
                                                                                  clf.tree_.export_text(), re.M)
    assert m is not None
    printed = float(m.group(1))
    assert printed == clf.tree_.threshold[0]
    new = np.linspace(12330, 12360, 3001)
    assert np.array_equal(clf.predict(np.c_[new]) == clf.predict(np.c_[[12351.0]])[0], new >= printed)


def test_a_picture_no_longer_rounds_across_a_value(tmp_path):
    """The issue's case: 504.5 drawn with 3 significant digits read 'credit_score < 504'."""
    pytest.importorskip("matplotlib")
    from opttrees.viz.plot import save_picture
    X = np.array([[500.0], [504.0], [505.0], [510.0]])
    for tree in (stump(504.5), stump(504.5).set_display_bounds(X)):
        svg = save_picture(tree, tmp_path / "t.svg").read_text()
        assert "credit_score &lt; 504.5" in svg
        assert "credit_score < 504.5" in tree.to_dot(precision=3) and "< 504.5:" in tree.export_text(precision=3)


# --------------------------------------------------------------------------- every export, random trees
def split_texts(tree: Tree, fmt: str, precision: int) -> dict:
    """{branch node: printed rule} read back out of one export."""
    branch = [int(t) for t in tree.preorder() if tree.children_left[t] != LEAF]
    if fmt == "text":
        lines = [ln.strip("| ") for ln in tree.export_text(precision).splitlines() if ln.lstrip("| ").startswith("if ")]
        return dict(zip(branch, (ln[3:] for ln in lines)))
    if fmt == "dot":
        return {int(t): s for t, s in re.findall(r'^  (\d+) \[label="([^"]*)"\];$', tree.to_dot(precision), re.M)
                if int(t) in branch}
    if fmt == "html":
        from opttrees.viz.html import tree_to_html
        page = tree_to_html(tree, precision=precision)
        data = json.loads(re.search(r'id="opttrees-data">(.*?)</script>', page, re.S).group(1))
        noscript = html.unescape(re.search(r"<noscript><pre>(.*?)</pre>", page, re.S).group(1))
        assert noscript == tree.export_text(precision)
        return {nd["id"]: nd["split"] for nd in data["nodes"] if nd["split"] is not None}
    raise AssertionError(fmt)


def svg_split_texts(tree: Tree, path, precision: int) -> dict:
    from opttrees.viz.plot import save_picture
    svg = save_picture(tree, path, precision=precision).read_text()
    parts = re.split(r'<g id="node-(\d+)">', svg)
    out = {}
    for t, body in zip(parts[1::2], parts[2::2]):
        if tree.children_left[int(t)] != LEAF:
            out[int(t)] = html.unescape(re.search(r"<!-- (.*?) -->", body).group(1))
    return out


def check_rules(tree: Tree, X: np.ndarray, texts: dict):
    """Each printed rule, parsed back with float(), routes every training row reaching its node as the tree."""
    path = tree.decision_path(X).toarray().astype(bool)
    assert sorted(texts) == sorted(int(t) for t in np.nonzero(tree.children_left != LEAF)[0])
    for t, text in texts.items():
        name, op, num = RULE.match(text).groups()
        assert op == "<" and name == tree._fname(int(tree.feature[t]))
        rows = path[:, t]
        went_left = path[rows, tree.children_left[t]]
        assert np.array_equal(X[rows, tree.feature[t]] < float(num), went_left), (t, text)


VALUES = st.sampled_from([0.0, 0.3, 0.1 + 0.2, 504.0, 505.0, 500000.0, 500000.0002, -504.0, -503.9999999, 1e-7,
                          2.0000000000000004, 2.0, -0.0, 7.25, 1e15 + 2, 1e15 + 1])


@st.composite
def data_and_tree(draw):
    n, p = draw(st.integers(2, 25)), draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.lists(VALUES, min_size=p, max_size=p), min_size=n, max_size=n)))
    cl, cr, feat, thr = [], [], [], []

    def rec(rows, d):
        k = len(cl)
        cl.append(LEAF); cr.append(LEAF); feat.append(LEAF); thr.append(0.0)
        j = draw(st.integers(0, p - 1))
        distinct = np.unique(X[rows, j])
        if d < 3 and distinct.size > 1 and draw(st.booleans()):
            i = draw(st.integers(0, distinct.size - 2))
            lo, hi = distinct[i], distinct[i + 1]
            t = min(max(lo + draw(st.floats(0, 1, exclude_min=True)) * (hi - lo), np.nextafter(lo, hi)), hi)
            feat[k], thr[k] = j, float(t)
            go = X[rows, j] < t
            cl[k] = rec(rows[go], d + 1)
            cr[k] = rec(rows[~go], d + 1)
        return k

    rec(np.arange(n), 0)
    m = len(cl)
    tree = Tree(cl, cr, feat, thr, np.ones((m, 2)), label=np.zeros(m, int), n_features=p,
                feature_names=[f"f{j}" for j in range(p)])
    return X, tree


@given(data_and_tree(), st.sampled_from([1, 3, 4]), st.booleans())
def test_printed_thresholds_route_training_values_as_the_tree(case, precision, saved):
    X, tree = case
    tree.set_display_bounds(X)
    if saved:   # the bounds travel in the JSON
        tree = Tree.from_json(tree.to_json())
    for fmt in ("text", "dot", "html"):
        check_rules(tree, X, split_texts(tree, fmt, precision))


@settings(max_examples=8)
@given(data_and_tree(), st.sampled_from([1, 3]))
def test_svg_thresholds_route_training_values_as_the_tree(tmp_path_factory, case, precision):
    pytest.importorskip("matplotlib")
    X, tree = case
    tree.set_display_bounds(X)
    check_rules(tree, X, svg_split_texts(tree, tmp_path_factory.mktemp("svg") / "t.svg", precision))


@given(data_and_tree())
def test_without_bounds_thresholds_print_exactly(case):
    X, tree = case
    for t, text in split_texts(tree, "dot", 1).items():
        assert float(RULE.match(text).group(3)) == tree.threshold[t]


# ------------------------------------------------------------------------------------- where bounds come from
def credit_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(480, 530, size=(n, 2)).astype(float)
    y = (X[:, 0] >= 505).astype(int)
    return X, y


def test_estimator_records_bounds_and_they_survive_json_and_prune(tmp_path):
    X, y = credit_data()
    tree = OptimalTreeClassifier(max_depth=2, method="greedy", random_state=0).fit(X, y).tree_
    assert tree.display_bounds is not None and tree.display_bounds.shape == (tree.n_nodes, 2)
    root = tree.threshold[0]
    assert tree.display_bounds[0, 0] < root <= tree.display_bounds[0, 1]
    assert routes_alike(tree.threshold_text(0, precision=3), root, X[:, tree.feature[0]])
    again = Tree.from_json(tree.to_json(tmp_path / "t.json"))
    np.testing.assert_array_equal(again.display_bounds, tree.display_bounds)
    assert again.export_text(3) == tree.export_text(3)
    pruned = tree.prune([t for t in range(tree.n_nodes) if t != 0 and tree.children_left[t] != LEAF])
    assert pruned.display_bounds is not None and pruned.split_text(0, 3) == tree.split_text(0, 3)


def test_old_json_without_bounds_loads_and_prints_exactly():
    d = stump(504.5000000000001).to_dict()
    assert "display_bounds" not in d
    tree = Tree.from_dict(d)
    assert tree.display_bounds is None and "credit_score < 504.5000000000001" in str(tree)


def test_bounds_ignored_when_the_threshold_was_edited():
    tree = stump(504.5).set_display_bounds(np.array([[504.0], [505.0]]))
    tree.threshold[0] = 500.25
    assert "credit_score < 500.25" in tree.to_dot(precision=1)


def test_hyperplane_splits_print_exact_coefficients_and_a_safe_threshold():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    coef = np.array([[0.1 + 0.2, -1 / 3], [0, 0], [0, 0]])
    scores = np.einsum("ij,ij->i", X, np.broadcast_to(coef[0], X.shape))
    s = np.sort(scores)
    b = (s[149] + s[150]) / 2
    tree = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [HYPERPLANE, LEAF, LEAF], [b, 0, 0], np.ones((3, 2)),
                label=[0, 0, 1], coef=coef, feature_names=["a", "c"]).set_display_bounds(X)
    text = tree.split_text(0, precision=2)
    m = re.fullmatch(r"(\S+)\*a (\S+)\*c < (\S+)", text)
    assert m, text
    a1, a2, printed_b = (float(g) for g in m.groups())
    assert (a1, a2) == (0.1 + 0.2, -1 / 3)                     # coefficients exactly as the tree holds them
    assert len(m.group(3)) < len(repr(b))
    assert np.array_equal(scores < printed_b, tree.apply(X) == 1)


# ------------------------------------------------------------------------------------------------- SPO leaves
def spo_tree(d=40):
    rng = np.random.default_rng(0)
    dec = (rng.random((3, d)) < 0.2).astype(float)
    cost = rng.random((3, d))
    return Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [0, LEAF, LEAF], [0.5, 0, 0], cost, task="spo", n_features=1,
                extras={"decision": dec}), dec, cost


def test_spo_leaves_are_summarised_in_pictures_and_full_in_text(tmp_path):
    tree, dec, cost = spo_tree()
    nnz, c1 = int(np.count_nonzero(dec[1])), float(cost[1] @ dec[1])
    short = tree.leaf_text(1, 4)
    assert "…" in short and "40 values" in short and f"{nnz} nonzero" in short and f"cost {c1:.4g}" in short
    assert short.startswith("decision [" + " ".join(f"{v:g}" for v in dec[1, :8]) + " …]")
    assert "\\n40 values" in tree.to_dot()                     # one part per line in Graphviz
    full = tree.export_text()
    assert "…" not in full and "values" not in full and len(full.splitlines()) == 4
    assert [len(v.split()) for v in re.findall(r"decision \[(.*?)\]", full)] == [40, 40]
    from opttrees.viz.html import tree_to_html
    data = json.loads(re.search(r'id="opttrees-data">(.*?)</script>', tree_to_html(tree), re.S).group(1))
    assert "40 values" in data["nodes"][1]["pred"] and len(data["nodes"][1]["pred"]) < 120
    pytest.importorskip("matplotlib")
    from opttrees.viz.plot import save_picture
    svg = save_picture(tree, tmp_path / "spo.svg").read_text()
    assert f"{nnz} nonzero" in svg and "40 values" in svg


def test_short_spo_decisions_are_shown_whole_with_their_cost():
    tree, dec, cost = spo_tree(3)
    assert tree.leaf_text(2) == (f"decision [{' '.join(f'{v:g}' for v in dec[2])}], cost {float(cost[2] @ dec[2]):.4g}")


# ------------------------------------------------------------------------------- tree.json with wrong types
def saved_tree() -> dict:
    coef = np.zeros((5, 2))
    coef[2] = [1.0, 2.0]
    return Tree(children_left=[1, LEAF, 3, LEAF, LEAF], children_right=[2, LEAF, 4, LEAF, LEAF],
                feature=[0, LEAF, HYPERPLANE, LEAF, LEAF], threshold=[0.5, 0, 2.0, 0, 0],
                value=[[5, 5], [4, 0], [1, 5], [1, 0], [0, 5]], label=[0, 0, 1, 0, 1], coef=coef,
                classes=["no", "yes"], feature_names=["a", "b"], extras={"weight": [1.0, 1, 2, 3, 4]},
                encoding={"columns": ["a", "b"], "categories": {}, "missing": "error", "fill": {}}).set_display_bounds(
        np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.2, 3.0]])).to_dict()


@pytest.mark.parametrize("field, value", [
    ("extras", "garbage"), ("extras", [1, 2]), ("extras", {"decision": [[1], [1, 2]]}),
    ("encoding", [1, 2]), ("encoding", "x"), ("encoding", {"columns": "ab"}),
    ("encoding", {"columns": ["a", "b"], "fill": [1]}), ("encoding", {"columns": ["a", "b"], "categories": [1]}),
    ("encoding", {"columns": ["a", "b"], "missing": 3}),
    ("display_bounds", "x"), ("display_bounds", [[0, 1]]), ("display_bounds", [["a", 1]] * 5),
    ("feature_names", "ab"), ("feature_names", ["a"]), ("feature_names", [1, 2]),
    ("classes", {"a": 1}), ("classes", [[1], [2]]), ("n_features", "2"), ("n_features", 2.5),
    ("n_features", True), ("task", ["classification"]), ("coef", [1, 2]), ("label", [[0]] * 5),
    ("value", [[[1]]] * 5), ("threshold", {"a": 1}), ("feature", [2 ** 70] * 5),
])
def test_wrong_types_in_tree_json_name_the_field(tmp_path, field, value):
    d = saved_tree()
    d[field] = value
    path = tmp_path / "tree.json"
    path.write_text(json.dumps(d))
    with pytest.raises(InputError, match=field):
        Tree.from_json(path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=4),
    lambda inner: (st.lists(inner, max_size=6) | st.lists(inner, min_size=5, max_size=5)
                   | st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=12)


@given(st.data())
def test_mutated_tree_json_is_an_input_error_or_a_working_tree(data):
    d = saved_tree()
    for field in data.draw(st.lists(st.sampled_from(sorted(d)), min_size=1, max_size=3, unique=True)):
        if isinstance(d[field], list) and d[field] and data.draw(st.booleans()):   # one entry of a list field
            i = data.draw(st.integers(0, len(d[field]) - 1))
            d[field][i] = data.draw(JSON_VALUES)
        elif isinstance(d[field], dict) and d[field] and data.draw(st.booleans()):
            d[field][data.draw(st.sampled_from(sorted(d[field])))] = data.draw(JSON_VALUES)
        else:
            d[field] = data.draw(JSON_VALUES)
    try:   # loaded, it must also print and predict (what `opttrees show` / `predict` do next)
        tree = Tree.from_json(json.dumps(d))
        tree.export_text()
        tree.to_dot()
        tree.predict(np.zeros((2, tree.n_features)))
    except InputError:
        pass
