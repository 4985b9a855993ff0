"""Every snippet in README.md and docs/*.md runs.

* A ```python block runs with ``exec`` in a fresh namespace (matplotlib on the Agg backend).
* In a ```bash / ```console / ```sh block, every line starting with ``opttrees `` runs as
  ``[sys.executable, "-m", "opttrees.cli", ...]`` (``#`` comments stripped) and must exit with status 0; other
  lines (``make demo``, ``pip install``) are not run.
* The working directory is a fresh temporary folder holding a copy of the repository's ``examples/``, so paths
  read as from the repository root (``examples/data/wine_subset.csv``) and whatever a snippet writes
  (``tree.json``, ``results/...``) lands in the temporary folder, never in the repository.
* An HTML comment on the line(s) just before a fence marks the block: ``<!-- skip-test: reason -->`` skips it,
  ``<!-- slow-test -->`` marks it ``slow`` (run with ``-m slow``). The test id names the file and block index.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(skip-test|slow-test)\s*:?\s*(.*?)\s*-->\s*$")
SHELL = {"bash", "console", "sh", "shell"}


@dataclass
class Block:
    file: Path
    index: int          # index among the runnable blocks of this file
    line: int           # 1-based line of the opening fence
    lang: str
    code: str
    markers: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.file.relative_to(ROOT)}#{self.index}-L{self.line}"


def blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        markers, k = {}, start - 1
        while k >= 0 and (mk := MARKER.match(lines[k].strip())):
            markers[mk.group(1)] = mk.group(2)
            k -= 1
        if lang == "python" or lang in SHELL:
            out.append(Block(path, len(out), start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", markers))
        i = j + 1
    return out


def cli_lines(code: str) -> list[list[str]]:
    cmds = []
    for line in code.splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        if line.startswith("opttrees "):
            cmds.append(shlex.split(line, comments=True)[1:])
    return cmds


ALL = [b for f in FILES for b in blocks(f)]
PARAMS = [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if "slow-test" in b.markers else [])
          for b in ALL if b.lang == "python" or cli_lines(b.code)]


def test_the_snippets_were_found():
    names = {b.file.name for b in ALL}
    assert "README.md" in names and len(PARAMS) >= 10, [p.id for p in PARAMS]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("output", "__pycache__"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("block", PARAMS)
def test_snippet_runs(block: Block, workdir):
    if "skip-test" in block.markers:
        pytest.skip(block.markers["skip-test"] or "marked skip-test")
    if block.lang == "python":
        import matplotlib
        matplotlib.use("Agg")
        ns = {"__name__": "__docs_snippet__"}
        exec(compile(block.code, f"{block.id}", "exec"), ns)
        import matplotlib.pyplot as plt
        plt.close("all")
        return
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    for args in cli_lines(block.code):
        run = subprocess.run([sys.executable, "-m", "opttrees.cli", *args], cwd=workdir, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, (f"{block.id}: opttrees {shlex.join(args)} exited {run.returncode}\n"
                                     f"{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text()
    heads = {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}
    return heads | set(re.findall(r'<a id="([^"]+)"', text))


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROOT)) for f in FILES])
def test_relative_links_resolve(path: Path):
    """Every relative link in the docs names an existing file, and an anchor that file has."""
    bad = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(target)
    assert not bad, f"{path.name}: broken links {bad}"


def test_markers_and_cli_lines_are_parsed(tmp_path):
    md = tmp_path / "page.md"
    md.write_text("text\n<!-- skip-test: needs a licence -->\n```python\nimport nothing\n```\n\n<!-- slow-test -->\n"
                  "```bash\nmake demo\nopttrees solve a.yaml -q   # comment\n$ opttrees models\n```\n```yaml\nx: 1\n```\n")
    got = blocks(md)
    assert [(b.lang, b.markers) for b in got] == [("python", {"skip-test": "needs a licence"}),
                                                 ("bash", {"slow-test": ""})]
    assert cli_lines(got[1].code) == [["solve", "a.yaml", "-q"], ["models"]]
