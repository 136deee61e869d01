"""Quiet logs (issue 17): at the default level a crawl prints about a dozen timestamped lines, its
summary last; identical failures collapse into one line; Scrapy's banner, settings and stats come
only with --verbose (LOG_LEVEL=INFO); a feed failing crawl after crawl is named until it recovers;
a Ctrl-C'd feed is "interrupted", not "HTTP None"."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from crovia_spider.runs.runlog import RunLog
from crovia_spider.runs.runsummary import failure_key, failure_kind, log_summary
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, feed_outcome, run_records, write_feeds
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

STAMPED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")
RUN_LINE = re.compile(
    r"SUMMARY: run vendor_press_\S+ finished in \d+\.\ds: feeds (?P<ok>\d+) ok, (?P<unchanged>\d+)"
    r" unchanged, (?P<failed>\d+) failed; items (?P<new>\d+) new, (?P<updated>\d+) updated,"
    r" (?P<dropped>\d+) dropped, \d+ duplicate; (?P<seal>.+)$",
    re.MULTILINE,
)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def crovia_crawl(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "crovia"), "crawl", "-s", "RETRY_BACKOFF_BASE=0", *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path, CROVIA_POLITE_DELAYS="0", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def three(feed_server):
    return [
        {"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")},
        {"vendor": "google_ai", "url": feed_server.url("google_blog_ai_rss_prefix.xml")},
        {"vendor": "gone", "url": f"http://127.0.0.1:{_closed_port()}/gone.xml"},
    ]


def test_three_feeds_one_failing_print_a_dozen_stamped_lines_summary_last(tmp_path, three):
    write_feeds(tmp_path / "feeds.toml", three)
    for crawl in range(2):
        proc = crovia_crawl(tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines = proc.stderr.splitlines()
        assert 1 <= len(lines) <= 12, proc.stderr
        assert all(STAMPED.match(line) for line in lines), proc.stderr
        assert "Traceback" not in proc.stderr and "Scrapy" not in proc.stderr
        failed = [line for line in lines if "gone" in line]
        assert len(failed) == 1 and "feed gone failed:" in failed[0]
        summary = RUN_LINE.search(lines[-1])
        assert summary, lines[-1]
        record = run_records(tmp_path)[-1]
        assert summary["failed"] == "1"
        assert int(summary["new"]) == record["totals"]["new"]
        assert int(summary["dropped"]) == record["totals"]["dropped"]
        if crawl == 0:
            assert (summary["ok"], summary["unchanged"]) == ("2", "0")
            assert record["totals"]["new"] > 0
            # the new items and one signed fetch record for each of the three feeds tried
            leaves = record["totals"]["new"] + len(three)
            assert summary["seal"].startswith(f"sealed {leaves} leaves")
        else:  # the feed server answers 304 to the validators stored by the first crawl
            assert (summary["ok"], summary["unchanged"]) == ("0", "2")
            # no new item, but every fetch is signed: three more leaves, sealed
            assert summary["seal"].startswith(f"sealed {leaves + len(three)} leaves")


def test_twenty_three_feeds_failing_the_same_way_print_one_failure_line(tmp_path, feed_server):
    port = _closed_port()
    feeds = [
        {"vendor": f"dead{n:02}", "url": f"http://127.0.0.1:{port}/{n}.xml"} for n in range(23)
    ]
    feeds.append({"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")})
    write_feeds(tmp_path / "feeds.toml", feeds)
    proc = crovia_crawl(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stderr.splitlines()
    failures = [line for line in lines if "dead" in line]
    assert len(failures) == 1, proc.stderr
    assert "23 feeds failed" in failures[0] and "dead00" in failures[0]
    assert len(lines) <= 12 and RUN_LINE.search(lines[-1])


def test_verbose_shows_scrapys_own_log_and_the_summary_still_says_what_happened(tmp_path, three):
    write_feeds(tmp_path / "feeds.toml", three)
    proc = crovia_crawl(tmp_path, "--verbose")
    assert proc.returncode == 0
    assert "Scrapy" in proc.stderr and "started (bot: crovia_spider)" in proc.stderr
    assert "Dumping Scrapy stats" in proc.stderr
    assert RUN_LINE.search(proc.stderr)


def test_a_feed_failing_crawls_in_a_row_is_named_until_it_recovers(tmp_path, feed_server):
    url = feed_server.script(
        "flaky.xml",
        Reply(500, b"down"),
        Reply(500, b"down"),
        Reply(500, b"down"),
        Reply(
            200, rss(item("A", "https://lab.example/a")), {"Content-Type": "application/rss+xml"}
        ),
    )
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "flaky", "url": url}])
    named = []
    for _ in range(4):
        proc = crovia_crawl(tmp_path, "-s", "RETRY_TIMES=0", CROVIA_FAILING_AFTER="2")
        assert proc.returncode == 0
        named.append([line for line in proc.stderr.splitlines() if "in a row" in line])
    assert named[0] == []
    assert len(named[1]) == 1 and "flaky: failed 2 crawls in a row since" in named[1][0]
    assert "flaky: failed 3 crawls in a row" in named[2][0]
    assert named[3] == []  # recovered


def test_identical_failures_group_by_kind():
    assert failure_kind("DNS lookup failed: no results for hostname lookup: a.example.") == (
        "DNS lookup failed"
    )
    assert failure_kind("HTTP 503") == "HTTP 503"
    assert failure_kind("DownloadConnectionRefusedError: Connection was refused") == (
        "DownloadConnectionRefusedError"
    )
    # Not the same: the reasons differ. The same: only the URL differs.
    assert failure_key("fetch refused: http://a/: 127.0.0.2 is a loopback address") != (
        failure_key("fetch refused: http://b/: 10.0.0.1 is a private address")
    )
    assert failure_key("timed out: Getting http://a/x took longer than 30.0 seconds.") == (
        failure_key("timed out: Getting https://b/y took longer than 30.0 seconds.")
    )
    run = RunLog("vendor_press", [(f"v{n}", f"https://{n}.example/") for n in range(5)])
    for feed in run.feeds.values():
        feed.error = f"DNS lookup failed: no results for hostname lookup: {feed.vendor}.example."
    lines = log_summary(run, run.record("2026-01-01T00:00:00.000000Z", "finished"))
    assert len([line for line in lines if "DNS" in line]) == 2  # the group and the offline note
    assert "5 feeds failed" in lines[0] and "offline" in lines[-1]


def test_many_kinds_of_failure_still_make_a_dozen_lines():
    run = RunLog("vendor_press", [(f"v{n}", f"https://{n}.example/") for n in range(30)])
    for n, feed in enumerate(run.feeds.values()):
        feed.error = f"HTTP {400 + n}" if n < 20 else "HTTP 500"
    lines = log_summary(run, run.record("2026-01-01T00:00:00.000000Z", "finished"))
    assert len(lines) <= 10
    assert lines[0].startswith("10 feeds failed the same way (HTTP 500)")
    assert "14 more feeds failed in 14 other ways" in lines[-2]
    assert lines[-1].startswith("run vendor_press_")


def test_a_ctrl_c_feed_is_interrupted_not_http_none(tmp_path, feed_server):
    slow = feed_server.script("slow.xml", Reply(200, b"<rss/>", delay=60))
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "slow", "url": slow}])
    proc = subprocess.Popen(
        [
            str(BIN / "crovia"),
            "crawl",
            "-s",
            "DOWNLOAD_TIMEOUT=5",
        ],  # a short wait for the hung fetch
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path, CROVIA_POLITE_DELAYS="0"),
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not feed_server.requests_for("/slow.xml"):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr  # one Ctrl-C closes the crawl cleanly
    assert "HTTP None" not in stderr
    # Not fetched, and no failure (issue 43): as the feed state and the metrics count it.
    assert "1 feeds not fetched: the crawl was stopped before they answered (slow)" in stderr
    assert "failed: interrupted" not in stderr
    run_line = stderr.replace(" interrupted in ", " finished in ")
    assert RUN_LINE.search(run_line.replace(" 0 failed, 1 not fetched;", " 0 failed;"))
    assert feed_outcome(run_records(tmp_path)[-1], "slow")["error"] == "interrupted"
