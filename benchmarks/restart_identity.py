"""Every restart's objective and tree on 15 local-search configurations, saved or compared with a saved run.

Why: the local-search speed-ups (issue 17) must not change a single decision, so each change is checked by
running the same restarts before and after and comparing every restart's objective and tree exactly. The 15
configurations cover the kernels' paths: two-class misclassification at depths 2, 4 and 6 on breast cancer and
on the 10,000 x 10 synthetic set of ``heuristics_speed.py`` (the integer visits), alpha and min-leaf variants,
sample weights, three classes (iris, wine), squared and absolute loss (diabetes), and hyperplane splits.

Usage:
    python benchmarks/restart_identity.py OUT.json [--base BASE.json] [--rev CHECKOUT]

``--rev`` imports opttrees from another checkout (e.g. a ``git worktree`` of the commit before a change),
``--base`` compares with a saved run and exits with status 1 when any configuration differs. About 5 s warm.
"""
import argparse
import json
import os
import sys


def configurations():
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine

    from heuristics_speed import synthetic
    from opttrees.data.prepared import prepare

    Xb, yb = load_breast_cancer(return_X_y=True)
    Xs, ys = synthetic()
    Xs, ys = Xs[:10000], ys[:10000]
    Xi, yi = load_iris(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xd, yd = load_diabetes(return_X_y=True)
    w = np.random.default_rng(0).integers(1, 4, len(yb)).astype(float)
    bc, syn = prepare(Xb, yb), prepare(Xs, ys)
    diab = prepare(Xd, yd, task="regression")
    return {
        "bc2": (bc, dict(max_depth=2)), "bc4": (bc, dict(max_depth=4)), "bc6": (bc, dict(max_depth=6)),
        "syn2": (syn, dict(max_depth=2, n_restarts=40)), "syn4": (syn, dict(max_depth=4, n_restarts=40)),
        "syn6": (syn, dict(max_depth=6, n_restarts=40)),
        "bc4_alpha": (bc, dict(max_depth=4, alpha=0.01)),
        "bc5_minleaf": (bc, dict(max_depth=5, min_samples_leaf=7)),
        "syn5_minleaf": (syn, dict(max_depth=5, min_samples_leaf=20, n_restarts=30)),
        "bc4_weighted": (prepare(Xb, yb, sample_weight=w), dict(max_depth=4)),
        "iris4": (prepare(Xi, yi), dict(max_depth=4)),
        "wine3": (prepare(Xw, yw), dict(max_depth=3)),
        "diab3_squared": (diab, dict(max_depth=3)),
        "diab3_absolute": (diab, dict(max_depth=3, loss="absolute", n_restarts=30)),
        "bc2_hyperplane": (prepare(Xb[:200], yb[:200]), dict(max_depth=2, split_type="hyperplane", n_restarts=5)),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="JSON file to write this run to")
    ap.add_argument("--base", help="a saved run to compare with")
    ap.add_argument("--rev", help="import opttrees from this checkout instead")
    args = ap.parse_args(argv)
    if args.rev:
        sys.path.insert(0, os.path.abspath(args.rev))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import opttrees
    from opttrees.heuristics import local_search

    print(f"opttrees from {os.path.dirname(opttrees.__file__)}")
    run = {}
    for name, (data, kw) in configurations().items():
        res = local_search(data, **{"n_restarts": 100, "random_state": 0, "return_all": True, **kw})
        run[name] = {"objectives": [float(v) for v in res.objectives],
                     "trees": [json.dumps(t.to_dict(), sort_keys=True) for t in res.trees]}
        c = res.counters
        print(f"{name:16s} best {res.objective:.6f}  visits {c['node_visits']:6d}  hits {c['cache_hits']:5d}  "
              f"moves {c['accepted_moves']:5d}", flush=True)
    with open(args.out, "w") as fh:
        json.dump(run, fh)
    if args.base:
        with open(args.base) as fh:
            base = json.load(fh)
        differ = sorted(k for k in run if run[k] != base.get(k))
        print("identical on all configurations" if not differ else f"DIFFERENT: {', '.join(differ)}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
