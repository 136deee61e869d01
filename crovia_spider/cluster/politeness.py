"""A host's politeness slot shared by every worker of a cluster, in Redis (docs/cluster.md).

Each worker's `scrapy crawl` keeps its own per-host delay, which says nothing about the other
workers: N workers would send a host N times the rate. So a worker also takes the host's slot in
Redis, a lease, before each request and gives it back when the response (or the failure) comes:

- `acquire` takes the lease if nobody holds it and the host's next allowed time has come, else
  says how long to wait (polled, so a lease given back early is seen early);
- `release` gives the lease back only if it is still ours, and sets the next allowed time to now
  plus the host's delay.

So the next request to a host starts only after the previous one's response came AND the delay
passed: the host never sees two requests closer than the delay, nor two at once, whatever each
worker queues locally. Both steps are one Lua script each (atomic in Redis) and read the time from
Redis (`TIME`), so the workers' clocks never matter. A worker that dies holding a lease blocks its
host only until the lease's PX runs out (DOWNLOAD_TIMEOUT plus a margin).

The slot is one hash, `keys.slot_key(host)`: while held, `holder` (the token) with the lease as the
key's expiry; between requests, `next` (Redis time in microseconds) with an expiry a little past
it, so hosts no longer crawled leave nothing behind.

`SharedSlotMiddleware` does this for a worker's crawl (CROVIA_REDIS_ROLE=worker); in any other
crawl it is not configured and Scrapy leaves it out.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from crovia_spider.cluster.connection import RETRY_BASE, RETRY_CAP
from crovia_spider.cluster.keys import slot_key

if TYPE_CHECKING:  # redis is imported by a cluster worker's crawl only: every crawl loads this
    import redis
    import redis.asyncio

HOLDER = "holder"
NEXT = "next"
# Polling bounds of a waiting acquirer (ms): often enough to see a lease given back, rarely enough
# that many waiting workers do not keep Redis busy.
POLL_MIN_MS = 20
POLL_MAX_MS = 250
# How long a host's next allowed time outlives the delay, so a poll never finds it already gone.
NEXT_MARGIN_MS = 1000
# A lease covers the download (its timeout), the local delay Scrapy adds, and this margin.
LEASE_MARGIN_S = 10.0
TOKEN_META = "crovia_shared_slot"

# KEYS[1] the slot; ARGV token, lease_ms, poll_min_ms, poll_max_ms. 0: taken; else ms to wait.
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local wait_ms = 0
if redis.call('HEXISTS', KEYS[1], 'holder') == 1 then
  wait_ms = redis.call('PTTL', KEYS[1])
else
  local next_us = tonumber(redis.call('HGET', KEYS[1], 'next'))
  if next_us and now < next_us then
    wait_ms = math.ceil((next_us - now) / 1000)
  end
  if wait_ms <= 0 then
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'holder', ARGV[1])
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 0
  end
end
return math.max(tonumber(ARGV[3]), math.min(wait_ms, tonumber(ARGV[4])))
"""

# KEYS[1] the slot; ARGV token, delay_ms, next_margin_ms. 1: released; 0: not ours (any more).
RELEASE = """
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
local delay_ms = tonumber(ARGV[2])
if delay_ms > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('HSET', KEYS[1], 'next', now + delay_ms * 1000)
  redis.call('PEXPIRE', KEYS[1], delay_ms + tonumber(ARGV[3]))
end
return 1
"""


def new_token() -> str:
    """A token naming one lease (one request of one worker)."""
    return uuid.uuid4().hex


class HostSlots:
    """The hosts' slots through a blocking redis.Redis (tools, tests); crawls use AsyncHostSlots."""

    def __init__(self, client: redis.Redis) -> None:
        self._acquire = client.register_script(ACQUIRE)
        self._release = client.register_script(RELEASE)

    def acquire(self, host: str, token: str, lease_ms: int) -> int:
        """Take `host`'s slot for `token` for at most `lease_ms`: 0 when taken, else the
        milliseconds to wait before asking again (POLL_MIN_MS..POLL_MAX_MS)."""
        return int(self._acquire(keys=[slot_key(host)], args=_acquire_args(token, lease_ms)))

    def release(self, host: str, token: str, delay_ms: int) -> bool:
        """Give `host`'s slot back and let the next request start `delay_ms` from now; False (and
        nothing changed) when `token` does not hold it, e.g. its lease ran out."""
        return bool(self._release(keys=[slot_key(host)], args=_release_args(token, delay_ms)))


