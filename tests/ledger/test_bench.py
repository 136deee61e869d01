"""bench/ledger_bench.py stays runnable: a tiny issuing round, into a --workdir it must create."""

from __future__ import annotations

from pathlib import Path

from tests.benchrun import run_bench


def test_the_issue_bench_runs_into_a_missing_workdir(tmp_path: Path) -> None:
    workdir = tmp_path / "not" / "yet"
    stdout = run_bench(
        "ledger_bench.py", "--issue-only", "--issue-items", "5", "--workdir", str(workdir)
    )
    assert workdir.is_dir() and not any(workdir.iterdir())  # the scratch ledgers are gone
    for batch in (100, 500, 1000):
        assert f"1. issue, batches of {batch}, per item" in stdout
    assert "x best" in stdout and "x median" in stdout and "load average" in stdout


def test_the_monitor_and_verify_benches_run(tmp_path: Path) -> None:
    """bench/monitor_bench.py and bench/verify_bench.py stay runnable (tiny sizes, one round)."""
    sizes = ("--leaves", "1024", "--small", "512")
    stdout = run_bench("monitor_bench.py", *sizes, "--results", str(tmp_path))
    assert "monitor first run over 1024 entries: peak RSS" in stdout
    assert "bytes per entry" in stdout
    stdout = run_bench("verify_bench.py", "--rounds", "1")
    assert "x best" in stdout and "import nacl, orjson" in stdout
