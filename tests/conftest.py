"""Shared fixtures: a feed server on 127.0.0.1 serving the project's fixture feeds.

To crawl in a test: `from tests.crawl import run_crawl` (see tests/crawl.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.feedserver import FeedServer

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FEEDS = FIXTURES / "feeds"


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    """A fresh server (no scripts, no recorded requests) serving tests/fixtures/feeds/."""
    with FeedServer(FEEDS) as server:
        yield server


@pytest.fixture(scope="module")
def module_feed_server() -> Iterator[FeedServer]:
    """One server for a whole test module, for crawls reused across several assertions."""
    with FeedServer(FEEDS) as server:
        yield server
