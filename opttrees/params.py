"""Parameter rules declared once, as data, and checked in one place.

Why: the estimators, the spec files and ``opttrees models --params`` used to carry their own copies of each
rule (and the copies disagreed). Now every estimator maps each constructor parameter to a list of rules in
``_parameter_rules`` (scikit-learn's ``_parameter_constraints`` idea; that module is private, so this is our
own small version). A value is valid when any of its rules accepts it. Each rule describes itself in one
line, so the estimator's error, the spec's error and the CLI listing all say the same thing.

Rules: :class:`Interval` (integers or reals between bounds), :class:`Options` (a fixed set of strings),
:data:`BOOLEAN`, :data:`NONE`, :data:`FALSE`, :data:`RANDOM_STATE`, :class:`InstanceOf` and :class:`Satisfies`
(a predicate with its description). :data:`SHARED_RULES` gives each common parameter name one meaning.
:func:`check_params` validates a whole parameter dict; :func:`check_param` one value.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
import numbers

import numpy as np

from .errors import InputError


class Rule:
    """One kind of accepted value; ``description`` is a noun phrase ("an integer >= 0")."""

    description = ""

    def accepts(self, value) -> bool:   # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.description}>"


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _num(v) -> str:
    return "inf" if v == math.inf else f"{v:g}" if isinstance(v, float) else str(v)


class Interval(Rule):
    """Integers (``kind="int"``) or real numbers (``kind="real"``, integers included) between bounds.

    ``low``/``high`` of None mean unbounded; ``closed`` is "both", "left", "right" or "neither". Reals must be
    finite unless ``allow_inf`` (then +inf is accepted, e.g. "no time limit").
    """

    def __init__(self, kind: str, low=None, high=None, closed: str = "both", allow_inf: bool = False,
                 description: str | None = None):
        if kind not in ("int", "real") or closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval({kind!r}, closed={closed!r})")
        self.kind, self.low, self.high, self.closed, self.allow_inf = kind, low, high, closed, allow_inf
        self.description = description or self._describe()

    def _describe(self) -> str:
        noun = "an integer" if self.kind == "int" else "a number" if self.allow_inf else "a finite number"
        lo_in, hi_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return f"{noun} in {'[' if lo_in else '('}{_num(self.low)}, {_num(self.high)}{']' if hi_in else ')'}"
        if self.low is not None:
            return f"{noun} {'>=' if lo_in else '>'} {_num(self.low)}"
        if self.high is not None:
            return f"{noun} {'<=' if hi_in else '<'} {_num(self.high)}"
        return noun

    def accepts(self, value) -> bool:
        if self.kind == "int":
            if not _is_int(value):
                return False
        else:
            if not _is_real(value) or math.isnan(value):
                return False
            if math.isinf(value) and not (self.allow_inf and value > 0):
                return False
        lo_in, hi_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not lo_in)):
            return False
        if self.high is not None and (value > self.high or (value == self.high and not hi_in)):
            return False
        return True


class Options(Rule):
    """One of a fixed set of strings (``ignore_case``: compared in lower case, e.g. solver names)."""

    def __init__(self, *values: str, ignore_case: bool = False):
        self.values = tuple(values)
        self.ignore_case = ignore_case
        names = [repr(v) for v in values]
        self.description = ("one of " + ", ".join(names)) if len(names) > 1 else names[0]
        if ignore_case:
            self.description += " (any case)"

    def accepts(self, value) -> bool:
        if not isinstance(value, str):
            return False
        return (value.lower() if self.ignore_case else value) in self.values


class InstanceOf(Rule):
    """An instance of one of ``types`` (described in words: the type names mean little to a spec writer)."""

    def __init__(self, types, description: str):
        self.types = types if isinstance(types, tuple) else (types,)
        self.description = description

    def accepts(self, value) -> bool:
        return isinstance(value, self.types) and not (bool not in self.types and isinstance(value, bool))


class Satisfies(Rule):
    """Any value ``predicate`` accepts; for shapes no simpler rule captures (array-likes, protocols)."""

    def __init__(self, predicate, description: str):
        self.predicate = predicate
        self.description = description

    def accepts(self, value) -> bool:
        try:
            return bool(self.predicate(value))
        except Exception:   # a predicate that cannot even inspect the value rejects it
            return False


class _Boolean(Rule):
    description = "True/False"

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))


class _NoneRule(Rule):
    description = "None"

    def accepts(self, value) -> bool:
        return value is None


class _RandomState(Rule):
    description = "None, an integer >= 0, a numpy RandomState or Generator"

    def accepts(self, value) -> bool:
        return (value is None or (_is_int(value) and value >= 0)
                or isinstance(value, (np.random.RandomState, np.random.Generator)))


BOOLEAN = _Boolean()
NONE = _NoneRule()
FALSE = Satisfies(lambda v: v is False or v is np.False_, "False")
RANDOM_STATE = _RandomState()

#: the rules shared by several estimators and layers (one copy each)
DEPTH = Interval("int", 0)
ALPHA = Interval("real", 0, closed="left")
MIN_SAMPLES_LEAF = Interval("int", 1)
TIME_LIMIT = Interval("real", 0, closed="neither", allow_inf=True, description="a number of seconds > 0 (inf: no limit)")
MIP_GAP = Interval("real", 0, 1, closed="left")
THREADS = Interval("int", 1)
SOLVER_NAME = Options("auto", "highs", "scip", ignore_case=True)
VERBOSITY = Interval("int", 0)
#: the flow papers' lambda: weight of the split count against the correct classifications
REGULARIZATION = Interval("real", 0, 1, closed="left")
N_JOBS = Satisfies(lambda v: _is_int(v) and v != 0, "an integer other than 0 (-1: all cores)")


def n_workers(n_jobs) -> int:
    """``n_jobs`` as a number of workers, with scikit-learn's (joblib's) meaning everywhere: None is 1, a positive
    number itself, -1 every core, -2 every core but one, ... (at least 1)."""
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + n_jobs) if n_jobs < 0 else max(1, n_jobs)
ARRAY_LIKE = Satisfies(lambda v: np.asarray(v, dtype=np.float64).ndim <= 2,
                       "a number or an array-like of numbers")

#: one meaning per parameter name, for every estimator and layer that takes a parameter of that name. An
#: estimator gets the rule of each of its parameters named here unless it declares its own (e.g. SPOTree's
#: ``max_depth`` may be None); lower layers check with ``check_param(name, value)``.
SHARED_RULES = {
    "max_depth": [DEPTH],
    "min_samples_leaf": [MIN_SAMPLES_LEAF],
    "alpha": [ALPHA],
    "n_restarts": [Interval("int", 1)],
    "split_type": [Options("parallel", "hyperplane")],
    "n_hyperplane_restarts": [Interval("int", 0)],
    "random_state": [RANDOM_STATE],
    "n_jobs": [N_JOBS, NONE],
    "verbose": [BOOLEAN, VERBOSITY],
    "time_limit": [TIME_LIMIT, NONE],
    "solver": [SOLVER_NAME],
    "mip_gap": [MIP_GAP],
    "threads": [THREADS],
    "regularization": [REGULARIZATION],
}


def describe(rules) -> str:
    """"a or b or c" for a parameter's rules (None last, as a spec writer reads it)."""
    words = [r.description for r in rules if r is not NONE] + (["None"] if NONE in rules else [])
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def is_valid(value, rules) -> bool:
    return any(r.accepts(value) for r in rules)


