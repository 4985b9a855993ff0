"""SPO, OPT and policy-tree DP times (best of 3) and objectives, to compare two checkouts of the shared recursion.

Why: issue 29 replaced the SPO and prescriptive DPs' own recursions by ``opttrees.dp.recursion``; the trees must
not change and the time must not grow. Run it once per checkout, e.g. against a ``git worktree`` of the commit
before a change::

    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_dp_recursion.py
    python benchmarks/bench_dp_recursion.py
"""
import time
import numpy as np
from opttrees.dp.spo import solve_dp_spo
from opttrees.dp.prescriptive import solve_dp_prescriptive
from opttrees.oracles import GridShortestPath
from opttrees.prescriptive.data import prepare_prescriptive
from opttrees.prescriptive.objective import KIND_OPT, KIND_POLICY, make_problem

rng = np.random.default_rng(0)
prob = GridShortestPath(3, 3)
X = rng.normal(size=(400, 5))
B = rng.normal(size=(5, prob.n_decisions))
C = np.exp(X @ B / 3) + rng.random((400, prob.n_decisions))
Xp = np.round(rng.normal(size=(1000, 5)), 2)
t = rng.integers(0, 3, 1000)
y = Xp[:, 0] * (t == 1) - Xp[:, 1] * (t == 2) + rng.normal(0, 0.5, 1000)
pp = make_problem(prepare_prescriptive(Xp, t, y), KIND_OPT, mu=0.5, n_treatment=5)
gamma = rng.normal(size=(1000, 3))
pol = make_problem(prepare_prescriptive(Xp, t, y), KIND_POLICY, mu=1.0, n_treatment=1, gamma=gamma)
cases = {
    "spo d2 (400 rows, 3x3 grid)": lambda: solve_dp_spo(X, C, prob, max_depth=2),
    "spo d3": lambda: solve_dp_spo(X, C, prob, max_depth=3, n_thresholds=6),
    "opt d3 (1000 rows)": lambda: solve_dp_prescriptive(pp, max_depth=3),
    "policy d3 (1000 rows)": lambda: solve_dp_prescriptive(pol, max_depth=3),
}
for name, f in cases.items():
    ts, obj = [], None
    for _ in range(3):
        t0 = time.perf_counter(); _, res = f(); ts.append(time.perf_counter() - t0); obj = res.objective
    print(f"{name:32s} {min(ts):7.3f} s  objective {obj:.9f}  {res.status}")
