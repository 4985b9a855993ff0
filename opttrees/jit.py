"""Numba compile notices: a cached kernel's first call in a fresh installation compiles it, which takes long.

Why: the local-search kernels take about a minute to compile on 2 cores (146 s measured on a loaded machine;
later processes load them from numba's on-disk cache in about 1 s). A first run that sits silent for a minute
looks hung, so the first cold call says what is happening, once per process.
"""
from __future__ import annotations

import logging
import os

log = logging.getLogger("opttrees")

_announced: set[str] = set()


def is_cold(dispatcher) -> bool:
    """No compiled signature in this process and no cache index on disk: the next call compiles."""
    if getattr(dispatcher, "signatures", None):
        return False
    try:
        return not os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:   # not a cached dispatcher (or numba's internals moved): assume it compiles
        return True


def announce_compile(what: str, dispatcher, estimate: str) -> bool:
    """Log once per process that ``what`` is compiling (when it is cold); True when a notice was given."""
    if what in _announced or not is_cold(dispatcher):
        return False
    _announced.add(what)
    log.warning("compiling the %s kernels with numba (once per installation, %s; later runs load them from "
                "numba's cache in about a second)", what, estimate)
    return True
