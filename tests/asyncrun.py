"""`run(coroutine)`: asyncio.run in a thread of its own, for tests that drive a coroutine.

pytest-xdist runs test files one after another in a worker process, and the browser tests'
session fixture (Playwright's sync API, tests/web/conftest.py) keeps an event loop marked running
in the worker's main thread for the rest of the session: asyncio.run refuses to start there. A
new thread has no running loop, whichever files ran before.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()
