"""The layering of docs/architecture.md is true of the code.

Every module of the package is parsed (no import runs); each import names a *part* of the package (a
subpackage such as ``dp``, or a top-level module such as ``tree``). The layer of each part is read from the
table in docs/architecture.md ("## Layers"), so the page and this test cannot drift apart. Checked:

- every part of the package has exactly one layer;
- no import (at module level, inside a function, or under ``TYPE_CHECKING``) reaches a higher layer;
- the imports have no cycle between parts, nor between modules: those that run (module level and inside
  functions) and those under ``TYPE_CHECKING`` too (an annotation naming a class of a part that imports this
  one is an arrow the wrong way; a Protocol in the lower part says what it needs instead);
- a string that is a whole dotted name in the package (``"opttrees.formulations.oct.OCT"``, used to import or
  recognise something by name) counts as an import too.

A lazy import inside a function is no loophole: it is checked like any other. The few exceptions are listed in
:data:`ALLOWED` with their reason; an entry that no longer matches anything fails, so the list only shrinks.

Also here: the docs and docstrings cite only files inside the repository, and every file they cite exists; and
no test module imports another (tests share oracles and data through ``tests/oracles/``).
"""
from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "opttrees"
DOC = ROOT / "docs" / "architecture.md"

#: (importing module, imported module or its prefix) -> why it is allowed. Mirrors "Known exceptions" in
#: docs/architecture.md.
ALLOWED = {
    ("opttrees.tree", "opttrees.viz"):
        "Tree.plot and Tree.to_html are thin delegators that import viz inside the method; viz reads a Tree "
        "through its public API and imports tree, so importing tree never loads viz or matplotlib",
}


@dataclass(frozen=True)
class Edge:
    source: str      # importing module, e.g. opttrees.dp.bound
    target: str      # imported module (or dotted name), e.g. opttrees.formulations.oct.OCT
    kind: str        # "eager" (module level), "lazy" (inside a function), "typing" (TYPE_CHECKING), "name" (string)
    line: int

    @property
    def parts(self) -> tuple[str, str]:
        return part(self.source), part(self.target)


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    names = list(rel.parts)
    if names[-1] == "__init__":
        names = names[:-1]
    return ".".join(names)


def part(module: str) -> str:
    """The part of the package a module belongs to: ``opttrees.dp.bound`` -> ``dp``; ``opttrees`` -> ``__init__``."""
    names = module.split(".")
    return names[1] if len(names) > 1 else "__init__"


DOTTED = re.compile(r"opttrees(\.[A-Za-z_]\w*)+")


def module_edges(path: Path) -> list[Edge]:
    src = module_name(path)
    package = src if path.name == "__init__.py" else src.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kind_of: dict[int, str] = {}

    def mark(node, kind):
        for n in ast.walk(node):
            kind_of.setdefault(id(n), kind)

    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            mark(node, "typing")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for n in ast.walk(node):
                if n is not node:
                    kind_of.setdefault(id(n), "lazy")
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        kind = kind_of.get(id(node), "eager")
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base)
                targets = ([f"{prefix}.{node.module}"] if node.module
                           else [f"{prefix}.{a.name}" for a in node.names])
            else:
                targets = [node.module or ""]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and DOTTED.fullmatch(node.value)):
            targets, kind = [node.value], "name"
        out += [Edge(src, t, kind, getattr(node, "lineno", 0)) for t in targets
                if t == "opttrees" or t.startswith("opttrees.")]
    return out


def all_edges() -> list[Edge]:
    return [e for p in sorted(PKG.rglob("*.py")) for e in module_edges(p)]


def package_parts() -> set[str]:
    return {p.stem if p.is_file() else p.name for p in PKG.iterdir()
            if (p.is_file() and p.suffix == ".py") or (p.is_dir() and (p / "__init__.py").exists())}


