import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# CI is derandomised (a red CI blocks landing); run HYPOTHESIS_PROFILE=explore locally to search new cases
settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
