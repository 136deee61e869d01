"""robots.txt holds however many requests to a host wait for it at once (docs/spider.md, 9).

Scrapy's RobotsTxtMiddleware (2.13 to 2.19 at least) hands the parsed robots.txt to the first
request or two that waited for it and lets the others through unchecked: each waiter awaits one
shared Deferred, and after the first waiter's callback the result it passes on is None. Any path
that sends several requests to a host before its robots.txt is in runs into it: the feeds of a
crawl, `crovia capture --all` (no feed is fetched first, every page of a host waits at once),
sitemap children, a cluster worker's batch. Our RobotsTxtMiddleware gives every waiter the parser.

Two real runs on 127.0.0.1, each with 16 requests to one host all disallowed by its robots.txt and
all waiting together: a crawl of 16 feeds, and `crovia capture --all` of 16 pages that a first
crawl captured while robots.txt still allowed them. The server's log must show none of them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.crawl import (
    BIN,
    FAST_SETTINGS,
    PROJECT_ROOT,
    crawl_env,
    envelopes,
    feed_outcome,
    leaves,
    run_crawl,
    run_records,
)
from tests.feedserver import FeedServer, Reply

WAITERS = 16
FORBIDDEN = "Forbidden by robots.txt"
HTML = {"Content-Type": "text/html; charset=utf-8"}
RSS = {"Content-Type": "application/rss+xml"}
TEXT = {"Content-Type": "text/plain"}
ALLOW_ALL = Reply(body=b"User-agent: *\nAllow: /\n", headers=TEXT)


def rss(n: int) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Lab</title>'
        f"<link>https://lab.example.org/</link><item><title>Private post {n}</title>"
        f"<link>https://lab.example.org/private/{n}</link>"
        "<description>Not for robots.</description></item></channel></rss>"
    ).encode()


def article(n: int) -> bytes:
    text = " ".join(["This article is long enough to be the main text of its page."] * 6)
    return (
        f"<!doctype html><html><head><title>Article {n}</title></head><body>"
        f"<article><h1>Article {n}</h1><p>{text}</p><p>Number {n}.</p></article></body></html>"
    ).encode()


def disallowed(server: FeedServer, prefix: str) -> list[str]:
    """Every path under `prefix` the server was asked for."""
    return sorted(r.path for r in server.requests if r.path.startswith(prefix))


@pytest.fixture(scope="module")
def feeds_crawl(tmp_path_factory):
    """One crawl of 16 feeds on one host, every one under /private/, which robots.txt disallows."""
    tmp_path = tmp_path_factory.mktemp("robots_feeds")
    with FeedServer() as server:
        server.script(
            "robots.txt",
            Reply(body=b"User-agent: *\nDisallow: /private/\n", headers=TEXT),
        )
        urls = [
            server.script(f"private/feed{n}.xml", Reply(body=rss(n), headers=RSS))
            for n in range(WAITERS)
        ]
        feeds = [{"vendor": f"lab{n}", "url": url} for n, url in enumerate(urls)]
        proc = run_crawl(tmp_path, feeds)
        yield tmp_path, proc, server


def test_no_disallowed_feed_is_requested_however_many_wait(feeds_crawl):
    tmp_path, proc, server = feeds_crawl
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert disallowed(server, "/private/") == []
    assert len(server.requests_for("robots.txt")) == 1  # read once, obeyed by all 16
    record = run_records(tmp_path)[-1]
    for n in range(WAITERS):
        assert feed_outcome(record, f"lab{n}")["error"] == FORBIDDEN
    assert envelopes(tmp_path) == []


@pytest.fixture(scope="module")
def capture_all(tmp_path_factory):
    """A crawl captures the 16 articles a listing links to while robots.txt allows them; then
    robots.txt disallows /articles/ and `crovia capture --all` runs, fetching no feed: all 16
    captures wait for the host's robots.txt together."""
    tmp_path = tmp_path_factory.mktemp("robots_capture_all")
    with FeedServer() as server:
        server.script("robots.txt", ALLOW_ALL)
        cards = "".join(
            f'<li class="card"><a href="/articles/a{n}">Article {n}</a></li>'
            for n in range(WAITERS)
        )
        listing = f"<!doctype html><html><body><ul>{cards}</ul></body></html>".encode()
        server.script("news", Reply(body=listing, headers=HTML))
        for n in range(WAITERS):
            server.script(f"articles/a{n}", Reply(body=article(n), headers=HTML))
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'selectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        crawled = run_crawl(tmp_path, feeds)
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        first = disallowed(server, "/articles/")
        server.script(
            "robots.txt", Reply(body=b"User-agent: *\nDisallow: /articles/\n", headers=TEXT)
        )
        server.clear()
        proc = subprocess.run(
            [str(BIN / "crovia"), "capture", "--all", *FAST_SETTINGS],
            cwd=PROJECT_ROOT,
            env=crawl_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        yield tmp_path, proc, server, first


def captures(tmp_path: Path) -> list[dict]:
    return [env["body"] for env in leaves(tmp_path) if env["axiom_type"] == "AX.CAPTURE"]


def test_capture_all_requests_no_page_robots_txt_disallows(capture_all):
    tmp_path, proc, server, first = capture_all
    assert len(first) == WAITERS  # the first crawl captured every page: the book holds 16
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert disallowed(server, "/articles/") == []
    assert [r.path for r in server.requests] == ["/robots.txt"]  # no feed, one robots.txt
    second = captures(tmp_path)[WAITERS:]
    assert len(second) == WAITERS  # each refusal is recorded, none lost
    assert all(FORBIDDEN in body["error"] for body in second), [b["error"] for b in second]
