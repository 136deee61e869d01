"""One Ctrl-C (issue 33, obs 6): the crawl says it is stopping, fetches nothing new, finishes the
fetches in flight, issues what they brought, writes the run record (outcome "interrupted", feeds
never fetched "interrupted" and no failure) and seals; a second Ctrl-C forces it, exit 1.

A real `crovia crawl` against many slow feeds on 127.0.0.1, with a (short) politeness delay: two
connections to the host, each answer waits, so the downloader holds the other requests queued
behind them when the first answer comes, and the signal is sent then. (Without a delay Scrapy
2.19 sends everything it has at once, whatever CONCURRENT_REQUESTS_PER_DOMAIN says.)"""

from __future__ import annotations

import json
import signal
import subprocess
import time

from tests.crawl import (
    BIN,
    PROJECT_ROOT,
    crawl_env,
    crovia,
    fetch_records,
    run_records,
    write_feeds,
)
from tests.feedserver import FeedServer, Reply
from tests.spider.feedtext import item, rss

PLAIN = {"Content-Type": "application/rss+xml"}
FEEDS = 80
STOPPING = "stopping: no new fetches; finishing"


def slow_feeds(server: FeedServer, tmp_path, delay: float) -> None:
    """FEEDS feeds on one server; the first answers at once, every other one after `delay`."""
    feeds = []
    for n in range(FEEDS):
        body = rss(item(f"Post {n}", f"https://lab{n}.example.org/post"))
        url = server.script(f"feed{n}.xml", Reply(200, body, PLAIN, delay=delay if n else 0))
        feeds.append({"vendor": f"lab{n}", "url": url})
    write_feeds(tmp_path / "feeds.toml", feeds)


def start_crawl(tmp_path, *settings: str, **env: str) -> subprocess.Popen[str]:
    args = [str(BIN / "crovia"), "crawl", "-s", "RETRY_BACKOFF_BASE=0", *settings]
    environment = crawl_env(tmp_path, **{"CROVIA_POLITE_DELAYS": "0", **env})
    return subprocess.Popen(args, cwd=PROJECT_ROOT, env=environment, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


def feed_requests(server: FeedServer) -> list[str]:
    with server._lock:
        return [r.path for r in server.requests if r.path.endswith(".xml")]


def wait_for_first_answer(server: FeedServer, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        with server._lock:
            if any(path.endswith(".xml") for path, _ in server.sent):
                return
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)


def test_one_ctrl_c_stops_new_fetches_and_records_the_run(tmp_path, feed_server):
    slow_feeds(feed_server, tmp_path, delay=2.0)
    metrics = tmp_path / "crovia.prom"
    proc = start_crawl(
        tmp_path,
        *("-s", "DOWNLOAD_TIMEOUT=20", "-s", "DOWNLOAD_DELAY=0.2"),
        CROVIA_POLITE_DELAYS="1",
        CROVIA_METRICS_FILE=str(metrics),
    )
    wait_for_first_answer(feed_server, proc)
    before = len(feed_requests(feed_server))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)

    assert proc.returncode == 0, err[-3000:]
    assert STOPPING in err and "Ctrl-C again to force" in err, err[-3000:]
    # The fetches in flight when the signal came finish (one more may have started meanwhile);
    # the ones queued in the downloader and the scheduler are never sent. Before, each answer
    # let a queued request go, until the downloader's queue was empty.
    asked = feed_requests(feed_server)
    assert len(asked) <= before + 2 and len(asked) < FEEDS / 2, (before, len(asked))
    (record,) = run_records(tmp_path)
    assert record["outcome"] == "interrupted"
    fetched = [feed for feed in record["feeds"] if not feed["error"]]
    unfetched = [feed for feed in record["feeds"] if feed["error"]]
    assert fetched and len(fetched) <= len(asked)
    assert {feed["error"] for feed in unfetched} == {"interrupted"}
    assert record["totals"]["new"] == len(fetched)  # what was fetched was issued
    # Only the feeds fetched are signed as fetched; the others were never asked for.
    assert len(fetch_records(tmp_path)) == len(fetched)
    state = json.loads((tmp_path / "ledger" / "feeds_state.json").read_text())
    assert all(entry.get("failures", 0) == 0 for entry in state.values())
    failing = [line for line in metrics.read_text().splitlines()
               if line.startswith("crovia_feed_consecutive_failures{")]  # fmt: skip
    assert failing and all(line.endswith(" 0.0") for line in failing), failing
    audit = crovia(tmp_path, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_a_second_ctrl_c_forces_exit_1(tmp_path, feed_server):
    slow_feeds(feed_server, tmp_path, delay=10.0)
    proc = start_crawl(tmp_path, "-s", "DOWNLOAD_TIMEOUT=60")
    assert feed_server.wait_for_request("feed0.xml", timeout=60)
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    for line in proc.stderr:  # the first one is being handled: the crawl said it is stopping
        if STOPPING in line:
            break
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == 1, rest[-3000:]
    assert "stopped before its run record was written" in rest
