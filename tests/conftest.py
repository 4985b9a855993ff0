"""Shared fixtures and settings for every test folder; puts ``tests/`` on ``sys.path`` for the oracle package.

Tests import their oracles and shared data as ``from oracles.bruteforce import ...`` (``tests/oracles/``), never
from another test module (``tests/test_architecture.py`` checks this).
"""
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

# CI is derandomised (a red CI blocks landing); run HYPOTHESIS_PROFILE=explore locally to search new cases
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def client():
    """A Dask Client on a two-worker cluster of threads (this process), for the cluster tests; skipped without the
    ``dask`` extra."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
