"""The constrained DP (opttrees.constraints.dp_routes): feature budgets by maximal feature sets, group fairness by the
Pareto DP, and both together; DP = brute force = MIO, the DP's start and exact bound inside MIO fits."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees import OptimalTreeClassifier
from opttrees.constraints import dp_routes
from opttrees import constraints
from opttrees.data.prepared import prepare
from opttrees.errors import InputError
from opttrees.estimators import FlowOCTClassifier

from oracles.bruteforce import best_constrained_classifier
from oracles.cases import tiny_classification

NAMES = ["x0", "x1", "g"]


def tiny(seed: int, n: int = 14):
    return tiny_classification(seed, n)


def brute(X, y, cons, features=None):
    data = prepare(X, y)
    bound = [c.validate(data) for c in cons]
    best, _ = best_constrained_classifier(X.to_numpy(), y, 2, bound, features=features, names=NAMES)
    return best


def errors(est, X, y):
    return float((est.predict(X) != y).sum())


#: (constraints, features the brute force may split on); each binds on some seed below
CASES = {
    "max_features": (lambda: [constraints.MaxFeatures(1)], None),
    "feature_cost": (lambda: [constraints.FeatureCost({"x0": 3.0, "x1": 1.0, "g": 1.0}, 2.0)], None),
    "forbid_everywhere": (lambda: [constraints.ForbidFeatures(["x0"])], None),
    "budget_zero": (lambda: [constraints.FeatureCost([1.0, 1.0, 1.0], 0.0)], None),
    "max_features_and_parity": (lambda: [constraints.MaxFeatures(1), constraints.StatisticalParity("g", 0.1)], [0, 1]),
    "cost_and_odds": (lambda: [constraints.FeatureCost({"x0": 2.0}, 1.0), constraints.EqualizedOdds("g", 0.25)], [0, 1]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dp_equals_brute_force(case, seed):
    make, feats = CASES[case]
    X, y = tiny(seed)
    best = brute(X, y, make(), feats)
    clf = OptimalTreeClassifier(method="dp", max_depth=2, constraints=make()).fit(X, y)
    assert clf.solve_result_.status == "optimal"
    assert errors(clf, X, y) == best
    assert all(v["satisfied"] for v in clf.constraint_report(X, y).values())


def test_cases_bind():
    """Each case's constrained optimum is worse than the unconstrained one on some seed (the tests can fail)."""
    for case, (make, feats) in CASES.items():
        if case == "forbid_everywhere":
            continue
        gaps = []
        for seed in (0, 1, 2):
            X, y = tiny(seed)
            gaps.append(brute(X, y, make(), feats) - brute(X, y, [], None))
        assert max(gaps) > 0, case


@pytest.mark.parametrize("case", ["max_features", "feature_cost", "max_features_and_parity"])
def test_mio_gets_the_dp_start_and_exact_bound(case):
    """On a seed where the constraints bind, the constrained DP's tree starts the MIO and its optimum is the
    bound (relaxation "none"), so HiGHS proves the brute-force optimum."""
    make, feats = CASES[case]
    seed = next(s for s in range(8) if brute(*tiny(s), make(), feats) > brute(*tiny(s), [], None))
    X, y = tiny(seed)
    clf = OptimalTreeClassifier(max_depth=2, dp_bound=True, time_limit=120, constraints=make()).fit(X, y)
    res = clf.solve_result_
    assert res.plan["start"] == ("fairness-dp" if "parity" in case else "feature-set-dp")
    assert res.external_bound["relaxation"].startswith("none")
    assert res.proven_optimal
    assert errors(clf, X, y) == brute(X, y, make(), feats)


def test_flow_gets_the_feature_set_dp_start():
    X, y = tiny(2)
    est = FlowOCTClassifier(max_depth=2, binarization="midpoints", time_limit=120,
                            constraints=[constraints.MaxFeatures(1)]).fit(X, y)
    assert est.solve_result_.plan["start"] == "feature-set-dp"
    assert est.solve_result_.proven_optimal
    assert errors(est, X, y) == brute(X, y, [constraints.MaxFeatures(1)])


# ---------------------------------------------------------------------------------------------- feature sets
def bound_to(cons, X, y):
    data = prepare(X, y)
    return [c.validate(data) for c in cons]


@settings(max_examples=80, deadline=None)
@given(p=st.integers(1, 6), depth=st.integers(1, 3), k=st.one_of(st.none(), st.integers(0, 4)),
       costs=st.one_of(st.none(), st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.5]), min_size=6, max_size=6)),
       budget=st.sampled_from([0.0, 1.0, 2.5, 4.0]), forbid=st.sets(st.integers(0, 5), max_size=2))
