"""Model spec files (YAML or JSON): validated into estimators, run, and written to an output folder.

A spec has four sections::

    data:   {dataset: iris}  or  {csv: path.csv, target: label, features: [...]}, optional test_size, split_seed
    model:  {type: oct, max_depth: 2, ...}     # type from the model registry, other keys are its parameters
    solver: {name: highs, time_limit: 60, mip_gap: 1e-6, threads: 1, seed: 0, verbose: false}
    output: results/iris                       # folder for tree.json, tree.dot, report.json

Every unknown key, wrong type, missing file or unknown name raises SpecError naming the field.
"""
from __future__ import annotations

import difflib
import inspect
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from .errors import InputError, OptTreesError, SpecError


@dataclass
class ModelEntry:
    """How the CLI builds, fits and scores one model type."""

    name: str
    estimator: type
    description: str
    fit: Callable[[Any, Any, Any], Any] = lambda est, X, y: est.fit(X, y)
    metric: str = "accuracy"


MODELS: dict[str, ModelEntry] = {}


def register_model(name: str, estimator: type, description: str, fit=None, metric: str = "accuracy",
                   **fixed) -> None:
    """Register a spec ``model.type``; ``fixed`` parameters are always passed (e.g. method="mio")."""
    if fixed:
        def est(**kw):  # noqa: E306 - a small factory binding the fixed parameters
            return estimator(**{**fixed, **kw})
        est.__wrapped_estimator__ = estimator
        est.__fixed__ = fixed
    else:
        est = estimator
    MODELS[name] = ModelEntry(name, est, description, fit or (lambda e, X, y: e.fit(X, y)), metric)


def _estimator_params(entry: ModelEntry) -> dict:
    cls = getattr(entry.estimator, "__wrapped_estimator__", entry.estimator)
    fixed = getattr(entry.estimator, "__fixed__", {})
    sig = inspect.signature(cls.__init__)
    return {k: p.default for k, p in sig.parameters.items() if k != "self" and k not in fixed}


def _register_builtin() -> None:
    from .estimators import OptimalTreeClassifier
    register_model("oct", OptimalTreeClassifier, "Bertsimas–Dunn OCT MIO (parallel splits)", method="mio")
    register_model("cart", OptimalTreeClassifier, "greedy CART tree pruned with alpha (no solver)",
                   method="greedy")
    register_model("oct-local-search", OptimalTreeClassifier, "OCT / OCT-H by Dunn's local search with restarts",
                   method="local-search")
    from .estimators import OptimalTreeRegressor
    register_model("ort", OptimalTreeRegressor, "ORT / ORT-H regression tree by local search (or greedy)",
                   metric="r2")
    from .estimators.tuning import OptimalTreeCV
    register_model("oct-cv", OptimalTreeCV, "OCT tuned by the thesis protocol (depth grid, alpha by batch pruning, "
                   "validation split, refit)", task="classification")
    register_model("ort-cv", OptimalTreeCV, "ORT tuned by the thesis protocol (as oct-cv; loss squared or absolute)",
                   metric="r2", task="regression")
    from .estimators.flow import BendersOCTClassifier, FlowOCTClassifier, RobustTreeClassifier
    register_model("flow-oct", FlowOCTClassifier, "FlowOCT: strong max-flow MIO on binarised features")
    register_model("benders-oct", BendersOCTClassifier, "BendersOCT: FlowOCT master with lazy min-cut cuts")
    register_model("robust-oct", RobustTreeClassifier,
                   "RobustOCT: robust to feature shifts, calibrated by rho and lam (cut generation)")
    from .estimators.spo import register_spo_models
    register_spo_models(register_model)


SECTIONS = {"data", "model", "solver", "output"}
DATA_KEYS = {"dataset": str, "csv": str, "target": (str, list), "features": list, "test_size": float,
             "split_seed": int, "params": dict}
