"""Old-vs-new check of a refactoring: 65 fits of the regressor, FlowOCT / BendersOCT, RobustTreeClassifier, SPOTree,
OptimalPrescriptiveTree, PolicyTree and two classifier fits, each printed as one line: the tree, objective,
status, plan, warnings, error message and every fitted attribute (timings left out). Diff two checkouts:

    git archive <rev> | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python benchmarks/compare_fits.py > old.txt
    PYTHONPATH=$PWD python benchmarks/compare_fits.py > new.txt
    diff old.txt new.txt          # issue 42, second round: no difference (about 90 s per run)
"""
import json
import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes, load_iris, load_wine

import opttrees.constraints as cons
from opttrees import FlowOCTClassifier, BendersOCTClassifier, OptimalTreeClassifier, OptimalTreeRegressor
from opttrees.estimators.prescriptive import OptimalPrescriptiveTree, PolicyTree
from opttrees.estimators.robust import RobustTreeClassifier
from opttrees.estimators.spo import SPOTree
from opttrees.datasets.spo import shortest_path_data
from opttrees.oracles import GridShortestPath
from opttrees.prescriptive.synthetic import make_experiment

SKIPKEYS = ("time", "runtime", "seconds", "elapsed", "build", "node_count", "trace", "solver_version", "wall")


def fp(v, depth=0):
    if depth > 6:
        return "..."
    if hasattr(v, "to_dict") and hasattr(v, "children_left"):
        return fp(v.to_dict(), depth + 1)
    if isinstance(v, dict):
        return {str(k): fp(x, depth + 1) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))
                if not any(s in str(k).lower() for s in SKIPKEYS)}
    if isinstance(v, (list, tuple)):
        return [fp(x, depth + 1) for x in v]
    if isinstance(v, np.ndarray):
        return fp(v.tolist(), depth + 1)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not np.isfinite(v) else round(float(v), 7)
    if v is None or isinstance(v, str):
        return v
    if hasattr(v, "status") and hasattr(v, "plan"):    # SolveResult
        return {"status": str(v.status), "termination": str(v.termination), "objective": fp(v.objective),
                "bound": fp(v.bound), "proof": v.proof, "plan": fp(v.plan), "message": v.message,
                "start_objective": fp(v.start_objective)}
    return type(v).__name__


def fingerprint(est):
    out = {"attrs": sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))}
    for k in out["attrs"]:
        v = getattr(est, k)
        if k in ("fit_timings_",):
            out[k] = sorted(v)
        elif k in ("formulation_",):
            out[k] = type(v).__name__
        elif k == "mio_info_":
            out[k] = {kk: fp(vv) if kk not in ("formulation", "result") else type(vv).__name__ for kk, vv in
                      sorted(v.items())}
        else:
            out[k] = fp(v)
    return out


