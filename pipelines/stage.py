"""What every stage shares: built from the crawler, it reaches the spider's run log through it."""

from __future__ import annotations

from typing import Self

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from crovia_spider.items import FeedEntryItem
from crovia_spider.runs.runlog import RunLog

# Enough of an identity to find the item again; a hostile guid cannot make a log line long.
LOG_CHARS = 200


class Stage:
    """Base of the pipeline stages: `self.crawler`, `self.run`, and `drop()` that counts."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    @property
    def run(self) -> RunLog:
        return self.crawler.spider.run

    def drop(self, item: FeedEntryItem, reason: str) -> DropItem:
        """Count `item` as dropped for `reason` (run record, stats); return a DropItem whose
        message is one short line (vendor, reason, identity), logged at DEBUG."""
        self.run.drop(item.vendor, reason)
        self.crawler.stats.inc_value(f"crovia/dropped/{reason}")
        what = item.target_id or item.link or item.guid or item.title
        return DropItem(f"{item.vendor}: {reason}: {short(what)}", log_level="DEBUG")


def short(text: str, limit: int = LOG_CHARS) -> str:
    """`text` for one log line: its repr (controls escaped), cut to about `limit` characters."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
