"""Every method shows live progress with ``verbose=True`` (plain "[label] seconds fields" lines when stderr is
not a terminal): local search, the DP, the MIO, and the prescriptive local search and DP (issue 27 item 2)."""
import re

import numpy as np
import pytest
from sklearn.datasets import load_iris

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor

X, Y = load_iris(return_X_y=True)


def lines(capsys, label):
    err = capsys.readouterr().err
    return [ln for ln in err.splitlines() if ln.startswith(f"[{label}]")]


def test_local_search_prints_progress(capsys):
    OptimalTreeClassifier(max_depth=2, method="local-search", n_restarts=20, verbose=True).fit(X, Y)
    got = lines(capsys, "local search")
    assert got and re.search(r"\d+\.\d+s", got[-1])


def test_regressor_local_search_prints_progress(capsys):
    OptimalTreeRegressor(max_depth=2, method="local-search", n_restarts=10, verbose=True).fit(X[:, 1:], X[:, 0])
    assert lines(capsys, "local search")


def test_dp_prints_depth_subproblems_best_and_bound(capsys):
    OptimalTreeClassifier(max_depth=2, method="dp", verbose=True).fit(X, Y)
    got = lines(capsys, "dynamic program")
    assert got, "no DP progress line"
    last = got[-1]
    for field in ("depth=2/2", "subproblems=", "best=", "bound=", "status=optimal"):
        assert field in last, last


def test_mio_with_auto_dp_prints_the_dp_and_the_solver(capsys):
    OptimalTreeClassifier(max_depth=2, time_limit=60, verbose=True).fit(X, Y)
    err = capsys.readouterr().err   # the DP's tree reaches its bound: proven, and the line says no solver ran
    assert "[dynamic program]" in err and "proven optimal without a solver" in err and "[highs]" not in err
    OptimalTreeClassifier(max_depth=2, time_limit=60, verbose=True, dp_bound=False).fit(X, Y)
    err = capsys.readouterr().err
    assert "[dynamic program]" in err and "[highs]" in err


@pytest.mark.parametrize("method,label", [("local-search", "prescriptive local search"),
                                          ("dp", "prescriptive dynamic program")])
def test_prescriptive_prints_progress(capsys, method, label):
    from opttrees import OptimalPrescriptiveTree

    rng = np.random.default_rng(0)
    Xp = rng.normal(size=(80, 3))
    t = rng.integers(0, 2, 80)
    y = Xp[:, 0] * (2 * t - 1) + rng.normal(size=80) * 0.1
    OptimalPrescriptiveTree(max_depth=2, method=method, verbose=True, n_restarts=10).fit(Xp, t, y)
    assert lines(capsys, label)
