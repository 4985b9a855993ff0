"""The DecisionProblem protocol: the optimisation oracle w*(c) that SPO trees are trained against.

Why a batch API: greedy SPOT evaluates hundreds of candidate leaf means per node, and forests evaluate
thousands of test rows; one call over an (n, d) cost matrix lets fast problems (grid DP, vertex
enumeration) vectorise, and slow ones (a generic LP) at least reuse one persistent solver.

Sense convention: costs are given in the problem's own units. ``sense = "min"`` means min c·w over S,
``"max"`` means max c·w (e.g. click probabilities). Everything downstream works with *regret*
(>= 0) through :meth:`DecisionProblem.sign`, so maximisation is never handled by ad-hoc negation.
"""
from __future__ import annotations

import numpy as np

from ..data.prepared import owned
from ..errors import InputError


class DecisionProblem:
    """Base class / protocol. Subclasses set ``n_decisions`` and ``sense`` and implement ``_solve_min``.

    ``_solve_min(C)`` must return ``(W, z)`` with ``W[i]`` minimising ``C[i]·w`` over S and ``z[i]`` the
    minimum; :meth:`solve` maps maximisation onto it.
    """

    n_decisions: int = 0
    sense: str = "min"

    # ------------------------------------------------------------------ public
    @property
    def sign(self) -> float:
        """+1 for minimisation, -1 for maximisation: ``sign * c`` is a cost to minimise."""
        return 1.0 if self.sense == "min" else -1.0

    def check_costs(self, C, name: str = "C") -> np.ndarray:
        if C is None:
            raise InputError(f"cost matrix {name} is None; expected an (n, {self.n_decisions}) array of numbers")
        try:
            C = np.asarray(C, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"cost matrix {name} contains non-numeric values (e.g. text) or is ragged; expected an "
                             f"(n, {self.n_decisions}) array of numbers") from None
        if C.ndim == 1:
            C = C.reshape(1, -1)
        if C.ndim != 2 or C.shape[1] != self.n_decisions:
            raise InputError(f"{name} must have shape (n, {self.n_decisions}) for this decision problem; "
                             f"got {C.shape}")
        if not np.isfinite(C).all():
            raise InputError(f"{name} contains NaN/infinite costs")
        return owned(C)

    def solve(self, C) -> tuple[np.ndarray, np.ndarray]:
        """Optimal decisions ``W`` (n, d) and optimal values ``z`` (n,) for every cost row, in the problem's sense."""
        C = self.check_costs(C)
        s = self.sign
        W, z = self._solve_min(s * C)
        return W, s * z

    def worst_case_decisions(self, Chat, C, tol: float = 1e-9) -> np.ndarray:
        """For each row: the decision in W*(Chat[i]) that is worst under the true cost C[i] (the SPO tie rule).

        Default: solve the lexicographic problem min (ĉ - δ c)·w with a tiny δ, and keep the result only
        if it is still optimal for ĉ (else fall back to the plain decision). Subclasses may do this exactly.
        """
        Chat = self.check_costs(Chat, "Chat")
        C = self.check_costs(C)
        s = self.sign
        W0, z0 = self._solve_min(s * Chat)
        scale = np.maximum(np.abs(Chat).max(axis=1, keepdims=True), 1e-12) / np.maximum(
            np.abs(C).max(axis=1, keepdims=True), 1e-12)
        W1, _ = self._solve_min(s * (Chat - 1e-7 * scale * C))
        still_opt = (s * np.einsum("ij,ij->i", Chat, W1)) <= z0 + tol * np.maximum(1.0, np.abs(z0))
        return np.where(still_opt[:, None], W1, W0)

    def add_to_block(self, block):
        """Add S and the decision variables to a Pyomo block; return the d decision VarData in cost order."""
        raise NotImplementedError(f"{type(self).__name__} cannot build its feasible region in Pyomo")

    def cost_bounds(self, C) -> tuple[np.ndarray, np.ndarray]:
        """Per row: (min, max) of ``sign*C[i]·w`` over S — the big-M data of the SPOT MILP."""
        C = self.check_costs(C)
        s = self.sign
        _, lo = self._solve_min(s * C)
        _, nhi = self._solve_min(-s * C)
        return lo, -nhi

    # ------------------------------------------------------------------ to implement
    def _solve_min(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(d={self.n_decisions}, sense={self.sense!r})"
