"""The shared estimator base and the solver mixin: parameter rules as data, checked once at ``fit``.

Every public estimator derives from :class:`OptTreesEstimator`, which gives each parameter named in
:data:`opttrees.params.SHARED_RULES` its one shared rule (``max_depth``, ``random_state``, ``time_limit``,
...), and declares only its own parameters' rules in ``_parameter_rules``; the rules of its bases are merged
in, so :class:`SolverMixin` declares ``solver``, ``time_limit``, ``mip_gap``, ``threads`` and ``verbose`` once
for every MIO estimator. The spec files and ``opttrees models --params`` read the same declarations
(:func:`parameter_rules`).

Seeds: ``random_state`` is a setting of the whole fit, not of the solver: it seeds start trees, restarts and
validation splits, and the solver's seed is derived from it. Every estimator with randomness defaults to
:data:`DEFAULT_RANDOM_STATE` (0), so a fit is reproducible unless asked otherwise (``random_state=None``: a
fresh seed each fit, as in scikit-learn).

To add an estimator: derive from :class:`OptTreesEstimator` (and :class:`SolverMixin` if it solves a MIO),
make ``__init__`` keyword-only and store the parameters unchanged with ``store_params(self, locals())``
(``random_state=DEFAULT_RANDOM_STATE`` if it has randomness), declare the rules of the parameters
:data:`~opttrees.params.SHARED_RULES` does not cover, and write the hooks of the one ``fit``
(:mod:`opttrees.estimators.skeleton`): ``_prepare`` (the data, once) and one ``_fit_<method>`` per method;
``tests/estimators/test_params.py`` checks that every parameter has a rule and ``tests/cli/test_spec_runs.py``
that every seed defaults to 0.
"""
from __future__ import annotations

import inspect

from sklearn.base import BaseEstimator

from ..params import FALSE, NONE, SHARED_RULES, Options, check_method, check_params, time_limit_seconds
from .common import solver_seed

#: the seed of every estimator with randomness unless told otherwise (and of every spec run)
DEFAULT_RANDOM_STATE = 0
#: the solver settings every MIO estimator takes (the spec's ``solver:`` section sets them); ``random_state``
#: is a shared rule of every estimator (a model setting in specs), the solver's seed comes from it
SOLVER_RULES = {name: SHARED_RULES[name] for name in ("solver", "time_limit", "mip_gap", "threads", "verbose")}


def store_params(est, args: dict) -> None:
    """Store an ``__init__``'s arguments on ``est`` unchanged, each under its own name: scikit-learn's rule
    (``get_params`` and ``clone`` read them back by the signature's names), stated once here instead of one
    ``self.name = name`` line per parameter in every estimator. Call it as ``store_params(self, locals())``,
    the whole body of ``__init__`` (``locals()`` then holds exactly the arguments, plus ``self``)."""
    for name, value in args.items():
        if name != "self" and not name.startswith("__"):   # __class__: the cell of a zero-argument super()
            setattr(est, name, value)


def warm_start_rules(*heuristics: str) -> list:
    """The one ``warm_start`` vocabulary of every MIO estimator: the name of the heuristic whose tree starts
    the solver ("greedy": CART / greedy SPOT; "local-search" where offered), or None for no start. False
    means None too: scikit-learn's ``check_estimator`` sets ``warm_start=False`` ("no warm start")."""
    return [Options(*heuristics), NONE, FALSE]


def parameter_rules(cls) -> dict:
    """The rules of ``cls`` merged over its bases (a subclass's rule for a name wins), in signature order."""
    merged: dict = {}
    for klass in reversed(cls.__mro__):
        merged.update(vars(klass).get("_parameter_rules", {}))
    names = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    return {n: merged[n] for n in names if n in merged}