SOLVER_KEYS = {"name": str, "time_limit": float, "mip_gap": float, "threads": int, "seed": int, "verbose": bool}
# the estimator parameter each solver.<key> sets, first match wins (estimators name their seed differently)
SOLVER_TO_PARAM = {"name": ("solver",), "time_limit": ("time_limit",), "mip_gap": ("mip_gap",),
                   "threads": ("threads",), "seed": ("random_state", "seed"), "verbose": ("verbose",)}
# parameters whose default's type is narrower than what they accept
PARAM_TYPES = {"max_features": (str, int, float)}


def _solver_param(key: str, allowed) -> str | None:
    """The estimator parameter a ``solver.<key>`` field sets, or None if this model has no such parameter."""
    for name in SOLVER_TO_PARAM[key]:
        if name in allowed:
            return name
    return None


def _unknown(where: str, key: str, allowed) -> SpecError:
    hint = difflib.get_close_matches(key, list(allowed), n=1)
    return SpecError(f"{where}.{key}: unknown field" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                     + f"; allowed: {sorted(allowed)}")


def _check_type(where: str, value, typ) -> Any:
    if typ is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SpecError(f"{where}: expected a number, got {type(value).__name__} {value!r}")
        return float(value)
    if typ is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(f"{where}: expected an integer, got {type(value).__name__} {value!r}")
        return value
    if not isinstance(value, typ):
        names = " or ".join(t.__name__ for t in (typ if isinstance(typ, tuple) else (typ,)))
        raise SpecError(f"{where}: expected {names}, got {type(value).__name__} {value!r}")
    return value


def _check_param(where: str, value, default):
    """Type-check a model parameter against its default's type (None defaults accept anything)."""
    name = where.rsplit(".", 1)[-1]
    if name in PARAM_TYPES and value is not None:
        return _check_type(where, value, PARAM_TYPES[name])
    if default is None or value is None:
        return value
    if isinstance(default, bool):
        return _check_type(where, value, bool)
    if isinstance(default, int):
        if isinstance(value, float) and value.is_integer() and not isinstance(default, bool):
            return _check_type(where, value, float)
        return _check_type(where, value, int)
    if isinstance(default, float):
        return _check_type(where, value, float)
    if isinstance(default, str):
        return _check_type(where, value, str)
    return value


@dataclass
class Spec:
    data: dict
    model_type: str
    model_params: dict
    solver: dict
    output: Path
    source: Path | None = None
    raw: dict = field(default_factory=dict)

    def build_estimator(self):
        entry = MODELS[self.model_type]
        allowed = _estimator_params(entry)
        params = dict(self.model_params)
        for key, value in self.solver.items():
            pname = _solver_param(key, allowed)
            if pname is not None:
                params[pname] = value
        try:
            return entry.estimator(**params)
        except OptTreesError as exc:
            raise SpecError(f"model: {exc}") from None


