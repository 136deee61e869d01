"""Plain text, safe URLs and quiet logs (issue 8), in real crawls."""

from __future__ import annotations

import re

from crovia_spider.runs.runlog import RunLog
from crovia_spider.runs.runsummary import OFFLINE, log_summary
from tests.crawl import assert_counts_add_up, envelopes, feed_outcome, run_crawl, run_records
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

PLAIN = {"Content-Type": "application/rss+xml"}
TAG = re.compile(r"<[A-Za-z/!?][^<>]*>")
UNWANTED = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:t</id>
<entry><id>tag:lab,2026:1</id>
<title type="text">&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;Bold&lt;/b&gt; \u202eevil</title>
<link href="https://lab.example.org/a b?q=x y"/>
<summary type="text">&lt;i&gt;Hi&lt;/i&gt;\u0081 there\u0090</summary>
<updated>2026-01-01T00:00:00Z</updated></entry>
<entry><id>javascript:alert(1)</id><title type="html">&lt;b&gt;Script guid&lt;/b&gt;</title>
<summary>s</summary><updated>2026-01-01T00:00:00Z</updated></entry>
<entry><id>file:///etc/passwd</id><title>File guid</title><link href="javascript:alert(2)"/>
<summary>s</summary><updated>2026-01-01T00:00:00Z</updated></entry>
</feed>
""".encode()


def test_titles_and_summaries_are_plain_text_and_urls_are_safe(tmp_path, feed_server):
    url = feed_server.script("t.atom", Reply(200, ATOM, {"Content-Type": "application/atom+xml"}))
    proc = run_crawl(tmp_path, [{"vendor": "lab", "url": url}])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert_counts_add_up(run_records(tmp_path)[-1])
    issued = {env["body"]["title"]: env for env in envelopes(tmp_path)}
    assert sorted(issued) == ["Bold evil", "File guid", "Script guid"]
    for env in issued.values():
        for text in (env["body"]["title"], env["body"]["summary"]):
            assert not TAG.search(text) and not UNWANTED.search(text), text
        target = env["subject"]["target_id"]
        assert not re.match(r"(?i)(javascript|file|data):", target) and " " not in target
    bold = issued["Bold evil"]
    assert bold["body"]["summary"] == "Hi there"
    assert bold["subject"]["target_id"] == "https://lab.example.org/a%20b?q=x%20y"
    assert bold["body"]["spider_record"]["url"] == bold["subject"]["target_id"]
    assert issued["Script guid"]["subject"]["target_id"] == "guid:lab:javascript:alert(1)"
    assert issued["File guid"]["subject"]["target_id"].startswith("guid:lab:file:")
    assert issued["File guid"]["body"]["spider_record"]["url"] == ""


def test_a_dropped_item_costs_one_short_debug_line(tmp_path, feed_server):
    # 300 unchanged items, each with a 3 KB description, dropped on the second crawl.
    items = [item(f"Post {n}", f"https://lab.example.org/{n}", description="x" * 3000)
             for n in range(300)]  # fmt: skip
    url = feed_server.script("big.xml", Reply(200, rss(*items), PLAIN))
    assert run_crawl(tmp_path, [{"vendor": "lab", "url": url}]).returncode == 0
    proc = run_crawl(tmp_path, None, "-s", "LOG_LEVEL=DEBUG")
    assert feed_outcome(run_records(tmp_path)[-1], "lab")["duplicate"] == 300
    drops = [line for line in proc.stderr.splitlines() if "Dropped:" in line]
    assert len(drops) == 300
    assert all(" DEBUG: " in line and len(line) < 500 for line in drops)
    assert len(proc.stderr) < 300 * 600  # nothing else grows with the items either
    quiet = run_crawl(tmp_path, None)  # at INFO, drops are not logged at all
    assert "Dropped" not in quiet.stderr and len(quiet.stderr) < 20_000


def test_each_failed_feed_is_reported_once_and_the_summary_survives_warning(tmp_path, feed_server):
    fine = Reply(200, rss(item("A", "https://l/a")), PLAIN)
    feeds = [
        {"vendor": "gone", "url": feed_server.script("gone.xml", Reply(404, b"gone"))},
        {"vendor": "broke", "url": feed_server.script("broke.xml", Reply(500, b"oops"))},
        {"vendor": "fine", "url": feed_server.script("ok.xml", fine)},
    ]
    proc = run_crawl(tmp_path, feeds, "-s", "RETRY_TIMES=1")
    assert proc.returncode == 0
    for vendor, reason in (("gone", "HTTP 404"), ("broke", "HTTP 500")):
        reports = [line for line in proc.stderr.splitlines() if vendor in line]
        assert len(reports) == 1 and f"feed {vendor} failed: {reason}" in reports[0], proc.stderr
    quiet = run_crawl(tmp_path, None, "-s", "RETRY_TIMES=1", "-s", "LOG_LEVEL=WARNING")
    assert quiet.returncode == 0
    run_line = r"SUMMARY: run vendor_press_\S+ finished in \S+: feeds 1 ok, 0 unchanged, 2 failed"
    assert re.search(run_line, quiet.stderr)
    assert "feed broke failed: HTTP 500" in quiet.stderr


def test_a_run_whose_every_feed_failed_on_dns_says_the_machine_looks_offline(caplog):
    run = RunLog("vendor_press", [("a", "https://a.example/"), ("b", "https://b.example/")])
    for feed in run.feeds.values():
        feed.error = "DNS lookup failed: no results for hostname lookup: a.example."
    log_summary(run, run.record("2026-01-01T00:00:00.000000Z", "finished"))
    assert OFFLINE in caplog.text
    run.feeds["b"].error = "HTTP 500"
    caplog.clear()
    log_summary(run, run.record("2026-01-01T00:00:00.000000Z", "finished"))
    assert OFFLINE not in caplog.text


def test_a_marked_section_python_does_not_know_is_text_not_an_exception():
    """Python's HTMLParser asserts on `<![CDAPA[` (found by fuzzing the sitemap reader: a news
    title decoded by lxml reaches plain_text as is, as a JSON Feed's or a page's title does):
    plain_text never raises, so the entry is not lost."""
    from crovia_spider.feed.plaintext import excerpt, plain_text

    assert plain_text("a <![CDAPA[x]]> b <b>c</b>") == "a <![CDAPA[x]]> b c"
    assert plain_text("<![if x]> y") == "y"
    assert excerpt("<![bogus[" * 1000, 20) == "<![bogus[<![bogus[<!"
