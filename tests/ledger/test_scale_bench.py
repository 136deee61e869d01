"""bench/scale_bench.py (issue 19) stays runnable: every figure printed, on tiny ledgers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def test_the_scale_bench_prints_every_ceiling(tmp_path: Path) -> None:
    bench = ["bench/scale_bench.py", "--small", "20", "--mid", "300", "--big", "600"]
    run = subprocess.run(
        [sys.executable, *bench, "--workdir", str(tmp_path)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    for figure in ("1. publish from nothing", "publish +1,000", "2. find", "3. audit peak RSS"):
        assert figure in run.stdout, run.stdout
    assert " syncs" in run.stdout and "bytes a leaf" in run.stdout and "load average" in run.stdout
