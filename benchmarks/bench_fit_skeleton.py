"""Issue 42: each built-in estimator's own fit-path lines, and the steps and files of one default MIO classifier fit.

    python benchmarks/bench_fit_skeleton.py                 # this checkout
    python benchmarks/bench_fit_skeleton.py --root DIR      # another checkout (e.g. `git archive <rev>` unpacked)

Lines: every method of the estimator class (and of the private base classes in its module) except ``__init__``
and the public API other than ``fit``, plus the module-level helpers of its module that only the fit path calls;
"all" counts from ``def`` to the end of the body, "code" leaves out docstrings, comments and blank lines. The
prescriptive module's two estimators are counted together and each with their shared base (``EACH``).
Steps: one ``OptimalTreeClassifier(max_depth=2).fit`` on iris after a first fit (imports and kernels loaded),
traced with ``sys.setprofile``: the distinct calls the orchestrating functions make (the template fit and its
epilogue, the MIO hook, ``_run_mio``, ``run_mio``; before: ``fit``, ``_mio``), the opttrees files with code run,
and how often ``make_problem`` runs.
"""
from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from pathlib import Path

API = {"predict", "predict_proba", "predict_cost", "predict_outcomes", "score", "policy_value", "training_loss",
       "worst_case_score", "shift_score", "calibrated_costs", "constraint_report", "fairness_gap", "parameter_rules"}
SKIP = {"__init__", "_auto_solver", "_sklearn_criterion", "_check_fitted", "_fitted_tree", "_rho_for"}
ESTIMATORS = {"classifier": ["OptimalTreeClassifier"], "regressor": ["OptimalTreeRegressor"],
              "flow": ["FlowOCTClassifier", "BendersOCTClassifier"], "spo": ["SPOTree"],
              "robust": ["RobustTreeClassifier"],
              "prescriptive": ["_PrescriptiveTreeBase", "OptimalPrescriptiveTree", "PolicyTree"]}
HELPERS = {"classifier": ["fit_dp_tree"], "flow": ["_constraint_context_for", "finish_flow_fit", "flow_fit",
                                                      "model_tree", "_cart_on_columns"],
           "prescriptive": ["_fit_tree", "_fit_mio"]}


def _code_lines(lines: list[str], node) -> int:
    doc: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.body and isinstance(n.body[0], ast.Expr) \
                and isinstance(getattr(n.body[0], "value", None), ast.Constant) and isinstance(n.body[0].value.value, str):
            doc.update(range(n.body[0].lineno, n.body[0].end_lineno + 1))
    return sum(1 for i in range(node.lineno, node.end_lineno + 1)
               if lines[i - 1].strip() and not lines[i - 1].strip().startswith("#") and i not in doc)


#: estimators sharing a private base in one module, also counted one by one (base + own class)
EACH = {"prescriptive": {"OptimalPrescriptiveTree": ["_PrescriptiveTreeBase", "OptimalPrescriptiveTree"],
                         "PolicyTree": ["_PrescriptiveTreeBase", "PolicyTree"]}}


def count(root: Path, mod: str, classes: list[str]) -> tuple[int, int]:
    """(all, code) lines of the fit path of ``classes`` (and ``HELPERS[mod]``) in ``estimators/<mod>.py``."""
    text = (root / "opttrees" / "estimators" / f"{mod}.py").read_text()
    lines, every, code = text.splitlines(), 0, 0
    for node in ast.parse(text).body:
        funcs = [node] if isinstance(node, ast.FunctionDef) and node.name in HELPERS.get(mod, []) else []
        if isinstance(node, ast.ClassDef) and node.name in classes:
            funcs = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name not in SKIP
                     and f.name not in API and (f.name == "fit" or f.name.startswith("_"))]
        for f in funcs:
            every += f.end_lineno - f.lineno + 1
            code += _code_lines(lines, f)
    return every, code


def line_counts(root: Path) -> None:
    print("own fit-path lines per estimator (all / code):")
    for mod, classes in ESTIMATORS.items():
        every, code = count(root, mod, classes)
        print(f"  {mod:13s} {every:4d} / {code:4d}")
        for name, each in EACH.get(mod, {}).items():
            if all(c in (root / "opttrees" / "estimators" / f"{mod}.py").read_text() for c in each):
                every, code = count(root, mod, each)
                print(f"    {name + ' (with the shared base)':45s} {every:4d} / {code:4d}")


TRACE = r"""
import os, sys
from sklearn.datasets import load_iris
import opttrees.heuristics.core as core
from opttrees import OptimalTreeClassifier
X, y = load_iris(return_X_y=True)
OptimalTreeClassifier(max_depth=2).fit(X, y)
root = os.path.dirname(__import__("opttrees").__file__)
ORCH = {"estimators/classifier.py:fit", "estimators/classifier.py:_mio", "estimators/pipeline.py:run_mio",
        "estimators/skeleton.py:run_fit", "estimators/skeleton.py:epilogue", "estimators/classifier.py:_fit_mio",
        "estimators/base.py:_run_mio", "estimators/base.py:_fit", "estimators/base.py:fit"}
files, edges, made = set(), set(), [0]
def prof(frame, event, arg):
    if event != "call" or not frame.f_code.co_filename.startswith(root):
        return
    f = os.path.relpath(frame.f_code.co_filename, root)
    files.add(f)
    if f == "heuristics/core.py" and frame.f_code.co_name == "make_problem":
        made[0] += 1
    up = frame.f_back
    if up is not None and up.f_code.co_filename.startswith(root) and not frame.f_code.co_name.startswith("<"):
        caller = os.path.relpath(up.f_code.co_filename, root) + ":" + up.f_code.co_name
        if caller in ORCH:
            edges.add((caller, f + ":" + frame.f_code.co_name))
sys.setprofile(prof)
OptimalTreeClassifier(max_depth=2).fit(X, y)
sys.setprofile(None)
print(f"one default MIO classifier fit: {len(edges)} orchestration steps over "
      f"{len({p.split(':')[0] for e in edges for p in e})} files; {len(files)} opttrees files run; "
      f"make_problem {made[0]} time(s)")
"""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1],
                    help="the checkout to measure (default: this one)")
    args = ap.parse_args(argv)
    line_counts(args.root)
    env = {**os.environ, "PYTHONPATH": str(args.root)}
    out = subprocess.run([sys.executable, "-c", TRACE], env=env, capture_output=True, text=True, cwd="/")
    print(out.stdout.strip().splitlines()[-1] if out.returncode == 0 else out.stderr)


if __name__ == "__main__":
    main()
