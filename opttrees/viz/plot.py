"""Tree pictures with matplotlib alone: no Graphviz binary to install, PNG and SVG from the same drawing.

Layout: leaves sit in equal slots left to right in preorder, each branch node centred over its two children,
one row per depth. Every node is one text box whose ``gid`` is ``node-<id>`` (it becomes the element id in an
SVG), so tests and users can find the boxes again. Left edges are the split's *true* side (left iff a·x < b).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError, OptTreesError
from ..tree import LEAF, Tree
from .stats import count_lines, node_stats

FORMATS = ("png", "svg")
_BRANCH_FACE = "#f7f7f7"
_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
            "#bab0ac"]


class MissingDependencyError(OptTreesError, ImportError):
    """An optional extra is not installed; the message says which ``pip install`` brings it."""


def _matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError("tree pictures need matplotlib: pip install 'opttrees[plot]'") from None
    import matplotlib.figure
    return matplotlib


def _lighten(hex_colour: str, amount: float = 0.7) -> str:
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    rgb = rgb + (255 - rgb) * amount
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def _check_options(precision, max_depth):
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)) or precision < 1:
        raise InputError(f"precision={precision!r} is not valid: expected an integer >= 1")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer))
                                  or max_depth < 0):
        raise InputError(f"max_depth={max_depth!r} is not valid: expected an integer >= 0 or None")


def _layout(tree: Tree, max_depth: int | None):
    """(x, depth) of every drawn node in [0, 1] slots, the drawn node ids, and the cut (truncated) nodes."""
    depth = tree.node_depths()
    cut = np.zeros(tree.n_nodes, dtype=bool) if max_depth is None else depth >= max_depth
    drawn = tree.preorder(stop=cut)
    ends = [t for t in drawn if tree.children_left[t] == LEAF or cut[t]]
    x = np.zeros(tree.n_nodes)
    x[ends] = (np.arange(len(ends)) + 0.5) / len(ends)
    for t in drawn[::-1]:
        if tree.children_left[t] != LEAF and not cut[t]:
            x[t] = (x[tree.children_left[t]] + x[tree.children_right[t]]) / 2
    truncated = [t for t in drawn if cut[t] and tree.children_left[t] != LEAF]
    return x, depth, drawn, truncated, len(ends)


def _node_label(tree: Tree, t: int, stats, precision: int) -> str:
    lines = []
    if tree.children_left[t] != LEAF:
        lines.append(tree.split_text(t, precision))
    elif tree.task in ("classification", "prescription"):
        lines.append(stats.predicted[t])
    elif tree.task == "regression":
        lines.append(f"predict {stats.predicted[t]}")
    else:   # one part per line: a SPO leaf's decision summary and its cost
        lines.append(tree.leaf_text(t, precision, sep="\n"))
    if stats.n is not None:
        lines.append(f"n = {stats.n[t]:g}")
    if stats.mean is not None and np.isfinite(stats.mean[t]):
        lines.append(f"mean {stats.mean[t]:.{precision}g}, sd {stats.std[t]:.{precision}g}")
    if tree.children_left[t] == LEAF and stats.counts is not None and stats.class_names is not None:
        lines += count_lines(stats.counts[t], stats.class_names)
    return "\n".join(lines)


def _face(tree: Tree, t: int, stats, value_range) -> str:
    if tree.children_left[t] != LEAF:
        return _BRANCH_FACE
    if stats.predicted_class is not None and stats.predicted_class[t] >= 0:
        return _lighten(_PALETTE[int(stats.predicted_class[t]) % len(_PALETTE)])
    if tree.task == "regression" and value_range is not None:
        import matplotlib
        lo, hi = value_range
        share = 0.5 if hi <= lo else (tree.value[t, 0] - lo) / (hi - lo)
        return matplotlib.colors.to_hex(matplotlib.colormaps["Blues"](0.15 + 0.5 * share))
    return "#eef5ff"


def _draw(tree: Tree, ax, class_names, precision, max_depth, X, y, fontsize):
    stats = node_stats(tree, X, y, class_names, precision)
    x, depth, drawn, truncated, n_slots = _layout(tree, max_depth)
    levels = int(depth[drawn].max()) + 1 + bool(truncated)   # a last row for the "(...)" marks
    ypos = 1 - (depth + 0.5) / levels
    leaves = [t for t in drawn if tree.children_left[t] == LEAF]
    value_range = ((tree.value[leaves, 0].min(), tree.value[leaves, 0].max())
                   if tree.task == "regression" and leaves else None)
    size = 9 if fontsize is None else fontsize
    boxes = []
    for t in drawn:
        leaf = tree.children_left[t] == LEAF
        box = ax.text(x[t], ypos[t], _node_label(tree, t, stats, precision), ha="center", va="center",
                      fontsize=size, zorder=3, gid=f"node-{t}", fontweight="normal",
                      bbox=dict(boxstyle="round,pad=0.4", facecolor=_face(tree, t, stats, value_range),
                                edgecolor="#555555" if leaf else "#888888", linewidth=0.8))
        boxes.append(box)
        if leaf or t in truncated:
            continue
        for child, side in ((tree.children_left[t], "true"), (tree.children_right[t], "false")):
            ax.plot([x[t], x[child]], [ypos[t], ypos[child]], color="#999999", linewidth=0.9, zorder=1)
            ax.text((x[t] + x[child]) / 2, (ypos[t] + ypos[child]) / 2, side, ha="center", va="center",
                    fontsize=size - 1, color="#666666", style="italic", zorder=2,
                    bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none"))
    for t in truncated:
        ax.plot([x[t], x[t]], [ypos[t], ypos[t] - 0.7 / levels], color="#bbbbbb", linewidth=0.9, linestyle=":",
                zorder=1)
        ax.text(x[t], ypos[t] - 0.8 / levels, "(...)", ha="center", va="center", fontsize=size, color="#666666",
                gid=f"more-{t}", zorder=2)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_axis_off()
    if fontsize is None:
        _fit_font(ax, boxes, n_slots, levels, size)
    return ax


def _fit_font(ax, boxes, n_slots: int, levels: int, size: float):
    """Shrink every text on the axes until the widest box fits its slot and the tallest its row."""
    ext = ax.get_window_extent()
    pad = 2.2 * 0.4 * size * ax.figure.dpi / 72   # the boxes' padding on both sides, in pixels
    extents = [b.get_window_extent() for b in boxes]
    widest = max(e.width for e in extents) + pad
    tallest = max(e.height for e in extents) + pad
    scale = min(1.0, 0.95 * ext.width / n_slots / widest, 0.8 * ext.height / levels / tallest)
    if scale < 1.0:
        for text in ax.texts:
            text.set_fontsize(max(2.0, text.get_fontsize() * scale))


def _figsize(tree: Tree, max_depth: int | None) -> tuple[float, float]:
    _, depth, drawn, truncated, n_slots = _layout(tree, max_depth)
    levels = int(depth[drawn].max()) + 1 + bool(truncated)
    return max(4.0, min(2.1 * n_slots, 60.0)), max(2.0, min(1.5 * levels, 40.0))


def plot_tree(tree: Tree, ax=None, *, class_names=None, precision: int = 3, max_depth: int | None = None,
              X=None, y=None, fontsize: float | None = None):
    """Draw ``tree`` on a matplotlib Axes and return it (a new figure sized to the tree when ``ax`` is None).

    Branch nodes show their split in original units (``tree.split_text``); leaves their prediction, row count
    and, for classifiers, the count of every class by name (``class_names``, one per class, defaults to the
    tree's labels). Counts come from the tree, or from ``X``/``y`` routed through it when it carries none.
    ``max_depth`` draws the top levels only, ``(...)`` marking cut subtrees; ``fontsize=None`` shrinks the
    text until the boxes fit.
    """
    if not isinstance(tree, Tree):
        raise InputError(f"tree must be an opttrees Tree; got {type(tree).__name__}")
    _check_options(precision, max_depth)
    _matplotlib()
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=_figsize(tree, max_depth), layout="constrained")
    return _draw(tree, ax, class_names, precision, max_depth, X, y, fontsize)


def save_picture(tree: Tree, path, fmt: str | None = None, *, dpi: float = 150, **kw) -> Path:
    """Write the :func:`plot_tree` picture to ``path`` as PNG or SVG (``fmt``, or ``path``'s suffix).

    Uses a bare :class:`matplotlib.figure.Figure`, so no GUI backend or pyplot state is involved. Keyword
    arguments go to :func:`plot_tree`. Returns the path written.
    """
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise InputError(f"fmt={fmt!r} is not a picture format opttrees writes: expected one of {FORMATS}")
    if not isinstance(tree, Tree):
        raise InputError(f"tree must be an opttrees Tree; got {type(tree).__name__}")
    _check_options(kw.get("precision", 3), kw.get("max_depth"))
    mpl = _matplotlib()
    fig = mpl.figure.Figure(figsize=_figsize(tree, kw.get("max_depth")), layout="constrained")
    plot_tree(tree, fig.add_subplot(), **kw)
    try:
        fig.savefig(path, format=fmt, dpi=dpi)
    except OSError as exc:
        raise InputError(f"cannot write the picture to {path}: {exc.strerror or exc}") from None
    return path