def documented_layers() -> dict[str, int]:
    """part -> layer, from the table under '## Layers' in docs/architecture.md."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for row in re.finditer(r"^\|\s*(\d+)\s*\|([^|]*)\|", section, re.M):
        for name in re.findall(r"`([^`]+)`", row.group(2)):
            name = name.rstrip("/").removesuffix(".py")
            assert name not in layers, f"docs/architecture.md puts {name} in two layers"
            layers[name] = int(row.group(1))
    return layers


def allowed(edge: Edge) -> bool:
    return any(edge.source == s and (edge.target == t or edge.target.startswith(t + ".")) for s, t in ALLOWED)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle, found inside the strongly connected components only (none when the imports are
    acyclic, so the search costs nothing then; a cycle someone adds is listed in full)."""
    found: list[list[str]] = []

    def walk(start: str, allowed_nodes: set[str], path: list[str]) -> None:
        for w in sorted(graph.get(path[-1], ())):
            if w == start:
                found.append(path + [start])
            elif w in allowed_nodes and w not in path:
                walk(start, allowed_nodes, path + [w])

    for comp in strongly_connected(graph):
        nodes = sorted(comp)
        if len(nodes) < 2:
            continue
        for i, start in enumerate(nodes):   # cycles through `start` and later nodes only: each found once
            walk(start, set(nodes[i:]), [start])
    return found


def import_graph(edges) -> dict[str, set[str]]:
    """part -> the parts it imports, by every kind of import (``TYPE_CHECKING`` ones included)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        a, b = e.parts
        if a != b and not allowed(e):
            graph[a].add(b)
    return graph


@pytest.fixture(scope="module")
def edges():
    return all_edges()


def test_every_part_of_the_package_has_one_documented_layer():
    layers = documented_layers()
    parts = package_parts()
    assert not parts - set(layers), f"parts of opttrees missing from the table in docs/architecture.md: " \
                                    f"{sorted(parts - set(layers))}"
    assert not set(layers) - parts, f"docs/architecture.md names parts that do not exist: {sorted(set(layers) - parts)}"


def test_no_import_reaches_a_higher_layer(edges):
    layers = documented_layers()
    bad = [f"{e.source}:{e.line} -> {e.target} ({e.kind}; layer {layers[e.parts[0]]} -> {layers[e.parts[1]]})"
           for e in edges if e.parts[0] != e.parts[1] and layers[e.parts[1]] > layers[e.parts[0]] and not allowed(e)]
    assert not bad, "imports pointing up (fix them, or list them in ALLOWED with a reason):\n" + "\n".join(bad)


def test_no_import_cycle_between_parts(edges):
    found = cycles(import_graph(edges))
    assert not found, "import cycles between parts of opttrees:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_cycle_between_modules(edges):
    """Inside a part too: no module imports one that (through others) imports it back, ``TYPE_CHECKING`` imports
    included. A package's ``__init__`` importing its submodules, and a submodule importing names from its
    package, are not cycles."""
    modules = {module_name(p) for p in PKG.rglob("*.py")}

    def module_of(name: str) -> str:   # opttrees.formulations.oct.OCT -> opttrees.formulations.oct
        while name not in modules and "." in name:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        target = module_of(e.target)
        if target != e.source and not e.source.startswith(target + ".") and not allowed(e):
            graph[e.source].add(target)
    found = cycles(graph)
    assert not found, "import cycles between modules:\n" + "\n".join(" -> ".join(c) for c in found)


def test_every_allowed_exception_still_occurs(edges):
    stale = [k for k in ALLOWED
             if not any(e.source == k[0] and (e.target == k[1] or e.target.startswith(k[1] + ".")) for e in edges)]
    assert not stale, f"ALLOWED lists exceptions the code no longer has (remove them): {stale}"


def test_known_exceptions_are_documented():
    """Each allowed exception is named in docs/architecture.md's 'Known exceptions'."""
    text = DOC.read_text(encoding="utf-8").split("### Known exceptions", 1)[1].split("\n## ", 1)[0]
    for source, target in ALLOWED:
        mod = source.removeprefix("opttrees.")
        path = mod.replace(".", "/") + ".py" if "." in mod else mod
        assert f"`{path}`" in text or f"`{mod}`" in text, f"{source} -> {target} is not in docs/architecture.md"


