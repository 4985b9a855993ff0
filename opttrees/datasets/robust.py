"""Datasets of the robust-trees paper that are fully determined by their definitions, regenerated offline.

Why regenerate: no network at run time, and each of these UCI sets is the *complete* enumeration of a
small, documented domain, so the data can be rebuilt exactly and checked against the documented counts.

- balance-scale (625 rows): all (LW, LD, RW, RD) in 1..5; class L if LW*LD > RW*RD, R if <, B if equal.
  Documented: 288 L, 49 B, 288 R.
- MONK's problems 1–3 (432 rows each, the full ``monks-k.test`` sets): attributes a1..a6 with
  3, 3, 2, 3, 4, 2 values; target concepts (Thrun et al. 1991)
  M1: a1 == a2 or a5 == 1;  M2: exactly two of a1..a6 equal 1;  M3: (a5 == 3 and a4 == 1) or (a5 != 4 and a2 != 3)
  (the noise-free rule; the 5% noise is only in the training file). Documented positives: 216, 142, 228.
- tic-tac-toe endgame (958 rows): every distinct board that ends a game with x moving first (a win or a
  full board); positive iff x has three in a row. Documented: 626 positive, 332 negative.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError


@dataclass
class RobustDataset:
    """Features as a DataFrame (integer or categorical columns), labels, and what the robust model needs."""

    name: str
    X: pd.DataFrame
    y: np.ndarray
    categorical: list = field(default_factory=list)   # column names holding categories
    bounds: dict = field(default_factory=dict)        # integer column -> (lower, upper) domain bounds

    @property
    def n(self) -> int:
        return len(self.y)

    def class_counts(self) -> dict:
        vals, counts = np.unique(self.y, return_counts=True)
        return {v.item() if hasattr(v, "item") else v: int(c) for v, c in zip(vals, counts)}


#: documented (rows, class counts) used by :func:`check_counts`
DOCUMENTED = {
    "balance-scale": (625, {"B": 49, "L": 288, "R": 288}),
    "monk1": (432, {0: 216, 1: 216}),
    "monk2": (432, {0: 290, 1: 142}),
    "monk3": (432, {0: 204, 1: 228}),
    "tic-tac-toe": (958, {"negative": 332, "positive": 626}),
}


def load_balance_scale() -> RobustDataset:
    grid = np.array(list(itertools.product(range(1, 6), repeat=4)))
    left, right = grid[:, 0] * grid[:, 1], grid[:, 2] * grid[:, 3]
    y = np.where(left > right, "L", np.where(left < right, "R", "B")).astype(object)
    X = pd.DataFrame(grid, columns=["left_weight", "left_distance", "right_weight", "right_distance"])
    return RobustDataset("balance-scale", X, y, [], {c: (1, 5) for c in X.columns})


MONK_VALUES = (3, 3, 2, 3, 4, 2)


def load_monks(problem: int) -> RobustDataset:
    if problem not in (1, 2, 3):
        raise InputError(f"MONK's problem must be 1, 2 or 3; got {problem!r}")
    grid = np.array(list(itertools.product(*[range(1, k + 1) for k in MONK_VALUES])))
    a = [grid[:, j] for j in range(6)]
    if problem == 1:
        y = (a[0] == a[1]) | (a[4] == 1)
    elif problem == 2:
        y = (grid == 1).sum(axis=1) == 2
    else:
        y = ((a[4] == 3) & (a[3] == 1)) | ((a[4] != 4) & (a[1] != 3))
    cols = [f"a{j + 1}" for j in range(6)]
    X = pd.DataFrame(grid, columns=cols)
    return RobustDataset(f"monk{problem}", X, y.astype(np.int64), [], {c: (1, k) for c, k in zip(cols, MONK_VALUES)})


_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _wins(board, p) -> bool:
    return any(board[a] == board[b] == board[c] == p for a, b, c in _LINES)


def _tic_tac_toe_endgames() -> dict:
    """Depth-first play of every game (x first) until a win or a full board; distinct final boards."""
    out = {}

    def play(board, player):
        for sq in range(9):
            if board[sq] != "b":
                continue
            board[sq] = player
            if _wins(board, player) or "b" not in board:
                out[tuple(board)] = _wins(board, "x")
            else:
                play(board, "o" if player == "x" else "x")
            board[sq] = "b"

    play(["b"] * 9, "x")
    return out


def load_tic_tac_toe() -> RobustDataset:
    boards = _tic_tac_toe_endgames()
    keys = sorted(boards)
    names = ["top_left", "top_middle", "top_right", "middle_left", "middle_middle", "middle_right",
             "bottom_left", "bottom_middle", "bottom_right"]
    X = pd.DataFrame(keys, columns=names)
    y = np.array(["positive" if boards[k] else "negative" for k in keys], dtype=object)
    return RobustDataset("tic-tac-toe", X, y, list(names), {})


LOADERS = {
    "balance-scale": load_balance_scale,
    "monk1": lambda: load_monks(1),
    "monk2": lambda: load_monks(2),
    "monk3": lambda: load_monks(3),
    "tic-tac-toe": load_tic_tac_toe,
}


def load(name: str) -> RobustDataset:
    """Load one of :data:`LOADERS` by name and check it against its documented counts."""
    if name not in LOADERS:
        raise InputError(f"unknown robust dataset {name!r}; available: {sorted(LOADERS)}")
    ds = LOADERS[name]()
    check_counts(ds)
    return ds


def check_counts(ds: RobustDataset) -> None:
    """Raise if the regenerated data disagrees with the documented row and class counts."""
    rows, counts = DOCUMENTED[ds.name]
    if ds.n != rows or ds.class_counts() != counts:
        raise InputError(f"{ds.name}: regenerated {ds.n} rows {ds.class_counts()}, documented {rows} {counts}")
