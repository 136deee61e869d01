"""A parse stuck in C code cannot hold a crawl (issue 47, observation 1).

CROVIA_PARSE_SECONDS was a CPU timer inside the parser worker: a Python signal handler, which
never runs during one long lxml XPath call. A 957 KB listing page of nested `div.post` wrappers
with the ordinary selector `item = "div.post a"` kept the worker busy for about 7 minutes, holding
the ledger's lock; the feed queued behind it was never signed, two SIGTERMs did not stop the crawl
and SIGKILL of `crovia crawl` left its `scrapy crawl` running.

Real `crovia crawl`s against 127.0.0.1, with CROVIA_PARSE_SECONDS=3 (a deadline of 2 x 3 + 10 =
16 s of wall-clock time, enforced from outside the worker) and a margin of MARGIN seconds. Two
hostile pages, generated here:

- NESTED, the issue's page: 2,000 nested `div.post` around 35,000 links, 982 KB, `div.post a`.
  parsel's XPath takes minutes of CPU on it (the depth times the square of the links); the
  bounded evaluator reads it in about a second (crovia_spider/feed/bounded_css.py), in the worker
  or in-process;
- STUCK: nested `div.post` around 300,000 sibling links, with `div.post a:first-child`, whose
  translation counts each link's preceding siblings: a pseudo-class outside the evaluator's
  bound, so this parse runs for many minutes in one C call and only the deadline ends it.

The crawl then fails STUCK alone, with its reason, within the deadline and the margin; signs the
feed queued behind it; releases the ledger's lock; and leaves no process. SIGTERM stops a crawl
stuck so within DOWNLOAD_TIMEOUT and the margin (the parse is stopped), and SIGKILL of `crovia
crawl` takes its `scrapy crawl` and the parser worker with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crovia_spider.feed.ceilings import STOPPED, deadline, late
from ledger.lock import held
from tests.conftest import FEEDS
from tests.crawl import (
    BIN,
    PROJECT_ROOT,
    crawl_env,
    envelopes,
    feed_outcome,
    fetch_records,
    run_crawl,
    run_records,
    write_feeds,
)
from tests.feedserver import FeedServer, Reply
from tests.proctree import alive, cmdline, cpu_seconds, descendants, parser_workers
from tests.sitefixture import HTML

SECONDS = 3.0  # CROVIA_PARSE_SECONDS in these crawls
DEADLINE = deadline(SECONDS)  # 16 s of wall-clock time
MARGIN = 30.0  # start-up, the other parses, issuing, sealing, a loaded machine
STARTUP = 60.0  # a crawl's start, before its first request
ENTRIES = 20  # CROVIA_MAX_ENTRIES_PER_FEED: the nested page's first 20 links are issued
GOOD = (FEEDS / "openai_news_rss_reserialized_trim3.xml").read_bytes()
RSS = {"Content-Type": "application/rss+xml"}
SETTINGS = (
    "-s", f"CROVIA_PARSE_SECONDS={SECONDS:g}",
    "-s", f"CROVIA_MAX_ENTRIES_PER_FEED={ENTRIES}",
    "-s", "RETRY_BACKOFF_BASE=0",
)  # fmt: skip
WRAPPERS = 2_000


def nested_page(links: int = 35_000) -> bytes:
    """The issue's page: WRAPPERS nested `div.post` around `links` links (982 KB)."""
    return (
        b"<!doctype html><html><body>"
        + b'<div class="post">' * WRAPPERS
        + b"".join(b'<a href="/news/%d">t</a>' % n for n in range(links))
        + b"</div>" * WRAPPERS
        + b"</body></html>"
    )


NESTED = nested_page()


def stuck_page(links: int = 300_000) -> bytes:
    """Nested `div.post` around `links` sibling links (2.1 MB): `a:first-child` counts the
    preceding siblings of each, about links^2 / 2 steps in one lxml call."""
    return (
        b"<!doctype html><html><body>"
        + b'<div class="post">' * 20
        + b'<a href="/first">t</a>'
        + b"<a></a>" * links
        + b"</div>" * 20
        + b"</body></html>"
    )


def page_feed(vendor: str, url: str, item: str) -> str:
    return (
        f'[[feeds]]\nvendor = "{vendor}"\nurl = "{url}"\nkind = "page"\n'
        f'selectors = {{ item = "{item}", link = "a", title = "a" }}\n'
    )


def rss_feed(vendor: str, url: str) -> str:
    return f'[[feeds]]\nvendor = "{vendor}"\nurl = "{url}"\n'


def issued(tmp: Path, vendor: str) -> int:
    return sum(1 for env in envelopes(tmp) if env["body"]["vendor"] == vendor)


def fetch_record(tmp: Path, vendor: str) -> dict[str, Any]:
    (record,) = [r["body"] for r in fetch_records(tmp) if r["body"]["vendor"] == vendor]
    return record


class Crawl:
    """`crovia crawl` started in the background, its process tree watched until it ends."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.seen: set[tuple[int, str]] = set()
        # a file, not a pipe: a process that outlives the crawl (the bug) must not hold the test
        self._log = tmp / "crawl.stderr"
        with self._log.open("w") as log:
            self.proc = subprocess.Popen(
                [str(BIN / "crovia"), "crawl", *SETTINGS, *args],
                cwd=PROJECT_ROOT,
                env=crawl_env(tmp, CROVIA_POLITE_DELAYS="0"),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self.ended: float | None = None
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    @property
    def stderr(self) -> str:
        return self._log.read_text(errors="replace")

    def _watch(self) -> None:
        while self.proc.poll() is None:
            self.seen |= descendants(self.proc.pid)
            time.sleep(0.1)
        self.ended = time.monotonic()

    def workers(self) -> list[tuple[int, str]]:
        return parser_workers(self.proc.pid)

    def wait(self, timeout: float) -> int:
        """The exit status; on a timeout every process of the crawl is killed (the test fails)."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_all()
            pytest.fail(f"the crawl did not end within {timeout:g} s: {self.stderr[-3000:]}")
        self._watcher.join()
        return code

    def kill_all(self) -> None:
        for pid, _ in descendants(self.proc.pid) | self.seen:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self.proc.kill()
        self.proc.wait()

    def left(self) -> list[tuple[int, str]]:
        """The processes the crawl started that are still running."""
        return [p for p in self.seen if alive(p)]


def wait_until(condition: Any, timeout: float, what: str) -> None:
    until = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < until, what
        time.sleep(0.05)


def wait_for_stuck_parse(crawl: Crawl, server: FeedServer) -> None:
    """Until the worker has spent a second of CPU past its start-up on STUCK."""
    wait_until(lambda: server.sent_bodies("stuck"), STARTUP, "STUCK was never asked for")
    wait_until(
        lambda: any(cpu_seconds(w) > 3.0 for w in crawl.workers()),
        STARTUP,
        "the worker never parsed STUCK",
    )


@pytest.fixture(scope="module")
def deadline_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deadline")
    with FeedServer(FEEDS) as server:
        feeds = [
            page_feed("nested", server.script("nested", Reply(200, NESTED, HTML)), "div.post a"),
            page_feed(
                "stuck",
                server.script("stuck", Reply(200, stuck_page(), HTML, delay=1)),
                "div.post a:first-child",
            ),
            # answered while STUCK is being parsed: its body waits behind it
            rss_feed("good", server.script("good.xml", Reply(200, GOOD, RSS, delay=4))),
        ]  # fmt: skip
        write_feeds(tmp / "feeds.toml", "\n".join(feeds))
        crawl = Crawl(tmp)
        code = crawl.wait(STARTUP + 2 * DEADLINE + MARGIN)
        (stuck_asked,) = server.requests_for("stuck")
    assert crawl.ended is not None
    return tmp, crawl, code, crawl.ended - stuck_asked.at


def test_the_feed_queued_behind_the_stuck_parse_is_signed(deadline_crawl):
    tmp, crawl, code, _ = deadline_crawl
    assert code == 0, crawl.stderr[-3000:]
    good = feed_outcome(run_records(tmp)[-1], "good")
    assert good["error"] == "" and good["new"] == issued(tmp, "good") == 3, good
    assert fetch_record(tmp, "good")["outcome"] == "new_body"


def test_the_stuck_source_fails_alone_with_its_reason_within_the_deadline(deadline_crawl):
    tmp, crawl, _, elapsed = deadline_crawl
    reason = f"unreadable feed: {late(SECONDS)}"
    assert reason == (
        "unreadable feed: parsing took more than 16 s of wall-clock time (twice"
        " CROVIA_PARSE_SECONDS and 10 s): the parser worker was stopped"
    )
    stuck = feed_outcome(run_records(tmp)[-1], "stuck")
    assert stuck["parse_error"] == reason and issued(tmp, "stuck") == 0, stuck
    record = fetch_record(tmp, "stuck")
    assert record["outcome"] == "unreadable_body" and record["error"] == reason
    assert "took more than 16 s: parser worker stopped" in crawl.stderr
    # from the request for STUCK to the crawl's end: the deadline, the margin, never minutes
    assert elapsed < DEADLINE + MARGIN, elapsed


