"""Redis clients for the cluster (redis-py), and the consumer groups every stream needs.

A client answers in bytes (results carry bodies); text is decoded where it is read. A Redis that
cannot be reached when a command starts is a ClusterError naming the URL without its password, so
a crawl stops with one line, never a traceback.

A daemon and its crawls (`connect(url, ride_out=True)`) ride out a Redis that goes away later (a
restart, a failover): every command is tried again, pausing RETRY_BASE seconds, doubling up to
RETRY_CAP, for as long as Redis is gone, and the outage is logged once when it starts and once
when it ends. Streams are persisted by Redis (the append-only file), so nothing is lost that Redis
kept; a command that ran but whose answer was lost is sent again, which every step of the cluster
allows (a result sent twice counts once, an acknowledgement or a heartbeat repeats harmlessly).
A daemon asked to stop (`stop()` true) waits for no Redis that may never come back: the command
under way raises its error at the next try, and the daemon ends without it (its claim and
heartbeat expire by themselves; a job or run it held is taken up again).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from crovia_spider.exceptions import ConfigError

log = logging.getLogger(__name__)
# The pause before trying a command again while Redis is gone: doubling from RETRY_BASE seconds up
# to RETRY_CAP, so a restart costs well under a second and a long outage one try every few seconds.
RETRY_BASE = 0.05
RETRY_CAP = 5.0
# A command of the CLI (`crawl --redis` waiting for its answer, `crovia workers`) gives up after
# this many tries (about 15 s): long enough for a restart, short enough to say Redis is gone.
CLI_RETRIES = 8


class ClusterError(ConfigError):
    """Redis cannot be used (unreachable, refused, not a Redis), or the cluster refuses a step."""


def shown(url: str) -> str:
    """`url` with any password replaced by ***, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def _retry(url: str, retries: int, stop: Callable[[], bool] | None = None) -> Any:
    """A redis-py Retry with backoff (`retries` < 0: for ever, or until `stop()` is true) that
    logs an outage once when it starts and once when it ends."""
    from redis.backoff import ExponentialBackoff
    from redis.retry import Retry

    class Outage(Retry):
        down = False

        def call_with_retry(self, do: Any, fail: Any, *args: Any, **kwargs: Any) -> Any:
            def failed(error: Exception, *count: int) -> Any:
                if not self.down and retries != 0:
                    self.down = True
                    until = "until it is back" if retries < 0 else f"up to {retries} times"
                    log.warning("Redis at %s is unreachable (%s): retrying %s",
                                shown(url), error, until)  # fmt: skip
                answer = fail(error, *count)
                if stop is not None and stop():
                    raise error  # asked to stop: no more tries
                return answer

            answer = super().call_with_retry(do, failed, *args, **kwargs)
            if self.down:
                self.down = False
                log.warning("Redis at %s is back", shown(url))
            return answer

    return Outage(ExponentialBackoff(cap=RETRY_CAP, base=RETRY_BASE), retries)


def connect(url: str, ride_out: bool = False, stop: Callable[[], bool] | None = None) -> Any:
    """A redis.Redis of `url` (redis://, rediss://, unix://), checked with a PING (a Redis that
    does not answer then is a ClusterError). Its commands are retried while Redis is unreachable:
    when `ride_out` (a daemon, a daemon's crawl) for ever or until `stop()` is true, else
    CLI_RETRIES times."""
    import redis

    try:
        client = redis.Redis.from_url(
            url,
            socket_timeout=30,
            socket_connect_timeout=10,
            retry=_retry(url, 0),  # one try: a Redis not there at the start is a usage error
        )
        client.ping()
        client.set_retry(_retry(url, CLI_RETRIES))
        if ride_out:
            client.set_retry(_retry(url, -1, stop))
    except (ValueError, redis.RedisError) as exc:
        raise ClusterError(f"Redis at {shown(url)} cannot be used: {exc}") from None
    return client


def ensure_group(client: Any, stream: str, group: str) -> None:
    """Create consumer group `group` of `stream` (and the stream), reading from its start; an
    existing group is left as it is."""
    import redis

    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def job_done(pipe: Any, job_id: str) -> None:
    """Queue on `pipe` what ends a job: acknowledged in the workers' group, and deleted from the
    jobs stream (a stream keeps acknowledged messages otherwise)."""
    from crovia_spider.cluster import keys

    pipe.xack(keys.JOBS, keys.JOBS_GROUP, job_id)
    pipe.xdel(keys.JOBS, job_id)


def text(value: Any) -> str:
    """A Redis answer (bytes or None) as text ("" for None)."""
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
