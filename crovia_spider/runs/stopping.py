"""What one Ctrl-C (or SIGTERM) does to a crawl: no new fetch, the ones in flight finish.

Scrapy's first SIGINT is a graceful close that still downloads every request the downloader has
queued (up to CONCURRENT_REQUESTS of them, each behind its host's delay), and says so only at INFO.
`StopFetching` (an extension) runs just before Scrapy's own handler: it says on stderr that the
crawl is stopping and how many fetches are in flight, fails every request still queued in the
downloader with `FetchStopped`, and marks the crawl stats (STOP_REQUESTED) so that `StopGate` (a
downloader middleware, last before the download) refuses every request that gets that far later
(a feed whose robots.txt was being read). Then Scrapy's graceful close goes on: the start requests
and the scheduler are dropped, the fetches in flight finish (each within DOWNLOAD_TIMEOUT), their
items are issued, the ledger is sealed and the run record is written, its outcome "interrupted"
and every feed never fetched marked "interrupted": not fetched, which is no failure
(crovia_spider/runs/feed_state.py). A second signal is Scrapy's: the reactor stops at once.

Parsing is bounded the same way (issue 47): from the first signal on, the crawl waits for no
parse more than DOWNLOAD_TIMEOUT (crovia_spider/feed/parsepool.py, `ParserPool.stopping`). A
parse still running then has its worker killed and its body is a failed feed ("parsing not
finished: the crawl was stopped"), as is any body fetched after. So a stopped crawl ends within
DOWNLOAD_TIMEOUT of the signal, plus the time to issue what it has and seal, whatever a body
costs to parse; and its processes with it (the worker dies with the crawl,
crovia_spider/deathsig.py).
"""

from __future__ import annotations

import logging
import signal
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

logger = logging.getLogger(__name__)
# Crawl stat set on the first stop signal; StopGate reads it.
STOP_REQUESTED = "crovia/stop_requested"
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class FetchStopped(IgnoreRequest):
    """A request dropped because the crawl is stopping: its feed was not fetched."""


class StopFetching:
    """Chains a handler before Scrapy's shutdown handlers (see the module docstring)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> StopFetching:
        extension = cls(crawler)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        return extension

    def engine_started(self) -> None:
        from twisted.internet import reactor

        # Scrapy installs its handlers once the reactor has started; chain ours after that.
        reactor.callLater(0, self._install)

    def _install(self) -> None:
        for signum in SIGNALS:
            previous = signal.getsignal(signum)
            if callable(previous):
                signal.signal(signum, self._handler(previous))

    def _handler(self, previous: Any) -> Any:
        def handle(signum: int, frame: Any) -> None:
            from twisted.internet import reactor

            # No logging in a signal handler (the stream may be mid-write): on the reactor.
            reactor.callFromThread(self.stop_fetching, signum)
            previous(signum, frame)  # Scrapy's: the graceful close, and the second signal's kill

        return handle

    def stop_fetching(self, signum: int) -> None:
        """Fail the queued requests, refuse new ones, bound the parses still to come, and say
        so."""
        self.crawler.stats.set_value(STOP_REQUESTED, True)
        grace = self.crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        parser = getattr(self.crawler.spider, "parser", None)
        if hasattr(parser, "stopping"):
            parser.stopping(grace)
        engine = self.crawler.engine
        slots = list(engine.downloader.slots.values()) if engine else []
        queued = [entry for slot in slots for entry in slot.queue]
        for slot in slots:
            slot.queue.clear()
        for request, deferred in queued:
            deferred.errback(
                Failure(FetchStopped(f"not fetched: the crawl was stopped ({request.url})"))
            )
        in_flight = sum(len(slot.transferring) for slot in slots)
        again = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        logger.warning(
            "stopping: no new fetches; finishing %d in flight (%s s at most), %s again to force",
            in_flight,
            f"{grace:g}",
            again,
        )


class StopGate:
    """Refuses (FetchStopped) every request once the crawl is stopping."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> StopGate:
        return cls(crawler)

    def process_request(self, request: Request) -> None:
        if self.crawler.stats.get_value(STOP_REQUESTED):
            raise FetchStopped(f"not fetched: the crawl was stopped ({request.url})")
