"""One sitemap body (https://www.sitemaps.org/protocol.html) as entries of feedparser's shape.

A sitemap source (`kind = "sitemap"`) names a sitemap, a sitemap index or a site's robots.txt; this
reader reads one such body, untrusted, and never fetches: the sitemaps an index or a robots.txt
names come back in `ParsedFeed.sitemaps`, for the spider to fetch next. The rules:

- a body starting with gzip's magic bytes is decompressed (`scrapy.utils.gz.gunzip`) up to
  MAX_UNCOMPRESSED, the protocol's 50 MB a file, or the fewer bytes `options[MAX_BYTES]` allows
  (what a sitemap walk may still read of CROVIA_SITEMAP_BYTES: crovia_spider/spiders/
  sitemap_walk.py); a longer one (a gzip bomb) is refused as soon as its decompression passes
  them, 64 KiB at a time, never once whole; so is a plain body longer than that, and a broken
  gzip stream is unreadable (`failed`). `read_bytes` says how many bytes were read,
  uncompressed (for a refused body, how many were decompressed before it was stopped);
- a body read from a URL whose path is `/robots.txt` gives its `Sitemap:` lines (Scrapy's
  `sitemap_urls_from_robots`, one line at a time, so a line no URL parser reads costs only
  itself): each absolute http(s) URL once, at most MAX_URLS, version "robots.txt", no entries;
- any other body is XML. A document declaring DTD entities anywhere is refused whole (no entity
  is ever resolved: an entity bomb or an external entity has no place in a sitemap). The rest is
  read by Scrapy's own `Sitemap` (lxml's iterparse in recover mode, entities not resolved, each
  element freed once read), through `NewsSitemap`, once a bare `&` (`?a=1&b=2`, which recover
  mode would silently cut to `?a=1=2`) is escaped and the references XML cannot read are
  rewritten as for feeds (crovia_spider/feed/references.py: `&nbsp;` read as HTML has it,
  `&#xD800;` marked, its element then malformed). What recover mode still reads past in a
  complete document is told in `error`. A root `urlset` is a sitemap (version
  "sitemap"), a root `sitemapindex` an index (version "sitemapindex", each `<sitemap><loc>` once
  in `sitemaps`); any other root is no sitemap (`failed`);
- each `<url>` of a sitemap becomes `{"id": "", "link", "title", "published", "lastmod"}`: its
  `loc`; the news sitemap's title, else the `loc` itself; the news publication date, else
  `lastmod`; `lastmod` (each stripped, "" when absent). A `<url>` (or an index's `<sitemap>`)
  whose `loc` is missing, no absolute http(s) URL, holds a space or a control character, is
  longer than MAX_URL_CHARS, or holds text that is no UTF-8 (a lone surrogate, `&#xD800;`,
  cannot be signed) is left out alone and counted (`malformed_entries`). A URL the source's
  `include` / `exclude` patterns leave out is counted in `excluded`, never an entry. A file's
  elements past the MAX_URLS-th are not read (`beyond_protocol`, and `error` says so);
- a document that does not end in its root's closing tag (whitespace, comments and processing
  instructions may follow it, as XML allows) is truncated: lxml hands back the element it was
  cut in as if whole, so the last one read is left out and counted (`truncated_entries`).

`options` may hold `include` and `exclude`, lists of Python regular expressions searched
(`re.search`) in each page URL, as Scrapy's SitemapSpider `sitemap_rules` and LinkExtractor's
allow/deny do: a URL is kept when `include` is empty or one of its patterns matches, and none of
`exclude` does. They pick pages only: an index's or a robots.txt's sitemaps are all returned.
A walk adds MAX_BYTES (never in a source's options, nor in what a fetch record signs: a kept body
is read again whole, as the walk read every body it did not refuse).
Runs in the parser worker, under its ceilings (crovia_spider/feed/ceilings.py).
"""

from __future__ import annotations

import io
import re
import struct
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import lxml.etree
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from crovia_spider.feed.body import DECLARES_ENTITIES, ParsedFeed
from crovia_spider.feed.prolog import ascii_compatible, declares_entities_anywhere
from crovia_spider.feed.references import INVALID_MARK, resolve_references
from crovia_spider.feed.selection import BadPatterns, signable, url_selector

