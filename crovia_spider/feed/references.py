"""Character and entity references that XML cannot read, made readable before feedparser sees them.

Two kinds of reference in real feeds break parsing of the whole document:

- an HTML named entity (`&nbsp;`, `&eacute;`, `&mdash;`) in a document that defines none: XML
  knows only its five (`&amp;` ...). Each becomes the numeric reference of the characters HTML5
  gives it, so expat reads the document strictly (feedparser's loose parser resolves them the same
  way). Entity *declarations* never get this far: crovia_spider/feed/prolog.py refuses them, and a
  name that is no HTML entity is still undefined, so body.py refuses the document.
- a numeric reference to something that is no XML character (`&#xD800;`, `&#x110000;`, `&#0;`):
  feedparser raises on some of them and every entry of the feed would be lost. Each becomes
  `&#xFDD0;`, a Unicode noncharacter that XML accepts and no text needs (INVALID_MARK); the entry
  that holds one is then dropped alone, with its reason (crovia_spider/feed/entries.py).

CDATA sections and comments are left as they are (a reference there is text, read later as HTML).
Only ASCII-compatible bodies are rewritten (every byte of a reference is ASCII, which no multi-byte
character of UTF-8, Latin-1, Shift_JIS or GB18030 can fake); a UTF-16 or UTF-32 body is returned
unchanged, and the errors above then refuse or fail it whole, as recorded failures.
"""

from __future__ import annotations

import re
from html.entities import html5

INVALID_MARK = "\ufdd0"
INVALID_REF = b"&#xFDD0;"
_XML_ENTITIES = frozenset((b"amp", b"lt", b"gt", b"quot", b"apos"))
_REFERENCE = re.compile(
    rb"<!\[CDATA\[.*?\]\]>|<!--.*?-->"  # left alone
    rb"|&#[xX](?P<hex>[0-9A-Fa-f]+);|&#(?P<dec>[0-9]+);|&(?P<name>[A-Za-z][A-Za-z0-9]{0,31});",
    re.S,
)


def resolve_references(body: bytes) -> bytes:
    """`body` with HTML named entities and invalid numeric references rewritten (see above)."""
    if b"&" not in body or b"\x00" in body[:4]:
        return body
    return _REFERENCE.sub(_rewrite, body)


def _rewrite(match: re.Match[bytes]) -> bytes:
    if match["name"] is not None:
        return _named(match)
    digits = match["hex"] or match["dec"]
    if digits is None:
        return match[0]  # a CDATA section or a comment
    if len(digits) > 8:
        return INVALID_REF
    return match[0] if _is_xml_char(int(digits, 16 if match["hex"] else 10)) else INVALID_REF


def _named(match: re.Match[bytes]) -> bytes:
    name = match["name"]
    value = None if name in _XML_ENTITIES else html5.get(name.decode("ascii") + ";")
    if value is None:
        return match[0]
    return b"".join(b"&#%d;" % ord(char) for char in value)


def _is_xml_char(code: int) -> bool:
    """XML 1.0's Char production."""
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )
