"""One reader per source kind, behind one interface: a body and its headers to a ParsedFeed.

A `[[feeds]]` entry's `kind` (crovia_spider/config/feeds.py, KINDS) names its reader: "feed" is
RSS, Atom and RDF through feedparser (body.py), "jsonfeed" is JSON Feed (jsonfeed.py), "sitemap" a
sitemap, sitemap index or robots.txt (sitemap.py; the spider fetches the sitemaps an index names:
crovia_spider/spiders/sitemap_walk.py), "page" an HTML listing page read with CSS selectors
(listing.py), "oaipmh" one ListRecords page of arXiv's OAI-PMH interface (oaipmh.py; the spider
follows its resumption tokens: crovia_spider/spiders/oaipmh_walk.py). The spider,
the parser worker and its ceilings, the fetch record's counts and the pipelines are written once
for every kind: only the reading differs. `read_body` is what the worker runs (ceilings.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from crovia_spider.config.feeds import DEFAULT_KIND
from crovia_spider.feed.body import ParsedFeed, parse_body
from crovia_spider.feed.jsonfeed import parse_jsonfeed

# A reader takes the body, the headers it is read with (Content-Type, and the final URL as
# Content-Location) and the source's options (FeedConfig.options: a sitemap's include and exclude
# patterns, a listing page's selectors; {} for the kinds that take none).
Reader = Callable[[bytes, dict[str, str], Mapping[str, Any]], ParsedFeed]
READERS: dict[str, Reader] = {
    "feed": lambda body, headers, options: parse_body(body, headers),
    "jsonfeed": lambda body, headers, options: parse_jsonfeed(body, headers),
    "sitemap": lambda body, headers, options: _sitemap()(body, headers, options),
    "page": lambda body, headers, options: _listing()(body, headers, options),
    "oaipmh": lambda body, headers, options: _oaipmh()(body, headers, options),
}


# The sitemap reader imports Scrapy (its sitemap module) and the listing reader parsel: imported
# when first needed, so the parser worker of a crawl of feeds starts without them.
def _sitemap() -> Reader:
    from crovia_spider.feed.sitemap import parse_sitemap

    return parse_sitemap


def _listing() -> Reader:
    from crovia_spider.feed.listing import parse_listing

    return parse_listing


def _oaipmh() -> Reader:
    from crovia_spider.feed.oaipmh import parse_oaipmh

    return parse_oaipmh


def read_body(
    body: bytes,
    headers: dict[str, str],
    kind: str = DEFAULT_KIND,
    options: Mapping[str, Any] | None = None,
) -> ParsedFeed:
    """The entries of `body`, read as `kind` says with the source's `options`. Never raises: an
    unknown kind (a fetch record naming a kind this code does not read) is a `failed` ParsedFeed
    saying so."""
    reader = READERS.get(kind)
    if reader is None:
        return ParsedFeed(error=f"unreadable body: no reader of source kind {kind!r}", failed=True)
    return reader(body, headers, options or {})
