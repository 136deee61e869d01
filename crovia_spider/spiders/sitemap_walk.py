"""A sitemap source: its sitemap, index or robots.txt, and the sitemaps it names, read as one.

A `[[feeds]]` entry of kind "sitemap" names one URL; what it serves may name more sitemaps (an
index, or a robots.txt's `Sitemap:` lines), which may be indexes in turn. The spider fetches them
one after another in the order named, breadth first, each with `engine.download_async`: every
downloader middleware applies (the fetch policy on every hop, robots.txt, per-host politeness,
the size cap), as for the entry's own URL. The walk is bounded, and so is what it holds:

- at most CROVIA_SITEMAP_FETCHES sitemaps fetched per source and crawl, none nested deeper than
  CROVIA_SITEMAP_DEPTH indexes; each left unfetched is a part saying why, and past MAX_PARTS
  parts the rest are one last part (so no more than MAX_PARTS sitemap URLs are ever held);
- CROVIA_SITEMAP_BYTES counts the bytes the walk read, uncompressed (a body's received bytes
  when they are more): a sitemap is fetched only while the walk read fewer, and read only up
  to what is left of them, its decompression stopped as soon as it passes them (a gzip bomb
  costs the bytes left, never its whole; crovia_spider/feed/sitemap.py, MAX_BYTES);
- CROVIA_MAX_SITEMAP_URLS is applied while the walk reads: once it holds that many URLs (each
  once, as `once_each` keeps them, applied body by body) it fetches no further sitemap, each a
  part saying so (one unread entry). A body is read whole (at most the protocol's 50,000 URLs), so
  a walk holds at most CROVIA_MAX_SITEMAP_URLS + 49,999 entries; its URLs past the limit are
  `entries.over_limit`, as before. The record's counts are those of the bodies it read, whole,
  so reading it again from the kept bodies (`read_parts`) gives the same counts;
- a URL this walk already read (an index naming itself, two indexes naming each other, a sitemap
  redirected to one read before) is not read again: a `loop` part, never a second reading of
  the same entries;
- each body is read in the parser worker under its ceilings, and capped at the protocol's 50 MB
  (crovia_spider/feed/sitemap.py).

The whole walk is one fetch record (ledger/records/fetch.py): the entry's own fetch is its
`object.fetch` and `body_sha256`, every further fetch one of its `parts`, and its `entries` those
of every body read, in walk order, under CROVIA_MAX_SITEMAP_URLS. A sitemap the walk did not read
(not fetched, an HTTP error, a body that could not be read) counts as one unread entry: the
record then never says the source was read whole, so `crovia absent` answers "cannot tell"
rather than "gone". docs/format.md, "Entries of a sitemap", says how to read the kept bodies again.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import orjson
import scrapy
from scrapy.http import Response

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.sitemap import MAX_BYTES, MAX_UNCOMPRESSED
from crovia_spider.spiders.fetches import HEADER_CHARS, parse_headers
from ledger.records.fetch import MAX_PARTS

SITEMAP_KIND = "sitemap"
PARTS_BYTES = 30_000  # of a fetch record's 65,535 a line: room for the rest of it
ERROR_CHARS = 300  # a part's error (a reader's message can be long)
NOT_READ = "sitemap not read"  # a run record's drop reason: a part that gave no entries


class Read(NamedTuple):
    """One body a walk read: the response it came in, its reading, and its sha256 (hex, as the
    run record or the fetch record's part names it: never hashed twice)."""

    response: Response
    parsed: ParsedFeed
    sha256: str


@dataclass
class Walk:
    """What a source's walk read: each body with its reading, in order, and the fetch record's
    parts (with the bodies they name, to keep)."""

    bodies: list[Read] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)
    part_bodies: dict[str, bytes] = field(default_factory=dict)
    parts_bytes: int = 0  # the parts' JSON, but the last's (`full`)
    # Each URL the bodies kept: (body, entry) of its one occurrence (`keep`).
    chosen: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)

    def keep(self, read: Read) -> None:
        """Append `read` with only the entries `once_each` keeps of the bodies read so far: a URL
        already kept is no entry again, unless this occurrence has a news title and the kept one
        has none, which it then replaces (taken out of its body). Applied body by body, it keeps
        what `once_each` keeps of them all, so a walk holds each URL once. The sitemaps the body
        names are not kept (the walk queued them)."""
        b, entries = len(self.bodies), []
        for entry in read.parsed.entries:
            link = entry.get("link", "")
            first = self.chosen.get(link)
            if first is not None:
                held = entries if first[0] == b else self.bodies[first[0]].parsed.entries
                if not _titled(entry) or _titled(held[first[1]]):
                    continue
                held[first[1]] = None  # taken out by `settle`, so positions hold until then
            self.chosen[link] = (b, len(entries))
            entries.append(entry)
        self.bodies.append(read._replace(parsed=replace(read.parsed, entries=entries, sitemaps=[])))

    def settle(self) -> None:
        """Take out the entries a later occurrence replaced (`keep`)."""
        for read in self.bodies:
            if None in read.parsed.entries:
                read.parsed.entries[:] = [e for e in read.parsed.entries if e is not None]
        self.chosen.clear()

    def add(self, part: dict[str, Any]) -> dict[str, Any]:
        """Append `part` (its error cut to ERROR_CHARS); the part, for the caller to complete."""
        if self.parts:
            self.parts_bytes += len(orjson.dumps(self.parts[-1]))
        if "error" in part:
            part["error"] = part["error"][:ERROR_CHARS]
        self.parts.append(part)
        return part

    def full(self) -> bool:
        """True when one more part would pass what a fetch record may hold: MAX_PARTS parts, or
        PARTS_BYTES of them (a ledger line holds at most 65,535 bytes: a record over it would
        be refused, and with it the crawl's batch)."""
        return len(self.parts) >= MAX_PARTS - 1 or self.parts_bytes >= PARTS_BYTES

    @property
    def unread_parts(self) -> int:
        """The sitemaps named but not read: one unread entry each (a loop is no loss)."""
        return sum(1 for part in self.parts if "error" in part)

    def digest(self) -> str:
        """sha256 over the walk's own body and every part (each naming its body's digest), in
        order: "the same source as last time" when equal."""
        hasher = hashlib.sha256(self.bodies[0].sha256.encode())
        for part in self.parts:
            hasher.update(repr(sorted(part.items())).encode())
        return hasher.hexdigest()


