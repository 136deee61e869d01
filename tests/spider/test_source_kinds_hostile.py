"""Hostile sources of kind "sitemap" and "page", crawled beside a good feed on 127.0.0.1.

One crawl (`hostile_crawl`, once per module) reads every hostile source below, each its own vendor,
beside a plain RSS feed (`good`) that must lose nothing: sitemap indexes that name themselves or
each other, nest past CROVIA_SITEMAP_DEPTH, or name more sitemaps than CROVIA_SITEMAP_FETCHES;
a gzip bomb; a sitemap of 50,001 URLs; a billion laughs as a source and as a sitemap an index
names; listing pages whose selectors find nothing; a page just under the 16 MiB download cap and
one just over it. Each test reads what the fetch record and the run record say of one source
(docs/format.md, "Entries of a sitemap" and "Entries of a listing page"); the crawl exits 0 and
the ledger audits clean. Hostile JSON Feeds are tests/spider/test_jsonfeed.py's HOSTILE table.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from crovia_spider.feed.body import DECLARES_ENTITIES
from crovia_spider.feed.listing import MAX_BYTES
from crovia_spider.feed.sitemap import MAX_UNCOMPRESSED, MAX_URLS, TOO_LARGE
from crovia_spider.runs.runlog import BEYOND_PROTOCOL, UNREADABLE_FEED
from crovia_spider.spiders.sitemap_walk import NOT_READ
from ledger.store import BodyStore
from tests.crawl import (
    assert_counts_add_up,
    crovia,
    envelopes,
    feed_outcome,
    fetch_records,
    run_crawl,
    run_records,
)
from tests.feedserver import FeedServer, Reply
from tests.sitefixture import GZIP, HTML, XML, listing_page, sitemap_index, urlset

GOOD = "openai_news_rss_prefix.xml"
GOOD_ITEMS = 6  # the <item>s of GOOD: every one is issued
LASTMOD = "2026-11-20"
SETTINGS = (
    "-s", "CROVIA_SITEMAP_DEPTH=2",
    "-s", "CROVIA_SITEMAP_FETCHES=2",
    "-s", "CROVIA_MAX_SITEMAP_URLS=10",
    "-s", "CROVIA_MAX_ENTRIES_PER_FEED=20",  # the big page's cards: 20 issued, the rest counted
)  # fmt: skip
FETCH_CAP = "(CROVIA_SITEMAP_FETCHES)"
DEPTH_CAP = "(CROVIA_SITEMAP_DEPTH)"
SELECTORS = {"item": "article.card", "link": "a", "title": "h3"}
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY lol "lol">'
    b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<url><loc>https://lab.example/&lol3;</loc></url></urlset>"
)


@dataclass
class Crawl:
    """What the one crawl of this module left: its process, ledger and server."""

    path: Path
    server: FeedServer
    proc: CompletedProcess[str]
    records: dict[str, dict[str, Any]]  # vendor -> signed body of its fetch record
    run: dict[str, Any]
    big_page: bytes

    def url(self, path: str) -> str:
        return self.server.url(path)

    def issued(self, vendor: str) -> list[str]:
        """The links of the items issued for `vendor`, in leaf order."""
        items = [e for e in envelopes(self.path) if e["body"]["vendor"] == vendor]
        return [item["body"]["spider_record"]["url"] for item in items]

    def parts(self, vendor: str) -> list[dict[str, Any]]:
        return self.records[vendor]["parts"]


def gzip_bomb() -> bytes:
    """A gzipped urlset of more than MAX_UNCOMPRESSED bytes, built 1 MB at a time (about 50 KB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: the gzip container
    head = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    chunk = b"<url><loc>https://lab.example/bomb</loc></url>" * 22_000
    packed = [packer.compress(head)]
    for _ in range(MAX_UNCOMPRESSED // len(chunk) + 1):
        packed.append(packer.compress(chunk))
    packed += [packer.compress(b"</urlset>"), packer.flush()]
    return b"".join(packed)


def cards_page(size: int) -> bytes:
    """A listing page of as many cards of about 1 KB as fit in `size` bytes."""
    head, tail = (
        b'<!doctype html><html><head><meta charset="utf-8"></head><body>',
        b"</body></html>",
    )
    cards, used, n = [], len(head) + len(tail), 0
    while True:
        card = (
            f'<article class="card"><a href="/big/{n}"><h3>Card {n}</h3></a>'
            f"<p>{'w' * 900}</p></article>"
        ).encode()
        if used + len(card) > size:
            return head + b"".join(cards) + tail
        cards.append(card)
        used += len(card)
        n += 1


def page_feed(vendor: str, url: str, **selectors: str) -> str:
    chosen = ", ".join(f'{k} = "{v}"' for k, v in {**SELECTORS, **selectors}.items())
    head = f'[[feeds]]\nvendor = "{vendor}"\nurl = "{url}"\nkind = "page"\n'
    return f"{head}selectors = {{ {chosen} }}\n"


def sitemap_feed(vendor: str, url: str) -> str:
    return f'[[feeds]]\nvendor = "{vendor}"\nurl = "{url}"\nkind = "sitemap"\n'


def script_site(server: FeedServer) -> tuple[list[str], bytes]:
    """Script every hostile source on `server`; their feeds.toml tables and the big page."""
    base = server.base

    def xml(path: str, body: bytes, headers: dict[str, str] = XML) -> str:
        return server.script(path, Reply(200, body, headers))

    def pages(*paths: str) -> bytes:
        return urlset(base, dict.fromkeys(paths, LASTMOD))

    # 1. an index naming itself, and a second index naming the first back
    xml("loop/a.xml", sitemap_index(base, ["/loop/a.xml", "/loop/b.xml", "/loop/urls.xml"]))
    xml("loop/b.xml", sitemap_index(base, ["/loop/a.xml"]))
    xml("loop/urls.xml", pages("/loop/1", "/loop/2", "/loop/3"))
    # 2. indexes nested one deeper than CROVIA_SITEMAP_DEPTH=2
    for level in range(3):
        xml(f"depth/{level}.xml", sitemap_index(base, [f"/depth/{level + 1}.xml"]))
    xml("depth/3.xml", pages("/depth/page"))
    # 3. an index naming five sitemaps, with CROVIA_SITEMAP_FETCHES=2
    xml("count/index.xml", sitemap_index(base, [f"/count/{n}.xml" for n in range(5)]))
    for n in range(5):
        xml(f"count/{n}.xml", pages(f"/count/page/{n}"))
    # 4. a gzip bomb beside a plain sitemap
    xml("bomb/index.xml", sitemap_index(base, ["/bomb/big.xml.gz", "/bomb/ok.xml"]))
    xml("bomb/big.xml.gz", gzip_bomb(), GZIP)
    xml("bomb/ok.xml", pages("/bomb/page"))
    # 5. one URL past the protocol's 50,000 a file
    xml("many.xml", pages(*(f"/many/{n}" for n in range(MAX_URLS + 1))))
    # 6. a billion laughs, as the source and as a sitemap an index names
    xml("laughs/root.xml", LAUGHS)
    xml("laughs/index.xml", sitemap_index(base, ["/laughs/child.xml", "/laughs/ok.xml"]))
    xml("laughs/child.xml", LAUGHS)
    xml("laughs/ok.xml", pages("/laughs/page"))
    # 7. selectors finding nothing (each page its own URL: feeds.toml refuses one twice)
    cards = [(f"/cards/{n}", f"Card {n}", "2026-11-20T10:00:00Z") for n in range(3)]
    no_item = xml("cards/a", listing_page(cards), HTML)
    no_link = xml("cards/b", listing_page(cards), HTML)
    # 8. a page just under the download cap, and one just over it
    big = cards_page(MAX_BYTES - 1)
    big_url = xml("big", big, HTML)
    over_url = server.script("over", Reply(200, lambda: b" " * (MAX_BYTES + 1), HTML))
    tables = [
        sitemap_feed("loop", base + "/loop/a.xml"),
        sitemap_feed("depth", base + "/depth/0.xml"),
        sitemap_feed("count", base + "/count/index.xml"),
        sitemap_feed("bomb", base + "/bomb/index.xml"),
        sitemap_feed("many", base + "/many.xml"),
        sitemap_feed("laughs_root", base + "/laughs/root.xml"),
        sitemap_feed("laughs_child", base + "/laughs/index.xml"),
        page_feed("no_item", no_item, item="article.missing"),
        page_feed("no_link", no_link, link="a.missing"),
        page_feed("big_page", big_url),
        page_feed("over_cap", over_url),
    ]
    return tables, big


@pytest.fixture(scope="module")
def hostile_crawl(module_feed_server, tmp_path_factory) -> Crawl:
    path = tmp_path_factory.mktemp("hostile")
    tables, big = script_site(module_feed_server)
    good = f'[[feeds]]\nvendor = "good"\nurl = "{module_feed_server.url(GOOD)}"\n'
    proc = run_crawl(path, "\n".join([good, *tables]), *SETTINGS)
    records = {r["body"]["vendor"]: r["body"] for r in fetch_records(path)}
    (run,) = run_records(path)
    return Crawl(path, module_feed_server, proc, records, run, big)


def test_the_crawl_loses_no_other_source_and_audits_clean(hostile_crawl):
    crawl = hostile_crawl
    assert crawl.proc.returncode == 0, crawl.proc.stderr[-3000:]
    assert len(crawl.records) == 12  # one fetch record per source, the hostile ones included
    good = crawl.records["good"]
    assert good["outcome"] == "new_body"
    assert (good["entries"]["count"], good["entries"]["unread"]) == (GOOD_ITEMS, 0)
    assert len(crawl.issued("good")) == GOOD_ITEMS
    assert feed_outcome(crawl.run, "good")["new"] == GOOD_ITEMS
    audit = crovia(crawl.path, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_an_index_loop_fetches_each_sitemap_once(hostile_crawl):
    crawl = hostile_crawl
    a, b, urls = (crawl.url(f"loop/{name}") for name in ("a.xml", "b.xml", "urls.xml"))
    parts = crawl.parts("loop")
    assert [part["url"] for part in parts] == [a, b, urls, a]
    assert parts[0] == parts[3] == {"url": a, "loop": True}  # itself, then named back by b
    for path in ("loop/a.xml", "loop/b.xml", "loop/urls.xml"):
        assert len(crawl.server.requests_for(path)) == 1, path
    pages = [crawl.url(f"loop/{n}") for n in (1, 2, 3)]
    assert crawl.issued("loop") == pages  # once each
    entries = crawl.records["loop"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (3, 3, 0)
    assert feed_outcome(crawl.run, "loop")["drop_reasons"] == {}
    # the walk's parts are read again from the kept bodies
    history = crovia(crawl.path, "history", "--url", pages[1], "--vendor", "loop")
    assert history.returncode == 0, history.stdout + history.stderr
    assert "held it" in history.stdout and "cannot tell" not in history.stdout


def test_an_index_past_the_depth_cap_is_not_fetched_and_proves_no_absence(hostile_crawl):
    crawl = hostile_crawl
    parts = crawl.parts("depth")
    assert [part["url"] for part in parts] == [crawl.url(f"depth/{n}.xml") for n in (1, 2, 3)]
    assert "body_sha256" in parts[1] and set(parts[2]) == {"url", "error"}
    assert DEPTH_CAP in parts[2]["error"] and "deeper than 2" in parts[2]["error"]
    assert crawl.server.requests_for("depth/3.xml") == []
    entries = crawl.records["depth"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (0, 1, 1)
    assert feed_outcome(crawl.run, "depth")["drop_reasons"] == {NOT_READ: 1}
    unseen = crawl.url("depth/page")  # named only by the sitemap not read
    absent = crovia(
        crawl.path, "absent", "--url", unseen, "--vendor", "depth", "--at", "2100-01-01"
    )
    assert absent.returncode == 4, absent.stdout + absent.stderr
    assert "cannot tell" in absent.stdout


def test_sitemaps_past_the_fetch_cap_are_named_and_counted_unread(hostile_crawl):
    crawl = hostile_crawl
    parts = crawl.parts("count")
    assert [part["url"] for part in parts] == [crawl.url(f"count/{n}.xml") for n in range(5)]
    assert all(part["status"] == 200 for part in parts[:2])
    for part in parts[2:]:
        assert set(part) == {"url", "error"} and FETCH_CAP in part["error"], part
    assert [len(crawl.server.requests_for(f"count/{n}.xml")) for n in range(5)] == [1, 1, 0, 0, 0]
    entries = crawl.records["count"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (2, 5, 3)
    assert crawl.issued("count") == [crawl.url(f"count/page/{n}") for n in range(2)]
    assert feed_outcome(crawl.run, "count")["drop_reasons"] == {NOT_READ: 3}


def test_a_gzip_bomb_is_kept_refused_and_costs_only_itself(hostile_crawl):
    crawl = hostile_crawl
    bomb, ok = crawl.parts("bomb")
    assert bomb["url"] == crawl.url("bomb/big.xml.gz") and bomb["status"] == 200
    assert bomb["error"] == TOO_LARGE and "52,428,800 bytes uncompressed" in TOO_LARGE
    (sent,) = crawl.server.sent_bodies("bomb/big.xml.gz")
    assert bomb["body_sha256"] == hashlib.sha256(sent).hexdigest()
    assert BodyStore(crawl.path / "ledger").get(bomb["body_sha256"]) == sent  # kept, as fetched
    assert "error" not in ok and crawl.issued("bomb") == [crawl.url("bomb/page")]
    entries = crawl.records["bomb"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (1, 2, 1)
    assert feed_outcome(crawl.run, "bomb")["drop_reasons"] == {NOT_READ: 1}


def test_urls_past_the_protocol_limit_are_counted_unread(hostile_crawl):
    crawl = hostile_crawl
    entries = crawl.records["many"]["entries"]
    expected = {"count": 10, "limit": 10, "over_limit": MAX_URLS - 10, "unread": 1}
    assert {key: entries[key] for key in expected} == expected
    assert entries["in_body"] == MAX_URLS + 1
    assert crawl.issued("many") == [crawl.url(f"many/{n}") for n in range(10)]
    outcome = feed_outcome(crawl.run, "many")
    assert outcome["drop_reasons"][BEYOND_PROTOCOL] == 1
    assert BEYOND_PROTOCOL == "past the sitemap protocol's 50,000 URLs a file"
    assert "1 URL(s) past the sitemap protocol's 50,000 a file" in outcome["parse_error"]


def test_entities_are_refused_whole_never_expanded(hostile_crawl):
    crawl = hostile_crawl
    root = crawl.records["laughs_root"]
    assert (root["outcome"], root["error"]) == ("unreadable_body", DECLARES_ENTITIES)
    assert "entries" not in root and "parts" not in root
    assert feed_outcome(crawl.run, "laughs_root")["error"] == DECLARES_ENTITIES
    child, ok = crawl.parts("laughs_child")
    assert child["url"] == crawl.url("laughs/child.xml") and child["error"] == DECLARES_ENTITIES
    assert "body_sha256" in child and "error" not in ok
    entries = crawl.records["laughs_child"]["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (1, 2, 1)
    assert crawl.issued("laughs_child") == [crawl.url("laughs/page")]
    assert crawl.issued("laughs_root") == []
    assert not any("lol" in url for url in crawl.issued("laughs_child"))


def test_a_selector_finding_nothing_makes_the_page_unreadable_naming_it(hostile_crawl):
    crawl = hostile_crawl
    no_item, no_link = crawl.records["no_item"], crawl.records["no_link"]
    assert no_item["outcome"] == no_link["outcome"] == "unreadable_body"
    assert no_item["error"] == "selector item 'article.missing' found nothing"
    assert no_link["error"] == "selector link 'a.missing' found nothing in any of the 3 items"
    for record in (no_item, no_link):
        assert "entries" not in record and "body_sha256" in record  # the body is kept
    assert no_item["select"] == {"selectors": {**SELECTORS, "item": "article.missing"}}
    assert crawl.issued("no_item") == crawl.issued("no_link") == []
    assert feed_outcome(crawl.run, "no_link")["drop_reasons"] == {UNREADABLE_FEED: 3}
    assert feed_outcome(crawl.run, "no_item")["error"] == no_item["error"]


def test_a_page_under_the_download_cap_is_read_one_over_it_fails(hostile_crawl):
    crawl = hostile_crawl
    cards = crawl.big_page.count(b'<article class="card">')
    assert MAX_BYTES - 2_000 < len(crawl.big_page) < MAX_BYTES and cards > 10_000
    big = crawl.records["big_page"]
    assert big["outcome"] == "new_body", big.get("error")
    assert big["body_sha256"] == hashlib.sha256(crawl.big_page).hexdigest()
    entries = big["entries"]
    assert (entries["count"], entries["in_body"], entries["unread"]) == (20, cards, 0)
    assert entries["over_limit"] == cards - 20
    assert crawl.issued("big_page") == [crawl.url(f"big/{n}") for n in range(20)]
    over = crawl.records["over_cap"]
    assert over["outcome"] == "failed" and "body_sha256" not in over and "entries" not in over
    assert over["error"].startswith("download cancelled (size limit?)")
    assert f"larger than download max size ({MAX_BYTES})" in over["error"]
    assert feed_outcome(crawl.run, "over_cap")["error"] == over["error"]


def test_the_run_record_accounts_for_every_sitemap_not_read(hostile_crawl):
    assert_counts_add_up(hostile_crawl.run)


def test_the_drop_reason_of_a_sitemap_past_its_url_cap_names_that_cap(hostile_crawl):
    reasons = feed_outcome(hostile_crawl.run, "many")["drop_reasons"]
    assert sum(reasons.values()) == MAX_URLS - 10 + 1
    assert any("CROVIA_MAX_SITEMAP_URLS" in reason for reason in reasons), reasons
