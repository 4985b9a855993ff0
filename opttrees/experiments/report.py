"""Tables and figures from a results store: the tidy frame, Markdown/HTML summaries and the plots papers show.

Figures (matplotlib, the optional ``plot`` extra):
- performance profile: per method, the share of its runs proven optimal within time t (Dolan–Moré style, on
  the absolute time axis as in the optimal-tree literature); a failed or unproven run never counts;
- gap over time: per method, the mean relative gap at time t rebuilt from the incumbent/bound traces
  (100 % before the first incumbent and bound, the run's final gap after it ended);
- accuracy against depth: mean test score (train score when the data had no test split), one panel per dataset;
- runtime against rows: mean fit time against the number of training rows.
"""
from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .store import ResultStore

#: columns of the tidy frame, in order (extra ones follow)
COLUMNS = ["dataset", "method", "model", "params", "solver", "solver_version", "depth", "seed", "outcome", "status",
           "proven_optimal", "objective", "bound", "gap", "runtime", "fit_time", "build_time", "wall_time",
           "metric", "train_score", "test_score", "n_train", "n_test", "n_features", "tree_depth", "n_leaves",
           "n_splits", "peak_memory_mb", "node_count", "n_lazy_cuts", "method_solver", "error", "key", "grid",
           "version", "host", "trace"]


