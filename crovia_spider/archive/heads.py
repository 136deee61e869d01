"""The HTTP response head a WARC export holds, rebuilt from the kept one (docs/archives.md).

A capture keeps the response head as received (`response_head_sha256`: Content-Encoding and
Transfer-Encoding there) and the body as Scrapy gave it, after both decodings (`body_sha256`). A
WARC response record whose head still claimed `Content-Encoding: gzip` over a decoded payload
would be read wrong by every replay tool (warcio, pywb and ReplayWeb.page decode it again), so the
head is rewritten: the coding headers go, `Content-Length` is the payload's length, and every
value removed or replaced is kept under `X-Crovia-Original-<Name>`. The kept head blob itself
stays the evidence; the rewritten head is what replays. Parsing and serialising are warcio's.

A kept head holds what the server sent, and a server may send bytes no header may hold (RFC 9110
section 5.5: NUL, CR, LF, the other controls but HTAB, and DEL). Copied into a WARC they make
replay tools fail (pywb passes a NUL on and a browser refuses the answer), so `escape_head`
rewrites each line of a head before warcio parses it: in a value, each such byte is a space, as
RFC 9110 tells a recipient to do, and the value as received is added as
`X-Crovia-Escaped-<Name>`, percent-encoded; a name that is no token goes whole, into
`X-Crovia-Escaped-Header`. A status or request line holding one is refused.
"""

from __future__ import annotations

import re
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
ESCAPED_PREFIX = "X-Crovia-Escaped-"
ESCAPED_HEADER = ESCAPED_PREFIX + "Header"
# Bytes a header field may not hold (RFC 9110 5.5: CR, LF and NUL, and the other controls; HTAB
# is allowed), nor a status or request line.
FORBIDDEN = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
# A field name: RFC 9110's token.
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# What a percent-encoded value keeps as it is: printable ASCII but `%`.
_PLAIN = frozenset(range(0x20, 0x7F)) - {ord("%")}


def replay_head(kept: bytes, payload_length: int, where: str) -> StatusAndHeaders:
    """The head of the WARC response record for a kept response head `kept` and a decoded
    payload of `payload_length` bytes (this module's docstring). Raises ExportRefused, naming
    `where`, when `kept` is not an HTTP response head."""
    try:
        head = _RESPONSE_PARSER.parse(BytesIO(escape_head(kept, where, "response")))
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


def escape_head(kept: bytes, where: str, what: str) -> bytes:
    """`kept` (CRLF lines ending in an empty line) with every byte RFC 9110 forbids in a field
    taken out as this module's docstring says; the same bytes when there is none. Raises
    ExportRefused, naming `where`, when the first line (the status or request line) holds one."""
    lines = kept.split(b"\r\n")
    if not FORBIDDEN.search(b"".join(lines)):
        return kept
    if FORBIDDEN.search(lines[0]):
        raise ExportRefused(f"{where}: the kept {what} line holds a control character")
    out, escaped = [lines[0]], []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not FORBIDDEN.search(line):
            out.append(line)
        elif colon and TOKEN.fullmatch(name):
            out.append(name + b": " + FORBIDDEN.sub(b" ", value).strip(b" \t"))
            escaped.append(ESCAPED_PREFIX.encode() + name + b": " + _percent(value.strip(b" \t")))
        else:
            escaped.append(ESCAPED_HEADER.encode() + b": " + _percent(line))
    while out and out[-1] == b"":
        out.pop()
    return b"\r\n".join([*out, *escaped, b"", b""])


def _percent(value: bytes) -> bytes:
    """`value` with `%` and every byte but printable ASCII written %XX (uppercase hex)."""
    return b"".join(bytes((b,)) if b in _PLAIN else b"%%%02X" % b for b in value)
