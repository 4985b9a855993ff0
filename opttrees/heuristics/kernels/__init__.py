"""Numba kernels for greedy growth and Dunn's local search (Algorithms 2.1–2.3, 3.1–3.2), one module per concern.

Why numba: the split scan moves one point at a time between two leaves and updates their sufficient
statistics (the thesis's incremental trick, O(K) per move); that loop is sequential and cannot be
vectorised without materialising (n, p, K) prefix arrays for every node visit.

Modules, each importing only the ones above it:

- :mod:`.structs`: the records the kernels take instead of long argument lists (data, settings, a heap tree,
  the shared arrays, the restarts' outputs);
- :mod:`.losses`: the loss kinds and leaf losses from sufficient statistics (absolute loss: Fenwick trees);
- :mod:`.routing`: the heap tree (node types, routing rows, subtree walks, promotions, the tree's objective);
- :mod:`.scans`: the split scans (float and integer);
- :mod:`.movecache`: the move cache shared by the threads of one call, and its hashes;
- :mod:`.orders`: presorted orders, a node's rows in a feature's order, row words, the order cache;
- :mod:`.splits`: best parallel split of a node over the features, hyperplane descent;
- :mod:`.grow`: greedy start trees;
- :mod:`.search`: the local search;
- :mod:`.restarts`: independent restarts on worker threads.

Callers import from the module that holds what they use; this package re-exports nothing. The modules import
each other with relative imports only, so a copy of the package under another name (``benchmarks/kernel_ab.py``)
works unchanged.

Internal tree layout (heap order, capacity T = 2^(D+1) - 1, children of t are 2t+1 / 2t+2):

- ``ntype[t]``: 0 absent, 1 leaf, 2 parallel split, 3 hyperplane split;
- ``feat[t]``, ``thr[t]``: parallel split ``X[:, feat] < thr`` in ORIGINAL units (thr is a midpoint);
- ``coef[t]``, ``thr[t]``: hyperplane split ``coef · Xs < thr`` in SCALED [0, 1] units (converted on export).

numba's on-disk cache checks only the source file of the kernel it loads, not the files of the kernels it calls
(which are compiled into it): importing this package imports every module and :func:`opttrees.jit.guard_cache`
drops the package's cache when any of its files changed since the cache was written.
"""
from . import grow, losses, movecache, orders, restarts, routing, scans, search, splits, structs  # noqa: F401

if __name__ == "opttrees.heuristics.kernels":    # not in a copy of the package (benchmarks/kernel_ab.py)
    from opttrees.jit import guard_cache
    guard_cache(losses.__name__)   # the unit of opttrees/kernel_modules.py: every module here
