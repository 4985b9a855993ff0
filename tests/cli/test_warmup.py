"""Numba compile at install (opttrees warmup) and cold kernels met by a fit (issue 27 section 1).

The cold-cache checks run a fresh process with NUMBA_CACHE_DIR pointing at an empty directory, so every
kernel is cold there whatever this installation has cached. Their only timing checks are generous bounds on
returning after a deadline or a Ctrl-C (behaviour, not speed).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]


def _env(cache: Path) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), PYTHONWARNINGS="default")


FIT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from opttrees import OptimalTreeClassifier
    from opttrees.interrupt import stop_on_sigint
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6)); y = (X[:, 0] + X[:, 1] ** 2 > 0.5).astype(int)
    method, tl = sys.argv[1], float(sys.argv[2])
    print("start", flush=True)
    t = time.perf_counter()
    with stop_on_sigint():
        est = OptimalTreeClassifier(max_depth=3, method=method, n_restarts=20, time_limit=tl).fit(X, y)
    print(f"fit {time.perf_counter() - t:.2f} nodes {est.tree_.n_nodes} score {est.score(X, y):.3f}", flush=True)
""")


def test_every_kernel_module_is_listed():
    from opttrees.warmup import kernels
    names = [name for name, _ in kernels()]
    for kernel in ("heuristics.kernels.restarts.run_restarts", "heuristics.kernels.grow.grow", "dp.engine.search",
                   "prescriptive._kernels.run_restarts", "heuristics.linear_leaves._lasso_cd"):
        assert f"opttrees.{kernel}" in names
    # the modules opttrees.warmup compiles are every module with a cached kernel
    pkg = ROOT / "opttrees"
    with_njit = {str(p.relative_to(ROOT).with_suffix("")).replace(os.sep, ".") for p in pkg.rglob("*.py")
                 if "@njit(cache=True" in p.read_text()}
    from opttrees.warmup import KERNEL_MODULES
    assert with_njit == set(KERNEL_MODULES)


def test_warmup_leaves_no_kernel_cold():
    """Seconds when this installation is already warm (make test runs `opttrees warmup` first)."""
    from opttrees.warmup import warmup
    res = warmup(jobs=2, echo=lambda line: None)
    assert res["failed"] == {}
    assert res["cold"] == []
    from opttrees.warmup import cold_kernels
    assert cold_kernels() == []


def run_cold(tmp_path, script, *args):
    """Run ``script`` with a cold numba cache to its end: (the completed process, the fit seconds it printed)."""
    out = subprocess.run([sys.executable, "-c", script, *args], env=_env(tmp_path), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out, float(out.stdout.split("fit ")[1].split()[0])


@pytest.mark.parametrize("method", ["local-search", "dp"])
def test_cold_fit_returns_at_its_deadline(tmp_path, method):
    """A fit that meets cold kernels says so at once, and at time_limit=5 returns a tree and a warning within
    a generous bound, while the compile goes on in the background."""
    t0 = time.perf_counter()
    out, fit = run_cold(tmp_path, FIT, method, "5")
    assert fit < 15, (fit, out.stderr)
    assert "compiling the" in out.stderr and "still compiling" in out.stderr
    assert "opttrees warmup" in out.stderr
    assert "nodes" in out.stdout
    assert time.perf_counter() - t0 < 90   # the process exits too (the compile thread is a daemon)


def interrupt_cold(tmp_path, script, *args) -> tuple[int, str, str, float]:
    """Start ``script`` with a cold numba cache, SIGINT it 4 s into the compile: (returncode, out, err, seconds
    from the signal to the process's end)."""
    p = subprocess.Popen([sys.executable, "-c", script, *args], env=_env(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "start"
        time.sleep(4)   # well inside the compile (a minute or more)
        assert p.poll() is None
        t = time.perf_counter()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        elapsed = time.perf_counter() - t
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, out, err, elapsed


def test_ctrl_c_during_cold_compile(tmp_path):
    """SIGINT while the local search's kernels compile: the fit returns its fallback within about a second."""
    rc, out, err, elapsed = interrupt_cold(tmp_path, FIT, "local-search", "1000")
    assert rc == 0, err
    assert "nodes" in out and "still compiling" in err
    assert elapsed < 5, elapsed


GREEDY = textwrap.dedent("""
    import sys, time
    import numpy as np
    from opttrees import OptimalTreeRegressor
    from opttrees.data import prepare
    from opttrees.heuristics import greedy_tree
    from opttrees.interrupt import Budget, stop_on_sigint
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6)); y = X[:, 0] + X[:, 1] ** 2
    which, tl = sys.argv[1], float(sys.argv[2])
    print("start", flush=True)
    t = time.perf_counter()
    with stop_on_sigint():
        if which == "regressor":
            tree = OptimalTreeRegressor(max_depth=3, method="greedy", time_limit=tl).fit(X, y).tree_
        else:   # classification, called directly (forests, start trees): CART is the fallback
            tree = greedy_tree(prepare(X, (y > 0.5).astype(int), task="classification"), 3, time_limit=Budget(tl))
    print(f"fit {time.perf_counter() - t:.2f} nodes {tree.n_nodes}", flush=True)
""")


@pytest.mark.parametrize("which", ["regressor", "classification"])
def test_cold_greedy_returns_at_its_deadline(tmp_path, which):
    """The greedy kernel compiles in a worker thread too: a cold greedy fit returns its fallback (the root leaf for
    regression, CART for classification) at the deadline, with the notice and the warning."""
    out, fit = run_cold(tmp_path, GREEDY, which, "2")
    assert fit < 12, (fit, out.stderr)
    assert "compiling the greedy" in out.stderr and "still compiling" in out.stderr
    nodes = int(out.stdout.split("nodes ")[1].split()[0])
    assert nodes == 1 if which == "regressor" else nodes > 1


def test_ctrl_c_during_cold_greedy_compile(tmp_path):
    rc, out, err, elapsed = interrupt_cold(tmp_path, GREEDY, "regressor", "1000")
    assert rc == 0, err
    assert "nodes 1" in out and "still compiling" in err
    assert elapsed < 5, elapsed
