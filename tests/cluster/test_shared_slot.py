"""The per-host slot all workers share (crovia_spider/cluster/politeness.py), on a real Redis.

The slot's rules one by one, then four OS processes (multiprocessing, spawned) fetching from one
loopback HTTP server through the slot: the server never sees two requests closer than the delay,
nor a request while it still answers another. No test waits on a clock it does not own: a lease
runs out in Redis, and the only times compared are the spacing the slot guarantees.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import time
import urllib.request
from types import SimpleNamespace

import pytest
import redis
import redis.asyncio
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.test import get_crawler

from crovia_spider.cluster.keys import slot_key
from crovia_spider.cluster.politeness import (
    NEXT,
    POLL_MAX_MS,
    POLL_MIN_MS,
    TOKEN_META,
    HostSlots,
    SharedSlotMiddleware,
    new_token,
)
from tests.asyncrun import run
from tests.feedserver import FeedServer, Reply

HOST = "feeds.example"
LONG_LEASE_MS = 60_000
# The two clocks compared below (Redis's TIME and the test server's time.monotonic()) may tick
# apart by a clock slew's worth over a second: well under a millisecond.
CLOCKS = 0.001


def _wait_until_acquired(slots: HostSlots, host: str, token: str, lease_ms: int) -> int:
    """Poll as a worker does; returns how many times it was told to wait (bounded by the test)."""
    waits = 0
    deadline = time.monotonic() + 30
    while (wait_ms := slots.acquire(host, token, lease_ms)) > 0:
        assert POLL_MIN_MS <= wait_ms <= POLL_MAX_MS
        assert time.monotonic() < deadline, "the slot was never free"
        waits += 1
        time.sleep(wait_ms / 1000)
    return waits


def test_a_second_acquirer_waits_until_the_holder_releases(redis_server):
    slots = HostSlots(redis_server.client())
    first, second = new_token(), new_token()
    assert slots.acquire(HOST, first, LONG_LEASE_MS) == 0
    assert POLL_MIN_MS <= slots.acquire(HOST, second, LONG_LEASE_MS) <= POLL_MAX_MS
    assert slots.acquire(HOST, first, LONG_LEASE_MS) > 0  # one lease per request, never re-entered
    assert slots.acquire("other.example", second, LONG_LEASE_MS) == 0  # hosts are apart
    assert slots.release(HOST, first, delay_ms=0)
    assert slots.acquire(HOST, second, LONG_LEASE_MS) == 0


def test_release_by_a_wrong_token_does_nothing(redis_server):
    client = redis_server.client()
    slots = HostSlots(client)
    holder = new_token()
    assert slots.acquire(HOST, holder, LONG_LEASE_MS) == 0
    before = client.hgetall(slot_key(HOST))
    assert not slots.release(HOST, new_token(), delay_ms=5_000)
    assert client.hgetall(slot_key(HOST)) == before
    assert slots.acquire(HOST, new_token(), LONG_LEASE_MS) > 0
    assert slots.release(HOST, holder, delay_ms=0)
    assert not slots.release(HOST, holder, delay_ms=0)  # given back once only


def test_a_dead_holders_lease_runs_out(redis_server):
    client = redis_server.client()
    slots = HostSlots(client)
    dead = new_token()
    assert slots.acquire(HOST, dead, lease_ms=300) == 0  # and its worker is never heard of again
    assert 0 < client.pttl(slot_key(HOST)) <= 300
    survivor = new_token()
    assert _wait_until_acquired(slots, HOST, survivor, LONG_LEASE_MS) > 0
    assert not slots.release(HOST, dead, delay_ms=0)  # a late release cannot free the new lease
    assert slots.acquire(HOST, new_token(), LONG_LEASE_MS) > 0


def test_the_delay_runs_on_redis_clock(redis_server):
    """The next allowed time is Redis's TIME (microseconds), never the caller's clock."""
    client = redis_server.client()
    slots = HostSlots(client)
    seconds, micros = client.time()
    now_us = seconds * 1_000_000 + micros
    client.hset(slot_key(HOST), NEXT, now_us + 3_600_000_000)  # an hour ahead on Redis's clock
    assert slots.acquire(HOST, new_token(), LONG_LEASE_MS) == POLL_MAX_MS
    client.hset(slot_key(HOST), NEXT, now_us - 1)  # already past on Redis's clock
    assert slots.acquire(HOST, new_token(), LONG_LEASE_MS) == 0


def test_release_sets_the_delay_and_the_slot_expires(redis_server):
    client = redis_server.client()
    slots = HostSlots(client)
    token = new_token()
    assert slots.acquire(HOST, token, LONG_LEASE_MS) == 0
    assert slots.release(HOST, token, delay_ms=10_000)
    assert POLL_MIN_MS <= slots.acquire(HOST, new_token(), LONG_LEASE_MS) <= POLL_MAX_MS
    assert 10_000 < client.pttl(slot_key(HOST)) <= 12_000  # a dead host leaves nothing behind
    assert slots.release(HOST, token, delay_ms=0) is False


def _worker(url: str, redis_url: str, requests: int, delay_ms: int, start: object) -> None:
    """One crawl worker: acquire, GET, release, `requests` times."""
    slots = HostSlots(redis.Redis.from_url(redis_url))
    start.wait(timeout=30)  # type: ignore[attr-defined]
    for _ in range(requests):
        token = new_token()
        _wait_until_acquired(slots, "127.0.0.1", token, LONG_LEASE_MS)
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                answer.read()
        finally:  # a failed fetch must not leave the others waiting out the lease
            assert slots.release("127.0.0.1", token, delay_ms)


def test_four_processes_never_send_a_host_two_requests_within_its_delay(redis_server, tmp_path):
    delay, answer_takes, workers, each = 0.3, 0.35, 4, 5
    context = multiprocessing.get_context("spawn")  # no fork of a process running server threads
    with FeedServer(tmp_path) as server:
        url = server.script("/slow", Reply(body=b"ok", delay=answer_takes))
        start = context.Barrier(workers)
        processes = [
            context.Process(
                target=_worker, args=(url, redis_server.url, each, int(delay * 1000), start)
            )
            for _ in range(workers)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=120)
        assert [p.exitcode for p in processes] == [0] * workers
        arrivals = sorted(seen.at for seen in server.requests_for("/slow"))
    assert len(arrivals) == workers * each
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    # None overlap: each request came after the one before had been answered...
    assert min(gaps) >= answer_takes - CLOCKS, gaps
    # ...and the delay ran from that answer, so no two are closer than the delay either.
    assert min(gaps) >= answer_takes + delay - CLOCKS, gaps


def _crawler(**settings: object):
    crawler = get_crawler(settings_dict=settings)
    # A crawl's engine gives Scrapy's download slot of a request; here, its host (the default).
    slot_key = lambda request: urlparse_cached(request).hostname  # noqa: E731
    crawler.engine = SimpleNamespace(downloader=SimpleNamespace(get_slot_key=slot_key))
    return crawler


def test_the_middleware_is_not_configured_outside_a_worker():
    with pytest.raises(NotConfigured):
        SharedSlotMiddleware.from_crawler(_crawler())
    with pytest.raises(NotConfigured):
        SharedSlotMiddleware.from_crawler(_crawler(CROVIA_REDIS_URL="redis://127.0.0.1:1/0"))
    with pytest.raises(NotConfigured):
        SharedSlotMiddleware.from_crawler(
            _crawler(CROVIA_REDIS_URL="redis://127.0.0.1:1/0", CROVIA_REDIS_ROLE="sequencer")
        )


def test_the_middleware_holds_the_slot_from_request_to_response(redis_server):
    """Two requests to one host through two workers' middlewares: the second passes only after
    the first's response and the host's delay (DOWNLOAD_SLOTS beats DOWNLOAD_DELAY)."""
    settings = {
        "CROVIA_REDIS_URL": redis_server.url,
        "CROVIA_REDIS_ROLE": "worker",
        "DOWNLOAD_DELAY": 5.0,
        "DOWNLOAD_SLOTS": {HOST: {"delay": 0.2}},
    }

    async def scenario() -> float:
        one, two = (SharedSlotMiddleware.from_crawler(_crawler(**settings)) for _ in range(2))
        first = Request(f"https://{HOST}/feed.xml")
        second = Request(f"https://{HOST}/other.xml")
        await one.process_request(first)
        assert await two.slots.acquire(HOST, new_token(), LONG_LEASE_MS) > 0  # held by the first
        waiting = asyncio.create_task(two.process_request(second))
        released_at = time.monotonic()
        await one.process_response(first, Response(first.url))
        assert TOKEN_META not in first.meta
        await waiting
        passed_after = time.monotonic() - released_at
        assert second.meta[TOKEN_META][0] == HOST
        await two.process_exception(second, ConnectionError("refused"))
        assert TOKEN_META not in second.meta
        for middleware in (one, two):
            await middleware.engine_stopped()
        return passed_after

    assert run(scenario()) >= 0.2 - CLOCKS  # in a thread of its own: tests/asyncrun.py
    assert redis_server.client().hget(slot_key(HOST), "holder") is None
