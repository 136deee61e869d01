"""Downloader middleware: Scrapy's retries, waiting between attempts.

`BackoffRetryMiddleware` replaces Scrapy's RetryMiddleware at the same position and only adds the
wait: for 429 and 503 the server's `Retry-After` (seconds or an HTTP date), capped at
RETRY_AFTER_MAX; for every other retried failure an exponential backoff of
RETRY_BACKOFF_BASE * 2**(attempt - 1), capped the same way. Which failures retry, how often, and the
stats are Scrapy's own. The wait holds only the request being retried, never the reactor.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.http import Response
from scrapy.settings import BaseSettings
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.task import deferLater

RETRY_AFTER_STATUSES = (429, 503)


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
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
