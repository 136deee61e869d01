"""A fetched feed body becomes feedparser entries, or a clear reason why it does not.

Feed bodies are untrusted. A document that declares DTD entities is refused whole (entity bombs and
external entities have no place in a feed, and feedparser would leave `&name;` garbage in the text):
its whole prolog is read for a declaration first (crovia_spider/prolog.py), and whatever gets past
that is refused on expat's entity errors (an undefined entity, e.g. from an external DTD, which is
never fetched; the input amplification limit; a recursive entity) or, when expat could not parse the
document at all and feedparser's loose parser stepped in, on an `<!ENTITY` anywhere in it.
HTML named entities and numeric references XML cannot read are rewritten first
(crovia_spider/feed/references.py), so a stray `&nbsp;` or `&#xD800;` costs at most its own entry.
A document that is not a feed (an HTML page, a 200 with nothing) is reported; a truncated document
keeps only the entries whose closing tag arrived, so nothing half-parsed goes on to the ledger.
A malformed but complete feed (feedparser's `bozo`) is data, not an exception: its entries are kept
and the reason is recorded. Should feedparser raise all the same, or find no feed in the body, the
feed is unreadable (`failed`), and the entries its body closes are counted as lost
(`lost_entries`), never silently. A refused body is `failed` too, its entries not counted: they were
deliberately not read.
"""

from __future__ import annotations

import functools
import re
import xml.sax
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers.expat import errors as expat_errors

import feedparser
import feedparser.encodings
import feedparser.mixin
import feedparser.urls

from crovia_spider.feed.prolog import (
    BOMS,
    ascii_compatible,
    declares_entities,
    declares_entities_anywhere,
)
from crovia_spider.feed.references import INVALID_MARK, INVALID_REF, resolve_references

# feedparser guesses a body's encoding with chardet whenever chardet (or cchardet) can be imported,
# and the wacz package brings chardet in. A kept body must read the same wherever and whenever it
# is read again (crovia absent and history recount its entries against a signed digest), so it is
# never guessed: a body its declared encoding cannot decode is tried as utf-8, windows-1252, then
# iso-8859-2, as feedparser does without chardet.
feedparser.encodings.lazy_chardet_encoding = None

# Arguments past this many characters are joined anew each time, so a hostile xml:base cannot
# fill the memory of the joins remembered below.
_REMEMBERED_CHARS = 2048


def _remembered(join: Callable[..., str]) -> Callable[..., str]:
    """feedparser's URL `join` (a pure function of its string arguments) with its latest answers
    for short arguments remembered. feedparser tracks xml:base at every start tag by joining the
    document's base URL with itself, six times an RSS item: a quarter of its time. The answers are
    the very strings `join` gives; any exception it raises is raised again, never remembered."""
    cached = functools.lru_cache(maxsize=1024)(join)

    def joined(base: Any, rel: Any = None) -> str:
        if (
            type(base) is str
            and (rel is None or type(rel) is str)
            and len(base) + len(rel or "") <= _REMEMBERED_CHARS
        ):
            return cached(base, rel)
        return join(base, rel)

    return joined


# The names feedparser's parser calls them by (its mixin imports them from feedparser.urls).
feedparser.mixin.make_safe_absolute_uri = _remembered(feedparser.urls.make_safe_absolute_uri)
feedparser.mixin._urljoin = _remembered(feedparser.urls._urljoin)

DECLARES_ENTITIES = "refused: the document declares DTD entities (entity bomb or XXE)"
# expat's messages for trouble with entities: the loose parser's text would hold `&name;` garbage.
_ENTITY_ERRORS = frozenset(
    (
        expat_errors.XML_ERROR_UNDEFINED_ENTITY,
        expat_errors.XML_ERROR_AMPLIFICATION_LIMIT_BREACH,
        expat_errors.XML_ERROR_RECURSIVE_ENTITY_REF,
        expat_errors.XML_ERROR_ASYNC_ENTITY,
        expat_errors.XML_ERROR_BINARY_ENTITY_REF,
        expat_errors.XML_ERROR_ATTRIBUTE_EXTERNAL_ENTITY_REF,
        expat_errors.XML_ERROR_EXTERNAL_ENTITY_HANDLING,
        expat_errors.XML_ERROR_ENTITY_DECLARED_IN_PE,
        expat_errors.XML_ERROR_PARAM_ENTITY_REF,
    )
)
# The encoding pseudo-attribute of an XML declaration at the very start of the text.
_DECLARED_ENCODING = re.compile(r"""\A(<\?xml[^>]*?\bencoding\s*=\s*["'])[A-Za-z0-9._-]*(["'])""")
_ENTRY_CLOSE = re.compile(rb"</(?:[\w.-]+:)?(?:item|entry)\s*>")


