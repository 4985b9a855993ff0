"""The formulation contract (issue 12): one data object in; model, warm_start, extract, separator; shared blocks."""
import numpy as np
import pyomo.environ as pyo
import pytest

import opttrees.formulations as formulations
from oracles.bruteforce import brute_force_objective
from oracles.cutloop_reference import solve_loop_reference
from opttrees.data.binarized import BinarizedData, ThermometerData
from opttrees.data.prepared import prepare
from opttrees.data.binarizers import Binarizer, IntegerEncoder
from opttrees.errors import InputError
from opttrees.experiments.spo_data import shortest_path_data
from opttrees.robust import ShiftSet
from opttrees.solvers import solve


def classification(seed, n=24, p=3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, p)), 1)
    y = ((X[:, 0] > 0.45) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


def binary(seed, n=24, C=4):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (n, C))
    return Z, (Z[:, 0] ^ (rng.random(n) < 0.25)).astype(int)


def every_formulation(block=None):
    """One small instance of every formulation (each built on ``block(name)`` when given)."""
    X, y = classification(0)
    Z, yz = binary(1)
    Xi = np.random.default_rng(2).integers(0, 3, (12, 2)).astype(float)
    yi = (Xi[:, 0] >= 1).astype(int)
    D = shortest_path_data(10, deg=2, noise=0.3, p=2, grid=(2, 2), n_test=0, seed=3)
    b = block or (lambda name: None)
    return {
        "OCT": formulations.OCT(prepare(X, y), 2, block=b("oct")),
        "OCTH": formulations.OCTH(prepare(X, y), 1, block=b("octh")),
        "ORT": formulations.ORT(prepare(X, y.astype(float), task="regression"), 1, loss="absolute", block=b("ort")),
        "ORTLinear": formulations.ORTLinear(prepare(X, y.astype(float), task="regression"), 1, leaf_penalty=0.1,
                                 loss="absolute", block=b("ortl")),
        "SPOTFormulation": formulations.SPOTFormulation(formulations.prepare_costs(D.problem, np.round(D.X, 1), D.C), D.problem, 1,
                                             block=b("spot")),
        "FlowOCT": formulations.FlowOCT(BinarizedData.from_binary(Z, yz), 2, block=b("flow")),
        "BendersOCT": formulations.BendersOCT(BinarizedData.from_binary(Z, yz), 2, block=b("benders")),
        "RobustOCT": formulations.RobustOCT(ThermometerData.from_integer(Xi, yi), 1, ShiftSet(np.ones(Xi.shape), 1.0),
                                 block=b("robust")),
    }


def test_every_formulation_follows_the_contract():
    forms = every_formulation()
    assert set(forms) <= set(formulations.__all__)
    for name in ("BinarizedData", "ThermometerData", "PreparedData", "prepare_costs"):
        assert name in formulations.__all__
    for name, f in forms.items():
        assert isinstance(f, formulations.Formulation), name
        assert isinstance(f.model, pyo.ConcreteModel) and f.owns_model, name
        assert f.model.objective.expr is f.model.objective_expr, name      # the Objective wraps the Expression
        assert callable(f.warm_start) and callable(f.extract), name
        assert (f.separator is not None) == (name in ("BendersOCT", "RobustOCT")), name
    with pytest.raises(TypeError):
        formulations.Formulation()   # abstract


def test_every_formulation_builds_onto_a_caller_block_without_an_objective():
    m = pyo.ConcreteModel()
    forms = every_formulation(block=lambda name: m.add_component(name, pyo.Block()) or m.component(name))
    for name, f in forms.items():
        assert not f.owns_model and f.model.parent_block() is m, name
        assert f.model.component("objective") is None and f.model.objective_expr is not None, name
        assert f.model.model() is m
    assert not list(m.component_data_objects(pyo.Objective))


def test_block_argument_is_checked():
    X, y = classification(0)
    with pytest.raises(InputError, match="block"):
        formulations.OCT(prepare(X, y), 1, block="model")
    m = pyo.ConcreteModel()
    m.part = pyo.Block()
    formulations.OCT(prepare(X, y), 1, block=m.part)
    with pytest.raises(InputError, match="already holds a formulation"):
        formulations.OCT(prepare(X, y), 1, block=m.part)
    with pytest.raises(InputError, match="BinarizedData"):
        formulations.FlowOCT(prepare(X, y), 1)
    with pytest.raises(InputError, match="ThermometerData"):
        formulations.RobustOCT(BinarizedData.from_binary(*binary(0)), 1, ShiftSet(np.ones((24, 4)), 0.0))


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_oct_on_a_block_with_a_user_side_constraint(solver):
    """Forbidding feature 0 on the block == OCT on the data without feature 0 (brute force), re-verified."""
    X, y = classification(4, n=20)
    data = prepare(X, y)
    free = brute_force_objective(X, data.y, 2)
    without_0 = brute_force_objective(X[:, 1:], data.y, 2)
    assert without_0 > free + 1e-6          # the side constraint binds on this instance
    m = pyo.ConcreteModel()
    m.oct = pyo.Block()
    f = formulations.OCT(data, 2, block=m.oct)
    m.no_feature_0 = pyo.Constraint(expr=sum(m.oct.tree.a[0, t] for t in f.structure.branch) == 0)
    m.obj = pyo.Objective(expr=m.oct.objective_expr, sense=f.sense)
    r = solve(m, solver)
    assert r.proven_optimal and r.objective == pytest.approx(without_0, abs=1e-6)
    tree = f.extract()                      # re-routes the data and checks the block's own objective
    assert 0 not in tree.feature[tree.children_left >= 0]
    assert f.tree_objective(tree) == pytest.approx(without_0, abs=1e-6)


