"""bench/ledger_bench.py stays runnable: a tiny issuing round, into a --workdir it must create."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def test_the_issue_bench_runs_into_a_missing_workdir(tmp_path: Path) -> None:
    workdir = tmp_path / "not" / "yet"
    bench = ["bench/ledger_bench.py", "--issue-only", "--issue-items", "5"]
    run = subprocess.run(
        [sys.executable, *bench, "--workdir", str(workdir)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert workdir.is_dir() and not any(workdir.iterdir())  # the scratch ledgers are gone
    for batch in (100, 500, 1000):
        assert f"1. issue, batches of {batch}, per item" in run.stdout
    assert "x best" in run.stdout and "x median" in run.stdout and "load average" in run.stdout
