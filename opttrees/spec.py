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

import contextlib
import difflib
import os
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .errors import InputError, OptTreesError, SpecError
from .params import Method, Needs, Uses, When, applies_table, describe, is_valid, method_message, method_violation
from .registry import MODELS, ModelEntry, _register_builtin, models  # noqa: F401 (MODELS, _register_builtin: re-exported)
from .spec_data import prepare_spec_data


SECTIONS = {"data", "model", "solver", "output", "constraints"}
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


class _Problems:
    """Every problem of a spec, collected so that one run lists them all (a missing CSV used to hide an unknown
    model key until it was fixed). ``with problems.check(): ...`` records a SpecError raised inside and goes on."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    @contextlib.contextmanager
    def check(self):
        try:
            yield
        except SpecError as exc:
            self.errors.append(str(exc))

    def raise_all(self) -> None:
        if len(self.errors) == 1:
            raise SpecError(self.errors[0])
        if self.errors:
            raise SpecError(f"{len(self.errors)} problems in the spec:\n" + "\n".join(f"  {e}" for e in self.errors))


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



# ------------------------------------------------------------------------- fields that apply to a model type
def _applies(entry) -> dict[str, list[dict]]:
    """Per parameter of the model type that only means something under some settings, a list of alternatives,
    each a dict {parameter: allowed values}; a parameter applies when the spec's effective settings (the type's
    fixed ones, then the spec's, then the defaults) match any alternative. A parameter not listed applies always.
    Read from the estimator's method table (each method's ``uses``: :func:`opttrees.params.applies_table`)."""
    return applies_table(entry.methods())


def _estimator_name(entry) -> str:
    return getattr(entry, "estimator_name", None) or entry.estimator.__name__


def _effective(entry, params: dict) -> dict:
    return {**entry.defaults(), **params, **entry.fixed}


def applies(entry, param: str, params: dict | None = None) -> bool:
    """Whether ``param`` means something for this model type with the spec's ``params`` (None: for some
    setting of the type's own parameters, as ``opttrees models --params`` lists them)."""
    alternatives = _applies(entry).get(param)
    if alternatives is None:
        return True
    if params is None:
        return any(all(entry.fixed[k] in v for k, v in alt.items() if k in entry.fixed) for alt in alternatives)
    eff = _effective(entry, params)
    return any(all(eff.get(k) in v for k, v in alt.items()) for alt in alternatives)


def _types_with(entry, registry, method: set) -> list[str]:
    """The model types of ``entry``'s estimator that fix ``method`` to one of ``method``."""
    est = _estimator_name(entry)
    return sorted(n for n, e in registry.items() if _estimator_name(e) == est and e.fixed.get("method") in method
                  and all(e.fixed.get(k) == v for k, v in entry.fixed.items() if k != "method"))


def applies_condition(entry, param: str, registry) -> str:
    """Where ``param`` applies, in spec words ("type 'oct-local-search', or type 'oct' with warm_start: ...")."""
    out = []
    for alt in _applies(entry).get(param, []):
        words, rest = [], {k: v for k, v in alt.items() if k != "method"}
        if "method" in alt:
            if "method" in entry.fixed:
                types = _types_with(entry, registry, alt["method"])
                if not types:
                    continue
                words.append(" or ".join(f"type {t!r}" for t in types))
            else:
                words.append("model.method: " + " or ".join(sorted(alt["method"])))
        cond = [f"model.{k}: " + " or ".join(str(x).lower() if isinstance(x, bool) else str(x) for x in sorted(v, key=str))
                for k, v in rest.items() if k not in entry.fixed]
        if any(entry.fixed.get(k) not in v for k, v in rest.items() if k in entry.fixed):
            continue
        out.append(" with ".join([", ".join(words)] + cond) if words else " and ".join(cond))
    return "; or ".join(out) or "no setting of this type"