def results_frame(source, grid: str | None = None) -> pd.DataFrame:
    """One tidy row per run, from a ResultStore, a store path, or a list of row dicts."""
    if isinstance(source, (str, Path)):
        source = ResultStore(source)
    rows = source.rows(grid=grid) if isinstance(source, ResultStore) else list(source)
    df = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = None
    df = df[COLUMNS + [c for c in df.columns if c not in COLUMNS and c != "spec"]]
    df["params"] = df["params"].map(lambda p: json.dumps(p, sort_keys=True) if isinstance(p, dict) and p else "")
    df["trace"] = df["trace"].map(lambda t: t if isinstance(t, list) else [])
    df["proven_optimal"] = df["proven_optimal"].map(lambda v: bool(v) if v is not None and v == v else False)
    for c in ("objective", "bound", "gap", "runtime", "fit_time", "build_time", "wall_time", "train_score",
              "test_score", "peak_memory_mb"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df["method_solver"] = df["method_solver"].fillna(df["method"]).fillna(df["model"])
    return df.sort_values(["dataset", "method_solver", "depth", "seed"], na_position="first").reset_index(drop=True)


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x method x depth: runs, failures, share proven optimal, median time, mean gap and scores."""
    if df.empty:
        return pd.DataFrame(columns=["dataset", "method", "depth", "runs", "failed", "optimal", "time_s", "gap",
                                     "train", "test"])
    d = df.assign(depth=df["depth"].fillna(-1), failed=df["outcome"] != "done",
                  time=df["fit_time"].fillna(df["wall_time"]))
    g = d.groupby(["dataset", "method_solver", "depth"], sort=True, dropna=False)
    out = pd.DataFrame({
        "runs": g.size(),
        "failed": g["failed"].sum().astype(int),
        "optimal": g["proven_optimal"].mean(),
        "time_s": g["time"].median(),
        "gap": g["gap"].mean(),
        "train": g["train_score"].mean(),
        "test": g["test_score"].mean(),
    }).reset_index().rename(columns={"method_solver": "method"})
    out["depth"] = out["depth"].map(lambda v: "" if v == -1 else int(v))
    return out


def _cell_text(v) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return str(v)


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell_text(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |")
    return "\n".join(lines) + "\n"


def to_html(df: pd.DataFrame) -> str:
    """A plain HTML table (escaped), no jinja2 dependency."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell_text(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"


# ---------------------------------------------------------------------------------------------- figure data
def performance_profile(df: pd.DataFrame, times=None, time_column: str = "fit_time") -> pd.DataFrame:
    """Share of each method's runs proven optimal within time t; columns = methods, index = t.

    Methods run without a solver that never produced a bound (heuristics) are left out: they can prove nothing.
    A solver method whose runs all failed stays in, flat at zero.
    """
    exact = (df["bound"].notna() | df["proven_optimal"] | df["solver"].notna()).groupby(df["method_solver"]).transform("any")
    df = df[exact.astype(bool)]
    t_all = df[time_column].fillna(df["wall_time"])
    if times is None:
        positive = t_all[(t_all > 0) & df["proven_optimal"]]
        lo = max(0.5 * float(positive.min()) if len(positive) else 0.01, 1e-3)
        hi = max(float(t_all.max()) if t_all.notna().any() else 1.0, lo * 10)
        times = np.geomspace(lo, hi, 200)
    times = np.asarray(times, dtype=float)
    out = {}
    for method, g in df.groupby("method_solver", sort=True):
        t = t_all.loc[g.index].to_numpy(dtype=float)
        solved = np.sort(t[g["proven_optimal"].to_numpy(dtype=bool) & np.isfinite(t)])
        out[method] = np.searchsorted(solved, times, side="right") / max(len(g), 1)
    return pd.DataFrame(out, index=pd.Index(times, name="time"))


def _gap_curve(trace: list, final_gap, runtime, proven: bool, times: np.ndarray) -> np.ndarray:
    """Relative gap at each time from one run's trace (carry the latest incumbent and bound forward)."""
    from ..solvers.result import relative_gap
    gaps = np.ones(len(times))
    points = sorted(((p.get("time") or 0.0), p.get("primal"), p.get("dual")) for p in trace if isinstance(p, dict))
    primal = dual = None
    event_times, event_gaps = [], []
    for t, p, d in points:
        primal = p if p is not None else primal
        dual = d if d is not None else dual
        event_times.append(t)
        event_gaps.append(min(relative_gap(primal, dual), 1.0))
    if event_times:
        idx = np.searchsorted(np.asarray(event_times), times, side="right") - 1
        has = idx >= 0
        gaps[has] = np.asarray(event_gaps)[idx[has]]
    end = 0.0 if proven else final_gap
    if runtime is not None and math.isfinite(runtime) and end is not None and math.isfinite(end):
        gaps[times >= runtime] = min(end, 1.0)
    return gaps


def gap_over_time(df: pd.DataFrame, times=None) -> pd.DataFrame:
    """Mean relative gap (capped at 1) over each method's runs that have a solver trace; index = t."""
    runs = df[df["trace"].map(len) > 0]
    if times is None:
        ends = runs["runtime"].dropna()
        hi = max(float(ends.max()) if len(ends) else 1.0, 1e-2)
        times = np.geomspace(min(1e-3, hi / 100), hi * 1.05, 200)
    times = np.asarray(times, dtype=float)
    out = {}
    for method, g in runs.groupby("method_solver", sort=True):
        curves = [_gap_curve(r.trace, r.gap, r.runtime, bool(r.proven_optimal), times) for r in g.itertuples()]
        out[method] = np.mean(curves, axis=0)
    return pd.DataFrame(out, index=pd.Index(times, name="time"))


# ---------------------------------------------------------------------------------------------- figures
def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("figures need matplotlib: pip install 'opttrees[plot]'") from None
    return plt


MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*"]
LINES = ["-", "--", ":", "-."]


def plot_performance_profile(df: pd.DataFrame, ax=None, time_column: str = "fit_time"):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    prof = performance_profile(df, time_column=time_column)
    for method in prof.columns:
        ax.step(prof.index, prof[method], where="post", label=method)
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("time t (s)")
    ax.set_ylabel("share of runs proven optimal within t")
    ax.set_title("performance profile")
    ax.legend(fontsize="small")
    return ax


def plot_gap_over_time(df: pd.DataFrame, ax=None):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    curves = gap_over_time(df)
    for method in curves.columns:
        ax.step(curves.index, 100 * curves[method], where="post", label=method)
    ax.set_xscale("log")
    ax.set_xlabel("solver time (s)")
    ax.set_ylabel("mean gap (%)")
    ax.set_title("gap over time")
    if len(curves.columns):
        ax.legend(fontsize="small")
    return ax


def plot_accuracy_vs_depth(df: pd.DataFrame):
    plt = _pyplot()
    datasets = sorted(df["dataset"].dropna().unique()) or ["-"]
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.5 * len(datasets), 3.8), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        d = df[(df["dataset"] == name) & df["depth"].notna() & (df["outcome"] == "done")]
        use_test = d["test_score"].notna().any()
        col = "test_score" if use_test else "train_score"
        for i, (method, g) in enumerate(d.groupby("method_solver", sort=True)):
            m = g.groupby("depth")[col].mean()
            ax.plot(m.index.astype(int), m.to_numpy(), marker=MARKERS[i % len(MARKERS)], label=method,
                    linestyle=LINES[i % len(LINES)], alpha=0.85)   # exact methods often coincide: keep each visible
        if len(d):
            ax.set_xticks(sorted(int(v) for v in d["depth"].unique()))
        metric = d["metric"].dropna().iloc[0] if d["metric"].notna().any() else "score"
        ax.set_title(f"{name} ({'test' if use_test else 'train'} {metric})")
        ax.set_xlabel("max depth")
    axes[0][0].set_ylabel("mean score")
    axes[0][-1].legend(fontsize="small")
    fig.tight_layout()
    return fig


