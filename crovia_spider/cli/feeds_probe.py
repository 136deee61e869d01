"""The crawls behind `crovia feeds add` and `crovia feeds try`, run in-process with the project's
settings, so every request takes the crawler's own fetch path: the fetch policy on every hop,
robots.txt, per-host politeness, the size cap and the retries (crovia_spider/fetching/), and every
body is read in the parser worker under its ceilings.

- `DiscoverSpider` fetches one address and says which sources it finds there: the address read as
  a feed, a JSON Feed or a sitemap; the feeds an HTML page names in `<link rel="alternate">`
  (each fetched once and read); the sitemaps the site's robots.txt names.
- `trial_spider(cls)` is a project spider (`vendor_press`, or any FeedSpider) whose fetch records
  and items are kept instead of signed: a `try` is the crawl's own code path, the sitemap walk
  included, with the issue stage and the rest of the pipelines left out. It sends no validators
  (the crawl's feed state is not read), so it always reads a body.

Nothing here opens the ledger or writes under its directory.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import scrapy
from scrapy.http import Response, TextResponse
from scrapy.settings import Settings

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.parsepool import ParserPool
from crovia_spider.fetching.politeness import apply_politeness
from crovia_spider.spiders.base import FeedSpider, response_headers

T = TypeVar("T")
# <link rel="alternate" type=...> of an HTML page: the kind that reads the feed it names.
ALTERNATE_TYPES = {
    "application/rss+xml": "feed",
    "application/atom+xml": "feed",
    "application/feed+json": "jsonfeed",
    "application/json": "jsonfeed",
}
HIDDEN = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))  # character categories dropped from a title
TITLE_CHARS = 200
MAX_ALTERNATES = 10  # feeds one page may name that are fetched; a page naming more is odd


@dataclass
class Candidate:
    """A source found at an address: its kind, URL, a title if it has one, and who named it."""

    kind: str
    url: str
    named_by: str
    title: str = ""


@dataclass
class Discovery:
    """What `DiscoverSpider` found, and every address it tried with what came of it."""

    candidates: list[Candidate] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    html: bool = False  # the address is an HTML page (a listing page, perhaps)


@dataclass
class Trial:
    """One source read as a crawl reads it: the items it would issue and the fetch's counts."""

    feed: FeedConfig
    items: list[Any] = field(default_factory=list)
    entries: dict[str, Any] = field(default_factory=dict)  # the fetch record's `entries`
    excluded: int = 0
    error: str = ""
    final_url: str = ""
    reasons: list[str] = field(default_factory=list)  # the error, and each unread part's

    @property
    def read_nothing(self) -> bool:
        """No items, and an error or entries left unread: the source gave nothing to read."""
        return not self.items and bool(self.error or self.entries.get("unread", 0))


def project_settings(overrides: dict[str, Any]) -> Settings:
    """The crawl's settings (crovia_spider/settings.py) with `overrides`, and no item pipeline:
    nothing is issued, signed or written to the ledger."""
    settings = Settings()
    settings.setmodule("crovia_spider.settings", priority="project")
    settings.set("ITEM_PIPELINES", {}, priority="cmdline")
    for name, value in overrides.items():
        settings.set(name, value, priority="cmdline")
    return settings


