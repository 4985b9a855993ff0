"""Issue 27, section 3: output folders survive kill -9 (atomic files, report.json last with sha256 hashes) and
take one writer at a time (a lock on the folder; a dead writer's lock is taken over)."""
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opttrees.errors import SpecError
from opttrees.outputs import LOCK_NAME, PAUSE_ENV, FolderLock, RunWriter, atomic_write, verify_run

ROOT = Path(__file__).resolve().parents[2]
FILES = ("tree.json", "tree.dot", "index.html", "report.json")


def spec_file(tmp_path, out):
    p = tmp_path / "s.yaml"
    p.write_text(f"data: {{dataset: iris}}\nmodel: {{type: cart, max_depth: 2}}\noutput: {out}\n")
    return p


def start(spec, pause=None):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    if pause is not None:
        env[PAUSE_ENV] = str(pause)
    return subprocess.Popen([sys.executable, "-m", "opttrees.cli", "solve", str(spec), "-q"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def complete(path: Path) -> bool:
    """The file is whole (not truncated): JSON parses, DOT and HTML end as they should."""
    text = path.read_text()
    if path.suffix == ".json":
        json.loads(text)
        return True
    if path.suffix == ".dot":
        return text.startswith("digraph") and text.rstrip().endswith("}")
    return text.rstrip().endswith("</html>")


def check_folder(out: Path):
    for name in FILES:
        if (out / name).exists():
            assert complete(out / name), name
    if (out / "report.json").exists():
        assert verify_run(out) == []
        files = json.loads((out / "report.json").read_text())["run"]["files"]
        assert set(files) == {"tree.json", "tree.dot", "index.html"}


def test_report_names_its_files_with_hashes(tmp_path):
    out = tmp_path / "o"
    r = subprocess.run([sys.executable, "-m", "opttrees.cli", "solve", str(spec_file(tmp_path, out)), "-q"],
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    run = report["run"]
    assert run["id"] and run["timestamp"].endswith("+00:00")
    assert list(run["files"]) == ["tree.json", "tree.dot", "index.html"]
    assert verify_run(out) == []
    assert not (out / LOCK_NAME).exists() and not list(out.glob(".*.tmp"))
    (out / "tree.dot").write_text("digraph changed {}")
    assert verify_run(out) == ["tree.dot: sha256 differs from report.json (written by another run)"]


def test_sigkill_at_random_points_never_leaves_a_torn_folder(tmp_path):
    """A first run fills the folder; then solves paused 0.4 s after each file (the test hook) are killed
    with SIGKILL at random points: before any file, between files, and after the report. Every file left is
    whole, and a report, when there is one, names files whose sha256 it states (the previous report is
    retired before the first new file replaces one of its files)."""
    out = tmp_path / "o"
    spec = spec_file(tmp_path, out)
    first = start(spec)
    assert first.wait(120) == 0, first.stderr.read()
    rng = random.Random(27)
    for k in range(5):   # kill after k files of the new run are in place (k = 4: after the report)
        before = {n: (out / n).stat().st_mtime_ns if (out / n).exists() else None for n in FILES}
        p = start(spec, pause=0.4)
        deadline = time.time() + 120
        while time.time() < deadline and p.poll() is None:
            changed = sum((out / n).exists() and (out / n).stat().st_mtime_ns != before[n] for n in FILES)
            if changed >= k or (k == 0 and (out / LOCK_NAME).exists()):
                break
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.35))
        p.send_signal(signal.SIGKILL)
        p.wait(30)
        check_folder(out)
    # the last killed writer's lock does not block the next solve, and its temporary files are cleaned up
    r = start(spec)
    assert r.wait(120) == 0, r.stderr.read()
    check_folder(out)
    assert (out / "report.json").exists() and not list(out.glob(".*.tmp"))


def test_second_solve_into_a_locked_folder_fails_at_once(tmp_path):
    out = tmp_path / "o"
    spec = spec_file(tmp_path, out)
    with FolderLock(out):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "opttrees.cli", "solve", str(spec), "-q"], cwd=ROOT,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
        took = time.perf_counter() - t0
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"output: the folder {out} is in use by process {os.getpid()}" in r.stderr
    assert not (out / "report.json").exists()
    print(f"refused after {took:.2f}s")


def test_a_waiting_lock_takes_the_folder_once_its_live_holder_releases_it(tmp_path):
    """A grid rerun after a killed runner waits (``wait``) for the orphaned worker of the same cell instead of
    failing; with no wait, or when the holder keeps the folder past the wait, it fails naming the folder."""
    import threading
    holder = FolderLock(tmp_path).acquire()
    with pytest.raises(SpecError, match="in use"):
        FolderLock(tmp_path).acquire()
    with pytest.raises(SpecError, match="in use"):
        FolderLock(tmp_path, wait=0.3).acquire()
    threading.Timer(0.3, holder.release).start()
    waiter = FolderLock(tmp_path, wait=10.0).acquire()
    assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())
    waiter.release()
    assert not (tmp_path / LOCK_NAME).exists()


def test_lock_in_process_and_stale_takeover(tmp_path):
    out = tmp_path / "o"
    lock = FolderLock(out).acquire()
    with pytest.raises(SpecError, match=f"in use by process {os.getpid()}"):
        FolderLock(out).acquire()
    lock.release()
    assert not (out / LOCK_NAME).exists()
    # a killed writer's lock file: its pid is dead and nobody holds the flock
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_NAME).write_text(f"{dead.pid}\n")
    notes = []
    with FolderLock(out, notice=notes.append):
        assert (out / LOCK_NAME).read_text().strip() == str(os.getpid())
    assert notes and f"stale lock of {out}" in notes[0] and str(dead.pid) in notes[0]


def test_stale_lock_of_a_killed_solve_does_not_block(tmp_path):
    out = tmp_path / "o"
    spec = spec_file(tmp_path, out)
    p = start(spec, pause=5)
    deadline = time.time() + 120
    while time.time() < deadline and not (out / LOCK_NAME).exists():
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    assert (out / LOCK_NAME).exists()   # kill -9 leaves the file behind
    r = subprocess.run([sys.executable, "-m", "opttrees.cli", "solve", str(spec), "-q"], cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"taking over the stale lock of {out}" in r.stderr and str(p.pid) in r.stderr
    assert verify_run(out) == []


def test_atomic_write_keeps_mode_and_leaves_no_temporary(tmp_path):
    digest = atomic_write(tmp_path / "a.txt", "hello")
    assert (tmp_path / "a.txt").read_text() == "hello" and len(digest) == 64
    assert (tmp_path / "a.txt").stat().st_mode & 0o044   # readable by others as usual (not mkstemp's 0600)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    w = RunWriter(tmp_path)
    (tmp_path / "report.json").write_text("{}")
    w.write("x.txt", "1")
    assert not (tmp_path / "report.json").exists()   # retired before the first file of the new run
    w.write_report({"a": 1})
    assert verify_run(tmp_path) == []
