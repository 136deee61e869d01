"""The HTTP response head a WARC export holds, rebuilt from the kept one (docs/archives.md).

A capture keeps the response head as received (`response_head_sha256`: Content-Encoding and
Transfer-Encoding there) and the body as Scrapy gave it, after both decodings (`body_sha256`). A
WARC response record whose head still claimed `Content-Encoding: gzip` over a decoded payload
would be read wrong by every replay tool (warcio, pywb and ReplayWeb.page decode it again), so the
head is rewritten: the coding headers go, `Content-Length` is the payload's length, and every
value removed or replaced is kept under `X-Crovia-Original-<Name>`. The kept head blob itself
stays the evidence; the rewritten head is what replays. Parsing and serialising are warcio's.
"""

from __future__ import annotations

from io import BytesIO

from warcio.recordloader import ArcWarcRecordLoader
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParserException

from crovia_spider.exceptions import ExportRefused

ORIGINAL_PREFIX = "X-Crovia-Original-"
# A coding the kept body no longer has: it was undone before the body was kept.
DECODED = ("Content-Encoding", "Transfer-Encoding")
LENGTH = "Content-Length"
# warcio's own parser of a response record's head: a status line of HTTP/1.0 or HTTP/1.1, the
# form a WARC response record holds (and what Scrapy's HTTP/1.1 download handler keeps).
_RESPONSE_PARSER = ArcWarcRecordLoader().http_parser


def replay_head(kept: bytes, payload_length: int, where: str) -> StatusAndHeaders:
    """The head of the WARC response record for a kept response head `kept` and a decoded
    payload of `payload_length` bytes (this module's docstring). Raises ExportRefused, naming
    `where`, when `kept` is not an HTTP response head."""
    try:
        head = _RESPONSE_PARSER.parse(BytesIO(kept))
    except (EOFError, StatusAndHeadersParserException):
        head = None
    if head is None or not head.get_statuscode().isdigit():
        raise ExportRefused(f"{where}: the kept response head is no HTTP response head")
    for name in DECODED:
        values = _take(head, name)
        if values:
            head.add_header(ORIGINAL_PREFIX + name, ", ".join(values))
    lengths = [value for key, value in head.headers if key.lower() == LENGTH.lower()]
    if lengths != [str(payload_length)]:
        _take(head, LENGTH)
        head.add_header(LENGTH, str(payload_length))
        if lengths:
            head.add_header(ORIGINAL_PREFIX + LENGTH, ", ".join(lengths))
    return head


def _take(head: StatusAndHeaders, name: str) -> list[str]:
    """Remove every `name` header from `head`; their values, in order."""
    values = [value for key, value in head.headers if key.lower() == name.lower()]
    while head.remove_header(name):
        pass
    return values
