"""Numba compile notices: a cached kernel's first call in a fresh installation compiles it, which takes long.

Why: the local-search kernels take about a minute to compile on 2 cores (146 s measured on a loaded machine;
later processes load them from numba's on-disk cache in about 1 s). A first run that sits silent for a minute
looks hung, so the first cold call says what is happening, once per process.
"""
from __future__ import annotations

import inspect
import logging
import os

log = logging.getLogger("opttrees")

_announced: set[str] = set()


def is_cold(dispatcher, arg: str | None = None, dtype: str | None = None) -> bool:
    """No compiled signature in this process and none in the cache on disk: the next call compiles.

    With ``arg`` and ``dtype``, only signatures whose argument ``arg`` is an array of ``dtype`` count: a kernel
    compiled for one array type compiles again for another (the local search's 32- and 64-bit order words).
    """
    def fits(sig) -> bool:
        if arg is None:
            return True
        i = list(inspect.signature(dispatcher.py_func).parameters).index(arg)
        return str(sig[i]).startswith(f"array({dtype},")

    try:
        if any(fits(sig) for sig in getattr(dispatcher, "signatures", None) or ()):
            return False
        if arg is None:
            return not os.path.exists(dispatcher._cache._cache_file._index_path)
        return not any(fits(key[0]) for key in dispatcher._cache._cache_file._load_index())
    except Exception:   # not a cached dispatcher (or numba's internals moved): assume it compiles
        return True


def announce_compile(what: str, dispatcher, estimate: str, arg: str | None = None, dtype: str | None = None) -> bool:
    """Log once per process that ``what`` is compiling (when it is cold, see :func:`is_cold`); True when a
    notice was given."""
    key = what if arg is None else f"{what} ({arg}: {dtype})"
    if key in _announced or not is_cold(dispatcher, arg, dtype):
        return False
    _announced.add(key)
    log.warning("compiling the %s kernels with numba (once per installation, %s; later runs load them from "
                "numba's cache in about a second)", what, estimate)
    return True
