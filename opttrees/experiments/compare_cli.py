"""``opttrees compare GRID.yaml``: run a comparison grid into a results store and optionally write a report."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import OptTreesError


@click.command()
@click.argument("grid", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="cells run at once (local worker processes, or local Dask workers)")
@click.option("--backend", type=click.Choice(["process", "dask"]), default="process", show_default=True,
              help="process: local worker processes; dask: a local Dask cluster (needs opttrees[dask])")
@click.option("--scheduler", metavar="ADDRESS",
              help="run on a running Dask cluster, e.g. tcp://host:8786 (its workers set the concurrency; --jobs is unused)")
@click.option("--retry-failed", is_flag=True, help="rerun cells that failed (error, timeout, oom, killed, crashed)")
@click.option("--report", "report_dir", type=click.Path(file_okay=False),
              help="write results.csv, traces.csv, summary.md/.html, pivot tables (Markdown, LaTeX, CSV) and figures "
                   "to this folder")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="a pivot table (dataset x method) to write with --report; repeatable; default: test_score, "
                   "train_score, fit_time, gap, solved; also train_loss, test_loss, time_to_proof, node_count, n_leaves")
@click.option("--store", "store_path", type=click.Path(dir_okay=False),
              help="results file (SQLite); default: the grid's `store`, else results/<grid name>/results.sqlite")
@click.option("--wall-time", type=float, help="override limits.wall_time (seconds per cell, enforced from outside)")
@click.option("--memory-mb", type=float, help="override limits.memory_mb (resident memory per cell)")
@click.option("--list", "list_only", is_flag=True, help="list the cells (and whether each is stored) and exit")
@click.option("--quiet", "-q", is_flag=True, help="no progress output")
def compare(grid, jobs, backend, scheduler, retry_failed, report_dir, metrics, store_path, wall_time, memory_mb,
            list_only, quiet):
    """Run the comparison grid GRID (YAML): datasets x models x solvers x depths x seeds.

    Each cell is an ordinary spec (rerun one alone with `opttrees solve`) and runs in its own worker process,
    killed from outside at the wall or memory limit. Results go to a SQLite store; a rerun skips finished
    cells, so an interrupted grid resumes where it stopped.
    """
    from .grid import cell_spec_yaml, load_grid
    from .report import DEFAULT_PIVOTS, METRICS
    from .runner import pending, run_grid
    from .store import ResultStore

    try:
        bad = [m for m in metrics if m not in METRICS]
        if bad:
            raise click.BadParameter(f"unknown metric {bad[0]!r}; one of {sorted(METRICS)}", param_hint="--metric")
        g = load_grid(grid)
        path = Path(store_path or g.store or Path("results") / g.name / "results.sqlite")
        if list_only:   # reads the store when there is one; writes nothing
            known = ResultStore(path).outcomes([c.key for c in g.cells]) if path.exists() else {}
            for c in g.cells:
                m = c.meta
                click.echo(f"{c.key}  {known.get(c.key, '-'):8s} {m['dataset']} {m['method_solver']} "
                           f"depth={m['depth']} seed={m['seed']}")
            if g.cells and not quiet:
                click.echo(f"\nfirst cell as a spec file (opttrees solve):\n{cell_spec_yaml(g.cells[0])}")
            return
        store = ResultStore(path)
        todo = pending(g, store, retry_failed)
        if not quiet:
            click.echo(f"{g.name}: {len(g)} cells, {len(g) - len(todo)} already stored, {len(todo)} to run "
                       f"({'dask cluster at ' + scheduler if scheduler else f'{backend}, jobs={jobs}'}); store {path}",
                       err=True)
        summary = run_grid(g, store, jobs=jobs, backend=backend, scheduler=scheduler, retry_failed=retry_failed,
                           wall_time=wall_time, memory_mb=memory_mb, progress=not quiet)
        click.echo(str(summary))
        if report_dir:
            from .report import write_report
            written = write_report(store, report_dir, title=g.name, grid=g.name, metrics=metrics or DEFAULT_PIVOTS)
            click.echo(f"wrote {report_dir}/" + ", ".join(written))
    except (OptTreesError, ImportError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if summary.interrupted:
        click.echo("interrupted: finished cells are stored; run the same command again to finish the rest", err=True)
        sys.exit(130)


if __name__ == "__main__":   # pragma: no cover - `opttrees compare` once attached to the main CLI group
    compare()
