"""Fuzz harness: a fetched OAI-PMH ListRecords page (arXivRaw), through `parse_oaipmh`, the
harvest's day rule and `entry_item`.

`parse_oaipmh` documents that it never raises (a page refused or unreadable is a `failed`
OaiPage), and a record it returns must become an arXiv item without error, its id and version
those of its OAI identifier. The harvest's `complete_lists` must take any page too, listed or not.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.entries import entry_item
    from crovia_spider.feed.oaipmh import parse_oaipmh
    from crovia_spider.spiders.oaipmh_walk import complete_lists

URL = "https://export.arxiv.org/oai2"
FEED = FeedConfig(vendor="arxiv_oai_cs", url=URL, kind="oaipmh", oai_set="cs stat")
LIST = f"{URL}?verb=ListRecords&metadataPrefix=arXivRaw&set=cs&from=2026-12-01&until=2026-12-01"
DOCUMENTED = ()
SLACK = 64 << 10
# An entry is a dict of eight fields, about 1.2 KB with its strings, for a record of ~250 bytes
# (`<record><header>...</header><metadata><arXivRaw>...`): about 5x; lxml's tree of one record at
# a time besides. 20x, as the sitemap reader is held to.
AMPLIFICATION = 20


def target(data: bytes) -> None:
    page = parse_oaipmh(data, {"content-location": URL}, {})
    if page.failed and page.entries:
        raise AssertionError("a failed page gave records")
    complete_lists([(LIST, page), (f"{URL}?verb=ListRecords&resumptionToken=x", page)])
    for entry in page.entries:
        item = entry_item(
            entry,
            FEED,
            spider="fuzz",
            base_url=URL,
            status=200,
            observed_at="2026-01-01T00:00:00Z",
            run_hash="0" * 64,
        )
        if item.arxiv is None or item.arxiv["id"] not in entry["id"]:
            raise AssertionError(f"record {entry['id']!r} read as {item.arxiv!r}")


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
