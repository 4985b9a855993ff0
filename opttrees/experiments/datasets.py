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


def dataset_names() -> list[str]:
    return sorted(_LOADERS)


def load_dataset(name: str) -> tuple[pd.DataFrame, pd.Series]:
    if name not in _LOADERS:
        raise InputError(f"unknown dataset {name!r}; built-in datasets: {dataset_names()}")
    return _LOADERS[name]()


def load_csv(path: str | Path, target: str, features: list[str] | None = None) -> tuple[pd.DataFrame, pd.Series]:
    p = Path(path)
    if not p.exists():
        raise InputError(f"data file not found: {p}")
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        raise InputError(f"could not read CSV {p}: {exc}") from None
    if target not in df.columns:
        raise InputError(f"target column {target!r} is not in {p.name}; columns are {list(df.columns)}")
    y = df[target]
    X = df.drop(columns=[target])
    if features is not None:
        missing = [f for f in features if f not in df.columns]
        if missing:
            raise InputError(f"feature column(s) {missing} are not in {p.name}")
        X = df[list(features)]
    return X, y
