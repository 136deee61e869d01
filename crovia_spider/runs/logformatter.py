"""Log lines about items that stay one short line: never the whole item.

Scrapy's default formatter writes every dropped item, whole, at WARNING: a crawl of 2,000 small
feeds wrote a 970 KB log in 10 seconds, nearly all of it items dropped as unchanged. Here a drop is
one DEBUG line (the DropItem's message: vendor, reason, identity, cut short by pipelines/stage.py),
unless the exception asks for another level; a scraped item is one DEBUG line naming it; an item
that broke a stage is one ERROR line naming its vendor and identity (Scrapy adds the traceback).

A line below the crawl's LOG_LEVEL is not made at all (Scrapy skips a None): a crawl at the
default level would otherwise build a log record for every item only to throw it away, which
cost as much as a pipeline stage.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import logformatter

from crovia_spider.items import FeedBatch, FeedEntryItem

_LIMIT = 200


def _name(item: Any) -> str:
    """An item in one short line: an entry's vendor and identity, a batch's vendor and size."""
    if isinstance(item, FeedEntryItem):
        what = item.target_id or item.link or item.guid or item.title
        return f"{item.vendor}: {what!r}"[:_LIMIT]
    if isinstance(item, FeedBatch):
        return f"{item.vendor}: {len(item.entries)} entries"[:_LIMIT]
    return type(item).__name__


def _crawl_log_level(settings: Any) -> int:
    """The crawl's LOG_LEVEL as a number (DEBUG when it is unset or unknown)."""
    level = settings.get("LOG_LEVEL") or logging.DEBUG
    if isinstance(level, str):
        level = logging.getLevelName(level.upper())
    return level if isinstance(level, int) else logging.DEBUG


def _drop_level(exception: BaseException) -> int:
    """The level a drop asks to be logged at (DropItem's `log_level`), DEBUG by default."""
    level = getattr(exception, "log_level", None) or logging.DEBUG
    if isinstance(level, str):
        level = getattr(logging, level.upper(), logging.DEBUG)
    return level if isinstance(level, int) else logging.DEBUG


class LogFormatter(logformatter.LogFormatter):
    """Scrapy's LogFormatter with bounded item lines (see the module docstring)."""

    def __init__(self, level: int = logging.DEBUG) -> None:
        super().__init__()
        self.level = level  # the crawl's LOG_LEVEL: a line below it is not made

    @classmethod
    def from_crawler(cls, crawler: Any) -> LogFormatter:
        return cls(_crawl_log_level(crawler.settings))

    def scraped(
        self, item: Any, response: Any, spider: Any
    ) -> logformatter.LogFormatterResult | None:
        if self.level > logging.DEBUG:
            return None
        args = {"item": _name(item)}
        return {"level": logging.DEBUG, "msg": "Scraped %(item)s", "args": args}

    def dropped(
        self, item: Any, exception: BaseException, response: Any, spider: Any
    ) -> logformatter.LogFormatterResult | None:
        level = _drop_level(exception)
        if level < self.level:
            return None
        message = str(exception)[: _LIMIT * 2]
        return {"level": level, "msg": "Dropped: %(exception)s", "args": {"exception": message}}

    def item_error(
        self, item: Any, exception: BaseException, response: Any, spider: Any
    ) -> logformatter.LogFormatterResult:
        args = {"item": _name(item)}
        return {"level": logging.ERROR, "msg": "Error processing %(item)s", "args": args}