def test_the_issue_page_is_read_within_the_bound(deadline_crawl):
    """In the same crawl, under the same 16 s deadline, the issue's page is read: its selectors
    cost a visit per element, not minutes."""
    tmp, _, _, _ = deadline_crawl
    nested = feed_outcome(run_records(tmp)[-1], "nested")
    assert nested["parse_error"] == "" and nested["new"] == issued(tmp, "nested") == ENTRIES
    assert fetch_record(tmp, "nested")["entries"]["in_body"] == 35_000


def test_the_lock_is_released_and_no_process_is_left(deadline_crawl):
    tmp, crawl, _, _ = deadline_crawl
    assert not held(tmp / "ledger" / "ledger.lock")
    assert len(crawl.seen) >= 2, crawl.seen  # scrapy crawl and its worker at least
    assert crawl.left() == []


def test_sigterm_stops_a_crawl_stuck_in_a_parse_within_its_grace(tmp_path):
    """CROVIA_PARSE_SECONDS=100 (a deadline of 210 s): only the stop can end the parse. The crawl
    waits for it DOWNLOAD_TIMEOUT (5 s here), then stops it: the run record says why."""
    grace = 5.0
    with FeedServer(FEEDS) as server:
        feeds = [
            rss_feed("good", server.script("good.xml", Reply(200, GOOD, RSS))),
            page_feed(
                "stuck",
                server.script("stuck", Reply(200, stuck_page(), HTML, delay=1)),
                "div.post a:first-child",
            ),
        ]
        write_feeds(tmp_path / "feeds.toml", "\n".join(feeds))
        crawl = Crawl(
            tmp_path, "-s", "CROVIA_PARSE_SECONDS=100", "-s", f"DOWNLOAD_TIMEOUT={grace:g}"
        )
        wait_for_stuck_parse(crawl, server)
        stopped = time.monotonic()
        crawl.proc.send_signal(signal.SIGTERM)
        code = crawl.wait(grace + MARGIN)
    assert crawl.ended is not None and crawl.ended - stopped < grace + MARGIN
    assert code == 0, crawl.stderr[-3000:]  # one signal: a graceful stop, the run recorded
    record = run_records(tmp_path)[-1]
    assert record["outcome"] == "interrupted"
    stuck = feed_outcome(record, "stuck")
    assert stuck["parse_error"] == f"unreadable feed: {STOPPED}", stuck
    assert fetch_record(tmp_path, "stuck")["error"] == f"unreadable feed: {STOPPED}"
    assert issued(tmp_path, "good") == 3  # parsed before: signed
    assert not held(tmp_path / "ledger" / "ledger.lock")
    assert crawl.left() == []


def test_no_process_outlives_a_killed_crovia_crawl(tmp_path):
    with FeedServer(FEEDS) as server:
        stuck = server.script("stuck", Reply(200, stuck_page(), HTML))
        write_feeds(tmp_path / "feeds.toml", page_feed("stuck", stuck, "div.post a:first-child"))
        crawl = Crawl(tmp_path)
        wait_for_stuck_parse(crawl, server)
        tree = descendants(crawl.proc.pid)
        assert any(b"scrapy" in cmdline(p) for p in tree) and crawl.workers(), tree
        crawl.proc.kill()
        crawl.wait(MARGIN)
        try:
            # the kernel kills the crawl, which kills the worker: at once, not at the deadline
            wait_until(lambda: not any(alive(p) for p in tree), 10, "a process outlived it")
        finally:
            for pid, _ in [p for p in tree if alive(p)]:
                os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not held(tmp_path / "ledger" / "ledger.lock"), 10, "the lock is held")


def test_in_process_parsing_reads_the_issue_page_within_the_bound(tmp_path):
    """CROVIA_PARSE_WORKER=0 has no worker and so no deadline (docs/spider.md): what holds there
    is the selectors' bound, so the issue's page is read in the crawl's own process."""
    with FeedServer(FEEDS) as server:
        feeds = [
            page_feed("nested", server.script("nested", Reply(200, NESTED, HTML)), "div.post a"),
            rss_feed("good", server.script("good.xml", Reply(200, GOOD, RSS))),
        ]
        in_process = ("-s", "CROVIA_PARSE_WORKER=0")
        proc = run_crawl(
            tmp_path, "\n".join(feeds), *SETTINGS, *in_process, timeout=STARTUP + MARGIN
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert issued(tmp_path, "nested") == ENTRIES and issued(tmp_path, "good") == 3