def run_crawls(settings: Settings, plan: Callable[[Any], Awaitable[T]]) -> T:
    """Run `plan(process)` (it awaits `process.crawl(...)`, one crawl after another) in Scrapy's
    reactor, and return what it returns or raise what it raised."""
    from scrapy.crawler import AsyncCrawlerProcess

    process = AsyncCrawlerProcess(settings)
    outcome: dict[str, Any] = {}

    async def go() -> None:
        from twisted.internet import reactor

        try:
            outcome["value"] = await plan(process)
        except BaseException as exc:  # raised again below, outside the reactor
            outcome["error"] = exc
        finally:
            reactor.stop()

    from twisted.internet import reactor

    reactor.callWhenRunning(lambda: asyncio.ensure_future(go()))
    process.start(stop_after_crawl=False)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class DiscoverSpider(scrapy.Spider):
    """Fetches `url` and finds the sources there (see the module docstring) into `found`."""

    name = "feeds_add"

    def __init__(self, url: str, found: Discovery, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        self.found = found
        # The address the user gave is the configured one: its host and port may be internal
        # (a feed on 127.0.0.1), any other hop is held to the fetch policy.
        self.source = FeedConfig(vendor="feeds_add", url=url)
        self.feeds = [self.source]
        self.parser: ParserPool

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> DiscoverSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        apply_politeness(crawler.settings, spider.feeds)
        spider.parser = ParserPool(
            crawler.settings.getbool("CROVIA_PARSE_WORKER"),
            crawler.settings.getint("CROVIA_PARSE_MEMORY_MB"),
            crawler.settings.getfloat("CROVIA_PARSE_SECONDS"),
        )
        return spider

    def closed(self, reason: str) -> None:
        self.parser.close()

    async def start(self):
        yield self._request(
            self.url,
            callback=self.parse_start,
            errback=self.start_failed,
            # A 404 page: the site's robots.txt still. Not handle_httpstatus_all, which would
            # switch redirects off (http to https, a bare host to www, /blog to /blog/).
            meta={"handle_httpstatus_list": list(range(400, 600))},
        )

    def _request(
        self, url: str, meta: dict[str, Any] | None = None, **kwargs: Any
    ) -> scrapy.Request:
        meta = {"feed": self.source, **(meta or {})}
        return scrapy.Request(url, meta=meta, dont_filter=True, **kwargs)

    def start_failed(self, failure: Any) -> None:
        from crovia_spider.fetching.politeness import describe_failure

        self.found.tried.append(f"{self.url}: {describe_failure(failure)}")

    async def parse_start(self, response: Response):
        if response.status != 200:
            self.found.tried.append(f"{self.url}: HTTP {response.status}")
        elif not await self._recognise(response, self.url, "the address itself"):
            self.found.tried.append(f"{self.url}: {_what(response)}, no feed nor sitemap")
        if response.status == 200 and _is_html(response):
            self.found.html = True
            for url, kind, title in alternates(response)[:MAX_ALTERNATES]:
                fetched = await self._download(url)
                if fetched is not None:
                    named = f'<link rel="alternate"> of {self.url}'
                    if not await self._recognise(fetched, url, named, (kind,), title):
                        self.found.tried.append(f"{url}: named as a feed, but not one")
        robots = urljoin(self.url, "/robots.txt")
        if robots != self.url:
            fetched = await self._download(robots)
            named = "the site's robots.txt"
            if fetched is not None and not await self._recognise(
                fetched, robots, named, ("sitemap",)
            ):
                self.found.tried.append(f"{robots}: names no sitemap")
        return
        yield  # an async generator with nothing to yield: this spider only looks

    async def _download(self, url: str) -> Response | None:
        """`url` through the downloader (every middleware); None, saying why, without a 200."""
        try:
            response = await self.crawler.engine.download_async(self._request(url))
        except Exception as exc:  # a refusal, a timeout: this address's failure alone
            self.found.tried.append(f"{url}: {type(exc).__name__}: {exc}"[:500])
            return None
        if response.status != 200:
            self.found.tried.append(f"{url}: HTTP {response.status}")
            return None
        return response

    async def _recognise(
        self,
        response: Response,
        url: str,
        named_by: str,
        kinds: tuple[str, ...] = ("feed", "jsonfeed"),
        title: str = "",
    ) -> bool:
        """Add `url` as a source of the first of `kinds` (then "sitemap", unless the response is
        an HTML page) whose reader reads the body of its `response`; True if one did."""
        headers = response_headers(response)
        if "sitemap" not in kinds and not _is_html(response):
            kinds = (*kinds, "sitemap")
        for kind in kinds:
            parsed = await self.parser.parse(response.body, headers, kind, {})
            if parsed.failed or (kind == "sitemap" and not parsed.entries + parsed.sitemaps):
                continue
            title = _title(response.body, kind) or title
            self.found.candidates.append(Candidate(kind, url, named_by, title))
            return True
        return False


def alternates(response: Response) -> list[tuple[str, str, str]]:
    """(absolute URL, kind, title) of each feed an HTML page names in `<link rel="alternate">`,
    in page order, once each; hrefs are made absolute against the final URL (a `<base>` is not
    trusted)."""
    found: dict[str, tuple[str, str, str]] = {}
    for link in response.xpath("//link[@href]"):
        rel = (link.attrib.get("rel") or "").lower().split()
        kind = ALTERNATE_TYPES.get((link.attrib.get("type") or "").split(";")[0].strip().lower())
        if "alternate" not in rel or kind is None:
            continue
        url = urljoin(response.url, link.attrib["href"].strip())
        if urlsplit(url).scheme in ("http", "https"):
            title = clean_title(link.attrib.get("title") or "")
            found.setdefault(url, (url, kind, title))
    return list(found.values())


def _is_html(response: Response) -> bool:
    if not isinstance(response, TextResponse):
        return False
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1").lower()
    return "html" in content_type or response.body.lstrip()[:15].lower().startswith(
        (b"<!doctype html", b"<html")
    )


def _what(response: Response) -> str:
    content_type = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
    return f"HTTP {response.status}, {content_type or 'no Content-Type'}"


def _title(body: bytes, kind: str) -> str:
    """The title a feed gives itself (its body has been read by the worker already)."""
    if kind == "feed":
        import feedparser

        title = feedparser.parse(body).feed.get("title", "")
    elif kind == "jsonfeed":
        import json

        title = json.loads(body).get("title", "")
    else:
        return ""
    return clean_title(title) if isinstance(title, str) else ""


def clean_title(text: str) -> str:
    """`text` from the network made fit for a terminal and a feed list: every control, format,
    surrogate or line/paragraph separator character dropped (U+202E would reorder a line; a lone
    surrogate cannot be written as UTF-8), white space collapsed, at most TITLE_CHARS long."""
    shown = (ch for ch in text if ch.isspace() or unicodedata.category(ch) not in HIDDEN)
    kept = "".join(" " if ch.isspace() else ch for ch in shown)
    return " ".join(kept.split())[:TITLE_CHARS].rstrip()


async def discover(process: Any, url: str) -> Discovery:
    """The sources at `url` (see DiscoverSpider), fetched as the crawler fetches; run inside
    `run_crawls`."""
    found = Discovery()
    await process.crawl(DiscoverSpider, url=url, found=found)
    return found


class _Trying:
    """Mixed into a project spider: its fetch records and items are kept, never signed."""

    trials: dict[str, Trial]

    def received(self, feed, response, fetched_at, parsed, items, walk=None):
        fetch = super().received(feed, response, fetched_at, parsed, items, walk)
        trial = self.trials.setdefault(feed.vendor, Trial(feed))
        trial.items, trial.excluded = list(items), parsed.excluded
        trial.final_url = response.url
        return fetch

    def record_fetch(self, fetch: Any) -> None:
        trial = self.trials.setdefault(fetch.vendor, Trial(self._feed(fetch.vendor)))
        trial.entries = dict(fetch.entries or {})
        trial.error = fetch.error or ""
        parts = getattr(fetch, "parts", None) or ()
        unread = [f"{part.get('url', '?')}: {part['error']}" for part in parts if "error" in part]
        trial.reasons = [trial.error] * bool(trial.error) + unread

    def _feed(self, vendor: str) -> FeedConfig:
        return next(feed for feed in self.feeds if feed.vendor == vendor)


def trial_spider(spider: type[FeedSpider]) -> type[FeedSpider]:
    """`spider` with its fetch records and items kept in `trials` instead of signed."""
    return type(f"Trying{spider.__name__}", (_Trying, spider), {"__module__": __name__})


async def try_feeds(process: Any, spider_name: str, vendors: list[str]) -> dict[str, Trial]:
    """Each of `vendors` (entries of the feed list the process's settings name, for
    `spider_name`) read once as a crawl reads it, by that spider's own code: {vendor: Trial}; run
    inside `run_crawls`, whose CROVIA_LEDGER_DIR holds no feed state (no validators are sent)."""
    from crovia_spider.spiders.spiderloader import FeedsSpiderLoader

    spider = trial_spider(FeedsSpiderLoader(process.settings).load(spider_name))
    spider.trials = {}
    await process.crawl(spider, vendor=",".join(vendors))
    return spider.trials
