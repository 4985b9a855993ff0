"""Model spec files (YAML or JSON): validated into estimators, run, and written to an output folder.

A spec has four sections::

    data:   {dataset: iris}  or  {csv: path.csv, target: label, features: [...]}, optional test_size, split_seed,
            categorical: auto | [columns], missing: error | drop | impute
    model:  {type: oct, max_depth: 2, random_state: 0, ...}  # type from the model registry, other keys its parameters
    solver: {name: highs, time_limit: 60, mip_gap: 1e-6, threads: 1, verbose: false}
    output: results/iris                       # folder for tree.json, tree.dot, index.html, report.json

Every unknown key, wrong type, missing file or unknown name raises SpecError naming the field, before any
data is loaded: ``model.*`` and ``solver.*`` are checked against the estimator's own parameter rules
(:mod:`opttrees.params`), the same declarations its ``fit`` checks. ``solver.time_limit: .inf`` means no limit.

Where each setting lives, one place each:

- ``model.random_state`` seeds every random choice of the fit (start trees, restarts, validation splits and the
  solver's own seed). A model that has one gets 0 when the spec gives none, so a spec run is reproducible; the
  seed used is in report.json. ``solver.random_state`` is an error that says so (it used to live there).
- ``solver.time_limit`` and ``solver.verbose`` bound and show any fit; ``solver.name``, ``mip_gap`` and
  ``threads`` only exist for models that solve a MIO (:func:`uses_solver`), elsewhere they are errors.
- Relative paths in the file (``data.csv``, ``output``) are relative to the spec file; ``opttrees solve -o``
  is relative to the working directory, like any command-line path.
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
from .registry import MODELS, ModelEntry, _register_builtin, models  # noqa: F401 (MODELS, _register_builtin: re-exported)


SECTIONS = {"data", "model", "solver", "output"}
DATA_KEYS = {"dataset": str, "csv": str, "target": (str, list), "features": list, "test_size": float,
             "split_seed": int, "params": dict, "categorical": (str, list), "missing": str}
#: the estimator parameter each ``solver.<key>`` sets; the values are checked by that parameter's own rules
SOLVER_TO_PARAM = {"name": "solver", "time_limit": "time_limit", "mip_gap": "mip_gap", "threads": "threads",
                   "verbose": "verbose"}
SOLVER_KEYS = tuple(SOLVER_TO_PARAM)
#: solver keys that only mean something to a model that solves a MIO (the others bound and show any fit)
SOLVER_ONLY_KEYS = ("name", "mip_gap", "threads")
#: old or other papers' names, pointed to the one vocabulary in "unknown field" errors
RENAMED = {"seed": "random_state", "depth": "max_depth", "lambda": "regularization"}
#: methods that fit without a MIO solver (a model type fixing one of them has no solver settings)
NO_SOLVER_METHODS = ("greedy", "local-search", "dp")


def uses_solver(entry: ModelEntry) -> bool:
    """Whether a model type solves a MIO, so that ``solver.name``, ``mip_gap`` and ``threads`` mean something."""
    return "solver" in entry.defaults() and entry.fixed.get("method") not in NO_SOLVER_METHODS


def solver_keys(entry: ModelEntry) -> list[str]:
    """The ``solver.*`` keys a model type takes."""
    defaults = entry.defaults()
    return [k for k, p in SOLVER_TO_PARAM.items()
            if p in defaults and (k not in SOLVER_ONLY_KEYS or uses_solver(entry))]


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

    @property
    def random_state(self):
        """The seed the fit uses (the spec's ``model.random_state``, else
        :data:`~opttrees.estimators.base.DEFAULT_RANDOM_STATE`); None for a model without randomness."""
        return self.model_params.get("random_state")


def _resolve(path: str, source: Path | None) -> Path:
    """A path written in a spec file: relative paths are relative to that file (as ``data.csv``)."""
    p = Path(path)
    return source.parent / p if not p.is_absolute() and source is not None else p


def _parse_data(raw: dict, source: Path | None) -> dict:
    from .data import MISSING_POLICIES

    data = {}
    for key, value in raw.items():
        if key not in DATA_KEYS:
            raise _unknown("data", key, DATA_KEYS)
        data[key] = _check_type(f"data.{key}", value, DATA_KEYS[key])
    if ("dataset" in data) == ("csv" in data):
        raise SpecError("data: give exactly one of data.dataset (a built-in name) or data.csv (a file path)")
    if "csv" in data:
        if "target" not in data:
            raise SpecError("data.target: required with data.csv (the label column's name)")
        p = _resolve(data["csv"], source)
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
    cat = data.get("categorical")
    if isinstance(cat, str) and cat != "auto":
        raise SpecError(f"data.categorical: expected 'auto' or a list of column names; got {cat!r}")
    if isinstance(cat, list) and not all(isinstance(c, str) for c in cat):
        raise SpecError("data.categorical: must be 'auto' or a list of column names")
    if isinstance(cat, list) and "target" in data:
        targets = data["target"] if isinstance(data["target"], list) else [data["target"]]
        clash = [c for c in cat if c in targets]
        if clash:
            raise SpecError(f"data.categorical: {clash} is the target; list feature columns only")
    if "missing" in data and data["missing"] not in MISSING_POLICIES:
        raise SpecError(f"data.missing: expected one of {', '.join(map(repr, MISSING_POLICIES))}; "
                        f"got {data['missing']!r}")
    return data


def _parse_solver(raw: Any, mtype: str, entry: ModelEntry) -> dict:
    rules, allowed = entry.parameter_rules(), entry.defaults()
    if not isinstance(raw, dict):
        raise SpecError(f"solver: expected a mapping, got {type(raw).__name__}")
    takes = solver_keys(entry)
    solver = {}
    for key, value in raw.items():
        if key in ("random_state", "seed") and "random_state" in allowed:
            raise SpecError(f"solver.{key}: the seed is a model setting: write it as model.random_state (it seeds "
                            "the start trees, restarts and validation splits as well as the solver)")
        if key not in SOLVER_TO_PARAM:
            raise _unknown("solver", str(key), SOLVER_KEYS)
        if key not in takes:
            what = ("has no solver (it is fitted without a MIO)" if SOLVER_TO_PARAM[key] in allowed
                    else "has no such setting")
            raise SpecError(f"solver.{key}: model {mtype!r} {what}; its solver section takes: "
                            f"{takes or 'nothing'}")
        solver[key] = _check_value(f"solver.{key}", value, rules.get(SOLVER_TO_PARAM[key]))
    if "name" in solver:
        solver["name"] = solver["name"].lower()
    return solver


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
    data = _parse_data(raw["data"], source)
    model = dict(raw["model"])
    mtype = model.pop("type", None)
    if mtype is None:
        raise SpecError(f"model.type: missing; choose one of {sorted(registry)}")
    if mtype not in registry:
        hint = difflib.get_close_matches(str(mtype), list(registry), n=1)
        raise SpecError(f"model.type: unknown model {mtype!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                        + f"; choose one of {sorted(registry)}")
    entry = registry[mtype]
    rules = entry.parameter_rules()
    allowed = entry.defaults()
    solver_params = set(SOLVER_TO_PARAM.values())
    params = {}
    for key, value in model.items():
        if key in solver_params and key in allowed:
            raise SpecError(f"model.{key}: a solver setting; write it as solver.{key}")
        if key not in allowed:
            raise _unknown("model", str(key), set(allowed) - solver_params)
        params[key] = _check_value(f"model.{key}", value, rules.get(key))
    if "random_state" in allowed and "random_state" not in params:   # reproducible unless asked otherwise
        from .estimators.base import DEFAULT_RANDOM_STATE
        params["random_state"] = DEFAULT_RANDOM_STATE
    solver = _parse_solver(raw.get("solver") or {}, mtype, entry)
    out = raw.get("output")
    if out is None:
        out = f"results/{source.stem if source else 'run'}"   # not written in the file: the working directory
        out_path = Path(out)
    elif not isinstance(out, str):
        raise SpecError(f"output: expected a folder path string, got {type(out).__name__}")
    else:
        out_path = _resolve(out, source)
    spec = Spec(data, mtype, params, solver, out_path, source, raw)
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


@dataclass
class SpecData:
    """The spec's data ready to fit: encoded features (train, and test when ``data.test_size``), targets, and
    how the raw table was encoded (kept with the tree so it predicts from the same kind of CSV)."""

    X: Any
    y: Any
    X_test: Any = None
    y_test: Any = None
    encoding: Any = None        # data.TableEncoding
    rows_dropped: int = 0


def _data_error(exc: InputError) -> SpecError:
    msg = str(exc)
    where = ("data.categorical" if "categor" in msg or "hold text" in msg
             else "data.missing" if "missing value" in msg or "impute" in msg else "data")
    return SpecError(f"{where}: {msg}")


def prepare_spec_data(spec: Spec) -> SpecData:
    """Load the spec's data and apply its missing-value policy, target check, split and categorical encoding.

    The encoding (categories, imputed values) is learned on the training rows only; test rows are encoded
    with it, as new rows are at predict time.
    """
    import pandas as pd

    from .data import TableEncoding, continuous_target, missing_rows

    entry = models()[spec.model_type]
    d = spec.data
    X, y = load_spec_data(spec)
    missing = d.get("missing", "error")
    dropped = 0
    if missing == "drop":
        rows = missing_rows(X, y)
        if rows.all():
            raise SpecError(f"data.missing: every one of the {len(rows)} rows has a missing value; nothing is left "
                            "to fit (use missing: impute)")
        dropped = int(rows.sum())
        X, y = X[~rows].reset_index(drop=True), y[~rows].reset_index(drop=True)
    else:
        ymiss = pd.DataFrame(y).isna().to_numpy().any(axis=1)
        if ymiss.any():
            raise SpecError(f"data.target: {int(ymiss.sum())} row(s) have no target value (first at row "
                            f"{int(np.argmax(ymiss))}); set data.missing: drop to leave them out")
    if entry.metric == "accuracy" and getattr(y, "ndim", 1) == 1:
        reason = continuous_target(np.asarray(y))
        if reason is not None:
            regressors = sorted(n for n, e in models().items() if e.metric == "r2")
            name = d.get("target", "target")
            raise SpecError(f"model.type: {spec.model_type!r} is a classifier, but the target {name!r} looks "
                            f"continuous ({reason}); use a regression model ({', '.join(regressors)}), or give "
                            "the labels as text if they are classes")
    X_test = y_test = None
    if "test_size" in d:
        from sklearn.model_selection import train_test_split
        X, X_test, y, y_test = train_test_split(X, y, test_size=d["test_size"], random_state=d.get("split_seed", 0))
    try:
        # a built-in dataset's text columns are categories by construction (tic-tac-toe); a CSV's must be asked for
        enc = TableEncoding.fit(X, d.get("categorical", "auto" if "dataset" in d else None), missing)
        X = enc.transform(X, "data")
        if X_test is not None:
            X_test = enc.transform(X_test, "test rows")
    except InputError as exc:
        raise _data_error(exc) from None
    return SpecData(X, y, X_test, y_test, enc, dropped)


def normalised_loss(entry: ModelEntry, est, X, y) -> float:
    """The fitted model's loss on (X, y) over the loss of the best single leaf (the root-only tree), without
    any complexity term: the one training-loss figure report.json gives for every model of a task.

    Classification: errors / majority-class errors. Regression: the model's loss ("absolute" for models fitted
    on it, else squared) / the loss of predicting the median or the mean. SPO: the normalised SPO loss.
    Prescription: the policy value oriented as a loss (the mean outcome for sense="min", its negative for "max").
    """
    from .objectives import baseline

    if entry.metric == "accuracy":
        truth, pred = np.asarray(y), np.asarray(est.predict(X))
        _, counts = np.unique(truth, return_counts=True)
        base = float(len(truth) - counts.max())
        errors = float((pred != truth).sum())
        return errors / base if base > 0 else errors
    if entry.metric == "r2":
        truth = np.asarray(y, dtype=np.float64)
        resid = truth - np.asarray(est.predict(X), dtype=np.float64)
        loss = "absolute" if getattr(est, "loss", None) == "absolute" else "squared"
        num = float(np.abs(resid).sum() if loss == "absolute" else (resid ** 2).sum())
        base = baseline(truth, loss)
        return num / base if base > 0 else num
    return -float(est.score(X, y))


#: fitted attributes a report records when the model has them (what a tuned model chose)
CHOSEN = {"best_depth_": "max_depth", "best_alpha_": "alpha", "val_error_": "validation_error"}


def _clean(v):
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _write_viewer(tree, path: Path, title: str, report: dict, X, y) -> None:
    """index.html beside tree.json: the interactive viewer, with the training rows selectable."""
    from .viz.html import write_html
    try:
        write_html(tree, path, title=title, summary=report, X=X, y=y)
    except InputError:   # rows the tree cannot route as they are (e.g. text columns it encodes itself)
        write_html(tree, path, title=title, summary=report)


def run_spec(spec: Spec, write: bool = True) -> dict:
    """Fit the spec's model, write tree.json / tree.dot / index.html / report.json, and return the report."""
    entry = models()[spec.model_type]
    sd = prepare_spec_data(spec)
    X, y = sd.X, sd.y
    est = spec.build_estimator()
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
    if tree is not None and not sd.encoding.is_trivial and tree.feature_names == sd.encoding.feature_names:
        tree.encoding = sd.encoding
    res = getattr(est, "solve_result_", None)
    # losses are reported positive, and a policy value as the mean outcome itself (score() negates it for sense=min)
    sign = -1.0 if entry.metric.startswith("normalised") or getattr(est, "sense", None) == "min" else 1.0
    objective = getattr(est, "objective_", None)
    if objective is None and res is not None:
        objective = res.objective
    sense = getattr(getattr(est, "formulation_", None), "sense", 1)
    enc = sd.encoding
    report = {
        "spec": spec.raw, "model": spec.model_type, "random_state": _clean(spec.random_state),
        "n_train": int(len(X)), "n_features": int(X.shape[1]),
        "data": {"rows_dropped": sd.rows_dropped, "split_seed": spec.data.get("split_seed", 0)
                 if "test_size" in spec.data else None,
                 "categorical": {c: len(v) for c, v in enc.categories.items()}, "imputed": dict(enc.fill)},
        # completed / time_limit / interrupted (Ctrl-C: the tree is the best found so far)
        "status": getattr(est, "fit_status_", "completed"), "fit_timings": getattr(est, "fit_timings_", None),
        "fit_time": fit_time,
        # the model's own objective (what its method optimises), and the loss every model reports alike
        "objective": _clean(objective), "objective_sense": "maximise" if sense == -1 else "minimise",
        "normalised_loss": {"train": _clean(normalised_loss(entry, est, X, y)), "test": None},
        f"train_{entry.metric}": _clean(sign * float(est.score(X, y))),
        "chosen": {key: _clean(getattr(est, attr)) for attr, key in CHOSEN.items() if hasattr(est, attr)} or None,
        "tree": None if tree is None else {"depth": tree.depth, "n_leaves": tree.n_leaves,
                                           "n_splits": tree.n_splits},
        "solve": res.to_dict() if res is not None else None,
    }
    if sd.X_test is not None:
        report["normalised_loss"]["test"] = _clean(normalised_loss(entry, est, sd.X_test, sd.y_test))
        report[f"test_{entry.metric}"] = _clean(sign * float(est.score(sd.X_test, sd.y_test)))
        report["n_test"] = int(len(sd.X_test))
    if write:
        out = spec.output
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SpecError(f"output: cannot create the folder {out}: {exc.strerror or exc}") from None
        if tree is not None:
            tree.to_json(out / "tree.json")
            (out / "tree.dot").write_text(tree.to_dot())
            _write_viewer(tree, out / "index.html", f"{spec.model_type} — {out.name}", report, X, y)
        (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
        report["output"] = str(out)
        report["_written"] = (["tree.json", "tree.dot", "index.html"] if tree is not None else []) + ["report.json"]
    report["_tree_text"] = tree.export_text() if tree is not None else f"{type(est).__name__} (no single tree)"
    report["_solve_summary"] = res.summary() if res is not None else None
    return report
