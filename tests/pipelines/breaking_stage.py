"""A stage a test adds to a real crawl's ITEM_PIPELINES: it breaks (a bug) on entries whose
title says "Boom", and on nothing else (tests/pipelines/test_batches.py)."""

from __future__ import annotations

from crovia_spider.items import FeedEntryItem
from pipelines.stage import Stage


class BreakingStage(Stage):
    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        if "Boom" in item.title:
            raise RuntimeError("a bug in a stage")
        return item