def test_a_minimising_and_a_maximising_formulation_share_one_model():
    """OCT (min) and FlowOCT (max) on one model: sum of sense * objective_expr; each part hits its own optimum."""
    X, y = classification(5, n=20)
    Z, yz = binary(6, n=20)
    alone_oct = solve(formulations.OCT(prepare(X, y), 2), "highs").objective
    alone_flow = solve(formulations.FlowOCT(BinarizedData.from_binary(Z, yz), 2), "highs").objective
    m = pyo.ConcreteModel()
    m.oct, m.flow = pyo.Block(), pyo.Block()
    fo = formulations.OCT(prepare(X, y), 2, block=m.oct)
    ff = formulations.FlowOCT(BinarizedData.from_binary(Z, yz), 2, block=m.flow)
    assert (fo.sense, ff.sense) == (pyo.minimize, pyo.maximize)
    m.obj = pyo.Objective(expr=fo.sense * m.oct.objective_expr + ff.sense * m.flow.objective_expr)
    r = solve(m, "highs")
    assert r.proven_optimal and r.objective == pytest.approx(alone_oct - alone_flow, abs=1e-6)
    t_oct, t_flow = fo.extract(), ff.extract()       # each verified against its own part
    assert fo.tree_objective(t_oct) == pytest.approx(alone_oct, abs=1e-6)
    assert ff.tree_objective(t_flow) == pytest.approx(alone_flow, abs=1e-6)


def benders_on_a_block(seed=7):
    """(model, BendersOCT built on its block ``master``, FlowOCT's optimum); the model's objective is the master's.

    The caller keeps the model alive: Pyomo blocks hold their parent weakly, so a block whose model was
    garbage-collected silently becomes a model of its own."""
    Z, y = binary(seed, n=20)
    ref = solve(formulations.FlowOCT(BinarizedData.from_binary(Z, y), 2), "highs").objective
    m = pyo.ConcreteModel()
    m.master = pyo.Block()
    b = formulations.BendersOCT(BinarizedData.from_binary(Z, y), 2, block=m.master)
    m.obj = pyo.Objective(expr=m.master.objective_expr, sense=b.sense)
    return m, b, ref


def test_benders_separator_works_on_a_block():
    """BendersOCT on a block, cut loop on the root model == FlowOCT's optimum; the cuts land in the block."""
    m, b, ref = benders_on_a_block()
    assert b.model.model() is m
    solve_loop_reference(b)
    assert b.model_objective() == pytest.approx(ref, abs=1e-6) and len(m.master.cuts) > 0
    assert b.tree_objective(b.extract()) == pytest.approx(ref, abs=1e-6)


def test_binarized_data_from_prepared_owns_the_split_maps():
    X, y = classification(8, n=40)
    data = prepare(X, y, sample_weight=np.arange(1, 41, dtype=float))
    bz = Binarizer("quantile", 4).fit(data.X)
    d = BinarizedData.from_prepared(data, bz)
    assert np.array_equal(d.Z, bz.transform(data.X)) and d.n_classes == 2 and d.classes == [0, 1]
    assert np.array_equal(d.sample_weight, data.sample_weight) and d.feature_names == data.feature_names
    for c in range(d.n_columns):
        j, t = d.split_of_col(c)
        assert np.array_equal(d.Z[:, c], (data.X[:, j] >= t).astype(np.int8))   # 1 = right = not x_j < t
        assert d.col_of_split(j, t) == c
    with pytest.raises(InputError):
        d.col_of_split(0, 99.0)      # routes every row left: no column does that
    raw = BinarizedData.from_binary(*binary(0))
    assert raw.split_of_col(3) == (3, 0.5) and raw.col_of_split(3, 0.5) == 3 and raw.n_classes == 2
    with pytest.raises(InputError, match="binary"):
        BinarizedData.from_binary(np.full((3, 2), 2), [0, 1, 0])
    with pytest.raises(InputError, match="y"):
        BinarizedData.from_binary(np.zeros((3, 2)), [0, 1])


@pytest.mark.parametrize("mode", ["identity", "rank", "quantile"])
def test_thermometer_data_routes_like_its_original_units_splits(mode):
    rng = np.random.default_rng(9)
    X = rng.integers(0, 5, (30, 2)).astype(float) if mode == "identity" else np.round(rng.random((30, 2)), 2)
    data = prepare(X, (X[:, 0] > X[:, 1]).astype(int))
    enc = IntegerEncoder(mode, 4).fit(data.X)
    d = ThermometerData.from_prepared(data, enc)
    assert d.identity_units == (mode == "identity")
    for c, (f, th) in enumerate(d.cols):
        j, t = d.split_of_col(c)
        assert j == f and np.array_equal(d.Z[:, c], (data.X[:, j] >= t).astype(np.int8))
        assert np.array_equal(d.Z[:, c], (d.X_int[:, f] >= th + 1).astype(np.int8))
        assert d.col_of_split(j, t) == c
    ints = ThermometerData.from_integer(d.X_int, data.y)
    assert ints.col_of_split(0, ints.cols[0][1] + 0.7) == 0     # any threshold in (theta, theta + 1]


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_solve_a_formulation_on_a_block_keeps_its_separator_and_warm_start(solver):
    """solve(form) on a block: the whole model (user objective) is solved with the form's cuts and warm start."""
    m, b, ref = benders_on_a_block()
    start = formulations.FlowOCT(b.data, 1)
    solve(start, "highs")
    r = solve(b, solver, warm_start=start.extract())
    assert r.proven_optimal and r.objective == pytest.approx(ref, abs=1e-6)
    assert r.start_objective == pytest.approx(start.model_objective(), abs=1e-6)
    assert b.tree_objective(b.extract()) == pytest.approx(ref, abs=1e-6)
