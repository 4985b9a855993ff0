"""Output folders that survive a crash, with one writer at a time.

Why: ``opttrees solve`` writes several files (tree.json, tree.dot, index.html, report.json). Written in place,
a kill -9 near the end left a new tree.json beside the old report.json, and once an empty index.html. Here:

- every file is written to a temporary name in the same folder, flushed and fsync'ed, then ``os.replace``-d
  into place (atomic on POSIX): a reader sees the old file or the new one, never a truncated one;
- ``report.json`` is written last and names the files of its run with their sha256 hashes and the run id, so a
  reader can tell which files belong together (:func:`verify_run` checks it). The previous run's report is
  removed just before the first new file replaces one of its files, so a crash in between leaves no report
  (an unfinished run) rather than a report naming files another run overwrote;
- :class:`FolderLock` holds the folder for the whole solve: a lock file ``.opttrees.lock`` created with
  ``O_CREAT | O_EXCL`` holding the pid, plus ``fcntl.flock`` on it. A second writer stops at once with an error
  naming the folder and the pid. The lock of a process that died (kill -9 leaves the file) is taken over with
  a notice: the flock of a dead process is released by the kernel, and its pid no longer runs.

Only the standard library is used (the CLI imports this before anything heavy).
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from .errors import SpecError

LOCK_NAME = ".opttrees.lock"
REPORT_NAME = "report.json"
#: test hook: seconds to sleep after each file is put in place (so a test can kill the writer between files)
PAUSE_ENV = "OPTTREES_TEST_WRITE_PAUSE"
#: the process umask (read once): temporary files are made 0600, the files put in place get the usual mode
_UMASK = os.umask(0o022)
os.umask(_UMASK)

try:   # POSIX; elsewhere the O_EXCL file alone is the lock
    import fcntl
except ImportError:   # pragma: no cover
    fcntl = None   # type: ignore[assignment]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:   # pragma: no cover - e.g. platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:   # pragma: no cover
        pass
    finally:
        os.close(fd)


def _pause() -> None:
    pause = os.environ.get(PAUSE_ENV)
    if pause:
        time.sleep(float(pause))


def atomic_write(path: str | Path, data: bytes | str) -> str:
    """Write ``data`` to ``path`` through a temporary file in the same folder (fsync, then ``os.replace``).

    Returns the sha256 hex digest of the bytes written.
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)
    _pause()
    return hashlib.sha256(raw).hexdigest()


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def new_run_id() -> tuple[str, str]:
    """(run id, UTC timestamp in ISO 8601) for a report."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}", now.isoformat(timespec="seconds")


class RunWriter:
    """Writes one run's files atomically and the report last, naming every file with its sha256.

    >>> w = RunWriter(folder)                  # doctest: +SKIP
    >>> w.write("tree.json", text); w.write_report(report)
    """

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.run_id, self.timestamp = new_run_id()
        self.files: dict[str, str] = {}   # name -> sha256, in writing order

    def write(self, name: str, data: bytes | str) -> None:
        if not self.files:
            self.retire_report()
        self.files[name] = atomic_write(self.folder / name, data)

    def retire_report(self) -> None:
        """Remove the previous run's report.json before the first new file replaces one of its files: from
        then on until the new report is in place the folder has no report (an unfinished run), never a report
        naming files another run overwrote."""
        try:
            os.unlink(self.folder / REPORT_NAME)
        except FileNotFoundError:
            return
        _fsync_dir(self.folder)

    def write_report(self, report: dict) -> dict:
        """Add ``run`` (id, timestamp, files with hashes) to ``report`` and write it as report.json, last."""
        report["run"] = {"id": self.run_id, "timestamp": self.timestamp,
                         "files": {name: {"sha256": digest} for name, digest in self.files.items()}}
        atomic_write(self.folder / REPORT_NAME, json.dumps(report, indent=1, default=str))
        return report


def verify_run(folder: str | Path) -> list[str]:
    """The problems of an output folder: files named in report.json that are missing or whose sha256 differs.

    An empty list means every file report.json names is the one its run wrote.
    """
    folder = Path(folder)
    report = json.loads((folder / REPORT_NAME).read_text())
    run = report.get("run") or {}
    problems = []
    for name, info in (run.get("files") or {}).items():
        p = folder / name
        if not p.exists():
            problems.append(f"{name}: missing")
        elif sha256_file(p) != info.get("sha256"):
            problems.append(f"{name}: sha256 differs from report.json (written by another run)")
    return problems


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # exists, owned by someone else
        return True
    return True


class _Busy(SpecError):
    """The folder's lock is held by a live process (what :attr:`FolderLock.wait` waits out)."""


