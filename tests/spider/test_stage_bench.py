"""bench/stage_bench.py stays runnable: `--quick` prints a row for every stage (never a time)."""

from __future__ import annotations

import re

import pytest

from tests.benchrun import run_bench

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
    stdout = run_bench("stage_bench.py", "--quick", timeout=300)
    assert "1,000 items in 20 feeds, median of 1 repetition(s):" in stdout
    for stage in STAGES:
        assert re.search(rf"^ *{re.escape(stage)}.* [0-9.]+ +\(?[0-9]+%\)?\n", stdout, re.M), (
            stage,
            stdout,
        )
    assert re.search(r"after: load average [0-9.]+, ", stdout)
    assert re.search(r"Python [0-9.]+, feedparser [0-9.]+, Scrapy [0-9.]+", stdout)