def test_feature_sets_are_the_maximal_feasible_sets(p, depth, k, costs, budget, forbid):
    """A feature set is allowed iff it lies inside one of the returned sets (checked against every subset)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(8, p)), columns=[f"f{j}" for j in range(p)])
    y = np.arange(8) % 2
    cons = []
    if k is not None:
        cons.append(constraints.MaxFeatures(k))
    if costs is not None:
        cons.append(constraints.FeatureCost(costs[:p], budget))
    forbid = sorted(j for j in forbid if j < p)
    if forbid:
        cons.append(constraints.ForbidFeatures(forbid))
    cons = bound_to(cons, X, y)
    sets = [set(S) for S in dp_routes.feature_sets(cons, p, depth)]
    cap = 2 ** depth - 1

    def feasible(U):
        return (not (U & set(forbid)) and (k is None or len(U) <= k)
                and (costs is None or sum(costs[j] for j in U) <= budget + 1e-12))

    for r in range(min(p, cap) + 1):
        for U in map(set, itertools.combinations(range(p), r)):
            assert feasible(U) == any(U <= S for S in sets), (U, sets)
    for S in sets:        # every set is itself usable in full when the tree is big enough
        limited = [j for j in S if k is not None or (costs is not None and costs[j] > 0)]
        assert feasible(set(limited)) and len(limited) <= cap or not limited


def test_too_many_feature_sets_is_a_clear_error():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 3, (60, 40)).astype(float))
    y = (X[0] + X[1] > 2).astype(int).to_numpy()
    with pytest.raises(InputError, match="maximal feature sets.*method='mio'"):
        OptimalTreeClassifier(method="dp", max_depth=2, constraints=[constraints.MaxFeatures(3)]).fit(X, y)


# ------------------------------------------------------------------------------------------- fairness, user data
def user_like(n: int, seed: int = 0):
    """Rounded continuous columns with ties and near-equal values, a text column, a protected group."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    age = np.round(rng.normal(40, 12, n) / 5) * 5
    hours = np.round(rng.normal(38 + 5 * g, 9, n), 1) + rng.integers(0, 2, n) * 1e-9
    score = rng.normal(0, 1, n)
    region = rng.choice(["north", "south", "east"], n)
    y = (0.05 * age + 0.08 * hours + score + 0.8 * g + rng.normal(0, 1, n) > 6.5).astype(int)
    X = pd.DataFrame({"age": age, "hours": hours, "score": score, "region": region, "g": g})
    return X.astype({"region": "category"}), y


def test_fairness_dp_with_default_binarization():
    """method="dp" with fairness and the default binarization ("auto") runs over every midpoint (it used to
    fail: the Binarizer has no "auto" strategy) and equals binarization="midpoints"."""
    X, y = tiny(3, n=30)
    cons = lambda: [constraints.StatisticalParity("g", 0.05)]  # noqa: E731
    a = OptimalTreeClassifier(method="dp", max_depth=2, constraints=cons()).fit(X, y)
    b = OptimalTreeClassifier(method="dp", max_depth=2, binarization="midpoints", constraints=cons()).fit(X, y)
    assert a.objective_ == pytest.approx(b.objective_)
    assert a.solve_result_.status == "optimal"


def test_fairness_dp_depth_three_on_user_like_data():
    """1,500 rows with ties, near-equal values, a text column and weights: the depth-3 fair optimum over quantile
    splits is found and proven, meets the gap, and is no worse than depth 2."""
    X, y = user_like(1500)
    w = 1.0 + (np.arange(len(y)) % 3 == 0)
    fits = {}
    for depth in (2, 3):
        clf = OptimalTreeClassifier(method="dp", max_depth=depth, binarization="quantile", n_thresholds=6,
                                    constraints=[constraints.StatisticalParity("g", 0.03)], time_limit=120)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(X, y, sample_weight=w)
        assert clf.solve_result_.status == "optimal"
        assert clf.fairness_gap(X, y, "g", sample_weight=w) <= 0.03 + 1e-9
        fits[depth] = clf.objective_
    assert fits[3] <= fits[2] + 1e-12


def test_constrained_dp_time_limit_returns_a_feasible_tree():
    X, y = user_like(1500, seed=1)
    clf = OptimalTreeClassifier(method="dp", max_depth=4, binarization="quantile", n_thresholds=12,
                                constraints=[constraints.EqualizedOdds("g", 0.02)], time_limit=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y)
    assert clf.solve_result_.status in ("time_limit", "optimal")
    assert clf.constraint_report(X, y)["equalized_odds"]["satisfied"]


