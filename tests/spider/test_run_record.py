"""Run record times: started_at when the crawl began, lock_acquired_at when it got the ledger."""

from __future__ import annotations

import re
import subprocess

from crovia_spider.runs.runlog import utc_now_micro
from ledger.keys import load_signing_key
from ledger.store import Ledger
from tests.crawl import BIN, FAST_SETTINGS, PROJECT_ROOT, crawl_env, run_records, write_feeds

UTC_MICRO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z"
# Scrapy lists the spider middlewares after the spider (and its started_at) exists, and builds the
# item pipelines, which take the ledger lock, right after.
BEFORE_THE_LOCK = "Enabled spider middlewares"


def test_lock_acquired_at_is_when_a_waiting_crawl_got_the_ledger(tmp_path, feed_server):
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    write_feeds(tmp_path / "feeds.toml", feeds)
    env = crawl_env(tmp_path)
    key = load_signing_key(env["CROVIA_SIGNING_KEY_FILE"])
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS]
    with Ledger.open(tmp_path / "ledger", signing_key=key, lock_timeout=5):
        proc = subprocess.Popen(
            [*args, "-s", "CROVIA_LOCK_TIMEOUT=120"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen = ""
        for line in proc.stderr:  # the crawl has started and is about to wait for our lock
            seen += line
            if BEFORE_THE_LOCK in line:
                break
        released = utc_now_micro()
    _, rest = proc.communicate(timeout=120)
    assert proc.returncode == 0, (seen + rest)[-3000:]
    (record,) = run_records(tmp_path)
    assert re.fullmatch(UTC_MICRO, record["lock_acquired_at"])
    assert record["started_at"] < released <= record["lock_acquired_at"] <= record["finished_at"]
