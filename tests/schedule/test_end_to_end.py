"""Real crawls: `crovia schedule` driving `scrapy crawl` against feeds on 127.0.0.1, and two crawls
racing for one ledger. Each ends with `crovia audit` and a check that no item was issued twice.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import threading
from collections import Counter
from datetime import datetime
from pathlib import Path

import feedparser
import pytest

from tests.crawl import (
    BIN,
    FAST_SETTINGS,
    PROJECT_ROOT,
    crawl_env,
    crovia,
    envelopes,
    feed_outcome,
    leaves,
    run_crawl,
    run_records,
    write_feeds,
)
from tests.feedserver import Reply
from tests.schedule.conftest import write_schedule

FIXTURE_FEEDS = Path(__file__).resolve().parents[1] / "fixtures" / "feeds"
OPENAI = "openai_news_rss_prefix.xml"
ARXIV = "arxiv_cs_ai_rss2_2026-04-27_trim3.xml"


def feeds_on(server) -> list[dict[str, str]]:
    return [
        {"vendor": "openai", "url": server.url(OPENAI)},
        {"vendor": "arxiv_cs_ai", "url": server.url(ARXIV)},
    ]


def entries_in(*names: str) -> int:
    """How many entries feedparser finds in these fixture feeds: the items a crawl must issue."""
    return sum(len(feedparser.parse((FIXTURE_FEEDS / name).read_bytes()).entries) for name in names)


def assert_issued_once_and_audited(tmp_path: Path, expected_items: int) -> None:
    targets = Counter(env["subject"]["target_id"] for env in envelopes(tmp_path))
    assert sum(targets.values()) == expected_items
    assert max(targets.values()) == 1, "an item was issued twice"
    audit = crovia(tmp_path, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def assert_no_overlap(runs: list[dict]) -> None:
    spans = sorted(
        (datetime.fromisoformat(r["started_at"]), datetime.fromisoformat(r["finished_at"]))
        for r in runs
    )
    for (_, end), (next_start, _) in itertools.pairwise(spans):
        assert next_start >= end, "two crawls overlapped"


def test_every_3s_crawls_repeat_apart_and_stop_cleanly(tmp_path, feed_server, start_scheduler):
    write_feeds(tmp_path / "feeds.toml", feeds_on(feed_server))
    args = ", ".join(f'"{a}"' for a in FAST_SETTINGS)
    schedule = write_schedule(
        tmp_path / "schedule.toml",
        f'[[jobs]]\nname = "harvest"\nspider = "vendor_press"\nargs = [{args}]\nevery = "3s"\n',
    )
    scheduler = start_scheduler(["--config", str(schedule)], crawl_env(tmp_path))

    finished = scheduler.wait_for(r"job=harvest finished", count=3, timeout=60)
    assert scheduler.stop() == 0

    assert all(" exit=0 " in line for line in finished), scheduler.log()
    runs = run_records(tmp_path)
    assert len(runs) >= 3
    assert_no_overlap(runs)
    items = entries_in(OPENAI, ARXIV)
    assert runs[0]["totals"]["new"] == items
    assert all(r["totals"]["new"] == 0 for r in runs[1:])
    # The first seal covers the items and the two feeds' fetch records (AX.FETCH).
    assert f"new={items} " in finished[0] and f"seal=leaf_count:{items + 2}," in finished[0]
    assert_issued_once_and_audited(tmp_path, items)


def start_crawl(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("lock_timeout", ["0.5", "60"], ids=["gives-up", "waits"])
def test_two_crawls_at_once_never_write_together(tmp_path, feed_server, lock_timeout):
    # A slow feed keeps whichever crawl gets the ledger lock first holding it for seconds.
    slow = feed_server.script("slow.xml", Reply(body=(FIXTURE_FEEDS / ARXIV).read_bytes(), delay=3))
    write_feeds(
        tmp_path / "feeds.toml", [{"vendor": "slow", "url": slow}, feeds_on(feed_server)[0]]
    )
    env = crawl_env(tmp_path, CROVIA_LOCK_TIMEOUT=lock_timeout)

    crawls = [start_crawl(env), start_crawl(env)]
    outputs = [crawl.communicate(timeout=90)[0] for crawl in crawls]

    codes = [crawl.returncode for crawl in crawls]
    runs = run_records(tmp_path)
    if lock_timeout == "60":
        # The second waited for the lock, then crawled after the first had committed: its
        # conditional GET was answered 304 and it issued nothing.
        assert codes == [0, 0], outputs
        assert len(runs) == 2 and runs[1]["totals"]["new"] == 0
        assert feed_outcome(runs[1], "openai")["not_modified"]
    else:
        assert sorted(codes)[0] == 0 and sorted(codes)[1] != 0, outputs
        refused = outputs[codes.index(sorted(codes)[1])]
        assert "holds" in refused and "ledger.lock" in refused and "gave up after" in refused
        assert len(runs) == 1
        assert len(feed_server.requests_for(OPENAI)) == 1, "the refused crawl fetched a feed"
    assert_issued_once_and_audited(tmp_path, entries_in(ARXIV, OPENAI))


def test_seal_job_runs_crovia_seal_on_the_ledger(tmp_path, feed_server, start_scheduler):
    assert run_crawl(tmp_path, feeds_on(feed_server)).returncode == 0
    schedule = write_schedule(
        tmp_path / "schedule.toml", '[[jobs]]\nname = "seal"\nseal = true\nevery = "1s"\n'
    )
    scheduler = start_scheduler(["--config", str(schedule)], crawl_env(tmp_path))

    (line,) = scheduler.wait_for(r"job=seal finished", timeout=30)
    assert scheduler.stop() == 0

    # The crawl sealed at its end: `crovia seal` finds nothing new, says so and writes nothing.
    assert "exit=0 seal=none" in line
    assert "no new leaves since the last seal" in scheduler.log()
    assert len((tmp_path / "ledger" / "seals.jsonl").read_text().splitlines()) == 1


def test_stop_mid_crawl_ends_with_a_sealed_consistent_ledger(
    tmp_path, feed_server, start_scheduler
):
    # The held feed answers only when the test says so: the crawl is mid-request when the stop
    # signal comes. With no grace the scheduler hands SIGTERM on at once and Scrapy closes the
    # spider: what was issued is sealed and the run recorded.
    requested, release = threading.Event(), threading.Event()

    def held_body() -> bytes:
        requested.set()
        release.wait(timeout=30)
        return (FIXTURE_FEEDS / ARXIV).read_bytes()

    held = feed_server.script("held.xml", Reply(body=held_body))
    write_feeds(
        tmp_path / "feeds.toml", [feeds_on(feed_server)[0], {"vendor": "held", "url": held}]
    )
    args = ", ".join(f'"{a}"' for a in FAST_SETTINGS)
    schedule = write_schedule(
        tmp_path / "schedule.toml",
        f'[[jobs]]\nname = "harvest"\nspider = "vendor_press"\nargs = [{args}]\nevery = "1s"\n',
    )
    command = ["--config", str(schedule), "--grace", "0", "--kill-after", "60"]
    scheduler = start_scheduler(command, crawl_env(tmp_path))
    assert requested.wait(timeout=30), scheduler.log()

    scheduler.proc.send_signal(signal.SIGTERM)
    scheduler.wait_for(r"still running after the grace period: sending SIGTERM")
    release.set()
    assert scheduler.wait_exit() == 0

    assert "SIGKILL" not in scheduler.log()
    (run,) = run_records(tmp_path)
    assert run["outcome"] == "interrupted"  # Scrapy took the SIGTERM as a graceful close
    (line,) = [line for line in scheduler.lines if "job=harvest finished" in line]
    assert f"exit=0 run_id={run['run_id']} " in line
    issued = len(envelopes(tmp_path))
    assert issued == run["totals"]["new"] >= entries_in(OPENAI)
    seals = (tmp_path / "ledger" / "seals.jsonl").read_text().splitlines()
    sealed = len(leaves(tmp_path))  # the items and the fetch records of the feeds fetched
    assert sealed > issued
    assert json.loads(seals[-1])["leaf_count"] == sealed
    assert f"seal=leaf_count:{sealed}," in line
    assert_issued_once_and_audited(tmp_path, issued)
