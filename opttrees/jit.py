"""Numba compile notices: a cached kernel's first call in a fresh installation compiles it, which takes long.

Why: the local-search kernels take about a minute to compile on 2 cores (146 s measured on a loaded machine;
later processes load them from numba's on-disk cache in about 1 s). A first run that sits silent for a minute
looks hung, so the first cold call says what is happening, once per process.
"""
from __future__ import annotations

import inspect
import logging
import os
import threading

log = logging.getLogger("opttrees")

_announced: set[str] = set()
_worker_lock = threading.Lock()


def signature_types(sig) -> tuple[str, ...]:
    """A numba signature (a tuple of numba types) as the text of each argument's type: how
    :mod:`opttrees._kernel_signatures` records them."""
    return tuple(str(t) for t in sig)


def kernel_name(dispatcher) -> str:
    """A kernel's name relative to the package (``dp.engine.search``): how :mod:`opttrees._kernel_signatures`
    records it."""
    module = dispatcher.py_func.__module__
    return f"{module.partition('.')[2] if module.startswith(__package__ + '.') else module}.{dispatcher.py_func.__name__}"


_code_keys: dict = {}


def compiled_signatures(dispatcher) -> set[tuple[str, ...]]:
    """The signatures a call of ``dispatcher`` runs without compiling: loaded in this process, or in numba's cache
    on disk for this machine (CPU) and this kernel's current code (numba's index drops entries of an older
    source file; an entry compiled for another CPU or from other bytecode would be compiled again)."""
    have = {signature_types(sig) for sig in getattr(dispatcher, "signatures", None) or ()}
    cache = dispatcher._cache
    key = _code_keys.get(id(dispatcher))
    if key is None:
        key = _code_keys[id(dispatcher)] = cache._index_key((), dispatcher.targetctx.codegen())[1:]
    have |= {signature_types(k[0]) for k in cache._cache_file._load_index() if tuple(k[1:]) == key}
    return have


def expected_signatures(dispatcher) -> list[tuple[str, ...]] | None:
    """The signatures the estimators and the CLI call ``dispatcher`` with (what ``opttrees warmup`` compiles,
    recorded in :mod:`opttrees._kernel_signatures`); None for a kernel not recorded there."""
    from ._kernel_signatures import SIGNATURES
    found = SIGNATURES.get(kernel_name(dispatcher))
    return None if found is None else [tuple(s) for s in found]


def cold_signatures(dispatcher, arg: str | None = None, dtype: str | None = None) -> list[tuple[str, ...]]:
    """The signatures of :func:`expected_signatures` (with ``arg`` and ``dtype``: only those whose argument
    ``arg`` is an array of ``dtype``) that a call would compile; for a kernel not recorded there, one empty
    signature when it has no compiled signature (of that array type) at all."""
    def fits(sig) -> bool:
        if arg is None:
            return True
        i = list(inspect.signature(dispatcher.py_func).parameters).index(arg)
        return sig[i].startswith(f"array({dtype},")

    have = compiled_signatures(dispatcher)
    want = expected_signatures(dispatcher)
    if want is None:
        return [] if any(fits(sig) for sig in have) else [()]
    return [sig for sig in want if fits(sig) and sig not in have]


def is_cold(dispatcher, arg: str | None = None, dtype: str | None = None) -> bool:
    """The next call may compile: a signature the estimators call this kernel with (see
    :func:`expected_signatures`; with ``arg`` and ``dtype``, one whose argument ``arg`` is an array of ``dtype``,
    e.g. the local search's 32- or 64-bit row words) is neither loaded in this process nor in numba's cache on
    disk. Per signature: inputs are normalised at the boundary (:func:`opttrees.data.prepared.owned`), so a fit calls
    each kernel with the recorded signatures only, and a kernel with one signature cached and another not is cold.
    """
    try:
        return bool(cold_signatures(dispatcher, arg, dtype))
    except Exception:   # not a cached dispatcher (or numba's internals moved): assume it compiles
        return True


