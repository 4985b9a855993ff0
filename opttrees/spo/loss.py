"""SPO loss (regret) and its normalised form, with sample weights.

``spo_loss(problem, Chat, C)`` is ℓ_SPO(ĉ, c) = max_{w in W*(ĉ)} c·w − z*(c) for minimisation
(the paper's eq. 2, worst case over ties), and the lost value for maximisation, so it is always >= 0.
Normalised extra cost (the paper's "normalised extra travel time") = Σ ω ℓ / Σ ω |z*(c)|: the first term of
the SPOT training objective (:mod:`opttrees.spo.objective`), which shares its denominator :func:`spot_norm`.
"""
from __future__ import annotations

import numpy as np

from ..data.prepared import check_sample_weight
from ..errors import InputError
from .objective import spot_norm


def decision_regret(problem, W, C, z=None) -> np.ndarray:
    """Per-row regret of fixed decisions W under true costs C (>= 0 up to round-off)."""
    C = problem.check_costs(C)
    W = np.asarray(W, float)
    if W.shape != C.shape:
        raise InputError(f"decisions have shape {W.shape}, costs {C.shape}: they must match")
    if z is None:
        _, z = problem.solve(C)
    s = problem.sign
    return s * (np.einsum("ij,ij->i", C, W) - z)


def spo_loss(problem, Chat, C, worst_case: bool = True) -> np.ndarray:
    """Per-row SPO loss of predicted costs Chat against true costs C (worst-case tie rule by default)."""
    Chat = problem.check_costs(Chat, "Chat")
    C = problem.check_costs(C)
    if Chat.shape != C.shape:
        raise InputError(f"Chat has shape {Chat.shape} but C has {C.shape}")
    W = problem.worst_case_decisions(Chat, C) if worst_case else problem.solve(Chat)[0]
    return decision_regret(problem, W, C)


def normalized_extra_cost(problem, W, C, sample_weight=None) -> float:
    """Σ ω (regret of decisions W) / Σ ω |z*(c)|: the paper's normalised extra travel time."""
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    _, z = problem.solve(C)
    reg = decision_regret(problem, W, C, z)
    return float(np.sum(w * reg) / spot_norm(problem, C, w, z=z, on_zero="raise"))


def normalized_spo_loss(problem, Chat, C, sample_weight=None, worst_case: bool = True) -> float:
    """Σ ω ℓ_SPO(ĉ, c) / Σ ω |z*(c)| for predicted cost vectors."""
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    _, z = problem.solve(C)
    den = spot_norm(problem, C, w, z=z, on_zero="raise")
    return float(np.sum(w * spo_loss(problem, Chat, C, worst_case)) / den)
