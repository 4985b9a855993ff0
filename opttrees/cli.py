"""The ``opttrees`` command line: solve a model spec, show or apply a saved tree, list datasets/models."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import click

from .errors import OptTreesError


def _fail(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="opttrees")
def main():
    """opttrees — optimal decision trees as MIO models (Pyomo + HiGHS/SCIP) and fast heuristics.

    \b
    Commands:
      solve SPEC      fit the model a spec file describes; write tree.json, tree.dot, report.json
      show TREE       print a saved tree (text or DOT)
      predict TREE    predict a CSV with a saved tree (no solver needed)
      models          list model types usable in specs
      datasets        list built-in datasets

    \b
    Spec file (YAML or JSON):
      data:   {dataset: iris}  or  {csv: file.csv, target: column, features: [..]}
              optional: test_size: 0.25, split_seed: 0
      model:  {type: oct, max_depth: 2, min_samples_leaf: 1, alpha: 0.0, warm_start: greedy}
      solver: {name: highs|scip, time_limit: 60, mip_gap: 1e-6, threads: 1, seed: 0, verbose: false}
      output: results/my-run

    \b
    Solve statuses: optimal (proven), time_limit, interrupted, limit (feasible, not proven),
    infeasible, unbounded, no_solution, error.  Gap = |objective - bound| / |objective|.
    """


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(file_okay=False), help="override the spec's output folder")
@click.option("--time-limit", type=float, help="override solver.time_limit (seconds)")
@click.option("--solver", type=click.Choice(["highs", "scip"]), help="override solver.name")
@click.option("--verbose", "-v", is_flag=True, help="show live solver progress (incumbent, bound, gap, time)")
@click.option("--quiet", "-q", is_flag=True, help="print only the summary line")
def solve(spec, output, time_limit, solver, verbose, quiet):
    """Fit the model described by SPEC (YAML/JSON) and write its outputs.

    Ctrl-C stops the fit within about a second, writes the best tree found so far and its report with
    status "interrupted", and exits with code 130; a second Ctrl-C quits at once (nothing more written).
    """
    from .interrupt import STOP, stop_on_sigint

    try:
        with stop_on_sigint():
            report = _solve(spec, output, time_limit, solver, verbose, quiet)
            interrupted = STOP.is_set() or report.get("status") == "interrupted"
    except KeyboardInterrupt:
        click.echo("interrupted (Ctrl-C twice, or before any tree existed): nothing more was written", err=True)
        sys.exit(130)
    if interrupted:
        click.echo("interrupted (Ctrl-C): wrote the best tree found so far", err=True)
        sys.exit(130)


def _solve(spec, output, time_limit, solver, verbose, quiet) -> dict:
    from .spec import load_spec, parse_spec, run_spec

    try:
        s = load_spec(spec)
        if time_limit is not None or solver is not None or verbose:
            raw = json.loads(json.dumps(s.raw))
            raw.setdefault("solver", {})
            raw["solver"] = dict(raw["solver"] or {})
            if time_limit is not None:
                raw["solver"]["time_limit"] = time_limit
            if solver is not None:
                raw["solver"]["name"] = solver
            if verbose:
                raw["solver"]["verbose"] = True
            s = parse_spec(raw, s.source)
        if output:
            s.output = Path(output)
        report = run_spec(s)
    except OptTreesError as exc:
        _fail(exc)
    fmt = lambda v: "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.6g}"
    sol = report.get("solve")
    metric = next(k for k in report if k.startswith("train_"))
    if not quiet:
        click.echo(report.pop("_tree_text"))
        click.echo("")
    else:
        report.pop("_tree_text")
    if sol:
        gap = "-" if sol["gap"] is None else f"{100 * sol['gap']:.3g}%"
        click.echo(f"status={sol['status']} proven_optimal={sol['proven_optimal']} objective={fmt(sol['objective'])} "
                   f"bound={fmt(sol['bound'])} gap={gap} runtime={sol['runtime']:.2f}s "
                   f"fit_time={report['fit_time']:.2f}s {metric}={fmt(report[metric])}")
    else:
        click.echo(f"status={report['status']} objective={fmt(report['objective'])} "
                   f"fit_time={report['fit_time']:.2f}s {metric}={fmt(report[metric])}")
    for k in report:
        if k.startswith("test_"):
            click.echo(f"{k}={fmt(report[k])}")
    tim = (sol or {}).get("timings") or {}
    if tim.get("n_nonzeros") is not None and not quiet:
        build = f", built in {tim['build']:.2f}s" if tim.get("build") is not None else ""
        click.echo(f"model: {tim['n_rows']:,} rows x {tim['n_cols']:,} columns, {tim['n_nonzeros']:,} nonzeros{build}")
    click.echo(f"wrote {report['output']}/" + ", ".join(report["_written"]))
    return report


@main.command()
@click.argument("tree", type=click.Path(dir_okay=False))
@click.option("--dot", is_flag=True, help="print Graphviz DOT instead of text")
def show(tree, dot):
    """Print a saved tree (tree.json)."""
    from .tree import Tree

    try:
        t = Tree.from_json(Path(tree))
    except OptTreesError as exc:
        _fail(exc)
    click.echo(t.to_dot() if dot else t.export_text())


@main.command()
@click.argument("tree", type=click.Path(dir_okay=False))
@click.argument("csv", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write predictions here (default: stdout)")
def predict(tree, csv, output):
    """Predict every row of CSV with a saved tree; columns are matched by the tree's feature names."""
    import pandas as pd

    from .tree import Tree

    try:
        t = Tree.from_json(Path(tree))
        if not Path(csv).exists():
            raise OptTreesError(f"data file not found: {csv}")
        df = pd.read_csv(csv)
        if t.feature_names is not None:
            missing = [f for f in t.feature_names if f not in df.columns]
            if missing:
                raise OptTreesError(f"{csv} lacks the tree's feature column(s) {missing}")
            df = df[t.feature_names]
        pred = t.predict(df)
    except OptTreesError as exc:
        _fail(exc)
    out = pd.DataFrame({"prediction": list(pred)})
    if output:
        out.to_csv(output, index=False)
    else:
        click.echo(out.to_csv(index=False), nl=False)


@main.command()
@click.option("--params", "show_params", is_flag=True, help="also list each model's spec parameters and defaults")
def models(show_params):
    """List the model types a spec can use (model.type); --params shows their model.* fields."""
    from .spec import MODELS, SOLVER_KEYS, _estimator_params, _register_builtin, _solver_param

    if not MODELS:
        _register_builtin()
    for name, entry in sorted(MODELS.items()):
        click.echo(f"{name:16s} {entry.description}")
        if show_params:
            allowed = _estimator_params(entry)
            set_by_solver = {_solver_param(k, allowed) for k in SOLVER_KEYS} - {None}
            fields = ", ".join(f"{k}={v!r}" for k, v in allowed.items() if k not in set_by_solver)
            solver = ", ".join(k for k in SOLVER_KEYS if _solver_param(k, allowed) is not None) or "none"
            click.echo(f"{'':16s}   model: {fields}")
            click.echo(f"{'':16s}   solver: {solver}")


@main.command()
def datasets():
    """List built-in dataset names."""
    from .experiments.datasets import dataset_names

    for name in dataset_names():
        click.echo(name)


if __name__ == "__main__":  # pragma: no cover
    main()
