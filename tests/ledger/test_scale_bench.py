"""bench/scale_bench.py (issue 19) stays runnable: every figure printed, on tiny ledgers."""

from __future__ import annotations

from pathlib import Path

from tests.benchrun import run_bench


def test_the_scale_bench_prints_every_ceiling(tmp_path: Path) -> None:
    sizes = ("--small", "20", "--mid", "300", "--big", "600")
    stdout = run_bench("scale_bench.py", *sizes, "--workdir", str(tmp_path))
    for figure in ("1. publish from nothing", "publish +1,000", "2. find", "3. audit peak RSS"):
        assert figure in stdout, stdout
    assert " syncs" in stdout and "bytes a leaf" in stdout and "load average" in stdout
