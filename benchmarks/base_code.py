"""The code of an earlier commit, unpacked beside the working tree: the ``--base`` of the A/B benchmarks
(``bench_interrupt_latency.py``, ``bench_overshoot.py``) runs it in the same session as the current code."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def archive(commit: str, folder: Path) -> Path:
    """``git archive`` of ``commit`` extracted into ``folder/code_<commit>``; returns that directory."""
    dest = folder / f"code_{commit[:10]}"
    dest.mkdir()
    tar = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest
