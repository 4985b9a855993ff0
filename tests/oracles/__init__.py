"""Exact references for the tests: brute-force oracles and shared tiny data sets.

Test modules import from here (``from oracles.bruteforce import brute_force_objective``; ``tests/conftest.py``
puts ``tests/`` on ``sys.path``) and never from one another (``tests/test_architecture.py`` checks it).

- ``bruteforce``: parallel-split classification trees (every midpoint), costs on binary columns, constrained
  trees (fairness, feature budgets, monotone leaves), the knapsack decision problem.
- ``binary_trees``: the STreeD reference (misclassification, squared, cost matrix, node limits, feature costs).
- ``flow``: the FlowOCT / BendersOCT objective over trees on binary columns, and their tiny instances.
- ``parallel_trees``: the ORT oracle (absolute / squared loss) and the local search's losses with a minimum leaf.
- ``hyperplane``: OCT-H / ORT-H trees on two features by enumerating lines (with the margin claim).
- ``linear_leaves``: depth <= 1 trees with lasso, LAD-lasso and ORT-L leaves.
- ``spo``: SPO trees (regret over every tree; depth one) and the tiny shortest-path instances.
- ``prescriptive``: prescriptive trees over every parallel-split tree.
- ``robust``: every shift within a budget, the exhaustive worst case, every depth-one tree.
- ``mio_starts``: a formulation's warm start read off its compiled model (feasible? objective?).
- ``cutloop_reference``: a plain-Pyomo solve–separate–resolve loop.
- ``cases``: small data sets shared by several test modules.
- ``exhaustive``: one numpy-only oracle for every exact route at depth <= 3 (every midpoint, min leaf, weights,
  alpha, node limits, 2-4 classes and squared error), with generators of users' awkward data.
- ``exact_routes``: fits each route that can say "optimal" and judges its answer against ``exhaustive``.
"""
