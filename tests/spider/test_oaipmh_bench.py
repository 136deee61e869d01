"""bench/oaipmh_bench.py stays runnable: its quick mode harvests the fixture and reads the same
papers by RSS once, every record issued, and prints the rates and their ratio."""

from __future__ import annotations

import re

import pytest

from tests.benchrun import run_bench


@pytest.mark.slow
def test_the_oaipmh_bench_prints_records_per_second_and_a_ratio() -> None:
    stdout = run_bench("oaipmh_bench.py", "--quick", timeout=300)
    for kind in ("oaipmh", "rss"):
        assert re.search(rf"{kind}: median [0-9,]+ records/s over 1 crawl\(s\) of 300", stdout)
    assert re.search(r"ratio oaipmh/rss: [0-9.]+ \(CPU-time [0-9.]+\)", stdout), stdout
