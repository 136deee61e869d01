"""Fuzz harness: a fetched listing page, through `parse_listing` and `entry_item`.

`parse_listing` documents that it never raises (a page it cannot read is a `failed` ParsedFeed),
and an entry it returns must become an item without error, for any page. The response headers and
the selectors vary with the input's length, so the charset paths, and links and titles taken from
elements, text and attributes, are all reached.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.entries import entry_item
    from crovia_spider.feed.listing import parse_listing

FEED = FeedConfig(vendor="lab", url="https://lab.example.org/news/")
FINAL_URL = "https://www.lab.example.org/news/index.html"  # redirected: not the configured URL
HEADERS = (
    {"content-location": FINAL_URL, "content-type": "text/html; charset=utf-8"},
    {"content-location": FINAL_URL, "content-type": "text/html; charset=iso-8859-1"},
    {"content-location": FINAL_URL, "Content-Type": "text/html; charset=utf-16"},
    {"content-location": FINAL_URL},
)
OPTIONS = (
    {"selectors": {"item": "article", "link": "a", "title": "h2, h3", "date": "time"}},
    {
        "selectors": {
            "item": "li.post, div.card",
            "link": "a::attr(href)",
            "title": "a::text",
            "date": "time::attr(datetime)",
        },
        "include": ["/news/"],
        "exclude": ["draft"],
    },
    {"selectors": {"item": "a", "link": "a", "title": "a"}},
)
DOCUMENTED = ()
SLACK = 64 << 10
# lxml's proxy of an item element is about 80 bytes and `<a>` is 3: a page of tiny items costs
# about 27x its size while its items are read. 40x still catches anything that grows faster.
AMPLIFICATION = 40


def target(data: bytes) -> None:
    options = OPTIONS[len(data) % len(OPTIONS)]
    parsed = parse_listing(data, HEADERS[len(data) // len(OPTIONS) % len(HEADERS)], options)
    for entry in parsed.entries:
        entry_item(
            entry,
            FEED,
            spider="fuzz",
            base_url=FINAL_URL,
            status=200,
            observed_at="2026-01-01T00:00:00Z",
            run_hash="0" * 64,
        )


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