def sitemap_request(url: str, feed: FeedConfig, **kwargs: Any) -> scrapy.Request:
    """The request of one sitemap of `feed`: never conditional (an index unchanged says nothing
    of the sitemaps it names), up to the protocol's 50 MB."""
    meta = {"feed": feed, "download_maxsize": MAX_UNCOMPRESSED, **kwargs.pop("meta", {})}
    return scrapy.Request(url, meta=meta, dont_filter=True, **kwargs)


async def walk_sitemaps(spider: Any, first: Read, feed: FeedConfig) -> Walk:
    """The walk from the entry's own body, `first` (see the module docstring)."""
    response, parsed = first.response, first.parsed
    walk = Walk()
    walk.keep(first)
    fetches = spider.settings.getint("CROVIA_SITEMAP_FETCHES")
    depth_cap = spider.settings.getint("CROVIA_SITEMAP_DEPTH")
    budget = spider.settings.getint("CROVIA_SITEMAP_BYTES")
    urls = spider.entry_limit(feed)
    seen = {feed.url, response.url}
    queue = Queue()
    queue.extend(parsed.sitemaps, 1)
    fetched, read = 0, max(len(response.body), parsed.read_bytes)
    while queue:
        if walk.full():
            url, _ = queue[0]
            why = f"not fetched, nor the {len(queue) - 1} sitemaps named after it"
            held = f"a fetch record holds {len(walk.parts) + 1} parts at most"
            walk.add({"url": url, "error": f"{why}: {held}"})
            break
        url, depth = queue.popleft()
        if url in seen:
            walk.add({"url": url, "loop": True})
            continue
        seen.add(url)
        if len(walk.chosen) >= urls:
            why = f"not fetched: the walk holds the {urls:,} URLs a source may read a crawl"
            walk.add({"url": url, "error": why + " (CROVIA_MAX_SITEMAP_URLS)"})
            continue
        if depth > depth_cap:
            why = f"not fetched: nested deeper than {depth_cap} sitemap indexes"
            walk.add({"url": url, "error": why + " (CROVIA_SITEMAP_DEPTH)"})
            continue
        if fetched >= fetches:
            why = f"not fetched: past the {fetches} sitemaps a source may fetch a crawl"
            walk.add({"url": url, "error": why + " (CROVIA_SITEMAP_FETCHES)"})
            continue
        if read >= budget:
            why = f"not fetched: the walk read {budget:,} bytes of sitemaps, uncompressed"
            walk.add({"url": url, "error": why + " (CROVIA_SITEMAP_BYTES)"})
            continue
        fetched += 1
        child = await download_part(spider, url, walk, lambda u: sitemap_request(u, feed))
        if child is None:
            continue
        if child.url != url and child.url in seen:  # redirected to one read: not read twice
            walk.part_bodies.pop(walk.parts[-1]["body_sha256"], None)
            walk.parts[-1] = {"url": url, "loop": True}
            continue
        seen.add(child.url)
        headers = parse_headers(walk.parts[-1].get("content_type", ""), child.url)
        options = {**feed.options, MAX_BYTES: budget - read}
        child_parsed = await spider.parser.parse(child.body, headers, feed.kind, options)
        read += max(len(child.body), child_parsed.read_bytes)
        if child_parsed.failed:
            walk.parts[-1]["error"] = child_parsed.error[:ERROR_CHARS]
            continue
        queue.extend(child_parsed.sitemaps, depth + 1)
        walk.keep(Read(child, child_parsed, walk.parts[-1]["body_sha256"]))
        del child_parsed
    walk.settle()
    for part in walk.parts:
        if "error" in part:  # one entry the source held and the walk did not read, as signed
            spider.run.feeds[feed.vendor].items_seen += 1
            spider.run.drop(feed.vendor, NOT_READ)
            spider.logger.debug("sitemap %s of %s: %s", part["url"], feed.vendor, part["error"])
    return walk


