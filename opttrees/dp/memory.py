"""How much memory the dynamic program may take, what it will take, and a watch that stops it at the cap.

Why: on a 14,318 x 8 continuous set the DP's caches grew to 23.5 GB until the kernel killed the process. The
cap (``memory_limit``) is half of the machine's physical memory by default. Before a run the fixed part (the
depth-two solver's frequency counts and the row/column arrays) is estimated and a run over the cap is refused
with an error saying what to lower; during a run the caches grow with the search, so the process's resident
memory is read at every poll (every 20 ms) and the search stops at the cap with its best tree and a valid
lower bound, like a time limit.
"""
from __future__ import annotations

import os

from ..errors import InputError

#: default cap: this share of the machine's physical memory
DEFAULT_SHARE = 0.5


def physical_memory() -> int:
    """Bytes of physical memory (0 when the system does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):   # pragma: no cover - not POSIX
        return 0


def default_limit() -> int:
    """:data:`DEFAULT_SHARE` of physical memory (8 GB when unknown)."""
    total = physical_memory()
    return int(DEFAULT_SHARE * total) if total else 8 * 1024 ** 3


def check_limit(memory_limit) -> int:
    """``memory_limit`` in bytes: None for the default, a number of bytes, or a string such as "4GB"/"500MB"."""
    if memory_limit is None:
        return default_limit()
    if isinstance(memory_limit, str):
        text = memory_limit.strip().upper().replace(" ", "")
        for unit, factor in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024), ("B", 1)):
            if text.endswith(unit):
                try:
                    value = float(text[: -len(unit)]) * factor
                except ValueError:
                    break
                if value > 0:
                    return int(value)
                break
        raise InputError(f"memory_limit={memory_limit!r} is not valid: expected bytes (a number) or a size like "
                         "'4GB' or '500MB'")
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float)) or not memory_limit > 0:
        raise InputError(f"memory_limit={memory_limit!r} is not valid: expected bytes > 0 or a size like '4GB'")
    return int(memory_limit)


def resident_bytes() -> int:
    """This process's resident memory now (Linux /proc; 0 where unavailable, which disables the watch)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):   # pragma: no cover - not Linux
        return 0


def counts_bytes(m: int, n_stats: int) -> int:
    """The depth-two solver's frequency counts for m binary columns: 2 m^2 ``n_stats`` doubles."""
    return 2 * max(m, 1) ** 2 * n_stats * 8


def estimate_bytes(n: int, m: int, n_stats: int, depth: int, depth_two: bool = True) -> int:
    """The fixed memory of one DP run on n rows and m binary columns with ``n_stats`` statistics per row:
    the depth-two frequency counts (:func:`counts_bytes`) and the row/column arrays (about 20 bytes per cell).
    The caches come on top and are watched during the run."""
    counts = counts_bytes(m, n_stats) if depth_two and depth >= 2 else 0
    return int(counts + 20 * n * max(m, 1) + 64 * n * (depth + 2))


def fmt_bytes(b: float) -> str:
    return f"{b / 1024 ** 3:.1f} GB" if b >= 1024 ** 3 else f"{b / 1024 ** 2:.0f} MB"


def check_estimate(n: int, m: int, n_stats: int, depth: int, limit: int, depth_two: bool = True) -> None:
    """InputError naming what to lower when the fixed memory of a run exceeds ``limit`` bytes."""
    need = estimate_bytes(n, m, n_stats, depth, depth_two) + resident_bytes()
    if need > limit:
        raise InputError(f"the dynamic program would need about {fmt_bytes(need)} for {m} binary columns on {n} rows, "
                         f"over memory_limit={fmt_bytes(limit)}: use fewer thresholds (binarization='quantile', "
                         "n_thresholds), a smaller max_depth, or raise memory_limit")
