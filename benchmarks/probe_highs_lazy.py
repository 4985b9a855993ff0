#!/usr/bin/env python
"""Probe: does highspy's ``kCallbackMipDefineLazyConstraints`` add lazy constraints during a MIP solve?

Standalone; run as ``python benchmarks/probe_highs_lazy.py`` (well under a minute on 2 cores).

What it does
  1. Introspection: highspy/HiGHS version, where the callback enum lives, the ``Highs.cbMip*`` subscription
     attributes, and the attributes of the real ``data_in`` / ``data_out`` objects seen inside a callback.
  2. "Native" lazy test: the lazy rows are NOT in the model; a callback subscribed to
     ``cbMipDefineLazyConstraints`` checks every candidate and tries to hand violated rows back through any
     ``data_in`` field that could carry rows.  Run on three cases x presolve on/off x with/without a feasible
     start (``setSolution``).  Census of which MIP callback types fire.  The result is compared with the true
     optimum (same model with all rows up front): final solution must satisfy the lazy rows, and objective and
     dual bound must equal the optimum.
  3. Workaround test ("restart loop"): ``cbMipSolution`` checks candidates, ``cbMipInterrupt`` interrupts the
     solve once a candidate violates a lazy row, violated rows are added with ``addRows`` and the solve is
     restarted with the best lazy-feasible point so far as ``setSolution`` start.  Same matrix of cases.
  4. Timing on a knapsack+conflict model with a few hundred lazy rows: all rows up front vs native-lazy single solve vs the
     restart loop vs a plain solve-to-optimality/add-violated-rows loop.
  5. Verdict block.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

import highspy

INF = highspy.kHighsInf
TOL = 1e-6
MIP_CB_ATTRS = [
    "cbMipSolution",
    "cbMipImprovingSolution",
    "cbMipInterrupt",
    "cbMipLogging",
    "cbMipGetCutPool",
    "cbMipDefineLazyConstraints",
    "cbMipUserSolution",
]
# name fragments that would indicate a channel for handing rows back to HiGHS
ROW_CHANNEL_HINTS = ("lazy", "cut", "row", "cons", "start", "index", "value", "lower", "upper")


@contextlib.contextmanager
def _quiet_fd1():
    """HiGHS prints its banner from C++ when a Highs object is created (before output_flag can be set)."""
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def new_highs(presolve: bool = True, threads_note: bool = False) -> highspy.Highs:
    with _quiet_fd1():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "on" if presolve else "off")
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-9)
    return h


# --------------------------------------------------------------------------------------------------
# model description
# --------------------------------------------------------------------------------------------------
@dataclass
class Rows:
    """A block of rows lo <= A x <= hi, A dense (small probes only)."""

    A: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @property
    def m(self) -> int:
        return self.A.shape[0]

    def activity(self, x: np.ndarray) -> np.ndarray:
        return self.A @ x

    def violated(self, x: np.ndarray, tol: float = TOL) -> np.ndarray:
        act = self.activity(x)
        return np.flatnonzero((act > self.hi + tol) | (act < self.lo - tol))

    def subset(self, idx) -> "Rows":
        idx = np.asarray(sorted(idx), dtype=int)
        return Rows(self.A[idx], self.lo[idx], self.hi[idx])


@dataclass
class Case:
    name: str
    cost: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray  # bool per column
    base: Rows
    lazy: Rows
    start: np.ndarray  # feasible for base + lazy (deliberately not optimal)
    maximize: bool = True
    colnames: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.cost)


def add_rows(h: highspy.Highs, rows: Rows) -> None:
    if rows.m == 0:
        return
    starts, idx, val = [], [], []
    for i in range(rows.m):
        nz = np.flatnonzero(rows.A[i])
        starts.append(len(idx))
        idx.extend(nz.tolist())
        val.extend(rows.A[i, nz].tolist())
    h.addRows(
        rows.m,
        np.asarray(rows.lo, dtype=np.float64),
        np.asarray(rows.hi, dtype=np.float64),
        len(idx),
        np.asarray(starts, dtype=np.int32),
        np.asarray(idx, dtype=np.int32),
        np.asarray(val, dtype=np.float64),
    )


def load(case: Case, h: highspy.Highs, with_lazy_rows: bool) -> None:
    n = case.n
    h.addVars(n, case.lb.astype(np.float64), case.ub.astype(np.float64))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), case.cost.astype(np.float64))
    ints = np.flatnonzero(case.integer).astype(np.int32)
    if len(ints):
        h.changeColsIntegrality(len(ints), ints, np.array([highspy.HighsVarType.kInteger] * len(ints)))
    h.changeObjectiveSense(highspy.ObjSense.kMaximize if case.maximize else highspy.ObjSense.kMinimize)
    add_rows(h, case.base)
    if with_lazy_rows:
        add_rows(h, case.lazy)


def col_values(h: highspy.Highs) -> np.ndarray:
    return np.asarray(h.getSolution().col_value, dtype=np.float64)


def true_optimum(case: Case) -> tuple[float, np.ndarray, float]:
    h = new_highs(presolve=True)
    load(case, h, with_lazy_rows=True)
    t = time.perf_counter()
    h.run()
    dt = time.perf_counter() - t
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.getModelStatus()
    return h.getInfo().objective_function_value, col_values(h), dt


# --------------------------------------------------------------------------------------------------
# cases
# --------------------------------------------------------------------------------------------------
def case_tiny() -> Case:
    # max x + y, x,y in {0..10}; lazy: x + y <= 7.  No base rows at all.
    return Case(
        name="tiny  max x+y, lazy x+y<=7",
        cost=np.array([1.0, 1.0]),
        lb=np.zeros(2),
        ub=np.full(2, 10.0),
        integer=np.array([True, True]),
        base=Rows(np.zeros((0, 2)), np.zeros(0), np.zeros(0)),
        lazy=Rows(np.array([[1.0, 1.0]]), np.array([-INF]), np.array([7.0])),
        start=np.array([3.0, 3.0]),
        colnames=["x", "y"],
    )


def case_gcol() -> Case:
    # cols x, y integer [0,10], g continuous [0,1].  max g - 0.2x + 0.1y, base: x + y <= 10.
    # g appears in NO row of the model; lazily g <= x - 3  <=>  g - x <= -3.
    # Without the lazy row presolve can fix g = 1 (free profit), x = 0.  True optimum: x=4, y=6, g=1 -> 0.8.
    return Case(
        name="g-col g in no row, lazy g<=x-3",
        cost=np.array([-0.2, 0.1, 1.0]),
        lb=np.zeros(3),
        ub=np.array([10.0, 10.0, 1.0]),
        integer=np.array([True, True, False]),
        base=Rows(np.array([[1.0, 1.0, 0.0]]), np.array([-INF]), np.array([10.0])),
        lazy=Rows(np.array([[-1.0, 0.0, 1.0]]), np.array([-INF]), np.array([-3.0])),
        start=np.array([3.0, 7.0, 0.0]),
        colnames=["x", "y", "g"],
    )


def case_conflict(n: int, m_lazy: int, seed: int, k_base: int = 3, name: str | None = None) -> Case:
    """max c x, x binary; base: k_base random knapsack rows (so branch-and-bound has work to do);
    lazy: m_lazy conflict rows x_i + x_j <= 1 on random pairs (many slack at the optimum, some binding)."""
    rng = np.random.default_rng(seed)
    c = rng.integers(10, 40, n).astype(float)
    W = rng.integers(1, 30, (k_base, n)).astype(float)
    cap = np.floor(W.sum(1) * 0.35)
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < m_lazy:
        i, j = sorted(rng.choice(n, 2, replace=False).tolist())
        pairs.add((i, j))
    A = np.zeros((m_lazy, n))
    for r, (i, j) in enumerate(sorted(pairs)):
        A[r, i] = A[r, j] = 1.0
    # greedy feasible (w.r.t. base AND lazy rows) start, deliberately not optimal
    start = np.zeros(n)
    for j in np.argsort(c):  # cheapest first -> poor but feasible
        start[j] = 1.0
        if (W @ start > cap + TOL).any() or (A @ start > 1 + TOL).any():
            start[j] = 0.0
    return Case(
        name=name or f"conflict n={n}, {m_lazy} lazy rows",
        cost=c,
        lb=np.zeros(n),
        ub=np.ones(n),
        integer=np.ones(n, dtype=bool),
        base=Rows(W, np.full(k_base, -INF), cap),
        lazy=Rows(A, np.full(m_lazy, -INF), np.ones(m_lazy)),
        start=start,
    )


# --------------------------------------------------------------------------------------------------
# 1. introspection
# --------------------------------------------------------------------------------------------------
def public(obj) -> list[str]:
    return [a for a in dir(obj) if not a.startswith("_")]


def introspect() -> dict:
    from importlib.metadata import version

    info: dict = {}
    print("=" * 100)
    print("1. INTROSPECTION")
    print("=" * 100)
    info["highspy"] = version("highspy")
    info["highs"] = f"{highspy.HIGHS_VERSION_MAJOR}.{highspy.HIGHS_VERSION_MINOR}.{highspy.HIGHS_VERSION_PATCH}"
    print(f"highspy (dist) {info['highspy']}   HiGHS library {info['highs']}   module {highspy.__file__}")
    cbmod = highspy.cb
    print(f"highspy.cb = {cbmod.__name__}; members: {public(cbmod)}")
    members = list(cbmod.HighsCallbackType.__members__)
    info["enum_has_lazy"] = "kCallbackMipDefineLazyConstraints" in members
    lazy_enum = getattr(cbmod.HighsCallbackType, "kCallbackMipDefineLazyConstraints", None)
    print(f"HighsCallbackType members: {members}")
    print(f"kCallbackMipDefineLazyConstraints present: {info['enum_has_lazy']}  (int value {int(lazy_enum)})")
    cb_attrs = [a for a in dir(highspy.Highs) if a.startswith("cb")]
    info["has_cb_attr"] = hasattr(highspy.Highs, "cbMipDefineLazyConstraints")
    print(f"Highs.cb* subscription attributes: {cb_attrs}")
    print(f"Highs.cbMipDefineLazyConstraints present: {info['has_cb_attr']}  "
          f"(use: h.cbMipDefineLazyConstraints.subscribe(fn) or `+= fn`; fn(e: HighsCallbackEvent))")
    print(f"class-level HighsCallbackInput  attributes: {public(cbmod.HighsCallbackInput)}")
    print(f"class-level HighsCallbackOutput attributes: {public(cbmod.HighsCallbackOutput)}")

    # live objects inside a callback
    seen: dict = {}
    h = new_highs(presolve=False)
    load(case_tiny(), h, with_lazy_rows=False)

    def grab(e):
        if "data_in" in seen:
            return
        seen["type"] = str(e.callback_type)
        seen["message"] = e.message
        seen["data_in"] = public(e.data_in) if e.data_in is not None else None
        seen["data_out"] = public(e.data_out)
        sol = e.data_out.mip_solution
        seen["mip_solution"] = (type(sol).__name__, getattr(sol, "dtype", None), np.asarray(sol).copy(),
                                bool(getattr(sol, "flags", None) and not sol.flags.owndata))
        seen["user_solution"] = np.asarray(e.data_in.user_solution).copy()
        try:  # are the data_out row arrays writable?  (they would be the only row-shaped fields)
            e.data_out.cutpool_start = np.array([0, 2], dtype=np.int32)
            seen["cutpool_write"] = "accepted"
        except Exception as ex:  # noqa: BLE001
            seen["cutpool_write"] = f"{type(ex).__name__}: {ex}"

    h.cbMipSolution.subscribe(grab)
    h.run()
    print(f"live callback ({seen.get('type')}, message {seen.get('message')!r}):")
    print(f"  data_in  (HighsCallbackInput)  -> {seen.get('data_in')}")
    print(f"  data_out (HighsCallbackOutput) -> {seen.get('data_out')}")
    t, dt, val, view = seen["mip_solution"]
    print(f"  data_out.mip_solution: {t} dtype={dt} value={val}  is a view into HiGHS memory: {view} "
          f"(copy it before the callback returns)")
    print(f"  data_in.user_solution (empty unless you set one): {seen['user_solution']}")
    print(f"  writing data_out.cutpool_start: {seen['cutpool_write']}")
    row_fields_in = [a for a in (seen["data_in"] or []) if any(k in a.lower() for k in ROW_CHANNEL_HINTS)]
    info["data_in_row_fields"] = row_fields_in
    info["data_in_fields"] = seen["data_in"]
    print(f"  data_in fields that could carry rows (names with {ROW_CHANNEL_HINTS}): {row_fields_in or 'NONE'}")
    print("  -> cutpool_* exist only on data_out and are filled only for kCallbackMipGetCutPool (HiGHS's own "
          "cut pool, export only).")
    # static corroboration: which strings mentioning 'lazy' does the compiled extension contain?
    import glob
    import re

    so = glob.glob(os.path.join(os.path.dirname(highspy.__file__), "_core*.so")) + glob.glob(
        os.path.join(os.path.dirname(highspy.__file__), "_core*.pyd"))
    if so:
        blob = open(so[0], "rb").read()
        hits = sorted({m.group(0).decode() for m in re.finditer(rb"[A-Za-z_]*[Ll]azy[A-Za-z_]*", blob)})
        info["so_lazy_strings"] = hits
        print(f"  strings containing 'lazy' in {os.path.basename(so[0])}: {hits}  (only the Python enum name => "
              f"no lazy-row handling code/messages in the library)")
    return info


# --------------------------------------------------------------------------------------------------
# 2. native lazy-callback attempt
# --------------------------------------------------------------------------------------------------
def native_lazy_solve(case: Case, presolve: bool, use_start: bool) -> dict:
    h = new_highs(presolve=presolve)
    load(case, h, with_lazy_rows=False)
    fires = {a: 0 for a in MIP_CB_ATTRS}
    cand = {"n": 0, "violating": 0, "first": None, "pushed": 0, "threads": set(), "start_seen": False,
            "bad_len": 0}
    main_tid = threading.get_ident()

    def counter(attr):
        def f(e):
            fires[attr] += 1
            cand["threads"].add(threading.get_ident() == main_tid)
        return f

    def on_solution(e):
        x = np.array(e.data_out.mip_solution, dtype=np.float64, copy=True)
        cand["n"] += 1
        if len(x) != case.n:  # would mean the candidate is in presolved space
            cand["bad_len"] += 1
            return
        if cand["first"] is None:
            cand["first"] = x
        if len(case.lazy.violated(x)):
            cand["violating"] += 1
        if np.allclose(x, case.start):
            cand["start_seen"] = True

    def on_lazy(e):
        # Would be the place to add rows.  Hand violated rows back through whatever data_in offers.
        x = np.array(e.data_out.mip_solution, dtype=np.float64, copy=True)
        viol = case.lazy.violated(x)
        if len(viol) == 0 or e.data_in is None:
            return
        sub = case.lazy.subset(viol)
        for a in public(e.data_in):
            if any(k in a.lower() for k in ("lazy", "cut", "row")):
                try:
                    setattr(e.data_in, a, sub)
                    cand["pushed"] += 1
                except Exception:  # noqa: BLE001
                    pass

    for a in MIP_CB_ATTRS:
        getattr(h, a).subscribe(counter(a))
    h.cbMipSolution.subscribe(on_solution)
    h.cbMipDefineLazyConstraints.subscribe(on_lazy)
    start_status = None
    if use_start:
        start_status = h.setSolution(case.n, np.arange(case.n, dtype=np.int32), case.start.astype(np.float64))
    t = time.perf_counter()
    h.run()
    dt = time.perf_counter() - t
    x = col_values(h)
    info = h.getInfo()
    return {
        "status": h.modelStatusToString(h.getModelStatus()),
        "obj": info.objective_function_value,
        "bound": info.mip_dual_bound,
        "x": x,
        "viol": len(case.lazy.violated(x)),
        "fires": fires,
        "cand": cand,
        "time": dt,
        "start_status": start_status,
        "nodes": info.mip_node_count,
    }


# --------------------------------------------------------------------------------------------------
# 3. workaround: interrupt-and-restart loop
# --------------------------------------------------------------------------------------------------
def restart_loop(case: Case, presolve: bool, use_start: bool, interrupt: bool = True,
                 max_rounds: int = 500) -> dict:
    """Lazy rows emulated by restarts.

    Each round: solve the current model; cbMipSolution copies every candidate and, if it violates lazy rows,
    records them (and the round is interrupted at the next cbMipInterrupt when `interrupt`); candidates that
    satisfy every lazy row update the best known lazy-feasible point, which is passed to the next round via
    setSolution.  After the round the final point is checked too (presolve can solve a model without any MIP
    callback firing).  Violated rows are appended with addRows.  Stops when the round ended optimal and its
    solution satisfies every lazy row: then its dual bound is valid for the full model.
    """
    h = new_highs(presolve=presolve)
    load(case, h, with_lazy_rows=False)
    in_model = np.zeros(case.lazy.m, dtype=bool)
    best = {"x": case.start.copy() if use_start else None,
            "obj": float(case.cost @ case.start) if use_start else None}
    sign = 1.0 if case.maximize else -1.0
    state = {"pending": set(), "interrupted": 0, "cands": 0}

    def consider(x):
        viol = case.lazy.violated(x)
        if len(viol):
            state["pending"].update(int(i) for i in viol if not in_model[i])
            return False
        # also check base rows/bounds (candidates come from HiGHS, so they satisfy them)
        obj = float(case.cost @ x)
        if best["obj"] is None or sign * obj > sign * best["obj"] + 1e-12:
            best["x"], best["obj"] = x.copy(), obj
        return True

    def on_solution(e):
        state["cands"] += 1
        consider(np.array(e.data_out.mip_solution, dtype=np.float64, copy=True))

    def on_interrupt(e):
        # PITFALL: data_in.user_interrupt is sticky -- HiGHS does not reset it between run() calls, so it must be
        # written on every call (True or False), otherwise the next round is interrupted immediately.
        e.interrupt(bool(interrupt and state["pending"]))

    h.cbMipSolution.subscribe(on_solution)
    if interrupt:
        h.cbMipInterrupt.subscribe(on_interrupt)

    rounds = 0
    t = time.perf_counter()
    final = None
    while rounds < max_rounds:
        rounds += 1
        state["pending"] = set()
        if best["x"] is not None:
            h.setSolution(case.n, np.arange(case.n, dtype=np.int32), best["x"])
        h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kInterrupt:
            state["interrupted"] += 1
        x = col_values(h)
        if len(x) == case.n and status in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInterrupt):
            consider(x)
        if not state["pending"]:
            if status == highspy.HighsModelStatus.kOptimal:
                info = h.getInfo()
                final = {"obj": info.objective_function_value, "bound": info.mip_dual_bound, "x": x}
                break
            raise RuntimeError(f"round ended {h.modelStatusToString(status)} without new lazy rows")
        new = sorted(state["pending"])
        in_model[new] = True
        add_rows(h, case.lazy.subset(new))
    dt = time.perf_counter() - t
    return {
        "rounds": rounds,
        "rows_added": int(in_model.sum()),
        "interrupted": state["interrupted"],
        "cands": state["cands"],
        "time": dt,
        **(final or {"obj": float("nan"), "bound": float("nan"), "x": np.full(case.n, np.nan)}),
        "viol": len(case.lazy.violated(final["x"])) if final else -1,
    }


# --------------------------------------------------------------------------------------------------
def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


def fmt(v: float) -> str:
    return f"{v:10.4f}"


def main() -> int:
    t_all = time.perf_counter()
    info = introspect()

    cases = [case_tiny(), case_gcol(), case_conflict(n=30, m_lazy=60, seed=1)]
    truths = {}
    for c in cases:
        opt, xopt, _ = true_optimum(c)
        truths[c.name] = opt
        assert len(c.lazy.violated(c.start)) == 0 and len(c.base.violated(c.start)) == 0, c.name

    # ---------------------------------------------------------------------------------------------- 2
    print()
    print("=" * 100)
    print("2. NATIVE LAZY CALLBACK  (lazy rows only offered through cbMipDefineLazyConstraints)")
    print("=" * 100)
    print(f"{'case':34s} {'presolve':8s} {'start':5s} {'status':9s} {'obj':>10s} {'bound':>10s} {'true opt':>10s} "
          f"{'lazyviol':>8s} {'verdict':7s}  fires(lazy/sol/impr/intr/cutpool/usersol) cand(viol) nodes")
    native_ok = True
    lazy_fired_total = 0
    native_rows = []
    for c in cases:
        for presolve in (True, False):
            for use_start in (False, True):
                r = native_lazy_solve(c, presolve, use_start)
                opt = truths[c.name]
                ok = r["viol"] == 0 and close(r["obj"], opt) and close(r["bound"], opt)
                native_ok &= ok
                f = r["fires"]
                lazy_fired_total += f["cbMipDefineLazyConstraints"]
                native_rows.append((c, presolve, use_start, r))
                print(f"{c.name:34s} {'on' if presolve else 'off':8s} {'yes' if use_start else 'no':5s} "
                      f"{r['status'][:9]:9s} {fmt(r['obj'])} {fmt(r['bound'])} {fmt(opt)} {r['viol']:8d} "
                      f"{'PASS' if ok else 'FAIL':7s}  "
                      f"{f['cbMipDefineLazyConstraints']}/{f['cbMipSolution']}/{f['cbMipImprovingSolution']}/"
                      f"{f['cbMipInterrupt']}/{f['cbMipGetCutPool']}/{f['cbMipUserSolution']}"
                      f"  {r['cand']['n']}({r['cand']['violating']}) {r['nodes']}")
    # observations on candidates
    first_pts = [(c.name, p, s, r["cand"]["first"]) for c, p, s, r in native_rows if r["cand"]["first"] is not None]
    zero_first = [nm for nm, p, s, x in first_pts if not s and np.allclose(x, 0)]
    main_thread = all(r["cand"]["threads"] <= {True} for *_, r in native_rows)
    presolved_away = [(c.name, p, s) for c, p, s, r in native_rows if sum(r["fires"].values()) == 0]
    print(f"cbMipDefineLazyConstraints fired {lazy_fired_total} times in {len(native_rows)} solves.")
    print(f"cbMipSolution candidates include heuristic points: first candidate was the trivial all-zero point "
          f"(trivial heuristic) in {len(zero_first)} no-start solves: {sorted(set(zero_first))}")
    print(f"solves in which NO MIP callback fired at all (presolve solved the model, so no candidate was ever "
          f"shown to the user): {presolved_away or 'none'}")
    print(f"all MIP callbacks ran on the thread that called run(): {main_thread}")
    for c, p, st, r in native_rows:
        if c.name.startswith("g-col"):
            print(f"g-col final point (presolve {'on' if p else 'off'}, start {'yes' if st else 'no'}): "
                  + ", ".join(f"{nm}={v:g}" for nm, v in zip(c.colnames, r["x"]))
                  + "  (lazy g <= x-3 needs x >= 4 for g = 1)")
    bad = sum(r["cand"]["bad_len"] for *_, r in native_rows)
    print(f"cbMipSolution candidates whose length != number of ORIGINAL columns (presolved space): {bad} "
          f"(so mip_solution is in original column space, also with presolve on)")
    seen = [(c.name, "on" if p else "off", r["cand"]["start_seen"]) for c, p, s, r in native_rows if s]
    print("setSolution start shown to cbMipSolution as a candidate: "
          + "; ".join(f"{nm} presolve {p}: {v}" for nm, p, v in seen))

    # ---------------------------------------------------------------------------------------------- 3
    print()
    print("=" * 100)
    print("3. WORKAROUND: interrupt-and-restart loop (cbMipSolution check + cbMipInterrupt + addRows + setSolution)")
    print("=" * 100)
    print(f"{'case':34s} {'presolve':8s} {'start':5s} {'rounds':>6s} {'rows+':>5s} {'intr':>4s} {'obj':>10s} "
          f"{'bound':>10s} {'true opt':>10s} {'lazyviol':>8s} verdict")
    loop_ok = True
    for c in cases:
        for presolve in (True, False):
            for use_start in (False, True):
                r = restart_loop(c, presolve, use_start)
                opt = truths[c.name]
                ok = r["viol"] == 0 and close(r["obj"], opt) and close(r["bound"], opt)
                loop_ok &= ok
                print(f"{c.name:34s} {'on' if presolve else 'off':8s} {'yes' if use_start else 'no':5s} "
                      f"{r['rounds']:6d} {r['rows_added']:5d} {r['interrupted']:4d} {fmt(r['obj'])} {fmt(r['bound'])} "
                      f"{fmt(opt)} {r['viol']:8d} {'PASS' if ok else 'FAIL'}")

    # ---------------------------------------------------------------------------------------------- 4
    print()
    print("=" * 100)
    print("4. TIMING  (one run each; 2-core machine, treat as +-30 %)")
    print("=" * 100)
    big = case_conflict(n=60, m_lazy=300, seed=7)
    opt, _, t_full = true_optimum(big)
    r_nat = native_lazy_solve(big, presolve=True, use_start=True)
    r_int = restart_loop(big, presolve=True, use_start=True, interrupt=True)
    r_opt = restart_loop(big, presolve=True, use_start=True, interrupt=False)
    print(f"case: {big.name}; true optimum {opt:.4f}")
    print(f"  {'all ' + str(big.lazy.m) + ' rows up front':38s}: {t_full:7.3f} s  obj {opt:.4f}")
    print(f"  {'native lazy callback (1 solve)':38s}: {r_nat['time']:7.3f} s  obj {r_nat['obj']:.4f}  "
          f"bound {r_nat['bound']:.4f}  lazy rows violated by result: {r_nat['viol']}  "
          f"lazy-cb fires: {r_nat['fires']['cbMipDefineLazyConstraints']}  -> {'WRONG' if r_nat['viol'] else 'ok'}")
    for label, r in (("restart loop, interrupt on violation", r_int), ("re-solve to optimality + add rows", r_opt)):
        ok = r["viol"] == 0 and close(r["obj"], opt) and close(r["bound"], opt)
        print(f"  {label:38s}: {r['time']:7.3f} s  obj {r['obj']:.4f}  rounds {r['rounds']}, rows added "
              f"{r['rows_added']}/{big.lazy.m}, interrupts {r['interrupted']}  -> {'correct' if ok else 'WRONG'}")
        loop_ok &= ok

    # ---------------------------------------------------------------------------------------------- 5
    print()
    print("=" * 100)
    print("5. VERDICT")
    print("=" * 100)
    print(f"highspy {info['highspy']} / HiGHS {info['highs']}: enum kCallbackMipDefineLazyConstraints present="
          f"{info['enum_has_lazy']}, Highs.cbMipDefineLazyConstraints present={info['has_cb_attr']}")
    print(f"data_in fields: {info['data_in_fields']}  (row channel: {info['data_in_row_fields'] or 'NONE'})")
    if native_ok and lazy_fired_total > 0:
        print("NATIVE LAZY CONSTRAINTS: WORKS")
    else:
        print("NATIVE LAZY CONSTRAINTS: DOES NOT WORK -- the callback type can be subscribed (startCallback "
              f"succeeds) but fired {lazy_fired_total} times in {len(native_rows)} solves, and HighsCallbackInput "
              "has no field to pass rows; solutions violate the 'lazy' rows (with presolve on or off, with or "
              "without a start; the g-column is fixed at its profitable bound).")
    print(f"WORKAROUND (interrupt-and-restart loop with setSolution start): "
          f"{'WORKS' if loop_ok else 'DOES NOT WORK'} on every case above, presolve on and off, with and without start.")
    print("Recipe for the workaround: h.cbMipSolution.subscribe(f) -> x = np.array(e.data_out.mip_solution, copy=True) "
          "(float64, original columns); record violated rows; h.cbMipInterrupt.subscribe(g) -> "
          "e.interrupt(bool(pending)) EVERY call (data_in.user_interrupt is sticky across run()); then "
          "h.addRows(k, lo, hi, nnz, starts:int32, index:int32, value:float64), "
          "h.setSolution(n, arange(n):int32, best_lazy_feasible:float64), h.run() again; stop when kOptimal and the "
          "final point violates no lazy row.")
    print(f"total probe time {time.perf_counter() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
