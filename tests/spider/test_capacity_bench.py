"""bench/capacity_bench.py stays runnable: a tiny harvest over 3 loopback hosts, politeness on."""

from __future__ import annotations

import re

import pytest

from tests.benchrun import run_bench


@pytest.mark.slow
def test_the_capacity_bench_harvests_with_politeness_on() -> None:
    args = ["--feeds", "6", "--items-per-feed", "3", "--hosts", "3"]
    stdout = run_bench("capacity_bench.py", *args, timeout=300)
    assert "6 feeds of 3 items on 3 loopback hosts, politeness on (floor 2 s" in stdout
    ratios = re.findall(r"= ([0-9.]+)x the floor, [0-9,]+ feeds/hour", stdout)
    assert len(ratios) == 2, stdout
    # Scrapy draws each delay from 0.5 to 1.5 s: a crawl below half the floor was not polite.
    assert all(float(r) >= 0.5 for r in ratios), stdout
    assert "items signed per second: crawl" in stdout
    assert re.search(r"ledger JSONL: [0-9,]+ bytes per item", stdout)
    assert "a year of 850,000 leaves" in stdout
