"""The first run compiles nothing after ``opttrees warmup`` (issue 41, "First run").

The README's Python snippets run in a child process that listens to numba's ``numba:compile`` event (fired for a
real compile only, not for a load from the on-disk cache): as written (pandas tables from ``read_csv`` and
``as_frame=True``, numpy arrays), then the snippets that load numpy arrays from ``sklearn.datasets`` again with
``as_frame=True`` forced, so iris meets both numpy arrays and pandas 3's read-only ``to_numpy()`` arrays. Nothing may compile once
``opttrees warmup --check`` says no kernel is cold: that is what makes ``--check`` exact.

The fast test uses this installation's numba cache (``make test`` runs ``opttrees warmup`` first) and is skipped
when ``--check`` lists cold kernels; the slow one starts from an empty cache, runs the warmup and then the snippets.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

RUN = textwrap.dedent("""
    import functools, json, sys, warnings
    import matplotlib
    matplotlib.use("Agg")
    from numba.core import event
    compiled = []

    class Compiles(event.Listener):
        def on_start(self, ev):
            d = ev.data["dispatcher"]
            compiled.append(f"{d.py_func.__module__}.{d.py_func.__name__}" + str(tuple(str(a) for a in ev.data["args"])))

        def on_end(self, ev):
            pass

    event.register("numba:compile", Compiles())
    import sklearn.datasets as sd

    def flipped(load):
        @functools.wraps(load)
        def wrapper(*args, **kw):
            kw["as_frame"] = True
            return load(*args, **kw)
        return wrapper

    blocks = json.load(open(sys.argv[1]))
    for flip in (False, True):
        saved = {n: getattr(sd, n) for n in dir(sd) if n.startswith("load_")}
        if flip:
            for n, f in saved.items():
                setattr(sd, n, flipped(f))
        try:
            for i, code in enumerate(blocks):
                if flip and ("as_frame=True" in code or "load_" not in code):
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(compile(code, f"README python block {i}" + (" (as_frame flipped)" if flip else ""), "exec"),
                         {"__name__": "__readme__"})
                import matplotlib.pyplot as plt
                plt.close("all")
        finally:
            for n, f in saved.items():
                setattr(sd, n, f)
    print("COMPILED " + json.dumps(compiled))
""")

FENCE = re.compile(r"^```python\s*$", re.M)


def readme_python_blocks() -> list[str]:
    """The README's ```python blocks, except those marked ``<!-- skip-test: ... -->``."""
    text = (ROOT / "README.md").read_text()
    out = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip().splitlines()[-1:] or [""]
        if "skip-test" in before[0]:
            continue
        end = text.index("\n```", m.end())
        out.append(text[m.end():end].lstrip("\n") + "\n")
    return out


def test_the_readme_has_python_snippets():
    blocks = readme_python_blocks()
    assert len(blocks) >= 3 and any("as_frame=True" in b for b in blocks) and any("read_csv" in b for b in blocks)


def run_snippets(tmp_path: Path, env: dict) -> list[str]:
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("output", "__pycache__"))
    blocks = tmp_path / "blocks.json"
    blocks.write_text(json.dumps(readme_python_blocks()))
    out = subprocess.run([sys.executable, "-c", RUN, str(blocks)], cwd=work, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("COMPILED "))
    return json.loads(line[len("COMPILED "):])


def _env(**extra) -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT), **extra)


def check(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opttrees.cli", "warmup", "--check", "--no-large"], env=env,
                          capture_output=True, text=True, timeout=300)


def test_readme_snippets_compile_nothing_when_warm(tmp_path):
    """This installation's cache: when ``warmup --check`` says no kernel is cold, the README snippets (numpy and
    pandas inputs) compile nothing."""
    env = _env()
    cold = check(env)
    if cold.returncode != 0:
        pytest.skip("kernels are cold here (run `opttrees warmup`):\n" + cold.stdout[-2000:])
    assert run_snippets(tmp_path, env) == []