@dataclass
class ParsedFeed:
    """What a feed body held: complete entries, the format, and every problem met on the way."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""
    error: str = ""  # why the feed gave nothing, or what was wrong with it ("" if clean)
    truncated_entries: int = 0  # entries parsed from a truncated document and left out
    failed: bool = False  # the feed could not be read at all: a recorded failure
    lost_entries: int = 0  # entries a failed body holds (closing tags counted), all lost
    invalid_entries: int = 0  # entries holding a reference XML cannot encode, left out alone
    malformed_entries: int = 0  # entries of the wrong shape (a JSON Feed item), left out alone
    # A sitemap's URLs past the protocol's 50,000 a file (crovia_spider/feed/sitemap.py): not read.
    beyond_protocol: int = 0
    # Entries a source's `include` / `exclude` patterns left out: not the source's, never counted.
    excluded: int = 0
    # The sitemaps a sitemap index or a robots.txt names, to fetch next (absolute http(s) URLs).
    sitemaps: list[str] = field(default_factory=list)
    # The bytes a sitemap body was read as, uncompressed, or decompressed before it was refused
    # (crovia_spider/feed/sitemap.py): what a walk counts against CROVIA_SITEMAP_BYTES.
    read_bytes: int = 0


def parse_body(body: bytes, headers: dict[str, str]) -> ParsedFeed:
    """Parse `body` with the response `headers` (so the charset resolves). Never raises: whatever
    goes wrong inside the parser makes a `failed` ParsedFeed that says why."""
    try:
        return _parse(body, headers)
    except Exception as exc:  # any parser bug must cost this feed only, and be told
        return unreadable(body, _describe(exc))


def unreadable(body: bytes, reason: str) -> ParsedFeed:
    """The failed ParsedFeed of a body that could not be read, for `reason`: the entries it closes
    are counted as lost."""
    return ParsedFeed(
        error=f"unreadable feed: {reason}", failed=True, lost_entries=_closed_entries(body)
    )


def _parse(body: bytes, headers: dict[str, str]) -> ParsedFeed:
    if declares_entities(body):
        return ParsedFeed(error=DECLARES_ENTITIES, failed=True)
    body, headers = bom_decides(body, headers)
    body = resolve_references(body)
    # Links are resolved against the final URL (Content-Location) whatever this says; it only
    # stops feedparser rewriting the URLs inside an entry's embedded HTML, which nothing reads:
    # the HTML becomes plain text, attributes dropped (crovia_spider/feed/plaintext.py). That
    # rewriting was a quarter of feedparser's time (tests/spider/test_embedded_uris.py).
    parsed = feedparser.parse(
        body, response_headers=headers, sanitize_html=True, resolve_relative_uris=False
    )
    result = ParsedFeed(entries=list(parsed.entries), version=parsed.get("version", ""))
    problem = _describe(parsed.get("bozo_exception")) if parsed.get("bozo") else ""
    if not result.version and not result.entries:
        kind = headers.get("content-type", "no content-type")
        result.error = f"not a feed ({kind})" + (f": {problem}" if problem else "")
        result.failed = True
        result.lost_entries = _closed_entries(body)
        return result
    result.error = problem
    exc = parsed.get("bozo_exception")
    if isinstance(exc, xml.sax.SAXParseException):
        refusal = _entity_refusal(exc, problem, body)
        if refusal:
            return ParsedFeed(version=result.version, error=refusal, failed=True)
        _drop_unclosed(result, body)
    if INVALID_REF in body or INVALID_MARK.encode() in body:
        _drop_marked(result)
    return result


def _drop_marked(result: ParsedFeed) -> None:
    """Leave out, and count, each entry holding the mark of a reference XML cannot encode
    (crovia_spider/feed/references.py). Only a body that holds the mark is searched."""
    kept = [entry for entry in result.entries if not _holds(entry, INVALID_MARK)]
    result.invalid_entries = len(result.entries) - len(kept)
    result.entries = kept


def _holds(value: Any, mark: str) -> bool:
    """True when `mark` is in any string of `value` (dicts and lists searched through)."""
    if isinstance(value, str):
        return mark in value
    if isinstance(value, dict):
        return any(_holds(item, mark) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds(item, mark) for item in value)
    return False


def bom_decides(body: bytes, headers: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """A body that starts with a byte-order mark is in that encoding, whatever its XML declaration
    or HTTP charset say (XML 1.0, appendix F): give feedparser the text as UTF-8 with the
    declaration and the charset saying so. A body that does not decode as its mark says is left as
    it came, for the parser to report."""
    for bom, codec in BOMS:
        if body.startswith(bom):
            try:
                text = body[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                return body, headers
            text = _DECLARED_ENCODING.sub(r"\g<1>utf-8\g<2>", text, count=1)
            kind = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            plain = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            if kind:
                plain["Content-Type"] = kind.split(";", 1)[0] + "; charset=utf-8"
            return text.encode("utf-8"), plain
    return body, headers


def _entity_refusal(exc: xml.sax.SAXParseException, problem: str, body: bytes) -> str:
    """Why a document expat failed on is refused whole ("" if it is not): the loose parser's
    entries would carry unresolved `&name;` references as text."""
    if exc.getMessage() in _ENTITY_ERRORS:
        return f"refused: {problem}"
    if declares_entities_anywhere(body):
        return f"refused: the document declares DTD entities, outside its prolog ({problem})"
    return ""


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    if isinstance(exc, MemoryError):  # in the worker: past its ceiling (feed/ceilings.py)
        return "MemoryError: parsing needed more memory than it may use (CROVIA_PARSE_MEMORY_MB)"
    where = ""
    if isinstance(exc, xml.sax.SAXParseException):
        where = f" at line {exc.getLineNumber()}, column {exc.getColumnNumber()}"
    return f"{type(exc).__name__}: {exc}{where}"


def _closed_entries(body: bytes) -> int:
    """How many entries `body` closes (`</item>`, `</entry>`), in any encoding prolog.py reads."""
    return len(_ENTRY_CLOSE.findall(ascii_compatible(body)))


def _drop_unclosed(result: ParsedFeed, body: bytes) -> None:
    # feedparser's loose fallback also returns an entry cut off mid-way; only closed ones are whole.
    closed = len(_ENTRY_CLOSE.findall(body))
    if closed < len(result.entries):
        result.truncated_entries = len(result.entries) - closed
        result.entries = result.entries[:closed]