def announce_compile(what: str, dispatcher, estimate: str, arg: str | None = None, dtype: str | None = None) -> bool:
    """Log once per process that ``what`` is compiling (when it is cold, see :func:`is_cold`); True when a
    notice was given."""
    key = what if arg is None else f"{what} ({arg}: {dtype})"
    if key in _announced or not is_cold(dispatcher, arg, dtype):
        return False
    _announced.add(key)
    log.warning("compiling the %s kernels with numba (once per installation, %s; later runs load them from "
                "numba's cache in about a second)", what, estimate)
    return True


# --- cold kernels of given modules (the package's list is :data:`opttrees.kernel_modules.KERNEL_MODULES`) --------------

def kernels(modules) -> list:
    """(qualified name, dispatcher) of every cached numba kernel defined in ``modules`` (module names; the
    package's are :data:`opttrees.kernel_modules.KERNEL_MODULES`). Kernels with ``inline="always"`` are left out: numba
    inlines them into their callers and never compiles (or caches) them on their own."""
    import importlib

    from numba.core.dispatcher import Dispatcher
    out = []
    for name in modules:
        mod = importlib.import_module(name)
        for attr, obj in sorted(vars(mod).items()):
            if not isinstance(obj, Dispatcher) or getattr(obj.py_func, "__module__", None) != name:
                continue
            cache = getattr(obj, "_cache", None)
            if obj.targetoptions.get("inline", "never") == "always" or type(cache).__name__ == "NullCache":
                continue
            out.append((f"{name}.{attr}", obj))
    return out


def cold_kernels(modules, include_large: bool = True) -> list[str]:
    """The kernels of ``modules`` a call would compile, one line each: its name when every signature it is called
    with is cold, else one ``name (signature)`` line per cold signature (see :func:`cold_signatures`). With
    ``include_large`` False, the signatures only fits on more than 65,536 rows call (``LARGE`` in
    :mod:`opttrees._kernel_signatures`) are skipped. The package's: :func:`opttrees.warmup.cold_kernels`."""
    from ._kernel_signatures import LARGE
    out = []
    for name, d in kernels(modules):
        try:
            cold = cold_signatures(d)
            want = expected_signatures(d)
        except Exception:   # not a cached dispatcher (or numba's internals moved): assume it compiles
            cold, want = [()], None
        if not include_large:
            skip = {tuple(sig) for sig in LARGE.get(kernel_name(d), [])}
            cold = [sig for sig in cold if sig not in skip]
            want = None if want is None else [sig for sig in want if sig not in skip]
        if not cold:
            continue
        if want and len(cold) < len(want):
            out += [f"{name} ({', '.join(sig)})" for sig in cold]
        else:
            out.append(name)
    return out


# --- waiting for a kernel that may still be compiling ----------------------------------------------------------

ABANDONED = object()
"""What :func:`run_threads` returns when it left kernels compiling in the background at a stop."""


