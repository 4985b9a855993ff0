"""Tables in benchmarks/README.md that come from the research harness, not from hand-copied numbers.

    python benchmarks/readme_tables.py benchmarks/grids/exact_depth2.yaml --run --jobs 1
    python benchmarks/readme_tables.py examples/grids/heuristics_vs_cart.yaml       # table only, from the store

``--run`` runs the grid's missing cells first (the runner skips stored ones, so an interrupted run resumes).
The summary table of the grid's results store (one row per dataset x method x depth: runs, failures, the solver
that ran and the route, proofs by the solver and by the DP bound, median fit time, mean gap, mean train/test
score) then replaces the block between
``<!-- runner: NAME -->`` and ``<!-- end runner: NAME -->`` in the README (appended when the markers are
missing), with a line saying which command, store, package version, host and load produced it. The full
report (results.csv, summary.md/html, figures) goes to ``results/NAME/report`` unless ``--report`` says where.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from pathlib import Path

from opttrees.experiments.grid import load_grid
from opttrees.experiments.report import results_frame, summary_table, to_markdown, write_report
from opttrees.experiments.runner import run_grid
from opttrees.experiments.store import ResultStore

README = Path(__file__).with_name("README.md")


def table_block(name: str, command: str, df) -> str:
    """The README block for one grid: provenance line + summary table (between the runner markers)."""
    versions = sorted({str(v) for v in df["version"].dropna()}) if len(df) else []
    hosts = sorted({str(h) for h in df["host"].dropna()}) if len(df) else []
    counts = df["outcome"].value_counts().to_dict() if len(df) else {}
    stamp = datetime.date.today().isoformat()
    load = os.getloadavg()[0]
    head = (f"Generated {stamp} by `{command}` from the grid's results store: {len(df)} runs "
            f"({', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'none'}); opttrees "
            f"{', '.join(versions) or '?'}; host {', '.join(hosts) or '?'}; load average when the table was written "
            f"{load:.1f} on {os.cpu_count()} cores. `solver_ran` = the solver that actually ran (`none`: the DP bound "
            "proved it before any solver), `route` = solver / dp-bound / dp-only / heuristic, `proven_solver` / "
            "`proven_dp_bound` = runs proven by the solver (or the DP as the method) / by the DP bound, `time_s` = "
            "median fit time, `gap` = mean final gap, `train`/`test` = mean scores.\n\n")
    return f"<!-- runner: {name} -->\n{head}{to_markdown(summary_table(df))}<!-- end runner: {name} -->"


def replace_block(text: str, name: str, block: str, title: str) -> str:
    """Swap the marked block for ``block``; append a titled section when the markers are absent."""
    pattern = re.compile(rf"<!-- runner: {re.escape(name)} -->.*?<!-- end runner: {re.escape(name)} -->", re.S)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text, count=1)
    return text.rstrip("\n") + f"\n\n### {title}\n\n{block}\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("grid", help="grid YAML file (as for `opttrees compare`)")
    ap.add_argument("--run", action="store_true", help="run the grid's missing cells before writing the table")
    ap.add_argument("--jobs", type=int, default=1, help="cells at once with --run (default 1: fair timings)")
    ap.add_argument("--store", help="results store (default: the grid's `store`, else results/NAME/results.sqlite)")
    ap.add_argument("--report", help="report folder (default results/NAME/report)")
    ap.add_argument("--readme", default=str(README), help="Markdown file to update (default benchmarks/README.md)")
    ap.add_argument("--title", help="section title when the README has no block for this grid yet")
    args = ap.parse_args(argv)
    grid = load_grid(args.grid)
    store = ResultStore(Path(args.store or grid.store or Path("results") / grid.name / "results.sqlite"))
    if args.run:
        print(run_grid(grid, store, jobs=args.jobs, progress=sys.stderr.isatty()), file=sys.stderr)
    df = results_frame(store, grid.name)
    df = df[df["key"].isin({c.key for c in grid.cells})]  # this grid's cells only (not stale keys)
    if df.empty:
        print(f"no stored results for grid {grid.name!r} in {store.path}; run with --run", file=sys.stderr)
        return 1
    write_report(df, args.report or Path("results") / grid.name / "report", title=grid.name)
    command = "python benchmarks/readme_tables.py " + " ".join(argv if argv is not None else sys.argv[1:])
    readme = Path(args.readme)
    readme.write_text(replace_block(readme.read_text(), grid.name, table_block(grid.name, command, df),
                                    args.title or f"{grid.name} (runner grid `{args.grid}`)"))
    print(f"updated {readme} (grid {grid.name}: {len(df)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