@pytest.mark.slow
def test_fresh_cache_warmup_then_snippets_compile_nothing(tmp_path):
    """An empty numba cache: `--check` lists cold kernels, `opttrees warmup` compiles them, `--check` then says
    none is cold, and the README snippets compile nothing (minutes: a cold compile of every kernel)."""
    env = _env(NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    before = check(env)
    assert before.returncode == 1 and "opttrees.dp.engine.search" in before.stdout
    warm = subprocess.run([sys.executable, "-m", "opttrees.cli", "warmup", "--no-large"], env=env,
                          capture_output=True, text=True, timeout=3600)
    assert warm.returncode == 0, warm.stdout[-2000:] + warm.stderr[-2000:]
    after = check(env)
    assert after.returncode == 0 and after.stdout.strip() == "no kernel is cold", after.stdout
    # what a fresh warmup compiles is what opttrees/_kernel_signatures.py records (else: --record)
    dump = subprocess.run([sys.executable, "-m", "opttrees.warmup", "--dump"], env=env, capture_output=True,
                          text=True, timeout=300, check=True)
    from opttrees._kernel_signatures import LARGE, SIGNATURES
    got = json.loads(dump.stdout)   # --no-large: the 64-bit local search's signatures were not compiled
    assert got == {k: [s for s in v if s not in LARGE.get(k, [])] for k, v in SIGNATURES.items()}
    assert run_snippets(tmp_path, env) == []


# --- the pieces: inputs normalised at the boundary, is_cold per signature, one kernel list ---------------------

def test_inputs_reach_the_kernels_writeable_c_ordered_float64():
    """pandas 3 ``to_numpy()`` is read-only, a slice is strided, float32 and int are other types: numba would
    compile each kernel again for each. The boundary hands every method one form."""
    import numpy as np
    import pandas as pd

    from opttrees.data.prepared import check_sample_weight, prepare

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    ro = frame.to_numpy()
    assert not ro.flags.writeable   # what pandas 3 gives
    wide = rng.normal(size=(30, 6))
    for X in (frame, ro, np.asfortranarray(ro), wide[:, ::2], ro.astype(np.float32), (ro * 10).astype(np.int32)):
        w = pd.Series(np.ones(30)).to_numpy()
        data = prepare(X, pd.Series(np.arange(30) % 2), sample_weight=w)
        for arr in (data.X, data.Xs, data.y, data.sample_weight):
            assert arr.flags.writeable and arr.flags.c_contiguous, type(X)
        assert data.X.dtype == np.float64
    assert check_sample_weight(pd.Series(np.ones(4)).to_numpy(), 4).flags.writeable


TOY = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np
    from toy import kern
    from opttrees import jit
    import opttrees._kernel_signatures as ks
    name = jit.kernel_name(kern)
    ks.SIGNATURES[name] = [["array(float64, 1d, C)"], ["array(int64, 1d, C)"]]
    print("before", jit.is_cold(kern), len(jit.cold_signatures(kern)))
    if sys.argv[1] == "one":
        kern(np.zeros(3))
    else:
        kern(np.zeros(3)); kern(np.zeros(3, np.int64))
    print("after", jit.is_cold(kern), jit.cold_signatures(kern))
""")


@pytest.mark.parametrize("calls", ["one", "both"])
def test_is_cold_per_signature(tmp_path, calls):
    """A kernel with one of its two recorded signatures cached is still cold (numba would compile the other);
    with both cached it is warm, in this process and in a new one (read from the cache index on disk)."""
    (tmp_path / "toy.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef kern(a):\n    return a.sum()\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    code = TOY.format(root=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code, calls], env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "before True 2" in first.stdout
    again = subprocess.run([sys.executable, "-c", code.replace('print("before"', 'print("disk"'), "none"], env=env,
                           capture_output=True, text=True, timeout=300)
    if calls == "one":
        assert "after True [('array(int64, 1d, C)',)]" in first.stdout
        assert "disk True 1" in again.stdout       # the float64 signature is on disk, the int64 one is not
    else:
        assert "after False []" in first.stdout
        assert "disk False 0" in again.stdout


def test_the_kernel_list_is_the_one_everyone_reads():
    """opttrees/kernel_modules.py: the Makefile's warm stamp watches its files, warmup checks its modules, and
    every module's cache fingerprint unit comes from it."""
    from opttrees import kernel_modules, warmup
    assert warmup.KERNEL_MODULES == kernel_modules.KERNEL_MODULES
    make = subprocess.run(["make", "-pn", "warmup"], cwd=ROOT, capture_output=True, text=True)
    line = next(ln for ln in make.stdout.splitlines() if ln.startswith("KERNELS :="))
    assert line.split(":=", 1)[1].split() == kernel_modules.files()
    assert "opttrees/heuristics/kernels/structs.py" in kernel_modules.files()
    # no module writes its own fingerprint list: fresh_cache is called through guard_cache (jit.py) only
    callers = [p.name for p in (ROOT / "opttrees").rglob("*.py") if "fresh_cache(" in p.read_text()]
    assert callers == ["jit.py"], callers
    guarded = [p for p in (ROOT / "opttrees").rglob("*.py") if "guard_cache(__name__)" in p.read_text()
               or "guard_cache(losses.__name__)" in p.read_text()]
    # the units with other files compiled in (dp: engine_base, depth_two, engine, continuous_kernels; prescriptive's
    # kernels), dp.stats_kernels and the heuristics group
    assert len(guarded) == 7, guarded


def test_every_kernel_has_recorded_signatures():
    """opttrees/_kernel_signatures.py names every cached kernel (a new kernel: rerun
    ``python -m opttrees.warmup --record``)."""
    from opttrees._kernel_signatures import SIGNATURES
    from opttrees.jit import kernel_name
    from opttrees.warmup import kernels
    names = {kernel_name(d) for _, d in kernels()}
    assert names == set(SIGNATURES), (names ^ set(SIGNATURES))
    assert all(SIGNATURES[n] for n in names)
    assert not [n for n, sigs in SIGNATURES.items() if any("readonly" in t for s in sigs for t in s)]
