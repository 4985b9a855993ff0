"""The ``opttrees`` command line: solve a model spec, show or apply a saved tree, list datasets/models.

Why the imports sit inside the commands: ``opttrees --help`` and ``--version`` must answer at once, and the
estimators pull in scikit-learn, Pyomo and the solvers (seconds of imports). Only click and the standard library
load at start.
"""
from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path

import click


def _fail(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


#: the model type of the spec being solved: warnings are then written in its spec words
_MODEL_TYPE: list[str] = []


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on stderr ("warning: ..."), not Python's file:line form meant for developers;
    during ``solve``, in the spec's words (``solver.time_limit``, not ``time_limit=``)."""
    text = str(message)
    if _MODEL_TYPE:
        from .spec import spec_words
        try:
            text = spec_words(text, _MODEL_TYPE[-1])
        except Exception:   # pragma: no cover - a warning is never lost to its translation
            pass
    click.echo(f"warning: {text}", err=True)


@contextlib.contextmanager
def _stdout_elsewhere(quiet: bool):
    """While a fit runs, what libraries print to stdout (the HiGHS banner, solver logs) goes to stderr, or to
    /dev/null when ``quiet``: stdout carries the tree and the summary only (a script can read them).

    Why at the file-descriptor level: HiGHS prints its banner from C++ when the first ``Highs`` object is made,
    before any option can turn its output off, so redirecting ``sys.stdout`` would not catch it.
    """
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:   # no real stdout (e.g. some embedded runners): nothing to redirect
        yield
        return
    target = os.open(os.devnull, os.O_WRONLY) if quiet else os.dup(2)
    os.dup2(target, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(target)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="opttrees")
def main():
    """opttrees — optimal decision trees as MIO models (Pyomo + HiGHS/SCIP) and fast heuristics.

    \b
    Commands:
      solve SPEC      fit the model a spec file describes; write tree.json, tree.dot, report.json
      show TREE       print a saved tree (text or DOT); --png/--svg/--html write pictures
      predict TREE    predict a CSV with a saved tree (no solver needed)
      models          list model types usable in specs (--params: their settings)
      datasets        list built-in datasets: task, rows, columns
      compare GRID    run a comparison grid (resumable); --report DIR writes tables and plots
      warmup          compile every numba kernel once (part of installation)

    \b
    Spec file (YAML or JSON; relative paths are relative to the spec file):
      data:   {dataset: iris}  or  {csv: file.csv, target: column, features: [..]}
              optional: test_size: 0.25, split_seed: 0, categorical: auto | [columns],
              missing: error | drop | impute
      model:  {type: oct, max_depth: 2, min_samples_leaf: 1, alpha: 0.0, warm_start: auto,
               dp_bound: auto, random_state: 0 (the default; null: a fresh seed each run)}
      solver: {time_limit: (.inf: none; each type's default: opttrees models --params),
               verbose: false, name: auto|highs|scip, mip_gap: 1e-6, threads: 1  (these three: MIO models only)}
      output: results/my-run
    A spec is checked whole before any data is read; every problem is listed at once.

    \b
    Solve statuses (report.json "status"; the fit's own: completed, time_limit, interrupted):
      optimal      proven optimal (objective and bound agree)
      gap_limit    stopped at the requested mip_gap; feasible, not proven optimal
      time_limit   stopped at the time limit; feasible, not proven optimal
      interrupted  Ctrl-C or a callback; the best tree so far
      limit        a node/solution/iteration limit; not proven optimal
      unverified   the solver's objective differs from the tree's; the tree's is reported, nothing proven
      infeasible, unbounded, no_solution, error
    Gap = |objective - bound| / |objective|.
    """
    shown = warnings.showwarning
    warnings.showwarning = _show_warning
    click.get_current_context().call_on_close(lambda: setattr(warnings, "showwarning", shown))


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(file_okay=False), help="override the spec's output folder")
@click.option("--time-limit", type=float, help="override solver.time_limit (seconds)")
@click.option("--solver", type=click.Choice(["highs", "scip"]), help="override solver.name")
@click.option("--verbose", "-v", is_flag=True, help="show live solver progress (incumbent, bound, gap, time)")
@click.option("--quiet", "-q", is_flag=True, help="print only the summary; silence what solvers print (e.g. the HiGHS banner, "
                                                 "otherwise sent to stderr)")
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
    from .errors import OptTreesError
    from .outputs import FolderLock
    from .spec import parse_spec, quick_catalog, read_document

    try:
        raw = read_document(spec)
        if isinstance(raw, dict) and (time_limit is not None or solver is not None or verbose):
            raw = dict(raw)
            raw["solver"] = dict(raw.get("solver") or {})
            if time_limit is not None:
                raw["solver"]["time_limit"] = time_limit
            if solver is not None:
                raw["solver"]["name"] = solver
            if verbose:
                raw["solver"]["verbose"] = True
        # the fields first, from the generated manifest: a bad spec is reported before scikit-learn, Pyomo and
        # the solvers are imported (seconds); then the full check against the estimators themselves
        catalog = quick_catalog()
        with contextlib.ExitStack() as stack:
            if catalog is not None:
                quick = parse_spec(raw, Path(spec), catalog=catalog)
                # one writer per output folder: a second solve into it stops here, at once
                stack.enter_context(FolderLock(Path(output) if output else quick.output))
            s = parse_spec(raw, Path(spec))
            _MODEL_TYPE.append(s.model_type)
            if output:
                s.output = Path(os.path.normpath(output))
            from .spec import run_spec
            with _stdout_elsewhere(quiet):
                report = run_spec(s, locked=catalog is not None)
    except OptTreesError as exc:
        _fail(exc)
    metric = next(k for k in report if k.startswith("train_"))
    tree_text = report.pop("_tree_text")
    if not quiet:
        click.echo(tree_text)
        click.echo("")
    for line in summary_lines(report, metric, quiet):
        click.echo(line)
    click.echo(f"wrote {report['output']}/" + ", ".join(report["_written"]))
    return report