class OptTreesEstimator(BaseEstimator):
    """Base of every opttrees estimator: ``_parameter_rules`` declared as data, checked by ``_check_params``."""

    _parameter_rules: dict = SHARED_RULES

    @classmethod
    def parameter_rules(cls) -> dict:
        return parameter_rules(cls)

    #: the estimator's methods and the parameter values each accepts (:class:`~opttrees.params.Method`), if it
    #: has a ``method`` parameter
    _methods: dict = {}

    def _check_params(self) -> None:
        """The one check of every parameter at ``fit`` (InputError naming the parameter): each value against its
        rules (what a spec file checks too), then the values the chosen ``method`` restricts."""
        check_params(self.get_params(deep=False), self.parameter_rules(), type(self).__name__)

    def _check_method(self) -> None:
        """The values the chosen ``method`` restricts (its :class:`~opttrees.params.Method` in ``_methods``),
        after :meth:`_check_params`."""
        check_method(self.get_params(deep=False), self._methods, type(self).__name__)

    def _time_limit(self) -> float | None:
        """``time_limit`` for the fit's deadline: None when there is none (None or inf)."""
        return time_limit_seconds(self.time_limit)

    # ------------------------------------------------------------------ the one fit (estimators.skeleton)
    #: the stage the data is prepared in (``fit_timings_``)
    _prepare_stage = "prepare"
    #: methods that run without the fit's deadline (they have no partial tree to return)
    _untimed_methods: tuple = ()

    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y): the one template of every estimator (:func:`opttrees.estimators.skeleton.run_fit`);
        ``time_limit`` covers the whole fit and Ctrl-C returns the best tree so far
        (:mod:`opttrees.estimators.fitcontrol`)."""
        return self._fit(X, y, sample_weight=sample_weight)

    def _fit(self, X, *target, **fit_args):
        """The template ``fit`` with the estimator's own targets and fit arguments (a ``fit`` of another
        signature forwards to it)."""
        from .skeleton import run_fit

        return run_fit(self, X, target, fit_args)


class SolverMixin:
    """``solver``, ``time_limit``, ``mip_gap``, ``threads``, ``verbose`` for MIO estimators.

    The solver's own seed is derived from the estimator's ``random_state``
    (:func:`~opttrees.estimators.common.solver_seed`).
    """

    _parameter_rules = SOLVER_RULES
    # the parameters read here, set by each estimator's __init__ (scikit-learn style; values checked by SOLVER_RULES)
    solver: str
    mip_gap: float
    threads: int
    random_state: object   # None, an int, a RandomState or a Generator (see solver_seed)
    verbose: bool | int

    def _auto_solver(self) -> tuple[str, str]:
        """(solver, why) that ``solver="auto"`` picks for this estimator's model: HiGHS unless a subclass says
        otherwise (SCIP for lazy-constraint models and quadratic objectives)."""
        return "highs", "a linear MIO: HiGHS"

    def _auto(self, **request):
        """The planner of this fit's MIO (:class:`~opttrees.dp.planner.Auto`): the solver settings, plus the
        ``warm_start`` / ``dp_bound`` / DP cost / route ``request``."""
        from ..dp.planner import Auto

        request.setdefault("warm_start", getattr(self, "warm_start", None))
        return Auto(solver=self.solver, auto_solver=self._auto_solver(), **request)

    def _solver_name(self) -> str:
        """The solver this fit uses: ``solver`` in lower case, with ``"auto"`` resolved."""
        return self._auto().solver_plan()[0]

    def _run_mio(self, ctl, job, **request):
        """:func:`~opttrees.estimators.pipeline.run_mio` planned with this estimator's settings (:meth:`_auto`,
        ``request``: what it asks of the planner); sets ``solve_result_`` and returns the outcome (its tree, source,
        model and DP run)."""
        from .pipeline import run_mio

        job.auto = self._auto(**request)
        job.solver_options = job.solver_options or self._solver_options()
        out = run_mio(job, ctl, type(self).__name__, verbose=self.verbose)
        self.solve_result_ = out.result
        return out

    def _solver_options(self) -> dict:
        """Keyword arguments for :meth:`FitControl.solve` (the solver comes from the plan, the time limit from the
        fit's deadline)."""
        return dict(mip_gap=self.mip_gap, threads=getattr(self, "threads", 1), seed=solver_seed(self.random_state),
                    verbose=self.verbose)