def only_with(entry, param: str) -> str | None:
    """The settings ``param`` needs on this model type ("model.warm_start: local-search"), or None when it
    applies whatever the type's other settings are (or always)."""
    conds = []
    for alt in _applies(entry).get(param, []):
        if any(entry.fixed[k] not in v for k, v in alt.items() if k in entry.fixed):
            continue
        rest = [f"model.{k}: " + " or ".join(str(x).lower() if isinstance(x, bool) else str(x)
                                             for x in sorted(v, key=str))
                for k, v in alt.items() if k not in entry.fixed]
        if not rest:
            return None
        conds.append(" and ".join(rest))
    return " or ".join(conds) if conds else None


_YAML_WORDS = {"True": "true", "False": "false", "None": "null"}


def spec_words(message: str, mtype: str, registry=None) -> str:
    """An estimator's message in the words of a spec file.

    Estimators speak Python (``method='greedy'``, ``time_limit=5``, ``fit_status_``, ``solve_result_.bound``,
    ``OptimalTreeClassifier.fit``); a spec user wrote ``type: cart``, ``solver.time_limit: 5`` and reads
    report.json. Each estimator parameter becomes its spec field (``solver.*`` for the solver settings,
    ``model.*`` for the others; a fixed ``method`` becomes the model type that fixes it).
    """
    import re
    registry = registry or models()
    entry = registry.get(mtype)
    if entry is None:
        return message
    names = set(entry.defaults()) | set(entry.fixed)
    to_solver = {p: k for k, p in SOLVER_TO_PARAM.items()}

    def value(v: str) -> str:   # Python's literals as a spec file writes them (YAML: true, false, null)
        if v in _YAML_WORDS:
            return _YAML_WORDS[v]
        return v[1:-1] if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"" else v

    def param(m) -> str:
        name, v = m.group(1), value(m.group(2))
        if name == "method" and "method" in entry.fixed:
            types = _types_with(entry, registry, {v})
            return f"type: {types[0]}" if types else f"method {v}"
        if name in entry.fixed:
            return f"{name} {v} (fixed by type {mtype!r})"
        if name in to_solver:
            return f"solver.{to_solver[name]}: {v}"
        return f"model.{name}: {v}"

    if "method" in entry.fixed:   # method='mio' or 'local-search': the types that fix either
        def methods(m) -> str:
            types = _types_with(entry, registry, set(re.findall(r"'([^']*)'", m.group(0))))
            return "type: " + " or ".join(types) if types else m.group(0)
        message = re.sub(r"\bmethod='[^']*'(?:,? or '[^']*')+", methods, message)
    msg = re.sub(r"fit_status_\s*==?\s*(['\"][^'\"]*['\"])", lambda m: f"status: {value(m.group(1))}", message)
    msg = re.sub(r"\bsolve_result_\.(\w+)", r"solve.\1 in report.json", msg)
    msg = re.sub(r"\bfit_timings_\b", "fit_timings in report.json", msg)
    msg = re.sub(r"\bfit_status_\b", "status", msg)
    msg = re.sub(r"\b([a-z_]+)=('[^']*'|\"[^\"]*\"|[^\s,;:)]+)",
                 lambda m: param(m) if m.group(1) in names else m.group(0), msg)
    msg = re.sub(rf"\b{re.escape(_estimator_name(entry))}(\.fit)?\b", f"model type {mtype!r}", msg)
    return msg


#: what ``objective`` measures, per estimator (the CLI prints it beside the figure)
OBJECTIVE_MEANING = {
    "OptimalTreeClassifier": "normalised loss: errors / baseline errors (all rows in the majority class) "
                             "+ alpha * splits",
    "OptimalTreeRegressor": "normalised loss: loss / loss of one constant leaf + alpha * splits "
                            "(linear leaves: + the leaf penalty)",
    "OptimalTreeCV": "normalised loss of the refitted tree: loss / one-leaf loss + the chosen alpha * splits",
    "SPOTree": "normalised SPO loss (decision regret / regret of the root) + alpha * splits",
    "OptimalPrescriptiveTree": "OPT(mu) normalised objective: mu * outcome + (1 - mu) * prediction error, "
                               "+ alpha * splits",
    "PolicyTree": "mean standardised teacher score (as a loss) + alpha * splits",
    "FlowOCTClassifier": "(1 - regularization) * correctly classified rows - regularization * splits, "
                         "maximised (solver units)",
    "BendersOCTClassifier": "(1 - regularization) * correctly classified rows - regularization * splits, "
                            "maximised (solver units)",
    "RobustTreeClassifier": "worst-case correctly classified rows - lam * splits, maximised (solver units)",
}


