"""Results store for comparison grids: one SQLite file (standard library), one row per cell.

Why SQLite in WAL mode: every write is one transaction, so a crash (of a cell, the runner or the machine) leaves
either the old row or the new one, never a torn file; WAL lets readers (a report) run while a grid writes, and
several processes may write one store (writes serialise on SQLite's lock; ``busy_timeout`` waits for it).
Connections are opened per operation, so a store object can be pickled or used after ``fork``.

Outcomes: ``done`` (the cell ran; its solve status may still be time_limit), ``error`` (the run raised a clean
opttrees error, e.g. an infeasible setting), ``timeout`` (killed at the wall limit), ``oom`` (killed over the
memory limit, or MemoryError), ``killed`` (a signal from outside, e.g. the kernel's OOM killer), ``crashed`` (the
worker exited without a result). ``running`` marks a cell in flight; a rerun treats it as missing.
"""
from __future__ import annotations

import json
import math
import socket
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

FINISHED = ("done",)
FAILED = ("error", "timeout", "oom", "killed", "crashed")
RUNNING = "running"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    grid TEXT,
    outcome TEXT NOT NULL,
    spec TEXT NOT NULL,
    meta TEXT,
    row TEXT,
    report TEXT,
    error TEXT,
    version TEXT,
    host TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    started REAL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS runs_grid ON runs (grid);
"""


def _json(v) -> str | None:
    if v is None:
        return None

    def clean(o):
        if isinstance(o, float) and not math.isfinite(o):
            return None
        if isinstance(o, dict):
            return {str(k): clean(x) for k, x in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(x) for x in o]
        return o
    return json.dumps(clean(v), default=str)


class ResultStore:
    """A results file; ``path`` is created with its folder on first use."""

    def __init__(self, path: str | Path, timeout: float = 60.0):
        self.path = Path(path)
        self.timeout = float(timeout)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as con:
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    @contextmanager
    def _connect(self):
        con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        try:
            con.execute(f"PRAGMA busy_timeout={int(self.timeout * 1000)}")
            con.execute("PRAGMA synchronous=NORMAL")   # with WAL: durable at checkpoints, never corrupt
            yield con
        finally:
            con.close()

    @contextmanager
    def _write(self):
        """One write transaction, taken with BEGIN IMMEDIATE so concurrent writers queue instead of deadlocking."""
        with self._connect() as con:
            for attempt in range(20):
                try:
                    con.execute("BEGIN IMMEDIATE")
                    break
                except sqlite3.OperationalError as exc:   # the busy timeout ran out under heavy contention
                    if "locked" not in str(exc) or attempt == 19:
                        raise
                    time.sleep(0.05 * (attempt + 1))
            try:
                yield con
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ writes
    def mark_running(self, key: str, spec: dict, meta: dict | None = None, grid: str | None = None,
                     version: str | None = None) -> None:
        """Record that a cell started (a crash of the runner leaves it ``running``: a rerun runs it again)."""
        with self._write() as con:
            con.execute(
                "INSERT INTO runs (key, grid, outcome, spec, meta, version, host, attempts, started) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT(key) DO UPDATE SET outcome=excluded.outcome, "
                "grid=excluded.grid, spec=excluded.spec, meta=excluded.meta, version=excluded.version, "
                "host=excluded.host, attempts=runs.attempts + 1, started=excluded.started, finished=NULL",
                (key, grid, RUNNING, _json(spec), _json(meta), version, socket.gethostname(), time.time()))

    def record(self, key: str, outcome: str, spec: dict, meta: dict | None = None, row: dict | None = None,
               report: dict | None = None, error: str | None = None, grid: str | None = None,
               version: str | None = None, host: str | None = None) -> None:
        """Store a cell's final outcome, replacing any earlier attempt's."""
        if outcome not in FINISHED + FAILED:
            raise ValueError(f"outcome must be one of {FINISHED + FAILED}; got {outcome!r}")
        with self._write() as con:
            con.execute(
                "INSERT INTO runs (key, grid, outcome, spec, meta, row, report, error, version, host, attempts, "
                "started, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT(key) DO UPDATE SET "
                "outcome=excluded.outcome, grid=excluded.grid, spec=excluded.spec, meta=excluded.meta, "
                "row=excluded.row, report=excluded.report, error=excluded.error, version=excluded.version, "
                "host=excluded.host, finished=excluded.finished",
                (key, grid, outcome, _json(spec), _json(meta), _json(row), _json(report), error, version,
                 host or socket.gethostname(), time.time(), time.time()))

    def delete(self, keys) -> None:
        with self._write() as con:
            con.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in keys])

    # ------------------------------------------------------------------ reads
    def outcomes(self, keys=None) -> dict[str, str]:
        """key -> outcome, for all cells or the given keys."""
        with self._connect() as con:
            rows = con.execute("SELECT key, outcome FROM runs").fetchall()
        out = dict(rows)
        if keys is not None:
            keys = set(keys)
            out = {k: v for k, v in out.items() if k in keys}
        return out

    def rows(self, grid: str | None = None, keys=None, with_report: bool = False) -> list[dict]:
        """The tidy row of every stored cell (failed cells get a row with their outcome and error)."""
        sql = "SELECT key, grid, outcome, spec, meta, row, error, version, host, attempts, started, finished" + \
              (", report" if with_report else "") + " FROM runs"
        args: tuple = ()
        if grid is not None:
            sql += " WHERE grid = ?"
            args = (grid,)
        with self._connect() as con:
            fetched = con.execute(sql, args).fetchall()
        wanted = None if keys is None else set(keys)
        out = []
        for r in fetched:
            if wanted is not None and r[0] not in wanted:
                continue
            meta = json.loads(r[4]) if r[4] else {}
            row = json.loads(r[5]) if r[5] else {}
            merged = {**{k: v for k, v in meta.items()}, **row}
            merged.update({"key": r[0], "grid": r[1], "outcome": r[2], "error": r[6], "version": r[7],
                           "host": r[8], "attempts": r[9], "started": r[10], "finished": r[11],
                           "spec": json.loads(r[3])})
            if with_report:
                merged["report"] = json.loads(r[12]) if r[12] else None
            out.append(merged)
        return out

    def integrity_ok(self) -> bool:
        with self._connect() as con:
            return con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    def __len__(self) -> int:
        with self._connect() as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