async def download_part(
    spider: Any, url: str, walk: Walk, request: Callable[[str], scrapy.Request]
) -> Response | None:
    """The response of one further fetch of a walk (a sitemap, an OAI-PMH page), `request(url)`
    downloaded, its part added to `walk` with its body kept; None (the part saying why) when no
    body came to read."""
    try:  # a URL our checks let by may still be one Scrapy refuses to request (`http://[::]n/`)
        response = await spider.crawler.engine.download_async(request(url))
    except Exception as exc:  # a refusal, a timeout, a reset: that fetch's failure alone
        walk.add({"url": url, "error": _describe(exc)})
        return None
    if response.status != 200:
        walk.add({"url": url, "final_url": response.url, "error": f"HTTP {response.status}"})
        return None
    digest = hashlib.sha256(response.body).hexdigest()
    part: dict[str, Any] = {
        "url": url,
        "final_url": response.url,
        "status": response.status,
        "body_sha256": digest,
    }
    content_type = response.headers.get(b"Content-Type") or b""
    if 0 < len(content_type) <= HEADER_CHARS:  # as the feed's own (base.py _header)
        part["content_type"] = content_type.decode("latin-1")
    walk.add(part)
    walk.part_bodies[digest] = response.body
    return response


class Queue:
    """The sitemaps named and not yet taken, breadth first: (URL, depth) pairs. Of all a walk is
    named it holds the first MAX_PARTS and counts the others: each it takes is one part, and
    once its record holds MAX_PARTS - 1 it takes no more, naming the next and how many were named
    after it (`Walk.full`), so none past the MAX_PARTS-th is ever taken or named."""

    def __init__(self) -> None:
        self._held: deque[tuple[str, int]] = deque()
        self._admitted = 0
        self._beyond = 0

    def extend(self, urls: list[str], depth: int) -> None:
        room = max(0, MAX_PARTS - self._admitted)
        self._held.extend((url, depth) for url in urls[:room])
        self._admitted += min(room, len(urls))
        self._beyond += max(0, len(urls) - room)

    def popleft(self) -> tuple[str, int]:
        return self._held.popleft()

    def __getitem__(self, index: int) -> tuple[str, int]:
        return self._held[index]

    def __len__(self) -> int:
        return len(self._held) + self._beyond


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}"[:500] if text else type(exc).__name__


def read_parts(
    parts: Any,
    load: Callable[[str], bytes] | None,
    read: Callable[[bytes, Mapping[str, Any]], Read],
) -> Iterator[Read | None]:
    """A signed record's `parts` read again from their kept bodies, in order, with `read(body,
    part)`: each a body's reading, or None for a part that gave no entries (counted unread, as
    the crawl counted it). Raises ValueError when a kept body cannot be had."""
    for part in parts or ():
        if "loop" in part:
            continue
        if "error" in part or "body_sha256" not in part:
            yield None
            continue
        if load is None:
            raise ValueError("a record of several bodies is read with the ledger's kept bodies")
        try:
            body = load(part["body_sha256"])
        except Exception as exc:
            raise ValueError(f"kept body {part['body_sha256']} cannot be read: {exc}") from None
        yield read(body, part)


def once_each(bodies: list[Read]) -> list[Read]:
    """A walk's bodies with each URL kept once: a page both a site's sitemap and its news
    sitemap name is one entry, the one with a news title when one has it (its title is not its
    URL), else the first; the other occurrences are no entries, as URLs `exclude` leaves out."""
    chosen: dict[str, tuple[int, int]] = {}
    for b, read in enumerate(bodies):
        for e, entry in enumerate(read.parsed.entries):
            link = entry.get("link", "")
            first = chosen.get(link)
            if first is None or (
                _titled(entry) and not _titled(bodies[first[0]].parsed.entries[first[1]])
            ):
                chosen[link] = (b, e)
    keep = set(chosen.values())
    if len(keep) == sum(len(read.parsed.entries) for read in bodies):
        return bodies
    return [
        read._replace(
            parsed=replace(
                read.parsed,
                entries=[x for e, x in enumerate(read.parsed.entries) if (b, e) in keep],
            )
        )
        for b, read in enumerate(bodies)
    ]


def _titled(entry: Mapping[str, Any]) -> bool:
    return bool(entry.get("title")) and entry.get("title") != entry.get("link")