def check_param(name: str, value, rules=None, owner: str = ""):
    """``value`` unchanged when some rule accepts it, else an InputError naming ``name`` and what it accepts.

    ``rules`` default to the shared rules of that name (:data:`SHARED_RULES`).
    """
    rules = SHARED_RULES[name] if rules is None else rules
    if not is_valid(value, rules):
        where = f" for {owner}" if owner else ""
        raise InputError(f"{name}={value!r} is not valid{where}: expected {describe(rules)}")
    return value


def check_params(params: dict, rules: dict, owner: str = "") -> None:
    """Check every parameter that has rules (the one place an estimator's parameters are validated)."""
    for name, value in params.items():
        if name in rules:
            check_param(name, value, rules[name], owner)


# --------------------------------------------------------------------- rules of one method
@dataclass(frozen=True)
class When:
    """The condition of a :class:`Needs`: parameter ``param`` satisfies one of ``rules``.

    Why data and not a predicate: the spec manifest carries the method tables, so a spec file with a bad
    combination is rejected when it is read, before any heavy import."""

    param: str
    rules: tuple

    def holds(self, params: dict) -> bool:
        return any(rule.accepts(params.get(self.param)) for rule in self.rules)


@dataclass(frozen=True)
class Needs:
    """Under a method, parameter ``param`` must satisfy one of ``rules`` (when ``when`` holds), because
    ``why``: e.g. the DP builds parallel splits only, so ``split_type`` must be "parallel" with it."""

    param: str
    rules: tuple
    why: str
    when: When | None = None


@dataclass(frozen=True)
class Uses:
    """Under a method, parameter ``param`` means something, when every condition of ``when`` holds (a parameter
    and the values it must have): e.g. under method="mio", ``n_restarts`` is used only with
    ``warm_start="local-search"``. Made by :func:`uses`; read by :func:`applies_table`."""

    param: str
    when: tuple[tuple[str, tuple], ...] = ()


