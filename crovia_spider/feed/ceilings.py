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
  second should anything swallow it all the same;
- a deadline, from outside: a signal handler runs only between Python bytecodes, so the timer
  cannot interrupt one long call into C (an lxml XPath evaluation ran 7 minutes in one: issue 47).
  The crawl waits for a parse at most `deadline(CROVIA_PARSE_SECONDS)` of wall-clock time, twice
  the CPU ceiling and 10 s (so the timer, which keeps the worker, fires first whenever it can);
  past it the crawl kills the worker (SIGKILL) and the body is a failed feed saying so; the next
  body gets a new worker (crovia_spider/feed/parsepool.py). A crawl being stopped waits for a
  parse no longer than DOWNLOAD_TIMEOUT after the stop (crovia_spider/runs/stopping.py).

The worker dies with the crawl: the kernel kills it when the crawl process ends, however it ends
(crovia_spider/deathsig.py), and a watch thread does the same where that is not available.
Parsing in-process (CROVIA_PARSE_WORKER=0) has none of these ceilings: it is for tests and
debugging; what bounds a listing page's selectors still holds there (crovia_spider/feed/listing.py).
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
from crovia_spider.deathsig import die_with_parent
from crovia_spider.feed.body import ParsedFeed, unreadable
from crovia_spider.feed.kinds import read_body

T = TypeVar("T")

DEFAULT_MEMORY_MB = 1024
DEFAULT_SECONDS = 120.0
_PARENT_POLL_SECONDS = 1.0
_REFIRE_SECONDS = 1.0
DEADLINE_FACTOR = 2.0  # the wall-clock deadline: this times the CPU ceiling, plus DEADLINE_SLACK
DEADLINE_SLACK = 10.0
READY = "ready"  # the worker's first message: set up, waiting for jobs


def deadline(seconds: float) -> float:
    """The wall-clock seconds the crawl waits for one parse under a CPU ceiling of `seconds`."""
    return DEADLINE_FACTOR * seconds + DEADLINE_SLACK


def late(seconds: float) -> str:
    """Why a body whose parse passed its deadline is unreadable (CPU ceiling `seconds`)."""
    return (
        f"parsing took more than {deadline(seconds):g} s of wall-clock time (twice"
        " CROVIA_PARSE_SECONDS and 10 s): the parser worker was stopped"
    )


STOPPED = "parsing not finished: the crawl was stopped (DOWNLOAD_TIMEOUT after the stop)"


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


def serve(conn: Any, parent: int, memory_bytes: int) -> None:
    """The worker process: under the ceilings, run each job `(fn, args)` received on `conn` and
    send back `(True, value)` or `(False, exception)`, until `conn` is closed. It dies with the
    crawl (the module docstring), and ignores SIGINT: a Ctrl-C at a terminal reaches the crawl,
    which decides what becomes of a parse."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker_setup(parent, memory_bytes)
    conn.send(READY)
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # the caller's to see, as from a function called in-process
            answer = (False, exc)
        try:
            conn.send(answer)
        except Exception as exc:  # an answer that cannot be pickled
            conn.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))


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
