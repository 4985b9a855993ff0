"""CLI paper cuts of a first use (issue 41): a spec checked whole with every problem listed at once, normalised
paths, ``predict`` needing only the columns the tree reads and saying what it wrote, no solver banner on stdout,
``--help`` naming every status and the true defaults, each type's time limit shown, and snippets that write only
into results/."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from opttrees.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "opttrees.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def test_every_problem_of_a_spec_is_listed_before_any_file_is_read(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("data: {csv: nowhere.csv, target: y, test_size: 2}\n"
                    "model: {type: oct, max_dept: 2, alpha: -1}\nsolver: {nme: highs}\noutput: 3\n")
    r = CliRunner().invoke(main, ["solve", str(spec)])
    assert r.exit_code == 2
    err = r.stderr
    assert "6 problems in the spec" in err
    for what in ("data.csv: file not found", "data.test_size: must be in (0, 1)", "model.max_dept: unknown field",
                 "model.alpha: expected", "solver.nme: unknown field", "output: expected a folder path"):
        assert what in err, (what, err)
    assert not (tmp_path / "results").exists()


def test_one_problem_reads_as_before(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("data: {dataset: iris}\nmodel: {type: cart, max_dpth: 2}\n")
    r = CliRunner().invoke(main, ["solve", str(spec)])
    assert r.exit_code == 2 and r.stderr.startswith("error: model.max_dpth: unknown field")


def test_paths_print_normalised_and_no_banner_reaches_stdout(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "s.yaml").write_text(
        "data: {dataset: iris}\nmodel: {type: oct, max_depth: 1, warm_start: greedy, dp_bound: false}\n"
        "solver: {name: highs, time_limit: 60}\noutput: ../results/iris_oct\n")
    r = cli("solve", "examples/s.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote results/iris_oct/" in r.stdout and ".." not in r.stdout
    assert "HiGHS" not in r.stdout and "Copyright" not in r.stdout
    assert r.stdout.splitlines()[-1].startswith("wrote results/iris_oct/")


def _iris_tree(tmp_path):
    from sklearn.datasets import load_iris

    from opttrees.spec import parse_spec, run_spec
    run_spec(parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart", "max_depth": 2},
                         "output": str(tmp_path / "t")}))
    X = load_iris(as_frame=True).data
    X.insert(0, "plant", [f"p{i}" for i in range(len(X))])
    return tmp_path / "t" / "tree.json", X


def test_predict_needs_only_the_columns_the_tree_reads(tmp_path):
    from opttrees.cli import columns_read
    from opttrees.tree import Tree
    tree, X = _iris_tree(tmp_path)
    t = Tree.from_json(tree)
    read = columns_read(t)
    assert read and len(read) < 4
    unread = [c for c in X.columns[1:] if c not in read]
    X.drop(columns=unread[:1]).to_csv(tmp_path / "few.csv", index=False)   # one column the tree never reads: gone
    out = tmp_path / "." / "pred.csv"
    r = CliRunner().invoke(main, ["predict", str(tree), str(tmp_path / "few.csv"), "-o", str(out), "--keep", "plant"])
    assert r.exit_code == 0, r.output
    assert f"wrote {os.path.normpath(out)}: 150 row(s), column(s) ['plant', 'prediction']" in r.stdout
    assert "ignored column(s)" in r.stderr and repr(unread[-1]) in r.stderr and "'plant'" not in r.stderr
    got = pd.read_csv(tmp_path / "pred.csv")
    assert (got["prediction"].to_numpy() == t.predict(X[t.feature_names])).all()
    X.drop(columns=read[:1]).to_csv(tmp_path / "lacks.csv", index=False)
    r = CliRunner().invoke(main, ["predict", str(tree), str(tmp_path / "lacks.csv")])
    assert r.exit_code == 2 and f"lacks the column(s) {read[:1]} the tree splits on" in r.stderr


def test_help_names_every_status_and_the_true_defaults():
    from opttrees.solvers.result import STATUSES
    r = CliRunner().invoke(main, ["--help"])
    for status in STATUSES:
        assert re.search(rf"\b{status}\b", r.output), status
    assert "warm_start: auto" in r.output and "warm_start: greedy" not in r.output
    assert "opttrees models --params" in r.output


def test_models_params_show_each_types_time_limit():
    from opttrees.registry import models
    r = CliRunner().invoke(main, ["models", "--params"])
    assert r.exit_code == 0
    for name, entry in models().items():
        if "time_limit" not in entry.defaults():
            continue
        lines = r.output.splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{name} "))
        line = next(ln for ln in lines[start + 1:] if ln.strip().startswith("time_limit="))
        default = entry.defaults()["time_limit"]
        assert line.strip().startswith(f"time_limit={default!r}"), (name, line)
        if default is None:
            assert "(no limit)" in line


def _snippet_writes() -> list[tuple[str, str]]:
    """(file, path) of every file a README or docs snippet writes by a literal name."""
    pat = re.compile(r"""(?:to_json|to_html|\.write|save_picture\([^,]+,|savefig|to_csv)\(?\s*["']([^"']+)["']""")
    out = []
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```(?:python|bash|console|sh)\n(.*?)```", f.read_text(), re.S):
            out += [(f.name, p) for p in pat.findall(block)]
            for line in block.splitlines():
                if line.strip().startswith("opttrees "):
                    args = shlex.split(line, comments=True)
                    out += [(f.name, args[i + 1]) for i, a in enumerate(args[:-1])
                            if a in ("-o", "--output", "--png", "--svg", "--html")]
    return out


def test_snippets_write_into_results_which_git_ignores():
    writes = _snippet_writes()
    assert len(writes) >= 5, writes
    assert [w for w in writes if not w[1].startswith("results/")] == []
    assert "results/" in (ROOT / ".gitignore").read_text().split()
