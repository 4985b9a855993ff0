"""Size limits a reader can rerun: no module of the package over 1,000 lines, no function over 100 lines.

A function is measured from its first decorator (or ``def``) to its last line, nested functions and methods each on
their own (a nested function also counts inside the one that holds it). Numba kernels (a function decorated with
``njit`` or ``intrinsic``, the compiled code under ``opttrees.jit``) are exempt from the function limit: their loops
are written out for speed. The exceptions are listed below with their reason; a module under the limit must
leave :data:`LONG_MODULES` (that list only shrinks), and the owner of a file in :data:`LONG_FUNCTIONS` removes it
once its functions are split.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "opttrees"

MAX_MODULE_LINES = 1000
MAX_FUNCTION_LINES = 100

#: module (relative to the repository) -> why it may be longer than MAX_MODULE_LINES
LONG_MODULES: dict[str, str] = {}

#: module -> why its functions may be longer than MAX_FUNCTION_LINES
LONG_FUNCTIONS: dict[str, str] = {}

KERNEL_DECORATORS = {"njit", "intrinsic"}


def modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def is_kernel(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in KERNEL_DECORATORS:
            return True
    return False


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, number of lines) of every non-kernel function and method in ``source``."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                if not is_kernel(child):
                    start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    out.append((name, start, child.end_lineno - start + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return out


def test_no_module_over_the_limit():
    long = {rel(p): n for p in modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    bad = [f"{m}: {n} lines" for m, n in sorted(long.items()) if m not in LONG_MODULES]
    assert not bad, f"modules over {MAX_MODULE_LINES} lines (split them):\n" + "\n".join(bad)
    stale = sorted(set(LONG_MODULES) - set(long))
    assert not stale, f"LONG_MODULES lists modules within {MAX_MODULE_LINES} lines (remove them): {stale}"


def test_no_function_over_the_limit():
    bad = []
    for p in modules():
        if rel(p) in LONG_FUNCTIONS:
            continue
        bad += [f"{rel(p)}:{line} {name}: {n} lines"
                for name, line, n in function_lengths(p.read_text(encoding="utf-8")) if n > MAX_FUNCTION_LINES]
    assert not bad, f"functions over {MAX_FUNCTION_LINES} lines (split them):\n" + "\n".join(bad)
    assert set(LONG_FUNCTIONS) <= {rel(p) for p in modules()}, "LONG_FUNCTIONS names a module that does not exist"


def test_the_measure_counts_decorators_nesting_and_methods_and_skips_kernels():
    """A guard against a measure that silently sees nothing."""
    source = ("@dec\n"
              "def f():\n"
              "    def g():\n"
              "        return 1\n"
              "    return g\n"
              "class A:\n"
              "    def m(self):\n"
              "        pass\n"
              "@njit(cache=True)\n"
              "def kernel():\n"
              "    pass\n"
              "@numba.extending.intrinsic\n"
              "def intr():\n"
              "    pass\n")
    assert function_lengths(source) == [("f", 1, 5), ("f.g", 3, 2), ("A.m", 7, 2)]
