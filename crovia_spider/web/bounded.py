"""Request bodies refused before they are read: Twisted's Request with a size limit.

twisted.web keeps a request body in memory below 100,000 declared bytes and in a temporary file
above (and for every chunked body), whatever its size, before any resource sees it. A
BoundedRequest keeps at most `max_body` bytes, in memory: a Content-Length over the limit, or a
chunked body once it passes the limit (or at all when the limit is 0), is answered at once with
413 and the connection closed; nothing is written to disk and nothing reaches the resource.
`crovia serve` takes no body at all; `crovia witness serve` at most 64 KiB (issue 19).
"""

from __future__ import annotations

from io import BytesIO

from twisted.web import server


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
