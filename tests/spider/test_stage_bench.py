"""bench/stage_bench.py stays runnable: `--quick` prints a row for every stage (never a time)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
STAGES = (
    "parse: parse_body (feedparser)",
    "parse: pickle, body there, ParsedFeed back",
    "spider: entry_item",
    "spider: identity",
    "fetch record",
    "stage 1 normalize",
    "stage 2 fingerprint",
    "stage 3 dedupe",
    "stage 4 classify",
    "stage 5 issue",
    "Ledger.issue, batches of 500",
    "of which sign_range",
    "of which the rest",
    "Ledger.seal",
    "total",
)


@pytest.mark.slow
def test_the_stage_bench_prints_a_row_per_stage() -> None:
    run = subprocess.run(
        [sys.executable, "bench/stage_bench.py", "--quick"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "1,000 items in 20 feeds, median of 1 repetition(s):" in run.stdout
    for stage in STAGES:
        assert re.search(rf"^ *{re.escape(stage)}.* [0-9.]+ +\(?[0-9]+%\)?\n", run.stdout, re.M), (
            stage,
            run.stdout,
        )
    assert re.search(r"after: load average [0-9.]+, ", run.stdout)
    assert re.search(r"Python [0-9.]+, feedparser [0-9.]+, Scrapy [0-9.]+", run.stdout)
