"""The peak memory one call allocates, measured alone in a fresh process.

tracemalloc counts every thread's allocations, so a peak measured inside a test worker also
counts whatever another thread does at that moment: an HTTP server of an earlier test finishing
a reply, pytest-xdist's I/O thread. One such run measured 26 MB for a call that allocates 30 KB.
`traced_peak` runs the call in a spawned process that runs no other thread: once to import what
it needs, then once traced.
"""

from __future__ import annotations

import multiprocessing
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Traced:
    peak: int  # bytes: the most allocated at once during the traced call
    error: str | None  # "ExceptionType: message" if the call raised one of `expected`


def traced_peak(
    function: Callable[..., object], *args: object, expected: tuple[type[Exception], ...] = ()
) -> Traced:
    """Run `function(*args)` alone in a fresh process: once untraced, then once traced. An
    exception of a type in `expected` is the outcome measured; any other fails the test."""
    return _pool().submit(_measure, function, args, expected).result()


@cache
def _pool() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))


def _measure(
    function: Callable[..., object], args: tuple[object, ...], expected: tuple[type[Exception], ...]
) -> Traced:
    _call(function, args, expected)  # imports, caches, first-use allocations
    tracemalloc.start()
    try:
        error = _call(function, args, expected)
        return Traced(tracemalloc.get_traced_memory()[1], error)
    finally:
        tracemalloc.stop()


def _call(
    function: Callable[..., object], args: tuple[object, ...], expected: tuple[type[Exception], ...]
) -> str | None:
    try:
        function(*args)
    except expected as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
