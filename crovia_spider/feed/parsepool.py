"""Feed bodies are parsed in a worker process, so the second core carries feedparser.

feedparser is pure Python and the costliest step of a crawl; in the reactor's thread it would
compete for the GIL with the pipelines and the ledger writer. One spawned worker (not forked:
the crawl process has threads) parses body after body while the pipelines handle the entries of
the previous one. The worker runs the same `parse_body`, so refusals and truncation handling are
identical. CROVIA_PARSE_WORKER = 0 (or a reactor without asyncio) parses in-process instead.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from scrapy.utils.reactor import is_asyncio_reactor_installed

from crovia_spider.feed.body import ParsedFeed, parse_body

logger = logging.getLogger(__name__)
_PARENT_POLL_SECONDS = 1.0


class ParserPool:
    """Parses feed bodies, in a worker process when enabled (see the module docstring)."""

    def __init__(self, enabled: bool) -> None:
        self._pool: ProcessPoolExecutor | None = None
        if enabled and is_asyncio_reactor_installed():
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=context,
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
            self._pool.submit(int)  # start the worker now, while the first requests are in flight

    async def parse(self, body: bytes, headers: dict[str, str]) -> ParsedFeed:
        """The parsed feed; never raises on bad input (a dead worker falls back to in-process)."""
        if self._pool is None:
            return parse_body(body, headers)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, parse_body, body, headers)
        except BrokenProcessPool:
            logger.warning("feed parser worker died; parsing in-process from now on")
            self._pool = None
            return parse_body(body, headers)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _exit_with_parent(parent: int) -> None:
    # A crawl killed with SIGKILL cannot shut its pool down, and the worker would wait forever on
    # a queue whose write end it holds itself: it leaves when its parent is gone.
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
