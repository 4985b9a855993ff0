"""Exceptions with messages that name the problem, so users never see a traceback from deep inside Pyomo."""


class OptTreesError(Exception):
    """Base class of every error opttrees raises on purpose."""


class InputError(OptTreesError, ValueError):
    """The data or parameters given by the user cannot be used (shape, NaN, type, settings)."""


class NonNumericInputError(InputError, TypeError):
    """Features that are not numbers (strings, dicts, ...): an InputError that is also a TypeError, as for
    numpy and scikit-learn, so ``except TypeError`` code written for them keeps working."""


class SolverError(OptTreesError, RuntimeError):
    """A solver is unknown, not installed, or cannot handle the model it was given."""


class SpecError(OptTreesError, ValueError):
    """A model spec file is missing, malformed, or has a bad field (the message names the field)."""


class VerificationError(OptTreesError, RuntimeError):
    """A decoded tree does not reproduce the solver's objective (raised with ``strict`` verification; by
    default a :class:`VerificationWarning` is given instead and the result is marked "unverified")."""


class VerificationWarning(UserWarning):
    """A decoded tree does not reproduce the solver's objective within tolerance (on real data, usually the
    solver's feasibility tolerance): the tree is returned with its own objective and nothing is proven."""