MAX_UNCOMPRESSED = 52_428_800  # the protocol's 50 MB (52,428,800 bytes) a file, uncompressed
MAX_URLS = 50_000  # the protocol's URLs a file (a sitemap's <url>, an index's <sitemap>)
MAX_URL_CHARS = 2_000  # crovia_spider/feed/entries.py LINK_CHARS: a longer link is left out there
# The option a sitemap walk reads a further body with: the uncompressed bytes it may still read.
MAX_BYTES = "max_bytes"
GZIP_MAGIC = b"\x1f\x8b\x08"  # scrapy.utils.gz.gzip_magic_number's test, on a body
TOO_LARGE = (
    f"refused: more than {MAX_UNCOMPRESSED:,} bytes uncompressed,"
    " the sitemap protocol's limit a file"
)
_NO_URL = re.compile(r"[\x00-\x20\x7f-\x9f]|\s")  # spaces (Unicode's too) and control characters
# The root's closing tag at the very end of the document, any namespace prefix.
_ROOT_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)\s*>\Z")
# An `&` that starts no reference (`?a=1&b=2`, which the protocol says to write `&amp;`).
_BARE_AMPERSAND = re.compile(rb"&(?!#[0-9]+;|#[xX][0-9A-Fa-f]+;|[A-Za-z_:][A-Za-z0-9_.:-]*;)")
# The same, or a CDATA section or a comment (where an `&` is text), each to its end or the body's.
_BARE_OR_LITERAL = re.compile(
    rb"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)|" + _BARE_AMPERSAND.pattern, re.S
)
# A reference XML reads as it is: only a body holding another is rewritten (references.py).
_OTHER_REFERENCE = re.compile(rb"&(?!amp;|lt;|gt;|quot;|apos;)[#A-Za-z]")
_TAG = "\x00tag"  # keys NewsSitemap adds to Scrapy's dict: no XML name holds a NUL
_UNREADABLE = "\x00unreadable"


class NewsSitemap(Sitemap):
    """Scrapy's `Sitemap`, also reading a news sitemap's title and publication date.

    Scrapy keeps only the text of each `<url>`'s direct children, so a news sitemap
    (https://www.google.com/schemas/sitemap-news/0.9) loses `<news:news><news:title>` and
    `<news:publication_date>`, nested one level deeper. They are read here, by local name as
    Scrapy reads every tag, before Scrapy's own method frees the element. Each element's dict also
    names its tag (so a caller counts `<url>` and `<sitemap>` apart), and an element holding text
    lxml cannot decode (`&#xD800;`, which Scrapy's method would raise on, ending the whole parse)
    is a dict saying so: it costs only itself. tests/spider/test_sitemap_reader.py holds Scrapy to
    the loss, so a Scrapy that reads nested elements fails that test and this override can go.
    """

    __slots__ = ()

    def _process_sitemap_element(self, elem: lxml.etree._Element) -> dict[str, Any] | None:
        tag = self._get_tag_name(elem)
        try:
            news = _news(elem)
            found = super()._process_sitemap_element(elem) or {}
        except UnicodeDecodeError:
            _free(elem)
            return {_TAG: tag, _UNREADABLE: True}
        return {**found, **news, _TAG: tag}


def _news(elem: lxml.etree._Element) -> dict[str, str]:
    """The title and publication date of the `<news:news>` child of `elem` ({} if none)."""
    for child in elem:
        if Sitemap._get_tag_name(child) == "news":
            return {
                f"news_{name}": "".join(part.itertext()).strip()
                for part in child
                if (name := Sitemap._get_tag_name(part)) in ("title", "publication_date")
            }
    return {}


def _free(elem: lxml.etree._Element) -> None:
    """Free `elem` and the siblings read before it, as Scrapy's method does once it has read one."""
    elem.clear()
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


class _Unread(Exception):
    """The body is refused or unreadable: a `failed` ParsedFeed with this reason (and the bytes
    read, uncompressed, before it was)."""

    def __init__(self, reason: str, read_bytes: int = 0) -> None:
        super().__init__(reason)
        self.read_bytes = read_bytes


