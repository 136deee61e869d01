"""The ceilings of the feed parser worker: what one hostile body can make a crawl spend.

feedparser's loose parser, which reads any body expat refuses, costs far more than the body's size
on some malformed shapes: a tag of a million characters holds about 150 bytes per character in the
regular-expression engine's backtracking stack, a million unclosed tags about 220 bytes per byte
and 6 s of CPU (docs/fuzzing.md, finding F9). The download cap (16 MiB) alone would let one body
cost gigabytes and minutes. So the worker process (crovia_spider/feed/parsepool.py) parses under
two ceilings, and a body over either is a failed feed, recorded with the reason, like any other
unreadable body:

- memory: the worker's data segment is limited (RLIMIT_DATA, CROVIA_PARSE_MEMORY_MB); an
  allocation past it raises MemoryError in the parse, which gives up that body alone;
- time: a parse has CROVIA_PARSE_SECONDS of CPU time (a profiling timer, so a loaded machine does
  not cut a parse short); past it the parse is interrupted. The interruption is a BaseException,
  which the `except Exception` inside feedparser cannot swallow, and the timer fires again every
  second should anything swallow it all the same.

Parsing in-process (CROVIA_PARSE_WORKER=0) has neither ceiling: it is for tests and debugging.
This module imports nothing of Scrapy, so the worker stays small.
"""

from __future__ import annotations

import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any, TypeVar

from crovia_spider.config.feeds import DEFAULT_KIND
from crovia_spider.feed.body import ParsedFeed, unreadable
from crovia_spider.feed.kinds import read_body

T = TypeVar("T")

DEFAULT_MEMORY_MB = 1024
DEFAULT_SECONDS = 120.0
_PARENT_POLL_SECONDS = 1.0
_REFIRE_SECONDS = 1.0


class ParseTimeLimit(BaseException):
    """A parse ran past its CPU-time ceiling (a BaseException: library code cannot catch it)."""


class _Timer:
    armed = False


def _over_time(signum: int, frame: FrameType | None) -> None:
    if _Timer.armed:
        raise ParseTimeLimit


def worker_setup(parent: int, memory_bytes: int) -> None:
    """The worker's initializer: its memory ceiling, the time ceiling's handler, and a watch that
    ends it when the crawl is gone (a crawl killed with SIGKILL cannot shut its pool down, and the
    worker would wait forever on a queue whose write end it holds itself)."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        memory_bytes = min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (memory_bytes, hard))
    signal.signal(signal.SIGPROF, _over_time)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def parse_within(
    body: bytes,
    headers: dict[str, str],
    seconds: float,
    kind: str = DEFAULT_KIND,
    options: Mapping[str, Any] | None = None,
) -> ParsedFeed:
    """`body` read as the source `kind` says (crovia_spider/feed/kinds.py), with the source's
    `options`, with at most `seconds` of CPU time (in the worker, after `worker_setup`)."""
    try:
        return run_within(seconds, read_body, body, headers, kind, options)
    except ParseTimeLimit:
        reason = f"parsing took more than {seconds:g} s of CPU time (CROVIA_PARSE_SECONDS)"
        return unreadable(body, reason)


def run_within(seconds: float, fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` with at most `seconds` of CPU time (in the worker, after `worker_setup`);
    ParseTimeLimit past it."""
    signal.setitimer(signal.ITIMER_PROF, seconds, _REFIRE_SECONDS)
    _Timer.armed = True
    try:
        return fn(*args)
    finally:
        _Timer.armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
