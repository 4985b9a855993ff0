"""The ``opttrees`` command line: solve a model spec, show or apply a saved tree, list datasets/models."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .errors import OptTreesError
from .progress import fmt


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
      compare GRID    run a comparison grid (resumable); --report DIR writes tables and plots

    \b
    Spec file (YAML or JSON):
      data:   {dataset: iris}  or  {csv: file.csv, target: column, features: [..]}
              optional: test_size: 0.25, split_seed: 0
      model:  {type: oct, max_depth: 2, min_samples_leaf: 1, alpha: 0.0, warm_start: greedy}
      solver: {name: highs|scip, time_limit: 60 (.inf: none), mip_gap: 1e-6, threads: 1, random_state: 0,
               verbose: false}
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
    metric = next(k for k in report if k.startswith("train_"))
    tree_text = report.pop("_tree_text")
    if not quiet:
        click.echo(tree_text)
        click.echo("")
    if report.get("_solve_summary"):
        click.echo(report["_solve_summary"])
    click.echo(f"status={report['status']} objective={fmt(report['objective'])} fit_time={report['fit_time']:.2f}s "
               f"{metric}={fmt(report[metric])}")
    for k in report:
        if k.startswith("test_"):
            click.echo(f"{k}={fmt(report[k])}")
    tim = (report.get("solve") or {}).get("timings") or {}
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
@click.option("--params", "show_params", is_flag=True,
              help="also list each model's parameters: what values they accept, and their defaults")
def models(show_params):
    """List the model types a spec can use (model.type); --params shows their model.* and solver.* fields."""
    from .params import describe
    from .registry import models as registered
    from .spec import SOLVER_TO_PARAM

    for name, entry in sorted(registered().items()):
        click.echo(f"{name:16s} {entry.description}")
        if not show_params:
            continue
        rules, defaults = entry.parameter_rules(), entry.defaults()
        solver_keys = {p: k for k, p in SOLVER_TO_PARAM.items() if p in defaults}
        fixed = ", ".join(f"{k}={v!r}" for k, v in entry.fixed.items())
        click.echo(f"{'':18s}model:" + (f"  (fixed: {fixed})" if fixed else ""))
        for pname, default in defaults.items():
            if pname not in solver_keys:
                click.echo(f"{'':20s}{pname}={default!r}: {describe(rules[pname]) if pname in rules else 'any value'}")
        click.echo(f"{'':18s}solver: {', '.join(solver_keys.values()) or 'none'}")
        for pname, key in solver_keys.items():
            click.echo(f"{'':20s}{key}={defaults[pname]!r}: {describe(rules[pname])}")


@main.command()
def datasets():
    """List built-in dataset names."""
    from .experiments.datasets import dataset_names

    for name in dataset_names():
        click.echo(name)


def _attach_compare() -> None:
    """The research harness's command (opttrees.experiments), defined there to keep this module small."""
    from .experiments.compare_cli import compare
    main.add_command(compare)


_attach_compare()

if __name__ == "__main__":  # pragma: no cover
    main()
