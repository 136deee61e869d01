"""Every bad input of issue 4, in one real crawl: each is survived, counted and explained in the run
record, nothing half-parsed reaches the ledger, and the ledger still audits clean."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.conftest import FEEDS, FIXTURES
from tests.crawl import (
    assert_counts_add_up,
    crovia,
    envelopes,
    feed_outcome,
    run_crawl,
    run_records,
)
from tests.feedserver import FeedServer, Reply

SECRET = "CROVIA-SECRET-MARKER-7f3a"
GOOD = (FEEDS / "openai_news_rss_reserialized_trim3.xml").read_bytes()
SETTINGS = (
    "-s", "DOWNLOAD_MAXSIZE=100000",
    "-s", "DOWNLOAD_TIMEOUT=1",
    "-s", "RETRY_TIMES=1",
    "-s", "RETRY_AFTER_MAX=0.2",
)  # fmt: skip


def _hidden_bombs() -> dict[str, bytes]:
    """The billion laughs behind a >64 KB comment, and in EBCDIC (which only expat decodes)."""
    declaration, rest = (FIXTURES / "bad" / "entity_bomb.xml").read_text().split("\n", 1)
    comment = "<!--" + "<x>" * 30_000 + "-->\n"
    ebcdic = declaration.replace("?>", ' encoding="cp037"?>') + "\n<!-- <x> -->\n" + rest
    return {
        "comment_bomb": f"{declaration}\n{comment}{rest}".encode(),
        "ebcdic_bomb": ebcdic.encode("cp037"),
    }


def _xxe_bodies(secret_dir) -> dict[str, bytes]:
    secret = secret_dir / "secret.txt"
    secret.write_text(SECRET)
    dtd = secret_dir / "secret.dtd"
    dtd.write_text(f'<!ENTITY leak SYSTEM "file://{secret}">')
    head = b'<?xml version="1.0"?>\n'
    item = (
        b'<rss version="2.0"><channel><title>t</title><link>https://x.example.org/</link>'
        b"<description>d</description><item><title>leak &leak;</title>"
        b"<link>https://x.example.org/%s</link><description>&leak;</description></item>"
        b"</channel></rss>"
    )
    return {
        "xxe_entity": head
        + f'<!DOCTYPE rss [<!ENTITY leak SYSTEM "file://{secret}">]>\n'.encode()
        + item % b"1",
        "xxe_external_dtd": head + f'<!DOCTYPE rss SYSTEM "file://{dtd}">\n'.encode() + item % b"2",
    }


@pytest.fixture(scope="module")
def bad_crawl(tmp_path_factory):
    """(tmp dir, process, server) after one crawl over every bad input at once."""
    tmp = tmp_path_factory.mktemp("bad")
    with FeedServer(FEEDS, FIXTURES) as server:
        scripted = {
            "robots.txt": [Reply(200, b"User-agent: *\nDisallow: /private/\n")],
            "private/feed.xml": [Reply(200, GOOD)],
            "gone.xml": [Reply(404, b"gone")],
            "broken.xml": [Reply(500, b"oops")],
            "moved.xml": [Reply(301, headers={"Location": "/bad/xml_base.atom"})],
            "busy.xml": [Reply(429, headers={"Retry-After": "1"}), Reply(200, GOOD)],
            "unavailable.xml": [
                Reply(503, headers={"Retry-After": "Fri, 31 Dec 2100 23:59:59 GMT"}),
                Reply(200, (FIXTURES / "bad" / "bom.xml").read_bytes()),
            ],
            "slow.xml": [Reply(200, GOOD, delay=3)],
            "huge.xml": [Reply(200, b"<rss>" + b" " * 200_000 + b"</rss>")],
            "zip_bomb.xml": [
                Reply(200, gzip.compress(b"<rss>" + b" " * 5_000_000), {"Content-Encoding": "gzip"})
            ],
            "plain.xml": [Reply(200, GOOD, {"Content-Type": "text/plain"})],
            "latin1.xml": [
                Reply(
                    200,
                    (FIXTURES / "bad" / "latin1_declared_utf8.xml").read_bytes(),
                    {"Content-Type": "application/rss+xml; charset=utf-8"},
                )
            ],
            **{f"{k}.xml": [Reply(200, v)] for k, v in _xxe_bodies(tmp).items()},
            **{f"{k}.xml": [Reply(200, v)] for k, v in _hidden_bombs().items()},
        }
        for path, replies in scripted.items():
            server.script(path, *replies)
        feeds = [
            {"vendor": "html_page", "url": server.url("bad/not_a_feed.html")},
            {"vendor": "empty", "url": server.url("arxiv_cs_cl_rss2_weekend_empty.xml")},
            {"vendor": "truncated", "url": server.url("bad/truncated.xml")},
            {"vendor": "latin1", "url": server.url("latin1.xml")},
            {"vendor": "no_encoding", "url": server.url("bad/no_encoding_latin1.xml")},
            {"vendor": "bom", "url": server.url("bad/bom.xml")},
            {"vendor": "entity_bomb", "url": server.url("bad/entity_bomb.xml")},
            {"vendor": "xxe_entity", "url": server.url("xxe_entity.xml")},
            {"vendor": "comment_bomb", "url": server.url("comment_bomb.xml")},
            {"vendor": "ebcdic_bomb", "url": server.url("ebcdic_bomb.xml")},
            {"vendor": "xxe_external_dtd", "url": server.url("xxe_external_dtd.xml")},
            {"vendor": "gone", "url": server.url("gone.xml")},
            {"vendor": "broken", "url": server.url("broken.xml")},
            {"vendor": "moved", "url": server.url("moved.xml")},
            {"vendor": "incomplete", "url": server.url("bad/items_incomplete.xml")},
            {"vendor": "duplicate_guids", "url": server.url("bad/duplicate_guids.xml")},
            {"vendor": "busy", "url": server.url("busy.xml")},
            {"vendor": "unavailable", "url": server.url("unavailable.xml")},
            {"vendor": "slow", "url": server.url("slow.xml")},
            {"vendor": "huge", "url": server.url("huge.xml")},
            {"vendor": "zip_bomb", "url": server.url("zip_bomb.xml")},
            {"vendor": "plain_text", "url": server.url("plain.xml")},
            {"vendor": "robots", "url": server.url("private/feed.xml")},
        ]
        proc = run_crawl(tmp, feeds, *SETTINGS)
        yield tmp, proc, server


def outcome(bad_crawl, vendor):
    tmp, *_ = bad_crawl
    return feed_outcome(run_records(tmp)[-1], vendor)


def issued_for(bad_crawl, vendor):
    tmp, *_ = bad_crawl
    return [env for env in envelopes(tmp) if env["body"]["vendor"] == vendor]


def test_crawl_exits_zero_and_ledger_audits_clean(bad_crawl):
    tmp, proc, _ = bad_crawl
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "run vendor_press_" in proc.stderr  # the closing summary
    assert_counts_add_up(run_records(tmp)[-1])
    audit = crovia(tmp, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_html_page_is_not_a_feed(bad_crawl):
    feed = outcome(bad_crawl, "html_page")
    assert feed["status"] == 200 and feed["items_seen"] == 0
    assert feed["parse_error"].startswith("not a feed (text/html")


def test_empty_feed_is_fine(bad_crawl):
    feed = outcome(bad_crawl, "empty")
    assert (feed["status"], feed["items_seen"], feed["parse_error"], feed["error"]) == (
        200,
        0,
        "",
        "",
    )


def test_truncated_document_keeps_only_closed_entries(bad_crawl):
    feed = outcome(bad_crawl, "truncated")
    assert "SAXParseException" in feed["parse_error"]
    assert (feed["items_seen"], feed["new"], feed["dropped"]) == (2, 1, 1)
    assert feed["drop_reasons"] == {"truncated document": 1}
    (env,) = issued_for(bad_crawl, "truncated")
    assert env["subject"]["target_id"] == "https://arxiv.org/abs/2604.21935"


@pytest.mark.parametrize(
    ("vendor", "title"),
    [
        ("latin1", "Café crème"),
        ("no_encoding", "Naïve résumé"),
        ("bom", "Café with a byte-order mark — ok"),
    ],
)
def test_wrong_or_missing_encoding_and_bom_decode(bad_crawl, vendor, title):
    feed = outcome(bad_crawl, vendor)
    assert feed["new"] == 1
    (env,) = issued_for(bad_crawl, vendor)
    assert env["body"]["title"] == title
    if vendor != "bom":
        assert "CharacterEncodingOverride" in feed["parse_error"]


@pytest.mark.parametrize("vendor", ["entity_bomb", "xxe_entity", "comment_bomb"])
def test_entity_declarations_are_refused(bad_crawl, vendor):
    feed = outcome(bad_crawl, vendor)
    assert feed["parse_error"].startswith("refused: the document declares DTD entities")
    assert feed["items_seen"] == 0 and not issued_for(bad_crawl, vendor)


def test_expat_entity_errors_are_refused(bad_crawl):
    feed = outcome(bad_crawl, "ebcdic_bomb")
    assert feed["parse_error"].startswith("refused: SAXParseException")
    assert "limit on input amplification factor" in feed["parse_error"]
    assert feed["items_seen"] == 0 and not issued_for(bad_crawl, "ebcdic_bomb")


def test_no_local_file_reaches_the_ledger(bad_crawl):
    tmp, *_ = bad_crawl
    for path in (tmp / "ledger").glob("*.jsonl"):
        assert SECRET not in path.read_text(encoding="utf-8")
    # An external DTD is never fetched; the entity it would define is undefined: refused.
    feed = outcome(bad_crawl, "xxe_external_dtd")
    assert feed["parse_error"].startswith("refused: SAXParseException")
    assert "undefined entity" in feed["parse_error"]
    assert not issued_for(bad_crawl, "xxe_external_dtd")


@pytest.mark.parametrize(("vendor", "status"), [("gone", 404), ("broken", 500)])
def test_http_errors_are_recorded(bad_crawl, vendor, status):
    feed = outcome(bad_crawl, vendor)
    assert feed["status"] == status and feed["error"] == f"HTTP {status}"


def test_server_errors_are_retried_404_is_not(bad_crawl):
    *_, server = bad_crawl
    assert len(server.requests_for("broken.xml")) == 2  # RETRY_TIMES=1
    assert len(server.requests_for("gone.xml")) == 1


def test_redirect_records_final_url_and_keeps_source_url(bad_crawl):
    feed = outcome(bad_crawl, "moved")
    assert feed["status"] == 200 and feed["final_url"].endswith("/bad/xml_base.atom")
    issued = issued_for(bad_crawl, "moved")
    assert {env["body"]["spider_record"]["source_url"] for env in issued} == {feed["url"]}
    assert sorted(env["object"]["primary_source_url"] for env in issued) == [
        "https://lab.example.org/blog/posts/one",
        "https://other.example.org/notes/two",
    ]
    one = next(env for env in issued if env["body"]["title"] == "Resolved against xml:base")
    assert one["body"]["summary"] == "One & only"  # tags and script gone, entities decoded


def test_items_without_title_or_link(bad_crawl):
    feed = outcome(bad_crawl, "incomplete")
    assert (feed["items_seen"], feed["new"], feed["dropped"]) == (5, 3, 2)
    assert feed["drop_reasons"] == {"no link and no guid": 1, "no title and no description": 1}
    targets = {env["subject"]["target_id"] for env in issued_for(bad_crawl, "incomplete")}
    assert "guid:incomplete:tag:example.org,2026:no-link" in targets  # a guid that is no URL
    assert any(t.startswith("http://127.0.0.1:") and t.endswith("/posts/relative") for t in targets)


def test_duplicate_guids(bad_crawl):
    feed = outcome(bad_crawl, "duplicate_guids")
    assert (feed["items_seen"], feed["new"], feed["duplicate"]) == (3, 2, 1)


def test_429_and_503_honour_retry_after_up_to_the_maximum(bad_crawl):
    *_, server = bad_crawl
    for vendor, path in (("busy", "busy.xml"), ("unavailable", "unavailable.xml")):
        feed = outcome(bad_crawl, vendor)
        assert feed["status"] == 200 and feed["items_seen"] >= 1, vendor
        assert len(server.requests_for(path)) == 2


def test_slow_server_times_out(bad_crawl):
    feed = outcome(bad_crawl, "slow")
    assert feed["error"].startswith("timed out") and feed["status"] is None


def test_body_over_size_limit_is_refused(bad_crawl):
    feed = outcome(bad_crawl, "huge")
    assert feed["error"].startswith("download cancelled") and feed["items_seen"] == 0


def test_compression_bomb_is_stopped_at_the_size_limit(bad_crawl):
    feed = outcome(bad_crawl, "zip_bomb")
    assert "DOWNLOAD_MAXSIZE" in feed["error"] or "max size" in feed["error"], feed["error"]
    assert feed["items_seen"] == 0


def test_wrong_content_type_still_parses(bad_crawl):
    feed = outcome(bad_crawl, "plain_text")
    assert feed["new"] + feed["duplicate"] == 3


def test_robots_txt_is_obeyed(bad_crawl):
    *_, server = bad_crawl
    feed = outcome(bad_crawl, "robots")
    assert feed["error"] == "Forbidden by robots.txt"
    assert server.requests_for("private/feed.xml") == []


def test_incomplete_feeds_keep_no_validators(bad_crawl):
    tmp, *_ = bad_crawl
    state = json.loads((tmp / "ledger" / "feeds_state.json").read_text())
    by_vendor = {entry["vendor"]: entry for entry in state.values()}
    assert "etag" not in by_vendor["truncated"]
    assert by_vendor["truncated"]["last_run"]["dropped"] == 1
    assert by_vendor["bom"]["etag"]
