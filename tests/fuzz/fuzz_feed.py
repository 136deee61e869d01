"""Fuzz harness: a fetched feed body, through `parse_body` and `entry_item` (crovia_spider/feed/).

`parse_body` documents that it never raises (a bad body is a `failed` ParsedFeed), and an entry it
returns must become an item without error, for an arXiv feed and any other. The response headers
vary with the input's length, so the charset and content-type paths are reached too.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.body import parse_body
    from crovia_spider.feed.entries import entry_item

HEADERS = (
    {"content-type": "application/rss+xml"},
    {"content-type": "application/atom+xml; charset=iso-8859-1"},
    {"Content-Type": "text/xml; charset=utf-16"},
    {"content-type": "text/html; charset=utf-8"},
    {},
)
FEEDS = (
    FeedConfig(vendor="arxiv", url="https://rss.arxiv.org/rss/cs.AI"),
    FeedConfig(vendor="openai", url="https://openai.com/news/rss.xml"),
)
DOCUMENTED = ()
SLACK = 64 << 10  # a parse of a 300-byte feed peaks near 32 KiB: feedparser's own state
# feedparser keeps a dict of dicts per entry, about 1.5 KB: a feed of tiny entries costs up to
# ~37x its size (docs/fuzzing.md, finding F1, open). 40x still catches anything worse than that.
STRICT = 40
# A body expat refuses goes to feedparser's loose parser, which costs up to ~190x (a long tag in
# its regular expressions, unclosed tags: finding F9). The parser worker's memory ceiling bounds
# what that costs a crawl; 256x still catches anything that grows faster than the body.
LOOSE = 256
MEMORY_EVERY = 8  # tracing allocations slows feedparser eightfold: measure one input in 8
_LAST = {"loose": False}


def AMPLIFICATION(data: bytes) -> int:  # the harness reads this name
    """The bound for the input `target` last parsed: which parser read it."""
    return LOOSE if _LAST["loose"] else STRICT


def target(data: bytes) -> None:
    parsed = parse_body(data, HEADERS[len(data) % len(HEADERS)])
    _LAST["loose"] = parsed.failed or "SAXParseException" in parsed.error
    for entry in parsed.entries:
        for feed in FEEDS:
            entry_item(
                entry,
                feed,
                spider="fuzz",
                base_url=feed.url,
                status=200,
                observed_at="2026-01-01T00:00:00Z",
                run_hash="0" * 64,
            )


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
