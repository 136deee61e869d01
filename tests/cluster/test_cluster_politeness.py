"""Politeness holds for the cluster as a whole: four workers crawling eight feeds of one host with a
host delay of 1 s send it no two requests closer than 1 s (robots.txt included), each worker
taking its share."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.cluster.harness import FIXTURES, Cluster
from tests.feedserver import FeedServer


def test_four_workers_keep_one_hosts_delay_between_them(tmp_path: Path, redis_server) -> None:
    with FeedServer(FIXTURES, host="127.0.0.2") as server:
        feeds = [
            {"vendor": f"lab_{n}", "url": server.url(f"openai_news_rss_prefix.xml?n={n}"),
             "delay": 1}
            for n in range(8)
        ]  # fmt: skip
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            for name in ("w1", "w2", "w3", "w4"):
                # Politeness on (the default), as a worker runs in production; two jobs each.
                cluster.worker(name, "--batch", "2", "-s", "RETRY_BACKOFF_BASE=0", fast=False)
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
            assert "8 feeds (0 failed)" in done.stdout, done.stdout
        arrivals = sorted(request.at for request in server.requests)
    assert len(arrivals) >= 9  # eight feeds and at least one robots.txt
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 1.0, gaps
    # The jobs were shared: four workers blocked on the queue took two each, and each crawl of
    # theirs read the host's robots.txt once, through the same slot.
    assert len(server.requests_for("/robots.txt")) >= 4
    runs = [
        json.loads(line) for line in (tmp_path / "ledger" / "runs.jsonl").read_text().splitlines()
    ]
    assert [feed["status"] for feed in runs[0]["feeds"]] == [200] * 8
