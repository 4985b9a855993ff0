"""Pictures of trees: a matplotlib drawing (PNG/SVG, no Graphviz needed) and a self-contained HTML viewer.

matplotlib is optional (the ``plot`` extra) and imported only when a picture is drawn; the HTML viewer needs
nothing beyond opttrees itself.
"""
from .html import tree_to_html, write_html
from .plot import MissingDependencyError, plot_tree, save_picture

__all__ = ["plot_tree", "save_picture", "tree_to_html", "write_html", "MissingDependencyError"]
