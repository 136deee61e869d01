"""Downloader middleware: the fetch policy on every hop, and Scrapy's retries, waiting between them.

`FetchPolicyMiddleware` checks every request before it is downloaded, after DNS resolution, against
the rules of crovia_spider/fetching/fetchpolicy.py (docs/spider.md, 9). A redirect (HTTP 3xx, or a
meta
refresh if it is turned on) is a new request that comes through it again, so every hop is checked.
A name is resolved with the reactor's own resolver, the one the download then connects with: with
Scrapy's caching resolver (the default) the download reuses the very answer that was checked.

`RobotsTxtMiddleware` replaces Scrapy's at the same position (100) and gives the parsed robots.txt
to every request that waited for it. In Scrapy's (2.19, since its `robot_parser` became a
coroutine) each request that arrives while a host's robots.txt is being downloaded awaits one
shared Deferred through `maybe_deferred_to_future`, i.e. `Deferred.asFuture`, whose callback
returns None: the first waiter gets the parser, every later one gets None, "no robots.txt", and is
let through. So a crawl whose first requests to a host go out together (feeds on one host,
`crovia capture --all`, a worker's batch) fetched pages robots.txt disallows (docs/spider.md, 9;
a reproduction a Scrapy maintainer can run: docs/upstream/robots_race.py). Here each waiter has a
Deferred of its own.

`BackoffRetryMiddleware` replaces Scrapy's RetryMiddleware at the same position and only adds the
wait: for 429 and 503 the server's `Retry-After` (seconds or an HTTP date), capped at
RETRY_AFTER_MAX; for every other retried failure an exponential backoff of
RETRY_BACKOFF_BASE * 2**(attempt - 1), capped the same way. Which failures retry, how often, and the
stats are Scrapy's own. The wait holds only the request being retried, never the reactor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxtMiddleware
from scrapy.http import Response
from scrapy.robotstxt import RobotParser
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IAddress, IHostResolution, IResolutionReceiver
from twisted.internet.task import deferLater
from zope.interface import implementer

from crovia_spider.fetching.fetchpolicy import (
    FetchRefused,
    Origin,
    address_refusal,
    is_configured_origin,
    is_ip_literal,
    origin_of,
    resolved_refusal,
    scheme_refusal,
)

RETRY_AFTER_STATUSES = (429, 503)


class FetchPolicyMiddleware:
    """Refuses (FetchRefused) a request or redirect hop the fetch policy forbids (see the module).

    A feed's request and its hops may reach internal addresses only on that feed's own host and
    port; a request without a feed (robots.txt) only on some configured feed's host and port.
    """

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> FetchPolicyMiddleware:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        url = request.url
        previous = (request.meta.get("redirect_urls") or [None])[-1]
        try:
            reason = scheme_refusal(url, previous)
            if reason is None and not self._trusted(url, request):
                reason = await _address_refusal(url)
        except ValueError as exc:  # a port out of range, a malformed address
            reason = f"malformed URL ({exc})"
        if reason is not None:
            raise FetchRefused(f"fetch refused: {url}: {reason}")

    def _trusted(self, url: str, request: Request) -> bool:
        """True when `url` may be on an internal address: a cluster worker's crawl trusts only
        the hosts its own command line allows (`private_allowed`), never a job's feed
        (docs/cluster.md); any other crawl, the configured feed's host and port."""
        allowed = getattr(self.crawler.spider, "private_allowed", None)
        if allowed is not None:
            return allowed(url)
        return is_configured_origin(url, self._origins(request))

    def _origins(self, request: Request) -> set[Origin]:
        feed = request.meta.get("feed")
        if feed is not None:
            return {origin_of(feed.url)}
        return {origin_of(f.url) for f in getattr(self.crawler.spider, "feeds", ())}


async def _address_refusal(url: str) -> str | None:
    """Why `url`'s host, not a configured feed's, must not be reached after resolution."""
    host = urlsplit(url).hostname or ""
    if is_ip_literal(host):
        kind = address_refusal(host)
        reason = None if kind is None else f"{host} is a {kind} address"
    else:
        reason = resolved_refusal(host, await resolve(host))
    return None if reason is None else f"{reason}, not the configured feed's host and port"


