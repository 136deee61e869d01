"""BackoffRetryMiddleware's wait before a retry: Retry-After honoured up to a cap, else backoff.

The delay is computed, not waited for, so no test here depends on the clock: HTTP dates are
counted from a fixed `now`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.settings import Settings

from crovia_spider.fetching.middlewares import BackoffRetryMiddleware

URL = "http://127.0.0.1/feed.xml"
NOW = datetime(2026, 6, 18, 4, 43, 37, tzinfo=UTC)
MAX_WAIT = 120.0


@pytest.fixture
def middleware() -> BackoffRetryMiddleware:
    return BackoffRetryMiddleware(
        Settings({"RETRY_AFTER_MAX": MAX_WAIT, "RETRY_BACKOFF_BASE": 2.0})
    )


def retry(attempt: int) -> Request:
    """The retry Scrapy builds for the `attempt`-th time (it counts them in meta)."""
    return Request(URL, meta={"retry_times": attempt})


def answer(status: int, retry_after: str | None = None) -> Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Response(URL, status=status, headers=headers)


def http_date(seconds_from_now: float) -> str:
    return format_datetime(NOW + timedelta(seconds=seconds_from_now), usegmt=True)


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize(
    ("retry_after", "seconds"),
    [
        ("7", 7.0),  # delta-seconds
        (" 30 ", 30.0),
        (http_date(42), 42.0),  # an HTTP date, counted from now
        (http_date(-600), 0.0),  # a date already past: no wait
        ("3600", MAX_WAIT),  # capped
        (http_date(86_400 * 365), MAX_WAIT),
    ],
)
def test_retry_after_is_honoured_up_to_the_maximum(middleware, status, retry_after, seconds):
    assert middleware.delay_for(retry(1), answer(status, retry_after), NOW) == seconds


@pytest.mark.parametrize(("attempt", "seconds"), [(1, 2.0), (2, 4.0), (3, 8.0), (7, MAX_WAIT)])
def test_without_retry_after_the_wait_doubles_per_attempt_up_to_the_maximum(
    middleware, attempt, seconds
):
    assert middleware.delay_for(retry(attempt), answer(503), NOW) == seconds
    assert middleware.delay_for(retry(attempt), None, NOW) == seconds  # a download error


@pytest.mark.parametrize("retry_after", ["soon", "", "-5", "Someday, 99 Foo 2026"])
def test_an_unreadable_retry_after_falls_back_to_backoff(middleware, retry_after):
    assert middleware.delay_for(retry(2), answer(429, retry_after), NOW) == 4.0


def test_retry_after_counts_only_for_429_and_503(middleware):
    assert middleware.delay_for(retry(1), answer(500, "60"), NOW) == 2.0


def test_backoff_and_retry_after_follow_the_settings():
    middleware = BackoffRetryMiddleware(
        Settings({"RETRY_AFTER_MAX": 5.0, "RETRY_BACKOFF_BASE": 0.5})
    )
    assert middleware.delay_for(retry(1), None, NOW) == 0.5
    assert middleware.delay_for(retry(2), answer(429, "60"), NOW) == 5.0
