"""A vendor's own site, crawled by kind on 127.0.0.1 (tests/sitefixture.py): a robots.txt naming a
sitemap index of two gzipped sitemaps (one a news sitemap), an HTML listing page, a JSON Feed.

Each kind issues exactly its items; a second crawl issues none and signs one fetch record per
source; a changed lastmod is a new version chained to the old; `include` / `exclude` pick exactly
the news pages; `crovia history` and `crovia absent` read a sitemap walk's kept bodies again; the
audit checks every body a walk kept, and names a changed one."""

from __future__ import annotations

import gzip
import json

from ledger.records.fetch import entries_digest
from ledger.store import BodyStore
from tests.crawl import crovia, envelopes, fetch_records, run_crawl
from tests.feedserver import Reply
from tests.sitefixture import (
    GZIP,
    LASTMOD,
    NEWS_PATHS,
    NEWS_TITLE,
    PAGE_SELECTORS,
    urlset,
    vendor_site,
)


def site_feeds(urls: dict[str, str]) -> str:
    selectors = ", ".join(f"{k} = {json.dumps(v)}" for k, v in PAGE_SELECTORS.items())
    return (
        f'[[feeds]]\nvendor = "lab"\nurl = "{urls["robots.txt"]}"\nkind = "sitemap"\n'
        'include = ["/news/"]\nexclude = ["/tag/"]\n\n'
        f'[[feeds]]\nvendor = "lab_news"\nurl = "{urls["news"]}"\nkind = "page"\n'
        f"selectors = {{ {selectors} }}\n\n"
        f'[[feeds]]\nvendor = "lab_notes"\nurl = "{urls["feed.json"]}"\nkind = "jsonfeed"\n'
    )


def by_vendor(tmp_path) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for item in envelopes(tmp_path):
        found.setdefault(item["body"]["vendor"], []).append(item)
    return found


def test_each_kind_issues_its_items_once(tmp_path, feed_server):
    urls = vendor_site(feed_server)
    base = feed_server.base
    first = run_crawl(tmp_path, site_feeds(urls))
    assert first.returncode == 0, first.stderr[-3000:]
    items = by_vendor(tmp_path)
    sitemap_urls = [item["body"]["spider_record"]["url"] for item in items["lab"]]
    assert sitemap_urls == [base + path for path in NEWS_PATHS]  # include/exclude: news only
    titles = [item["body"]["spider_record"]["title"] for item in items["lab"]]
    assert titles[2] == NEWS_TITLE  # the news sitemap's own title
    page_urls = sorted(item["body"]["spider_record"]["url"] for item in items["lab_news"])
    assert page_urls == sorted(base + path for path in NEWS_PATHS)  # absolute, not <base href>
    assert len(items["lab_notes"]) == 2
    records = {record["body"]["vendor"]: record["body"] for record in fetch_records(tmp_path)}
    walk = records["lab"]
    assert walk["kind"] == "sitemap" and walk["select"] == {
        "include": ["/news/"],
        "exclude": ["/tag/"],
    }
    assert [part["url"] for part in walk["parts"]] == [
        urls["sitemap_index.xml"], urls["sitemaps/pages.xml.gz"], urls["sitemaps/news.xml.gz"]
    ]  # fmt: skip
    assert walk["entries"]["count"] == 3 and walk["entries"]["unread"] == 0
    assert walk["entries"]["identities_sha256"] == entries_digest(
        [item["object"]["identity"] for item in items["lab"]]
    )
    assert records["lab_news"]["select"] == {"selectors": PAGE_SELECTORS}
    # every item of the walk names the body it came from, and that body is kept
    store = BodyStore(tmp_path / "ledger")
    for item in items["lab"]:
        fetch = item["object"]["fetch"]
        assert fetch["final_url"].endswith(".xml.gz")
        assert store.get(fetch["body_sha256"])

    second = run_crawl(tmp_path, site_feeds(urls))
    assert second.returncode == 0, second.stderr[-3000:]
    assert sum(len(v) for v in by_vendor(tmp_path).values()) == 8  # nothing issued again
    latest = fetch_records(tmp_path)[3:]
    assert sorted(record["body"]["vendor"] for record in latest) == ["lab", "lab_news", "lab_notes"]
    assert {record["body"]["outcome"] for record in latest} == {"unchanged_body"}

    # history and absent read the walk's kept bodies again (the parts, from the ledger)
    news = base + NEWS_PATHS[0]
    history = crovia(tmp_path, "history", "--url", news, "--vendor", "lab")
    assert history.returncode == 0, history.stdout + history.stderr
    assert "held it" in history.stdout and "cannot tell" not in history.stdout
    present = crovia(tmp_path, "absent", "--url", news, "--vendor", "lab", "--at", "2100-01-01")
    assert present.returncode == 1, present.stdout + present.stderr
    about = base + "/about"  # left out by include: never the source's item
    gone = crovia(tmp_path, "absent", "--url", about, "--vendor", "lab", "--at", "2100-01-01")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert crovia(tmp_path, "audit").returncode == 0


