"""The package's public names are derived from one list (``opttrees.estimators.__all__``) and load on first use."""
import subprocess
import sys

import pytest

import opttrees
import opttrees.estimators as estimators


def test_every_estimator_is_a_public_name_of_the_package():
    assert set(estimators.__all__) <= set(opttrees.__all__)
    assert len(set(opttrees.__all__)) == len(opttrees.__all__)
    for name in estimators.__all__:
        cls = getattr(opttrees, name)
        assert cls is getattr(estimators, name) and cls.__name__ == name
        assert cls.__module__.startswith("opttrees.estimators.")
    # the rest of the public names resolve too
    for name in set(opttrees.__all__) - set(estimators.__all__):
        assert getattr(opttrees, name) is not None


def test_reading_the_names_imports_no_estimator():
    code = ("import sys, opttrees, opttrees.estimators as e; names = list(opttrees.__all__) + list(e.__all__); "
            "print(sorted(m for m in sys.modules if m.startswith('opttrees.estimators.') or m == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchEstimator'"):
        estimators.NoSuchEstimator  # noqa: B018
