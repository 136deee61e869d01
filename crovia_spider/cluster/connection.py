"""Redis clients for the cluster (redis-py), and the consumer groups every stream needs.

A client answers in bytes (results carry bodies); text is decoded where it is read. A Redis that
cannot be reached is a ClusterError naming the URL without its password, so a crawl or a daemon
stops with one line, never a traceback.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from crovia_spider.exceptions import ConfigError


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


def connect(url: str) -> Any:
    """A redis.Redis of `url` (redis://, rediss://, unix://), checked with a PING."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_timeout=30, socket_connect_timeout=10)
        client.ping()
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


def text(value: Any) -> str:
    """A Redis answer (bytes or None) as text ("" for None)."""
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
