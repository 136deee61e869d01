"""bench/capacity_bench.py stays runnable: a tiny harvest over 3 loopback hosts, politeness on."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_capacity_bench_harvests_with_politeness_on() -> None:
    args = ["--feeds", "6", "--items-per-feed", "3", "--hosts", "3"]
    run = subprocess.run(
        [sys.executable, "bench/capacity_bench.py", *args],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "6 feeds of 3 items on 3 loopback hosts, politeness on (floor 2 s" in run.stdout
    ratios = re.findall(r"= ([0-9.]+)x the floor, [0-9,]+ feeds/hour", run.stdout)
    assert len(ratios) == 2, run.stdout
    # Scrapy draws each delay from 0.5 to 1.5 s: a crawl below half the floor was not polite.
    assert all(float(r) >= 0.5 for r in ratios), run.stdout
    assert "items signed per second: crawl" in run.stdout
    assert re.search(r"ledger JSONL: [0-9,]+ bytes per item", run.stdout)
    assert "a year of 850,000 leaves" in run.stdout