def uses(param: str, **when) -> Uses:
    """``uses("n_restarts", warm_start=("local-search",))``: see :class:`Uses` (each condition a tuple of values)."""
    return Uses(param, tuple((k, tuple(v)) for k, v in when.items()))


@dataclass(frozen=True)
class Method:
    """One way an estimator fits (``method="dp"``, ...), the parameter values it accepts and the parameters
    it uses.

    Why data: which parameters apply depends on the method; declared here, one checker
    (:func:`check_method`) names the parameter, the method and the reason, instead of hand-written ``if``s in
    every ``fit``; and the spec reads from ``uses`` where a parameter means something (:func:`applies_table`).
    """

    name: str
    needs: tuple[Needs, ...] = ()
    uses: tuple[Uses, ...] = ()


def methods(*items: Method) -> dict[str, Method]:
    """A method table keyed by name (an estimator's ``_methods``)."""
    return {m.name: m for m in items}


def applies_table(table: dict[str, Method]) -> dict[str, list[dict[str, set]]]:
    """Where each parameter some method of ``table`` declares (:class:`Uses`) means something: parameter -> the
    alternatives, each a dict {parameter: allowed values} ("method" among them) of which one must hold. A
    parameter no method declares means something always (it is not in the result); one that every method of the
    table declares alike needs no method. Alternatives with fewer conditions come first."""
    per_param: dict[str, dict[str, list[dict[str, set]]]] = {}
    for method in table.values():
        for u in method.uses:
            per_param.setdefault(u.param, {}).setdefault(method.name, []).append({k: set(v) for k, v in u.when})
    out: dict[str, list[dict[str, set]]] = {}
    for param, per_method in per_param.items():
        conditions = list(per_method.values())
        if len(per_method) == len(table) and all(c == conditions[0] for c in conditions):
            out[param] = [dict(c) for c in conditions[0]]
            continue
        alternatives: list[dict[str, set]] = []
        for name, conds in per_method.items():
            for cond in conds:
                same = next((a for a in alternatives if {k: v for k, v in a.items() if k != "method"} == cond), None)
                if same is not None:
                    same["method"].add(name)
                else:
                    alternatives.append({"method": {name}, **cond})
        out[param] = sorted(alternatives, key=len)
    return out


def method_violation(params: dict, table: dict[str, Method]) -> tuple[Method, Needs] | None:
    """The first rule of the chosen ``params["method"]`` that ``params`` break, or None."""
    method = table.get(params.get("method"))   # type: ignore[arg-type]
    if method is None:
        return None
    for need in method.needs:
        if need.when is not None and not need.when.holds(params):
            continue
        if not When(need.param, need.rules).holds(params):
            return method, need
    return None


def method_message(params: dict, method: Method, need: Needs, owner: str = "") -> str:
    """The one wording of a broken method rule (the estimators' and, in spec words, the spec's)."""
    who = f" for {owner}" if owner else ""
    return f"{need.param}={params.get(need.param)!r} is not valid with method={method.name!r}{who}: {need.why}"


def check_method(params: dict, table: dict[str, Method], owner: str = "") -> None:
    """Check the parameters the chosen ``params["method"]`` restricts (after :func:`check_params`)."""
    broken = method_violation(params, table)
    if broken is not None:
        raise InputError(method_message(params, *broken, owner))


# --------------------------------------------------------------------- helpers for the layers below
def check_depth(max_depth, limit: int, why: str = "") -> int:
    """An integer depth in [0, limit] (the :data:`DEPTH` rule plus a layer's own limit, explained by ``why``)."""
    check_param("max_depth", max_depth)
    if max_depth > limit:
        raise InputError(f"max_depth={max_depth} is above the limit {limit}" + (f": {why}" if why else ""))
    return int(max_depth)


def check_nonnegative(name: str, value) -> float:
    """A finite number >= 0 as a float, in the words of the DP's ``alpha`` and the leaf penalty (the
    :data:`ALPHA` rule's wording differs; its callers keep it)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number >= 0; got {value!r}") from None
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{name} must be a finite number >= 0; got {value!r}")
    return v


def check_alpha(alpha) -> float:
    """The complexity penalty (the :data:`ALPHA` rule), as a float."""
    return float(check_param("alpha", alpha))


def time_limit_seconds(time_limit) -> float | None:
    """A valid ``time_limit`` as the deadline wants it: None for no limit (None or +inf), else float seconds."""
    check_param("time_limit", time_limit)
    return None if time_limit is None or math.isinf(time_limit) else float(time_limit)
