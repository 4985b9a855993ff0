"""The solver adapter contract and the registry that :func:`opttrees.solvers.solve` finds back-ends in.

An adapter turns a :class:`~opttrees.solvers.compile.CompiledModel` into a settled
:class:`~opttrees.solvers.result.SolveResult` plus the returned point (a vector over the compiled columns, or
None). Everything before (compiling, the warm-start vector, the external bound row) and after (loading the point
into Pyomo, the bound proof) is the same for every back-end and lives in :mod:`opttrees.solvers.api`; what the
back-ends share below that (feasibility of a point, violated cuts) is :mod:`opttrees.solvers.checks`.

Adding a back-end: a module with a class satisfying :class:`SolverAdapter`, and one :func:`register_adapter` call;
``solve(..., solver=name)`` then uses it. The estimators' and spec's ``solver`` rule
(:data:`opttrees.params.SOLVER_NAME`) names the built-in back-ends only.
"""
from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Protocol

from ..errors import SolverError

if TYPE_CHECKING:
    import numpy as np

    from .compile import CompiledModel
    from .options import SolveOptions
    from .result import SolveResult


class SolverAdapter(Protocol):
    """One MIO back-end. ``package`` is the Python package it needs (checked before anything is compiled)."""

    name: str
    package: str

    def version(self) -> str:
        """Name and version of the back-end, recorded in every result."""
        ...

    def solve(self, cm: CompiledModel, opts: SolveOptions, x0: np.ndarray | None = None, separator=None,
              repair=None) -> tuple[SolveResult, np.ndarray | None]:
        """Solve ``cm`` within ``opts`` (deadline, gap, threads, seed, callbacks, progress), starting from ``x0``
        (NaN where unset) when given; lazy cuts from ``separator``, incumbents mended by ``repair``."""
        ...


_ADAPTERS: dict[str, SolverAdapter] = {}


def register_adapter(adapter: SolverAdapter) -> SolverAdapter:
    """Make ``solve(..., solver=adapter.name)`` use ``adapter``."""
    _ADAPTERS[adapter.name] = adapter
    return adapter


def adapter_names() -> tuple[str, ...]:
    """Every registered back-end, installed or not."""
    return tuple(_ADAPTERS)


def installed(name: str) -> bool:
    """Whether the Python package of back-end ``name`` is importable here."""
    return importlib.util.find_spec(_ADAPTERS[name].package) is not None


def get_adapter(name: str) -> SolverAdapter:
    """The adapter registered as ``name`` (exact, lower-case; :func:`opttrees.solvers.check_solver` normalises)."""
    try:
        return _ADAPTERS[name]
    except KeyError:
        raise SolverError(f"unknown solver {name!r}; choose one of {list(_ADAPTERS)}") from None


def _register_builtin() -> None:
    from .highs import HighsAdapter
    from .scip import ScipAdapter
    register_adapter(HighsAdapter())
    register_adapter(ScipAdapter())


_register_builtin()
