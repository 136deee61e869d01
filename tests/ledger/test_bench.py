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


def test_the_monitor_and_verify_benches_run(tmp_path: Path) -> None:
    """bench/monitor_bench.py and bench/verify_bench.py stay runnable (tiny sizes, one round)."""
    monitor = ["bench/monitor_bench.py", "--leaves", "1024", "--small", "512"]
    run = subprocess.run(
        [sys.executable, *monitor, "--results", str(tmp_path)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "monitor first run over 1024 entries: peak RSS" in run.stdout
    assert "bytes per entry" in run.stdout
    run = subprocess.run(
        [sys.executable, "bench/verify_bench.py", "--rounds", "1"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "x best" in run.stdout and "import nacl, orjson" in run.stdout
