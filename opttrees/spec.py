"""Model spec files (YAML or JSON): validated into estimators, run, and written to an output folder.

A spec has four sections::

    data:   {dataset: iris}  or  {csv: path.csv, target: label, features: [...]}, optional test_size, split_seed
    model:  {type: oct, max_depth: 2, ...}     # type from the model registry, other keys are its parameters
    solver: {name: highs, time_limit: 60, mip_gap: 1e-6, threads: 1, random_state: 0, verbose: false}
    output: results/iris                       # folder for tree.json, tree.dot, report.json

Every unknown key, wrong type, missing file or unknown name raises SpecError naming the field, before any
data is loaded: ``model.*`` and ``solver.*`` are checked against the estimator's own parameter rules
(:mod:`opttrees.params`), the same declarations its ``fit`` checks. ``solver.time_limit: .inf`` means no limit.
"""
from __future__ import annotations

import difflib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .errors import InputError, OptTreesError, SpecError
from .params import describe, is_valid
from .registry import MODELS, _register_builtin, models  # noqa: F401 (MODELS, _register_builtin: re-exported)


SECTIONS = {"data", "model", "solver", "output"}
DATA_KEYS = {"dataset": str, "csv": str, "target": (str, list), "features": list, "test_size": float,
             "split_seed": int, "params": dict}
#: the estimator parameter each ``solver.<key>`` sets; the values are checked by that parameter's own rules
SOLVER_TO_PARAM = {"name": "solver", "time_limit": "time_limit", "mip_gap": "mip_gap", "threads": "threads",
                   "random_state": "random_state", "verbose": "verbose"}
SOLVER_KEYS = tuple(SOLVER_TO_PARAM)
#: old or other papers' names, pointed to the one vocabulary in "unknown field" errors
RENAMED = {"seed": "random_state", "depth": "max_depth", "lambda": "regularization"}


def _unknown(where: str, key: str, allowed) -> SpecError:
    hint = [RENAMED[key]] if RENAMED.get(key) in allowed else difflib.get_close_matches(key, list(allowed), n=1)
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


def _check_value(where: str, value, rules):
    """A model or solver field against the estimator's own rules for that parameter (before any data loads)."""
    if rules is not None and not is_valid(value, rules):
        raise SpecError(f"{where}: expected {describe(rules)}; got {type(value).__name__} {value!r}")
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
        entry = models()[self.model_type]
        params = dict(self.model_params)
        params.update({SOLVER_TO_PARAM[key]: value for key, value in self.solver.items()})
        try:
            return entry.make(**params)
        except OptTreesError as exc:
            raise SpecError(f"model: {exc}") from None


def parse_spec(raw: Any, source: Path | None = None) -> Spec:
    """Validate every section, including each model and solver field against the estimator's rules, without
    loading any data; SpecError names the first bad field."""
    registry = models()
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
        raise SpecError(f"model.type: missing; choose one of {sorted(registry)}")
    if mtype not in registry:
        hint = difflib.get_close_matches(str(mtype), list(registry), n=1)
        raise SpecError(f"model.type: unknown model {mtype!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                        + f"; choose one of {sorted(registry)}")
    rules = registry[mtype].parameter_rules()
    allowed = registry[mtype].defaults()
    solver_params = set(SOLVER_TO_PARAM.values())
    params = {}
    for key, value in model.items():
        if key not in allowed or key in solver_params:
            raise _unknown("model", str(key), set(allowed) - solver_params)
        params[key] = _check_value(f"model.{key}", value, rules.get(key))
    solver = {}
    sraw = raw.get("solver") or {}
    if not isinstance(sraw, dict):
        raise SpecError(f"solver: expected a mapping, got {type(sraw).__name__}")
    for key, value in sraw.items():
        if key not in SOLVER_TO_PARAM:
            raise _unknown("solver", str(key), SOLVER_KEYS)
        pname = SOLVER_TO_PARAM[key]
        if pname not in allowed:
            raise SpecError(f"solver.{key}: model {mtype!r} has no such setting (it uses: "
                            f"{[k for k, p in SOLVER_TO_PARAM.items() if p in allowed] or 'none'})")
        solver[key] = _check_value(f"solver.{key}", value, rules.get(pname))
    if "name" in solver:
        solver["name"] = solver["name"].lower()
    out = raw.get("output")
    if out is None:
        out = f"results/{source.stem if source else 'run'}"
    if not isinstance(out, str):
        raise SpecError(f"output: expected a folder path string, got {type(out).__name__}")
    spec = Spec(data, mtype, params, solver, Path(out), source, raw)
    spec.build_estimator()
    return spec


def read_document(path: str | Path, what: str = "spec", error: type[OptTreesError] = SpecError) -> Any:
    """A YAML (or ``.json``) file's content; a missing or unparsable file raises ``error`` naming ``what``."""
    p = Path(path)
    if not p.exists():
        raise error(f"{what} file not found: {p}")
    try:
        text = p.read_text()
        return json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise error(f"{what}: could not parse {p.name}: {exc}") from None


def load_spec(path: str | Path) -> Spec:
    return parse_spec(read_document(path), Path(path))


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
    entry = models()[spec.model_type]
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
    report["_solve_summary"] = res.summary() if res is not None else None
    return report