def status_word(report: dict) -> str:
    """One status for the run: Ctrl-C wins, then the solver's own word (optimal, time_limit, limit, ...),
    else the fit's (completed, time_limit)."""
    status = report.get("status") or "completed"
    res = report.get("solve") or {}
    if status == "interrupted" or not res.get("status"):
        return status
    return res["status"]


def timing_line(report: dict) -> str | None:
    """``time: 50.0s = prepare 0.1 + build 5.0 + solve 42.0 + other 2.9``: the fit's stages, the solver's build,
    and what no stage covers, adding up to the fit time."""
    stages = dict(report.get("fit_timings") or {})
    stages.pop("total", None)
    total = report.get("fit_time")
    if total is None:
        return None
    build = ((report.get("solve") or {}).get("timings") or {}).get("build")
    parts = [(k, v) for k, v in stages.items() if v is not None]
    if build is not None and "build" not in stages and "solve" in stages:   # the solve stage includes its build
        parts = [(k, v) for k, v in parts if k != "solve"] + [("build", build), ("solve", stages["solve"] - build)]
    runtime = (report.get("solve") or {}).get("runtime")
    if runtime is not None and any(k == "solve" for k, _ in parts):   # the solver's own time, and the hand-off
        solve_t = dict(parts)["solve"]
        i = [k for k, _ in parts].index("solve")
        parts[i:i + 1] = [("hand-off", max(solve_t - runtime, 0.0)), ("solver", runtime)]
    other = total - sum(v for _, v in parts)
    parts.append(("other", max(other, 0.0)))
    return f"time: {total:.2f}s = " + " + ".join(f"{k} {v:.2f}" for k, v in parts)


