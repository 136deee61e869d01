"""bench/kinds_bench.py stays runnable: its quick mode crawls every kind once and prints ratios."""

from __future__ import annotations

import re

import pytest

from tests.benchrun import run_bench


@pytest.mark.slow
def test_the_kinds_bench_prints_a_ratio_per_kind() -> None:
    stdout = run_bench("kinds_bench.py", "--quick", timeout=300)
    # every crawl issued all its items (the bench stops otherwise), and each kind has its ratio
    for label, items in (("rss 200", 200), ("sitemap", 200), ("sitemap.gz", 200),
                         ("rss 50", 50), ("jsonfeed", 50)):  # fmt: skip
        assert re.search(rf"  {re.escape(label)}: {items} items in [0-9.]+s", stdout)
    ratios = re.findall(r"ratio (\S+)/rss ([0-9]+): [0-9.]+ \(goal <= 1.2", stdout)
    assert ratios == [("sitemap", "200"), ("sitemap.gz", "200"), ("jsonfeed", "50")], stdout
    assert "load average (1, 5, 15 min):" in stdout
