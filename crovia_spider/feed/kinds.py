"""One reader per source kind, behind one interface: a body and its headers to a ParsedFeed.

A `[[feeds]]` entry's `kind` (crovia_spider/config/feeds.py, KINDS) names its reader: "feed" is
RSS, Atom and RDF through feedparser (body.py), "jsonfeed" is JSON Feed (jsonfeed.py). The spider,
the parser worker and its ceilings, the fetch record's counts and the pipelines are written once
for every kind: only the reading differs. `read_body` is what the worker runs (ceilings.py).
"""

from __future__ import annotations

from collections.abc import Callable

from crovia_spider.config.feeds import DEFAULT_KIND
from crovia_spider.feed.body import ParsedFeed, parse_body
from crovia_spider.feed.jsonfeed import parse_jsonfeed

READERS: dict[str, Callable[[bytes, dict[str, str]], ParsedFeed]] = {
    "feed": parse_body,
    "jsonfeed": parse_jsonfeed,
}


def read_body(body: bytes, headers: dict[str, str], kind: str = DEFAULT_KIND) -> ParsedFeed:
    """The entries of `body`, read as `kind` says. Never raises: an unknown kind (a fetch record
    naming a kind this code does not read) is a `failed` ParsedFeed saying so."""
    reader = READERS.get(kind)
    if reader is None:
        return ParsedFeed(error=f"unreadable body: no reader of source kind {kind!r}", failed=True)
    return reader(body, headers)