def test_a_changed_lastmod_is_a_new_version(tmp_path, feed_server):
    urls = vendor_site(feed_server)
    assert run_crawl(tmp_path, site_feeds(urls)).returncode == 0
    before = {item["body"]["spider_record"]["url"]: item for item in by_vendor(tmp_path)["lab"]}
    changed = feed_server.base + NEWS_PATHS[0]
    vendor_site(feed_server, lastmod={NEWS_PATHS[0]: "2026-12-01T08:00:00+00:00"})
    again = run_crawl(tmp_path, site_feeds(urls))
    assert again.returncode == 0, again.stderr[-3000:]
    after = by_vendor(tmp_path)["lab"]
    assert len(after) == 4
    update = after[-1]
    assert update["body"]["spider_record"]["url"] == changed
    assert update["predecessors"] == [before[changed]["axiom_id"]]
    assert fetch_records(tmp_path)[-1]["body"]["outcome"] == "new_body"
    assert LASTMOD not in update["body"]["spider_record"]["published"]


def test_a_changed_byte_in_a_kept_sitemap_fails_the_audit_naming_it(tmp_path, feed_server):
    urls = vendor_site(feed_server)
    assert run_crawl(tmp_path, site_feeds(urls)).returncode == 0
    walk = next(r for r in fetch_records(tmp_path) if r["body"]["vendor"] == "lab")
    index = walk["body"]["parts"][0]["body_sha256"]  # the index: no item cites it, the walk does
    path = BodyStore(tmp_path / "ledger").path(index)
    data = bytearray(gzip.decompress(path.read_bytes()))
    data[-20] ^= 1
    path.write_bytes(gzip.compress(bytes(data)))
    audit = crovia(tmp_path, "audit")
    assert audit.returncode == 1
    assert index in audit.stdout + audit.stderr and walk["axiom_id"] in audit.stdout + audit.stderr
    assert "part 0" in audit.stdout + audit.stderr


def test_a_sitemap_not_read_makes_the_walk_incomplete(tmp_path, feed_server):
    urls = vendor_site(feed_server)
    feed_server.script("sitemaps/news.xml.gz", Reply(status=503))
    proc = run_crawl(tmp_path, site_feeds(urls), "-s", "RETRY_ENABLED=0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    walk = next(r for r in fetch_records(tmp_path) if r["body"]["vendor"] == "lab")["body"]
    assert walk["parts"][2] == {
        "url": urls["sitemaps/news.xml.gz"], "final_url": urls["sitemaps/news.xml.gz"],
        "error": "HTTP 503",
    }  # fmt: skip
    assert (walk["entries"]["count"], walk["entries"]["unread"]) == (2, 1)
    # an item of the sitemap not read: cannot tell, never "absent"
    news = feed_server.base + NEWS_PATHS[2]
    absent = crovia(tmp_path, "absent", "--url", news, "--vendor", "lab", "--at", "2100-01-01")
    assert absent.returncode == 4, absent.stdout + absent.stderr
    assert crovia(tmp_path, "audit").returncode == 0
    # a gzipped sitemap served with the fixture's type reads as one (nothing else differs)
    assert GZIP["Content-Type"] == "application/x-gzip" and urlset
