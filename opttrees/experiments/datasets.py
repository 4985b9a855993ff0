"""Built-in datasets by name and CSV loading, with errors that say what is wrong."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import InputError

_LOADERS: dict[str, Callable[[], tuple[pd.DataFrame, pd.Series]]] = {}


def register_dataset(name: str):
    """Decorator: make ``load_dataset(name)`` return the function's (X, y)."""
    def deco(fn):
        _LOADERS[name] = fn
        return fn
    return deco


def _sklearn(loader):
    b = loader(as_frame=True)
    X = b.data
    y = b.target.map(dict(enumerate(b.target_names))) if hasattr(b, "target_names") else b.target
    return X, y.rename("target")


@register_dataset("iris")
def _iris():
    from sklearn.datasets import load_iris
    return _sklearn(load_iris)


@register_dataset("wine")
def _wine():
    from sklearn.datasets import load_wine
    return _sklearn(load_wine)


@register_dataset("breast_cancer")
def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    return _sklearn(load_breast_cancer)


@register_dataset("diabetes")
def _diabetes():
    """Regression (442 x 10, disease progression): bundled with scikit-learn, so specs for ORT run offline."""
    from sklearn.datasets import load_diabetes
    return _sklearn(load_diabetes)


def _spo(name):
    def load(**params):
        from .spo_data import spo_dataset
        X, C, _ = spo_dataset(name, **params)
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        return X, pd.DataFrame(C, columns=[f"c{k}" for k in range(C.shape[1])])
    return load


# SPO data: X and a DataFrame of cost vectors (one column per decision); ``data.params`` reach the generator
register_dataset("shortest_path")(_spo("shortest_path"))
register_dataset("illustrative")(_spo("illustrative"))


def _robust(name):
    def load():
        from .datasets_robust import load as load_robust
        ds = load_robust(name)
        return ds.X, pd.Series(ds.y, name="target")
    return load


# regenerated offline from their definitions (checked against documented row and class counts)
for _name in ("balance-scale", "monk1", "monk2", "monk3", "tic-tac-toe"):
    register_dataset(_name)(_robust(_name))


def dataset_names() -> list[str]:
    return sorted(_LOADERS)


def load_dataset(name: str, **params) -> tuple[pd.DataFrame, pd.Series]:
    """(X, y) of a built-in dataset; ``params`` go to generators (e.g. n, deg, noise, seed for shortest_path)."""
    if name not in _LOADERS:
        raise InputError(f"unknown dataset {name!r}; built-in datasets: {dataset_names()}")
    try:
        return _LOADERS[name](**params)
    except TypeError as exc:
        raise InputError(f"dataset {name!r} does not accept parameters {sorted(params)}: {exc}") from None


def load_csv(path: str | Path, target, features: list[str] | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """Read a CSV; ``target`` is one column name, or a list of names (e.g. the cost columns of SPO data)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"data file not found: {p}")
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise InputError(f"could not read CSV {p}: {exc}") from None
    targets = list(target) if isinstance(target, (list, tuple)) else [target]
    missing = [t for t in targets if t not in df.columns]
    if missing:
        raise InputError(f"target column(s) {missing} not in {p.name}; columns are {list(df.columns)}")
    y = df[targets] if isinstance(target, (list, tuple)) else df[target]
    X = df.drop(columns=targets)
    if features is not None:
        missing = [f for f in features if f not in df.columns]
        if missing:
            raise InputError(f"feature column(s) {missing} are not in {p.name}")
        X = df[list(features)]
    return X, y
