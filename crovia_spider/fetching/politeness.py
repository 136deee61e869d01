"""Per-host politeness from the feed list, and plain words for why a fetch failed.

arXiv asks robots for at most one request every 3 seconds on one connection; that holds for every
arXiv host by default. A feed's `delay` raises its host's delay (never lowers it). The setting
CROVIA_POLITE_DELAYS = 0 turns every delay off, for tests and benchmarks against 127.0.0.1.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadTimeoutError,
    IgnoreRequest,
)
from scrapy.settings import BaseSettings
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.arxiv import is_arxiv_url

ARXIV_SLOT = {"concurrency": 1, "delay": 3.0, "jitter": 0}


def apply_politeness(settings: BaseSettings, feeds: list[FeedConfig]) -> None:
    """Set DOWNLOAD_SLOTS for the hosts of `feeds` (before the crawler freezes its settings)."""
    if not settings.getbool("CROVIA_POLITE_DELAYS"):
        settings.set("DOWNLOAD_DELAY", 0, priority="cmdline")
        settings.set("DOWNLOAD_SLOTS", {}, priority="cmdline")
        return
    slots: dict[str, dict[str, Any]] = dict(settings.getdict("DOWNLOAD_SLOTS"))
    default_delay = settings.getfloat("DOWNLOAD_DELAY")
    for feed in feeds:
        slot = dict(slots.get(feed.host, {}))
        if is_arxiv_url(feed.url):
            slot = {**ARXIV_SLOT, **slot, "delay": max(slot.get("delay", 0), ARXIV_SLOT["delay"])}
        if feed.delay is not None:
            slot["delay"] = max(slot.get("delay", default_delay), feed.delay)
        if slot:
            slots[feed.host] = slot
    settings.set("DOWNLOAD_SLOTS", slots, priority="spider")


def describe_failure(failure: Failure) -> str:
    """One line saying why a feed request failed, for the run record and the log."""
    exc = failure.value
    if isinstance(exc, HttpError):
        return f"HTTP {exc.response.status}"
    if isinstance(exc, IgnoreRequest):
        return str(exc) or "request ignored"
    if isinstance(exc, CannotResolveHostError):
        # Scrapy's message already starts "DNS lookup failed: "; keep one prefix whatever it says.
        return "DNS lookup failed: " + str(exc).removeprefix("DNS lookup failed: ")
    if isinstance(exc, DownloadTimeoutError):
        return f"timed out: {exc}"
    if isinstance(exc, DownloadCancelledError):
        return f"download cancelled (size limit?): {exc}"
    return f"{type(exc).__name__}: {exc}".strip()
