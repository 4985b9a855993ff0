"""The synthetic-study generators (benchmarks/synthetic_studies.py): the ground truth really is the truth."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "synthetic_studies.py"


@pytest.fixture(scope="module")
def ss():
    spec = importlib.util.spec_from_file_location("synthetic_studies", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["synthetic_studies"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("split_density", [1, 3])
@pytest.mark.parametrize("seed", range(3))
def test_classification_truth_labels_its_data_and_opttrees_tree_agrees(ss, split_density, seed):
    rng = np.random.default_rng(seed)
    truth = ss.random_truth(rng, p=4, depth=3, split_density=split_density)
    X, y = ss.sample(truth, 2000, rng)
    assert np.array_equal(truth.predict(X), y)
    # the library's own routing (left iff a·x < b) reproduces every label: the exported Tree is the same tree
    assert np.array_equal(truth.to_tree().predict(X), y)
    # every leaf holds data (thresholds are quantiles inside the cell) and sibling leaves differ
    assert len(np.unique(truth.apply(X))) == 8
    assert np.all(truth.leaf_value[0::2] != truth.leaf_value[1::2])
    if split_density == 1:
        assert all(len(s) == 1 for s in truth.splits)


def test_local_search_recovers_a_parallel_truth_on_noiseless_data(ss):
    from opttrees import OptimalTreeClassifier

    rng = np.random.default_rng(7)
    truth = ss.random_truth(rng, p=3, depth=2)
    X, y = ss.sample(truth, 300, rng)
    oct_ = OptimalTreeClassifier(method="local-search", max_depth=2, n_restarts=20, random_state=0).fit(X, y)
    assert oct_.score(X, y) == 1.0  # a depth-2 tree with zero training error exists: the truth


def test_label_noise_flips_the_stated_fraction(ss):
    rng = np.random.default_rng(1)
    truth = ss.random_truth(rng, p=3, depth=2)
    X, y = ss.sample(truth, 1000, rng, noise=0.1)
    assert np.sum(truth.predict(X) != y) == 100


def test_linear_leaf_truth_is_exact_and_sparse(ss):
    rng = np.random.default_rng(3)
    truth = ss.random_truth(rng, p=5, depth=2, task="regression", regression_density=2)
    X, y = ss.sample(truth, 500, rng)
    slopes = truth.leaf_value[:, 1:]
    assert np.all(((slopes != 0).sum(axis=1) >= 1) & ((slopes != 0).sum(axis=1) <= 2))
    leaf = truth.apply(X)
    for t in range(4):  # each leaf's data is exactly linear: least squares recovers the leaf model
        rows = leaf == t
        A = np.column_stack([np.ones(rows.sum()), X[rows]])
        assert np.allclose(np.linalg.lstsq(A, y[rows], rcond=None)[0], truth.leaf_value[t], atol=1e-8)
    assert np.allclose(truth.to_tree().predict(X), y)


def test_generator_rejects_bad_densities(ss):
    with pytest.raises(ValueError, match="split_density"):
        ss.random_truth(np.random.default_rng(0), p=3, depth=2, split_density=4)


def test_quick_run_writes_table_and_plot(ss, tmp_path):
    out = ss.main(["--quick", "--studies", "parallel", "linear", "--reps", "1", "--out", str(tmp_path)])
    for name in ("results.csv", "summary.md", "study.png"):
        assert (out / name).stat().st_size > 0
    text = (out / "summary.md").read_text()
    assert "| depth | CART | greedy | OCT | OCT-H |" in text and "| n_train | CART | ORT | ORT-L |" in text
