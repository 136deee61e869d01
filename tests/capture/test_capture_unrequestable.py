"""An item whose link is no address to fetch (`http://[::]n/` on a listing page, which the crawl
reads as `http://[::]/`, the unspecified address) gets a failed capture: the fetch policy refuses
it as data, before any packet; the other pages of the crawl are captured all the same."""

from __future__ import annotations

import json

import pytest

from tests.crawl import crovia, leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}


def test_a_link_to_no_address_is_a_failed_capture_and_nothing_else_is_lost(tmp_path):
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        listing = (
            b'<ul><li class="card"><a href="http://[::]n/">Bad</a></li>'
            b'<li class="card"><a href="/articles/ok">Good</a></li></ul>'
        )
        server.script("news", Reply(body=listing, headers=HTML))
        server.script(
            "articles/ok",
            Reply(body=b"<html><body><article><p>" + b"Words of an article. " * 30
                  + b"</p></article></body></html>", headers=HTML),
        )  # fmt: skip
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'selectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        crawled = run_crawl(tmp_path, feeds)
    assert crawled.returncode == 0, crawled.stderr[-2000:]
    assert "Traceback" not in crawled.stderr
    found = leaves(tmp_path)
    assert sum(1 for e in found if e["axiom_type"] == "AX.OBS") == 2
    captures = {e["body"]["url"]: e["body"] for e in found if e["axiom_type"] == "AX.CAPTURE"}
    refused = captures["http://[::]/"]
    assert refused["outcome"] == "failed" and "status" not in refused
    assert refused["error"].startswith("fetch refused: http://[::]/: :: is a unspecified address")
    assert captures[server.url("articles/ok")]["outcome"] == "first"


def test_a_page_scrapy_cannot_request_is_a_failed_capture_of_its_own(tmp_path):
    """The capture book is a file beside the ledger: a page whose URL Scrapy refuses to make a
    request of (here written into it by hand) gets its failed capture, and the round's other
    pages are captured all the same (the idle handler raising would have dropped them)."""
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        server.script(
            "news",
            Reply(body=b'<ul><li class="card"><a href="/a">A</a></li>'
                  b'<li class="card"><a href="/b">B</a></li></ul>', headers=HTML),
        )  # fmt: skip
        page = b"<html><body><article><p>" + b"Words of an article. " * 30 + b"</p></article>"
        server.script("a", Reply(body=page, headers=HTML))
        server.script("b", Reply(body=page, headers=HTML))
        feeds = (
            f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("news")}"\nkind = "page"\n'
            'selectors = { item = "li.card", link = "a", title = "a" }\n'
        )
        assert run_crawl(tmp_path, feeds).returncode == 0
        book_file = tmp_path / "ledger" / "captures_state.json"
        book = json.loads(book_file.read_text())
        bad = next(p for p in book["pages"].values() if p["url"].endswith("/a"))
        bad["url"] = "http://[::1/a"
        book_file.write_text(json.dumps(book))
        again = crovia(tmp_path, "capture", "--all", "-s", "CROVIA_POLITE_DELAYS=0")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Traceback" not in again.stderr
    second = [e["body"] for e in leaves(tmp_path) if e["axiom_type"] == "AX.CAPTURE"][2:]
    by_url = {body["url"]: body for body in second}
    assert by_url["http://[::1/a"]["outcome"] == "failed"
    assert by_url["http://[::1/a"]["error"].startswith("not a URL that can be fetched")
    assert by_url[server.url("b")]["outcome"] == "unchanged"
