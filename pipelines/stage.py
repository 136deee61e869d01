"""What every stage shares: built from the crawler, it reaches the spider's run log through it.

A stage is given a batch of one body's entries (crovia_spider/items.py: FeedBatch) or, from a
caller of its own, one entry. `process_entry()` is its work on one entry; `process_item()` runs it
over a batch's entries in order and leaves out each one it drops, which is counted (run record,
stats) and logged by the crawl's LogFormatter as Scrapy logs a dropped item. An entry that breaks a
stage (a bug) costs that entry only: logged as Scrapy logs an item's error, with its traceback, and
counted as dropped with the error.
"""

from __future__ import annotations

import logging
from typing import Any, Self

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.utils.log import logformatter_adapter

from crovia_spider.items import FeedBatch, FeedEntryItem
from crovia_spider.runs.runlog import RunLog

logger = logging.getLogger("scrapy.core.scraper")  # where Scrapy logs an item's drop and error

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

    def process_item(self, item: Any) -> Any:
        """A batch with the entries this stage kept, or one entry processed (DropItem if not)."""
        if type(item) is not FeedBatch:
            return self.process_entry(item)
        kept = []
        for entry in item.entries:
            try:
                kept.append(self.process_entry(entry))
            except DropItem as drop:
                self.dropped(entry, drop)
            except Exception as exc:
                self.failed(entry, exc)
        item.entries = kept
        return item

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        """This stage's work on one entry; raise DropItem (`drop()`) to leave it out."""
        raise NotImplementedError

    def dropped(self, entry: FeedEntryItem, drop: DropItem) -> None:
        """Log an entry's drop (already counted) as Scrapy's scraper logs an item's, through the
        crawl's LogFormatter (nothing below the crawl's log level is made)."""
        spider = self.crawler.spider
        logkws = self.crawler.logformatter.dropped(entry, drop, None, spider)
        if logkws is not None:
            logger.log(*logformatter_adapter(logkws), extra={"spider": spider, "item": entry})

    def failed(self, entry: FeedEntryItem, exc: Exception) -> None:
        """An entry broke the stage: logged with the traceback as Scrapy logs an item's error,
        counted as dropped with the error; the batch's other entries go on."""
        spider = self.crawler.spider
        logkws = self.crawler.logformatter.item_error(entry, exc, None, spider)
        extra = {"spider": spider, "item": entry}
        logger.log(*logformatter_adapter(logkws), extra=extra, exc_info=exc)
        self.run.drop(entry.vendor, f"internal error: {type(exc).__name__}")

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
