"""`scrapy crawl`'s exit status (issue 8): non-zero when the ledger refused a batch or the crawl
was force-stopped; 0 when feeds failed but the ledger is sound (tests/spider/test_bad_input.py)."""

from __future__ import annotations

import resource
import signal
import subprocess

from tests.crawl import BIN, FAST_SETTINGS, PROJECT_ROOT, crawl_env, run_records, write_feeds
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

PLAIN = {"Content-Type": "application/rss+xml"}


def scrapy_crawl(tmp_path, *extra: str, **popen) -> subprocess.Popen[str]:
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS, *extra]
    return subprocess.Popen(args, cwd=PROJECT_ROOT, env=crawl_env(tmp_path), text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)  # fmt: skip


def small_files():
    # The kernel refuses writes past 200 KB (EFBIG, as a full disk refuses them): the ledger's
    # first batch of 300 envelopes does not fit, the run record does.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.RLIM_INFINITY))


def test_a_batch_the_ledger_refused_exits_non_zero(tmp_path, feed_server):
    items = [item(f"Post {n}", f"https://lab.example.org/{n}", description="y" * 500)
             for n in range(300)]  # fmt: skip
    url = feed_server.script("many.xml", Reply(200, rss(*items), PLAIN))
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "lab", "url": url}])
    proc = scrapy_crawl(tmp_path, preexec_fn=small_files)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err[-3000:]
    assert "exit status 1: the ledger refused" in err
    (record,) = run_records(tmp_path)
    assert record["outcome"] == "failed" and record["totals"]["new"] == 0


def test_a_crawl_stopped_by_a_second_interrupt_exits_non_zero(tmp_path, feed_server):
    stuck = feed_server.script("stuck.xml", Reply(200, rss(item("A", "https://l/a")), delay=20))
    write_feeds(tmp_path / "feeds.toml", [{"vendor": "stuck", "url": stuck}])
    proc = scrapy_crawl(tmp_path, "-s", "DOWNLOAD_TIMEOUT=60")
    assert feed_server.wait_for_request("stuck.xml", timeout=60)
    proc.send_signal(signal.SIGINT)
    for line in proc.stderr:  # the first interrupt is being handled: a graceful stop has begun
        if "shutting down gracefully" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode != 0, rest[-3000:]
