"""The data and constraints packages (issue 42): one home per name, public names from the package, light imports,
and tree JSON files written before the move still load."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from opttrees.tree import Tree

#: a tree saved by opttrees before the data package (main at 2a28425): a one-hot encoded text column
OLD_TREE_JSON = (
    '{"format":"opttrees.Tree/1","task":"classification","n_features":4,"feature_names":["colour=blue",'
    '"colour=green","colour=red","size"],"classes":[0,1],"children_left":[1,-1,-1],"children_right":[2,-1,-1],'
    '"feature":[2,-1,-1],"threshold":[0.5,0.0,0.0],"value":[[5.0,3.0],[5.0,0.0],[0.0,3.0]],"label":[0,0,1],'
    '"coef":null,"extras":{"n_node_samples":[8,5,3],"weighted_n_node_samples":[8.0,5.0,3.0],'
    '"impurity":[0.46875,0.0,0.0]},"encoding":{"columns":["colour","size"],"categories":{"colour":["blue",'
    '"green","red"]},"missing":"error","fill":{}},"display_bounds":[[0.0,1.0],[null,null],[null,null]]}')


def test_a_tree_saved_before_the_move_loads_and_predicts_from_a_raw_table(tmp_path):
    from opttrees.data.table import TableEncoding

    path = tmp_path / "tree.json"
    path.write_text(OLD_TREE_JSON)
    tree = Tree.from_json(path)
    assert isinstance(tree.encoding, TableEncoding)
    assert tree.encoding.feature_names == ["colour=blue", "colour=green", "colour=red", "size"]
    X = pd.DataFrame({"colour": ["red", "blue", "green", "red"], "size": [1.0, 9.0, 3.0, 4.0]})
    assert tree.predict(X).tolist() == [1, 0, 0, 1]
    assert Tree.from_json(tree.to_json()).to_dict() == tree.to_dict()    # and saves the same way again


@pytest.mark.parametrize("package", ["opttrees.data", "opttrees.constraints"])
def test_each_public_name_is_the_object_of_its_one_module(package):
    import importlib

    pkg = importlib.import_module(package)
    assert pkg.__all__, package
    from pathlib import Path

    submodules = {p.stem for p in Path(pkg.__file__).parent.glob("*.py")}
    assert not submodules & set(pkg.__all__), "a submodule named like a public name shadows it once imported"
    for module in set(pkg._LAZY.values()):
        importlib.import_module(module, package)
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        module = importlib.import_module(pkg._LAZY[name], package)
        assert getattr(module, name) is obj, f"{package}.{name}"
        home = getattr(obj, "__module__", None)
        if home is not None and callable(obj):   # a class or function is defined where the package says
            assert home == module.__name__, f"{package}.{name} is defined in {home}, listed as {module.__name__}"
    with pytest.raises(AttributeError, match="no attribute"):
        pkg.no_such_name  # noqa: B018


def loaded(imports: str) -> set[str]:
    """Which of scikit-learn and Pyomo a fresh interpreter has loaded after ``imports``."""
    code = f"import sys, {imports}; print(' '.join(m for m in ('sklearn', 'pyomo') if m in sys.modules))"
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())


def test_the_tree_loads_no_scikit_learn_and_the_pareto_dp_no_pyomo():
    assert loaded("opttrees.tree, opttrees.data, opttrees.data.table, opttrees.data.prepared") == set()
    assert loaded("opttrees.data.binarizers") == {"sklearn"}     # the guard sees what it should
    assert "pyomo" not in loaded("opttrees.constraints, opttrees.constraints.pareto, opttrees.constraints.fairness_dp")
    assert "pyomo" in loaded("opttrees.constraints.declarations")


def test_spo_cost_data_has_one_check():
    from opttrees.data.costs import check_costs_fit, prepare_costs
    from opttrees.errors import InputError
    from opttrees.oracles import GridShortestPath

    prob = GridShortestPath(2, 2)
    X, C = np.arange(6.0).reshape(3, 2), np.ones((3, prob.n_decisions))
    data = prepare_costs(prob, X, C, feature_names=["a", "b"])
    assert data.feature_names == ["a", "b"] and data.extra["costs"].shape == C.shape
    with pytest.raises(InputError, match="X has 3 rows but C has 2"):
        check_costs_fit(prob, X, C[:2], None)
