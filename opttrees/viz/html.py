"""A self-contained interactive HTML page for one tree: one file, inline CSS and vanilla JS, opens offline.

Why it is built this way: everything the page shows is computed here in Python (splits through
``Tree.split_text``, so categorical labels and hyperplanes read as everywhere else; counts from
:mod:`opttrees.viz.stats`; each row's path from ``Tree.decision_path``) and embedded as one JSON document.
The script only draws it, always through ``textContent``, so no name in the data can inject markup; a
Content-Security-Policy forbids every network request, so the page provably works offline.
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..progress import fmt, fmt_gap
from ..tree import HYPERPLANE, LEAF, Tree
from . import assets
from .stats import align_X, node_stats

#: rows of X embedded for the row selector; the page says when there were more
MAX_ROWS = 2000
#: branch nodes this deep start collapsed, so big trees open readable
COLLAPSE_DEPTH = 6

_SOLVE_FIELDS = (("status", "status"), ("objective", "objective"), ("bound", "bound"), ("gap", "gap"),
                 ("runtime", "runtime"), ("solver", "solver"), ("node_count", "B&B nodes"))
_REPORT_FIELDS = (("model", "model"), ("n_train", "training rows"), ("n_test", "test rows"), ("seed", "seed"),
                  ("fit_time", "fit time"))


def _num(v):
    """A JSON number, or None for missing/non-finite values."""
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _summary_rows(summary) -> list[list[str]]:
    """``[label, text]`` pairs for the header from a SolveResult, its ``to_dict()`` or a report.json dict."""
    if summary is None:
        return []
    if hasattr(summary, "to_dict") and not isinstance(summary, dict):
        summary = summary.to_dict()
    if not isinstance(summary, dict):
        raise InputError(f"summary must be a dict (a report.json or SolveResult.to_dict()); got {type(summary).__name__}")
    inner = summary.get("solve")
    solve: dict = inner if isinstance(inner, dict) else summary
    rows = []
    for key, label in _SOLVE_FIELDS:
        v = solve.get(key)
        if v is None or isinstance(v, (dict, list)):
            continue
        text = (fmt_gap(v) if key == "gap" and isinstance(v, (int, float)) else
                f"{v:.2f} s" if key == "runtime" and isinstance(v, (int, float)) else fmt(v))
        rows.append([label, text])
    if solve is not summary and summary.get("status") not in (None, solve.get("status")):
        rows.append(["fit status", str(summary["status"])])
    data = (summary.get("spec") or {}).get("data") if isinstance(summary.get("spec"), dict) else None
    if isinstance(data, dict) and (data.get("dataset") or data.get("csv")):
        rows.append(["data", str(data.get("dataset") or data.get("csv"))])
    for key, label in _REPORT_FIELDS:
        v = summary.get(key)
        if v is not None and not isinstance(v, (dict, list)):
            rows.append([label, f"{v:.2f} s" if key == "fit_time" and isinstance(v, float) else fmt(v)])
    for key in sorted(summary):
        v = summary[key]
        if key.startswith(("train_", "test_")) and isinstance(v, (int, float)) and not isinstance(v, bool):
            rows.append([key.replace("_", " "), fmt(v)])
    if "objective" not in solve and isinstance(summary.get("objective"), (int, float)):
        rows.insert(0, ["objective", fmt(summary["objective"])])
    return rows


def _used_features(tree: Tree) -> list[int]:
    branch = tree.children_left != LEAF
    used = set(tree.feature[branch & (tree.feature >= 0)].tolist())
    hyper = branch & (tree.feature == HYPERPLANE)
    if hyper.any():
        coefs = np.array([tree.split_coef(int(t)) for t in np.flatnonzero(hyper)])
        used |= set(np.nonzero((coefs != 0).any(axis=0))[0].tolist())
    return sorted(int(j) for j in used)


def _rows_payload(tree: Tree, X, y, row_names, names) -> dict:
    Xa = align_X(tree, X)
    total = Xa.shape[0]
    shown = min(total, MAX_ROWS)
    if row_names is None:
        row_names = ([str(i) for i in X.index[:shown]] if isinstance(X, pd.DataFrame)
                     else [f"row {i}" for i in range(shown)])
    else:
        row_names = [str(r) for r in row_names]
        if len(row_names) != total:
            raise InputError(f"row_names has {len(row_names)} names but X has {total} rows")
        row_names = row_names[:shown]
    path = tree.decision_path(Xa[:shown])
    paths = [path.indices[path.indptr[i]:path.indptr[i + 1]].tolist() for i in range(shown)]
    used = _used_features(tree)
    actual = None
    if y is not None:
        yv = np.asarray(y).ravel()[:shown]
        if tree.task == "classification" and names is not None and tree.classes is not None:
            lookup = {str(c.item() if isinstance(c, np.generic) else c): nm for c, nm in zip(tree.classes, names)}
            actual = [lookup.get(str(v.item() if isinstance(v, np.generic) else v), str(v)) for v in yv]
        elif np.issubdtype(yv.dtype, np.number):
            actual = [fmt(float(v)) for v in yv]
        else:
            actual = [str(v) for v in yv]
    return {"names": row_names, "paths": paths, "total": int(total), "shown": int(shown),
            "features": [tree.feature_name(j) for j in used],
            "values": [[_num(v) for v in r] for r in Xa[:shown, used]], "actual": actual}


def _page_data(tree: Tree, *, title, summary, X, y, class_names, row_names, precision) -> dict:
    stats = node_stats(tree, X, y, class_names, precision)
    parent = tree.parents()
    depth = tree.node_depths()
    nodes = []
    for t in range(tree.n_nodes):
        leaf = tree.children_left[t] == LEAF
        node = {"id": t, "parent": int(parent[t]), "depth": int(depth[t]),
                "left": None if leaf else int(tree.children_left[t]),
                "right": None if leaf else int(tree.children_right[t]),
                "split": None if leaf else tree.split_text(t, precision),
                "pred": stats.predicted[t],
                "n": None if stats.n is None else _num(stats.n[t]),
                "counts": None if stats.counts is None else [_num(c) for c in stats.counts[t]],
                "cls": None if stats.predicted_class is None else int(stats.predicted_class[t])}
        if tree.task == "regression" and leaf:
            node["value"] = _num(tree.value[t, 0])
        if stats.mean is not None and stats.std is not None and stats.median is not None:
            node.update(mean=_num(stats.mean[t]), std=_num(stats.std[t]), median=_num(stats.median[t]))
        nodes.append(node)
    return {"title": title, "task": tree.task, "precision": precision, "collapse_depth": COLLAPSE_DEPTH,
            "tree": {"depth": tree.depth, "n_nodes": tree.n_nodes, "n_leaves": tree.n_leaves,
                     "n_features": tree.p},
            "classes": stats.class_names, "source": stats.source, "nodes": nodes,
            "summary": _summary_rows(summary),
            "rows": None if X is None else _rows_payload(tree, X, y, row_names, stats.class_names)}


def _script_json(data: dict) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' can end the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def tree_to_html(tree: Tree, *, title: str | None = None, summary=None, X=None, y=None, feature_names=None,
                 row_names=None, class_names=None, precision: int = 4) -> str:
    """One self-contained HTML page showing ``tree``: collapsible nodes, counts, and a row's path.

    Parameters
    ----------
    tree : Tree
    title : str, optional
        Page heading (default "opttrees tree").
    summary : dict or SolveResult, optional
        Solve figures for the header: a ``report.json`` dict, ``SolveResult.to_dict()`` or the result itself.
    X : array-like or DataFrame, optional
        Rows for the row selector (the first :data:`MAX_ROWS` are embedded); a DataFrame holding every feature
        name is matched by name, and its index names the rows.
    y : array-like, optional
        Targets of ``X``: shown beside each row, and the source of node counts (regression: mean, sd,
        median) when the tree carries none.
    feature_names : list of str, optional
        Names for the tree's features when it has none (one per feature).
    row_names : list, optional
        A name per row of ``X``.
    class_names : list of str, optional
        Display names of the tree's classes, in the order of ``tree.classes``.
    precision : int
        Significant digits of thresholds and numbers.

    Returns
    -------
    str
        The HTML text; :func:`write_html` saves it.
    """
    if not isinstance(tree, Tree):
        raise InputError(f"tree must be an opttrees Tree; got {type(tree).__name__}")
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)) or precision < 1:
        raise InputError(f"precision={precision!r} is not valid: expected an integer >= 1")
    if feature_names is not None:
        names = [str(f) for f in feature_names]
        if len(names) != tree.p:
            raise InputError(f"feature_names has {len(names)} names but the tree has {tree.p} features")
        from dataclasses import replace
        tree = replace(tree, feature_names=names)
    title = "opttrees tree" if title is None else str(title)
    data = _page_data(tree, title=title, summary=summary, X=X, y=y, class_names=class_names, row_names=row_names,
                      precision=int(precision))
    return assets.PAGE.format(title=html.escape(title), css=assets.CSS, js=assets.JS, data=_script_json(data),
                              text=html.escape(tree.export_text(precision)))


def write_html(tree: Tree, path, **kw) -> Path:
    """Write :func:`tree_to_html` to ``path`` (UTF-8); returns the path."""
    path = Path(path)
    text = tree_to_html(tree, **kw)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the HTML page to {path}: {exc.strerror or exc}") from None
    return path


def report_beside(tree_path) -> dict | None:
    """The ``report.json`` next to a saved ``tree.json`` (what ``opttrees solve`` writes), or None.

    Lets ``opttrees show TREE --html`` fill the page header with the solve summary; an unreadable report is
    skipped rather than failing the picture.
    """
    path = Path(tree_path).with_name("report.json")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None
