"""A browser capture is bounded (issue 45): a page whose script never yields, and a browser over
CROVIA_BROWSER_MEMORY_MB, are failed captures that say why, the crawl goes on to its other pages
and ends normally, and no Chromium of it is left. Real crawls on loopback."""

from __future__ import annotations

import re

import pytest

from crovia_spider.capture.chromium import session_processes
from tests.capture.browser_site import HTML, page, script_site
from tests.capture.pages import PARAGRAPHS
from tests.crawl import leaves, run_crawl
from tests.feedserver import FeedServer, Reply

pytestmark = pytest.mark.slow


def browser_captures(tmp_path) -> dict[str, dict]:
    return {
        e["body"]["url"].rsplit("/", 1)[1]: e["body"]
        for e in leaves(tmp_path)
        if e["axiom_type"] == "AX.CAPTURE" and e["body"].get("mode")
    }


def no_session_left(stderr: str) -> None:
    tokens = re.findall(r"browser session ([0-9a-f]{16}):", stderr)
    assert tokens, stderr[-2000:]
    assert all(session_processes(token) == [] for token in tokens)


def test_a_page_that_never_yields_fails_and_the_crawl_goes_on(tmp_path):
    with FeedServer() as server, FeedServer() as other, FeedServer() as third:
        feeds = script_site(server, other, third, listed=("busy", "js"))
        busy = page("Busy", script="<script>for (;;) {}</script>")
        server.script("articles/busy", Reply(body=busy, headers=HTML))
        done = run_crawl(tmp_path, feeds, "-s", "CROVIA_BROWSER_SECONDS=4", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    captured = browser_captures(tmp_path)
    stuck = captured["busy"]
    assert (stuck["outcome"], stuck["browser"]["verdict"]) == ("failed", "failed")
    assert stuck["browser"]["reasons"] == [
        "the page did not answer within 15 s after its 4 s (a script keeping it busy?): no"
        " screenshot, no DOM"
    ]
    assert "screenshot" not in stuck["browser"] and "dom" not in stuck["browser"]
    assert captured["js"]["browser"]["verdict"] == "complete"  # the crawl went on
    no_session_left(done.stderr)


def test_a_browser_over_its_memory_fails_the_page_says_so_and_is_started_again(tmp_path):
    with FeedServer() as server, FeedServer() as other, FeedServer() as third:
        feeds = script_site(server, other, third, listed=("js", "refused"))
        # Both pages hold 512 MiB in their renderer, whatever the machine's load: the browser is
        # over its 256 MiB at the watch's every look, never by chance of a sample. The cap is
        # over what the browser process alone holds (about 100 MiB): only the renderer's memory,
        # counted as the session's although its environment does not carry the session's mark
        # (chromium.py), puts it over.
        # An article of its own, so that only the memory can fail it (not its lack of text).
        article = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
        hog = (
            f"<!doctype html><html><body><article>{article}</article><script>window.kept=[];"
            "for(let i=0;i<64;i++){const b=new Uint8Array(8<<20);b.fill(1);window.kept.push(b);}"
            "</script></body></html>"
        ).encode()
        for name in ("js", "refused"):
            server.script(f"articles/{name}", Reply(body=hog, headers=HTML))
        one_at_a_time = ("-s", "CROVIA_BROWSER_CONCURRENCY=1")
        done = run_crawl(tmp_path, feeds, "-s", "CROVIA_BROWSER_MEMORY_MB=256", *one_at_a_time)
    assert done.returncode == 0, done.stderr[-3000:]
    captured = browser_captures(tmp_path)
    assert len(captured) == 2
    for failed in captured.values():
        assert (failed["outcome"], failed["browser"]["verdict"]) == ("failed", "failed")
        (reason,) = failed["browser"]["reasons"]
        limit = r"the browser held [0-9]+ MiB, over CROVIA_BROWSER_MEMORY_MB \(256\)"
        assert re.fullmatch(limit, reason), reason
        assert "text" not in failed  # nothing of a failed rendering is read as the page's text
    # the browser stopped after the first page, and a new one started for the second
    assert len(re.findall(r"browser session [0-9a-f]{16}:", done.stderr)) == 2
    no_session_left(done.stderr)