def parse_sitemap(body: bytes, headers: dict[str, str], options: Mapping[str, Any]) -> ParsedFeed:
    """The entries of the sitemap, sitemap index or robots.txt `body`, fetched from the URL its
    `headers` give as "content-location", its pages picked by `options` (see the module
    docstring). Never raises: a body refused or unreadable is a `failed` ParsedFeed saying why."""
    try:
        return _parse(body, headers, options)
    except _Unread as exc:
        return ParsedFeed(error=str(exc), failed=True, read_bytes=exc.read_bytes)
    except MemoryError:  # in the worker: past its ceiling (crovia_spider/feed/ceilings.py)
        reason = "parsing needed more memory than it may use (CROVIA_PARSE_MEMORY_MB)"
        return ParsedFeed(error=f"unreadable sitemap: MemoryError: {reason}", failed=True)
    except Exception as exc:  # a reader bug must cost this sitemap only, and be told
        return ParsedFeed(error=f"unreadable sitemap: {type(exc).__name__}: {exc}", failed=True)


def _parse(body: bytes, headers: dict[str, str], options: Mapping[str, Any]) -> ParsedFeed:
    try:
        selected = url_selector(options)
    except BadPatterns as exc:
        raise _Unread(f"unreadable sitemap: {exc}") from None
    body = _uncompressed(body, _max_bytes(options))
    try:
        parsed = _read_xml_or_robots(body, headers, selected)
    except _Unread as exc:
        raise _Unread(str(exc), len(body)) from None
    parsed.read_bytes = len(body)
    return parsed


def _read_xml_or_robots(
    body: bytes, headers: dict[str, str], selected: Callable[[str], bool]
) -> ParsedFeed:
    final_url = _header(headers, "content-location")
    if _path(final_url) == "/robots.txt":
        return _robots(body, final_url)
    text = ascii_compatible(body)
    if declares_entities_anywhere(text):  # the prolog's and any other: lxml reads past both
        raise _Unread(DECLARES_ENTITIES)
    try:
        sitemap = NewsSitemap(_references_read(body))
    except (StopIteration, lxml.etree.LxmlError) as exc:
        reason = f"not a sitemap (no XML element: {str(exc) or 'none'}; {_kind(headers)})"
        raise _Unread(reason) from None
    if sitemap.type not in ("urlset", "sitemapindex"):
        raise _Unread(f"not a sitemap (root <{sitemap.type:.80}>; {_kind(headers)})")
    complete = _ends_with_root(text, sitemap.type)
    return _read(sitemap, selected, complete)


def _escape_bare_ampersands(body: bytes) -> bytes:
    """`body` with each `&` that starts no reference written `&amp;`. lxml's recover mode would
    drop it and the text after it up to a `;` (`?a=1&b=2` read as `?a=1=2`): a wrong URL, kept
    as if right. CDATA sections and comments are left as they are; so is a body that is not
    ASCII-compatible (UTF-16, UTF-32), whose `&` lxml then drops, with the error told."""
    if b"&" not in body or b"\x00" in body[:4]:
        return body
    if b"<![CDATA[" not in body and b"<!--" not in body:
        return _BARE_AMPERSAND.sub(b"&amp;", body)
    return _BARE_OR_LITERAL.sub(_escaped, body)


def _escaped(match: re.Match[bytes]) -> bytes:
    return b"&amp;" if match[0] == b"&" else match[0]


def _references_read(body: bytes) -> bytes:
    """`body` as lxml is given it: bare `&` escaped, then, only when another reference than XML's
    five is left (a search that stops at the first), the references XML cannot read rewritten."""
    body = _escape_bare_ampersands(body)
    return resolve_references(body) if _OTHER_REFERENCE.search(body) else body


def _max_bytes(options: Mapping[str, Any]) -> int:
    """The uncompressed bytes a body may be read to: MAX_UNCOMPRESSED, or the fewer a walk
    gives as `options[MAX_BYTES]` (anything but a whole number above 0 is ignored)."""
    given = options.get(MAX_BYTES)
    if type(given) is int and 0 < given < MAX_UNCOMPRESSED:
        return given
    return MAX_UNCOMPRESSED