@pytest.mark.parametrize("make", [lambda: constraints.StatisticalParity("g", 0.15), lambda: constraints.EqualOpportunity("g", 0.05)])
def test_three_groups_dp_equals_brute_force_and_mio(make):
    """A protected column with three groups: every pair of groups is bounded; DP = brute force = MIO."""
    rng = np.random.default_rng(7)
    n = 18
    g = np.arange(n) % 3
    x0 = rng.integers(0, 3, n)
    x1 = (rng.integers(0, 3, n) + g) % 3
    y = ((x0 + (g == 2) + rng.integers(0, 2, n)) >= 2).astype(int)
    X = pd.DataFrame({"x0": x0, "x1": x1, "g": g}).astype(float)
    best = brute(X, y, [make()], [0, 1])
    assert best > brute(X, y, [], [0, 1])          # the constraint binds
    dp = OptimalTreeClassifier(method="dp", max_depth=2, constraints=[make()]).fit(X, y)
    mio = OptimalTreeClassifier(max_depth=2, time_limit=120, constraints=[make()]).fit(X, y)
    assert errors(dp, X, y) == best == errors(mio, X, y)
    assert mio.solve_result_.proven_optimal
    name = make().name
    assert dp.constraint_values_[name] <= make().delta + 1e-9


@pytest.mark.parametrize("make", [lambda: constraints.MaxFeatures(1), lambda: constraints.FeatureCost([2.0, 1.0], 1.5),
                                  lambda: constraints.ForbidFeatures(["x1"])])
@pytest.mark.parametrize("seed", [0, 1])
def test_regressor_dp_feature_budgets_equal_mio(make, seed):
    """Squared-error regression under a feature budget: the DP over maximal feature sets = the ORT MIO (SCIP),
    and the budget binds (the unconstrained optimum is better)."""
    from oracles.cases import tiny_regression

    from opttrees import OptimalTreeRegressor

    X, y = tiny_regression(seed, n=14)
    dp = OptimalTreeRegressor(method="dp", max_depth=2, constraints=[make()]).fit(X, y)
    mio = OptimalTreeRegressor(method="mio", solver="scip", max_depth=2, time_limit=120,
                               constraints=[make()]).fit(X, y)
    free = OptimalTreeRegressor(method="dp", max_depth=2).fit(X, y)
    assert dp.solve_result_.status == "optimal" and mio.solve_result_.proven_optimal
    assert dp.objective_ == pytest.approx(mio.objective_, rel=1e-6, abs=1e-9)
    assert free.objective_ < dp.objective_ - 1e-9
    assert all(v["satisfied"] for v in dp.constraint_report(X, y).values())


def test_spec_dp_types_take_constraints(tmp_path):
    """Specs: type oct-dp with fairness and a feature budget, ort-dp with a feature budget; the report gives each
    constraint's value, and the solution equals the estimator's."""
    from opttrees.spec import load_spec, run_spec

    X, y = tiny_classification(9, n=24)
    df = X.rename(columns={"g": "sex"}).assign(label=np.where(y == 1, "yes", "no"))
    df.to_csv(tmp_path / "fair.csv", index=False)
    (tmp_path / "fair.yaml").write_text(
        "data: {csv: fair.csv, target: label}\n"
        "model: {type: oct-dp, max_depth: 2}\n"
        "constraints:\n  - {type: equalized_odds, protected: sex, delta: 0.1}\n  - {type: max_features, k: 1}\n"
        "output: out\n")
    report = run_spec(load_spec(tmp_path / "fair.yaml"))
    train = report["constraints"]["train"]
    assert train["equalized_odds"]["satisfied"] and train["max_features"]["value"] <= 1
    est = OptimalTreeClassifier(method="dp", max_depth=2, constraints=[constraints.EqualizedOdds("sex", 0.1),
                                                                        constraints.MaxFeatures(1)])
    est.fit(df.drop(columns="label"), df["label"])
    assert report["solve"]["objective"] == pytest.approx(est.objective_)
    df.assign(target=X.x0 * 2.0 - X.x1).drop(columns="label").to_csv(tmp_path / "reg.csv", index=False)
    (tmp_path / "reg.yaml").write_text(
        "data: {csv: reg.csv, target: target}\nmodel: {type: ort-dp, max_depth: 2}\n"
        "constraints:\n  - {type: max_features, k: 1}\noutput: out2\n")
    report = run_spec(load_spec(tmp_path / "reg.yaml"))
    assert report["constraints"]["train"]["max_features"]["value"] <= 1


def test_depth_three_feature_budget_equals_best_single_feature_dp():
    """Depth 3 (sets ordered by their depth-two optimum first): MaxFeatures(1) = the best unconstrained DP over
    one feature at a time."""
    from opttrees.dp import solve_dp

    X, y = user_like(400, seed=2)
    X = X.drop(columns="region")
    clf = OptimalTreeClassifier(method="dp", max_depth=3, constraints=[constraints.MaxFeatures(1)]).fit(X, y)
    best = min(solve_dp(X[[c]].to_numpy(float), y, max_depth=3)[1].objective for c in X.columns if c != "g")
    best = min(best, solve_dp(X[["g"]].to_numpy(float), y, max_depth=3)[1].objective)
    assert clf.solve_result_.status == "optimal"
    assert clf.objective_ == pytest.approx(best, abs=1e-12)
