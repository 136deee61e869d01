"""A sitemap walk at its edges, each found in review and each a crawl on 127.0.0.1: nothing here
may end in a false "absent", a lost fetch record or a lost source.

- markup lxml's recover mode reads past may have held URLs: the body is not read whole;
- two walks sharing an index body are two readings (history and absent follow each record);
- an index naming more sitemaps than a record has parts, or one Scrapy cannot request, still
  gives the source its signed fetch record, and the other sitemaps are read;
- "cannot tell" says whether the kept sitemaps (gzipped ones too) mention the item;
- a URL two sitemaps name is one item, with the news sitemap's title;
- a walk stores no validators; an include that picks nothing is said, never a silent "0 new";
- the bytes one walk holds are bounded; a sitemap redirected to one read is not read twice.
"""

from __future__ import annotations

import gzip
import json

from tests.crawl import crovia, envelopes, fetch_records, run_crawl, run_records
from tests.feedserver import Reply
from tests.sitefixture import (
    GZIP,
    NEWS_NS,
    SITEMAP_NS,
    XML,
    news_sitemap,
    sitemap_index,
    urlset,
)

CANNOT_TELL = 4


def walk_record(tmp_path, vendor: str = "lab") -> dict:
    return [r for r in fetch_records(tmp_path) if r["body"]["vendor"] == vendor][-1]["body"]


def absent(tmp_path, url: str):
    return crovia(tmp_path, "absent", "--url", url, "--vendor", "lab", "--at", "2100-01-01")


def test_markup_read_past_is_never_a_whole_reading(tmp_path, feed_server):
    base = feed_server.base
    row = lambda path: f"<url><loc>{base}{path}</loc></url>"  # noqa: E731
    body = f'<?xml version="1.0"?><urlset xmlns="{SITEMAP_NS}">{row("/news/1")}<<<>>>'
    feed_server.script(
        "s.xml", Reply(body=(body + row("/news/3") + "</urlset>").encode(), headers=XML)
    )
    assert (
        run_crawl(
            tmp_path, [{"vendor": "lab", "url": base + "/s.xml", "kind": "sitemap"}]
        ).returncode
        == 0
    )
    assert walk_record(tmp_path)["entries"]["unread"] >= 1
    answer = absent(tmp_path, base + "/news/3")  # in the kept body: never "absent"
    assert answer.returncode == CANNOT_TELL, answer.stdout + answer.stderr


def test_two_walks_sharing_an_index_are_two_readings(tmp_path, feed_server):
    base = feed_server.base
    feeds = [{"vendor": "lab", "url": base + "/index.xml", "kind": "sitemap"}]
    feed_server.script("index.xml", Reply(body=sitemap_index(base, ["/a.xml"]), headers=XML))
    feed_server.script(
        "a.xml", Reply(body=urlset(base, {"/news/1": "d1", "/news/2": "d1"}), headers=XML)
    )
    assert run_crawl(tmp_path, feeds).returncode == 0
    feed_server.script(
        "a.xml", Reply(body=urlset(base, {"/news/1": "d1", "/news/3": "d2"}), headers=XML)
    )
    assert run_crawl(tmp_path, feeds).returncode == 0
    first, second = (r["body"] for r in fetch_records(tmp_path))
    assert first["body_sha256"] == second["body_sha256"]  # the same index body
    assert second["outcome"] == "new_body"  # a sitemap it names changed
    gone = absent(tmp_path, base + "/news/2")
    assert gone.returncode == 0, gone.stdout + gone.stderr  # absent at the second walk
    history = crovia(tmp_path, "history", "--url", base + "/news/1")
    assert history.returncode == 0, history.stdout + history.stderr


