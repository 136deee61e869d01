"""An early Ctrl-C (issue 43, obs 11): the feeds the crawl never asked for are "not fetched",
never "failed". The run record already said "interrupted" (tests/spider/test_ctrl_c.py); the
closing summary grouped them with the failures: "4 feeds failed the same way (interrupted)" and
"feeds 16 ok, 0 unchanged, 4 failed"."""

from __future__ import annotations

import signal

from tests.crawl import run_records
from tests.spider.test_ctrl_c import FEEDS, slow_feeds, start_crawl


def test_feeds_never_asked_for_are_not_counted_failed(tmp_path, feed_server):
    slow_feeds(feed_server, tmp_path, delay=2.0)
    proc = start_crawl(
        tmp_path,
        *("-s", "DOWNLOAD_TIMEOUT=20", "-s", "DOWNLOAD_DELAY=0.2"),
        CROVIA_POLITE_DELAYS="1",
    )
    assert feed_server.wait_for_request("feed0.xml", timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    (record,) = run_records(tmp_path)
    unfetched = [feed for feed in record["feeds"] if feed["error"] == "interrupted"]
    fetched = [feed for feed in record["feeds"] if not feed["error"]]
    assert unfetched and len(fetched) + len(unfetched) == FEEDS
    summary = [line for line in err.splitlines() if "SUMMARY" in line]
    assert not any("failed the same way" in line or " failed:" in line for line in summary), summary
    run_line = summary[-1]
    assert f"feeds {len(fetched)} ok, 0 unchanged, 0 failed, {len(unfetched)} not fetched" in (
        run_line
    ), run_line
    assert f"{len(unfetched)} feeds not fetched: the crawl was stopped" in err, summary
