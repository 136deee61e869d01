"""bench/browser_bench.py stays runnable: 4 pages, one round, every figure printed, and the
browser crawl signed a complete browser capture of each page beside its plain twin."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.benchrun import run_bench


@pytest.mark.slow
def test_the_browser_bench_prints_rates_memory_and_a_day(tmp_path: Path) -> None:
    stdout = run_bench("browser_bench.py", "--pages", "4", "--workdir", str(tmp_path), timeout=600)
    assert re.search(r"round 1: plain [0-9.]+s  browser [0-9.]+s", stdout), stdout
    assert re.search(r"plain crawl: 4 plain captures in [0-9.]+s: [0-9,]+ captures/min", stdout)
    assert re.search(r"4 plain and 4 browser captures in [0-9.]+s: [0-9,]+ browser captures/min",
                     stdout)  # fmt: skip
    assert re.search(r"ratio browser crawl / plain crawl: [0-9.]+", stdout)
    assert re.search(r"peak memory: plain crawl [0-9,]+ MiB; browser crawl [0-9,]+ MiB, of which"
                     r" Chromium and its driver [0-9,]+ MiB", stdout)  # fmt: skip
    assert re.search(r"a day at this rate: [0-9,]+ browser captures", stdout)
    with (tmp_path / "browser0" / "ledger" / "axiom_ledger.jsonl").open() as lines:
        bodies = [json.loads(line)["body"] for line in lines if '"AX.CAPTURE"' in line]
    verdicts = [b["browser"]["verdict"] for b in bodies if b.get("mode")]
    assert verdicts == ["complete"] * 4
    assert sum(1 for b in bodies if "mode" not in b) == 4
