"""The small records the kernels take instead of long positional argument lists (typed ``NamedTuple``\\ s, which
numba passes as tuples: a field read is free inside a kernel, and a kernel compiles once per field types).

Why: the restarts took 34 positional arguments and callers built 19-item tuples for them, in an order nothing
checked. Each record groups what changes together: the data of a call (:class:`Problem`), its fixed settings
(:class:`Settings`), a heap tree (:class:`HeapTree`), the read-only arrays shared by a call's threads
(:class:`SearchArrays`) and where the restarts write their results (:class:`RestartOutput`). Build them with
the functions below, which fix every field's type (int64 / float64 / bool), so the kernels compile once.
The row words ``ogT`` stay a separate argument: their dtype (32- or 64-bit) selects the compiled variant, and
:func:`opttrees.jit.is_cold` looks that argument up by name.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Problem(NamedTuple):
    """The data of one call (:func:`opttrees.heuristics.core.make_problem`): X (n, p), Xs (scaled to [0, 1]),
    grp (n, p) group ranks, orderT / grpT (p, n) presorted rows and their ranks, Z (n, S) sufficient statistics,
    featok (p,) the features splits may use."""
    X: np.ndarray
    Xs: np.ndarray
    grp: np.ndarray
    orderT: np.ndarray
    grpT: np.ndarray
    Z: np.ndarray
    featok: np.ndarray


class Settings(NamedTuple):
    """A call's fixed settings: heap size T, loss kind (and the start trees' split kind), depth D, minimum leaf
    size nmin, complexity penalty pen (alpha * L̂), hyperplane splits and their random starts H, tolerance tol,
    features per start-tree split mtry, the move limit, the share of fully random start trees."""
    T: int
    kind: int
    start_kind: int
    D: int
    nmin: int
    pen: float
    hyper: bool
    H: int
    tol: float
    mtry: int
    max_moves: int
    random_frac: float


class HeapTree(NamedTuple):
    """A tree in heap order (see :mod:`opttrees.heuristics.kernels`); the kernels change its arrays in place."""
    ntype: np.ndarray
    feat: np.ndarray
    thr: np.ndarray
    coef: np.ndarray


class SearchArrays(NamedTuple):
    """Read-only arrays made once per call and shared by its threads (:func:`.orders.search_arrays` makes them
    with the row words ogT): rankT (p, n) each row's position in each feature's order, XT = X transposed, rh
    (2, n) the rows' hash words (:func:`.movecache.row_hashes`)."""
    rankT: np.ndarray
    XT: np.ndarray
    rh: np.ndarray


class RestartOutput(NamedTuple):
    """Where restart r writes its tree (NT[r], FE[r], TH[r], and CO[r] when CO has p columns), its raw objective
    OB[r], and then done[r] = 1 (:func:`.restarts.run_restarts`)."""
    NT: np.ndarray
    FE: np.ndarray
    TH: np.ndarray
    CO: np.ndarray
    OB: np.ndarray
    done: np.ndarray


def problem(prob) -> Problem:
    """The kernels' :class:`Problem` of a :class:`opttrees.heuristics.core.Problem`."""
    return Problem(prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, prob.Z, prob.featok)


def settings(T, kind, D, nmin, pen, tol, start_kind=None, hyper=False, H=0, mtry=0, max_moves=2**62,
             random_frac=0.0) -> Settings:
    """:class:`Settings` with every field of its one type (start_kind defaults to kind)."""
    return Settings(int(T), int(kind), int(kind if start_kind is None else start_kind), int(D), int(nmin),
                    float(pen), bool(hyper), int(H), float(tol), int(mtry), int(max_moves), float(random_frac))


def restart_output(R: int, T: int, p: int) -> RestartOutput:
    """Empty outputs for R restarts on heap size T (p: coefficients kept for hyperplane trees, else 0)."""
    return RestartOutput(np.zeros((R, T), np.int8), np.zeros((R, T), np.int64), np.zeros((R, T)),
                         np.zeros((R, T, p)), np.zeros(R), np.zeros(R, np.int64))
