"""Run a bench/ script as its smoke test does: the project's Python, from the project root, its
output as text, a non-zero exit a failure that shows what the script said, never longer than
`timeout`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


def run_bench(script: str, *args: str, timeout: float = 600) -> str:
    """The standard output of `python bench/SCRIPT ARGS`."""
    done = subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"bench/{script} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    )
    return done.stdout
