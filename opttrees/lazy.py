"""Public names that load on first use (PEP 562), for packages whose imports are heavy.

``import opttrees`` must stay fast, and a DP fit must not import Pyomo through ``opttrees.solvers`` or
``opttrees.dp.bound``: such a package declares which submodule defines each public name and takes its
``__getattr__`` and ``__dir__`` from :func:`lazy_names`.
"""
from __future__ import annotations

import importlib


def lazy_names(package: str, names: dict[str, str], namespace: dict, public=(), subpackages: bool = False):
    """(``__getattr__``, ``__dir__``) for ``package``: ``names`` maps a public name to the (relative) module that
    defines it; the first use imports it and stores it in ``namespace`` (the package's globals), so later look-ups
    skip the hook. ``subpackages``: any other name is tried as a subpackage (``opttrees.solvers`` after a bare
    ``import opttrees``). ``public``: the names ``dir()`` lists besides the namespace's."""
    def __getattr__(name: str):
        if name in names:
            value = getattr(importlib.import_module(names[name], package), name)
            namespace[name] = value
            return value
        if subpackages:
            try:
                return importlib.import_module(f".{name}", package)
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public) | set(names))

    return __getattr__, __dir__
