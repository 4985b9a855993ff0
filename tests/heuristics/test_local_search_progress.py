"""Live progress of the local search (restarts done, best objective, time left) and the numba compile notice."""
import logging
import re

import numpy as np
from sklearn.datasets import load_breast_cancer

from opttrees import jit
from opttrees.data.prepared import prepare
from opttrees.heuristics.kernels import restarts
from opttrees.heuristics.local_search import local_search
from opttrees.interrupt import Budget


def test_verbose_local_search_prints_restarts_best_and_time_left(capsys):
    X, y = load_breast_cancer(return_X_y=True)
    data = prepare(X, y)
    quiet = local_search(data, 3, n_restarts=40, random_state=0, return_all=True)
    loud = local_search(data, 3, n_restarts=40, random_state=0, return_all=True, verbose=True,
                        time_limit=Budget(600))
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("[local search]")]
    assert lines, err
    last = lines[-1]
    assert "restarts=40/40" in last and "best=" in last and "left=" in last, last
    best = float(re.search(r"best=([\d.e+-]+)", last).group(1))
    assert best == np.float64(f"{loud.objective:.6g}")
    # the chunking that lets the line move never changes the result
    assert loud.objective == quiet.objective
    np.testing.assert_array_equal(loud.seeds, quiet.seeds)
    np.testing.assert_allclose(loud.objectives, quiet.objectives)


def test_cold_kernel_announces_its_compile_once(monkeypatch, caplog):
    monkeypatch.setattr(jit, "_announced", set())
    monkeypatch.setattr(jit, "is_cold", lambda d, *_: True)
    with caplog.at_level(logging.WARNING, logger="opttrees"):
        assert jit.announce_compile("local-search", restarts.run_restarts, "about a minute")
        assert not jit.announce_compile("local-search", restarts.run_restarts, "about a minute")
    notes = [r.getMessage() for r in caplog.records if "compiling the local-search kernels" in r.getMessage()]
    assert len(notes) == 1 and "once per installation" in notes[0]


def test_a_compiled_kernel_is_not_cold():
    X, y = load_breast_cancer(return_X_y=True)
    local_search(prepare(X[:50, :3], y[:50]), 1, n_restarts=1)
    assert not jit.is_cold(restarts.run_restarts)
    # per word type: these rows take 32-bit order words (a recorded signature missing from the cache is cold:
    # tests/cli/test_first_run.py::test_is_cold_per_signature)
    assert not jit.is_cold(restarts.run_restarts, "ogT", "uint32")