def summary_lines(report: dict, metric: str, quiet: bool = False) -> list[str]:
    from .progress import fmt, fmt_gap

    res = report.get("solve") or {}
    head = [f"status={status_word(report)}"]
    if res.get("solver"):   # the solver that ran, not the planned one (the DP bound may prove without it)
        from .experiments.records import solver_words
        head.append(solver_words(res))
    head.append(f"objective={fmt(report['objective'])}")
    if res:
        head += [f"bound={fmt(res.get('bound'))}", f"gap={fmt_gap(res.get('gap'))}"]
        if res.get("node_count"):
            head.append(f"nodes={res['node_count']}")
        if res.get("n_lazy_cuts"):
            head.append(f"lazy_cuts={res['n_lazy_cuts']} rounds={res.get('n_rounds')}")
    head += [f"{metric}={fmt(report[metric])}", f"train_loss={fmt(report['normalised_loss']['train'])}"]
    lines = [" ".join(head), f"objective: {report.get('objective_meaning', 'the model objective')} "
             f"({report.get('objective_sense', 'minimise')}); train_loss: errors or loss / one-leaf baseline"]
    chosen = report.get("chosen")
    if chosen:
        lines.append("chosen: " + " ".join(f"{k}={fmt(v)}" for k, v in chosen.items()))
    tests = [k for k in report if k.startswith("test_")]
    if tests:
        lines.append(" ".join(f"{k}={fmt(report[k])}" for k in tests)
                     + f" test_loss={fmt(report['normalised_loss']['test'])}")
    timing = timing_line(report)
    if timing:
        lines.append(timing)
    tim = res.get("timings") or {}
    if tim.get("n_nonzeros") is not None and not quiet:
        lines.append(f"model size: {tim['n_rows']:,} constraints x {tim['n_cols']:,} variables, "
                     f"{tim['n_nonzeros']:,} nonzeros")
    return lines


@main.command()
@click.argument("tree", type=click.Path(dir_okay=False))
@click.option("--dot", is_flag=True, help="print Graphviz DOT instead of text")
@click.option("--png", type=click.Path(dir_okay=False), help="also write a PNG picture (needs the plot extra: matplotlib)")
@click.option("--svg", type=click.Path(dir_okay=False), help="also write an SVG picture (needs the plot extra: matplotlib)")
@click.option("--html", "html_file", type=click.Path(dir_okay=False),
              help="also write an interactive HTML viewer (its header comes from a report.json beside the tree)")
def show(tree, dot, png, svg, html_file):
    """Print a saved tree (tree.json); --png/--svg/--html also write pictures of it."""
    from .errors import OptTreesError
    from .tree import Tree

    written = []
    try:
        t = Tree.from_json(Path(tree))
        if png or svg:
            from .viz.plot import save_picture
            written += [save_picture(t, path, fmt) for path, fmt in ((png, "png"), (svg, "svg")) if path]
        if html_file:
            from .viz.html import report_beside, write_html
            written.append(write_html(t, html_file, title=Path(tree).resolve().parent.name,
                                      summary=report_beside(tree)))
    except OptTreesError as exc:
        _fail(exc)
    click.echo(t.to_dot() if dot else t.export_text())
    for path in written:
        click.echo(f"wrote {path}")


@main.command()
@click.argument("tree", type=click.Path(dir_okay=False))
@click.argument("csv", type=click.Path(dir_okay=False))
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="write predictions here (default: stdout)")
@click.option("--proba", is_flag=True, help="add one column per class, proba_<class>: the leaf's class frequencies "
                                            "(classification trees)")
@click.option("--keep", "keep", multiple=True, metavar="COLUMN",
              help="copy this column of CSV to the output, before the predictions (e.g. an id); repeatable")
def predict(tree, csv, output, proba, keep):
    """Predict every row of CSV with a saved tree; columns are matched by the tree's feature names.

    A tree trained on text (categorical) columns re-encodes them with the categories it saw; a category it
    never saw counts as none of them (a warning says which).
    """
    from .errors import InputError, OptTreesError
    from .datasets import read_table
    from .tree import Tree

    try:
        t = Tree.from_json(Path(tree))
        df = read_table(csv)
        absent = [c for c in keep if c not in df.columns]
        if absent:
            raise InputError(f"--keep: {csv} has no column(s) {absent}; columns: {list(df.columns)}")
        if proba and t.task != "classification":
            raise InputError(f"--proba: class probabilities need a classification tree; this one is {t.task}")
        X, ignored = _predict_table(t, df, csv, keep)
        _check_predict_values(X, csv, t.encoding is not None and bool(getattr(t.encoding, "fill", None)))
        pred = t.predict(X)
        out = df[list(keep)].copy() if keep else None
        import pandas as pd

        pred_frame = pd.DataFrame({"prediction": list(pred)}, index=df.index)
        if proba:
            p = t.predict_proba(X)
            names = t.classes if t.classes is not None else list(range(p.shape[1]))
            pred_frame = pred_frame.join(pd.DataFrame(p, columns=[f"proba_{c}" for c in names], index=df.index))
        if out is not None:   # a kept column named like an output column: the prediction's gets a suffix
            pred_frame = pred_frame.rename(columns={c: f"{c}_predicted" for c in pred_frame.columns if c in out.columns})
        out = pred_frame if out is None else out.join(pred_frame)
    except OptTreesError as exc:
        _fail(exc)
    if ignored:
        click.echo(f"note: ignored column(s) {ignored}: the tree does not split on them", err=True)
    if output:
        from .outputs import atomic_write
        atomic_write(os.path.normpath(output), out.to_csv(index=False))
        click.echo(f"wrote {os.path.normpath(output)}: {len(out)} row(s), column(s) {list(out.columns)}")
    else:
        click.echo(out.to_csv(index=False), nl=False)


