"""The XML prolog of an untrusted body: does it declare an entity before the root element starts?

The prolog is everything before the root element's start tag: the XML declaration, comments,
processing instructions and the DOCTYPE with its internal subset. All of it is read, however long
(a comment of any size cannot hide a declaration behind it), token by token, so a `<rss>` written
inside a comment or a quoted literal is not taken for the root element. ASCII-compatible encodings
are read as bytes; UTF-16 and UTF-32 (told by their byte-order mark or by the zero bytes around the
first `<`, as XML's Appendix F does) are decoded first. A body in another encoding (EBCDIC) is not
read here: expat's own entity errors refuse it later (crovia_spider/feed/body.py).
"""

from __future__ import annotations

import codecs
import re

_ENTITY = re.compile(rb"<!ENTITY", re.I)
# The declarations a prolog may hold besides comments and processing instructions.
_KNOWN = re.compile(rb"<!(?:DOCTYPE|ELEMENT|ATTLIST|NOTATION)\b", re.I)
# A markup declaration up to its `>`, or up to the `[` that opens a DOCTYPE's internal subset (whose
# declarations are then read one by one); quoted literals may hold `<`, `>` and `[`. Possessive
# quantifiers: no backtracking, however long the input.
_DECLARATION = re.compile(rb"""<!(?:[^"'>\[]++|"[^"]*+"|'[^']*+')*+[>\[]""")
# Byte-order marks and their codecs, UTF-32 first (its little-endian mark begins with UTF-16's).
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_WIDE = tuple((bom, codec) for bom, codec in BOMS if codec != "utf-8")


def declares_entities(body: bytes) -> bool:
    """True when the prolog of `body` holds an `<!ENTITY` declaration.

    A construct left open (a comment, a declaration without its end) or one a prolog cannot hold
    (`<![CDATA[`) makes the rest of the body prolog: it is searched whole, so a broken document
    errs on the side of refusal.
    """
    data = ascii_compatible(body)
    pos = data.find(b"<")
    while pos >= 0:
        if data.startswith(b"<!--", pos):
            end = _after(data, b"-->", pos + 4)
        elif data.startswith(b"<?", pos):
            end = _after(data, b"?>", pos + 2)
        elif data.startswith(b"<!", pos):
            if _ENTITY.match(data, pos):
                return True
            match = _DECLARATION.match(data, pos) if _KNOWN.match(data, pos) else None
            end = match.end() if match else -1
        else:
            return False  # the root element's start tag: the prolog is over
        if end < 0:
            return _ENTITY.search(data, pos) is not None
        pos = data.find(b"<", end)
    return False


def declares_entities_anywhere(body: bytes) -> bool:
    """True when `<!ENTITY` occurs anywhere in `body` (for a document expat could not parse)."""
    return _ENTITY.search(ascii_compatible(body)) is not None


def _after(data: bytes, terminator: bytes, start: int) -> int:
    found = data.find(terminator, start)
    return found + len(terminator) if found >= 0 else -1


def ascii_compatible(body: bytes) -> bytes:
    """`body`, or its UTF-8 re-encoding when it is UTF-16 or UTF-32 (markup then reads as ASCII)."""
    for bom, codec in _WIDE:
        if body.startswith(bom):
            return body[len(bom) :].decode(codec, "replace").encode("utf-8")
    head = body[:4]
    if b"\x00" not in head:
        return body
    if head.startswith(b"\x00\x00"):
        codec = "utf-32-be"
    elif head.endswith(b"\x00\x00") and len(head) == 4 and head[1:2] == b"\x00":
        codec = "utf-32-le"
    else:
        codec = "utf-16-be" if head.startswith(b"\x00") else "utf-16-le"
    return body.decode(codec, "replace").encode("utf-8")
