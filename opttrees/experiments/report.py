"""Tables and figures from a results store: the tidy frame, summaries, publication tables and the plots papers show.

Every row says what ran (``solver_ran``, ``route``: solver / dp-bound / dp-only / heuristic) and where its proof came
from (``proof``: solver / dp-bound / dp / none); the summary counts proofs by the solver (or by the DP as the method)
apart from proofs by the DP bound, and the figures draw runs proven only by the DP bound as their own dashed lines.

Publication tables (:func:`pivot`, :func:`write_pivots`): dataset (x depth) rows by method columns, mean ± sd over
seeds/folds, the best per row in bold, as Markdown, LaTeX (booktabs) and CSV; ``solved`` counts the runs proven
optimal.

Figures (matplotlib, the optional ``plot`` extra):
- solved over time: per method, the share of its runs proven optimal within time t (the figure of the
  flow-formulation papers, on the absolute time axis); a failed or unproven run never counts;
- performance profile (Dolan and Moré 2002): per method, the share of instances (dataset, depth, seed) it proved
  within a factor tau of the fastest method's time on that instance;
- gap over time: per method, the mean relative gap at time t rebuilt from the incumbent/bound traces
  (100 % before the first incumbent and bound, the run's final gap after it ended);
- accuracy against depth: mean test score (train score when the data had no test split), one panel per dataset;
- runtime against rows: mean fit time against the number of training rows.
A figure with nothing to draw (no solver runs, no proofs) is not written; the summary says why instead.
"""
from __future__ import annotations

import hashlib
import html
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .store import ResultStore

#: columns of the tidy frame, in order (extra ones follow)
COLUMNS = ["dataset", "method", "model", "params", "solver", "assist", "solver_ran", "route", "proof", "start",
           "bound_source", "solver_version", "depth", "seed", "outcome", "status", "proven_optimal", "objective",
           "bound", "gap", "train_loss", "test_loss", "objective_meaning", "node_count", "time_to_first_incumbent",
           "time_to_proof", "runtime", "fit_time",
           "build_time", "wall_time",
           "metric", "train_score", "test_score", "n_train", "n_test", "n_features", "tree_depth", "n_leaves",
           "n_splits", "peak_memory_mb", "n_lazy_cuts", "planned_solver", "method_solver", "config", "output",
           "error", "key", "grid", "version", "host", "trace"]
#: proofs that a method's own search gave (a MIO solver's bound, or the DP as the method) - not the DP bound
OWN_PROOFS = ("solver", "dp")


