"""Issue 8, "what was seen": a configured feed cannot send the crawler to another internal server.

One real crawl of feeds on 127.0.0.1 that redirect elsewhere inside (another port, another loopback
address, a name that resolves to loopback, an HTML page with a meta refresh): each hop is refused
before it is downloaded, the refusal is the feed's recorded failure with its reason, and nothing of
the internal server reaches the ledger. A redirect that stays on the feed's own host and port is
still followed. Link-local targets are checked as data only (tests/spider/test_fetchpolicy.py).
"""

from __future__ import annotations

import json

import pytest

from tests.crawl import envelopes, feed_outcome, run_crawl, run_records
from tests.feedserver import FeedServer, Reply

SECRET = "CROVIA-INTERNAL-ONLY-5b1e"
GOOD = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Lab</title><link>https://lab.example.org/</link>
<item><title>A real post</title><link>https://lab.example.org/posts/1</link>
<description>Published by the lab.</description></item>
</channel></rss>"""
INTERNAL = GOOD.replace(b"A real post", SECRET.encode()).replace(b"/posts/1", b"/posts/secret")


def meta_refresh(target: str) -> Reply:
    page = f'<html><head><meta http-equiv="refresh" content="0;url={target}"></head></html>'
    return Reply(200, page.encode(), {"Content-Type": "text/html; charset=utf-8"})


def moved(target: str) -> Reply:
    return Reply(302, b"", {"Location": target})


@pytest.fixture(scope="module")
def internal():
    with FeedServer() as server:
        server.script("feed.xml", Reply(200, INTERNAL, {"Content-Type": "application/rss+xml"}))
        yield server


@pytest.fixture(scope="module")
def policy_crawl(tmp_path_factory, internal):
    tmp_path = tmp_path_factory.mktemp("policy")
    port = internal.url("/").split(":")[2].split("/")[0]
    with FeedServer() as server:
        server.script("good.xml", Reply(200, GOOD, {"Content-Type": "application/rss+xml"}))
        feeds = {
            "other_port": server.script("a.xml", moved(internal.url("feed.xml"))),
            "other_loopback": server.script("b.xml", moved(f"http://127.0.0.2:{port}/feed.xml")),
            "by_name": server.script("c.xml", moved(f"http://localhost:{port}/feed.xml")),
            "meta_refresh": server.script("d.xml", meta_refresh(internal.url("feed.xml"))),
            "same_origin": server.script("e.xml", moved(server.url("good.xml"))),
        }
        proc = run_crawl(tmp_path, [{"vendor": v, "url": u} for v, u in feeds.items()])
        seen = list(server.requests)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp_path, proc, seen


def test_the_internal_server_is_never_contacted(policy_crawl, internal):
    assert internal.requests == []


def test_nothing_of_the_internal_server_reaches_the_ledger(policy_crawl):
    tmp_path, _, _ = policy_crawl
    for path in (tmp_path / "ledger").rglob("*"):
        if path.is_file() and path.suffix != ".gz":
            assert SECRET.encode() not in path.read_bytes(), path
    assert all(SECRET not in json.dumps(env) for env in envelopes(tmp_path))


@pytest.mark.parametrize(
    ("vendor", "reason"),
    [
        ("other_port", "127.0.0.1 is a loopback address, not the configured feed's host and port"),
        ("other_loopback", "127.0.0.2 is a loopback address"),
        ("by_name", "localhost resolves to 127.0.0.1, a loopback address"),
    ],
)
def test_a_refused_hop_is_the_feeds_recorded_failure(policy_crawl, vendor, reason):
    tmp_path, proc, _ = policy_crawl
    feed = feed_outcome(run_records(tmp_path)[-1], vendor)
    assert feed["error"].startswith("fetch refused: http://")
    assert reason in feed["error"]
    assert (feed["items_seen"], feed["new"]) == (0, 0)
    assert f"feed {vendor} ({feed['url']}) failed: fetch refused" in proc.stderr


def test_a_meta_refresh_is_not_followed(policy_crawl):
    tmp_path, _, _ = policy_crawl
    feed = feed_outcome(run_records(tmp_path)[-1], "meta_refresh")
    assert feed["status"] == 200 and feed["parse_error"].startswith("not a feed (text/html")


def test_a_redirect_on_the_feeds_own_host_and_port_is_followed(policy_crawl):
    tmp_path, _, _ = policy_crawl
    feed = feed_outcome(run_records(tmp_path)[-1], "same_origin")
    assert feed["status"] == 200 and feed["final_url"].endswith("/good.xml")
    assert feed["new"] == 1


def test_the_refused_hops_were_never_scheduled_for_download(policy_crawl):
    # Scrapy's downloader counts each request it is handed; the refused hops are not among them.
    _, proc, seen = policy_crawl
    stats = proc.stderr.split("Dumping Scrapy stats:", 1)[1]
    count = int(stats.split("'downloader/request_count': ", 1)[1].split(",", 1)[0])
    assert count == len(seen)


def test_a_meta_refresh_turned_on_is_still_checked_hop_by_hop(tmp_path, internal):
    with FeedServer() as server:
        url = server.script("d.xml", meta_refresh(internal.url("feed.xml")))
        proc = run_crawl(tmp_path, [{"vendor": "meta", "url": url}], "-s", "METAREFRESH_ENABLED=1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    feed = feed_outcome(run_records(tmp_path)[-1], "meta")
    assert feed["error"].startswith("fetch refused: " + internal.url("feed.xml"))
    assert internal.requests == [] and envelopes(tmp_path) == []