def run(name, make, *args, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            est = make().fit(*args, **kw)
            res = fingerprint(est)
        except Exception as exc:   # noqa: BLE001
            res = {"error": f"{type(exc).__name__}: {exc}"}
    res["warnings"] = sorted(f"{x.category.__name__}: {x.message}" for x in w
                             if "pyomo" not in str(x.filename).lower())
    print(name, json.dumps(res, sort_keys=True))


def main():
    X, y = load_iris(return_X_y=True)
    Xw, yw = load_wine(return_X_y=True)
    Xd, yd = load_diabetes(return_X_y=True)
    Xd, yd = Xd[:120, :5], yd[:120] * 3.0 + 100.0
    rng = np.random.default_rng(0)
    g = (rng.random(len(y)) < 0.5).astype(int)
    Xg = pd.DataFrame(np.column_stack([X, g]), columns=["a", "b", "c", "d", "g"])

    R = OptimalTreeRegressor
    run("reg-ls", lambda: R(max_depth=2, n_restarts=5), Xd, yd)
    run("reg-ls-abs", lambda: R(max_depth=2, n_restarts=5, loss="absolute"), Xd, yd)
    run("reg-ls-hyper", lambda: R(max_depth=1, n_restarts=3, split_type="hyperplane"), Xd, yd)
    run("reg-greedy", lambda: R(max_depth=3, method="greedy"), Xd, yd)
    run("reg-dp", lambda: R(max_depth=2, method="dp"), Xd, yd)
    run("reg-dp-budget", lambda: R(max_depth=2, method="dp", constraints=[cons.MaxFeatures(1)]), Xd, yd)
    run("reg-dp-budget-maxnodes", lambda: R(max_depth=2, method="dp", max_num_nodes=2,
                                            constraints=[cons.MaxFeatures(1)]), Xd, yd)
    run("reg-mio-abs", lambda: R(max_depth=1, method="mio", loss="absolute", n_restarts=3, time_limit=60), Xd[:60], yd[:60])
    run("reg-mio-abs-greedy", lambda: R(max_depth=1, method="mio", loss="absolute", warm_start="greedy",
                                        time_limit=60), Xd[:60], yd[:60])
    run("reg-mio-sq", lambda: R(max_depth=1, method="mio", n_restarts=3, time_limit=60), Xd[:40], yd[:40])
    run("reg-mio-sq-highs", lambda: R(max_depth=1, method="mio", solver="highs"), Xd[:40], yd[:40])
    run("reg-mio-cons", lambda: R(max_depth=2, method="mio", loss="absolute", n_restarts=3, time_limit=60,
                                  constraints=[cons.MaxFeatures(1)]), Xd[:50], yd[:50])
    run("reg-ls-cons-err", lambda: R(max_depth=2, constraints=[cons.MaxFeatures(1)]), Xd, yd)
    run("reg-lin-ls", lambda: R(max_depth=1, leaf_model="linear", n_restarts=2), Xd, yd)
    run("reg-lin-ls-pen0", lambda: R(max_depth=2, leaf_model="linear", leaf_penalty=0.0, n_restarts=2), Xd[:30], yd[:30])
    run("reg-lin-mio", lambda: R(max_depth=1, leaf_model="linear", method="mio", loss="absolute", n_restarts=2,
                                 time_limit=60), Xd[:40, :2], yd[:40])
    run("reg-lin-mio-l0-greedy", lambda: R(max_depth=1, leaf_model="linear", method="mio", loss="absolute",
                                           leaf_penalty_type="l0", warm_start="greedy", coef_bound=1000.0,
                                           time_limit=60), Xd[:30, :2], yd[:30])
    run("reg-lin-mio-nostart", lambda: R(max_depth=1, leaf_model="linear", method="mio", loss="absolute",
                                         warm_start=None, time_limit=60), Xd[:30, :2], yd[:30])
    run("reg-lin-greedy-err", lambda: R(leaf_model="linear", method="greedy"), Xd, yd)
    run("reg-df", lambda: R(max_depth=2, n_restarts=3), pd.DataFrame(Xd, columns=list("abcde")), yd)

    run("flow", lambda: FlowOCTClassifier(max_depth=2, n_thresholds=3, time_limit=60), X, y)
    run("flow-greedy-bal", lambda: FlowOCTClassifier(max_depth=1, objective="balanced_accuracy", warm_start="greedy",
                                                     dp_bound=False, regularization=0.1), Xw, yw)
    run("flow-mid", lambda: FlowOCTClassifier(max_depth=1, binarization="midpoints", time_limit=60), X, y)
    run("flow-cons", lambda: FlowOCTClassifier(max_depth=2, n_thresholds=3, time_limit=60,
                                               constraints=[cons.StatisticalParity("g", 0.1)]), Xg, (y > 0).astype(int))
    run("flow-maxfeat", lambda: FlowOCTClassifier(max_depth=2, n_thresholds=3, time_limit=60,
                                                  constraints=[cons.MaxFeatures(1)]), X, y)
    run("benders", lambda: BendersOCTClassifier(max_depth=2, n_thresholds=3, time_limit=60), X, y)
    run("benders-highs", lambda: BendersOCTClassifier(max_depth=1, n_thresholds=3, solver="highs",
                                                      warm_start=None, dp_bound=False), X, y)
    run("flow-depth-err", lambda: FlowOCTClassifier(max_depth=20), X, y)

    Xi = np.round(X * 2)
    run("robust-budget", lambda: RobustTreeClassifier(max_depth=1, time_limit=60), Xi, y, costs=np.ones(4), budget=2.0)
    run("robust-none", lambda: RobustTreeClassifier(max_depth=2, time_limit=60, solver="highs"), Xi[:60], y[:60])
    run("robust-cal", lambda: RobustTreeClassifier(max_depth=1, rho=0.9, lam=0.9, time_limit=60), Xi[:80], y[:80])
    run("robust-nostart", lambda: RobustTreeClassifier(max_depth=1, warm_start=None, time_limit=60), Xi[:80], y[:80],
        costs=np.ones((80, 4)), budget=1.0)
    run("robust-float", lambda: RobustTreeClassifier(max_depth=1, n_thresholds=4, time_limit=60), X[:80], y[:80],
        costs=np.ones(4), budget=1.0)
    run("robust-costs-err", lambda: RobustTreeClassifier(max_depth=1), Xi, y, costs=np.ones(4))
    run("robust-shape-err", lambda: RobustTreeClassifier(max_depth=1), Xi, y, costs=np.ones(3), budget=1.0)
    run("robust-cal-err", lambda: RobustTreeClassifier(max_depth=1, rho=0.9), Xi, y)

    D = shortest_path_data(80, deg=4, noise=0.25, p=3, n_test=0, grid=(3, 3), seed=1)
    P = GridShortestPath(3, 3)
    run("spot-greedy", lambda: SPOTree(decision_problem=P, max_depth=3, min_samples_leaf=5), D.X, D.C)
    run("spot-greedy-mse", lambda: SPOTree(decision_problem=P, max_depth=3, criterion="mse", min_samples_leaf=5), D.X, D.C)
    run("spot-greedy-valfrac", lambda: SPOTree(decision_problem=P, max_depth=3, min_samples_leaf=5,
                                               validation_fraction=0.25), D.X, D.C * 1000.0)
    run("spot-greedy-xval", lambda: SPOTree(decision_problem=P, max_depth=2, min_samples_leaf=5), D.X[:60], D.C[:60],
        X_val=D.X[60:], C_val=D.C[60:])
    run("spot-greedy-noprune", lambda: SPOTree(decision_problem=P, max_depth=2, prune=False, min_samples_leaf=5),
        pd.DataFrame(D.X, columns=["u", "v", "w"]), D.C)
    run("spot-mio", lambda: SPOTree(decision_problem=P, max_depth=1, method="mio", min_samples_leaf=5, time_limit=60),
        D.X[:40], D.C[:40])
    run("spot-mio-xprec", lambda: SPOTree(decision_problem=P, max_depth=1, method="mio", min_samples_leaf=5,
                                          x_precision=1, warm_start="greedy", dp_bound=False, time_limit=60), D.X[:40], D.C[:40])
    run("spot-dp", lambda: SPOTree(decision_problem=P, max_depth=2, method="dp", min_samples_leaf=5), D.X, D.C)
    run("spot-dp-valfrac", lambda: SPOTree(decision_problem=P, max_depth=2, method="dp", min_samples_leaf=5,
                                           validation_fraction=0.3), D.X, D.C)
    run("spot-noproblem", lambda: SPOTree(max_depth=2), D.X, D.C)
    run("spot-xval-err", lambda: SPOTree(decision_problem=P), D.X, D.C, X_val=D.X)
    run("spot-xval-shape-err", lambda: SPOTree(decision_problem=P), D.X, D.C, X_val=D.X[:, :2], C_val=D.C)
    run("spot-valfrac-err", lambda: SPOTree(decision_problem=P, validation_fraction=0.001), D.X, D.C)

    E = make_experiment(1, 120, np.random.default_rng(0))
    O, PT = OptimalPrescriptiveTree, PolicyTree
    run("opt-ls", lambda: O(max_depth=2, n_restarts=3), E.X, E.treatment, E.outcome)
    run("opt-greedy", lambda: O(max_depth=2, method="greedy", sense="max"), E.X, E.treatment, E.outcome)
    run("opt-dp", lambda: O(max_depth=2, method="dp", n_treatment=3), E.X, E.treatment, E.outcome)
    run("opt-lin", lambda: O(max_depth=1, counterfactuals="linear", n_restarts=2), E.X, E.treatment, E.outcome)
    run("opt-mio", lambda: O(max_depth=1, method="mio", n_restarts=2, time_limit=60), E.X[:40], E.treatment[:40],
        E.outcome[:40])
    run("opt-2col", lambda: O(max_depth=1, n_restarts=2, treatments=[1, 0]), E.X,
        np.column_stack([E.treatment, E.outcome]))
    run("opt-ntreat-err", lambda: O(max_depth=1, n_treatment=1000), E.X, E.treatment, E.outcome)
    run("policy-dm", lambda: PT(max_depth=2, teacher="dm", n_folds=2), E.X, E.treatment, E.outcome)
    run("policy-ipw", lambda: PT(max_depth=1, teacher="ipw"), E.X, E.treatment, E.outcome,
        propensity=np.full(120, 0.5))
    run("policy-dr-est", lambda: PT(max_depth=1, teacher="dr", method="local-search", n_restarts=2, n_folds=2), E.X,
        E.treatment, E.outcome, outcome_estimates=np.column_stack([E.y0, E.y1]))
    run("policy-greedy", lambda: PT(max_depth=2, teacher="ipw", method="greedy", n_folds=2), E.X, E.treatment, E.outcome)
    run("policy-prop-err", lambda: PT(max_depth=1, teacher="ipw"), E.X, E.treatment, E.outcome,
        propensity=np.full(10, 0.5))

    run("clf-mio", lambda: OptimalTreeClassifier(max_depth=2), X, y)
    run("clf-dp-fair", lambda: OptimalTreeClassifier(max_depth=2, method="dp",
                                                     constraints=[cons.StatisticalParity("g", 0.1)]), Xg, (y > 0).astype(int))


if __name__ == "__main__":
    main()