def results_frame(source, grid: str | None = None) -> pd.DataFrame:
    """One tidy row per run, from a ResultStore, a store path, or a list of row dicts."""
    if isinstance(source, (str, Path)):
        source = ResultStore(source)
    rows = source.rows(grid=grid) if isinstance(source, ResultStore) else list(source)
    df = pd.DataFrame(rows)
    if "spec" in df.columns:
        df["config"] = df["spec"].map(_config_id)
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
    for c in ("time_to_first_incumbent", "time_to_proof", "node_count", "train_loss", "test_loss"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df["method_solver"] = df["method_solver"].fillna(df["method"]).fillna(df["model"])
    if df["config"].notna().any():
        df = _split_merged_configs(df)
    return df.sort_values(["dataset", "method_solver", "depth", "seed"], na_position="first").reset_index(drop=True)


def _config_id(spec) -> str | None:
    """A configuration's identity: its spec without the axes a table averages over (seed, data split, output)."""
    if not isinstance(spec, dict):
        return None
    body = {k: v for k, v in spec.items() if k not in ("output", "data")}
    body["model"] = {k: v for k, v in (spec.get("model") or {}).items() if k not in ("random_state",)}
    if isinstance(body.get("solver"), dict):
        body["solver"] = {k: v for k, v in body["solver"].items() if k not in ("seed", "random_state")}
    data = {k: v for k, v in (spec.get("data") or {}).items() if k != "split_seed"}
    return json.dumps({**body, "data": data}, sort_keys=True, default=str)


def _split_merged_configs(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of one (dataset, method, depth) from different configurations (one store holding two grids whose
    labels coincide) get distinct method names, so no table row averages two configurations."""
    d = df.assign(_depth=df["depth"].fillna(-1))
    counts = d.groupby(["dataset", "method_solver", "_depth"], dropna=False)["config"].transform("nunique")
    if not (counts > 1).any():
        return df
    df = df.copy()
    clash = counts > 1
    tag = df.loc[clash, "config"].map(lambda c: hashlib.sha256(str(c).encode()).hexdigest()[:6])
    df.loc[clash, "method_solver"] = df.loc[clash, "method_solver"] + " #" + tag
    return df


def _counts(values: pd.Series) -> str:
    """"solver" or "dp-bound 2, solver 1": the distinct values of a group, with counts when they differ."""
    vc = values.dropna().astype(str).value_counts()
    if len(vc) <= 1:
        return str(vc.index[0]) if len(vc) else ""
    return ", ".join(f"{k} {v}" for k, v in sorted(vc.items()))


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per dataset x method x depth: runs, failures, the solver that ran and the route, proofs by the solver
    apart from proofs by the DP bound, median time, median time to the first incumbent, mean gap and scores."""
    cols = ["dataset", "method", "depth", "runs", "failed", "solver_ran", "route", "proven_solver",
            "proven_dp_bound", "time_s", "first_incumbent_s", "gap", "nodes", "train", "test"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    proof = df["proof"].fillna("none") if "proof" in df else pd.Series("none", index=df.index)
    d = df.assign(depth=df["depth"].fillna(-1), failed=df["outcome"] != "done",
                  time=df["fit_time"].fillna(df["wall_time"]),
                  by_bound=df["proven_optimal"] & proof.eq("dp-bound"))
    d["own"] = d["proven_optimal"] & ~d["by_bound"]   # the solver's own proof, or the DP's as the method
    g = d.groupby(["dataset", "method_solver", "depth"], sort=True, dropna=False)
    out = pd.DataFrame({
        "runs": g.size(),
        "failed": g["failed"].sum().astype(int),
        "solver_ran": g["solver_ran"].agg(_counts),
        "route": g["route"].agg(_counts),
        "proven_solver": g["own"].sum().astype(int),
        "proven_dp_bound": g["by_bound"].sum().astype(int),
        "time_s": g["time"].median(),
        "first_incumbent_s": g["time_to_first_incumbent"].median(),
        "gap": g["gap"].mean(),
        "nodes": g["node_count"].median(),
        "train": g["train_score"].mean(),
        "test": g["test_score"].mean(),
    }).reset_index().rename(columns={"method_solver": "method"})
    out["depth"] = out["depth"].map(lambda v: "" if v == -1 else int(v))
    return out[cols]


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
def _exact_runs(df: pd.DataFrame) -> pd.DataFrame:
    """Runs of methods that can prove (a solver, a bound, a proof): heuristics are left out, they prove nothing.
    A solver method whose runs all failed stays in, flat at zero."""
    if df.empty:
        return df
    exact = (df["bound"].notna() | df["proven_optimal"] | df["solver"].notna()).groupby(df["method_solver"]).transform("any")
    return df[exact.astype(bool)]


def _proven(df: pd.DataFrame, proofs: str) -> np.ndarray:
    """Which runs count as proven: ``"own"`` (the solver's own proof, or the DP's as the method) or ``"all"``
    (the DP bound's proofs too)."""
    proven = df["proven_optimal"].to_numpy(dtype=bool)
    if proofs == "all":
        return proven
    return proven & (df["proof"].fillna("none").to_numpy() != "dp-bound")


def solved_over_time(df: pd.DataFrame, times=None, time_column: str = "fit_time", proofs: str = "own") -> pd.DataFrame:
    """Share of each method's runs proven optimal within time t; columns = methods, index = t.

    ``proofs="own"`` counts proofs by the solver (or the DP as the method) only; ``"all"`` adds the runs the DP
    bound proved without a solver.
    """
    df = _exact_runs(df)
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
        solved = np.sort(t[_proven(g, proofs) & np.isfinite(t)])
        out[method] = np.searchsorted(solved, times, side="right") / max(len(g), 1)
    return pd.DataFrame(out, index=pd.Index(times, name="time"))


#: the instance of a performance profile: a run of every method on the same data, depth and seed
INSTANCE = ["dataset", "depth", "seed"]


def performance_profile(df: pd.DataFrame, taus=None, time_column: str = "fit_time", proofs: str = "own"
                        ) -> pd.DataFrame:
    """Dolan-Moré performance profile: per method, the share of instances it proved optimal within a factor tau
    of the fastest method's time on that instance; columns = methods, index = tau (>= 1).

    An instance is a (dataset, depth, seed); a run not proven (or failed) has ratio infinity; an instance no
    method proved counts against every method. ``proofs`` as in :func:`solved_over_time`.
    """
    df = _exact_runs(df)
    if df.empty:
        return pd.DataFrame(index=pd.Index(np.asarray(taus if taus is not None else [], dtype=float), name="tau"))
    t = df[time_column].fillna(df["wall_time"]).to_numpy(dtype=float)
    t = np.where(_proven(df, proofs) & np.isfinite(t), np.maximum(t, 1e-6), np.inf)
    d = df.assign(_t=t, _depth=df["depth"].fillna(-1), _seed=df["seed"].fillna(-1))
    times = d.pivot_table(index=["dataset", "_depth", "_seed"], columns="method_solver", values="_t", aggfunc="min")
    best = times.min(axis=1)
    ratio = times.div(best.where(np.isfinite(best)), axis=0).fillna(np.inf)
    if taus is None:
        finite = ratio.to_numpy()[np.isfinite(ratio.to_numpy())]
        hi = max(float(finite.max()) if finite.size else 2.0, 2.0)
        taus = np.geomspace(1.0, hi * 1.05, 200)
    taus = np.asarray(taus, dtype=float)
    out = {m: (ratio[m].to_numpy()[None, :] <= taus[:, None]).mean(axis=1) for m in ratio.columns}
    return pd.DataFrame(out, index=pd.Index(taus, name="tau"))


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


def _colors(n: int) -> list:
    plt = _pyplot()
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    return [cycle[i % len(cycle)] for i in range(n)]


def _draw_two_kinds(ax, own: pd.DataFrame, every: pd.DataFrame, xlabel: str, ylabel: str, title: str):
    """One solid line per method (its own proofs); a dashed one beside it when DP-bound proofs add to it."""
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for color, method in zip(_colors(len(own.columns)), own.columns):
        ax.step(own.index, own[method], where="post", label=method, color=color)
        if method in every and not np.allclose(every[method].to_numpy(), own[method].to_numpy()):
            ax.step(every.index, every[method], where="post", color=color, linestyle="--",
                    label=f"{method} (with DP-bound proofs)")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return ax


def plot_solved_over_time(df: pd.DataFrame, ax=None, time_column: str = "fit_time"):
    """Share of runs proven optimal within t; None when no method can prove anything."""
    own = solved_over_time(df, time_column=time_column)
    if not len(own.columns):
        return None
    every = solved_over_time(df, times=own.index, time_column=time_column, proofs="all")
    return _draw_two_kinds(ax, own, every, "time t (s)", "share of runs proven optimal within t",
                           "instances solved to optimality over time")


def plot_performance_profile(df: pd.DataFrame, ax=None, time_column: str = "fit_time"):
    """Dolan-Moré profile (ratio to the fastest method's time per instance); None when nothing is proven."""
    every = performance_profile(df, time_column=time_column, proofs="all")
    if not len(every.columns) or not _exact_runs(df)["proven_optimal"].any():
        return None
    own = performance_profile(df, taus=every.index, time_column=time_column, proofs="own")
    return _draw_two_kinds(ax, own, every, "tau: time / fastest method's time on the instance",
                           "share of instances proven within tau", "performance profile (Dolan-Moré)")


def plot_gap_over_time(df: pd.DataFrame, ax=None):
    """Mean gap over time of the runs with a solver trace; None when no run has one."""
    curves = gap_over_time(df)
    if not len(curves.columns):
        return None
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for method in curves.columns:
        ax.step(curves.index, 100 * curves[method], where="post", label=method)
    return _log_axes(ax, "solver time (s)", "mean gap (%)", "gap over time")


def _log_axes(ax, xlabel: str, ylabel: str, title: str, log_y: bool = False):
    """``ax`` with a log x axis (and y, with ``log_y``), its labels, title and legend."""
    ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return ax


def plot_accuracy_vs_depth(df: pd.DataFrame):
    """Mean score against depth, a panel per dataset; None when no finished run has a depth and a score."""
    done = df[df["depth"].notna() & (df["outcome"] == "done") & (df["test_score"].notna() | df["train_score"].notna())]
    if done.empty:
        return None
    plt = _pyplot()
    datasets = sorted(done["dataset"].dropna().unique()) or ["-"]
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
    """Mean fit time against training rows; None when no finished run has both."""
    d = df.assign(time=df["fit_time"].fillna(df["wall_time"]))   # assign first: an empty frame takes a Series' index
    d = d[d["n_train"].notna() & (d["outcome"] == "done") & (d["time"] > 0)]
    if d.empty:
        return None
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for i, (method, g) in enumerate(d.groupby("method_solver", sort=True)):
        m = g.groupby("n_train")["time"].mean()
        ax.plot(m.index.astype(float), m.to_numpy(), marker=MARKERS[i % len(MARKERS)], label=method,
                linestyle=LINES[i % len(LINES)])
    return _log_axes(ax, "training rows", "mean fit time (s)", "runtime against rows", log_y=True)


FIGURES = {"solved_over_time": plot_solved_over_time, "performance_profile": plot_performance_profile,
           "gap_over_time": plot_gap_over_time, "accuracy_vs_depth": plot_accuracy_vs_depth,
           "runtime_vs_rows": plot_runtime_vs_rows}
#: why a figure was not drawn
EMPTY = {"solved_over_time": "no method that can prove optimality (a solver or a DP) ran",
         "performance_profile": "no run was proven optimal",
         "gap_over_time": "no run has a solver trace (no MIO solver ran)",
         "accuracy_vs_depth": "no finished run has a depth and a score",
         "runtime_vs_rows": "no finished run has a fit time"}


# ---------------------------------------------------------------------------------------------- publication tables
#: metric -> (column, "max" or "min" is best, caption, digits)
METRICS = {
    "test_score": ("test_score", "max", "test score (mean ± sd over seeds)", 3),
    "train_score": ("train_score", "max", "training score (mean ± sd over seeds)", 3),
    "fit_time": ("fit_time", "min", "fit time in seconds (mean ± sd over seeds)", 2),
    "time_to_proof": ("time_to_proof", "min", "seconds to proven optimality, over proven runs", 2),
    "gap": ("gap", "min", "final gap (mean ± sd over seeds)", 3),
    "train_loss": ("train_loss", "min", "training errors or loss / one-leaf baseline (mean ± sd over seeds)", 3),
    "test_loss": ("test_loss", "min", "test errors or loss / one-leaf baseline (mean ± sd over seeds)", 3),
    "node_count": ("node_count", "min", "branch-and-bound nodes (mean ± sd over seeds)", 0),
    "n_leaves": ("n_leaves", "min", "leaves (mean ± sd over seeds)", 1),
    "solved": ("proven_optimal", "max", "runs proven optimal by the solver (or the DP as the method) / runs; "
               "+k: proven by the DP bound without a solver", 0),
}
DEFAULT_PIVOTS = ("test_score", "train_score", "fit_time", "gap", "solved")


def pivot(df: pd.DataFrame, metric: str, rows=("dataset", "depth")) -> pd.DataFrame:
    """A long table of one metric: one line per row key x method with mean, sd, n, best (and for ``solved`` the
    counts proven by the method itself and by the DP bound).

    Failed runs count in ``solved`` (as unsolved) and are left out of the means. ``best`` marks, per row, the
    methods whose mean is the best (ties all marked; for ``solved`` the most runs proven by their own search).
    """
    if metric not in METRICS:
        raise ValueError(f"metric: one of {sorted(METRICS)}; got {metric!r}")
    column, sense, _, _ = METRICS[metric]
    rows = [r for r in rows if r in df.columns]
    keys = [*rows, "method_solver"]
    d = df.assign(**{r: df[r].fillna(-1) for r in rows if r == "depth"})
    if metric == "solved":
        proof = d["proof"].fillna("none")
        d = d.assign(_bound=d["proven_optimal"] & proof.eq("dp-bound"))
        d = d.assign(_own=d["proven_optimal"] & ~d["_bound"])
        g = d.groupby(keys, sort=True, dropna=False)
        out = pd.DataFrame({"mean": g["_own"].sum().astype(float), "sd": np.nan, "n": g.size(),
                            "dp_bound": g["_bound"].sum().astype(int)}).reset_index()
    else:
        d = d[d["outcome"] == "done"]
        values = pd.to_numeric(d[column], errors="coerce")
        g = values.groupby([d[k] for k in keys], sort=True, dropna=False)
        out = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "n": g.count()}).reset_index()
        out = out[out["n"] > 0]
    out = out.rename(columns={"method_solver": "method"})
    if "depth" in out:
        out["depth"] = out["depth"].map(lambda v: "" if v == -1 else int(v))
    best = out.groupby(rows, dropna=False)["mean"].transform("max" if sense == "max" else "min") if rows else \
        out["mean"].max() if sense == "max" else out["mean"].min()
    out["best"] = np.isclose(out["mean"], best, rtol=1e-9, atol=1e-12) & out["mean"].notna()
    if metric == "solved":
        out["best"] &= out["mean"] > 0
    return out.reset_index(drop=True)


def _value_text(r, metric: str, digits: int, pm: str) -> str:
    if metric == "solved":
        text = f"{int(r['mean'])}/{int(r['n'])}"
        return text + (f" (+{int(r['dp_bound'])})" if r.get("dp_bound") else "")
    if r["mean"] != r["mean"]:
        return ""
    text = f"{r['mean']:.{digits}f}"
    if r["n"] > 1 and r["sd"] == r["sd"]:
        text += f"{pm}{r['sd']:.{digits}f}"
    return text


def pivot_wide(long: pd.DataFrame, metric: str, style: str = "text") -> pd.DataFrame:
    """The long table as rows x methods of formatted cells; ``style`` "markdown" or "latex" marks the best."""
    digits = METRICS[metric][3]
    pm = {"latex": r" $\pm$ ", "markdown": " ± ", "text": " ± "}[style]
    rows = [c for c in long.columns if c not in ("method", "mean", "sd", "n", "best", "dp_bound")]

    def cell(r):
        text = _value_text(r, metric, digits, pm)
        if style == "latex":
            text = _latex_escape(text).replace(_latex_escape(pm), pm) if metric != "solved" else _latex_escape(text)
        if r["best"] and text:
            text = f"**{text}**" if style == "markdown" else rf"\textbf{{{text}}}" if style == "latex" else text + " *"
        return text
    cells = long.assign(_cell=long.apply(cell, axis=1))
    if not rows:
        cells = cells.assign(_row="all")
        rows = ["_row"]
    wide = cells.pivot(index=rows, columns="method", values="_cell").fillna("")
    return wide.reset_index().rename(columns={"_row": ""})


_LATEX = {"±": r"$\pm$", "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def to_latex(wide: pd.DataFrame, caption: str = "", label: str = "") -> str:
    """A booktabs table (``\\usepackage{booktabs}``); cells are already escaped (:func:`pivot_wide` with latex)."""
    n_keys = sum(1 for c in wide.columns if c in ("dataset", "depth", ""))
    spec = "l" * n_keys + "r" * (len(wide.columns) - n_keys)
    head = " & ".join(_latex_escape(c) for c in wide.columns)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", head + r" \\", r"\midrule"]
    for row in wide.itertuples(index=False):
        lines.append(" & ".join(str(v) if i >= n_keys else _latex_escape(v) for i, v in enumerate(row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_pivots(df: pd.DataFrame, out_dir: str | Path, metrics=DEFAULT_PIVOTS) -> dict[str, Path]:
    """pivot_<metric>.md / .tex / .csv for each metric with any value; return what was written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for metric in metrics:
        long = pivot(df, metric)
        if long.empty or (metric != "solved" and long["mean"].isna().all()):
            continue
        if metric == "solved" and not _exact_runs(df)["solver"].notna().any() and not df["proven_optimal"].any():
            continue   # heuristics only: nothing can be solved
        caption = METRICS[metric][2]
        md = f"**{metric}**: {caption}; best per row in bold.\n\n" + to_markdown(pivot_wide(long, metric, "markdown"))
        tex = to_latex(pivot_wide(long, metric, "latex"), caption=caption, label=f"tab:{metric}")
        for name, text in ((f"pivot_{metric}.md", md), (f"pivot_{metric}.tex", tex)):
            (out / name).write_text(text)
            written[name] = out / name
        long.to_csv(out / f"pivot_{metric}.csv", index=False)
        written[f"pivot_{metric}.csv"] = out / f"pivot_{metric}.csv"
    return written


def write_traces(df: pd.DataFrame, path: str | Path) -> Path:
    """Every run's incumbent and bound trace as a long CSV (key, dataset, method, depth, seed, time, primal, dual)."""
    rows = [{"key": r.key, "dataset": r.dataset, "method": r.method_solver, "depth": r.depth, "seed": r.seed,
             "time": p.get("time"), "primal": p.get("primal"), "dual": p.get("dual"), "kind": p.get("kind")}
            for r in df.itertuples() for p in r.trace if isinstance(p, dict)]
    pd.DataFrame(rows, columns=["key", "dataset", "method", "depth", "seed", "time", "primal", "dual", "kind"]
                 ).to_csv(path, index=False)
    return Path(path)


def write_report(source, out_dir: str | Path, title: str = "opttrees comparison", grid: str | None = None,
                 figures: bool = True, metrics=DEFAULT_PIVOTS) -> dict[str, Path]:
    """Write results.csv, traces.csv, summary.md, summary.html, the pivot tables (Markdown, LaTeX, CSV) and
    (with matplotlib) the figures that have something to show; return what was written."""
    df = source if isinstance(source, pd.DataFrame) else results_frame(source, grid)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    flat = df.drop(columns=["trace", "spec"], errors="ignore")
    flat.to_csv(out / "results.csv", index=False)
    written["results.csv"] = out / "results.csv"
    written["traces.csv"] = write_traces(df, out / "traces.csv")
    if df.empty:
        (out / "summary.md").write_text(f"# {title}\n\nNo runs in the store yet: nothing to tabulate or plot.\n")
        written["summary.md"] = out / "summary.md"
        return written
    written.update(write_pivots(df, out, metrics))
    summary = summary_table(df)
    failures = df[df["outcome"] != "done"][["dataset", "method_solver", "depth", "seed", "outcome", "error"]]
    failures = failures.assign(error=failures["error"].map(lambda e: (str(e).splitlines() or [""])[0][:200]
                                                           if isinstance(e, str) else ""))
    images, skipped = [], []
    if figures:
        try:
            plt = _pyplot()
        except ImportError:
            plt = None
            skipped.append("figures: matplotlib is not installed (pip install 'opttrees[plot]')")
        if plt is not None:
            for name, fn in FIGURES.items():
                res = fn(df)
                if res is None:
                    skipped.append(f"{name}: {EMPTY[name]}")
                    continue
                fig = res if hasattr(res, "savefig") else res.figure
                fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
                plt.close(fig)
                written[f"{name}.png"] = out / f"{name}.png"
                images.append(f"{name}.png")
    counts = df["outcome"].value_counts().to_dict()
    intro = f"{len(df)} runs: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    md = [f"# {title}\n", intro + "\n", "\n## Summary\n",
          "`solver_ran` is the solver that actually ran (`none`: the DP bound proved the start before any solver was "
          "called; `dp`: the dynamic program is the method); `route` is solver / dp-bound / dp-only / heuristic. "
          "`proven_solver` counts runs proven by the solver's own bound (or the DP as the method), `proven_dp_bound` "
          "runs proven by the DP bound; `time_s` the median fit time; `first_incumbent_s` the median seconds to the "
          "solver's first incumbent; `gap` the mean final gap; `nodes` the median node count; `train`/`test` the "
          "mean scores.\n\n", to_markdown(summary)]
    tables = sorted(k for k in written if k.startswith("pivot_") and k.endswith(".md"))
    if tables:
        md += ["\n## Tables\n\n"] + [f"- [{t}]({t}) ([LaTeX]({t[:-3]}.tex), [CSV]({t[:-3]}.csv))\n" for t in tables]
    if len(failures):
        md += ["\n## Failed runs\n\n", to_markdown(failures)]
    md += [f"\n![{i}]({i})\n" for i in images]
    if skipped:
        md += ["\n## Figures not drawn\n\n"] + [f"- {w}\n" for w in skipped]
    (out / "summary.md").write_text("".join(md))
    written["summary.md"] = out / "summary.md"
    page = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}"
            "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}</style></head><body>",
            f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p><h2>Summary</h2>", to_html(summary)]
    if len(failures):
        page += ["<h2>Failed runs</h2>", to_html(failures)]
    page += [f"<p><img src='{html.escape(i)}' alt='{html.escape(i)}'></p>" for i in images]
    page += [f"<p>{html.escape(w)}</p>" for w in skipped]
    page += ["<h2>All runs</h2>", to_html(flat.drop(columns=["error"]).head(2000)), "</body></html>"]
    (out / "summary.html").write_text("\n".join(page))
    written["summary.html"] = out / "summary.html"
    return written
