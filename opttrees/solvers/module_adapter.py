"""The built-in back-ends' adapter class, :class:`ModuleAdapter`.

Why a module of its own: :mod:`opttrees.solvers.adapter` imports the back-ends to register them, so they take
their base class from here, without an import cycle."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .compile import CompiledModel
    from .options import SolveOptions
    from .result import SolveResult


class ModuleAdapter:
    """A :class:`~opttrees.solvers.adapter.SolverAdapter` made of two functions of the back-end's module
    ``module``: ``version()`` and the one named ``solve_function`` (``(cm, opts, x0=, separator=, repair=)``):
    what the built-in back-ends are, so the methods are written once. The functions are looked up at each call,
    as a method calling them would, so a patched module function is the one used."""

    name: str
    package: str
    module: str
    solve_function: str
    #: whether the solve function takes ``repair`` (HiGHS's cut loop mends its incumbents; SCIP's lazy
    #: constraints reject infeasible ones instead)
    takes_repair: bool = True

    def version(self) -> str:
        return importlib.import_module(self.module).version()

    def solve(self, cm: CompiledModel, opts: SolveOptions, x0: np.ndarray | None = None, separator=None,
              repair=None) -> tuple[SolveResult, np.ndarray | None]:
        solve = getattr(importlib.import_module(self.module), self.solve_function)
        if not self.takes_repair:
            return solve(cm, opts, x0=x0, separator=separator)
        return solve(cm, opts, x0=x0, separator=separator, repair=repair)