def run_threads(tasks, jobs: int, stop, budget=None, compiling=None, on_poll=None, poll: float = 0.02,
                over_memory=None):
    """Run ``tasks`` (callables calling numba kernels) on ``jobs`` daemon threads while this thread polls: the one
    "run off the caller's thread, poll for a stop" loop of the package (local search, greedy, the DP searches,
    and a fit's stages that spend their time in one C call, see :func:`run_abandonable`).

    When the ``budget`` (an :class:`~opttrees.interrupt.Budget`) is spent or :data:`opttrees.interrupt.STOP` is set
    (first Ctrl-C), or ``over_memory()`` (optional) says the process has grown too large, ``stop[0]`` is set:
    running kernels return their result so far within about one step, and tasks not yet started are skipped (their
    result is None). Returns the tasks' results in order; an exception in a task is re-raised here. ``on_poll()``
    runs at every poll (progress).

    ``compiling()`` (optional) says whether a kernel the tasks call is still being compiled (e.g.
    ``lambda: is_cold(K.run_restarts)``): a kernel only reads ``stop`` once it runs, and a cold compile can take
    minutes. If the run is stopped while ``compiling()`` is true, the threads are abandoned (daemon threads:
    the compile finishes in the background and is cached on disk for the next run; the kernel then sees
    ``stop`` and returns at once) and :data:`ABANDONED` is returned, so the caller can return its fallback at
    the deadline. A second Ctrl-C (KeyboardInterrupt here) stops and joins warm kernels, abandons compiling
    ones, and is re-raised.

    One warm task on one job runs on a long-lived worker thread (:func:`start_in_worker`): starting a thread per
    call (several per fit with iterative deepening) cost about as much as a small search.
    """
    from .interrupt import STOP

    tasks = list(tasks)
    results: list = [None] * len(tasks)
    errors: list = []
    nxt = [0]
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                k = nxt[0]
                if k >= len(tasks) or (k > 0 and stop[0]):
                    return
                nxt[0] += 1
            try:
                results[k] = tasks[k]()
            except BaseException as exc:   # re-raised in the calling thread
                errors.append(exc)
                stop[0] = 1
                return

    n_threads = max(1, min(int(jobs), len(tasks)))
    if n_threads == 1 and not (compiling is not None and compiling()):
        handles: list = [start_in_worker(worker)]
    else:
        handles = [_ThreadDone(threading.Thread(target=worker, daemon=True, name=f"opttrees-kernel-{k}"))
                   for k in range(n_threads)]
    try:
        while not all(h.wait(poll / len(handles)) for h in handles):
            if not stop[0] and (STOP.is_set() or (budget is not None and budget.stop())):
                stop[0] = 1
            if not stop[0] and over_memory is not None and over_memory():
                stop[0] = 1
            if stop[0] and not errors and compiling is not None and compiling():
                return ABANDONED
            if on_poll is not None:
                on_poll()
    except KeyboardInterrupt:
        stop[0] = 1
        if not (compiling is not None and compiling()):
            for h in handles:
                h.wait()
        raise
    if errors:
        raise errors[0]
    return results


def run_abandonable(fn, budget):
    """``fn()`` on a daemon thread for work that polls no stop flag (one long C call, e.g. scikit-learn's CART
    on a wide matrix, where a Python signal handler only runs when the call returns): returns ``[fn()]``, or
    :data:`ABANDONED` when ``budget`` is spent or Ctrl-C is pressed first; the thread is then left to finish in
    the background and its result dropped. :func:`run_threads` with a task that is never joined at a stop."""
    return run_threads([fn], 1, [0], budget, compiling=lambda: True)


class _ThreadDone:
    """A started daemon thread's end as an event-like ``wait(timeout) -> bool``."""

    def __init__(self, th):
        self.th = th
        th.start()

    def wait(self, timeout=None) -> bool:
        self.th.join(timeout)
        return not self.th.is_alive()


_worker: list = []


def start_in_worker(fn):
    """Run ``fn`` on one long-lived daemon thread; the returned event is set when it returns.

    Use it for warm kernels only: a cold compile left running would hold the worker (those get a thread of
    their own)."""
    import queue

    with _worker_lock:
        if not _worker or not _worker[0].is_alive():
            jobs: queue.Queue = queue.Queue()

            def loop():
                while True:
                    job, done = jobs.get()
                    try:
                        job()
                    finally:
                        done.set()

            th = threading.Thread(target=loop, name="opttrees-kernel-worker", daemon=True)
            th.start()
            _worker[:] = [th, jobs]
    done = threading.Event()
    _worker[1].put((fn, done))
    return done


def still_compiling_message(what: str, fallback: str) -> str:
    return (f"the {what} kernels are still compiling (numba, once per installation) at the time limit or Ctrl-C: "
            f"returned {fallback}. Run `opttrees warmup` once after installing to compile every kernel ahead "
            "(the compile goes on in the background and is cached for the next run)")


