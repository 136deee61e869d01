"""An item whose link is no address to fetch (`http://[::]n/` on a listing page, which the crawl
reads as `http://[::]/`, the unspecified address) gets a failed capture: the fetch policy refuses
it as data, before any packet; the other pages of the crawl are captured all the same."""

from __future__ import annotations

import pytest

from tests.crawl import leaves, run_crawl
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
