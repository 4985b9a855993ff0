"""The built-in back-ends' adapter class, :class:`ModuleAdapter`.

Why a module of its own: :mod:`opttrees.solvers.adapter` imports the back-ends to register them, so they take
their base class from here, without an import cycle."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import numpy as np

    from .compile import CompiledModel
    from .options import SolveOptions
    from .result import SolveResult


class ModuleAdapter:
    """A :class:`~opttrees.solvers.adapter.SolverAdapter` made of its module's two functions, ``version_fn()``
    and ``solve_fn(cm, opts, x0=, separator=, repair=)``: what the built-in back-ends are, so the methods are
    written once."""

    name: str
    package: str
    version_fn: Callable[[], str]
    solve_fn: Callable[..., tuple[SolveResult, np.ndarray | None]]

    def version(self) -> str:
        return self.version_fn()

    def solve(self, cm: CompiledModel, opts: SolveOptions, x0: np.ndarray | None = None, separator=None,
              repair=None) -> tuple[SolveResult, np.ndarray | None]:
        return self.solve_fn(cm, opts, x0=x0, separator=separator, repair=repair)