def plot_runtime_vs_rows(df: pd.DataFrame, ax=None):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    d = df[df["n_train"].notna() & (df["outcome"] == "done")].assign(time=df["fit_time"].fillna(df["wall_time"]))
    for i, (method, g) in enumerate(d.groupby("method_solver", sort=True)):
        m = g.groupby("n_train")["time"].mean()
        ax.plot(m.index.astype(float), m.to_numpy(), marker=MARKERS[i % len(MARKERS)], label=method,
                linestyle=LINES[i % len(LINES)])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training rows")
    ax.set_ylabel("mean fit time (s)")
    ax.set_title("runtime against rows")
    if d["method_solver"].nunique():
        ax.legend(fontsize="small")
    return ax


FIGURES = {"performance_profile": plot_performance_profile, "gap_over_time": plot_gap_over_time,
           "accuracy_vs_depth": plot_accuracy_vs_depth, "runtime_vs_rows": plot_runtime_vs_rows}


def write_report(source, out_dir: str | Path, title: str = "opttrees comparison", grid: str | None = None,
                 figures: bool = True) -> dict[str, Path]:
    """Write results.csv, summary.md, summary.html and (with matplotlib) the figures; return what was written."""
    df = source if isinstance(source, pd.DataFrame) else results_frame(source, grid)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    flat = df.drop(columns=["trace"])
    flat.to_csv(out / "results.csv", index=False)
    written["results.csv"] = out / "results.csv"
    summary = summary_table(df)
    failures = df[df["outcome"] != "done"][["dataset", "method_solver", "depth", "seed", "outcome", "error"]]
    failures = failures.assign(error=failures["error"].map(lambda e: (str(e).splitlines() or [""])[0][:200]
                                                           if isinstance(e, str) else ""))
    images = []
    if figures:
        try:
            plt = _pyplot()
        except ImportError:
            plt = None
        if plt is not None and not df.empty:
            for name, fn in FIGURES.items():
                res = fn(df)
                fig = res if hasattr(res, "savefig") else res.figure
                fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
                plt.close(fig)
                written[f"{name}.png"] = out / f"{name}.png"
                images.append(f"{name}.png")
    counts = df["outcome"].value_counts().to_dict()
    intro = f"{len(df)} runs: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    md = [f"# {title}\n", intro + "\n", "\n## Summary\n", "`optimal` is the share of runs proven optimal; `time_s` the "
          "median fit time; `gap` the mean final gap; `train`/`test` the mean scores.\n\n", to_markdown(summary)]
    if len(failures):
        md += ["\n## Failed runs\n\n", to_markdown(failures)]
    md += [f"\n![{i}]({i})\n" for i in images]
    (out / "summary.md").write_text("".join(md))
    written["summary.md"] = out / "summary.md"
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}</style></head><body>",
            f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p><h2>Summary</h2>", to_html(summary)]
    if len(failures):
        page += ["<h2>Failed runs</h2>", to_html(failures)]
    page += [f"<p><img src='{html.escape(i)}' alt='{html.escape(i)}'></p>" for i in images]
    page += ["<h2>All runs</h2>", to_html(flat.drop(columns=["error"]).head(2000)), "</body></html>"]
    (out / "summary.html").write_text("\n".join(page))
    written["summary.html"] = out / "summary.html"
    return written
