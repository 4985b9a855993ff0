"""Run the cells of a comparison grid, each in its own worker process watched from outside, into a ResultStore.

Why a process per cell, supervised from outside: a solver can hang in C code, a model can exhaust memory, and a
numba kernel can segfault; none of these may lose the grid or block it. The supervisor (a thread in the runner,
or a task on a Dask worker) starts ``python -m opttrees.experiments.runner`` for one cell, polls it, interrupts
it at the wall limit (SIGINT first, so the fit keeps its best tree, SIGKILL after a grace period) and kills it
over the memory limit; whatever happened is recorded as the cell's outcome (see :mod:`.store`).

Why an existing engine for the parallelism: local runs use ``concurrent.futures`` (each pool thread supervises
one worker process); more than one machine uses Dask distributed (``backend="dask"`` starts a local cluster,
``scheduler="tcp://host:8786"`` joins a running one). Dask is the optional ``dask`` extra, imported only then.

Resuming: a cell is keyed by a hash of its spec and the package version; a rerun skips cells already ``done``
and, unless ``retry_failed``, cells that failed. Cells left ``running`` by a runner that died are run again.
"""
from __future__ import annotations

import json
import math
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cluster import distributed
from ..errors import InputError
from .grid import Cell, Grid, as_cells, package_version
from .records import first_incumbent_time, route_of
from .store import FAILED, FINISHED, ResultStore

BACKENDS = ("process", "dask")
LAUNCHERS = ("forkserver", "subprocess")
#: seconds between a graceful interrupt (SIGINT: keep the best tree) and SIGKILL
GRACE = 5.0
POLL = 0.1


#: seconds a cell waits for its output folder's lock: a killed runner's worker of the same cell exits within a
#: second of noticing (its parent-watch thread), or finishes the cell
CELL_LOCK_WAIT = 60.0


