"""Parameter rules declared once (opttrees.params): the rules themselves, their coverage of every estimator's
parameters, agreement between the spec (checked before any data loads) and ``fit``, and the docstrings."""
import doctest
import inspect
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import opttrees
from opttrees.errors import InputError, SpecError
from opttrees.estimators import (BendersOCTClassifier, FlowOCTClassifier, OptimalPrescriptiveTree, OptimalTreeClassifier,
                                 OptimalTreeCV, OptimalTreeRegressor, PolicyTree, RobustTreeClassifier, SPOForest,
                                 SPOTree)
from opttrees.estimators.base import OptTreesEstimator
from opttrees.params import (BOOLEAN, FALSE, NONE, RANDOM_STATE, TIME_LIMIT, Interval, Options, check_param,
                             describe, is_valid, time_limit_seconds)
from opttrees.registry import models

ESTIMATORS = [OptimalTreeClassifier, OptimalTreeRegressor, OptimalTreeCV, FlowOCTClassifier, BendersOCTClassifier,
              RobustTreeClassifier, SPOTree, SPOForest, OptimalPrescriptiveTree, PolicyTree]
PROBES = [-1, 0, 1, 2, 0.5, 1.5, -0.5, math.inf, math.nan, "x", "greedy", None, True, False, [1, 2]]


# ------------------------------------------------------------------------------------------------- rules
@given(kind=st.sampled_from(["int", "real"]), low=st.one_of(st.none(), st.integers(-3, 3)),
       width=st.integers(0, 4), closed=st.sampled_from(["both", "left", "right", "neither"]),
       value=st.one_of(st.integers(-6, 6), st.floats(-6, 6), st.sampled_from([math.inf, -math.inf, math.nan, True])))
def test_interval_accepts_exactly_its_set(kind, low, width, closed, value):
    high = None if low is None else low + width
    rule = Interval(kind, low, high, closed)
    typed = not isinstance(value, bool) and (isinstance(value, int) if kind == "int" else
                                             isinstance(value, (int, float)) and math.isfinite(value))
    above = low is None or value > low or (value == low and closed in ("both", "left"))
    below = high is None or value < high or (value == high and closed in ("both", "right"))
    assert rule.accepts(value) == bool(typed and above and below)


def test_rule_descriptions_and_messages():
    assert Interval("int", 0).description == "an integer >= 0"
    assert Interval("real", 0, 1, closed="left").description == "a finite number in [0, 1)"
    assert Interval("real", 0, 1, closed="right").description == "a finite number in (0, 1]"
    assert describe([Options("greedy", "local-search"), NONE, FALSE]) == "one of 'greedy', 'local-search', False or None"
    with pytest.raises(InputError, match=r"^max_depth=-1 is not valid for X: expected an integer >= 0$"):
        check_param("max_depth", -1, [Interval("int", 0)], "X")
    assert Options("highs", "scip", ignore_case=True).accepts("HiGHS") and not Options("a").accepts(1)
    assert BOOLEAN.accepts(np.True_) and not BOOLEAN.accepts(1)
    assert RANDOM_STATE.accepts(np.random.RandomState(0)) and not RANDOM_STATE.accepts(-1)
    assert FALSE.accepts(False) and not FALSE.accepts(0) and not FALSE.accepts(None)


def test_time_limit_inf_means_no_limit_and_nothing_else_does():
    assert TIME_LIMIT.accepts(math.inf) and not TIME_LIMIT.accepts(-math.inf) and not TIME_LIMIT.accepts(math.nan)
    assert time_limit_seconds(math.inf) is None and time_limit_seconds(None) is None
    assert time_limit_seconds(2) == 2.0
    for bad in (0, -1, "60", True):
        with pytest.raises(InputError, match="time_limit"):
            time_limit_seconds(bad)


