"""FeedSpider: the documented base of every spider in the project.

A spider crawls the enabled `[[feeds]]` entries of config/feeds.toml whose `spider` is its name. It
sends one request per feed (conditional when validators are stored), parses each body with
feedparser and yields one FeedEntryItem per entry, and records every feed's fetch in the run log
(`self.run`). No hashing, dedupe or classification here: the pipelines do that (docs/design.md).

A new source family is usually just `spider = "NAME"` in feeds.toml (the spider loader makes the
class). A subclass is for when parsing must differ: override `entry_item()`:

    class LabNotesSpider(FeedSpider):
        name = "lab_notes"
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from crovia_spider import logfilters
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.parsepool import ParserPool
from crovia_spider.feed_state import conditional_headers, load_state
from crovia_spider.feeds_config import FeedConfig, feeds_for_spider, load_feeds
from crovia_spider.items import FeedEntryItem
from crovia_spider.options import resolve_path, user_agent
from crovia_spider.politeness import apply_politeness, describe_failure
from crovia_spider.runlog import (
    INVALID_REFERENCE,
    OVER_CAP,
    TRUNCATED,
    UNREADABLE_FEED,
    FeedOutcome,
    RunLog,
    utc_now_micro,
)


class FeedSpider(scrapy.Spider):
    """Crawls the feeds configured for `name`; `-a vendor=IDS` and `-a skip=IDS` narrow them.

    Has no `name` itself, so the base is not a crawlable spider of its own. Any other `-a` is
    refused (ConfigError): a misspelt `-a vendr=x` must not quietly crawl every feed. A subclass
    taking arguments of its own takes them out of `kwargs` before calling this.
    """

    def __init__(
        self, *args: Any, vendor: str | None = None, skip: str | None = None, **kwargs: Any
    ) -> None:
        if kwargs:
            unknown = ", ".join(f"-a {name}=..." for name in sorted(kwargs))
            raise ConfigError(
                f"unknown spider argument {unknown}; allowed: -a vendor=IDS, -a skip=IDS"
            )
        super().__init__(*args)
        self.vendor = vendor
        self.skip = skip
        self.feeds: list[FeedConfig] = []
        self.run: RunLog
        self.parser: ParserPool
        self.max_entries = 2000

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """Derive USER_AGENT from CROVIA_USER_AGENT / CROVIA_CONTACT_URL as the run gives them.

        settings.py can only see the environment; here `-s CROVIA_CONTACT_URL=...` counts too. At
        spider priority, so `-s USER_AGENT=...` still wins over both.
        """
        super().update_settings(settings)
        agent = user_agent(settings.get("CROVIA_USER_AGENT"), settings.get("CROVIA_CONTACT_URL"))
        settings.set("USER_AGENT", agent, priority="spider")

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FeedSpider:
        """Load and validate the feed list before anything else (ConfigError stops the crawl)."""
        logfilters.install()
        try:
            spider = super().from_crawler(crawler, *args, **kwargs)
            feeds = load_feeds(resolve_path(crawler.settings["CROVIA_FEEDS_FILE"]))
            spider.feeds = feeds_for_spider(feeds, spider.name, spider.vendor, spider.skip)
        except ConfigError as exc:
            logging.getLogger(cls.name).critical("crawl refused: %s", exc)
            raise
        spider.run = RunLog(spider.name, [(f.vendor, f.url) for f in spider.feeds])
        apply_politeness(crawler.settings, spider.feeds)
        spider.parser = ParserPool(crawler.settings.getbool("CROVIA_PARSE_WORKER"))
        spider.max_entries = max(0, crawler.settings.getint("CROVIA_MAX_ENTRIES_PER_FEED", 2000))
        return spider

    def closed(self, reason: str) -> None:
        self.parser.close()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        # Runs after the pipelines opened the ledger (and so hold its lock): the state is current.
        state = load_state(resolve_path(self.settings["CROVIA_LEDGER_DIR"]))
        for feed in self.feeds:
            yield scrapy.Request(
                feed.url,
                callback=self.parse_feed,
                errback=self.feed_failed,
                headers=conditional_headers(state.get(feed.url)),
                meta={"feed": feed, "handle_httpstatus_list": [304]},
                dont_filter=True,
            )

    async def parse_feed(self, response: Response) -> AsyncIterator[FeedEntryItem]:
        """Record the fetch; on 200, yield one item per complete entry of the feed."""
        observed_at = utc_now_micro()  # the response has just arrived; parsing comes after
        feed: FeedConfig = response.meta["feed"]
        outcome = self.run.feeds[feed.vendor]
        record_response(outcome, response)
        if response.status == 304:
            outcome.not_modified = True
            return
        parsed = await self.parser.parse(response.body, response_headers(response))
        for item in self.read_entries(parsed, feed, response, observed_at):
            yield item

    def read_entries(
        self, parsed: ParsedFeed, feed: FeedConfig, response: Response, observed_at: str
    ) -> Iterator[FeedEntryItem]:
        """Count what the body held, and yield the item of each entry that can be read.

        A feed that could not be read is the feed's recorded failure (`error`), its entries counted
        as lost; entries past CROVIA_MAX_ENTRIES_PER_FEED, and any one entry that cannot be read
        (whatever it raised), are dropped alone and counted with their reason.
        """
        vendor, outcome = feed.vendor, self.run.feeds[feed.vendor]
        outcome.parse_error = parsed.error
        if parsed.failed:
            outcome.error = parsed.error
        entries, over = parsed.entries[: self.max_entries], parsed.entries[self.max_entries :]
        outcome.items_seen += (
            len(parsed.entries)
            + parsed.truncated_entries
            + parsed.lost_entries
            + parsed.invalid_entries
        )
        for reason, count in (
            (TRUNCATED, parsed.truncated_entries),
            (INVALID_REFERENCE, parsed.invalid_entries),
            (UNREADABLE_FEED, parsed.lost_entries),
            (OVER_CAP, len(over)),
        ):
            if count:
                self.run.drop(vendor, reason, count)
        fetch = fetch_evidence(response, outcome.sha256, observed_at)
        for entry in entries:
            try:
                item = self.entry_item(entry, feed, response, observed_at)
            except Exception as exc:  # one bad entry must not cost the others
                self._entry_dropped(vendor, entry, exc)
                continue
            self.run.cut(vendor, item.cut)
            item.fetch, item.body = fetch, response.body
            yield item

    def _entry_dropped(self, vendor: str, entry: dict[str, Any], exc: Exception) -> None:
        kind = type(exc).__name__
        reason = f"unreadable entry ({kind})"
        self.run.drop(vendor, reason)
        what = entry.get("id") or entry.get("link") or ""
        self.logger.debug("dropped %s: %s: %.200r (%.200s)", vendor, reason, what, exc)

    def entry_item(
        self, entry: dict[str, Any], feed: FeedConfig, response: Response, observed_at: str
    ) -> FeedEntryItem:
        """The item of one feedparser entry; override to read a source's own fields."""
        return entry_item(
            entry,
            feed,
            spider=self.name,
            base_url=response.url,
            status=response.status,
            observed_at=observed_at,
            run_hash=self.run.parent_run_hash,
        )

    def feed_failed(self, failure: Failure) -> None:
        """Record why a feed gave nothing; the crawl goes on with the others."""
        feed: FeedConfig = failure.request.meta["feed"]
        outcome = self.run.feeds[feed.vendor]
        response = getattr(failure.value, "response", None)
        if response is not None:
            record_response(outcome, response)
        outcome.error = describe_failure(failure)
        # Reported once, with its reason, in the closing summary (pipelines/issue.py).
        self.logger.debug("feed %s (%s) failed: %s", feed.vendor, feed.url, outcome.error)


