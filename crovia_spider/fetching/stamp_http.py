"""The HTTP of `crovia stamp`: one POST or GET to a TSA or calendar, bounded in time and size.

The whole exchange (connect, send, headers, body) must end within `timeout` seconds, so a TSA
that trickles bytes cannot hold a run longer than a silent one: the watchdog the monitor uses
(ledger/monitor/watchdog.py) shuts the socket down at the deadline, however the TSA answers. No
redirects are followed and no proxy is consulted: the request goes to the URL the operator
configured, or fails.
"""

from __future__ import annotations

import http.client
import socket
from urllib.parse import urlsplit

from crovia_spider import __version__
from ledger.exceptions import StampTransportError
from ledger.monitor import Watchdog

MAX_REPLY_BYTES = 1 << 20  # tokens and calendar timestamps are a few KiB


class HttpTransport:
    """`ledger.stamps.stamper.Transport` over http.client."""

    def __init__(self, timeout: float, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes

    def post(self, url: str, body: bytes, *, content_type: str, accept: str) -> bytes:
        """POST `body`; the reply body of a 200. Raises StampTransportError."""
        return self._exchange("POST", url, body, {"Content-Type": content_type, "Accept": accept})

    def get(self, url: str, *, accept: str) -> bytes:
        """GET; the reply body of a 200. Raises StampTransportError (`status` 404 and others)."""
        return self._exchange("GET", url, None, {"Accept": accept})

    def _exchange(self, method: str, url: str, body: bytes | None, headers: dict) -> bytes:
        connection = _connect(url, self.timeout)
        headers = {**headers, "User-Agent": f"crovia-spider/{__version__}"}
        with Watchdog(connection, self.timeout) as watchdog:
            try:
                parts = urlsplit(url)
                target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = _read(response, self.max_bytes)
                if watchdog.fired:  # the body may have been cut short at the deadline
                    raise TimeoutError("the reply did not arrive in time")
            except (OSError, http.client.HTTPException) as exc:
                cause = TimeoutError("the reply did not arrive in time") if watchdog.fired else exc
                raise StampTransportError(f"{method} {url}: {_describe(cause)}") from None
            finally:
                connection.close()
        if response.status != 200:
            text = data[:120].decode("ascii", "replace")
            raise StampTransportError(
                f"{method} {url}: HTTP {response.status} {text!r}", status=response.status
            )
        return data


def _connect(url: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StampTransportError(f"{url!r} is not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.hostname, parts.port, timeout=timeout)


def _read(response: http.client.HTTPResponse, limit: int) -> bytes:
    """The body, at most `limit` bytes (the watchdog bounds the time it takes)."""
    chunks, size = [], 0
    while True:
        chunk = response.read1(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise StampTransportError(f"the reply exceeds {limit} bytes")
        chunks.append(chunk)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return f"timed out ({exc})"
    return f"{type(exc).__name__}: {exc}"
