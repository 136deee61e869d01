"""Log filters that keep an unattended crawl's log readable: one line per failure, not a traceback.

- Scrapy's RobotsTxtMiddleware logs every failed robots.txt download at ERROR with the full
  traceback (about 70 lines each). Offline or behind a broken resolver that buries the log, although
  the feed request that follows fails the same way and lands in the run record with its reason.
  Network and download failures keep the message, lose the traceback and go down to INFO (the
  crawl summary reports the feed's own failure); other robots.txt errors are untouched.
- Scrapy's retry middleware logs at ERROR each request it gave up retrying. The feed's failure is
  reported once, with its reason, in the closing summary (crovia_spider/runs/runsummary.py); the
  give-up line is kept at DEBUG for whoever follows one request.
- A crawl refused before it starts (ledger locked, no key: CrawlRefused; a bad feeds.toml or
  classify.toml: ConfigError) is logged once as CRITICAL, with the file, entry and reason, by the
  component that refused it; asyncio then reports the same exception again as "Task exception was
  never retrieved", with a traceback. That second report is dropped.
"""

from __future__ import annotations

import logging

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ResponseDataLossError,
)
from twisted.internet.error import ConnectError, DNSLookupError, TimeoutError

from crovia_spider.exceptions import ConfigError, CrawlRefused

ROBOTS_LOGGER = "scrapy.downloadermiddlewares.robotstxt"
RETRY_LOGGER = "scrapy.downloadermiddlewares.retry"
# Scrapy 2.13+ wraps Twisted's errors in its own Download*Error: both kinds are here.
NETWORK_ERRORS = (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ResponseDataLossError,
    DNSLookupError,
    ConnectError,
    TimeoutError,
)
# Every place that raises these while a crawl is built logs them as CRITICAL first.
REFUSALS = (CrawlRefused, ConfigError)


def _exception(record: logging.LogRecord) -> BaseException | None:
    return record.exc_info[1] if record.exc_info else None


class NetworkFailureFilter(logging.Filter):
    """Strips the traceback from a record whose exception is a network failure, as INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(_exception(record), NETWORK_ERRORS):
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


class GaveUpRetryingFilter(logging.Filter):
    """Demotes "Gave up retrying ..." to DEBUG: the summary reports the feed's failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.DEBUG and str(record.msg).startswith("Gave up retrying"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


class AlreadyReportedFilter(logging.Filter):
    """Drops asyncio's second report of a refused crawl (whoever refused it logged it already)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not isinstance(_exception(record), REFUSALS)


FILTERS: list[tuple[str, logging.Filter]] = [
    (ROBOTS_LOGGER, NetworkFailureFilter()),
    (RETRY_LOGGER, GaveUpRetryingFilter()),
    ("asyncio", AlreadyReportedFilter()),
]


def install() -> None:
    """Put each filter on its logger; calling it again changes nothing (the objects are shared).

    FeedSpider.from_crawler calls it first thing: a bad feed list is refused there, before Scrapy
    builds its extensions, so an extension would come too late.
    """
    for name, log_filter in FILTERS:
        logging.getLogger(name).addFilter(log_filter)
