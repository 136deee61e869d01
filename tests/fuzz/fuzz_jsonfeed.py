"""Fuzz harness: a fetched JSON Feed body, through `parse_jsonfeed` and `entry_item`.

`parse_jsonfeed` documents that it never raises (a body that is not a readable JSON Feed is a
`failed` ParsedFeed), and an entry it returns must become an item without error, for any feed.
"""

from __future__ import annotations

import sys

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.entries import entry_item
    from crovia_spider.feed.jsonfeed import parse_jsonfeed

FEED = FeedConfig(vendor="lab", url="https://notes.example.org/feed.json", kind="jsonfeed")
DOCUMENTED = ()
SLACK = 64 << 10
# Python's objects for JSON's smallest values: `{},` is 3 bytes and a dict of 64 bytes plus its
# slot in a list, and the pairs list object_pairs_hook is handed besides: about 30x at worst.
# 40x still catches anything that grows faster than the body.
AMPLIFICATION = 40


def target(data: bytes) -> None:
    parsed = parse_jsonfeed(data)
    for entry in parsed.entries:
        entry_item(
            entry,
            FEED,
            spider="fuzz",
            base_url=FEED.url,
            status=200,
            observed_at="2026-01-01T00:00:00Z",
            run_hash="0" * 64,
        )


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