def compiler_busy() -> bool:
    """True while another thread holds numba's compiler lock (e.g. a kernel compiling in the background): any
    kernel not yet loaded in this process would wait for it, even one cached on disk."""
    try:
        from numba.core.compiler_lock import global_compiler_lock
        lock = global_compiler_lock._lock
    except Exception:   # pragma: no cover - numba's internals moved: assume free
        return False
    if lock.acquire(blocking=False):
        lock.release()
        return False
    return True


def ready(*dispatchers) -> bool:
    """Every dispatcher can be called now without compiling or waiting: loaded in this process, or cached on
    disk while no other compile holds numba's lock."""
    if all(getattr(d, "signatures", None) for d in dispatchers):
        return True
    return not compiler_busy() and not any(is_cold(d) for d in dispatchers)


def warn_still_compiling(what: str, fallback: str, stacklevel: int = 3) -> None:
    """The fallback warning, as a warning and on the ``opttrees`` log: while numba compiles in another thread
    it records every warning (``warnings.catch_warnings`` is process-wide) and re-emits them only when its
    compile ends, which may be after this process has exited."""
    import warnings
    msg = still_compiling_message(what, fallback)
    log.warning("%s", msg)
    warnings.warn(msg, RuntimeWarning, stacklevel=stacklevel)


# --- a cache entry compiled from other files than its own -----------------------------------------------------

def guard_cache(module: str) -> int:
    """:func:`fresh_cache` for a kernel module (by name) with the unit and extra files that
    :data:`opttrees.kernel_modules.UNITS` gives it: the call each kernel module makes at import, after its kernels
    are defined (every module of the unit must be imported by then)."""
    import sys

    from .kernel_modules import unit_of
    mods, deps = unit_of(module)
    return fresh_cache([sys.modules[m] for m in mods], depends_on=deps)


def fresh_cache(modules, depends_on=()) -> int:
    """Drop the numba cache of ``modules`` when any of their source files (or the files ``depends_on``) changed.

    Why: numba's on-disk cache checks only the source file of the kernel it loads, not the files of the kernels
    compiled into it. After an edit of one module, kernels of another that call it would load stale machine code
    and run the old logic (silently: a benchmark timed old code once). A fingerprint of every file involved is
    stamped next to the cache; when it differs, the cache files of ``modules`` are removed before any kernel runs,
    so they compile afresh. Call it at import, after the modules' kernels are defined and before any is called.
    Returns the number of cache files removed (0 when fresh, or when the cache cannot be located or written).
    """
    import glob
    import hashlib

    try:
        files = [inspect.getsourcefile(m) for m in modules] + [os.fspath(f) for f in depends_on]
        digest = hashlib.sha1()
        for f in sorted(set(files)):
            with open(f, "rb") as fh:
                digest.update(fh.read())
        dirs = {}
        for m in modules:
            disp = next((v for v in vars(m).values() if getattr(v, "_cache", None) is not None
                         and hasattr(v._cache, "_cache_path")
                         and getattr(getattr(v, "py_func", None), "__module__", None) == m.__name__), None)
            if disp is not None:
                dirs[m.__name__.rsplit(".", 1)[-1]] = disp._cache._cache_path
        if not dirs:
            return 0
        first = next(iter(dirs.values()))
        stamp = os.path.join(first, f"opttrees-{next(iter(dirs))}-{len(dirs)}.fingerprint")
        want = digest.hexdigest()
        if os.path.exists(stamp):
            with open(stamp) as fh:
                if fh.read().strip() == want:
                    return 0
        removed = 0
        for base, d in dirs.items():
            for path in glob.glob(os.path.join(d, f"{base}.*.nb[ic]")):
                os.remove(path)
                removed += 1
        os.makedirs(first, exist_ok=True)
        with open(stamp, "w") as fh:
            fh.write(want)
        return removed
    except (OSError, TypeError, AttributeError):   # read-only install, numba internals moved: keep numba's behaviour
        return 0
