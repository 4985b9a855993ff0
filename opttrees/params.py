"""Checks of the hyper-parameters every method shares, so each error reads the same everywhere."""
from __future__ import annotations

import numpy as np

from .errors import InputError


def check_depth(max_depth, limit: int, why: str = "") -> int:
    """An integer depth in [0, limit]; ``why`` explains the limit in the error message."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 0:
        raise InputError(f"max_depth must be an integer >= 0; got {max_depth!r}")
    if max_depth > limit:
        raise InputError(f"max_depth={max_depth} is above the limit {limit}" + (f": {why}" if why else ""))
    return int(max_depth)


def check_alpha(alpha) -> float:
    """The complexity penalty: a finite number >= 0 (on the normalised objective's scale)."""
    if isinstance(alpha, bool):
        raise InputError(f"alpha must be a finite number >= 0; got {alpha!r}")
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha must be a finite number >= 0; got {alpha!r}") from None
    if not np.isfinite(a) or a < 0:
        raise InputError(f"alpha must be a finite number >= 0; got {alpha!r}")
    return a
