"""``n_jobs`` has one meaning in every layer (scikit-learn's): -1 every core, -2 all but one, ..."""
import os

from opttrees.params import n_workers


def test_n_jobs_means_the_same_everywhere():
    cpu = os.cpu_count() or 1
    assert n_workers(None) == 1 and n_workers(1) == 1 and n_workers(3) == 3
    assert n_workers(-1) == cpu
    assert n_workers(-2) == max(1, cpu - 1)
    assert n_workers(-10 * cpu) == 1          # never below one worker