class FolderLock:
    """An exclusive lock on an output folder for a whole solve (a context manager).

    Taken by creating ``.opttrees.lock`` with ``O_CREAT | O_EXCL`` (holding the pid) and ``flock``-ing it. A
    second writer fails at once with :class:`~opttrees.errors.SpecError` naming the folder and the pid. A lock
    file left by a process that died is taken over, with a notice on stderr.
    """

    def __init__(self, folder: str | Path, notice=None, wait: float = 0.0):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.fd: int | None = None
        self.notice = notice or (lambda msg: print(msg, file=sys.stderr))
        #: seconds to wait for a live holder to finish (0: fail at once); a grid rerun waits for the orphan of a
        #: killed runner, which exits within a second or finishes its cell
        self.wait = float(wait)

    def _busy(self, pid) -> SpecError:
        who = f"process {pid}" if pid else "another process"
        return _Busy(f"output: the folder {self.folder} is in use by {who} (another opttrees solve writes "
                     f"there; lock file {self.path}); wait for it to finish or choose another output folder")

    def _holder(self) -> int | None:
        try:
            return int(self.path.read_text().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def acquire(self) -> FolderLock:
        deadline = time.monotonic() + self.wait
        while True:
            try:
                return self._acquire_once()
            except _Busy:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def _acquire_once(self) -> FolderLock:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SpecError(f"output: cannot create the folder {self.folder}: {exc.strerror or exc}") from None
        for _ in range(5):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o644)
            except FileExistsError:
                if self._take_over_stale():
                    continue
                raise self._busy(self._holder()) from None
            os.write(fd, f"{os.getpid()}\n".encode())
            os.fsync(fd)
            if fcntl is not None and not self._flock(fd, wait=1.0):
                os.close(fd)   # pragma: no cover - a taker holds our new file's flock for over a second
                raise self._busy(self._holder())
            self.fd = fd
            self._remove_leftovers()
            return self
        raise self._busy(self._holder())   # pragma: no cover - lost five races in a row

    @staticmethod
    def _flock(fd: int, wait: float = 0.0) -> bool:
        """flock ``fd`` exclusively, retrying for ``wait`` seconds (a taker checking the file holds it briefly)."""
        end = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() >= end:
                    return False
                time.sleep(0.01)

    def _take_over_stale(self) -> bool:
        """Remove a lock file whose holder is gone; True when it is gone (try again), False when it is held."""
        try:
            fd = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return True   # released meanwhile
        try:
            if fcntl is not None and not self._flock(fd):
                return False   # a live writer holds it
            try:
                if os.fstat(fd).st_ino != os.stat(self.path).st_ino:
                    return True   # replaced meanwhile by a new writer's file: look again
            except FileNotFoundError:
                return True
            pid = self._holder()
            # free flock and a live pid: a writer between creating its file and flock-ing it (or, rarely, a
            # dead writer's pid reused); a free flock and a dead pid (or none): the writer is gone
            if pid is not None and pid != os.getpid() and _pid_alive(pid):
                return False
            self.notice(f"notice: taking over the stale lock of {self.folder} (process "
                        f"{pid if pid else 'unknown'} is no longer running)")
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            return True
        finally:
            os.close(fd)   # also drops our flock on the old file

    def _remove_leftovers(self) -> None:
        """Temporary files of a writer that was killed before renaming them (ours hold the lock now)."""
        for p in self.folder.glob(".*.tmp"):
            try:
                p.unlink()
            except OSError:   # pragma: no cover
                pass

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:   # pragma: no cover
            pass
        if fcntl is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            except OSError:   # pragma: no cover
                pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