def test_the_checker_sees_lazy_typing_and_named_imports(tmp_path, monkeypatch):
    """The parser classifies each kind of import (a guard against a checker that silently sees nothing)."""
    pkg = tmp_path / "opttrees"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "m.py").write_text(
        '"""opttrees.not_a_reference"""\n'
        "from typing import TYPE_CHECKING\n"
        "from ..tree import Tree\n"
        "from . import other\n"
        "if TYPE_CHECKING:\n    from ..estimators import base\n"
        "def f():\n    from ..viz.html import tree_to_html\n    return 'opttrees.dp.engine'\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    got = {(e.target, e.kind) for e in module_edges(pkg / "sub" / "m.py")}
    assert got == {("opttrees.tree", "eager"), ("opttrees.sub.other", "eager"), ("opttrees.estimators", "typing"),
                   ("opttrees.viz.html", "lazy"), ("opttrees.dp.engine", "name")}
    assert cycles({"a": {"b"}, "b": {"c", "a"}, "c": {"a"}}) == [["a", "b", "a"], ["a", "b", "c", "a"]]


# --- docs and docstrings cite only files inside the repository ---------------------------------------------------

#: what a user of the package does not have: the team's shared folder, its design file and paper digests
OUTSIDE = re.compile(r"\.\./shared|shared/|DESIGN\.md|notes/|seed[- ]\d{3}|digest §")
CITED = re.compile(r"\b(?:opttrees|docs|tests|benchmarks|examples)/[A-Za-z0-9_./-]+\.(?:py|md|yaml|png|json)")


def cited_sources() -> list[Path]:
    return ([ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
            + sorted(p for d in ("opttrees", "benchmarks", "examples") for p in (ROOT / d).rglob("*")
                     if p.suffix in (".py", ".md", ".yaml") and "__pycache__" not in p.parts))


def test_docs_and_docstrings_cite_only_files_inside_the_repository():
    outside, missing = [], []
    for path in cited_sources():
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{k}"
            if OUTSIDE.search(line):
                outside.append(f"{where}: {line.strip()}")
            missing += [f"{where}: {m}" for m in CITED.findall(line) if not (ROOT / m).exists()]
    assert not outside, "references to files outside the repository (move what they need into docs/):\n" + \
        "\n".join(outside)
    assert not missing, "citations of files that do not exist:\n" + "\n".join(missing)


# --- tests share oracles through tests/oracles/, never by importing another test module ---------------------------

def imported_modules(tree: ast.AST) -> list[tuple[str, int]]:
    """Every module an ``import`` or ``from ... import`` names (anywhere in the file), with its line."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}".lstrip("."), node.lineno) for a in node.names]   # from . import test_x
    return out


def test_no_test_module_imports_another():
    tests = ROOT / "tests"
    files = sorted(p for p in tests.rglob("*.py") if "__pycache__" not in p.parts)
    assert len([p for p in files if p.name.startswith("test_")]) > 40   # a guard against scanning nothing
    bad = [f"{p.relative_to(ROOT)}:{line}: imports {name}"
           for p in files for name, line in imported_modules(ast.parse(p.read_text(encoding="utf-8")))
           if any(part.startswith("test_") for part in name.split("."))]
    assert not bad, "test modules import other test modules (move shared oracles to tests/oracles/):\n" + \
        "\n".join(bad)
    assert sorted(imported_modules(ast.parse("def f():\n    from test_x import y\nfrom . import test_z\n"))) == [
        (".", 3), ("test_x", 2), ("test_x.y", 2), ("test_z", 3)]
