"""What every search run on a Dask cluster shares: the optional import, the Client check, chunks, the deadline.

Dask distributed is the optional ``dask`` extra (``pip install 'opttrees[dask]'``), imported only here and only
when a cluster is asked for; :func:`distributed` says how to install it when it is missing. The searches that
split into independent parts (the continuous DP's root features, :mod:`opttrees.dp.cluster`; local-search
restarts, :mod:`opttrees.heuristics.cluster`; the experiment grid's cells, :mod:`opttrees.experiments.runner`)
call it.

A part's time: every task gets the time left at the moment it starts (an absolute deadline on the wall clock,
so a task that waited in the queue does not get a fresh budget); a task that starts after the deadline does not
run, and the driver stops waiting at the deadline plus :data:`GRACE` (a worker lost or stuck), reporting the
parts it did not get back.
"""
from __future__ import annotations

import time

from .errors import InputError
from .interrupt import stop_on_sigint

#: seconds the driver waits beyond the deadline for the parts still running (their own limit stops them)
GRACE = 10.0
#: parts per worker thread by default: a few, so that a slow part does not leave the other workers idle
PARTS_PER_THREAD = 2


def distributed(why: str):
    """The ``distributed`` module, or an InputError naming ``why`` it is needed and how to install it."""
    try:
        import distributed as dd
    except ImportError:
        raise InputError(f"{why} needs Dask distributed: pip install 'opttrees[dask]'") from None
    return dd


def check_client(client, why: str):
    """``client`` as a connected ``distributed.Client`` (the module imported only now), or an InputError."""
    dd = distributed(why)
    if not isinstance(client, dd.Client):
        raise InputError(f"client must be a dask.distributed.Client (e.g. Client(LocalCluster(n_workers=2)) or "
                         f"Client('tcp://scheduler:8786')); got {type(client).__name__}")
    if client.status != "running":
        raise InputError(f"client: the dask.distributed.Client is {client.status!r}, not running")
    return client


def current_client(who: str):
    """The Dask Client of this process (``distributed.get_client()``) for an estimator's ``cluster="dask"``, or an
    InputError saying how to start one (a Client is not a parameter: an estimator must stay clonable)."""
    dd = distributed(f"{who}(cluster='dask')")
    try:
        client = dd.get_client()
    except ValueError:
        raise InputError(f"{who}(cluster='dask') needs a running dask.distributed Client in this process: "
                         "Client(LocalCluster(n_workers=2)) or Client('tcp://scheduler:8786') before fit") from None
    return check_client(client, who)


def worker_threads(client) -> int:
    """Worker threads of the cluster (at least 1; 1 when no worker has joined yet)."""
    return max(1, sum(int(v) for v in client.nthreads().values()))


def check_parts(parts, what: str) -> int | None:
    """``parts`` (None: a few per worker thread) as a positive integer, or an InputError."""
    if parts is None:
        return None
    if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
        raise InputError(f"parts must be a positive integer (the number of {what} tasks) or None; got {parts!r}")
    return parts


def chunks(items: list, parts: int) -> list[list]:
    """``items`` cut into at most ``parts`` contiguous, non-empty runs of near-equal length, in order."""
    parts = max(1, min(int(parts), len(items)))
    size, extra = divmod(len(items), parts)
    out, at = [], 0
    for k in range(parts):
        step = size + (1 if k < extra else 0)
        out.append(items[at:at + step])
        at += step
    return out


def deadline_of(remaining: float | None) -> float | None:
    """An absolute wall-clock deadline ``remaining`` seconds from now (None or inf: no limit, None)."""
    return None if remaining is None or remaining == float("inf") else time.time() + remaining


def time_left(deadline: float | None) -> float | None:
    """Seconds to ``deadline`` (None for no limit): what a task is given when it starts."""
    return None if deadline is None else deadline - time.time()


def gather(client, futures: list, deadline: float | None) -> tuple[list, bool]:
    """(each future's result in order, interrupted). None for a part not back by the deadline plus :data:`GRACE`,
    or at Ctrl-C (the first one stops waiting; the parts still queued are cancelled, the running ones end at their
    own time limit), or whose worker was lost; an error raised by a part's own code is raised here."""
    end = None if deadline is None else deadline + GRACE
    interrupted = False
    with stop_on_sigint() as stop:
        while not all(f.done() for f in futures):
            if stop.is_set():
                interrupted = True
                break
            if end is not None and time.time() >= end:   # pragma: no cover - needs a stuck worker
                break
            time.sleep(0.02)
    out = []
    for f in futures:
        if f.status == "finished":
            out.append(f.result())
        elif f.status == "error":
            exc = f.exception()
            if type(exc).__name__ in ("KilledWorker", "FutureCancelledError"):   # pragma: no cover - lost worker
                out.append(None)
            else:
                raise exc
        else:
            out.append(None)
    client.cancel([f for f in futures if not f.done()])
    return out, interrupted
