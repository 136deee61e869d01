"""Feed bodies are parsed in a worker process, so the second core carries feedparser.

feedparser is pure Python and the costliest step of a crawl; in the reactor's thread it would
compete for the GIL with the pipelines and the ledger writer. One spawned worker (not forked:
the crawl process has threads) parses body after body while the pipelines handle the entries of
the previous one. The worker runs the same `parse_body`, so refusals and truncation handling are
identical, under a memory and a CPU-time ceiling (crovia_spider/feed/ceilings.py). A worker that
dies all the same is started again, and the bodies it held are parsed once more by the new one;
a body the new worker dies on too is a failed feed, never parsed in the crawl's own process.
CROVIA_PARSE_WORKER = 0 (or a reactor without asyncio) parses in-process instead, unbounded.
`BlockingParser` is the same worker, ceilings and retry for a caller without an event loop:
`crovia history` and `crovia absent` read kept bodies again through it, never in their own process.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from scrapy.utils.reactor import is_asyncio_reactor_installed

from crovia_spider.config.feeds import DEFAULT_KIND
from crovia_spider.feed.body import ParsedFeed, unreadable
from crovia_spider.feed.ceilings import (
    DEFAULT_MEMORY_MB,
    DEFAULT_SECONDS,
    parse_within,
    worker_setup,
)
from crovia_spider.feed.kinds import read_body

logger = logging.getLogger(__name__)
T = TypeVar("T")
WORKER_DIED = "the parser worker died on this body twice (CROVIA_PARSE_MEMORY_MB?)"


class ParserPool:
    """Parses feed bodies, in a worker process when enabled (see the module docstring)."""

    def __init__(
        self,
        enabled: bool,
        memory_mb: int = DEFAULT_MEMORY_MB,
        seconds: float = DEFAULT_SECONDS,
    ) -> None:
        self._memory = memory_mb << 20
        self._seconds = seconds
        self._pool: ProcessPoolExecutor | None = None
        if enabled and is_asyncio_reactor_installed():
            self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        pool = start_worker(self._memory)
        pool.submit(int)  # start the worker now, while the first requests are in flight
        return pool

    async def parse(
        self,
        body: bytes,
        headers: dict[str, str],
        kind: str = DEFAULT_KIND,
        options: Mapping[str, Any] | None = None,
    ) -> ParsedFeed:
        """The body read as the source `kind` says, with its `options`; never raises on bad
        input."""
        if self._pool is None:
            return read_body(body, headers, kind, options)
        loop = asyncio.get_running_loop()
        for _ in range(2):
            pool = self._pool
            try:
                return await loop.run_in_executor(
                    pool, parse_within, body, headers, self._seconds, kind, options
                )
            except BrokenProcessPool:
                if self._pool is pool:  # the first to hear of it starts the next worker
                    logger.warning("feed parser worker died; starting another")
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = self._start()
        return unreadable(body, WORKER_DIED)

    async def call(
        self, in_worker: Callable[..., T], inline: Callable[..., T], died: T, *args: Any
    ) -> T:
        """`in_worker(*args, seconds)` in the worker, under its memory ceiling and with the CPU
        seconds a job may take (CROVIA_PARSE_SECONDS), such as a captured page's main text
        (crovia_spider/capture/text.py); `inline(*args)` when there is no worker; `died` when
        the worker dies on it twice, as `parse` does for a body."""
        if self._pool is None:
            return inline(*args)
        loop = asyncio.get_running_loop()
        for _ in range(2):
            pool = self._pool
            try:
                return await loop.run_in_executor(pool, in_worker, *args, self._seconds)
            except BrokenProcessPool:
                if self._pool is pool:
                    logger.warning("parser worker died on a job; starting another")
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = self._start()
        return died

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def start_worker(memory_bytes: int) -> ProcessPoolExecutor:
    """One spawned parser worker under the ceilings (crovia_spider/feed/ceilings.py)."""
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=worker_setup,
        initargs=(os.getpid(), memory_bytes),
    )


class BlockingParser:
    """`parse_body` in the worker under its ceilings, waiting for the answer; the worker starts
    at the first body. A worker that dies is replaced once per body, as ParserPool does."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB, seconds: float = DEFAULT_SECONDS):
        self._memory = memory_mb << 20
        self._seconds = seconds
        self._pool: ProcessPoolExecutor | None = None

    def __call__(
        self,
        body: bytes,
        headers: dict[str, str],
        kind: str = DEFAULT_KIND,
        options: Mapping[str, Any] | None = None,
    ) -> ParsedFeed:
        """The body read as the source `kind` says, with its `options`; never raises on bad
        input (a body past a ceiling is `failed`)."""
        for _ in range(2):
            if self._pool is None:
                self._pool = start_worker(self._memory)
            try:
                job = self._pool.submit(parse_within, body, headers, self._seconds, kind, options)
                return job.result()
            except BrokenProcessPool:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
        return unreadable(body, WORKER_DIED)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
