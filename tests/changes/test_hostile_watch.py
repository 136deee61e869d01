"""Hostile watched pages: each is bounded and said (issue 44).

A gzip bomb (64 MiB of zeros in 64 KiB), a redirect loop, a page that never ends (a chunked body
that stops mid-chunk) and a page whose text changes at every fetch, watched by one source and
captured at four crawls. The first three are failed captures that say why, each one
`unreachable` change; the fourth is a new version each time (every one counted), and what the
published feed carries of it is capped at CROVIA_CHANGES_PER_PAGE with one "+N more" event.
"""

from __future__ import annotations

import gzip
import itertools
import json
import time

import pytest

from tests.changes.test_six_rounds import changes, crovia, environment
from tests.changes.vendor import until_due_again
from tests.crawl import leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow
HTML = {"Content-Type": "text/html; charset=utf-8"}
CAP = 1 << 20
_COUNT = itertools.count(1)


def flicker() -> bytes:
    n = next(_COUNT)
    return (
        f"<html><head><title>Status</title></head><body><article><h1>Status</h1>"
        f"<p>This page was rebuilt for the {n}th time. Every fetch of it reads another text.</p>"
        "<p>It says nothing else worth keeping, at some length, so that it is read as a page."
        "</p></article></body></html>"
    ).encode()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp_path = tmp_path_factory.mktemp("hostile")
    with FeedServer() as server:
        server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
        bomb = gzip.compress(b"\0" * (64 << 20), 9)
        server.script("bomb", Reply(body=bomb, headers={**HTML, "Content-Encoding": "gzip"}))
        server.script("loop", Reply(status=302, headers={"Location": server.url("loop")}))
        endless = b"10000\r\n<html><body><p>" + b"and on " * 100  # a chunk that never ends
        chunked = {**HTML, "Transfer-Encoding": "chunked"}
        server.script("endless", Reply(body=endless, headers=chunked))
        server.script("flicker", Reply(body=flicker, headers=HTML))
        urls = [server.url(name) for name in ("bomb", "loop", "endless", "flicker")]
        feeds = (
            '[[feeds]]\nvendor = "hostile"\nkind = "watch"\nevery = "1s"\n'
            f"urls = {json.dumps(urls)}\n"
        )
        env = environment(tmp_path, CROVIA_CHANGES_PER_PAGE="2")
        took = []
        for number in range(4):
            if number:
                until_due_again()
            started = time.monotonic()
            crawled = run_crawl(
                tmp_path,
                feeds,
                "-s", f"CROVIA_CAPTURE_MAX_BYTES={CAP}", "-s", "DOWNLOAD_TIMEOUT=3",
                "-s", "RETRY_ENABLED=0",
                env=env,
            )  # fmt: skip
            took.append(time.monotonic() - started)
            assert crawled.returncode == 0, crawled.stderr[-3000:]
        return {"tmp": tmp_path, "urls": urls, "took": took}


def by_page(tmp_path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            out.setdefault(envelope["body"]["url"].rsplit("/", 1)[1], []).append(envelope["body"])
    return out


def test_each_hostile_page_is_a_failed_capture_that_says_why(hostile):
    pages = by_page(hostile["tmp"])
    assert {name: len(c) for name, c in pages.items()} == {
        "bomb": 4, "loop": 4, "endless": 4, "flicker": 4
    }  # fmt: skip
    for capture in pages["bomb"]:
        assert capture["outcome"] == "failed" and "CROVIA_CAPTURE_MAX_BYTES" in capture["error"]
    for capture in pages["loop"]:
        assert capture["outcome"] == "failed" and "redirect limit reached" in capture["error"]
    for capture in pages["endless"]:
        assert capture["outcome"] == "failed" and "body_sha256" not in capture
        assert "took longer than 3.0 seconds" in capture["error"]  # DOWNLOAD_TIMEOUT
    assert max(hostile["took"]) < 90  # every crawl ends, whatever the pages do


def test_each_is_one_unreachable_change_naming_its_reason(hostile):
    events = changes(hostile["tmp"])
    unreachable = {e["url"].rsplit("/", 1)[1]: e for e in events if e["kind"] == "unreachable"}
    assert sorted(unreachable) == ["bomb", "endless", "loop"]  # once each, not once a crawl
    assert "CROVIA_CAPTURE_MAX_BYTES" in unreachable["bomb"]["detail"]
    assert "redirect limit" in unreachable["loop"]["detail"]
    assert not [e for e in events if e["kind"] == "removed"]


def test_an_edit_every_fetch_is_counted_and_capped_with_one_more_event(hostile):
    pages = by_page(hostile["tmp"])
    assert [c["outcome"] for c in pages["flicker"]] == ["first", "edited", "edited", "edited"]
    edits = changes(hostile["tmp"], "--kind", "edited")
    assert len(edits) == 3  # every version counted in crovia changes
    site = hostile["tmp"] / "site"
    done = crovia(hostile["tmp"], "publish", str(site), CROVIA_CHANGES_PER_PAGE="2")
    assert done.returncode == 0, done.stderr
    items = json.loads((site / "changes.json").read_text())["items"]
    kinds = [i["_crovia"]["kind"] for i in items if i["url"].endswith("/flicker")]
    assert sorted(kinds) == ["edited", "edited", "more"]
    (more,) = [i for i in items if i["_crovia"]["kind"] == "more"]
    assert more["_crovia"]["event"]["count"] == 1 and "+1 more changes" in more["summary"]
    assert "1 edited" in more["summary"]
