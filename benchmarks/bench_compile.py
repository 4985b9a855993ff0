"""Cold numba compile per kernel module, each in a fresh process with an empty temporary NUMBA_CACHE_DIR.

For every group of :mod:`opttrees.warmup` (the tiny fits that call each module's kernels with a real fit's
argument types) this runs ``python -m opttrees.warmup --group G`` twice in a fresh process: first with an
empty cache (cold: compile + tiny fits + imports), then again with the cache it left (warm: loading + tiny fits
+ imports). compile ~= cold - warm. A group that ``opttrees warmup`` runs after another in the same process
(:data:`opttrees.warmup.FOLLOWS`: the 64-bit local search after ``heuristics``) starts from a copy of that
group's cache instead (measured when both are listed), so its row is what it adds. Then the parallel
``opttrees warmup`` (2 processes) from an empty cache.

    PYTHONPATH=. python benchmarks/bench_compile.py [--groups heuristics dp ...] [--no-parallel]

Timings depend on the machine's load (2 shared cores here); see benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opttrees.warmup import FOLLOWS, GROUPS  # noqa: E402


def run(group: str, cache: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opttrees.warmup", "--group", group], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--groups", nargs="*", default=list(GROUPS))
    ap.add_argument("--no-parallel", action="store_true")
    args = ap.parse_args()
    rows = []
    print(f"{'group':<15} {'modules':<62} {'cold s':>7} {'warm s':>7} {'compile s':>9}", flush=True)
    kept: dict = {}   # group -> its cache, for the groups that follow it
    with tempfile.TemporaryDirectory(prefix="numba-bench-") as scratch:
        for g in args.groups:
            cache = os.path.join(scratch, g)
            lead = FOLLOWS.get(g)
            if lead in kept:
                shutil.copytree(kept[lead], cache)
            else:
                os.makedirs(cache)
            cold = run(g, cache)
            warm = run(g, cache)
            if g in FOLLOWS.values():
                kept[g] = cache
            rows.append((g, cold, warm))
            label = f"{g} (after {lead})" if lead in kept else g
            print(f"{label:<15} {', '.join(m.replace('opttrees.', '') for m in GROUPS[g][0]):<62} {cold:7.1f} "
                  f"{warm:7.1f} {cold - warm:9.1f}", flush=True)
    print(f"{'sum':<15} {'':<62} {sum(r[1] for r in rows):7.1f} {sum(r[2] for r in rows):7.1f} "
          f"{sum(r[1] - r[2] for r in rows):9.1f}", flush=True)
    if not args.no_parallel:
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "opttrees.cli", "warmup"], env=env, check=True)
            print(f"opttrees warmup (2 processes, all groups, cold): {time.perf_counter() - t0:.1f} s wall", flush=True)


if __name__ == "__main__":
    main()