# ---------------------------------------------------------------------------------------------- worker process
def _watch_parent() -> None:
    """Exit when the supervising process dies, so a killed runner leaves no orphan solves behind."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(3)
    threading.Thread(target=watch, name="opttrees-parent-watch", daemon=True).start()


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024   # bytes on macOS, KiB on Linux


def _worker_main(cell_path: str, result_path: str, log_path: str | None = None) -> int:
    """Body of the worker process: run one spec, write the outcome atomically to ``result_path``."""
    if log_path is not None:   # solver banners and logs go to the cell's log, not the runner's terminal
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    try:
        os.setsid()   # out of the terminal's process group: Ctrl-C reaches the runner, which stops the workers
    except OSError:
        pass
    _watch_parent()
    t0 = time.perf_counter()
    payload: dict = {"ok": False}
    try:
        from ..errors import OptTreesError
        from ..interrupt import stop_on_sigint
        from ..spec import parse_spec, run_spec
        spec = json.loads(Path(cell_path).read_text())
        try:
            with stop_on_sigint():
                # the cell's output folder (tree.json, tree.dot, index.html, report.json) when the runner gave one
                # (a rerun after a killed runner waits for that runner's orphaned worker of the same cell to exit)
                report = run_spec(parse_spec(spec), write=bool(spec.get("output")), lock_wait=CELL_LOCK_WAIT)
            payload = {"ok": True, "report": report}
        except MemoryError:
            payload = {"ok": False, "kind": "oom", "error": "MemoryError: the run exhausted its memory"}
        except KeyboardInterrupt:
            payload = {"ok": False, "kind": "interrupted", "error": "interrupted before any tree existed"}
        except OptTreesError as exc:
            payload = {"ok": False, "kind": "error", "error": f"{type(exc).__name__}: {exc}"}
        except Exception as exc:
            payload = {"ok": False, "kind": "crashed", "error": f"{type(exc).__name__}: {exc}",
                       "traceback": traceback.format_exc()}
    finally:
        payload["peak_memory_mb"] = _peak_rss_mb()
        payload["worker_time"] = time.perf_counter() - t0
        payload["host"] = socket.gethostname()
        tmp = result_path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(payload, fh, default=str)
        os.replace(tmp, result_path)
    return 0


# ---------------------------------------------------------------------------------------------- supervisor
def _rss_mb(pid: int) -> float | None:
    """Resident memory of a process and its children (psutil if installed, else /proc on Linux)."""
    try:
        import psutil
        try:
            p = psutil.Process(pid)
            return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]) / 2 ** 20
        except psutil.Error:
            return None
    except ImportError:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
    return None


def _tail(path: Path, n: int = 2000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return text[-n:].strip()


#: modules a forkserver imports once, so that a worker starts in milliseconds instead of seconds
PRELOAD = ["opttrees.spec", "opttrees.estimators", "opttrees.solvers", "pyomo.environ", "sklearn.model_selection"]
_FORKSERVER_LOCK = threading.Lock()


class _Forked:
    """A forkserver worker with the part of the ``Popen`` interface the supervisor uses."""

    def __init__(self, cell_path: Path, result_path: Path, log_path: Path):
        import multiprocessing as mp
        ctx = mp.get_context("forkserver")
        with _FORKSERVER_LOCK:
            ctx.set_forkserver_preload(PRELOAD)
            self.proc = ctx.Process(target=_worker_main, args=(str(cell_path), str(result_path), str(log_path)),
                                    name="opttrees-cell", daemon=False)
            self.proc.start()
        assert self.proc.pid is not None   # set by start()
        self.pid: int = self.proc.pid

    @property
    def returncode(self):
        return self.proc.exitcode

    def poll(self):
        return self.proc.exitcode

    def send_signal(self, sig):
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self):
        self.proc.kill()

    def wait(self):
        self.proc.join()
        return self.proc.exitcode


def _can_fork_server() -> bool:
    import multiprocessing as mp
    return "forkserver" in mp.get_all_start_methods() and not mp.current_process().daemon


def execute_cell(spec: dict, wall_time: float | None = None, memory_mb: float | None = None,
                 grace: float = GRACE, cancel: threading.Event | None = None, launcher: str = "subprocess") -> dict:
    """Run one spec in a fresh worker process under the limits; return ``{outcome, report, error, ...}``.

    Picklable and self-contained, so a Dask worker can run it on another machine. ``cancel`` (local runs only)
    stops the worker at once, for a runner that is shutting down. ``launcher``: "subprocess" starts a new
    interpreter (works anywhere, ~2-4 s of imports per cell); "forkserver" forks from a server that imported
    opttrees once (fast; needs a non-daemonic parent, falls back to a subprocess otherwise).
    """
    tmp = Path(tempfile.mkdtemp(prefix="opttrees-cell-"))
    cell_path, result_path, log_path = tmp / "cell.json", tmp / "result.json", tmp / "worker.log"
    cell_path.write_text(json.dumps(spec))
    with open(log_path, "wb") as log:
        proc = _start_worker(launcher, cell_path, result_path, log_path, log)
        t0 = time.perf_counter()   # after the start: a forkserver's one-off imports are not the cell's time
        try:
            reason, peak_seen = _supervise(proc, t0, wall_time, memory_mb, grace, cancel)
        finally:
            if proc.poll() is None:   # the supervisor itself is being torn down
                proc.kill()
            proc.wait()
    wall = time.perf_counter() - t0
    payload = None
    if result_path.exists():
        try:
            payload = json.loads(result_path.read_text())
        except (OSError, json.JSONDecodeError):
            payload = None
    out = _cell_result(payload, reason, proc.returncode, wall, wall_time, memory_mb, peak_seen, _tail(log_path))
    for p in (cell_path, result_path, log_path):
        try:
            p.unlink()
        except OSError:
            pass
    try:
        tmp.rmdir()
    except OSError:
        pass
    return out


def _start_worker(launcher: str, cell_path: Path, result_path: Path, log_path: Path, log):
    """The cell's worker: forked from the fork server, or a new interpreter writing to ``log``."""
    if launcher == "forkserver" and _can_fork_server():
        return _Forked(cell_path, result_path, log_path)
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])   # the opttrees this supervisor runs, for the worker too
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return subprocess.Popen([sys.executable, "-m", "opttrees.experiments.runner", "--worker", str(cell_path),
                             str(result_path)], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)   # the terminal's Ctrl-C reaches the runner only


def _supervise(proc, t0: float, wall_time: float | None, memory_mb: float | None, grace: float,
               cancel: threading.Event | None) -> tuple[str | None, float]:
    """Poll the worker until it ends: killed over the memory limit or on ``cancel``, interrupted (SIGINT: the fit
    keeps its best tree) at the wall limit and killed ``grace`` seconds later. (why it was stopped or None, the
    peak resident memory seen in MB)."""
    reason = None
    peak_seen = 0.0
    interrupted_at = None
    while proc.poll() is None:
        time.sleep(POLL)
        elapsed = time.perf_counter() - t0
        if memory_mb is not None:
            rss = _rss_mb(proc.pid)
            if rss is not None:
                peak_seen = max(peak_seen, rss)
                if rss > memory_mb and reason is None:
                    reason = "oom"
                    proc.kill()
        if cancel is not None and cancel.is_set() and reason is None:
            reason = "cancelled"
            proc.kill()
        if wall_time is not None and elapsed > wall_time and reason is None:
            reason = "timeout"
            interrupted_at = elapsed
            proc.send_signal(signal.SIGINT)   # the fit stops and keeps its best tree
        if interrupted_at is not None and elapsed > interrupted_at + grace and proc.poll() is None:
            proc.kill()
    return reason, peak_seen