def test_an_index_naming_too_many_or_unrequestable_sitemaps_keeps_its_record(tmp_path, feed_server):
    base = feed_server.base
    many = [f"/s{n}.xml" for n in range(1_200)]
    feed_server.script("many.xml", Reply(body=sitemap_index(base, ["/a.xml", *many]), headers=XML))
    odd = (
        f'<?xml version="1.0"?><sitemapindex xmlns="{SITEMAP_NS}">'
        f"<sitemap><loc>http://[::]n/</loc></sitemap><sitemap><loc>{base}/a.xml</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    feed_server.script("odd.xml", Reply(body=odd, headers=XML))
    feed_server.script("a.xml", Reply(body=urlset(base, {"/news/1": "d1"}), headers=XML))
    feeds = [
        {"vendor": "lab", "url": base + "/many.xml", "kind": "sitemap"},
        {"vendor": "odd", "url": base + "/odd.xml", "kind": "sitemap"},
    ]
    proc = run_crawl(tmp_path, feeds, "-s", "CROVIA_SITEMAP_FETCHES=2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lab = walk_record(tmp_path, "lab")
    assert 100 < len(lab["parts"]) < 1000  # as many as a ledger line holds
    last = lab["parts"][-1]["error"]
    assert f"nor the {1_201 - len(lab['parts'])} sitemaps named after it: a fetch record" in last
    assert lab["entries"]["count"] == 1 and lab["entries"]["unread"] == len(lab["parts"]) - 1
    assert absent(tmp_path, base + "/news/2").returncode == CANNOT_TELL
    odd_record = walk_record(tmp_path, "odd")
    assert odd_record["parts"][0]["url"] == "http://[::]n/" and odd_record["parts"][0]["error"]
    assert odd_record["entries"]["count"] == 1  # a.xml read all the same
    issued = {(e["body"]["vendor"], e["body"]["spider_record"]["url"]) for e in envelopes(tmp_path)}
    assert issued == {("lab", base + "/news/1"), ("odd", base + "/news/1")}
    assert crovia(tmp_path, "audit").returncode == 0


def test_cannot_tell_says_whether_the_kept_sitemaps_mention_the_item(tmp_path, feed_server):
    base = feed_server.base
    feed_server.script("index.xml", Reply(body=sitemap_index(base, ["/a.xml.gz"]), headers=XML))
    pages = gzip.compress(urlset(base, {"/news/1": "d1", "/news/2": "d1"}), mtime=0)
    feed_server.script("a.xml.gz", Reply(body=pages, headers=GZIP))
    feeds = [{"vendor": "lab", "url": base + "/index.xml", "kind": "sitemap"}]
    assert run_crawl(tmp_path, feeds, "-s", "CROVIA_MAX_SITEMAP_URLS=1").returncode == 0
    answer = absent(tmp_path, base + "/news/2")  # past the limit: cannot tell
    assert answer.returncode == CANNOT_TELL
    assert "the body mentions it" in answer.stdout, answer.stdout


def test_a_url_two_sitemaps_name_is_one_item_with_the_news_title(tmp_path, feed_server):
    base = feed_server.base
    index = sitemap_index(base, ["/pages.xml", "/news.xml"])
    feed_server.script("index.xml", Reply(body=index, headers=XML))
    feed_server.script(
        "pages.xml", Reply(body=urlset(base, {"/news/1": "d1", "/about": "d1"}), headers=XML)
    )
    news = news_sitemap(base, "/news/1", "Launch day", "2026-11-21T09:00:00+00:00")
    feed_server.script("news.xml", Reply(body=news, headers=XML))
    feeds = [{"vendor": "lab", "url": base + "/index.xml", "kind": "sitemap"}]
    for _ in range(2):
        assert run_crawl(tmp_path, feeds).returncode == 0
    issued = [e["body"]["spider_record"] for e in envelopes(tmp_path)]
    assert sorted((r["url"], r["title"]) for r in issued) == [
        (base + "/about", base + "/about"), (base + "/news/1", "Launch day")
    ]  # fmt: skip
    assert [r["body"]["entries"]["unread"] for r in fetch_records(tmp_path)] == [0, 0]
    assert NEWS_NS  # the news sitemap's namespace, as the fixture writes it


def test_a_walk_stores_no_validators_and_says_when_include_picks_nothing(tmp_path, feed_server):
    base = feed_server.base
    body = urlset(base, {"/about": "d1", "/careers": "d1"})
    feed_server.script("s.xml", Reply(body=body, headers={**XML, "ETag": '"v1"'}))
    feeds = (
        f'[[feeds]]\nvendor = "lab"\nurl = "{base}/s.xml"\nkind = "sitemap"\ninclude = ["/nwes/"]\n'
    )
    assert run_crawl(tmp_path, feeds).returncode == 0
    state = json.loads((tmp_path / "ledger" / "feeds_state.json").read_text())
    entry = state[base + "/s.xml"]
    assert not {"etag", "last_modified", "validated_body"} & set(entry)
    (feed,) = run_records(tmp_path)[-1]["feeds"]
    assert "2 URL(s) in its sitemaps, none picked by include / exclude" in feed["parse_error"]


def test_the_bytes_a_walk_holds_are_bounded_and_a_redirect_is_not_read_twice(tmp_path, feed_server):
    base = feed_server.base
    index = sitemap_index(base, ["/a.xml", "/moved.xml", "/b.xml", "/c.xml"])
    feed_server.script("index.xml", Reply(body=index, headers=XML))
    feed_server.script("a.xml", Reply(body=urlset(base, {"/news/1": "d1"}), headers=XML))
    feed_server.script("moved.xml", Reply(status=301, headers={"Location": base + "/a.xml"}))
    big = urlset(base, {f"/news/b{n}": "d1" for n in range(2_000)})
    feed_server.script("b.xml", Reply(body=big, headers=XML))
    feed_server.script("c.xml", Reply(body=urlset(base, {"/news/c": "d1"}), headers=XML))
    feeds = [{"vendor": "lab", "url": base + "/index.xml", "kind": "sitemap"}]
    proc = run_crawl(tmp_path, feeds, "-s", f"CROVIA_SITEMAP_BYTES={len(big)}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    parts = walk_record(tmp_path)["parts"]
    assert parts[1] == {"url": base + "/moved.xml", "loop": True}
    assert "body_sha256" in parts[2]  # b.xml: fetched, the budget now spent
    assert parts[3]["error"].endswith("(CROVIA_SITEMAP_BYTES)")
    assert len(feed_server.requests_for("c.xml")) == 0


def test_headers_of_16_kb_and_an_index_of_thousands_still_fit_one_record(tmp_path, feed_server):
    """A server may send headers of 16 KB each (Twisted's line limit): with an index naming
    thousands of sitemaps they made a fetch record past a ledger line's 65,535 bytes, which the
    ledger refuses with the whole batch, and the crawl issued nothing more. A validator or
    Content-Type over 1,024 characters is read as absent; the record fits; the other feed's items
    are issued."""
    base = feed_server.base
    big = "x" * 15_000
    many = sitemap_index(base, [f"/s{n}-{'y' * 900}.xml" for n in range(1_500)])
    hostile = {
        "Content-Type": "application/xml; p=" + big,
        "ETag": f'"{big}"',
        "Last-Modified": big,
    }
    feed_server.script("many.xml", Reply(body=many, headers=hostile))
    feeds = [
        {"vendor": "lab", "url": base + "/many.xml", "kind": "sitemap"},
        {"vendor": "good", "url": feed_server.url("openai_news_rss_prefix.xml")},
    ]
    proc = run_crawl(tmp_path, feeds, "-s", "CROVIA_SITEMAP_FETCHES=1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lab = walk_record(tmp_path, "lab")
    assert "content_type" not in lab and lab["parts"][-1]["error"]
    assert {e["body"]["vendor"] for e in envelopes(tmp_path)} == {"good"}
    assert len(envelopes(tmp_path)) == 6  # every item of the good feed
    line = max(
        len(x) for x in (tmp_path / "ledger" / "axiom_ledger.jsonl").read_bytes().split(b"\n")
    )
    assert line < 65_535
    assert crovia(tmp_path, "audit").returncode == 0