def columns_read(t) -> list[str] | None:
    """The raw columns a saved tree's splits read (a one-hot feature counts as its column), in the tree's column
    order; None when the tree has no column names."""
    import numpy as np

    from .tree import HYPERPLANE

    names = t.encoding.columns if t.encoding is not None else t.feature_names
    if names is None:
        return None
    split = t.feature[t.feature >= 0].tolist()
    for node in np.flatnonzero(t.feature == HYPERPLANE):
        split += np.flatnonzero(t.coef[node]).tolist()
    sources = t.encoding.sources() if t.encoding is not None else [(n, None) for n in names]
    read = {sources[j][0] for j in split}
    return [c for c in names if c in read]


def _predict_table(t, df, csv: str, keep) -> tuple:
    """(the features to predict from, the CSV's columns the tree ignores). Only the columns the tree splits on
    must be in the CSV; the tree's other columns get a placeholder value it never reads."""
    import pandas as pd

    from .errors import InputError

    read = columns_read(t)
    if read is None:   # no names: the CSV's columns are the features, in order
        return df, []
    names = t.encoding.columns if t.encoding is not None else t.feature_names
    lacking = [c for c in read if c not in df.columns]
    if lacking:
        raise InputError(f"{csv} lacks the column(s) {lacking} the tree splits on (it reads {read}; columns of "
                         f"{Path(csv).name}: {list(df.columns)})")
    frame = pd.DataFrame(index=df.index)
    for c in names:
        if c in read:
            frame[c] = df[c]
        elif t.encoding is not None and c in t.encoding.categories:
            frame[c] = t.encoding.categories[c][0]
        elif t.encoding is not None and c in getattr(t.encoding, "dates", ()):
            frame[c] = "1970-01-01"
        else:
            frame[c] = 0.0
    X = t.encoding.transform(frame, Path(csv).name) if t.encoding is not None else frame
    ignored = [c for c in df.columns if c not in read and c not in keep]
    return X, ignored


def _check_predict_values(X, csv, imputes: bool) -> None:
    """Rows the tree cannot route: an error naming the column and row, in the CLI's words (the estimator's
    says "before fitting", which means nothing to someone predicting with a saved tree)."""
    import numpy as np
    import pandas as pd

    from .errors import InputError

    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    for col in frame.columns:
        v = frame[col]
        if not pd.api.types.is_numeric_dtype(v) or pd.api.types.is_bool_dtype(v):
            continue
        arr = v.to_numpy(dtype=np.float64, na_value=np.nan)
        for bad, what in ((np.isnan(arr), "no value"), (np.isinf(arr), "an infinite value")):
            if bad.any():
                i = int(np.argmax(bad))
                why = ("infinite values are not missing values: correct or remove those rows" if what != "no value"
                       else "the tree was trained with data.missing: error (or drop), so every feature of a row "
                       "needs a value: fill those rows or leave them out" if not imputes else
                       "this column had no missing values in training, so the tree learned no fill value for it")
                raise InputError(f"{csv}: column {col!r} has {what} at row {frame.index[i]} (line "
                                 f"{i + 2}), {int(bad.sum())} such row(s) in all; {why}")


@main.command()
@click.option("--params", "show_params", is_flag=True,
              help="also list each model's parameters: what values they accept, and their defaults")
