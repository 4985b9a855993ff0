"""The continuous DP on a Dask cluster: the root's features cut into parts, one task per part.

Every tree has a root split (or is a leaf, or has depth < D), so the optimum is the best over the parts of
"the best tree whose root split is on one of this part's features" (:func:`opttrees.dp.continuous.search` with
``root_features``; each part also keeps the CART and depth-(D-1) starts, which are valid trees). Combined:

- the tree: the least objective over the parts, ties to the lowest part (parts are contiguous runs of
  features in order, as the one-process search goes through them);
- the bound: the least of the parts' bounds (each bounds the trees rooted in its part, and its own starts);
  a part that never ran (it started after the deadline, or its worker was lost) contributes 0;
- the status: optimal only when every part proved its own part.

Same objective as one process (``solve_dp_continuous`` with any ``n_jobs``) whenever the runs finish, and the
same tree in every case tested (72 random 3-class cases with tied values at depths 2 and 3, in 2, 3 and 6
parts; tests/dp/test_dp_cluster.py). That is not a theorem among equally good trees: the one-process search
prunes every root feature against one shared incumbent and a part against its own, so a part could meet an
equally good tree the one-process search skipped. The data are scattered once; each worker prepares the task
from them.
"""
from __future__ import annotations

import time

import numpy as np

from ..cluster import PARTS_PER_THREAD, chunks, check_client, check_parts, deadline_of, gather, time_left, \
    worker_threads
from ..errors import InputError
from ..interrupt import Budget
from ..solvers.result import Incumbent, finish, relative_gap
from .common import _check_task, _common_checks, solved_problem
from .continuous import _cap, _checked_data, search, verified_tree
from .seed import cart_seed

#: the order of the parts' terminations when they differ: the combined run reports the first that occurs
_WORST_FIRST = ("interrupted", "limit", "time_limit")


def _part(X, y, w, task, D, nn, ml, a, deadline, threads, memory_limit, feats):
    """One part, on a worker: the search over root splits on ``feats`` with the time left (None past the
    deadline)."""
    left = time_left(deadline)
    if left is not None and left <= 0:
        return None
    ed = _check_task(task).prepare(y, len(y), w)
    nested, cost, bound, termination, counters, _, runtime = search(
        X, ed, D, nn, ml, a, Budget(left), n_jobs=threads, memory_limit=memory_limit, root_features=feats)
    return {"nested": nested, "cost": cost, "bound": bound, "termination": termination,
            "subproblems": counters["subproblems"], "runtime": runtime}


def solve_dp_continuous_cluster(client, X, y, task=None, max_depth: int = 3, max_num_nodes: int | None = None,
                                min_samples_leaf: int = 1, alpha: float = 0.0, sample_weight=None,
                                time_limit: float | None = None, parts: int | None = None, threads: int = 1,
                                memory_limit=None):
    """:func:`opttrees.dp.solve_dp_continuous` on a Dask cluster: (Tree in original units, SolveResult).

    ``client``: a ``dask.distributed.Client``. The root's features are cut into ``parts`` contiguous runs
    (default two per worker thread, at most one per feature), each searched by one task with ``threads``
    threads; ``time_limit`` covers the whole call (each task gets the time left when it starts);
    ``memory_limit`` applies to each task. ``timings`` records ``workers``, ``parts``, ``parts_run``,
    ``part_seconds_max`` and ``part_seconds_sum`` (the parts' own search times). The returned tree is re-scored
    on the data here.
    """
    t0 = time.perf_counter()
    client = check_client(client, "solve_dp_continuous_cluster")
    budget = Budget(time_limit)
    D, nn, ml, a = _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit)
    nparts = check_parts(parts, "root-feature")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise InputError(f"threads must be an integer >= 1 (threads per task); got {threads!r}")
    Xa, names, y, w, ctask, ed = _checked_data(X, y, task, sample_weight, ml)
    n, p = Xa.shape
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    workers = worker_threads(client)
    B = _cap(D) if nn is None else min(nn, _cap(D))
    # below depth 2 (or one split) no root is searched feature by feature: one part does it all
    groups = chunks(list(range(p)), nparts or PARTS_PER_THREAD * workers) if D >= 2 and B >= 2 else [None]
    deadline = deadline_of(budget.remaining())
    Xf, yf, wf = client.scatter([Xa, y, w], hash=False)   # fresh keys: hashed ones can be released by an earlier call
    futures = [client.submit(_part, Xf, yf, wf, task, D, nn, ml, a, deadline, int(threads), memory_limit, g,
                             pure=False) for g in groups]
    outs, interrupted = gather(client, futures, deadline)
    ran = [o for o in outs if o is not None]
    best, best_nested = np.inf, None
    for o in ran:                                   # strict: ties go to the lowest part
        if o["cost"] < best:
            best, best_nested = o["cost"], o["nested"]
    if not ran:            # no part ran: CART's tree (the root leaf when no split fits), not better, and bound 0
        best_nested = cart_seed(Xa, ed, D, B, ml, a * ed.baseline)[0]
    tree, objective = verified_tree(best_nested, best if ran else None, Xa, names, ctask, ed, a)
    missing = len(outs) - len(ran)
    bound = 0.0 if missing else min(o["bound"] for o in ran) / ed.baseline
    bound = min(bound, objective)
    terms = {o["termination"] for o in ran}
    termination = "interrupted" if interrupted else "optimal" if not missing and terms == {"optimal"} else next(
        (t for t in _WORST_FIRST if t in terms), "time_limit")
    runtime = time.perf_counter() - t0
    nodes = int(sum(o["subproblems"] for o in ran))
    trace = [Incumbent(runtime, objective, bound, relative_gap(objective, bound), nodes)]
    timings = {"search": runtime, "total": runtime, "workers": workers, "parts": len(groups), "parts_run": len(ran),
               "part_seconds_max": max((o["runtime"] for o in ran), default=0.0),
               "part_seconds_sum": sum(o["runtime"] for o in ran), "subproblems": nodes}
    result = finish("dp", "opttrees-dp-continuous", termination, objective, bound, runtime, nodes, trace,
                    timings=timings)
    result.dp_baseline = ed.baseline * ed.extra.get("loss_scale", 1.0)
    result.problem = solved_problem(D, nn, ml, a, w, "every midpoint")
    result.plan = {"route": "dask", "workers": workers, "parts": len(groups), "why": (
        f"the root's {p} features in {len(groups)} parts on {workers} Dask worker threads")}
    if missing:
        why = "stopped waiting at Ctrl-C" if interrupted else "started after the time limit or lost their worker"
        result.message = (f"{missing} of {len(groups)} parts did not come back ({why}): bound 0 for the trees rooted "
                          "on their features")
    return tree, result
