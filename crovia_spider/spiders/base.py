"""FeedSpider: the documented base of every spider in the project.

A spider crawls the enabled `[[feeds]]` entries of config/feeds.toml whose `spider` is its name. It
sends one request per feed (conditional when validators are stored), parses each body with
feedparser, makes one FeedEntryItem per entry and yields them in batches (crovia_spider/items.py:
FeedBatch), and records every feed's fetch in the run log
(`self.run`). No hashing, dedupe or classification here: the pipelines do that (docs/design.md).

A new source family is usually just `spider = "NAME"` in feeds.toml (the spider loader makes the
class). A subclass is for when reading must differ: override `entry_item()` (one entry to an
item), or `parse_entries()` for a format of its own (a body to its entries), and name samples of
that format in `fixtures`:

    class LabNotesSpider(FeedSpider):
        name = "lab_notes"
        fixtures = ("lab_notes_sample.jsonl",)

        def parse_entries(self, response):
            for line in response.body.splitlines():
                note = json.loads(line)
                yield {"id": note["id"], "link": note["url"], "title": note["title"]}

Whatever a subclass overrides, the base counts the items the spider yields for a body: they are
the fetch record's entries (their identities, in the order yielded), and `crovia history` /
`crovia absent` read a kept body again with the same spider's code (`read_again`), so the
guarantees of docs/format.md ("fetch records") hold for every spider.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

import scrapy
from scrapy.http import Response
from twisted.python.failure import Failure

from crovia_spider.config.feeds import DEFAULT_KIND, FeedConfig, feeds_for_spider, load_feeds
from crovia_spider.config.settings_check import check_crawler_settings
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.identity import identity
from crovia_spider.feed.own_format import read_own_format
from crovia_spider.feed.parsepool import ParserPool
from crovia_spider.fetching.politeness import apply_politeness, describe_failure
from crovia_spider.items import FeedBatch, FeedEntryItem
from crovia_spider.options import resolve_path, user_agent
from crovia_spider.runs import logfilters
from crovia_spider.runs.feed_state import conditional_headers, load_state
from crovia_spider.runs.runlog import (
    BEYOND_PROTOCOL,
    INVALID_REFERENCE,
    MALFORMED_ENTRY,
    OVER_CAP,
    OVER_URL_CAP,
    TRUNCATED,
    UNREADABLE_FEED,
    RunLog,
    utc_now_micro,
)
from crovia_spider.runs.stopping import FetchStopped
from crovia_spider.spiders.batching import batches
from crovia_spider.spiders.capturing import PageCaptures
from crovia_spider.spiders.fetches import (
    FETCH_RECORDED,
    FeedFetch,
    _header,
    fetch_evidence,
    kept_response,
    record_response,
    response_headers,
    sent_validators,
    signed_entries,
)
from crovia_spider.spiders.names import code_spider_names
from crovia_spider.spiders.oaipmh_walk import OAIPMH_KIND, Harvest, harvest, oai_request
from crovia_spider.spiders.remote import SEQUENCER, WORKER, RemoteRoles, remote_role
from crovia_spider.spiders.sitemap_walk import (
    SITEMAP_KIND,
    Read,
    Walk,
    once_each,
    read_parts,
    sitemap_request,
    walk_sitemaps,
)
from crovia_spider.spiders.watching import WATCH_KIND, watch_start, watched_outcomes
from ledger.records.fetch import (
    ENTRY_COUNTS,
    FAILED,
    NEW_BODY,
    NOT_MODIFIED,
    UNCHANGED_BODY,
    UNREADABLE_BODY,
)

# The kinds of several bodies a crawl (a walk): read under CROVIA_MAX_SITEMAP_URLS, their further
# fetches a fetch record's parts.
WALK_KINDS = (SITEMAP_KIND, OAIPMH_KIND)


class FeedSpider(PageCaptures, RemoteRoles, scrapy.Spider):
    """Crawls the feeds configured for `name`; `-a vendor=IDS` and `-a skip=IDS` narrow them.

    Has no `name` itself, so the base is not a crawlable spider of its own. Any other `-a` is
    refused (ConfigError): a misspelt `-a vendr=x` must not quietly crawl every feed. A subclass
    taking arguments of its own takes them out of `kwargs` before calling this.
    """

    # Samples of the format this spider reads, files of tests/fixtures/feeds/: the project's spider
    # test crawls every spider against its own (tests/spider/test_spiders.py).
    fixtures: tuple[str, ...] = (
        "arxiv_cs_ai_rss2_2026-04-27_trim3.xml",
        "openai_news_rss_prefix.xml",
    )

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
        self.max_sitemap_urls = 50_000
        self.state: dict[str, dict[str, Any]] = {}  # feed_state.json as the crawl began

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """Derive USER_AGENT from CROVIA_USER_AGENT / CROVIA_CONTACT_URL as the run gives them.

        settings.py can only see the environment; here `-s CROVIA_CONTACT_URL=...` counts too. At
        spider priority, so `-s USER_AGENT=...` still wins over both.
        """
        super().update_settings(settings)
        agent = user_agent(settings.get("CROVIA_USER_AGENT"), settings.get("CROVIA_CONTACT_URL"))
        settings.set("USER_AGENT", agent, priority="spider")
        if settings.get("CROVIA_REDIS_ROLE") == WORKER:
            # A cluster's worker signs nothing and opens no ledger: its results go to Redis
            # (crovia_spider/spiders/remote.py), and it captures only the pages its jobs name.
            settings.set("ITEM_PIPELINES", {}, priority="cmdline")
            settings.set("CROVIA_CAPTURE", False, priority="cmdline")

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FeedSpider:
        """Load and validate the feed list before anything else (ConfigError stops the crawl)."""
        logfilters.install()
        try:
            spider = super().from_crawler(crawler, *args, **kwargs)
            checked = check_crawler_settings(crawler.settings)  # every setting, first
            if remote_role(crawler.settings) != WORKER:  # a worker's feeds are its jobs'
                modules = tuple(crawler.settings.getlist("SPIDER_MODULES"))
                feeds = load_feeds(
                    resolve_path(crawler.settings["CROVIA_FEEDS_FILE"]),
                    code_spider_names(modules),
                )
                spider.feeds = feeds_for_spider(feeds, spider.name, spider.vendor, spider.skip)
                if remote_role(crawler.settings):  # watched pages, OAI-PMH: local crawls' own
                    local = (WATCH_KIND, OAIPMH_KIND)
                    spider.feeds = [f for f in spider.feeds if f.kind not in local]
            remote = spider.setup_remote(crawler)
            memory_mb = checked["CROVIA_PARSE_MEMORY_MB"]
            seconds = checked["CROVIA_PARSE_SECONDS"]
        except ConfigError as exc:
            logging.getLogger(cls.name).critical("crawl refused: %s", exc)
            raise
        spider.setup_captures(crawler)
        # A crawl of captures only (`crovia capture`) fetches no feed: its run record lists none.
        fetched = [f for f in spider.feeds if f.kind != WATCH_KIND and not spider.capture_only]
        if not remote:
            spider.run = RunLog(spider.name, [(f.vendor, f.url) for f in fetched])
            spider.run.watched = watched_outcomes(spider.feeds)
        apply_politeness(crawler.settings, spider.politeness_feeds())
        spider.parser = ParserPool(
            crawler.settings.getbool("CROVIA_PARSE_WORKER"), memory_mb, seconds
        )
        spider.max_entries = max(0, crawler.settings.getint("CROVIA_MAX_ENTRIES_PER_FEED", 2000))
        urls = crawler.settings.getint("CROVIA_MAX_SITEMAP_URLS", 50_000)
        spider.max_sitemap_urls = max(0, urls)
        return spider

    def closed(self, reason: str) -> None:
        self.parser.close()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        # Runs after the pipelines opened the ledger (and so hold its lock): the state is current.
        if self.remote_role != WORKER:  # a worker's state came with its jobs
            self.state = load_state(resolve_path(self.settings["CROVIA_LEDGER_DIR"]))
        if self.remote_role == SEQUENCER:  # no fetch: workers' results (spiders/remote.py)
            async for item in self.sequence():
                yield item
            return
        if self.remote_role != WORKER:  # watched pages: items of the feed list, no fetch
            for batch in watch_start(self):
                yield batch
        state = self.state
        callback, errback = self.parse_feed, self.feed_failed
        if self.remote_role == WORKER:
            callback, errback = self.work_feed, self.work_failed
            for request in self.capture_job_requests():  # a capture job's pages
                yield request
        for feed in [] if self.capture_only else self.feeds:
            if feed.kind == WATCH_KIND:
                continue  # captured, never fetched as a feed (spiders/watching.py)
            if feed.kind == SITEMAP_KIND:
                yield sitemap_request(feed.url, feed, callback=callback, errback=errback)
                continue
            if feed.kind == OAIPMH_KIND:  # never conditional: a list of a day's records
                entry = state.get(feed.url)
                yield oai_request(feed, entry, self.settings, callback=callback, errback=errback)
                continue
            headers = conditional_headers(state.get(feed.url))
            yield scrapy.Request(
                feed.url,
                callback=callback,
                errback=errback,
                headers=headers,
                meta={"feed": feed, "handle_httpstatus_list": [304], "sent": headers},
                dont_filter=True,
            )

    def entry_limit(self, feed: FeedConfig) -> int:
        """The entries read of one fetch of `feed` (signed as the record's `entries.limit`)."""
        return self.max_sitemap_urls if feed.kind in WALK_KINDS else self.max_entries

    async def parse_feed(self, response: Response) -> AsyncIterator[FeedBatch]:
        """Record the fetch; on 200, yield the feed's complete entries, an item each, in batches
        (crovia_spider/items.py: Scrapy's cost of an item is paid once a batch).

        The fetch record (an AX.FETCH envelope, sent to the issue stage before the feed's items)
        states what the body held: its entries' identities, in feed order."""
        observed_at = utc_now_micro()  # the response has just arrived; parsing comes after
        feed: FeedConfig = response.meta["feed"]
        outcome = self.run.feeds[feed.vendor]
        record_response(outcome, response)
        if response.status == 304:
            outcome.not_modified = True
            self.record_fetch(self.not_modified(feed, response, observed_at))
            return
        walk = None
        if self.reads_own_format():
            parsed = read_own_format(self.parse_entries(response))
        else:
            headers = response_headers(response)
            parsed = await self.parser.parse(response.body, headers, feed.kind, feed.options)
        if feed.kind == SITEMAP_KIND and not parsed.failed:
            walk = await walk_sitemaps(self, Read(response, parsed, outcome.sha256), feed)
            items, parsed = self.read_walk(walk, feed, observed_at)
        elif feed.kind == OAIPMH_KIND and not parsed.failed:
            walk = await harvest(self, Read(response, parsed, outcome.sha256), feed)
            items, parsed = self.read_walk(walk, feed, observed_at)
        else:
            items = list(self.read_entries(parsed, feed, response, observed_at))
        self.record_fetch(self.received(feed, response, observed_at, parsed, items, walk))
        for batch in batches(items):
            yield batch

    def read_walk(
        self, walk: Walk, feed: FeedConfig, observed_at: str
    ) -> tuple[list[FeedEntryItem], ParsedFeed]:
        """The items of every body a sitemap walk read, in walk order and under the source's
        entry limit, and the walk's counts as one reading (each sitemap not read one unread
        entry: crovia_spider/spiders/sitemap_walk.py). A URL two of its sitemaps name is one
        entry (`once_each`)."""
        limit = self.entry_limit(feed)
        items: list[FeedEntryItem] = []
        whole = ParsedFeed(version=walk.bodies[0].parsed.version)
        for response, parsed, digest in once_each(walk.bodies):
            room = max(0, limit - len(whole.entries))
            items.extend(self.read_entries(parsed, feed, response, observed_at, room, digest))
            whole.entries.extend(parsed.entries)
            whole.invalid_entries += parsed.invalid_entries
            whole.truncated_entries += parsed.truncated_entries
            whole.malformed_entries += parsed.malformed_entries
            whole.beyond_protocol += parsed.beyond_protocol
            whole.excluded += parsed.excluded
            whole.error = whole.error or parsed.error
        whole.malformed_entries += walk.unread_parts
        if isinstance(walk, Harvest) and walk.summary:  # days not listed whole
            whole.error = f"{walk.summary}; {whole.error}" if whole.error else walk.summary
        elif not whole.entries and whole.excluded and feed.kind == SITEMAP_KIND:
            # never a silent "0 new" of a pattern's typo
            picked = f"{whole.excluded} URL(s) in its sitemaps, none picked by include / exclude"
            whole.error = f"{whole.error}; {picked}" if whole.error else picked
        self.run.feeds[feed.vendor].parse_error = whole.error  # the walk's, not its last body's
        return items, whole

    def received(
        self,
        feed: FeedConfig,
        response: Response,
        fetched_at: str,
        parsed: ParsedFeed,
        items: list[FeedEntryItem],
        walk: Walk | None = None,
    ) -> FeedFetch:
        """The fetch record of a body: new or the same as the feed's previous one, and what it
        held: the `items` the spider yields for it (`entries_read`); or unreadable (no entries
        stated) when it yields none of a body its reader could not read. The body is kept, and
        so are those of a sitemap `walk`, each of its further fetches signed as a part."""
        outcome = self.run.feeds[feed.vendor]
        fetch = self._fetch(feed, response.meta.get("sent"), fetched_at)
        fetch.fetch = fetch_evidence(response, outcome.sha256, fetched_at)
        fetch.body_sha256, fetch.body = outcome.sha256, response.body
        fetch.content_type = _header(response, b"Content-Type")
        if parsed.failed and not items:
            fetch.outcome, fetch.error = UNREADABLE_BODY, parsed.error
            return fetch
        kept = {"sha256": outcome.sha256}
        if walk is not None:
            fetch.parts, fetch.part_bodies = walk.parts, walk.part_bodies
            # The same source as last time: every body the same. No validators are stored for
            # a walk (crovia_spider/runs/feed_state.py): its requests are never conditional.
            kept["walk"] = walk.digest()
        if isinstance(walk, Harvest) and walk.through:  # the feed state's, once all is issued
            kept["oai_through"] = walk.through
        previous = self.state.get(feed.url, {}).get("last_body_sha256")
        fetch.outcome = UNCHANGED_BODY if previous == kept.get("walk", kept["sha256"]) else NEW_BODY
        fetch.entries = entries_read(items, parsed, self.entry_limit(feed))
        self.run.bodies[feed.vendor] = {**kept, "entries": fetch.entries}
        return fetch

    def not_modified(self, feed: FeedConfig, response: Response, fetched_at: str) -> FeedFetch:
        """The fetch record of a 304: the validators sent, and the body (and entries) they were
        stored with, which the 304 confirms."""
        fetch = self._fetch(feed, response.meta.get("sent"), fetched_at)
        fetch.outcome = NOT_MODIFIED
        evidence = fetch_evidence(response, "", fetched_at)
        del evidence["body_sha256"]  # a 304 has no body; the one it confirms is body_sha256
        fetch.fetch = evidence
        confirmed = self.state.get(feed.url, {}).get("validated_body") or {}
        fetch.body_sha256 = confirmed.get("sha256", "")
        fetch.entries = confirmed.get("entries")
        return fetch

    def _fetch(self, feed: FeedConfig, sent: dict[str, str] | None, fetched_at: str) -> FeedFetch:
        return FeedFetch(
            spider=self.name,
            vendor=feed.vendor,
            feed_url=feed.url,
            kind="" if feed.kind == DEFAULT_KIND else feed.kind,
            outcome=FAILED,
            fetched_at=fetched_at,
            run_hash=self.run.parent_run_hash,
            sent=sent_validators(sent or {}),
            relay=feed.relay,
            select=feed.options,
        )

    def record_fetch(self, fetch: FeedFetch) -> None:
        """Hand a fetch record to the issue stage (pipelines/issue.py signs it); a cluster's
        worker keeps it for its feed's result (crovia_spider/spiders/remote.py)."""
        if self.remote_role == WORKER:
            self.worker_fetches[fetch.vendor] = fetch
            return
        self.crawler.signals.send_catch_log(signal=FETCH_RECORDED, fetch=fetch)

    def reads_own_format(self) -> bool:
        """True when this spider reads bodies with its own `parse_entries()`, not feedparser."""
        return type(self).parse_entries is not FeedSpider.parse_entries

    def parse_entries(self, response: Response) -> Iterable[Mapping[str, Any]]:
        """Override for a format of one's own: yield the entries of `response`'s body in order,
        each a dict of feedparser's shape (`id`, `link`, `title`, `summary`, `published`,
        `content`), which `entry_item()` makes an item. Read from the body and `response.url`
        only: `crovia absent` reads a kept body again through this same method. Runs in the
        crawl's process, without the parser worker's ceilings."""
        raise NotImplementedError  # never called unless overridden (reads_own_format)

    @classmethod
    def read_again(
        cls,
        body: bytes,
        record_body: Mapping[str, Any],
        final_url: str,
        parse: Any,
        load: Any = None,
    ) -> dict[str, Any]:
        """A kept `body` read again exactly as a crawl of this spider read it, as the fetch record
        whose signed `body` is `record_body` says (its vendor, feed URL, Content-Type and entry
        limit; `final_url`), the feed format with `parse` (the crawl's worker, for a caller that
        has one), the options the record signs (`select`), and the bodies of its `parts` given by
        `load`: `{"identities": [...], "in_body", "over_limit", "unread"}`, or `{"error": why}`.
        """
        feed = _recorded_feed(record_body)
        spider = cls()
        spider.run = RunLog(spider.name, [(feed.vendor, feed.url)])
        spider.max_entries = spider.max_sitemap_urls = record_body["entries"]["limit"]
        response = kept_response(body, final_url, record_body.get("content_type", ""), feed)

        def read(data: bytes, part: Mapping[str, Any]) -> Read:
            kept = kept_response(data, part["final_url"], part.get("content_type", ""), feed)
            parsed = parse(data, response_headers(kept), feed.kind, feed.options)
            return Read(kept, parsed, part["body_sha256"])

        if spider.reads_own_format():
            parsed = read_own_format(spider.parse_entries(response))
        else:
            parsed = parse(body, response_headers(response), feed.kind, feed.options)
        if feed.kind in WALK_KINDS and not parsed.failed:
            walk = Walk(bodies=[Read(response, parsed, record_body.get("body_sha256", ""))])
            try:
                for part in read_parts(record_body.get("parts"), load, read):
                    if part is None or part.parsed.failed:
                        walk.parts.append({"error": "not read"})
                    else:
                        walk.bodies.append(part)
            except ValueError as exc:
                return {"error": str(exc)}
            items, parsed = spider.read_walk(walk, feed, "")
        else:
            items = list(spider.read_entries(parsed, feed, response, ""))
        if parsed.failed and not items:
            return {"error": parsed.error}
        counted = entries_read(items, parsed, spider.entry_limit(feed))
        identities = [item.identity or identity(item) for item in items]
        return {"identities": identities, **{k: counted[k] for k in ENTRY_COUNTS}}

    def read_entries(
        self,
        parsed: ParsedFeed,
        feed: FeedConfig,
        response: Response,
        observed_at: str,
        limit: int | None = None,
        digest: str | None = None,
    ) -> Iterator[FeedEntryItem]:
        """Count what the body held, and yield the item of each entry that can be read.

        A feed that could not be read is the feed's recorded failure (`error`), its entries counted
        as lost; entries past CROVIA_MAX_ENTRIES_PER_FEED, and any one entry that cannot be read
        (whatever it raised), are dropped alone and counted with their reason. `limit` is the
        entries this body may still give (default: the feed's entry limit), `digest` its sha256
        (default: that of the feed's own response, in the run record).
        """
        vendor, outcome = feed.vendor, self.run.feeds[feed.vendor]
        outcome.parse_error = parsed.error
        if parsed.failed:
            outcome.error = parsed.error
        limit = self.entry_limit(feed) if limit is None else limit
        entries, over = parsed.entries[:limit], parsed.entries[limit:]
        outcome.items_seen += (
            len(parsed.entries)
            + parsed.truncated_entries
            + parsed.lost_entries
            + parsed.invalid_entries
            + parsed.malformed_entries
            + parsed.beyond_protocol
        )
        for reason, count in (
            (TRUNCATED, parsed.truncated_entries),
            (INVALID_REFERENCE, parsed.invalid_entries),
            (MALFORMED_ENTRY, parsed.malformed_entries),
            (BEYOND_PROTOCOL, parsed.beyond_protocol),
            (UNREADABLE_FEED, parsed.lost_entries),
            (OVER_URL_CAP if feed.kind in WALK_KINDS else OVER_CAP, len(over)),
        ):
            if count:
                self.run.drop(vendor, reason, count)
        fetch = fetch_evidence(response, digest or outcome.sha256, observed_at)
        for entry in entries:
            try:
                item = self.entry_item(entry, feed, response, observed_at)
            except Exception as exc:  # one bad entry must not cost the others
                self._entry_dropped(vendor, entry, exc)
                continue
            if item.cut:  # the run log's lock, only for an entry that has something to count
                self.run.cut(vendor, item.cut)
            item.fetch, item.body = fetch, response.body
            item.identity = identity(item)
            yield item

    def _entry_dropped(self, vendor: str, entry: dict[str, Any], exc: Exception) -> None:
        kind = type(exc).__name__
        reason = f"unreadable entry ({kind})"
        self.run.drop(vendor, reason)
        what = (entry.get("id") or entry.get("link") or "") if isinstance(entry, dict) else entry
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
        if failure.check(FetchStopped):
            return  # never asked for: the run record says "interrupted"
            # (crovia_spider/runs/stopping.py)
        feed: FeedConfig = failure.request.meta["feed"]
        outcome = self.run.feeds[feed.vendor]
        response = getattr(failure.value, "response", None)
        if response is not None:
            record_response(outcome, response)
        outcome.error = describe_failure(failure)
        # Reported once, with its reason, in the closing summary (pipelines/issue.py).
        self.logger.debug("feed %s (%s) failed: %s", feed.vendor, feed.url, outcome.error)
        record = self._fetch(feed, failure.request.meta.get("sent"), utc_now_micro())
        record.error = outcome.error
        if response is not None:  # an answer came, but not one to read (an HTTP error)
            evidence = fetch_evidence(response, "", record.fetched_at)
            del evidence["body_sha256"]  # an error page is not kept
            record.fetch = evidence
        self.record_fetch(record)


def entries_read(items: list[FeedEntryItem], parsed: ParsedFeed, limit: int) -> dict[str, Any]:
    """A fetch record's `entries` (docs/format.md) of a body for which the spider yielded `items`
    (each given its identity, the one its AX.OBS envelope signs) from what the reader gave:
    `parsed` and the entry `limit`."""
    for item in items:
        item.identity = item.identity or identity(item)
    return signed_entries([item.identity for item in items], parsed, limit)


def _recorded_feed(record_body: Mapping[str, Any]) -> FeedConfig:
    """The feed a fetch record names, read as it says (its kind, and the options it signs)."""
    select = record_body.get("select")
    select = select if isinstance(select, Mapping) else {}
    selectors = select.get("selectors")
    return FeedConfig(
        vendor=record_body["vendor"],
        url=record_body["feed_url"],
        kind=record_body.get("kind", DEFAULT_KIND),
        include=tuple(select.get("include") or ()),
        exclude=tuple(select.get("exclude") or ()),
        selectors=tuple(selectors.items()) if isinstance(selectors, Mapping) else (),
    )