# ------------------------------------------------------------------------------------ declarations
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_has_a_rule_and_every_default_passes_it(cls):
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    rules = cls.parameter_rules()
    assert list(rules) == names
    for name, default in cls().get_params(deep=False).items():
        assert is_valid(default, rules[name]), (name, default)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_constructors_are_keyword_only(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = [p.name for p in params if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    assert positional == []
    with pytest.raises(TypeError):
        cls(None)
    with pytest.raises(TypeError):
        cls(None, 2)


def test_the_keyword_check_covers_every_estimator():
    import opttrees.estimators as E
    assert {getattr(E, name) for name in E.__all__} == set(ESTIMATORS)
    assert {m.estimator for m in models().values()} <= set(ESTIMATORS)


def test_one_vocabulary_across_estimators():
    """max_depth, random_state and warm_start mean one thing everywhere; no estimator says depth or seed."""
    for cls in ESTIMATORS:
        names = set(inspect.signature(cls.__init__).parameters)
        assert "max_depth" in names and not names & {"depth", "seed"}
        if "solver" in names:
            assert "random_state" in names
        if "warm_start" in names:
            rules = cls.parameter_rules()["warm_start"]
            assert is_valid("greedy", rules) and is_valid(None, rules) and is_valid(False, rules)
            assert not is_valid(True, rules)


def _data_for(cls):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (30, 2)).astype(float)
    if cls in (SPOTree, SPOForest):
        from opttrees.oracles import GridShortestPath
        pr = GridShortestPath(2, 2)
        return {"decision_problem": pr}, (X, rng.random((30, pr.n_decisions)))
    y = X[:, 0] + X[:, 1] if cls is OptimalTreeRegressor else (X[:, 0] > 1).astype(int)
    return {}, (X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fit_rejects_every_invalid_probe_naming_the_parameter(cls, monkeypatch):
    """At fit, before any work: each probe value a parameter's rules reject raises an InputError naming it."""
    def no_work(*a, **k):
        raise AssertionError("fit started working before checking its parameters")

    for mod in ("skeleton", "tuning"):     # the one template fit (estimators.skeleton), and the tuner's own
        monkeypatch.setattr(f"opttrees.estimators.{mod}.controlled_fit", no_work)
    base, data = _data_for(cls)
    rules = cls.parameter_rules()
    for name in rules:
        for value in PROBES:
            if is_valid(value, rules[name]):
                continue
            est = cls(**{**base, name: value})
            with pytest.raises(InputError, match=re.escape(f"{name}={value!r} is not valid for {cls.__name__}")):
                est.fit(*data)


@pytest.mark.parametrize("model_type", sorted(models()))
def test_spec_accepts_exactly_what_fit_accepts(model_type):
    """parse_spec (no data loaded) and the estimator's fit-time checks (the parameter rules, then the method's)
    agree on every probe of every field."""
    from opttrees.spec import SOLVER_TO_PARAM, parse_spec, solver_keys
    entry = models()[model_type]
    to_key = {p: k for k, p in SOLVER_TO_PARAM.items()}
    takes = solver_keys(entry)
    base = {"max_depth": 2} if model_type in ("spot-dp", "spot-mio") else {}   # a fixed-depth method needs one
    for name in entry.parameter_rules():
        if name == "decision_problem" or (name in to_key and to_key[name] not in takes):
            continue   # a solver field of a model without a solver is an error whatever its value (test_spec_runs)
        for value in PROBES:
            section = "solver" if name in to_key else "model"
            key = to_key.get(name, name)
            raw = {"data": {"dataset": "iris"}, "model": {"type": model_type, **base}, "solver": {}}
            raw[section][key] = value
            est = entry.make(**{**base, name: value})
            try:
                est._check_params()
                est._check_method()
                fit_ok = True
            except InputError:
                fit_ok = False
            try:
                parse_spec(raw)
                spec_ok = True
            except SpecError as exc:
                if "does not apply to model type" in str(exc):
                    break   # not a setting of this type: any value is an error (tests/cli/test_spec_messages.py)
                # a value its rules reject, or one the model type's method cannot take
                assert str(exc).startswith((f"{section}.{key}: expected ", "model: ")), str(exc)
                spec_ok = False
            assert spec_ok == fit_ok, (model_type, name, value)


# -------------------------------------------------------------------------------------- docstrings
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_numpydoc_sections_document_every_parameter(cls):
    doc = inspect.getdoc(cls)
    for section in ("Parameters", "Attributes", "Examples"):
        assert re.search(rf"^{section}\n-+$", doc, re.M), (cls.__name__, section)
    params_text = doc.split("Parameters\n")[1].split("Attributes\n")[0]
    documented = set(re.findall(r"^(\w+(?:, \\?\n?\w+)*) ?:|^(\w+(?:, \w+)*)$", params_text, re.M))
    names = {n for pair in documented for group in pair for n in re.split(r",\s*\\?\s*", group) if n}
    missing = set(inspect.signature(cls.__init__).parameters) - {"self"} - names
    assert not missing, (cls.__name__, missing)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_docstring_examples_run(cls):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(cls, cls.__name__, globs={"opttrees": opttrees})
    assert tests and tests[0].examples
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in tests:
            runner.run(t)
    assert runner.failures == 0


def test_all_estimators_share_the_base_and_the_solver_names():
    from opttrees.params import SOLVER_NAME
    from opttrees.solvers import SOLVERS
    assert all(issubclass(cls, OptTreesEstimator) for cls in ESTIMATORS)
    # "auto" is the estimators' own choice (SolverMixin._auto_solver); the rest are the solver layer's names
    assert SOLVER_NAME.values == ("auto",) + tuple(SOLVERS)