def objective_meaning(mtype: str) -> str:
    entry = models().get(mtype)
    return OBJECTIVE_MEANING.get(_estimator_name(entry) if entry else "", "the model's own objective")


# ------------------------------------------------------------------------- checking a spec before heavy imports
#: the sources the field manifest (opttrees/_spec_fields.py) is made from: when any of them changes, the
#: manifest is stale and the quick check stands aside (the full check after the imports still runs)
def _manifest_sources() -> list[Path]:
    pkg = Path(__file__).resolve().parent
    return (sorted((pkg / "estimators").glob("*.py"))
            + [pkg / n for n in ("registry.py", "params.py", "data/prepared.py", "data/table.py")]
            + [pkg / "datasets" / "__init__.py"])


def manifest_fingerprint() -> str:
    import hashlib
    h = hashlib.sha256()
    pkg = Path(__file__).resolve().parent
    for p in _manifest_sources():
        h.update(str(p.relative_to(pkg)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _rule_data(rule) -> Any:
    from .params import BOOLEAN, FALSE, NONE, RANDOM_STATE, Interval, Options
    if isinstance(rule, Interval):
        return {"interval": [rule.kind, rule.low, rule.high, rule.closed, rule.allow_inf], "text": rule.description}
    if isinstance(rule, Options):
        return {"options": list(rule.values), "ignore_case": rule.ignore_case}
    for name, r in (("bool", BOOLEAN), ("none", NONE), ("false", FALSE), ("random_state", RANDOM_STATE)):
        if rule is r:
            return name
    return {"any": rule.description}


class _Deferred:
    """A rule the manifest cannot rebuild (a predicate): accepts anything here; the full check decides."""

    def __init__(self, description: str):
        self.description = description

    def accepts(self, value) -> bool:
        return True


def _rule_from(data):
    from .params import BOOLEAN, FALSE, NONE, RANDOM_STATE, Interval, Options
    if isinstance(data, str):
        return {"bool": BOOLEAN, "none": NONE, "false": FALSE, "random_state": RANDOM_STATE}[data]
    if "interval" in data:
        kind, low, high, closed, allow_inf = data["interval"]
        return Interval(kind, low, high, closed, allow_inf, description=data["text"])
    if "options" in data:
        return Options(*data["options"], ignore_case=data["ignore_case"])
    return _Deferred(data["any"])


def _methods_data(table: dict) -> dict:
    """A method table as JSON: each Needs with its rules and condition as rule data."""
    def needs(n) -> dict:
        when = None if n.when is None else {"param": n.when.param, "rules": [_rule_data(r) for r in n.when.rules]}
        return {"param": n.param, "rules": [_rule_data(r) for r in n.rules], "why": n.why, "when": when}
    return {name: [needs(n) for n in m.needs] for name, m in table.items()}


def _uses_data(table: dict) -> dict:
    """Each method's ``uses`` as JSON: {method: [[param, [[condition param, [values]], ...]], ...]}."""
    return {name: [[u.param, [[k, list(v)] for k, v in u.when]] for u in m.uses] for name, m in table.items() if m.uses}


def _methods_from(data: dict, uses: dict | None = None) -> dict:
    def needs(d) -> Needs:
        w = d["when"]
        when = None if w is None else When(w["param"], tuple(_rule_from(r) for r in w["rules"]))
        return Needs(d["param"], tuple(_rule_from(r) for r in d["rules"]), d["why"], when)
    used = {name: tuple(Uses(p, tuple((k, tuple(v)) for k, v in when)) for p, when in items)
            for name, items in (uses or {}).items()}
    return {name: Method(name, tuple(needs(d) for d in data.get(name, ())), used.get(name, ()))
            for name in dict.fromkeys([*data, *used])}


def build_manifest() -> dict:
    """What the quick check needs, from the live registry (imports every estimator): see :func:`write_manifest`."""
    from .data.table import MISSING_POLICIES
    from .datasets import dataset_names
    types = {}
    for name, e in models().items():
        rules = e.parameter_rules()
        types[name] = {
            "estimator": e.estimator.__name__, "description": e.description, "metric": e.metric,
            "fixed": json.loads(json.dumps(e.fixed, default=repr)),
            "defaults": json.loads(json.dumps(e.defaults(), default=repr)),
            "rules": {k: [_rule_data(r) for r in v] for k, v in rules.items()},
            "methods": _methods_data(e.methods()), "uses": _uses_data(e.methods()),
        }
    from .estimators.base import DEFAULT_RANDOM_STATE
    return {"fingerprint": manifest_fingerprint(), "datasets": dataset_names(),
            "default_random_state": DEFAULT_RANDOM_STATE,
            "missing_policies": list(MISSING_POLICIES), "types": types}


def write_manifest() -> Path:
    """Regenerate opttrees/_spec_fields.py (``python -c "import opttrees.spec as s; s.write_manifest()"``)."""
    path = Path(__file__).resolve().parent / "_spec_fields.py"
    manifest = build_manifest()
    types = manifest.pop("types")
    # one line per model type: the types share most fields, and a multi-line dump repeats long runs of lines
    body = "".join(f'    {name!r}: json.loads(r"""{json.dumps(types[name], sort_keys=True)}"""),\n' for name in sorted(types))
    path.write_text('"""Generated by opttrees.spec.write_manifest(): the spec fields of every model type, so that '
                    '`opttrees solve`\nreports a bad field before importing scikit-learn, Pyomo and the solvers. '
                    'Do not edit; regenerate it."""\n'
                    '# ruff: noqa: E501\nimport json\n\nFIELDS = json.loads(r"""' + json.dumps(manifest, sort_keys=True)
                    + '""")\nFIELDS["types"] = {\n' + body + '}\n')
    return path


@dataclass
class ManifestEntry:
    """A model type as the manifest describes it: the parts of :class:`~opttrees.registry.ModelEntry` that
    parsing a spec reads."""

    name: str
    estimator_name: str
    description: str
    metric: str
    fixed: dict
    _defaults: dict
    _rules: dict
    _methods: dict
    _uses: dict = field(default_factory=dict)

    def defaults(self) -> dict:
        return dict(self._defaults)

    def parameter_rules(self) -> dict:
        return {k: [_rule_from(r) for r in v] for k, v in self._rules.items()}

    def methods(self) -> dict:
        return _methods_from(self._methods, self._uses)


def quick_catalog() -> dict | None:
    """The manifest as a catalog for :func:`parse_spec` (None when it is missing or stale)."""
    try:
        from ._spec_fields import FIELDS
    except ImportError:   # pragma: no cover - not generated
        return None
    if FIELDS.get("fingerprint") != manifest_fingerprint():
        return None
    registry = {n: ManifestEntry(n, t["estimator"], t["description"], t["metric"], t["fixed"], t["defaults"],
                                 t["rules"], t["methods"], t.get("uses", {})) for n, t in FIELDS["types"].items()}
    return {"models": registry, "datasets": FIELDS["datasets"], "missing_policies": tuple(FIELDS["missing_policies"]),
            "default_random_state": FIELDS["default_random_state"]}


def _live_catalog() -> dict:
    from .data.table import MISSING_POLICIES
    from .estimators.base import DEFAULT_RANDOM_STATE
    from .datasets import dataset_names
    return {"models": models(), "datasets": dataset_names(), "missing_policies": MISSING_POLICIES,
            "default_random_state": DEFAULT_RANDOM_STATE}


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
            raise SpecError(f"model: {spec_words(str(exc), self.model_type)}") from None

    @property
    def random_state(self):
        """The seed the fit uses (the spec's ``model.random_state``, else
        :data:`~opttrees.estimators.base.DEFAULT_RANDOM_STATE`); None for a model without randomness."""
        return self.model_params.get("random_state")


def _resolve(path: str, source: Path | None) -> Path:
    """A path written in a spec file: relative paths are relative to that file (as ``data.csv``)."""
    p = Path(path)
    p = source.parent / p if not p.is_absolute() and source is not None else p
    return Path(os.path.normpath(p))   # examples/../results/x printed as results/x


def _parse_data(raw: dict, source: Path | None, catalog: dict, problems: _Problems | None = None) -> dict:
    own = problems is None
    problems = problems or _Problems()
    MISSING_POLICIES = catalog["missing_policies"]
    data = {}
    for key, value in raw.items():
        with problems.check():
            if key not in DATA_KEYS:
                raise _unknown("data", key, DATA_KEYS)
            data[key] = _check_type(f"data.{key}", value, DATA_KEYS[key])
    with problems.check():
        _data_source(data, source, catalog)
    _data_rest(data, MISSING_POLICIES, problems)
    if own:
        problems.raise_all()
    return data


def _data_source(data: dict, source, catalog) -> None:
    if ("dataset" in data) == ("csv" in data):
        raise SpecError("data: give exactly one of data.dataset (a built-in name) or data.csv (a file path)")
    if "csv" in data:
        if "target" not in data:
            raise SpecError("data.target: required with data.csv (the label column's name)")
        p = _resolve(data["csv"], source)
        if not p.exists():
            raise SpecError(f"data.csv: file not found: {p}")
        data["csv"] = str(p)
    elif data["dataset"] not in catalog["datasets"]:
        raise SpecError(f"data.dataset: unknown dataset {data['dataset']!r}; built-in: {catalog['datasets']}")


def _data_rest(data: dict, MISSING_POLICIES, problems: _Problems) -> None:
    with problems.check():
        if "test_size" in data and not 0 < data["test_size"] < 1:
            raise SpecError(f"data.test_size: must be in (0, 1); got {data['test_size']}")
    with problems.check():
        if "dataset" in data and "target" in data:
            raise SpecError("data.target: only valid with data.csv (built-in datasets know their target)")
    with problems.check():
        if "params" in data and "dataset" not in data:
            raise SpecError("data.params: only valid with data.dataset (parameters of a built-in generator)")
    with problems.check():
        if "features" in data and not all(isinstance(f, str) for f in data["features"]):
            raise SpecError("data.features: must be a list of column names")
        if "features" in data and "target" in data:
            targets = data["target"] if isinstance(data["target"], list) else [data["target"]]
            clash = [f for f in data["features"] if f in targets]
            if clash:
                raise SpecError(f"data.features: {clash} is also the target; a model cannot learn from its own label")
    with problems.check():
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
    with problems.check():
        if "missing" in data and data["missing"] not in MISSING_POLICIES:
            raise SpecError(f"data.missing: expected one of {', '.join(map(repr, MISSING_POLICIES))}; "
                            f"got {data['missing']!r}")


def _parse_solver(raw: Any, mtype: str, entry: ModelEntry, problems: _Problems | None = None) -> dict:
    rules, allowed = entry.parameter_rules(), entry.defaults()
    if not isinstance(raw, dict):
        raise SpecError(f"solver: expected a mapping, got {type(raw).__name__}")
    takes = solver_keys(entry)
    solver: dict = {}
    problems = problems or _Problems()
    for key, value in raw.items():
        with problems.check():
            _solver_field(key, value, mtype, rules, allowed, takes, solver)
    if "name" in solver:
        solver["name"] = solver["name"].lower()
    return solver


def _solver_field(key, value, mtype: str, rules, allowed, takes, solver: dict) -> None:
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


def parse_spec(raw: Any, source: Path | None = None, catalog: dict | None = None) -> Spec:
    """Validate every section, including each model and solver field against the estimator's rules, without
    loading any data (nor reading any file); SpecError lists every bad field at once, one per line.

    ``catalog``: the model types, dataset names and missing-value policies to check against (default: the live
    registry, which imports every estimator; :func:`quick_catalog` reads them from the generated manifest and
    then the estimator is not built).
    """
    live = catalog is None
    catalog = catalog or _live_catalog()
    registry = catalog["models"]
    if not isinstance(raw, dict):
        raise SpecError("spec: the file must contain a mapping with sections data, model, solver, output")
    problems = _Problems()   # every problem of the file is listed at once (nothing is read meanwhile)
    for key in raw:
        with problems.check():
            if key not in SECTIONS:
                raise _unknown("spec", str(key), SECTIONS)
    ok = {}
    for sec in ("data", "model"):
        with problems.check():
            if sec not in raw:
                raise SpecError(f"{sec}: missing section")
            if not isinstance(raw[sec], dict):
                raise SpecError(f"{sec}: expected a mapping, got {type(raw[sec]).__name__}")
            ok[sec] = True
    data = _parse_data(raw["data"], source, catalog, problems) if "data" in ok else {}
    model = dict(raw["model"]) if "model" in ok else {}
    with problems.check():
        if "constraints" in raw:   # a top-level constraints: list is the model's constraints
            if "constraints" in model:
                raise SpecError("constraints: given both at the top level and as model.constraints; keep one")
            model["constraints"] = raw["constraints"]
    mtype = model.pop("type", None)
    entry = None
    with problems.check():
        if "model" not in ok:
            pass
        elif mtype is None:
            raise SpecError(f"model.type: missing; choose one of {sorted(registry)}")
        elif mtype not in registry:
            hint = difflib.get_close_matches(str(mtype), list(registry), n=1)
            raise SpecError(f"model.type: unknown model {mtype!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                            + f"; choose one of {sorted(registry)}")
        else:
            entry = registry[mtype]
    params: dict = {}
    solver: dict = {}
    if entry is not None:
        params, solver = _parse_model(entry, mtype, model, raw, catalog, problems)
    out_path = None
    with problems.check():
        out = raw.get("output")
        if out is None:
            out = f"results/{source.stem if source else 'run'}"   # not written in the file: the working directory
            out_path = Path(out)
        elif not isinstance(out, str):
            raise SpecError(f"output: expected a folder path string, got {type(out).__name__}")
        else:
            out_path = _resolve(out, source)
    problems.raise_all()
    assert entry is not None and out_path is not None
    spec = Spec(data, mtype, params, solver, out_path, source, raw)
    if live:
        spec.build_estimator()
    return spec


def _parse_model(entry, mtype: str, model: dict, raw: dict, catalog: dict, problems: _Problems) -> tuple[dict, dict]:
    """The ``model`` and ``solver`` sections of a spec whose model type is known; problems are collected."""
    registry = catalog["models"]
    rules = entry.parameter_rules()
    allowed = entry.defaults()
    solver_params = set(SOLVER_TO_PARAM.values())
    params = {}
    bad = len(problems.errors)
    for key, value in model.items():
        with problems.check():
            if key in solver_params and key in allowed:
                raise SpecError(f"model.{key}: a solver setting; write it as solver.{key}")
            if key not in allowed:
                if key == "constraints":
                    raise SpecError(f"constraints: model type {mtype!r} takes no constraints (they are honoured by the "
                                    "MIO model types oct, flow-oct, benders-oct and ort-mio)")
                raise _unknown("model", str(key), {k for k in allowed if applies(entry, k)} - solver_params)
            if key == "constraints":
                value = _check_constraints_field(value)
            params[key] = _check_value(f"model.{key}", value, rules.get(key))
    for key in params:
        with problems.check():
            if not applies(entry, key, params):
                raise SpecError(f"model.{key}: does not apply to model type {mtype!r} (it is used by "
                                f"{applies_condition(entry, key, registry)}); remove it")
    if "random_state" in allowed and "random_state" not in params:   # reproducible unless asked otherwise
        params["random_state"] = catalog["default_random_state"]
    solver: dict = {}
    with problems.check():
        solver = _parse_solver(raw.get("solver") or {}, mtype, entry, problems)
    if len(problems.errors) == bad:   # the method's rules read the other fields: only when those are right
        with problems.check():
            _check_method_rules(entry, mtype, params, solver, registry)
    return params, solver


def _check_method_rules(entry, mtype: str, params: dict, solver: dict, registry) -> None:
    """The values the model type's method restricts (the estimator's method table), checked when the spec is
    read, in spec words: ``type: spot-dp`` with ``max_depth: 6`` fails here, not after loading the data."""
    given = {**params, **{SOLVER_TO_PARAM[k]: v for k, v in solver.items()}}
    effective = {**_effective(entry, params), **given}
    broken = method_violation(effective, entry.methods())
    if broken is None:
        return
    method, need = broken
    words = lambda text: spec_words(text, mtype, registry)   # noqa: E731
    if need.param in given:   # a type that fixes the method names itself once ("... with type: opt-mio: ...")
        owner = "" if "method" in entry.fixed else _estimator_name(entry)
        raise SpecError(f"model: {words(method_message(effective, method, need, owner))}")
    field = words(f"{need.param}=x").rsplit(": ", 1)[0]   # the default broke it: name the field to write
    default = repr(effective.get(need.param))
    raise SpecError(f"model: {field}: required with {words(f'method={method.name!r}')} (the default "
                    f"{_YAML_WORDS.get(default, default)} is not valid): {words(need.why)}")


def _check_constraints_field(value):
    """A spec's ``constraints:`` list: each entry a mapping ``{type: ..., field: value}``; the error names the
    entry and the field (:func:`opttrees.constraints.from_dict`). The list is kept as mappings (the estimator
    reads them), so the spec, its report and a grid cell stay plain data."""
    from .constraints.checks import check_constraints

    if value is None:
        return None
    bad = value if not isinstance(value, list) else next((v for v in value if not isinstance(v, dict)), None)
    if not isinstance(value, list) or bad is not None:
        got = f"{type(value).__name__} {value!r}" if not isinstance(value, list) else \
            f"an entry {type(bad).__name__} {bad!r}"
        raise SpecError(f"model.constraints: expected a list of mappings like {{type: statistical_parity, protected: "
                        f"sex, delta: 0.05}}; got {got}")
    try:
        check_constraints(value, "model.constraints")
    except InputError as exc:
        raise SpecError(str(exc)) from None
    return value


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, but a key given twice in one mapping is an error (YAML itself lets the last win
    silently, so ``max_depth: 2`` ... ``max_depth: 4`` ran with 4 and no word)."""


def _unique_mapping(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:   # unhashable key: the base constructor reports it
            break
        if first is not None:
            raise SpecError(f"{_key_path(loader, node)}{key}: given twice (lines {first} and "
                            f"{key_node.start_mark.line + 1}); keep one")
        seen[key] = key_node.start_mark.line + 1
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


def _key_path(loader, node) -> str:
    """'model.' for a duplicate inside the top-level ``model`` mapping ('' at the top level)."""
    root = getattr(loader, "_opttrees_root", None)
    if root is not None and root is not node:
        for k, v in root.value:
            if v is node:
                return f"{k.value}."
    return ""


def _construct_document_mapping(loader, node):
    if not hasattr(loader, "_opttrees_root"):
        loader._opttrees_root = node
    return _unique_mapping(loader, node, deep=True)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_document_mapping)


def _json_pairs(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise SpecError(f"{k}: given twice in one object; keep one")
        out[k] = v
    return out


def read_document(path: str | Path, what: str = "spec", error: type[OptTreesError] = SpecError) -> Any:
    """A YAML (or ``.json``) file's content; a missing or unparsable file, or a key given twice in one mapping,
    raises ``error`` naming ``what``."""
    p = Path(path)
    if not p.exists():
        raise error(f"{what} file not found: {p}")
    try:
        text = p.read_text()
        return (json.loads(text, object_pairs_hook=_json_pairs) if p.suffix == ".json"
                else yaml.load(text, Loader=_UniqueKeyLoader))
    except SpecError as exc:
        raise error(f"{what}: {p.name}: {exc}") from None
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise error(f"{what}: could not parse {p.name}: {exc}") from None


def load_spec(path: str | Path) -> Spec:
    return parse_spec(read_document(path), Path(path))


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


def _viewer_html(tree, title: str, report: dict, X, y) -> str:
    """index.html beside tree.json: the interactive viewer, with the training rows selectable."""
    from .viz.html import tree_to_html
    try:
        return tree_to_html(tree, title=title, summary=report, X=X, y=y)
    except InputError:   # rows the tree cannot route as they are (e.g. text columns it encodes itself)
        return tree_to_html(tree, title=title, summary=report)


def run_spec(spec: Spec, write: bool = True, locked: bool = False, lock_wait: float = 0.0) -> dict:
    """Fit the spec's model, write tree.json / tree.dot / index.html / report.json, and return the report.

    With ``write``, the output folder is locked for the whole run (:class:`~opttrees.outputs.FolderLock`: a
    second solve into it fails at once) and every file is written atomically, report.json last, naming the
    run's files with their sha256 (:class:`~opttrees.outputs.RunWriter`). ``locked``: the caller holds it;
    ``lock_wait``: seconds to wait for another live holder of the folder before failing.
    """
    if not write:
        return _run_spec(spec, None)
    if locked:   # the caller holds the folder's lock (the CLI takes it before the heavy imports)
        return _run_spec(spec, spec.output)
    from .outputs import FolderLock
    with FolderLock(spec.output, wait=lock_wait):
        return _run_spec(spec, spec.output)


def _run_spec(spec: Spec, out: Path | None) -> dict:
    entry = models()[spec.model_type]
    sd = prepare_spec_data(spec)
    X, y = sd.X, sd.y
    est = spec.build_estimator()
    t0 = time.perf_counter()
    try:
        entry.fit(est, X, y)
    except InputError as exc:
        raise SpecError(f"model (type {spec.model_type!r}) on this data: {spec_words(str(exc), spec.model_type)}"
                        ) from None
    except OptTreesError:   # solver and verification errors keep their own type and message
        raise
    except (ValueError, TypeError) as exc:   # a parameter value the estimator's own checks did not name
        raise SpecError(f"model: invalid setting ({type(exc).__name__}: "
                        f"{spec_words(str(exc), spec.model_type)})") from None
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
                 "categorical": {c: len(v) for c, v in enc.categories.items()}, "imputed": dict(enc.fill),
                 "constant_columns": list(sd.constant_columns), "dates": list(enc.dates)},
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
    if getattr(est, "constraint_values_", None):
        report["constraints"] = {"train": _clean(est.constraint_report(X, y))}
    if sd.X_test is not None:
        report["normalised_loss"]["test"] = _clean(normalised_loss(entry, est, sd.X_test, sd.y_test))
        report[f"test_{entry.metric}"] = _clean(sign * float(est.score(sd.X_test, sd.y_test)))
        report["n_test"] = int(len(sd.X_test))
        if "constraints" in report:
            report["constraints"]["test"] = _clean(est.constraint_report(sd.X_test, sd.y_test))
    if out is not None:
        from .outputs import RunWriter
        writer = RunWriter(out)
        if tree is not None:
            writer.write("tree.json", tree.to_json())
            writer.write("tree.dot", tree.to_dot())
            writer.write("index.html", _viewer_html(tree, f"{spec.model_type} — {out.name}", report, X, y))
        writer.write_report(report)
        report["output"] = str(out)
        report["_written"] = list(writer.files) + ["report.json"]
    report["objective_meaning"] = objective_meaning(spec.model_type)
    report["_tree_text"] = tree.export_text() if tree is not None else f"{type(est).__name__} (no single tree)"
    report["_solve_summary"] = res.summary() if res is not None else None
    return report