async def resolve(host: str) -> list[str]:
    """Every address the reactor's resolver gives for `host` (empty if it does not resolve)."""
    # Imported here, like the reactor in BackoffRetryMiddleware: Scrapy installs it first.
    from twisted.internet import reactor

    receiver = _Addresses()
    reactor.nameResolver.resolveHostName(receiver, host)
    return await maybe_deferred_to_future(receiver.done)


@implementer(IResolutionReceiver)
class _Addresses:
    """Collects a resolution's addresses; `done` fires with them when it completes."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.done: Deferred[list[str]] = Deferred()

    def resolutionBegan(self, resolution: IHostResolution) -> None:
        pass

    def addressResolved(self, address: IAddress) -> None:
        self.found.append(address.host)

    def resolutionComplete(self) -> None:
        self.done.callback(self.found)


class RobotsTxtMiddleware(ScrapyRobotsTxtMiddleware):
    """Scrapy's RobotsTxtMiddleware, but every request waiting for a host's robots.txt is judged by
    it, however many wait at once (see the module)."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        netloc = urlparse_cached(request).netloc
        pending = self._parsers.get(netloc)
        if not isinstance(pending, Deferred):  # known already, or this request downloads it
            return await super().robot_parser(request)
        mine: Deferred[RobotParser | None] = Deferred()

        def hand_on(result: RobotParser | None) -> RobotParser | None:
            # Scrapy stores the parser (None after an error) before it fires the Deferred: read it
            # there, whatever another callback on the shared Deferred may have left as its result.
            known = self._parsers.get(netloc, result)
            if not mine.called:  # a waiter cancelled (a stopped crawl) must not break the others
                mine.callback(result if isinstance(known, Deferred) else known)
            return result

        pending.addCallback(hand_on)
        return await maybe_deferred_to_future(mine)


class BackoffRetryMiddleware(RetryMiddleware):
    """RetryMiddleware that honours Retry-After and backs off exponentially (see the module)."""

    def __init__(self, settings: BaseSettings) -> None:
        super().__init__(settings)
        self.max_wait = settings.getfloat("RETRY_AFTER_MAX")
        self.backoff_base = settings.getfloat("RETRY_BACKOFF_BASE")

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        result = super().process_response(request, response)
        if isinstance(result, Request):
            await self._wait(self.delay_for(result, response))
        return result

    async def process_exception(self, request: Request, exception: Exception) -> Request | None:
        result = super().process_exception(request, exception)
        if isinstance(result, Request):
            await self._wait(self.delay_for(result, None))
        return result

    def delay_for(
        self, retry: Request, response: Response | None, now: datetime | None = None
    ) -> float:
        """Seconds to wait before sending `retry`, the retry of a request that got `response` (None
        after a download error): a 429's or 503's Retry-After (an HTTP date counts from `now`,
        default the current time), else RETRY_BACKOFF_BASE * 2**(attempt - 1); at most
        RETRY_AFTER_MAX."""
        if response is not None and response.status in RETRY_AFTER_STATUSES:
            asked = retry_after_seconds(response.headers.get(b"Retry-After"), now)
            if asked is not None:
                return min(asked, self.max_wait)
        attempt = retry.meta.get("retry_times", 1)
        return min(self.backoff_base * 2 ** (attempt - 1), self.max_wait)

    @staticmethod
    async def _wait(seconds: float) -> None:
        # Imported here: importing the reactor at module level would install Twisted's default
        # one before Scrapy installs the configured reactor.
        from twisted.internet import reactor

        if seconds > 0:
            await maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))


def retry_after_seconds(value: bytes | None, now: datetime | None = None) -> float | None:
    """Seconds asked by a Retry-After header (delta-seconds, or an HTTP-date counted from `now`,
    default the current time; 0 if it is past); None if absent or bad."""
    if not value:
        return None
    text = value.decode("latin-1").strip()
    if text.isascii() and text.isdigit():  # "²" is a digit to str.isdigit, not to float()
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
