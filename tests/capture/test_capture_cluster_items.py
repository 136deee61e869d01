"""Items a crawl cluster issued are followed too (issue 43, obs 1): the sequencer signs them, no
local crawl noted them, and `crovia capture` on the sequencer's machine (docs/cluster.md's advice)
captured none of their pages. The capture book enrols them from the ledger, whoever issued them.

A real redis-server, sequencer and worker (tests/cluster/harness.py); a feed with `capture =
true` on 127.0.0.1 linking to two article pages. The cluster now captures them itself, in the
run that issued the items (docs/cluster.md, "Page captures"); `crovia capture` on the sequencer's
machine afterwards finds them followed and due later: every item's page has exactly one
capture, the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.capture.pages import PARAGRAPHS, article
from tests.cluster.harness import Cluster
from tests.cluster.redis_server import RedisServer
from tests.crawl import leaves
from tests.feedserver import FeedServer, Reply
from tests.spider.feedtext import item, rss

pytestmark = pytest.mark.slow
FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path / "redis") as server:
        yield server


def test_items_a_cluster_issued_have_their_pages_captured(tmp_path: Path, redis: RedisServer):
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        links = [item(f"Post {n}", server.url(f"articles/{n}")) for n in ("a", "b")]
        feed = server.script(
            "feed.xml", Reply(body=rss(*links), headers={"Content-Type": "application/rss+xml"})
        )
        for name in ("a", "b"):
            server.script(f"articles/{name}", article(f"Post {name}", PARAGRAPHS))
        with Cluster(tmp_path, redis.url) as cluster:
            cluster.feeds([{"vendor": "lab", "url": feed, "capture": True}])
            cluster.sequencer()
            cluster.worker("w1")
            done = cluster.crawl()
            assert done.returncode == 0, done.stdout + done.stderr + cluster.log("sequencer")
            # Again: the same two items, duplicates, said so (the client said "2 unchanged").
            again = cluster.crawl()
            assert again.returncode == 0, again.stdout + again.stderr
            assert "0 new, 0 updated, 2 duplicate, 0 dropped" in again.stdout, again.stdout
            assert "unchanged" not in again.stdout
        items = [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.OBS"]
        assert len(items) == 2  # signed by the sequencer's crawl
        runs = {e["body"]["run"] for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE"}
        assert runs == {items[0]["body"]["spider_record"]["parent_run_hash"]}  # the cluster's
        captured = cluster.run("capture", *FAST)  # on the sequencer's machine, after the run
        assert captured.returncode == 0, captured.stderr[-3000:]
    pages: dict[str, list[dict]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE" and "mode" not in envelope["body"]:
            pages.setdefault(envelope["body"]["url"], []).append(envelope["body"])
    assert sorted(pages) == sorted(e["body"]["spider_record"]["url"] for e in items)
    assert all([c["outcome"] for c in chain] == ["first"] for chain in pages.values()), pages
    assert {c["item"] for chain in pages.values() for c in chain} == {e["axiom_id"] for e in items}
    assert "2 followed: 2 due later" in captured.stderr, captured.stderr[-2000:]
