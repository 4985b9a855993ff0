"""The package's cached numba kernel modules: the one list that the Makefile (its warm stamp), ``opttrees warmup``
(what it compiles and checks) and the kernels' cache fingerprints (:func:`opttrees.jit.guard_cache`) read.

No imports: ``python opttrees/kernel_modules.py`` prints the files for ``make`` before anything is installed.
A new module with a cached numba kernel (``njit`` with ``cache=True``) goes into :data:`UNITS` (tests/cli/test_warmup.py checks that
every such module is listed).
"""
from __future__ import annotations

import glob
import os
import sys

#: the package's name ("opttrees"); names below are written relative to it (a whole dotted name in a string counts
#: as an import for tests/test_architecture.py, and this module imports nothing)
_PKG_NAME = __name__.rpartition(".")[0] or "opttrees"


def _full(*modules: str) -> tuple[str, ...]:
    return tuple(f"{_PKG_NAME}.{m}" for m in modules)


_HEURISTICS = _full(*(f"heuristics.kernels.{m}" for m in
                      ("losses", "routing", "scans", "movecache", "orders", "splits", "grow", "search", "restarts")))

#: fingerprint units: (the modules whose numba caches are dropped together, the files besides theirs that their
#: kernels compile in, as globs relative to the package folder). numba's cache checks only the file of the kernel
#: it loads; a unit's cache is dropped when any of its modules' files or of these files changed.
UNITS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (_HEURISTICS, ()),                                                   # they call each other: one unit
    (_full("heuristics.linear_leaves"), ()),
    (_full("dp.engine_base"), ("heuristics/kernels/losses.py",)),
    (_full("dp.depth_two"), ("dp/engine_base.py", "heuristics/kernels/losses.py")),
    (_full("dp.engine"), ("dp/depth_two.py", "dp/engine_base.py", "heuristics/kernels/losses.py")),
    (_full("dp.continuous_kernels"), ("dp/engine_base.py", "heuristics/kernels/losses.py")),
    (_full("constraints.pareto_kernels"), ()),
    (_full("dp.stats_kernels"), ()),
    (_full("prescriptive._kernels"), ("heuristics/kernels/*.py", "dp/stats_kernels.py")),
)

#: every module holding cached numba kernels
KERNEL_MODULES: tuple[str, ...] = tuple(m for mods, _ in UNITS for m in mods)
#: the heuristics' kernel modules (warmup compiles them in one process)
HEURISTICS_KERNELS = _HEURISTICS

_PKG = os.path.dirname(os.path.abspath(__file__))


def module_file(module: str) -> str:
    """The source file of a package module, from its name alone (nothing imported)."""
    return os.path.join(_PKG, *module.split(".")[1:]) + ".py"


def unit_of(module: str) -> tuple[tuple[str, ...], list[str]]:
    """(the modules of ``module``'s unit, the other files their fingerprint covers)."""
    for mods, deps in UNITS:
        if module in mods:
            return mods, sorted({f for d in deps for f in glob.glob(os.path.join(_PKG, d))})
    raise KeyError(f"{module} is not a kernel module listed in opttrees/kernel_modules.py")


def files() -> list[str]:
    """Every file a compiled kernel depends on (the kernel modules, the files compiled into them, and the
    heuristics' kernel structures, and this list), relative to the repository root: what the Makefile's warm stamp watches."""
    found = {module_file(m) for m in KERNEL_MODULES} | set(glob.glob(os.path.join(_PKG, "heuristics/kernels/*.py")))
    found.add(os.path.abspath(__file__))
    for mods, _ in UNITS:
        found.update(unit_of(mods[0])[1])
    root = os.path.dirname(_PKG)
    return sorted(os.path.relpath(f, root) for f in found)


if __name__ == "__main__":   # the Makefile: KERNELS := $(shell $(PY) opttrees/kernel_modules.py)
    sys.stdout.write(" ".join(files()) + "\n")
