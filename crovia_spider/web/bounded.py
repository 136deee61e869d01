"""Bounds of the HTTP servers on Twisted: request bodies, the time to read a request, and how
many connections are open (`crovia serve`, `crovia witness serve`).

Request bodies refused before they are read: Twisted's Request with a size limit.

twisted.web keeps a request body in memory below 100,000 declared bytes and in a temporary file
above (and for every chunked body), whatever its size, before any resource sees it. A
BoundedRequest keeps at most `max_body` bytes, in memory: a Content-Length over the limit, or a
chunked body once it passes the limit (or at all when the limit is 0), is answered at once with
413 and the connection closed; nothing is written to disk and nothing reaches the resource.
`crovia serve` takes no body at all; `crovia witness serve` at most 64 KiB.

A deadline to read each request, and a ceiling on open connections: `BoundedSite`. Twisted's only
clock on a connection is its idle timeout (60 s), and every byte received starts it again, so a
client sending one byte of its request head every 20 s holds a connection, and its memory and
file descriptor, for ever; a few hundred such clients hold the server. A BoundedSite's channel
gives each request `request_seconds` to arrive whole (its head, and its body where one is taken),
counted from the connection's start, or from the end of the previous response on a kept-alive
connection, and never reset by bytes: past it the client gets 408 and the connection is closed
(aborted `ABORT_SECONDS` later if the 408 cannot even be written). And the site keeps at most
`max_connections` open, at most `max_per_address` from one address: a connection past either is
closed as soon as it is accepted, before a byte is read.
"""

from __future__ import annotations

from collections import Counter
from io import BytesIO
from typing import Any

from twisted.web import http, server

# Defaults of `crovia serve` and `crovia witness serve` (docs/verifier.md, "Serving"): a request
# head is one packet for any client; a browser opens at most 6 connections to a host.
REQUEST_SECONDS = 20.0
MAX_CONNECTIONS = 256
MAX_PER_ADDRESS = 32
# How long a connection closed at its deadline may take to send its 408 before it is aborted.
ABORT_SECONDS = 5
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 31\r\nConnection: close\r\n\r\nthe request took too long to send\n"
)


class BoundedRequest(server.Request):
    """A Request whose body is at most `max_body` bytes (class attribute; see `limited`)."""

    max_body = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        self.content = BytesIO()
        chunked = length is None
        if (chunked and self.max_body == 0) or (not chunked and length > self.max_body):
            self._refuse()

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        if self.content.tell() + len(data) > self.max_body:
            self._refuse()
            return
        self.content.write(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if not self._refused:
            super().requestReceived(command, path, version)

    def _refuse(self) -> None:
        self._refused = True
        self.content = BytesIO()
        self.requestHeaders.removeHeader(b"expect")  # no "100 Continue" after the refusal
        body = f"a request body is at most {self.max_body} bytes\n".encode()
        head = (
            b"HTTP/1.1 413 Content Too Large\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        )
        transport = self.channel.transport
        transport.write(head + body)
        transport.loseConnection()


def limited(max_body: int) -> type[BoundedRequest]:
    """A BoundedRequest class for a Site's `requestFactory` that takes at most `max_body` bytes."""
    return type("BoundedRequest", (BoundedRequest,), {"max_body": max_body})


class DeadlineChannel(http.HTTPChannel):
    """An HTTPChannel that gives each request `request_seconds` to arrive whole (set by
    BoundedSite.buildProtocol), whatever bytes come meanwhile."""

    request_seconds = REQUEST_SECONDS
    abortTimeout = ABORT_SECONDS
    _deadline: Any = None

    def connectionMade(self) -> None:
        super().connectionMade()
        self._arm()

    def allContentReceived(self) -> None:
        self._disarm()  # the request is whole: the response has no deadline of ours
        super().allContentReceived()

    def requestDone(self, request: server.Request) -> None:
        self._arm()  # first: a pipelined request read at once below disarms it again
        super().requestDone(request)

    def connectionLost(self, reason: Any) -> None:
        self._disarm()
        self.factory.connection_closed(self)
        super().connectionLost(reason)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.callLater(self.request_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None and self._deadline.active():
            self._deadline.cancel()
        self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not getattr(self.transport, "disconnecting", False):
            self.transport.write(_TIMED_OUT)
        self.timeoutConnection()  # closes, and aborts abortTimeout later if still open


class BoundedSite(server.Site):
    """A Site whose requests have a deadline (`request_seconds`) and whose open connections are
    at most `max_connections`, `max_per_address` from one address (this module's docstring)."""

    protocol = DeadlineChannel

    def __init__(
        self,
        resource: Any,
        *,
        request_seconds: float = REQUEST_SECONDS,
        max_connections: int = MAX_CONNECTIONS,
        max_per_address: int = MAX_PER_ADDRESS,
        **kwargs: Any,
    ) -> None:
        super().__init__(resource, **kwargs)
        self.request_seconds = request_seconds
        self.max_connections = max_connections
        self.max_per_address = max_per_address
        self.open_by_address: Counter[str] = Counter()

    def buildProtocol(self, addr: Any) -> DeadlineChannel | None:
        """A channel for the connection from `addr`, or None (Twisted then closes the socket at
        once) when the site holds its maximum, in all or from that address."""
        host = getattr(addr, "host", "")
        if (
            self.open_by_address.total() >= self.max_connections
            or self.open_by_address[host] >= self.max_per_address
        ):
            return None
        channel = super().buildProtocol(addr)
        channel.request_seconds = self.request_seconds
        channel.peer_host = host
        self.open_by_address[host] += 1
        return channel

    def connection_closed(self, channel: DeadlineChannel) -> None:
        """Called by a channel once: its connection is gone."""
        host = channel.peer_host
        self.open_by_address[host] -= 1
        if self.open_by_address[host] <= 0:
            del self.open_by_address[host]
