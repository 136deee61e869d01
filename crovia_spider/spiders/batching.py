"""A body's items in batches (crovia_spider/items.py: FeedBatch), as the spider yields them."""

from __future__ import annotations

from crovia_spider.feed.identity import identity
from crovia_spider.items import FeedBatch, FeedEntryItem

# Entries in one batch at most: a sitemap of 50,000 URLs still leaves the reactor free between
# batches, while a batch's Scrapy overhead is shared by enough entries to vanish.
BATCH_ENTRIES = 256


def batches(items: list[FeedEntryItem], size: int = BATCH_ENTRIES) -> list[FeedBatch]:
    """`items` in order as batches of at most `size`, a new one begun at an identity already in
    the current one (the spider's, made here for an item that has none yet)."""
    out: list[FeedBatch] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    current: list[FeedEntryItem] = []
    for item in items:
        item.identity = item.identity or identity(item)
        key = tuple(sorted(item.identity.items()))  # as the ledger's digest of it: key order aside
        if len(current) >= size or key in seen:
            out.append(FeedBatch(current[0].vendor, current))
            current, seen = [], set()
        current.append(item)
        seen.add(key)
    if current:
        out.append(FeedBatch(current[0].vendor, current))
    return out
