"""A fetched feed body becomes feedparser entries, or a clear reason why it does not.

Feed bodies are untrusted. A document that declares DTD entities is refused whole (entity bombs and
external entities have no place in a feed, and feedparser would leave `&name;` garbage in the text),
and so is one using an entity it does not define (from an external DTD, which is never fetched);
a document that is not a feed (an HTML page, a 200 with nothing) is reported; a truncated document
keeps only the entries whose closing tag arrived, so nothing half-parsed goes on to the ledger.
A malformed but complete feed (feedparser's `bozo`) is data, not an exception: its entries are kept
and the reason is recorded.
"""

from __future__ import annotations

import re
import xml.sax
from dataclasses import dataclass, field
from typing import Any

import feedparser

# `<!ENTITY` in UTF-8/ASCII or UTF-16 (either byte order): the DTD comes before the root element.
_ENTITY_DECL = re.compile(rb"<\x00?!\x00?E\x00?N\x00?T\x00?I\x00?T\x00?Y", re.I)
_DTD_WINDOW = 64 * 1024
_ENTRY_CLOSE = re.compile(rb"</(?:[\w.-]+:)?(?:item|entry)\s*>")


@dataclass
class ParsedFeed:
    """What a feed body held: complete entries, the format, and every problem met on the way."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""
    error: str = ""  # why the feed gave nothing, or what was wrong with it ("" if clean)
    truncated_entries: int = 0  # entries parsed from a truncated document and left out


def parse_body(body: bytes, headers: dict[str, str]) -> ParsedFeed:
    """Parse `body` with the response `headers` (so the charset resolves). Never raises."""
    if _ENTITY_DECL.search(body[:_DTD_WINDOW]):
        return ParsedFeed(error="refused: the document declares DTD entities (entity bomb or XXE)")
    parsed = feedparser.parse(body, response_headers=headers, sanitize_html=True)
    result = ParsedFeed(entries=list(parsed.entries), version=parsed.get("version", ""))
    problem = _describe(parsed.get("bozo_exception")) if parsed.get("bozo") else ""
    if not result.version and not result.entries:
        kind = headers.get("content-type", "no content-type")
        result.error = f"not a feed ({kind})" + (f": {problem}" if problem else "")
        return result
    result.error = problem
    if isinstance(parsed.get("bozo_exception"), xml.sax.SAXParseException):
        if "undefined entity" in str(parsed["bozo_exception"]):
            # An entity from an external DTD (never fetched): the text would keep `&name;`.
            return ParsedFeed(version=result.version, error=f"refused: {problem}")
        _drop_unclosed(result, body)
    return result


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    where = ""
    if isinstance(exc, xml.sax.SAXParseException):
        where = f" at line {exc.getLineNumber()}, column {exc.getColumnNumber()}"
    return f"{type(exc).__name__}: {exc}{where}"


def _drop_unclosed(result: ParsedFeed, body: bytes) -> None:
    # feedparser's loose fallback also returns an entry cut off mid-way; only closed ones are whole.
    closed = len(_ENTRY_CLOSE.findall(body))
    if closed < len(result.entries):
        result.truncated_entries = len(result.entries) - closed
        result.entries = result.entries[:closed]