def _too_large(limit: int) -> str:
    if limit >= MAX_UNCOMPRESSED:
        return TOO_LARGE
    return (
        f"refused: more than {limit:,} bytes uncompressed, what the walk may still read"
        " (CROVIA_SITEMAP_BYTES)"
    )


def _uncompressed(body: bytes, limit: int) -> bytes:
    """`body`, gunzipped when it is gzip, of at most `limit` bytes; _Unread past them (a gzip
    stream stopped as soon as its decompression passes them) or for a broken gzip stream."""
    if body[:3] == GZIP_MAGIC:
        try:
            body = gunzip(body, max_size=limit)
        except _DecompressionMaxSizeExceeded as exc:
            raise _Unread(_too_large(limit), exc.decompressed_size) from None
        except (OSError, EOFError, struct.error, zlib.error) as exc:
            raise _Unread(f"unreadable sitemap: broken gzip stream ({exc})") from None
    if len(body) > limit:
        raise _Unread(_too_large(limit), len(body))
    return body


def _read(sitemap: NewsSitemap, selected: Callable[[str], bool], complete: bool) -> ParsedFeed:
    index = sitemap.type == "sitemapindex"
    parsed = ParsedFeed(version=sitemap.type if index else "sitemap")
    wanted = "sitemap" if index else "url"
    named: set[str] = set()  # the index's sitemaps, for each to be named once
    read, last, broken = 0, "", ""
    try:
        for element in sitemap:
            if element[_TAG] != wanted:
                continue
            read += 1
            if read > MAX_URLS:
                last = "beyond_protocol"
                parsed.beyond_protocol += 1
            elif index:
                last = _take_sitemap(parsed, element, named)
            else:
                last = _take_url(parsed, element, selected)
    except lxml.etree.LxmlError as exc:  # recover mode gave up: all but the last read is kept
        broken = f"broken document ({exc})"
    if (broken or not complete) and last:
        _undo(parsed, last)
        parsed.truncated_entries = 1
    if broken or not complete:
        parsed.error = "; ".join((broken or "truncated document", *_problems(parsed)))
    else:
        recovered = list(_recovered(sitemap))
        if recovered:  # what recover mode read past may have held URLs: never a whole reading
            parsed.truncated_entries += 1
        parsed.error = "; ".join((*recovered, *_problems(parsed)))
    return parsed


def _take_url(parsed: ParsedFeed, element: dict[str, Any], selected: Callable[[str], bool]) -> str:
    """Count or keep one `<url>`; the name of the ParsedFeed field it went to."""
    link = _text(element, "loc")
    lastmod = _text(element, "lastmod")
    entry = {
        "id": "",
        "link": link,
        # A page a sitemap names has no title but a news sitemap's: the URL stands for it, so the
        # item says what it is (an item of neither title nor text is dropped as empty).
        "title": _text(element, "news_title") or link,
        "published": _text(element, "news_publication_date") or lastmod,
        "lastmod": lastmod,
    }
    if (
        element.get(_UNREADABLE)
        or not _web_url(link)
        or not all(signable(v, INVALID_MARK) for v in entry.values())
    ):
        parsed.malformed_entries += 1
        return "malformed_entries"
    if not selected(link):
        parsed.excluded += 1
        return "excluded"
    parsed.entries.append(entry)
    return "entries"


def _take_sitemap(parsed: ParsedFeed, element: dict[str, Any], named: set[str]) -> str:
    """Count or keep one `<sitemap>` of an index; the name of the field it went to."""
    loc = _text(element, "loc")
    if element.get(_UNREADABLE) or not _web_url(loc):
        parsed.malformed_entries += 1
        return "malformed_entries"
    if loc in named:
        return "duplicate"
    named.add(loc)
    parsed.sitemaps.append(loc)
    return "sitemaps"


def _undo(parsed: ParsedFeed, last: str) -> None:
    """Take back what the last element read counted for: the document was cut inside it."""
    if last in ("entries", "sitemaps"):
        getattr(parsed, last).pop()  # (a cut duplicate's first naming was whole: it stays)
    elif last != "duplicate":
        setattr(parsed, last, getattr(parsed, last) - 1)


def _recovered(sitemap: NewsSitemap) -> Iterable[str]:
    """What lxml's recover mode read past in a complete document (an unescaped `&` drops the
    text up to the next `;`, a text node over 10 MB ends the parse), so it is never silent."""
    errors = [e for e in sitemap.xmliter.error_log if e.level >= lxml.etree.ErrorLevels.ERROR]
    if errors:
        first = errors[0]
        yield f"{len(errors)} XML error(s) read past (first: {first.message} at line {first.line})"


def _problems(parsed: ParsedFeed) -> Iterable[str]:
    if parsed.beyond_protocol:
        yield (
            f"{parsed.beyond_protocol:,} URL(s) past the sitemap protocol's"
            f" {MAX_URLS:,} a file, not read"
        )
    if parsed.malformed_entries:
        yield (
            f"{parsed.malformed_entries} URL(s) malformed (no absolute http(s) URL of at most"
            f" {MAX_URL_CHARS:,} characters, or text that cannot be signed), left out"
        )


def _robots(body: bytes, final_url: str) -> ParsedFeed:
    parsed = ParsedFeed(version="robots.txt")
    named: dict[str, None] = {}
    for url in _robots_urls(body, final_url):
        if url in named:
            continue
        if not _web_url(url):
            parsed.malformed_entries += 1
        elif len(named) < MAX_URLS:
            named[url] = None
        else:
            parsed.beyond_protocol += 1
    if not named:
        raise _Unread("robots.txt names no sitemap")
    parsed.sitemaps = list(named)
    parsed.error = "; ".join(_problems(parsed))
    return parsed


def _robots_urls(body: bytes, final_url: str) -> list[str]:
    """The `Sitemap:` URLs of a robots.txt, as Scrapy reads them; should one line be no URL that
    urljoin reads (an unclosed IPv6 bracket, which ends Scrapy's generator), one line at a time,
    so that line alone is lost (as "", which no check passes)."""
    try:
        return list(sitemap_urls_from_robots(body, base_url=final_url))
    except ValueError:
        return [url for line in io.BytesIO(body) for url in _line_urls(line, final_url)]


def _line_urls(line: bytes, final_url: str) -> list[str]:
    try:
        return list(sitemap_urls_from_robots(line, base_url=final_url))
    except ValueError:
        return [""]


def _web_url(url: str) -> bool:
    """True for an absolute http(s) URL of at most MAX_URL_CHARS, no space or control in it."""
    if (
        not url
        or len(url) > MAX_URL_CHARS
        or _NO_URL.search(url)
        or not signable(url, INVALID_MARK)
    ):
        return False
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port no URL can have)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def _ends_with_root(text: bytes, root: str) -> bool:
    """True when `text` ends in the closing tag of `root`, then only whitespace, comments and
    processing instructions (XML's Misc). Each step cuts what it reads from the end: linear."""
    end = len(text)
    while True:
        end = _stripped_end(text, end)
        tail = text[max(0, end - 4) : end]
        if tail.endswith(b"-->"):
            end = text.rfind(b"<!--", 0, end - 3)
        elif tail.endswith(b"?>"):
            end = text.rfind(b"<?", 0, end - 2)
        else:
            break
        if end < 0:
            return False
    close = _ROOT_CLOSE.search(text, max(0, end - 300), end)
    return close is not None and close.group(1) == root.encode()


def _stripped_end(text: bytes, end: int) -> int:
    """Where `text[:end]` ends once trailing whitespace is stripped, copying no more than twice
    the whitespace it passes (a body is up to 50 MB: never copied whole here)."""
    size = 64
    while end > 0:
        chunk = text[max(0, end - size) : end]
        kept = len(chunk.rstrip())
        if kept:
            return end - len(chunk) + kept
        end -= len(chunk)
        size *= 2
    return 0


def _text(element: dict[str, Any], name: str) -> str:
    value = element.get(name)
    return value.strip() if isinstance(value, str) else ""


def _header(headers: dict[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _kind(headers: dict[str, str]) -> str:
    kind = _header(headers, "content-type")
    return f"content-type {kind:.80}" if kind else "no content-type"


def _path(url: str) -> str:
    try:
        return urlsplit(url).path
    except ValueError:
        return ""
