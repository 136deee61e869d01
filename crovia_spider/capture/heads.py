"""The request and response heads of a capture, kept so a WARC export can be rebuilt from them.

A capture record signs the body as received after content decoding (what Scrapy gives, what is
hashed and kept), and the headers that say what it is; a web archive holds the whole HTTP
exchange. So each capture also keeps, as blobs in `bodies/` named by the record
(`request_head_sha256`, `response_head_sha256`), the request as sent and the response's status
line and headers as received, before content decoding: `CaptureHeadsMiddleware` takes them where
the response leaves the downloader, ahead of Scrapy's HttpCompressionMiddleware (docs/format.md,
"AX.CAPTURE"). Each head is CRLF lines ending in an empty line; header names are as Scrapy keeps
them (title-cased), in the order received, each value of a repeated header on its own line.
`response_fields` reads a kept response head back, with warcio's parser (the one an export
replays it with, crovia_spider/archive/heads.py).
"""

from __future__ import annotations

from http import HTTPStatus
from io import BytesIO
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.http import Response
from warcio.statusandheaders import StatusAndHeadersParser

# Where the heads are put in request.meta (for capture requests only).
HEADS_META = "crovia_capture_heads"
# A head longer than this is cut there (Twisted itself refuses far larger ones).
MAX_HEAD_BYTES = 256 * 1024
# warcio's head parser, any status line accepted (a cluster worker's head is hostile input).
_FIELDS = StatusAndHeadersParser([], verify=False)


def _lines(headers: Any) -> list[bytes]:
    out = []
    for name, values in headers.items():
        for value in values:
            out.append(bytes(name) + b": " + bytes(value) + b"\r\n")
    return out


def request_head(request: Request) -> bytes:
    """`GET /path?query HTTP/1.1`, the Host, then the request's headers as sent."""
    parts = urlsplit(request.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"{request.method} {target} HTTP/1.1\r\n".encode("latin-1", "replace")]
    if b"Host" not in request.headers:
        lines.append(f"Host: {parts.netloc}\r\n".encode("latin-1", "replace"))
    lines.extend(_lines(request.headers))
    return _cut(b"".join(lines) + b"\r\n")


def response_head(response: Response) -> bytes:
    """`HTTP/1.1 200 OK` (the response's protocol when known), then its headers as received."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = ""
    protocol = getattr(response, "protocol", None) or "HTTP/1.1"
    status = f"{protocol} {response.status} {reason}".rstrip() + "\r\n"
    return _cut(status.encode("latin-1", "replace") + b"".join(_lines(response.headers)) + b"\r\n")


def response_fields(kept: bytes) -> dict[str, str]:
    """The header fields of the kept response head `kept`, names in lower case, a repeated
    header's last value ({} when there is no head)."""
    try:
        head = _FIELDS.parse(BytesIO(kept))
    except EOFError:
        return {}
    return {name.lower(): value for name, value in head.headers}


def _cut(head: bytes) -> bytes:
    return head if len(head) <= MAX_HEAD_BYTES else head[: MAX_HEAD_BYTES - 2] + b"\r\n"


class CaptureHeadsMiddleware:
    """Takes the heads of a capture's responses, and the Content-Encoding, before content
    decoding (DOWNLOADER_MIDDLEWARES 595: process_response runs from the downloader outwards, so
    before HttpCompression at 590).
    Only requests marked with HEADS_META are touched; a redirect's hop is overwritten by the
    next, so the heads are those of the final response."""

    def process_response(self, request: Request, response: Response, spider: Any = None) -> Any:
        if HEADS_META in request.meta:
            encoding = response.headers.get(b"Content-Encoding") or b""
            request.meta[HEADS_META] = (
                request_head(request),
                response_head(response),
                encoding.decode("latin-1") if len(encoding) <= 1024 else "",
            )
        return response
