"""Feed bodies are parsed in a worker process, so the second core carries feedparser.

feedparser is pure Python and the costliest step of a crawl; in the reactor's thread it would
compete for the GIL with the pipelines and the ledger writer. One spawned worker (not forked:
the crawl process has threads) parses body after body, one at a time, while the pipelines handle
the entries of the previous one. The worker runs the same `parse_body`, so refusals and truncation
handling are identical, under a memory and a CPU-time ceiling, and the crawl gives each parse a
wall-clock deadline it enforces from outside (crovia_spider/feed/ceilings.py): a parse stuck in C
code past it has its worker killed, its body is a failed feed saying so, and the next body gets a
new worker. A worker that dies on a body is started again and the body parsed once more by the
new one; a body the new worker dies on too is a failed feed, never parsed in the crawl's own
process. Bodies wait in the crawl, not in the worker, so a body's deadline starts when its parse
does, and a worker killed costs only the body it held. The jobs are sent and answered by one
thread of the crawl's (`_Dispatcher`): the reactor never waits on the worker.
CROVIA_PARSE_WORKER = 0 (or a reactor without asyncio) parses in-process instead, unbounded.
`BlockingParser` is the same worker, ceilings, deadline and retry for a caller without an event
loop: `crovia history` and `crovia absent` read kept bodies again through it, never in their own
process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from scrapy.utils.reactor import is_asyncio_reactor_installed

from crovia_spider.config.feeds import DEFAULT_KIND
from crovia_spider.feed.body import ParsedFeed, unreadable
from crovia_spider.feed.ceilings import (
    DEFAULT_MEMORY_MB,
    DEFAULT_SECONDS,
    READY,
    STOPPED,
    deadline,
    late,
    parse_within,
    serve,
    worker_setup,
)
from crovia_spider.feed.kinds import read_body

logger = logging.getLogger(__name__)
T = TypeVar("T")
WORKER_DIED = "the parser worker died on this body twice (CROVIA_PARSE_MEMORY_MB?)"
START_SECONDS = 120.0  # a worker not ready by then (imports, a loaded machine) is stopped
_POLL_SECONDS = 0.1  # how often a wait for the worker looks at the deadline and a stop
# What became of a job: answered ("ok", "raised"), or not ("died", "late", "stopped").
OK, RAISED, DIED, LATE, STOPPED_JOB = "ok", "raised", "died", "late", "stopped"


class _Worker:
    """One spawned worker process (ceilings.serve) and the pipe to it."""

    def __init__(self, memory_bytes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        self.process = context.Process(
            target=serve,
            args=(theirs, os.getpid(), memory_bytes),
            name="crovia-parser",
            daemon=True,
        )
        self.process.start()
        theirs.close()
        self.ready = False

    def run(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        seconds: float,
        stop_by: Callable[[], float],
    ) -> tuple[str, Any]:
        """`fn(*args)` in the worker, waited for `seconds` from its start and never past
        `stop_by()` (time.monotonic(), asked again while waiting: a stop may come): (OK, value),
        (RAISED, exception), or (DIED | LATE | STOPPED_JOB, None), after which the worker is to
        be ended."""
        try:
            if not self.ready:
                started = time.monotonic()
                while not self.conn.poll(_POLL_SECONDS):
                    if time.monotonic() >= stop_by():
                        return STOPPED_JOB, None
                    if time.monotonic() - started > START_SECONDS:
                        return DIED, None
                if self.conn.recv() != READY:
                    return DIED, None
                self.ready = True
            own = time.monotonic() + seconds
            self.conn.send((fn, args))
            while not self.conn.poll(_POLL_SECONDS):
                now, stop = time.monotonic(), stop_by()
                if now >= stop and stop < own:
                    return STOPPED_JOB, None
                if now >= own:
                    return LATE, None
            answered, value = self.conn.recv()
        except (EOFError, OSError):
            return DIED, None
        return (OK if answered else RAISED), value

    def end(self, kill: bool = True) -> None:
        """Kill the worker (or, idle, let it exit on the closed pipe) and reap it."""
        if kill:
            self.process.kill()
        self.conn.close()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


class _Slot:
    """The worker of a pool or a BlockingParser: started on demand, replaced when it dies or
    passes a deadline; used by one thread at a time."""

    def __init__(self, memory_bytes: int, seconds: float) -> None:
        self.memory = memory_bytes
        self.seconds = seconds  # the CPU ceiling (CROVIA_PARSE_SECONDS)
        self.deadline = deadline(seconds)
        self.stop_by = math.inf  # time.monotonic() past which no parse is waited for
        self.worker: _Worker | None = None

    def start(self) -> None:
        if self.worker is None:
            self.worker = _Worker(self.memory)

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], what: str) -> tuple[str, Any]:
        """`fn(*args)` in the worker, once more in a new worker if the first dies; (outcome,
        value) as _Worker.run. `what` names the job in the log."""
        for _ in range(2):
            if time.monotonic() >= self.stop_by:
                return STOPPED_JOB, None
            self.start()
            assert self.worker is not None
            outcome, value = self.worker.run(fn, args, self.deadline, lambda: self.stop_by)
            if outcome in (OK, RAISED):
                return outcome, value
            self.worker.end()
            self.worker = None
            if outcome == LATE:
                logger.warning(
                    "%s took more than %g s: parser worker stopped; the next gets another",
                    what,
                    self.deadline,
                )
                return outcome, None
            if outcome == STOPPED_JOB:
                return outcome, None
            logger.warning(
                "feed parser worker died; starting another"
                if what == "parsing a body"
                else "parser worker died on a job; starting another"
            )
        return DIED, None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.end(kill=not self.worker.ready)
            self.worker = None


class _Dispatcher:
    """The thread that hands a pool's jobs to its worker, one at a time, and answers each on
    the event loop that asked. A daemon: a crawl forced to stop does not wait for it."""

    def __init__(self, slot: _Slot) -> None:
        self.slot = slot
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="crovia-parse", daemon=True)
        self.thread.start()

    async def run(
        self, fn: Callable[..., Any], args: tuple[Any, ...], what: str
    ) -> tuple[str, Any]:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[tuple[str, Any]] = loop.create_future()
        self.jobs.put((fn, args, what, loop, answer))
        return await answer

    def _serve(self) -> None:
        # The first worker is spawned here too: it lives as long as the thread that started it
        # (crovia_spider/deathsig.py), and this thread lives as long as the pool.
        self.slot.start()
        while (job := self.jobs.get()) is not None:
            fn, args, what, loop, answer = job
            try:
                outcome = self.slot.run(fn, args, what)
            except Exception as exc:  # a fault here must not leave the job unanswered
                outcome = (RAISED, exc)
            with contextlib.suppress(RuntimeError):  # a closed loop: the crawl has ended
                loop.call_soon_threadsafe(_answer, answer, outcome)
        self.slot.close()

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()


def _answer(answer: asyncio.Future[tuple[str, Any]], outcome: tuple[str, Any]) -> None:
    if not answer.done():
        answer.set_result(outcome)


class ParserPool:
    """Parses feed bodies, in a worker process when enabled (see the module docstring)."""

    def __init__(
        self,
        enabled: bool,
        memory_mb: int = DEFAULT_MEMORY_MB,
        seconds: float = DEFAULT_SECONDS,
    ) -> None:
        self._seconds = seconds
        self._slot: _Slot | None = None
        self._dispatcher: _Dispatcher | None = None
        if enabled and is_asyncio_reactor_installed():
            self._slot = _Slot(memory_mb << 20, seconds)
            self._dispatcher = _Dispatcher(self._slot)  # starts the worker now

    async def parse(
        self,
        body: bytes,
        headers: dict[str, str],
        kind: str = DEFAULT_KIND,
        options: Mapping[str, Any] | None = None,
    ) -> ParsedFeed:
        """The body read as the source `kind` says, with its `options`; never raises on bad
        input."""
        if self._dispatcher is None:
            return read_body(body, headers, kind, options)
        args = (body, headers, self._seconds, kind, options)
        outcome, value = await self._dispatcher.run(parse_within, args, "parsing a body")
        return _parsed(body, outcome, value, self._seconds)

    async def call(
        self, in_worker: Callable[..., T], inline: Callable[..., T], died: T, *args: Any
    ) -> T:
        """`in_worker(*args, seconds)` in the worker, under its memory ceiling, with the CPU
        seconds a job may take (CROVIA_PARSE_SECONDS) and the deadline of a parse, such as a
        captured page's main text (crovia_spider/capture/text.py); `inline(*args)` when there
        is no worker; `died` when the worker dies on it twice or passes the deadline."""
        if self._dispatcher is None:
            return inline(*args)
        outcome, value = await self._dispatcher.run(in_worker, (*args, self._seconds), "a job")
        if outcome == RAISED:
            raise value
        return value if outcome == OK else died

    def stopping(self, within: float) -> None:
        """The crawl is stopping: wait for no parse more than `within` seconds from now (a
        parse still running then is stopped, its body a failed feed; so is any body after)."""
        if self._slot is not None:
            self._slot.stop_by = min(self._slot.stop_by, time.monotonic() + within)

    def close(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.close()
            self._dispatcher = None


def _parsed(body: bytes, outcome: str, value: Any, seconds: float) -> ParsedFeed:
    if outcome == OK:
        return value  # type: ignore[no-any-return]
    if outcome == RAISED:
        raise value
    if outcome == LATE:
        return unreadable(body, late(seconds))
    if outcome == STOPPED_JOB:
        return unreadable(body, STOPPED)
    return unreadable(body, WORKER_DIED)


def start_worker(memory_bytes: int) -> ProcessPoolExecutor:
    """One spawned worker process under the memory ceiling (crovia_spider/feed/ceilings.py), as
    an executor, for work of our own rather than a parse of outside bytes (pipelines/issue.py
    keeps captured pages through one)."""
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=worker_setup,
        initargs=(os.getpid(), memory_bytes),
    )


class BlockingParser:
    """`parse_body` in the worker under its ceilings and deadline, waiting for the answer; the
    worker starts at the first body. A worker that dies is replaced once per body, and one past
    the deadline is killed, as in ParserPool."""

    def __init__(self, memory_mb: int = DEFAULT_MEMORY_MB, seconds: float = DEFAULT_SECONDS):
        self._seconds = seconds
        self._slot = _Slot(memory_mb << 20, seconds)

    def __call__(
        self,
        body: bytes,
        headers: dict[str, str],
        kind: str = DEFAULT_KIND,
        options: Mapping[str, Any] | None = None,
    ) -> ParsedFeed:
        """The body read as the source `kind` says, with its `options`; never raises on bad
        input (a body past a ceiling or the deadline is `failed`)."""
        args = (body, headers, self._seconds, kind, options)
        outcome, value = self._slot.run(parse_within, args, "parsing a body")
        return _parsed(body, outcome, value, self._seconds)

    def close(self) -> None:
        self._slot.close()
