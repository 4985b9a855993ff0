"""The SPOT MILP (SPOT paper Theorem 2) on the Bertsimas–Dunn tree structure shared with OCT.

    min  [ Σ_i ω_i Σ_t y_it − Σ_i ω_i z*(c_i) ] / N  +  alpha · Σ_m d_m ,        N = Σ_i ω_i |z*(c_i)|
    s.t. y_it >= c_i·w_t − M1_i (1 − z_it)      (y = realised cost of i's leaf decision, 0 elsewhere)
         y_it >= −M2_i z_it
         Σ_t y_it >= z*(c_i)                    (valid inequality (7l): LP bound >= 0)
         w_t in S for every leaf t              (a copy of the decision problem's Pyomo block per leaf)
         (a, b, d, z, l) a depth-D Bertsimas–Dunn tree; Σ_i ω_i z_it >= N_min l_t (weighted min leaf)

At any integer point the objective is the SPOT objective of :mod:`opttrees.spo.objective` — training
**normalised** SPO loss + alpha · splits — the function greedy pruning (:func:`opttrees.spo.prune_alpha`)
minimises too; :meth:`SPOTFormulation.tree_objective` evaluates it with
:func:`opttrees.spo.spot_objective` and ``verify`` checks the solver's value against it. ``alpha`` is thus
on the normalised scale: a split must lower the training regret by ``alpha · N``. The reference code's
pooling parameter α_p (``Σy − Σz* + α_p·n·Σd``, mean-regret units, 1e-4 for shortest path) is
``alpha · N / Σω``; see :func:`opttrees.spo.alpha_from_paper`.

Costs are in min-cost form (sign·c, so maximisation problems work unchanged). Per-row big-Ms come from the
oracle: M1_i = max(0, max_S c_i·w), M2_i = max(0, −min_S c_i·w). w is continuous when S has an integral LP
description (shortest path); otherwise S's own integer variables carry over.

The greedy tree is a complete warm start: a, b, d, z, l from the structure, w_t = the greedy leaf decision,
y from the first row. The solve is a time-limited solution improver; :func:`fit_spot_mio` returns the
greedy tree whenever the MILP does not beat it.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..data import prepare
from ..errors import InputError, VerificationError
from ..spo.greedy import check_costs_fit, grow_spo_tree
from ..spo.objective import spot_norm, spot_objective
from ..spo.pruning import prune_alpha, refit_nodes
from ..tree import Tree
from .base import VERIFY_ATOL, VERIFY_RTOL, Formulation
from .structure import BDStructure


class SPOTFormulation(Formulation):
    def __init__(self, problem, X, C, sample_weight=None, max_depth: int = 2, min_samples_leaf: float = 1,
                 alpha: float = 1e-4, valid_inequality: bool = True, feature_names=None, routing: str = "thesis"):
        if not alpha >= 0:
            raise InputError(f"alpha must be >= 0; got {alpha!r}")
        X, C, w = check_costs_fit(problem, X, C, sample_weight)
        self.problem = problem
        self.C = C
        self.Cm = problem.sign * C
        self.w = w
        self.alpha = float(alpha)
        self.min_samples_leaf = float(min_samples_leaf)
        self.feature_names = feature_names
        self.data = prepare(X, task="none", sample_weight=w)
        self.structure = BDStructure(self.data, max_depth, min_samples_leaf=1, routing=routing)
        lo, hi = problem.cost_bounds(C)          # min / max of sign*c_i·w over S
        self.zstar = lo
        self.M1 = np.maximum(hi, 0.0)
        self.M2 = np.maximum(-lo, 0.0)
        self.norm = spot_norm(problem, C, w, z=lo)   # N of the SPOT objective
        self._build(valid_inequality)

    # ------------------------------------------------------------------ model
    def _build(self, valid_inequality):
        st, n, d = self.structure, self.data.n, self.problem.n_decisions
        TL = st.leaves
        m = pyo.ConcreteModel(name="SPOT")
        m.tree = pyo.Block()
        st.build(m.tree)
        # weighted minimum leaf size replaces the structure's unit-count row
        m.tree.min_leaf.deactivate()
        wl = self.w.tolist()
        m.min_leaf_weight = pyo.Constraint(TL, rule=lambda mm, t: LinearExpression(
            constant=0.0, linear_coefs=wl + [-self.min_samples_leaf],
            linear_vars=[mm.tree.z[i, t] for i in range(n)] + [mm.tree.l[t]]) >= 0)
        m.leaf = pyo.Block(TL)
        self.dec = {}
        for t in TL:
            vars_ = list(self.problem.add_to_block(m.leaf[t]))
            if len(vars_) != d:
                raise InputError(f"decision problem add_to_block returned {len(vars_)} variables, expected {d}")
            self.dec[t] = vars_
        m.y = pyo.Var(range(n), TL)
        for i in range(n):
            for t in TL:
                m.y[i, t].setlb(-float(self.M2[i]))
        Cl = self.Cm.tolist()
        M1 = self.M1.tolist()
        M2 = self.M2.tolist()
        m.cost_link = pyo.Constraint(range(n), TL, rule=lambda mm, i, t: LinearExpression(
            constant=0.0, linear_coefs=Cl[i] + [-1.0, M1[i]],
            linear_vars=self.dec[t] + [mm.y[i, t], mm.tree.z[i, t]]) <= M1[i])
        m.cost_floor = pyo.Constraint(range(n), TL, rule=lambda mm, i, t: LinearExpression(
            constant=0.0, linear_coefs=[1.0, M2[i]], linear_vars=[mm.y[i, t], mm.tree.z[i, t]]) >= 0.0)
        if valid_inequality:
            zs = self.zstar.tolist()
            m.regret_nonneg = pyo.Constraint(range(n), rule=lambda mm, i: sum(mm.y[i, t] for t in TL) >= zs[i])
        wn = (self.w / self.norm).tolist()
        const = -float(self.w @ self.zstar) / self.norm
        m.objective = pyo.Objective(expr=LinearExpression(
            constant=const, linear_coefs=[wn[i] for i in range(n) for t in TL] + [self.alpha] * len(st.branch),
            linear_vars=[m.y[i, t] for i in range(n) for t in TL] + [m.tree.d[t] for t in st.branch]),
            sense=pyo.minimize)
        self.model = m

    # ------------------------------------------------------------------ objective helpers
    def tree_objective(self, tree: Tree, decisions=None) -> float:
        """SPOT objective of ``tree`` on this model's training data: normalised SPO loss + alpha·splits.

        Uses the tree's leaf decisions, or ``decisions[node]``; the same function as
        :func:`opttrees.spo.spot_objective` (it *is* that function, with this model's N and z*).
        """
        return spot_objective(self.problem, tree, self.data.X, self.C, self.w, alpha=self.alpha,
                              decisions=decisions, norm=self.norm, z=self.zstar)

    # ------------------------------------------------------------------ warm start
    def warm_start(self, tree: Tree) -> None:
        """Set every variable from a greedy (or any) SPO tree of depth <= max_depth."""
        m, st = self.model, self.structure
        tree = refit_nodes(tree, self.problem, self.data.X, self.C, self.w)
        ntree, heap_leaf, tree_leaf_of_heap = st.set_from_tree(m.tree, tree)
        fallback = ntree.extras["decision"][0]
        Wt = {}
        for t in st.leaves:
            node = tree_leaf_of_heap.get(t)
            Wt[t] = ntree.extras["decision"][node] if node is not None else fallback
            for v, val in zip(self.dec[t], Wt[t]):
                v.set_value(_clip_to_bounds(v, float(val)))
        for i in range(self.data.n):
            for t in st.leaves:
                y = m.y[i, t]
                y.set_value(_clip_to_bounds(y, float(self.Cm[i] @ Wt[t]) if heap_leaf[i] == t else 0.0))
        # a problem block may carry auxiliary variables we cannot infer; the solver completes the start
        self.start_objective = self.tree_objective(ntree)

    # ------------------------------------------------------------------ decoding
    def _decode_raw(self):
        st = self.structure
        splits, heap_leaf = st.decode(self.model.tree)
        cl, cr, feat, thr, heap = st.skeleton(splits)
        nn = len(cl)
        Wsol = np.zeros((nn, self.problem.n_decisions))
        for k in range(nn):
            if heap[k] >= 0:
                Wsol[k] = [pyo.value(v) for v in self.dec[heap[k]]]
        skel = Tree(cl, cr, feat, thr, np.zeros((nn, self.problem.n_decisions)), task="spo",
                    feature_names=self.feature_names, n_features=self.data.p,
                    extras={"decision": Wsol, "heap_leaf": np.array(heap)})
        return skel, heap_leaf, Wsol

    def _decode(self) -> Tree:
        skel, _, _ = self._decode_raw()
        return refit_nodes(skel, self.problem, self.data.X, self.C, self.w)

    def verify(self, tree: Tree | None = None) -> None:
        """Routing the training data reproduces the MILP's leaf assignment and objective (with its own w)."""
        skel, heap_leaf, Wsol = self._decode_raw()
        routed = skel.extras["heap_leaf"][skel.apply(self.data.X)]
        bad = np.nonzero(routed != heap_leaf)[0]
        if len(bad):
            raise VerificationError(f"SPOT MILP: {len(bad)} training points are routed to a different leaf than the "
                                    f"solver assigned (first: row {bad[0]}); this is a formulation bug")
        solver_obj = self.model_objective()
        recomputed = self.tree_objective(skel, decisions=Wsol)
        if abs(solver_obj - recomputed) > VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            raise VerificationError(f"SPOT MILP: re-routed objective {recomputed:.9g} differs from the solver's "
                                    f"{solver_obj:.9g}; this is a formulation bug — please report it")
        if tree is not None and self.tree_objective(tree) > solver_obj + VERIFY_ATOL + VERIFY_RTOL * abs(solver_obj):
            raise VerificationError("SPOT MILP: refitted leaf decisions are worse than the solver's")

    def extract(self, verify: bool = True) -> Tree:
        tree = self._decode()
        if verify:
            self.verify(tree)
        return tree


def round_features(X, decimals: int | None) -> np.ndarray:
    """Round features on the [0, 1] training scale (returned in original units).

    Why: the MILP's strict-inequality rows need a per-feature gap epsilon well above solver tolerances; the
    paper's code rounds x in [0, 1] to 2-3 decimals for the same reason.
    """
    if decimals is None:
        return X
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.round((X - lo) / span, int(decimals)) * span + lo


def fit_spot_mio(problem, X, C, w=None, depth: int = 2, min_samples_leaf: float = 1, alpha: float = 1e-4,
                 solver: str = "highs", time_limit: float | None = 60.0, mip_gap: float = 1e-6,
                 quantile_step: float | None = 0.01, x_precision: int | None = 3, verbose=False,
                 feature_names=None, warm_start=True):
    """Greedy SPOT, then the SPOT MILP warm-started from it; returns (tree, info). Never worse than greedy.

    Every candidate is compared on the SPOT objective F = training normalised SPO loss + alpha · splits
    (:func:`opttrees.spo.spot_objective`; ``alpha`` on the normalised scale, see the module docstring): the
    greedy tree is pruned at ``alpha`` (:func:`opttrees.spo.prune_alpha`), so greedy and MILP minimise the
    same function. The MILP sees features rounded to ``x_precision`` decimals on the [0, 1] scale (None: exact
    values). The returned tree is whichever of {greedy on the raw data, greedy on the rounded data, MILP} has
    the lowest F on the *raw* training data, with leaves refitted on it. ``info`` holds the greedy tree, the
    SolveResult, the objectives, ``norm`` (N = Σ ω |z*|) and ``source`` ("mio" or "greedy").
    """
    import warnings

    from ..solvers import solve
    X, C, w = check_costs_fit(problem, X, C, w)
    Xr = round_features(X, x_precision)
    Cm = problem.sign * C
    _, z = problem._solve_min(Cm)
    norm = spot_norm(problem, C, w, z=z)

    def greedy_on(Xg):
        return prune_alpha(grow_spo_tree(problem, Xg, C, w, max_depth=depth, min_samples_leaf=min_samples_leaf,
                                         quantile_step=quantile_step, feature_names=feature_names), alpha, norm)
    greedy = greedy_on(X)
    greedy_r = greedy if x_precision is None else greedy_on(Xr)
    form = SPOTFormulation(problem, Xr, C, w, max_depth=depth, min_samples_leaf=min_samples_leaf, alpha=alpha,
                           feature_names=feature_names)
    res = solve(form, solver=solver, time_limit=time_limit, mip_gap=mip_gap,
                warm_start=greedy_r if warm_start else None, verbose=verbose)

    def raw_objective(tree):
        tree = refit_nodes(tree, problem, X, C, w)
        return spot_objective(problem, tree, X, C, w, alpha=alpha, norm=norm, z=z), tree
    g_obj, greedy = raw_objective(greedy)
    gr_obj, greedy_r_raw = raw_objective(greedy_r)
    info = {"greedy_tree": greedy, "result": res, "greedy_objective": g_obj, "formulation": form, "norm": norm,
            "greedy_objective_rounded": form.tree_objective(refit_nodes(greedy_r, problem, Xr, C, w))}
    cands = [(g_obj, "greedy", greedy), (gr_obj, "greedy", greedy_r_raw)]
    if res.has_solution:
        try:
            mio = prune_alpha(form.extract(), alpha, norm)
            info["mio_objective_rounded"] = form.tree_objective(mio)
            m_obj, mio = raw_objective(mio)
            info["mio_objective"] = m_obj
            cands.append((m_obj, "mio", mio))
        except VerificationError as exc:
            warnings.warn(f"{exc}; keeping the greedy tree", stacklevel=2)
            info["verification_error"] = str(exc)
    obj, source, tree = min(cands, key=lambda c: (c[0] - (1e-12 if c[1] == "mio" else 0.0)))
    info["source"], info["objective"] = source, obj
    return tree, info


def _clip_to_bounds(var, value: float) -> float:
    """Round-off can put a start value a hair outside its big-M bound; Pyomo would warn and solvers reject it."""
    if var.lb is not None and value < var.lb:
        return float(var.lb)
    if var.ub is not None and value > var.ub:
        return float(var.ub)
    return value
