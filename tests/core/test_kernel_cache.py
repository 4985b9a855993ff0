"""opttrees.jit.fresh_cache: a cached kernel compiled from another module's kernel is recompiled after that
module changes (numba alone would load the stale machine code)."""
import subprocess
import sys
import textwrap

RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import pkg.a, pkg.b
    if {guard}:
        from opttrees.jit import fresh_cache
        fresh_cache([pkg.a, pkg.b])
    print(pkg.b.g())
""")


def _write(root, value):
    pkg = root / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(f"from numba import njit\n\n\n@njit(cache=True)\ndef f():\n    return {value}\n")
    (pkg / "b.py").write_text("from numba import njit\n\nfrom .a import f\n\n\n@njit(cache=True)\ndef g():\n"
                              "    return f() + 100\n")


def _run(root, guard: bool) -> str:
    out = subprocess.run([sys.executable, "-c", RUN.format(root=str(root), guard=guard)], capture_output=True,
                         text=True, check=True,
                         # no .pyc: an edit in the same second as the last run, of the same size, would load the
                         # old bytecode (pyc stamps are whole seconds) and the test would see the old f, flakily
                         env={"PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(root / "cache"),
                              "PYTHONDONTWRITEBYTECODE": "1"})
    return out.stdout.strip()


def test_stale_cache_is_dropped(tmp_path):
    _write(tmp_path, 1)
    assert _run(tmp_path, guard=True) == "101"
    (tmp_path / "pkg" / "a.py").write_text((tmp_path / "pkg" / "a.py").read_text().replace("return 1", "return 2"))
    assert _run(tmp_path, guard=False) == "101"      # numba alone: b's cache still holds the old f (stale)
    assert _run(tmp_path, guard=True) == "102"       # fresh_cache saw a.py change and dropped b's cache
    assert _run(tmp_path, guard=True) == "102"       # and the new cache is kept
