"""Local-search restarts on a Dask cluster: the same answer as one process, restarts spread over the workers.

A restart's tree depends only on its seed (:mod:`opttrees.heuristics.local_search`; the shared move cache only
speeds things up), so the ``n_restarts`` seeds drawn from ``random_state`` are cut into contiguous parts, each
part runs its slice of them (``local_search(..., restart_seeds=...)``) on a worker, and the best tree wins by
(objective, restart index): the parts' best trees compared by their objective (rounded as one process ranks
them), ties to the lowest part, whose restarts come first. That is the tree :func:`local_search` returns for the
same ``random_state`` and ``n_restarts``, unless a time limit stops the parts (then, as with threads, which
restarts finished depends on timing; every part runs at least its first restart).
"""
from __future__ import annotations

import numpy as np

from ..cluster import PARTS_PER_THREAD, chunks, check_client, check_parts, deadline_of, gather, time_left, \
    worker_threads
from ..data.prepared import PreparedData
from ..errors import InputError
from ..interrupt import Budget
from ..tree import Tree
from .core import check_alpha, check_depth, standardized, to_user
from .local_search import _check_common, _local_search, seeds_for


def _part(data, D, alpha, min_samples_leaf, split_type, n_hyperplane_restarts, loss, max_moves, random_starts,
          threads, deadline, seeds):
    """One part on a worker: its restarts' best tree (standardised units) and objective; None past the deadline."""
    left = time_left(deadline)
    if left is not None and left <= 0:
        return None
    res = _local_search(data, D, alpha, min_samples_leaf, len(seeds), split_type, None, threads,
                        n_hyperplane_restarts, loss, True, max_moves, random_starts, Budget(left), False, seeds)
    return {"tree": res.tree, "objective": float(res.objective), "n_done": int(res.n_done), "stopped": res.stopped}


def local_search_cluster(client, data: PreparedData, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                         n_restarts: int = 100, split_type: str = "parallel", random_state=None,
                         n_hyperplane_restarts: int = 5, loss: str | None = None, max_moves: int | None = None,
                         random_starts: float = 0.25, time_limit=None, parts: int | None = None,
                         threads: int = 1) -> Tree:
    """:func:`opttrees.heuristics.local_search` with its restarts run on a Dask cluster: the best Tree.

    ``client``: a ``dask.distributed.Client``. The restarts are cut into ``parts`` contiguous runs (default two
    per worker thread), each one task with ``threads`` threads; ``time_limit`` covers the whole call (each task
    gets the time left when it starts). Same settings and same tree as ``local_search(data, ...)`` with the same
    ``random_state`` and ``n_restarts``, whatever the number of workers (see the module docstring). At Ctrl-C
    the caller stops waiting and returns the best of the parts back so far (KeyboardInterrupt when none is).
    """
    client = check_client(client, "local_search_cluster")
    if not isinstance(data, PreparedData):
        raise InputError(f"data must be a PreparedData (opttrees.data.prepare(X, y)); got {type(data).__name__}")
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    _check_common(min_samples_leaf, split_type, n_restarts, n_hyperplane_restarts)
    nparts = check_parts(parts, "restart")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise InputError(f"threads must be an integer >= 1 (threads per task); got {threads!r}")
    budget = Budget(time_limit)
    seeds = seeds_for(random_state, n_restarts)
    std, back = standardized(data)
    groups = chunks(list(seeds), nparts or PARTS_PER_THREAD * worker_threads(client))
    deadline = deadline_of(budget.remaining())
    shared = client.scatter(std, hash=False)   # a fresh key: a hashed one can be released by an earlier call
    futures = [client.submit(_part, shared, D, alpha, min_samples_leaf, split_type, n_hyperplane_restarts, loss,
                             max_moves, random_starts, int(threads), deadline, np.asarray(g, np.int64), pure=False)
               for g in groups]
    got, interrupted = gather(client, futures, deadline)
    outs = [o for o in got if o is not None]
    if not outs and interrupted:
        raise KeyboardInterrupt
    if not outs:
        raise InputError(f"local_search_cluster: no part started before the time limit ({time_limit} s); raise "
                         "time_limit or check the cluster's workers")
    # (objective rounded as local_search ranks restarts, part): the first part among equals holds the first restart
    best = min(range(len(outs)), key=lambda k: (float(np.round(outs[k]["objective"], 12)), k))
    return to_user(outs[best]["tree"], back, loss)
