"""What every stage shares: built from the crawler, it reaches the spider's run log through it.

A stage is given a batch of one body's entries (crovia_spider/items.py: FeedBatch) or, from a
caller of its own, one entry. `process_entry()` is its work on one entry; `process_item()` runs it
over a batch's entries in order and leaves out each one it drops, which is counted (run record,
stats) and logged as Scrapy logs a dropped item: one short line at the drop's level, made only when
the crawl logs that level. An entry that breaks a stage (a bug) costs that entry only: logged at
ERROR with its traceback and counted as dropped with the error, as an item's error was.
"""

from __future__ import annotations

import logging
from typing import Any, Self

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from crovia_spider.items import FeedBatch, FeedEntryItem
from crovia_spider.runs.logformatter import crawl_log_level, drop_level, item_name
from crovia_spider.runs.runlog import RunLog

logger = logging.getLogger("scrapy.core.scraper")  # where Scrapy logs an item's drop and error

# Enough of an identity to find the item again; a hostile guid cannot make a log line long.
LOG_CHARS = 200


class Stage:
    """Base of the pipeline stages: `self.crawler`, `self.run`, and `drop()` that counts."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.log_level = logging.DEBUG if crawler is None else crawl_log_level(crawler.settings)

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
                self.dropped(drop)
            except Exception as exc:
                self.failed(entry, exc)
        item.entries = kept
        return item

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        """This stage's work on one entry; raise DropItem (`drop()`) to leave it out."""
        raise NotImplementedError

    def dropped(self, drop: DropItem) -> None:
        """Log an entry's drop (already counted) as Scrapy logs an item's: one line, made only
        at a level the crawl logs."""
        level = drop_level(drop)
        if level >= self.log_level:
            logger.log(level, "Dropped: %s", str(drop)[:400])

    def failed(self, entry: FeedEntryItem, exc: Exception) -> None:
        """An entry broke the stage: logged with the traceback, counted as dropped with the
        error; the batch's other entries go on."""
        logger.error("Error processing %s", item_name(entry), exc_info=exc)
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
