"""Nothing lost silently (issue 8): a character reference feedparser cannot encode costs its own
entry at most, HTML named entities are read, a feed the parser cannot read is a recorded failure
whose validators are not stored, and every run record adds up."""

from __future__ import annotations

from tests.crawl import assert_counts_add_up, envelopes, feed_outcome, run_crawl, run_records
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

ETAG = {"ETag": '"v1"', "Content-Type": "application/rss+xml"}


def crawl(tmp_path, feeds, *args):
    proc = run_crawl(tmp_path, feeds, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    record = run_records(tmp_path)[-1]
    assert_counts_add_up(record)
    return proc, record


def test_an_unencodable_reference_costs_only_its_own_entry(tmp_path, feed_server):
    body = rss(
        item("Fine one", "https://lab.example.org/1"),
        item("Broken &#xD800; title", "https://lab.example.org/2"),
        item("Too far", "https://lab.example.org/3", description="x &#x110000; y"),
        item("Fine four", "https://lab.example.org/4"),
    )
    url = feed_server.script("surrogate.xml", Reply(200, body, ETAG))
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert (feed["items_seen"], feed["new"], feed["dropped"]) == (4, 2, 2)
    assert feed["drop_reasons"] == {"invalid character reference": 2}
    assert feed["error"] == ""
    titles = sorted(env["body"]["title"] for env in envelopes(tmp_path))
    assert titles == ["Fine four", "Fine one"]


def test_a_wide_feed_with_a_bad_reference_costs_only_that_entry(tmp_path, feed_server):
    # UTF-16 with a byte-order mark is read as UTF-8 text first, so its references are checked too.
    body = rss(item("One", "https://lab.example.org/1"), item("Two &#xD800;", "https://l/2"),
               encoding="utf-16")  # fmt: skip
    url = feed_server.script("wide.xml", Reply(200, body, ETAG))
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert (feed["items_seen"], feed["new"], feed["error"]) == (2, 1, "")
    assert feed["drop_reasons"] == {"invalid character reference": 1}


def test_a_feed_the_parser_cannot_read_is_a_failure_and_is_fetched_again(tmp_path, feed_server):
    # UTF-16 without a byte-order mark is not rewritten before parsing, so feedparser still
    # raises on the surrogate: the whole feed is lost this time, counted, and fetched again.
    body = rss(item("One", "https://lab.example.org/1"), item("Two &#xD800;", "https://l/2"),
               encoding="utf-16-le")  # fmt: skip
    url = feed_server.script("wide.xml", Reply(200, body, ETAG))
    proc, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert feed["error"].startswith("unreadable feed: ")
    assert (feed["items_seen"], feed["dropped"]) == (2, 2)
    assert feed["drop_reasons"] == {"unreadable feed": 2}
    assert "feed lab failed: unreadable feed" in proc.stderr
    feed_server.clear()
    crawl(tmp_path, None)
    (request,) = feed_server.requests_for("wide.xml")
    assert "if-none-match" not in request.headers  # no 304 hides the lost entries


def test_html_named_entities_without_a_dtd_are_read(tmp_path, feed_server):
    body = rss(
        item("Caf&eacute; &mdash; one&nbsp;two", "https://lab.example.org/1", "", "a&nbsp;b"),
        item("Plain", "https://lab.example.org/2", description="&hellip; &amp; &lt;i&gt;"),
    )
    url = feed_server.script("entities.xml", Reply(200, body, ETAG))
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert (feed["new"], feed["parse_error"]) == (2, "")
    by_title = {env["body"]["title"]: env["body"]["summary"] for env in envelopes(tmp_path)}
    assert by_title == {"Café — one two": "a b", "Plain": "… &"}


def test_an_entity_the_document_does_not_define_is_still_refused(tmp_path, feed_server):
    body = rss(item("Leak &secret;", "https://lab.example.org/1"))
    url = feed_server.script("undefined.xml", Reply(200, body, ETAG))
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert feed["parse_error"].startswith("refused: ") and "undefined entity" in feed["error"]
    assert envelopes(tmp_path) == []


def test_entries_past_the_cap_are_counted_and_the_feed_is_fetched_again(tmp_path, feed_server):
    items = [item(f"Post {n}", f"https://lab.example.org/{n}") for n in range(6)]
    url = feed_server.script("many.xml", Reply(200, rss(*items), ETAG))
    args = ("-s", "CROVIA_MAX_ENTRIES_PER_FEED=2")
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}], *args)
    feed = feed_outcome(record, "lab")
    assert (feed["items_seen"], feed["new"], feed["dropped"]) == (6, 2, 4)
    assert feed["drop_reasons"] == {
        "over the per-feed entry cap (CROVIA_MAX_ENTRIES_PER_FEED)": 4
    }  # fmt: skip
    feed_server.clear()
    crawl(tmp_path, None, *args)
    (request,) = feed_server.requests_for("many.xml")
    assert "if-none-match" not in request.headers


def test_long_fields_are_cut_or_left_out_and_counted(tmp_path, feed_server):
    long_link = "https://lab.example.org/" + "a" * 2100
    body = rss(
        item("T" * 600, "https://lab.example.org/1", guid="g" * 1200),
        item("Long link", long_link, guid="tag:lab,2026:2"),
    )
    url = feed_server.script("long.xml", Reply(200, body, ETAG))
    _, record = crawl(tmp_path, [{"vendor": "lab", "url": url}])
    feed = feed_outcome(record, "lab")
    assert feed["cut"] == {"title": 1, "guid": 1, "link": 1}
    assert feed["new"] == 2
    titles = sorted(len(env["body"]["title"]) for env in envelopes(tmp_path))
    assert titles == [9, 500]
    (long_one,) = [env for env in envelopes(tmp_path) if env["body"]["title"] == "Long link"]
    assert long_one["subject"]["target_id"] == "guid:lab:tag:lab,2026:2"