def _cell_result(payload: Any, reason: str | None, returncode: int | None, wall: float,
                 wall_time: float | None, memory_mb: float | None, peak_seen: float, log_tail: str) -> dict:
    """``{outcome, report, error, wall_time, returncode, peak_memory_mb, host}`` of a finished worker from what it
    wrote (``payload``), why the supervisor stopped it and how it exited."""
    out: dict[str, Any] = {"wall_time": wall, "returncode": returncode, "peak_memory_mb": None, "report": None,
                           "error": None, "host": socket.gethostname()}
    if payload is not None:
        out["peak_memory_mb"] = payload.get("peak_memory_mb")
        out["report"] = payload.get("report")
        out["error"] = payload.get("error")
        if payload.get("traceback"):
            out["error"] = f"{out['error']}\n{payload['traceback']}"
    if peak_seen and (out["peak_memory_mb"] is None or peak_seen > out["peak_memory_mb"]):
        out["peak_memory_mb"] = peak_seen
    if reason == "timeout":
        out["outcome"] = "timeout"
        out["error"] = f"killed at the wall limit of {wall_time:g} s" + (f" ({out['error']})" if out["error"] else "")
    elif reason == "oom":
        out["outcome"] = "oom"
        out["error"] = f"killed over the memory limit of {memory_mb:g} MB (resident {peak_seen:.0f} MB)"
    elif reason == "cancelled":
        out["outcome"] = "cancelled"
    elif payload is not None and payload.get("ok"):
        out["outcome"] = "done"
    elif payload is not None:
        out["outcome"] = {"oom": "oom", "error": "error", "interrupted": "killed"}.get(payload.get("kind"), "crashed")
    elif returncode is not None and returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        # SIGKILL we did not send: someone outside (the kernel's OOM killer, a batch system, a user)
        out["outcome"] = "killed" if sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT) else "crashed"
        out["error"] = f"worker died from signal {name}" + (f"; log tail:\n{log_tail}" if log_tail else "")
    else:
        out["outcome"] = "crashed"
        out["error"] = f"worker exited with code {returncode} and no result" + \
            (f"; log tail:\n{log_tail}" if log_tail else "")
    return out


def tidy_row(result: dict) -> dict:
    """The flat per-run figures of one ``execute_cell`` result (defensive about missing report keys)."""
    rep = result.get("report") or {}
    sol = rep.get("solve") or {}
    train = next((k for k in rep if k.startswith("train_")), None)
    test = next((k for k in rep if k.startswith("test_")), None)
    tree = rep.get("tree") or {}
    fit_timings = rep.get("fit_timings") or {}
    build = fit_timings.get("build") if isinstance(fit_timings, dict) else None
    if build is None:
        build = (sol.get("timings") or {}).get("build")
    finite = lambda v: v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None
    route = route_of(sol) if rep else {k: None for k in route_of(None)}
    proven = bool(sol.get("proven_optimal", False))
    fit_time = finite(rep.get("fit_time"))
    return {
        "status": sol.get("status") or rep.get("status"),
        "proven_optimal": proven,
        # what ran, not what was planned (records.route_of): the DP bound may prove a model no solver saw
        "solver_ran": route["solver_ran"],
        "planned_solver": route["planned_solver"],
        "route": route["route"],
        "proof": route["proof"],
        "start": route["start"],
        "bound_source": route["bound_source"],
        "time_to_first_incumbent": finite(first_incumbent_time(sol.get("trace"))),
        "time_to_proof": fit_time if proven else None,   # the whole fit (build and DP included), when proven
        "objective": finite(sol.get("objective", rep.get("objective"))),   # in the model's own units
        # errors or loss / the one-leaf baseline: the same scale for every model (FlowOCT's objective counts hits)
        "train_loss": finite((rep.get("normalised_loss") or {}).get("train")),
        "test_loss": finite((rep.get("normalised_loss") or {}).get("test")),
        "objective_meaning": rep.get("objective_meaning"),
        "bound": finite(sol.get("bound")),
        "gap": finite(sol.get("gap")),
        "runtime": finite(sol.get("runtime")) if sol else finite(rep.get("fit_time")),
        "fit_time": fit_time,
        "build_time": finite(build),
        "wall_time": finite(result.get("wall_time")),
        "solver_version": sol.get("solver_version") or None,
        "node_count": sol.get("node_count"),
        "n_lazy_cuts": sol.get("n_lazy_cuts"),
        "metric": train[len("train_"):] if train else None,
        "train_score": finite(rep.get(train)) if train else None,
        "test_score": finite(rep.get(test)) if test else None,
        "n_train": rep.get("n_train"),
        "n_test": rep.get("n_test"),
        "n_features": rep.get("n_features"),
        "tree_depth": tree.get("depth"),
        "n_leaves": tree.get("n_leaves"),
        "n_splits": tree.get("n_splits"),
        "peak_memory_mb": finite(result.get("peak_memory_mb")),
        "trace": sol.get("trace") or [],
    }


