"""The "jsonfeed" source kind: a JSON Feed is crawled as a feed is, on the same path (fetch policy,
politeness, the parser worker and its ceilings, one fetch record per feed and crawl), and its kept
body is read again as a JSON Feed by `crovia history` and `crovia absent` (docs/format.md,
"Entries of a JSON Feed"). Crawls run against tests/fixtures/feeds on 127.0.0.1.
"""

from __future__ import annotations

import json

import pytest

from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.jsonfeed import MAX_DEPTH, parse_jsonfeed
from ledger.records.fetch import entries_digest
from tests.crawl import crovia, envelopes, feed_outcome, fetch_records, run_crawl, run_records
from tests.feedserver import Reply

FIXTURE = "lab_jsonfeed_1_1.json"
NOTE_URLS = [f"https://notes.example.org/n/{n}" for n in (3, 2, 1)]
V11 = "https://jsonfeed.org/version/1.1"


def jsonfeed(*items: object, **top: object) -> bytes:
    return json.dumps({"version": V11, "title": "Lab", "items": list(items), **top}).encode()


GOOD_ITEM = {"id": "ok", "url": "https://notes.example.org/ok", "title": "Fine"}


def test_a_json_feed_is_crawled_once_and_read_again(tmp_path, feed_server):
    feeds = [{"vendor": "lab", "url": feed_server.url(FIXTURE), "kind": "jsonfeed"}]
    first = run_crawl(tmp_path, feeds)
    assert first.returncode == 0, first.stderr[-3000:]
    items = envelopes(tmp_path)
    assert [item["body"]["spider_record"]["url"] for item in items] == NOTE_URLS
    (record,) = fetch_records(tmp_path)
    body = record["body"]
    assert (body["kind"], body["outcome"]) == ("jsonfeed", "new_body")
    entries = body["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (3, 3, 0)
    assert entries["identities_sha256"] == entries_digest(
        [item["object"]["identity"] for item in items]
    )

    second = run_crawl(tmp_path, feeds)
    assert second.returncode == 0, second.stderr[-3000:]
    assert len(envelopes(tmp_path)) == 3  # nothing issued again
    assert len(fetch_records(tmp_path)) == 2  # one fetch record per crawl

    history = crovia(tmp_path, "history", "--url", NOTE_URLS[1])
    assert history.returncode == 0, history.stdout + history.stderr
    assert "held it" in history.stdout and "proves nothing" not in history.stdout
    present = crovia(tmp_path, "absent", "--url", NOTE_URLS[1], "--at", "2100-01-01")
    assert present.returncode == 1, present.stdout + present.stderr
    gone = "https://notes.example.org/n/9"
    absent = crovia(tmp_path, "absent", "--url", gone, "--vendor", "lab", "--at", "2100-01-01")
    assert absent.returncode == 0, absent.stdout + absent.stderr
    assert crovia(tmp_path, "audit").returncode == 0


HOSTILE = {
    "wrong_types": (
        jsonfeed(
            GOOD_ITEM,
            {"id": True, "url": "https://notes.example.org/a"},
            {"id": "b", "title": ["not", "text"]},
            {"id": "c", "date_published": 20260101},
            "not an item",
        ),
        "new_body",
        "4 item(s) of the wrong shape",
    ),
    "huge_strings": (
        jsonfeed(
            GOOD_ITEM,
            {"id": "x" * 3_000_000, "title": "y" * 3_000_000, "summary": "z " * 2_000_000},
        ),
        "new_body",
        "",
    ),
    "deep_nesting": (
        b'{"version": "' + V11.encode() + b'", "title": "t", "items": [' + b"[" * 100_000,
        "unreadable_body",
        f"nested deeper than {MAX_DEPTH} levels",
    ),
    "deep_but_closed": (
        jsonfeed(GOOD_ITEM, {"id": "d", "_x": json.loads("[" * 500 + "]" * 500)}),
        "unreadable_body",
        f"nested deeper than {MAX_DEPTH} levels",
    ),
    "not_json": (b"<html><body>Moved</body></html>", "unreadable_body", "not JSON"),
    "version_missing": (
        json.dumps({"title": "Lab", "items": [GOOD_ITEM]}).encode(),
        "unreadable_body",
        "version missing",
    ),
}


def test_hostile_json_feeds_are_recorded_and_cost_nothing_else(tmp_path, feed_server):
    feeds = [{"vendor": "good", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    for name, (data, _, _) in HOSTILE.items():
        path = f"{name}.json"
        url = feed_server.script(path, Reply(200, data, {"Content-Type": "application/feed+json"}))
        feeds.append({"vendor": name, "url": url, "kind": "jsonfeed"})
    proc = run_crawl(tmp_path, feeds)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    records = {r["body"]["vendor"]: r["body"] for r in fetch_records(tmp_path)}
    assert records["good"]["outcome"] == "new_body" and records["good"]["entries"]["count"] > 0
    for name, (_, outcome, says) in HOSTILE.items():
        body = records[name]
        assert body["outcome"] == outcome, (name, body)
        if outcome == "unreadable_body":
            assert says in body["error"], (name, body["error"])
        else:
            assert body["entries"]["count"] == (2 if name == "huge_strings" else 1), body
    wrong = records["wrong_types"]["entries"]
    assert (wrong["in_body"], wrong["unread"]) == (5, 4)
    (run,) = run_records(tmp_path)
    outcome = feed_outcome(run, "wrong_types")
    assert outcome["parse_error"].startswith(HOSTILE["wrong_types"][2])
    assert outcome["drop_reasons"] == {"malformed entry (a wrong type)": 4}
    huge = [e for e in envelopes(tmp_path) if e["body"]["vendor"] == "huge_strings"]
    assert max(len(json.dumps(e)) for e in huge) < 20_000  # the caps of feed/entries.py hold
    assert crovia(tmp_path, "audit").returncode == 0


def test_the_reader_is_strict():
    assert parse_jsonfeed(b'{"version": "x", "title": "t", "items": [1]}').lost_entries == 1
    assert "NaN" in parse_jsonfeed(jsonfeed(GOOD_ITEM).replace(b'"Fine"', b"NaN")).error
    twice = parse_jsonfeed(jsonfeed(GOOD_ITEM)[:-1] + b', "title": "again"}')
    assert twice.failed and "gives a name twice" in twice.error
    item_twice = jsonfeed(GOOD_ITEM).replace(b'"id": "ok"', b'"id": "ok", "id": "ko"')
    assert parse_jsonfeed(item_twice).malformed_entries == 1
    numbers = parse_jsonfeed(jsonfeed({"id": 7}, {"id": 10**30}, {"id": 1.5}))
    assert [e["id"] for e in numbers.entries] == ["7"] and numbers.malformed_entries == 2
    surrogate = parse_jsonfeed(jsonfeed(GOOD_ITEM).replace(b"Fine", b"\\ud800"))
    assert surrogate.malformed_entries == 1
    text = parse_jsonfeed(jsonfeed({"id": "t", "content_text": "1 < 2"})).entries[0]
    assert text["content"] == [{"type": "text/html", "value": "1 &lt; 2"}]
    v1 = parse_jsonfeed(jsonfeed(GOOD_ITEM, version="https://jsonfeed.org/version/1"))
    assert v1.version == "jsonfeed1" and len(v1.entries) == 1


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("site_map", "did you mean 'sitemap'?"),
        ("page", "kind \"page\" needs 'selectors'"),
        ("json_feed", "did you mean 'jsonfeed'?"),
        (3, "'kind' must be a string"),
    ],
)
def test_a_bad_kind_is_refused_before_any_request(tmp_path, kind, says):
    path = tmp_path / "feeds.toml"
    value = json.dumps(kind)
    path.write_text(f'[[feeds]]\nvendor = "lab"\nurl = "https://a.example/f"\nkind = {value}\n')
    with pytest.raises(ConfigError) as refused:
        load_feeds(path)
    assert "(vendor 'lab')" in str(refused.value) and says in str(refused.value)


def test_a_kept_body_is_read_again_as_the_kind_its_record_names():
    from crovia_spider.spiders.reread import read_kept_body

    record = {"vendor": "lab", "feed_url": "https://notes.example.org/f", "entries": {"limit": 9}}
    body = jsonfeed(GOOD_ITEM)
    as_feed = read_kept_body(body, record, record["feed_url"])
    assert "error" in as_feed  # read as RSS or Atom, a JSON Feed is no feed
    found = read_kept_body(body, {**record, "kind": "jsonfeed"}, record["feed_url"])
    assert found["identities"] == [
        {"family": "lab", "guid": "ok", "link": "https://notes.example.org/ok"}
    ]
    for kind in ("atom", ["jsonfeed"]):
        refused = read_kept_body(body, {**record, "kind": kind}, record["feed_url"])
        assert refused["error"].startswith("the fetch record names no source kind we read")