def record_response(outcome: FeedOutcome, response: Response) -> None:
    """Copy what the run record keeps of a response: final URL, status, size, digest, validators."""
    outcome.final_url = response.url
    outcome.status = response.status
    outcome.bytes = len(response.body)
    outcome.sha256 = hashlib.sha256(response.body).hexdigest()
    outcome.etag = _header(response, b"ETag")
    outcome.last_modified = _header(response, b"Last-Modified")


def fetch_evidence(response: Response, body_sha256: str, fetched_at: str) -> dict[str, Any]:
    """What every envelope of this response signs as `object.fetch`: the URL after redirects, the
    status, the sha256 of the body as parsed (after transfer and content decoding), when it
    arrived, and `etag` / `last_modified` only if the response sent them (absent, not empty)."""
    evidence: dict[str, Any] = {
        "body_sha256": body_sha256,
        "fetched_at": fetched_at,
        "final_url": response.url,
        "status": response.status,
    }
    for key, header in (("etag", b"ETag"), ("last_modified", b"Last-Modified")):
        if value := _header(response, header):
            evidence[key] = value
    return evidence


def response_headers(response: Response) -> dict[str, str]:
    """Lower-cased headers for feedparser, with the final URL as base for relative links."""
    headers = {
        key.decode("latin-1").lower(): values[-1].decode("latin-1")
        for key, values in response.headers.items()
        if values
    }
    headers["content-location"] = response.url
    return headers


def _header(response: Response, name: bytes) -> str:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else ""