def parse_spec(raw: Any, source: Path | None = None) -> Spec:
    if not MODELS:
        _register_builtin()
    if not isinstance(raw, dict):
        raise SpecError("spec: the file must contain a mapping with sections data, model, solver, output")
    for key in raw:
        if key not in SECTIONS:
            raise _unknown("spec", str(key), SECTIONS)
    for sec in ("data", "model"):
        if sec not in raw:
            raise SpecError(f"{sec}: missing section")
        if not isinstance(raw[sec], dict):
            raise SpecError(f"{sec}: expected a mapping, got {type(raw[sec]).__name__}")
    data = {}
    for key, value in raw["data"].items():
        if key not in DATA_KEYS:
            raise _unknown("data", key, DATA_KEYS)
        data[key] = _check_type(f"data.{key}", value, DATA_KEYS[key])
    if ("dataset" in data) == ("csv" in data):
        raise SpecError("data: give exactly one of data.dataset (a built-in name) or data.csv (a file path)")
    if "csv" in data:
        if "target" not in data:
            raise SpecError("data.target: required with data.csv (the label column's name)")
        p = Path(data["csv"])
        if not p.is_absolute() and source is not None:
            p = (source.parent / p)
        if not p.exists():
            raise SpecError(f"data.csv: file not found: {p}")
        data["csv"] = str(p)
    else:
        from .experiments.datasets import dataset_names
        if data["dataset"] not in dataset_names():
            raise SpecError(f"data.dataset: unknown dataset {data['dataset']!r}; built-in: {dataset_names()}")
    if "test_size" in data and not 0 < data["test_size"] < 1:
        raise SpecError(f"data.test_size: must be in (0, 1); got {data['test_size']}")
    if "dataset" in data and "target" in data:
        raise SpecError("data.target: only valid with data.csv (built-in datasets know their target)")
    if "params" in data and "dataset" not in data:
        raise SpecError("data.params: only valid with data.dataset (parameters of a built-in generator)")
    if "features" in data and not all(isinstance(f, str) for f in data["features"]):
        raise SpecError("data.features: must be a list of column names")
    if "features" in data and "target" in data:
        targets = data["target"] if isinstance(data["target"], list) else [data["target"]]
        clash = [f for f in data["features"] if f in targets]
        if clash:
            raise SpecError(f"data.features: {clash} is also the target; a model cannot learn from its own label")
    model = dict(raw["model"])
    mtype = model.pop("type", None)
    if mtype is None:
        raise SpecError(f"model.type: missing; choose one of {sorted(MODELS)}")
    if mtype not in MODELS:
        hint = difflib.get_close_matches(str(mtype), list(MODELS), n=1)
        raise SpecError(f"model.type: unknown model {mtype!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                        + f"; choose one of {sorted(MODELS)}")
    allowed = _estimator_params(MODELS[mtype])
    solver_params = {name for names in SOLVER_TO_PARAM.values() for name in names}
    params = {}
    for key, value in model.items():
        if key not in allowed or key in solver_params:
            raise _unknown("model", key, set(allowed) - solver_params)
        params[key] = _check_param(f"model.{key}", value, allowed[key])
    solver = {}
    sraw = raw.get("solver") or {}
    if not isinstance(sraw, dict):
        raise SpecError(f"solver: expected a mapping, got {type(sraw).__name__}")
    for key, value in sraw.items():
        if key not in SOLVER_KEYS:
            raise _unknown("solver", key, SOLVER_KEYS)
        solver[key] = _check_type(f"solver.{key}", value, SOLVER_KEYS[key])
    if "name" in solver:
        from .solvers import SOLVERS
        solver["name"] = solver["name"].lower()
        if solver["name"] not in SOLVERS:
            raise SpecError(f"solver.name: unknown solver {solver['name']!r}; choose one of {list(SOLVERS)}")
    if "time_limit" in solver and not (solver["time_limit"] > 0 and math.isfinite(solver["time_limit"])):
        raise SpecError(f"solver.time_limit: must be a positive number of seconds; got {solver['time_limit']}")
    if "mip_gap" in solver and not 0 <= solver["mip_gap"] < 1:
        raise SpecError(f"solver.mip_gap: must be in [0, 1) (a relative gap); got {solver['mip_gap']}")
    if "threads" in solver and solver["threads"] < 1:
        raise SpecError(f"solver.threads: must be >= 1; got {solver['threads']}")
    if "seed" in solver and solver["seed"] < 0:
        raise SpecError(f"solver.seed: must be >= 0; got {solver['seed']}")
    unused = [k for k in solver if _solver_param(k, allowed) is None]
    if unused:
        raise SpecError(f"solver.{unused[0]}: model {mtype!r} has no such setting (it uses: "
                        f"{sorted(k for k in SOLVER_KEYS if _solver_param(k, allowed) is not None) or 'none'})")
    out = raw.get("output")
    if out is None:
        out = f"results/{source.stem if source else 'run'}"
    if not isinstance(out, str):
        raise SpecError(f"output: expected a folder path string, got {type(out).__name__}")
    spec = Spec(data, mtype, params, solver, Path(out), source, raw)
    spec.build_estimator()  # parameter values are checked by the estimator's own validation at fit time
    return spec


def load_spec(path: str | Path) -> Spec:
    p = Path(path)
    if not p.exists():
        raise SpecError(f"spec file not found: {p}")
    try:
        text = p.read_text()
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise SpecError(f"spec: could not parse {p.name}: {exc}") from None
    return parse_spec(raw, p)


def load_spec_data(spec: Spec):
    from .experiments.datasets import load_csv, load_dataset
    d = spec.data
    if "csv" in d:
        try:
            X, y = load_csv(d["csv"], d["target"], d.get("features"))
        except InputError as exc:
            field = "data.features" if "feature column" in str(exc) else "data.target" if "target column" in str(exc) \
                else "data.csv"
            raise SpecError(f"{field}: {exc}") from None
    else:
        try:
            X, y = load_dataset(d["dataset"], **d.get("params", {}))
        except InputError as exc:
            raise SpecError(f"data.{'params' if d.get('params') else 'dataset'}: {exc}") from None
        if "features" in d:
            missing = [f for f in d["features"] if f not in X.columns]
            if missing:
                raise SpecError(f"data.features: {missing} not in dataset {d['dataset']!r}; columns: {list(X.columns)}")
            X = X[d["features"]]
    return X, y


def _clean(v):
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def run_spec(spec: Spec, write: bool = True) -> dict:
    """Fit the spec's model, write tree.json / tree.dot / report.json, and return the report."""
    X, y = load_spec_data(spec)
    est = spec.build_estimator()
    entry = MODELS[spec.model_type]
    X_test = y_test = None
    if "test_size" in spec.data:
        from sklearn.model_selection import train_test_split
        X, X_test, y, y_test = train_test_split(X, y, test_size=spec.data["test_size"],
                                                random_state=spec.data.get("split_seed", 0))
    t0 = time.perf_counter()
    try:
        entry.fit(est, X, y)
    except InputError as exc:
        raise SpecError(f"model/data: {exc}") from None
    except OptTreesError:   # solver and verification errors keep their own type and message
        raise
    except (ValueError, TypeError) as exc:   # a parameter value the estimator's own checks did not name
        raise SpecError(f"model: invalid parameter value ({type(exc).__name__}: {exc})") from None
    fit_time = time.perf_counter() - t0
    tree = getattr(est, "tree_", None)  # forests have no single tree
    res = getattr(est, "solve_result_", None)
    sign = -1.0 if entry.metric.startswith("normalised") else 1.0  # losses are reported positive
    report = {
        "spec": spec.raw, "model": spec.model_type, "n_train": int(len(X)), "n_features": int(X.shape[1]),
        # completed / time_limit / interrupted (Ctrl-C: the tree is the best found so far)
        "status": getattr(est, "fit_status_", "completed"), "fit_timings": getattr(est, "fit_timings_", None),
        "fit_time": fit_time, "objective": _clean(getattr(est, "objective_", None)),
        f"train_{entry.metric}": _clean(sign * float(est.score(X, y))),
        "tree": None if tree is None else {"depth": tree.depth, "n_leaves": tree.n_leaves,
                                           "n_splits": tree.n_splits},
        "solve": res.to_dict() if res is not None else None,
    }
    if X_test is not None:
        report[f"test_{entry.metric}"] = _clean(sign * float(est.score(X_test, y_test)))
        report["n_test"] = int(len(X_test))
    if write:
        out = spec.output  # relative paths are relative to the working directory, like any CLI output
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SpecError(f"output: cannot create the folder {out}: {exc.strerror or exc}") from None
        if tree is not None:
            tree.to_json(out / "tree.json")
            (out / "tree.dot").write_text(tree.to_dot())
        (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
        report["output"] = str(out)
        report["_written"] = (["tree.json", "tree.dot"] if tree is not None else []) + ["report.json"]
    report["_tree_text"] = tree.export_text() if tree is not None else f"{type(est).__name__} (no single tree)"
    return report
