"""One hostile body cannot make a crawl spend gigabytes or minutes (issue 19; docs/fuzzing.md, F9).

feedparser's loose parser reads a body with a tag of millions of characters at about 150 bytes per
character, and a megabyte of `<a></a>` takes seconds of CPU. Real crawls against 127.0.0.1, with
the worker's ceilings set low: such bodies are failed feeds that say why, the feeds beside them are
read, and a worker killed mid-parse is replaced by one under the same ceilings (the crawl never
falls back to parsing in its own, unbounded process).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FEEDS
from tests.crawl import (
    envelopes,
    feed_outcome,
    fetch_records,
    run_crawl,
    run_records,
    start_crawl,
    write_feeds,
)
from tests.feedserver import FeedServer, Reply
from tests.proctree import cpu_seconds, parser_workers

GOOD = (FEEDS / "openai_news_rss_reserialized_trim3.xml").read_bytes()
HEAD = b'<rss version="2.0"><channel><title>t</title><item><title>a</title><link>https://x.test/a</link>'
TAIL = b"</item></channel></rss>"
# about 600 MB in the loose parser's regular expression without the ceiling
LONG_TAG = HEAD + b"<link " + b"y" * 4_000_000 + b">" + TAIL
# about 9 s of CPU in the loose parser without the ceiling, and little memory
SLOW = HEAD + b"<a></a>" * 300_000 + TAIL + b"<x y>"
CEILINGS = ("-s", "CROVIA_PARSE_MEMORY_MB=256", "-s", "CROVIA_PARSE_SECONDS=2")
MEMORY_ERROR = (
    "unreadable feed: MemoryError: parsing needed more memory than it may use"
    " (CROVIA_PARSE_MEMORY_MB)"
)


def issued(tmp: Path, vendor: str) -> int:
    return sum(1 for env in envelopes(tmp) if env["body"]["vendor"] == vendor)


@pytest.fixture(scope="module")
def ceiling_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ceilings")
    with FeedServer(FEEDS) as server:
        server.script("long_tag.xml", Reply(200, LONG_TAG))
        server.script("slow.xml", Reply(200, SLOW))
        server.script("good.xml", Reply(200, GOOD))
        server.script("later.xml", Reply(200, GOOD, delay=2))
        feeds = [
            {"vendor": "long_tag", "url": server.url("long_tag.xml")},
            {"vendor": "slow", "url": server.url("slow.xml")},
            {"vendor": "good", "url": server.url("good.xml")},
            {"vendor": "later", "url": server.url("later.xml")},
        ]
        proc = run_crawl(tmp, feeds, *CEILINGS, timeout=240)
    return tmp, proc


def test_a_body_past_the_memory_ceiling_is_a_failed_feed(ceiling_crawl):
    tmp, proc = ceiling_crawl
    assert proc.returncode == 0, proc.stderr[-2000:]
    feed = feed_outcome(run_records(tmp)[-1], "long_tag")
    assert feed["parse_error"] == MEMORY_ERROR
    # the entry it closes is counted as seen and dropped, never silently gone
    assert feed["drop_reasons"] == {"unreadable feed": 1} and feed["new"] == 0
    assert issued(tmp, "long_tag") == 0
    (record,) = [r for r in fetch_records(tmp) if r["body"]["vendor"] == "long_tag"]
    assert record["body"]["outcome"] == "unreadable_body"  # signed, with the body kept
    assert record["body"]["error"] == MEMORY_ERROR


def test_a_body_past_the_time_ceiling_is_a_failed_feed(ceiling_crawl):
    tmp, _ = ceiling_crawl
    feed = feed_outcome(run_records(tmp)[-1], "slow")
    assert feed["parse_error"] == (
        "unreadable feed: parsing took more than 2 s of CPU time (CROVIA_PARSE_SECONDS)"
    )
    assert feed["drop_reasons"] == {"unreadable feed": 1} and issued(tmp, "slow") == 0


def test_the_feeds_beside_them_are_read(ceiling_crawl):
    tmp, proc = ceiling_crawl
    for vendor in ("good", "later"):
        feed = feed_outcome(run_records(tmp)[-1], vendor)
        assert feed["error"] == "" and feed["new"] == issued(tmp, vendor) == 3, feed
    assert "worker died" not in proc.stderr  # a ceiling costs the body, not the worker


@pytest.mark.parametrize(
    ("name", "value"),
    [("CROVIA_PARSE_MEMORY_MB", "0"), ("CROVIA_PARSE_SECONDS", "soon")],
)
def test_a_bad_ceiling_refuses_the_crawl(tmp_path, name, value):
    feeds = [{"vendor": "x", "url": "http://127.0.0.1:9/x.xml"}]
    proc = run_crawl(tmp_path, feeds, "-s", f"{name}={value}")
    assert proc.returncode != 0
    assert f"crawl refused: {name} is {value!r} (-s): it takes" in proc.stderr


def test_a_worker_killed_mid_parse_is_replaced_under_the_same_ceilings(tmp_path):
    """The worker is killed while it parses SLOW: SLOW is parsed again by a new worker, and the
    long tag that comes after is still refused at the memory ceiling (in the crawl's own process it
    would be read, at 600 MB)."""
    with FeedServer(FEEDS) as server:
        server.script("slow.xml", Reply(200, SLOW))
        server.script("long_tag.xml", Reply(200, LONG_TAG, delay=4))
        server.script("good.xml", Reply(200, GOOD, delay=4))
        feeds = [
            {"vendor": "slow", "url": server.url("slow.xml")},
            {"vendor": "long_tag", "url": server.url("long_tag.xml")},
            {"vendor": "good", "url": server.url("good.xml")},
        ]
        write_feeds(tmp_path / "feeds.toml", feeds)
        settings = ("-s", "CROVIA_PARSE_MEMORY_MB=256", "-s", "CROVIA_PARSE_SECONDS=100")
        pipes = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
        with start_crawl(tmp_path, *settings, **pipes) as proc:
            assert server.wait_for_request("slow.xml", timeout=60)
            deadline = time.monotonic() + 120
            killed = None
            while killed is None and time.monotonic() < deadline:
                for worker in parser_workers(proc.pid):
                    # past its start-up (about 1 s of CPU): it is parsing SLOW
                    if cpu_seconds(worker) > 2.5:
                        os.kill(worker[0], signal.SIGKILL)
                        killed = worker
                time.sleep(0.05)
            assert killed is not None, "the worker never got to parse"
            _, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr[-2000:]
    assert "feed parser worker died; starting another" in stderr
    record = run_records(tmp_path)[-1]
    slow = feed_outcome(record, "slow")
    assert slow["error"] == "" and slow["new"] == issued(tmp_path, "slow") == 1, slow
    assert feed_outcome(record, "long_tag")["parse_error"] == MEMORY_ERROR
    assert issued(tmp_path, "good") == 3
