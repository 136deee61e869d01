"""One line, not a traceback, when robots.txt cannot be fetched because the network failed.

Scrapy's RobotsTxtMiddleware logs every failed robots.txt download at ERROR with the full traceback
(about 70 lines each). A cron job offline or behind a broken resolver would fill its log with them,
although the feed request that follows fails the same way and lands in the run record with its
reason. This extension keeps the message and drops the traceback for network failures only; any
other robots.txt error keeps Scrapy's full report.
"""

from __future__ import annotations

import logging

from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError
from twisted.internet.error import ConnectError, DNSLookupError, TimeoutError

ROBOTS_LOGGER = "scrapy.downloadermiddlewares.robotstxt"
NETWORK_ERRORS = (CannotResolveHostError, DNSLookupError, ConnectError, TimeoutError)


class NetworkFailureFilter(logging.Filter):
    """Strips the traceback from a record whose exception is a network failure, as a WARNING."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, NETWORK_ERRORS):
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


class QuietRobotsNetworkErrors:
    """Scrapy extension installing NetworkFailureFilter on the robots.txt middleware's logger."""

    def __init__(self) -> None:
        self.filter = NetworkFailureFilter()
        logging.getLogger(ROBOTS_LOGGER).addFilter(self.filter)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> QuietRobotsNetworkErrors:
        return cls()