def models(show_params):
    """List the model types a spec can use (model.type); --params shows their model.* and solver.* fields."""
    from .params import describe
    from .registry import models as registered
    from .spec import SOLVER_TO_PARAM, applies, only_with, solver_keys

    for name, entry in sorted(registered().items()):
        click.echo(f"{name:16s} {entry.description}")
        if not show_params:
            continue
        rules, defaults = entry.parameter_rules(), entry.defaults()
        keys = solver_keys(entry)
        solver_params = set(SOLVER_TO_PARAM.values())
        fixed = ", ".join(f"{k}={v!r}" for k, v in entry.fixed.items())
        click.echo(f"{'':18s}model:" + (f"  (fixed: {fixed})" if fixed else ""))
        for pname, default in defaults.items():
            if pname in solver_params or not applies(entry, pname):   # only the fields this type uses
                continue
            if pname == "random_state":
                from .estimators.base import DEFAULT_RANDOM_STATE
                default = DEFAULT_RANDOM_STATE   # what a spec that gives no seed uses
            cond = only_with(entry, pname)
            click.echo(f"{'':20s}{pname}={default!r}: {describe(rules[pname]) if pname in rules else 'any value'}"
                       + (f"  (only with {cond})" if cond else ""))
        click.echo(f"{'':18s}solver: {', '.join(keys) or 'none'}")
        for key in keys:
            pname = SOLVER_TO_PARAM[key]
            note = " (no limit)" if key == "time_limit" and defaults[pname] is None else ""
            click.echo(f"{'':20s}{key}={defaults[pname]!r}{note}: {describe(rules[pname])}")


@main.command()
def datasets():
    """List built-in datasets (data.dataset): task, rows, feature columns, targets."""
    from .datasets import dataset_info, dataset_names

    click.echo(f"{'name':15s} {'task':15s} {'rows':>6s} {'columns':>8s}  targets")
    for name in dataset_names():
        info = dataset_info(name)
        if info is None:
            click.echo(name)
            continue
        click.echo(f"{name:15s} {info.task:15s} {info.rows:6d} {info.columns:8d}  {info.targets}"
                   + (f" ({info.description})" if info.description else ""))


@main.command()
@click.option("--jobs", "-j", type=int, default=2, show_default=True, help="processes compiling at once")
@click.option("--no-large", is_flag=True,
              help="skip the local search's 64-bit variant (fits on more than 65,536 rows compile it on first use)")
@click.option("--check", is_flag=True, help="only list the kernels that are still cold (compiles nothing)")
def warmup(jobs, no_large, check):
    """Compile every numba kernel once (part of installation; `make demo` / `make test` run it).

    Runs a tiny fit of each kind (local search, greedy, linear leaves, dynamic program, prescriptive trees) in
    JOBS processes; numba caches the kernels on disk, so later fits load them in about a second. About
    3 minutes on 2 idle cores from a cold cache (more when they are busy); seconds when nothing changed.
    Exits 1 if a kernel is left cold.
    """
    from .warmup import cold_kernels

    if check:
        cold = cold_kernels(include_large=not no_large)
        click.echo("\n".join(cold) if cold else "no kernel is cold")
        sys.exit(1 if cold else 0)
    from .warmup import warmup as run

    click.echo(f"opttrees warmup: compiling the numba kernels with tiny fits in {jobs} processes "
               "(once per installation; numba caches them)")
    res = run(jobs=jobs, large=not no_large, echo=click.echo)
    for g, err in res["failed"].items():
        click.echo(f"error: warmup group {g} failed:\n{err}", err=True)
    if res["cold"]:
        click.echo("error: still cold: " + ", ".join(res["cold"]), err=True)
    click.echo(f"warmup: {res['seconds']:.1f} s; " + ("every kernel compiled" if not res["cold"] and not res["failed"]
                                                     else "INCOMPLETE"))
    sys.exit(1 if res["cold"] or res["failed"] else 0)


def _attach_compare() -> None:
    """The research harness's command (opttrees.experiments), defined there to keep this module small."""
    from .experiments.compare_cli import compare
    main.add_command(compare)


_attach_compare()

if __name__ == "__main__":  # pragma: no cover
    main()