class AsyncHostSlots:
    """The same slots through a redis.asyncio.Redis, for code running on the reactor's loop."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        self._acquire = client.register_script(ACQUIRE)
        self._release = client.register_script(RELEASE)

    async def acquire(self, host: str, token: str, lease_ms: int) -> int:
        """As HostSlots.acquire."""
        return int(await self._acquire(keys=[slot_key(host)], args=_acquire_args(token, lease_ms)))

    async def wait_for(self, host: str, token: str, lease_ms: int) -> None:
        """Acquire `host`'s slot, sleeping (without blocking the loop) until it is ours."""
        while (wait_ms := await self.acquire(host, token, lease_ms)) > 0:
            await asyncio.sleep(wait_ms / 1000)

    async def release(self, host: str, token: str, delay_ms: int) -> bool:
        """As HostSlots.release."""
        return bool(await self._release(keys=[slot_key(host)], args=_release_args(token, delay_ms)))


def _acquire_args(token: str, lease_ms: int) -> list[Any]:
    if lease_ms <= 0:
        raise ValueError(f"a lease must last some time, not {lease_ms} ms")
    return [token, lease_ms, POLL_MIN_MS, POLL_MAX_MS]


def _release_args(token: str, delay_ms: int) -> list[Any]:
    return [token, max(0, delay_ms), NEXT_MARGIN_MS]


class SharedSlotMiddleware:
    """Downloader middleware of a worker's crawl: each request holds its host's shared slot from
    before its download until its response or failure (see the module).

    The delay is the one the local crawl uses for the request's download slot:
    DOWNLOAD_SLOTS[slot]["delay"], else DOWNLOAD_DELAY (0 still allows one request at a time).
    Redis is reached through redis.asyncio on the asyncio reactor's loop (Scrapy's default, which
    this project keeps): waiting requests cost no thread, and Twisted's thread pool stays free for
    DNS lookups, which deferToThread calls would otherwise queue behind.
    """

    def __init__(self, crawler: Any, client: redis.asyncio.Redis) -> None:
        self.crawler = crawler
        self.client = client
        self.slots = AsyncHostSlots(client)

    @classmethod
    def from_crawler(cls, crawler: Any) -> SharedSlotMiddleware:
        settings = crawler.settings
        url = settings.get("CROVIA_REDIS_URL")
        if not url or settings.get("CROVIA_REDIS_ROLE") != "worker":
            # Without a message: Scrapy would log it as a warning in every local crawl.
            raise NotConfigured
        # Rides out a Redis restart as the daemons do (crovia_spider/cluster/connection.py):
        # a request waiting for its host's turn waits for Redis too, rather than failing.
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff

        retry = Retry(ExponentialBackoff(cap=RETRY_CAP, base=RETRY_BASE), -1)
        client = redis.asyncio.Redis.from_url(url, socket_timeout=30, retry=retry)
        middleware = cls(crawler, client)
        crawler.signals.connect(middleware.engine_stopped, signal=signals.engine_stopped)
        return middleware

    async def process_request(self, request: Request) -> None:
        host, token = self.slot_of(request), new_token()
        await self.slots.wait_for(host, token, self._lease_ms(request, host))
        request.meta[TOKEN_META] = (host, token)

    async def process_response(self, request: Request, response: Response) -> Response:
        await self._release(request)
        return response

    async def process_exception(self, request: Request, exception: BaseException) -> None:
        await self._release(request)

    async def engine_stopped(self) -> None:
        await self.client.aclose()

    def slot_of(self, request: Request) -> str:
        """Scrapy's download slot of `request`: its host, or meta["download_slot"] (the key of
        DOWNLOAD_SLOTS, and of the local delay this slot adds to)."""
        return self.crawler.engine.downloader.get_slot_key(request)

    def delay_of(self, slot: str) -> float:
        """The local crawl's delay for `slot`, in seconds."""
        settings = self.crawler.settings
        configured = settings.getdict("DOWNLOAD_SLOTS").get(slot, {})
        if "delay" in configured:
            return float(configured["delay"])
        return settings.getfloat("DOWNLOAD_DELAY")

    def _lease_ms(self, request: Request, slot: str) -> int:
        default = self.crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        timeout = float(request.meta.get("download_timeout", default))
        return math.ceil((timeout + self.delay_of(slot) + LEASE_MARGIN_S) * 1000)

    async def _release(self, request: Request) -> None:
        # Popped, so a redirect or retry built from this request does not carry a spent token.
        held = request.meta.pop(TOKEN_META, None)
        if held is not None:
            host, token = held
            await self.slots.release(host, token, math.ceil(self.delay_of(host) * 1000))