# ---------------------------------------------------------------------------------------------- progress
class _Progress:
    """Cells done / failed / time left: a tqdm bar on a terminal, one plain line per finished cell otherwise."""

    def __init__(self, total: int, enabled: bool, label: str, stream=None):
        self.total, self.enabled, self.label = total, enabled, label
        self.stream = stream if stream is not None else sys.stderr
        self.done = self.failed = 0
        self.t0 = time.perf_counter()
        self.bar = None
        if enabled and total and getattr(self.stream, "isatty", lambda: False)():
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=f"[{label}]", unit="cell", file=self.stream, dynamic_ncols=True)

    def update(self, cell: Cell, outcome: str, row: dict) -> None:
        if outcome == "done":
            self.done += 1
        else:
            self.failed += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix(done=self.done, failed=self.failed, refresh=False)
            self.bar.update(1)
            return
        n = self.done + self.failed
        elapsed = time.perf_counter() - self.t0
        left = elapsed / n * (self.total - n) if n else math.nan
        m = cell.meta
        what = f"{m.get('dataset')} {m.get('method_solver')} depth={m.get('depth')} seed={m.get('seed')}"
        status = row.get("status") or ""
        print(f"[{self.label}] {n}/{self.total} cells ({self.failed} failed) {elapsed:.0f}s elapsed, "
              f"~{left:.0f}s left: {what} -> {outcome}{' ' + status if status and outcome == 'done' else ''}",
              file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ---------------------------------------------------------------------------------------------- the runner
@dataclass
class RunSummary:
    total: int
    skipped: int
    ran: int = 0
    outcomes: dict = field(default_factory=dict)
    interrupted: bool = False
    store: str = ""

    @property
    def failed(self) -> int:
        return sum(v for k, v in self.outcomes.items() if k != "done")

    def __str__(self) -> str:
        parts = ", ".join(f"{v} {k}" for k, v in sorted(self.outcomes.items())) or "nothing run"
        return (f"{self.total} cells: {self.skipped} already in the store, ran {self.ran} ({parts})"
                + ("; interrupted, rerun to finish" if self.interrupted else "") + f"; store {self.store}")


def cell_folder(store: ResultStore, cell: Cell) -> Path:
    """Where a cell's files go: ``<the store's folder>/cells/<key>``."""
    return store.path.parent.resolve() / "cells" / cell.key


def pending(cells, store: ResultStore, retry_failed: bool = False) -> list[Cell]:
    """Cells still to run: not done, and not failed unless ``retry_failed`` (``running`` ones count as missing)."""
    cells = as_cells(cells)
    known = store.outcomes([c.key for c in cells])
    skip = set(FINISHED) | (set() if retry_failed else set(FAILED))
    return [c for c in cells if known.get(c.key) not in skip]


def _dask_client(scheduler: str | None, jobs: int):
    dd = distributed("backend='dask' / scheduler")
    Client, LocalCluster = dd.Client, dd.LocalCluster
    if scheduler:
        return Client(scheduler), None
    import dask
    # non-daemonic workers may start a forkserver (fast cell starts); daemonic ones fall back to a subprocess per cell
    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


class _Terminate(Exception):
    pass


def run_grid(grid, store: ResultStore | str | Path, jobs: int = 1, backend: str = "process",
             scheduler: str | None = None, retry_failed: bool = False, wall_time: float | None = None,
             memory_mb: float | None = None, progress: bool = True, grace: float = GRACE,
             launcher: str = "forkserver") -> RunSummary:
    """Run the pending cells of ``grid`` (a Grid, Cells, or spec dicts) and record every outcome in ``store``.

    ``wall_time`` / ``memory_mb`` override the grid's ``limits``. Ctrl-C or SIGTERM stops the workers, leaves
    the finished cells stored and returns a summary with ``interrupted=True``. ``launcher`` (process back-end):
    "forkserver" (fast start) or "subprocess" (a fresh interpreter per cell); Dask workers always use a subprocess.
    """
    if launcher not in LAUNCHERS:
        raise InputError(f"launcher: must be one of {LAUNCHERS}; got {launcher!r}")
    if backend not in BACKENDS:
        raise InputError(f"backend: must be one of {BACKENDS}; got {backend!r}")
    if scheduler:
        backend = "dask"
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs: must be a positive integer; got {jobs!r}")
    if not isinstance(store, ResultStore):
        store = ResultStore(store)
    limits = dict(grid.limits) if isinstance(grid, Grid) else {}
    if wall_time is not None:
        limits["wall_time"] = wall_time
    if memory_mb is not None:
        limits["memory_mb"] = memory_mb
    for k, v in limits.items():
        if v is not None and not (isinstance(v, (int, float)) and v > 0):
            raise InputError(f"{k}: must be a positive number; got {v!r}")
    name = grid.name if isinstance(grid, Grid) else "cells"
    cells = as_cells(grid)
    todo = pending(cells, store, retry_failed)
    summary = RunSummary(total=len(cells), skipped=len(cells) - len(todo), store=str(store.path))
    if not todo:
        return summary
    version = package_version()
    bar = _Progress(len(todo), progress, name)

    def finish(cell: Cell, result: dict) -> None:
        outcome = result["outcome"]
        if outcome == "cancelled":
            return
        row = tidy_row(result)
        store.record(cell.key, outcome, cell.spec, cell.meta, row=row, report=result.get("report"),
                     error=result.get("error"), grid=name, version=version, host=result.get("host"))
        summary.ran += 1
        summary.outcomes[outcome] = summary.outcomes.get(outcome, 0) + 1
        bar.update(cell, outcome, row)

    # each cell writes its tree files into its own folder beside the store (an absolute path: workers may run
    # elsewhere, from another working directory)
    todo = [Cell(c.key, {**c.spec, "output": str(cell_folder(store, c))}, {**c.meta, "output": str(cell_folder(store, c))})
            for c in todo]
    previous = None
    if threading.current_thread() is threading.main_thread():
        def on_term(signum, frame):
            raise _Terminate()
        previous = signal.signal(signal.SIGTERM, on_term)
    try:
        if backend == "process":
            _run_local(todo, store, jobs, limits, grace, finish, name, version, launcher)
        else:
            _run_dask(todo, store, jobs, scheduler, limits, grace, finish, name, version)
    except (KeyboardInterrupt, _Terminate):
        summary.interrupted = True
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        bar.close()
    return summary


def _run_local(todo, store, jobs, limits, grace, finish, name, version, launcher) -> None:
    cancel = threading.Event()

    def supervise(cell: Cell) -> dict:
        if cancel.is_set():
            return {"outcome": "cancelled"}
        store.mark_running(cell.key, cell.spec, cell.meta, grid=name, version=version)
        return execute_cell(cell.spec, limits.get("wall_time"), limits.get("memory_mb"), grace, cancel, launcher)

    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="opttrees-cell")
    try:
        futures = {pool.submit(supervise, c): c for c in todo}
        remaining = set(futures)
        while remaining:
            done, remaining = wait(remaining, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in done:
                finish(futures[f], f.result())
    finally:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)


def _run_dask(todo, store, jobs, scheduler, limits, grace, finish, name, version) -> None:
    client, cluster = _dask_client(scheduler, jobs)
    futures: dict = {}
    try:
        from distributed import as_completed
        for c in todo:
            store.mark_running(c.key, c.spec, c.meta, grid=name, version=version)
            f = client.submit(execute_cell, c.spec, limits.get("wall_time"), limits.get("memory_mb"), grace, None,
                              "forkserver", key=f"opttrees-cell-{c.key}-{time.time_ns()}", pure=False)
            futures[f] = c
        for f in as_completed(list(futures)):
            cell = futures[f]
            try:
                result = f.result()
            except Exception as exc:   # the Dask worker itself died (KilledWorker) or the task could not run
                result = {"outcome": "crashed", "error": f"{type(exc).__name__}: {exc}", "report": None}
            finish(cell, result)
    finally:   # cancelling stops queued cells; running ones end with their worker (local) or their wall limit
        try:
            client.cancel(list(futures))
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--worker":
        return _worker_main(argv[1], argv[2], None)
    print("usage: python -m opttrees.experiments.runner --worker CELL.json RESULT.json "
          "(internal; use `opttrees compare GRID.yaml`)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
