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
