"""Local-search restarts in parts (``restart_seeds``) and on a Dask cluster
(opttrees.heuristics.cluster.local_search_cluster): the same tree as one process with the same random_state and
n_restarts; bad input is named."""
import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from opttrees.cluster import chunks
from opttrees.data import prepare
from opttrees.errors import InputError
from opttrees.heuristics.local_search import local_search, seeds_for


def _data(seed=0, n=400):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_classes=3, random_state=seed)
    return prepare(np.round(X, 1), y)


def test_slices_of_the_seeds_run_the_same_restarts():
    d = _data(0)
    full = local_search(d, 3, n_restarts=24, random_state=5, return_all=True)
    seeds = seeds_for(5, 24)
    assert np.array_equal(np.sort(full.seeds), np.sort(seeds))
    bests = []
    for part in chunks(list(seeds), 5):
        r = local_search(d, 3, n_restarts=len(part), restart_seeds=part, return_all=True)
        # every restart of the part has the objective it has in the whole run (same seed -> same tree)
        for s, o in zip(r.seeds, r.objectives):
            assert o == full.objectives[list(full.seeds).index(s)]
        bests.append((float(np.round(r.objective, 12)), len(bests), r.tree))
    assert min(bests, key=lambda b: b[:2])[2].to_dict() == full.tree.to_dict()


def test_seeds_for_matches_a_random_state_object():
    assert np.array_equal(seeds_for(np.random.RandomState(3), 10), seeds_for(3, 10))
    with pytest.raises(InputError, match="n_restarts"):
        seeds_for(0, 0)


def test_empty_restart_seeds_is_named():
    with pytest.raises(InputError, match="restart_seeds is empty"):
        local_search(_data(0, 60), 2, restart_seeds=[])


def test_cluster_refuses_what_is_not_a_client_or_data():
    from opttrees.heuristics.cluster import local_search_cluster
    with pytest.raises(InputError, match="client must be a dask.distributed.Client.*got NoneType"):
        local_search_cluster(None, _data(0, 60), 2)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_gives_the_one_process_tree(client, seed):
    from opttrees.heuristics.cluster import local_search_cluster
    d = _data(seed)
    one = local_search(d, 3, n_restarts=30, random_state=seed, n_jobs=2)
    for parts in (None, 1, 7, 30):
        tree = local_search_cluster(client, d, 3, n_restarts=30, random_state=seed, parts=parts)
        assert tree.to_dict() == one.to_dict()


@pytest.mark.slow
def test_cluster_regression_and_random_state_objects(client):
    from opttrees.heuristics.cluster import local_search_cluster
    X, y = make_regression(n_samples=300, n_features=5, noise=5.0, random_state=0)
    d = prepare(X, 1000 * y + 7, task="regression")       # searched on a standardised y, mapped back
    one = local_search(d, 3, n_restarts=20, random_state=np.random.RandomState(4), alpha=0.01)
    tree = local_search_cluster(client, d, 3, n_restarts=20, random_state=np.random.RandomState(4), alpha=0.01,
                                parts=3)
    assert tree.to_dict() == one.to_dict()


@pytest.mark.slow
def test_cluster_bad_input(client):
    from opttrees.heuristics.cluster import local_search_cluster
    d = _data(0, 60)
    with pytest.raises(InputError, match="data must be a PreparedData"):
        local_search_cluster(client, np.zeros((3, 2)), 2)
    with pytest.raises(InputError, match="parts must be a positive integer"):
        local_search_cluster(client, d, 2, parts=-1)
    with pytest.raises(InputError, match="threads must be an integer >= 1"):
        local_search_cluster(client, d, 2, threads=1.5)
    with pytest.raises(InputError, match="n_restarts"):
        local_search_cluster(client, d, 2, n_restarts=0)
