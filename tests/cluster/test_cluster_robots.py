"""A worker obeys robots.txt however many of its jobs wait for a host's robots.txt at once: one
worker takes 16 feeds of one host in one batch, every one disallowed, and the host is asked for
none of them (docs/spider.md, 9: Scrapy's RobotsTxtMiddleware let all but the first waiters
through; tests/spider/test_robots_concurrent.py holds a crawl and `crovia capture --all`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cluster.harness import Cluster
from tests.feedserver import FeedServer, Reply

WAITERS = 16
RSS = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
    b"<link>https://lab.example.org/</link><item><title>Private post</title>"
    b"<link>https://lab.example.org/private/1</link></item></channel></rss>"
)


def test_a_workers_batch_requests_no_feed_robots_txt_disallows(
    tmp_path: Path, redis_server
) -> None:
    with FeedServer(host="127.0.0.2") as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nDisallow: /private/\n"))
        feeds = [
            {"vendor": f"lab_{n}", "url": server.script(f"private/feed{n}.xml", Reply(body=RSS))}
            for n in range(WAITERS)
        ]
        with Cluster(tmp_path, redis_server.url) as cluster:
            cluster.feeds(feeds)
            cluster.sequencer()
            cluster.worker("w1", "--batch", str(WAITERS))
            done = cluster.crawl()
            logs = done.stdout + done.stderr + cluster.log("sequencer") + cluster.log("w1")
            assert done.returncode == 0, logs
        asked = sorted(r.path for r in server.requests if r.path.startswith("/private/"))
    assert asked == []
    runs = [
        json.loads(line) for line in (tmp_path / "ledger" / "runs.jsonl").read_text().splitlines()
    ]
    assert [feed["error"] for feed in runs[-1]["feeds"]] == ["Forbidden by robots.txt"] * WAITERS
