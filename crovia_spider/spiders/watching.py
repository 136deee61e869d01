"""Watched pages from the spider's side: sources of kind "watch" (docs/spider.md, "Watching pages").

A watch source lists pages (`urls`) that matter for themselves: a usage policy, terms of service,
a model card. Each URL is an item of its own, observed once from the feed list (no feed is
fetched: the item says so, `source_status` 0 and its own URL as `source_url`), then captured
through the capture path like any item's page (fetch policy, robots.txt, politeness, size cap,
main text, AX.CAPTURE records chained per page): at the crawl that first observes it, and then at
every crawl once `every` (default CROVIA_WATCH_EVERY) has passed since its last capture. What a
capture finds becomes change events (ledger/changes/).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crovia_spider.capture.book import CaptureBook, book_of
from crovia_spider.config.feeds import WATCH_KIND, FeedConfig, every_seconds
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.identity import identity
from crovia_spider.items import FeedEntryItem
from crovia_spider.options import env_default, resolve_path
from crovia_spider.runs.runlog import FeedOutcome, utc_now_micro
from crovia_spider.spiders.batching import batches

# The summary every watched page's item carries: constant, so the item is issued once (its
# fingerprint never changes) and its page is what changes.
WATCH_SUMMARY = (
    "A page watched for itself (a source of kind watch in the feed list): no feed was fetched;"
    " its captures are its record."
)
logger = logging.getLogger(__name__)
NO_FETCH_STATUS = 0
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # spider_record.source_status of a watched page: nothing was fetched


def watched(feeds: Iterable[FeedConfig]) -> list[FeedConfig]:
    """The sources of kind watch among `feeds`."""
    return [feed for feed in feeds if feed.kind == WATCH_KIND]


def watched_outcomes(feeds: Iterable[FeedConfig]) -> dict[str, FeedOutcome]:
    """The run record's lines of the watch sources (RunLog.watched): their items counted, no
    fetch claimed."""
    return {feed.vendor: FeedOutcome(feed.vendor, feed.url) for feed in watched(feeds)}


def watch_items(feeds: Iterable[FeedConfig], spider: str, observed_at: str, run_hash: str) -> list:
    """One item per watched URL, read as a feed entry would be (plain text, safe link, bounded
    fields, identity): dedupe lets through only those never issued."""
    items: list[FeedEntryItem] = []
    for feed in watched(feeds):
        for url in feed.urls:
            entry = {"id": url, "link": url, "title": url, "summary": WATCH_SUMMARY}
            item = entry_item(
                entry,
                feed,
                spider=spider,
                base_url=url,
                status=NO_FETCH_STATUS,
                observed_at=observed_at,
                run_hash=run_hash,
            )
            item.source_url = url  # each page is its own source: no feed was fetched
            item.identity = identity(item)
            items.append(item)
    return items


def schedule_watched(
    book: CaptureBook | None,
    feeds: Iterable[FeedConfig],
    now: str,
    default_every: str,
    directory: Path | None = None,
) -> int:
    """Set when each watched page in the capture book is due: `every` after its last capture
    (at once when it has none yet), whatever the book's growing schedule would say; the book
    is a cache of the ledger, so this is worked out again at every crawl. Returns the pages due
    now."""
    if book is None:
        return 0
    every = {feed.vendor: every_seconds(feed.every or default_every) for feed in watched(feeds)}
    urls = {url for feed in watched(feeds) for url in feed.urls}
    moment = now[:19] + "Z"
    # A second before now: the book compares times as text, and "...:04.5Z" sorts before "...:04Z".
    at_once = (_parse(moment) - timedelta(seconds=1)).strftime(_FORMAT)
    due = 0
    for page in book.pages.values():
        if page.vendor not in every or page.url not in urls:
            continue
        last = _last_capture_time(page, directory) if page.last else ""
        if last:
            page.next_due = (_parse(last) + timedelta(seconds=every[page.vendor])).strftime(_FORMAT)
        else:
            page.next_due = at_once
        due += page.next_due <= moment
    return due


def _last_capture_time(page: Any, directory: Path | None) -> str:
    """When the page was last captured: the book's own note when it keeps one, else the time
    its last capture record (`page.last`) signs, read through the ledger's index."""
    noted = getattr(page, "last_at", "")
    if noted or directory is None:
        return noted
    from ledger.exceptions import LedgerError
    from ledger.store import Ledger

    try:
        with Ledger.open(directory) as ledger:
            body = ledger.envelope_of(page.last).get("body") or {}
    except (LedgerError, OSError) as exc:
        logger.warning("last capture of %s not read (%s): captured now", page.url, exc)
        return ""
    captured = body.get("captured_at")
    return captured if isinstance(captured, str) else ""


def _parse(moment: str) -> datetime:
    return datetime.fromisoformat(moment[:19]).replace(tzinfo=UTC)


def watch_start(spider: Any) -> list[Any]:
    """At a crawl's start (crovia_spider/spiders/base.py): the batches of the watched pages'
    items, and each watched page already followed made due by its own `every`."""
    sources = watched(spider.feeds)
    if not sources:
        return []
    now = utc_now_micro()
    default = str(spider.settings.get("CROVIA_WATCH_EVERY") or env_default("CROVIA_WATCH_EVERY"))
    try:
        every_seconds(default)
    except ValueError:
        raise ConfigError(
            f"CROVIA_WATCH_EVERY is {default!r}: it takes an interval such as 1h"
        ) from None
    book = book_of(spider.crawler) if spider.capture_vendors else None
    directory = resolve_path(spider.settings["CROVIA_LEDGER_DIR"])
    due = schedule_watched(book, sources, now, default, directory)
    items = watch_items(sources, spider.name, now, spider.run.parent_run_hash)
    logger.info("%d watched pages; %d followed ones due now", len(items), due)
    return list(batches(items))
