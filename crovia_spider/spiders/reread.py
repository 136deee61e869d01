"""Kept bodies read again for `crovia history` and `crovia absent`, as the crawl read them and
under the crawl's ceilings, each body once.

A kept body is the bytes a source served, hostile or not: it is parsed in the crawl's worker process
(crovia_spider/feed/parsepool.py, `BlockingParser`) under CROVIA_PARSE_MEMORY_MB and
CROVIA_PARSE_SECONDS, never in the command's own process; a body past a ceiling is a body that
cannot be read again, and says which ceiling. A body is read by the spider its fetch record names
(`spiders(name)`: FeedSpider.read_again, with that spider's own `parse_entries()` and
`entry_item()`), or by the base's reading when the project has no such spider now. What a body gave
is kept in the ledger's read-again cache (ledger/store/entry_cache.py) under the body's digest and
how it was read, so the next question about the feed costs no parse. A failure is reused only under
ceilings no larger than the ones it failed under. Nothing read from the cache is trusted: a value of
the wrong shape is a miss, and every answer is held to the fetch record's signed counts and digest
by the timeline. `crovia audit --bodies` reads without the cache (`kept_body_reader(cache=False)`):
what it vouches for, it read itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import feedparser

from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.kinds import READERS, read_body
from crovia_spider.feed.parsepool import BlockingParser
from ledger.canonical import canonical_json
from ledger.records.fetch import ENTRY_COUNTS, reading_problem
from ledger.store import BodyStore, EntryCache

# Part of every cache key: raise it when the reading rule changes (entries.py, identity.py,
# body.py), so no answer of the old rule is taken for one of the new.
READ_RULE = 3
_IDENTITY_KEYS = frozenset(("family", "guid", "link"))


class KeptBodyReader:
    """A `ledger.store.timeline` BodyReader: `reader(body, record_body, final_url)`."""

    def __init__(
        self,
        ledger_dir: str | Path,
        memory_mb: int,
        seconds: float,
        spiders: Callable[[str], type | None] = lambda name: None,
        *,
        cache: bool = True,
    ) -> None:
        self.memory_mb, self.seconds = memory_mb, seconds
        self.spiders = spiders
        self.parser = BlockingParser(memory_mb, seconds)
        self.cache = EntryCache(ledger_dir) if cache else None
        self.bodies = BodyStore(ledger_dir)  # a sitemap record's further bodies

    def __call__(
        self, body: bytes, record_body: Mapping[str, Any], final_url: str
    ) -> dict[str, Any]:
        digest = hashlib.sha256(body).hexdigest()
        name = record_body.get("spider")
        spider = self.spiders(name) if type(name) is str and name else None
        key = cache_key(digest, record_body, final_url, spider)
        cached = None if self.cache is None else self.cache.get(key)
        if cached is not None and self._usable(cached):
            return {k: v for k, v in cached.items() if k in ("identities", "error", *ENTRY_COUNTS)}
        found = read_kept_body(body, record_body, final_url, self.parser, spider, self.bodies.get)
        if self.cache is not None:
            self._remember(self.cache, key, digest, found)
        return found

    def _remember(self, cache: EntryCache, key: str, digest: str, found: dict[str, Any]) -> None:
        """Keep what the body gave; a failure with the ceilings it failed under."""
        if "identities" in found:
            cache.put(key, digest, found)
        else:
            cache.put(key, digest, {**found, "memory_mb": self.memory_mb, "seconds": self.seconds})

    def close(self) -> None:
        self.parser.close()
        if self.cache is not None:
            self.cache.close()

    def _usable(self, value: dict[str, Any]) -> bool:
        """A cached value of the right shape; a failure only if it failed under ceilings at
        least as large as these (a larger ceiling may read the body)."""
        if "error" in value:
            memory, seconds = value.get("memory_mb"), value.get("seconds")
            return (
                type(value["error"]) is str
                and type(memory) is int
                and type(seconds) in (int, float)
                and memory >= self.memory_mb
                and seconds >= self.seconds
            )
        identities = value.get("identities")
        return (
            type(identities) is list
            and all(
                type(i) is dict
                and i.keys() == _IDENTITY_KEYS
                and all(type(v) is str for v in i.values())
                for i in identities
            )
            and all(type(value.get(k)) is int and value[k] >= 0 for k in ENTRY_COUNTS)
        )


def kept_body_reader(ledger_dir: str | Path, *, cache: bool = True) -> KeptBodyReader:
    """The crawl's reader for the kept bodies of the ledger at `ledger_dir`: in its worker under
    CROVIA_PARSE_MEMORY_MB and CROVIA_PARSE_SECONDS, each body read by the project's spider that
    received it, with the ledger's read-again cache unless `cache` is False. Close it when done.
    Raises ConfigError when a ceiling is not what its setting takes (crovia_spider/options.py)."""
    from crovia_spider.options import setting
    from crovia_spider.spiders.project_spiders import project_spider

    memory_mb = setting("CROVIA_PARSE_MEMORY_MB")
    seconds = setting("CROVIA_PARSE_SECONDS")
    return KeptBodyReader(ledger_dir, memory_mb, seconds, project_spider, cache=cache)


def cache_key(
    digest: str, record_body: Mapping[str, Any], final_url: str, spider: type | None = None
) -> str:
    """The read-again cache key of the body `digest` read as `record_body` says: everything the
    reading depends on (the record's feed, Content-Type, source kind, options, further bodies
    and limit, the final URL, the rule, feedparser's version, and the spider class that reads it,
    None for the base's reading)."""
    entries = record_body.get("entries")
    how = [
        READ_RULE,
        feedparser.__version__,
        digest,
        final_url,
        record_body.get("content_type", ""),
        record_body.get("kind", "feed"),
        record_body.get("select"),
        record_body.get("parts"),
        record_body.get("vendor"),
        record_body.get("feed_url"),
        entries.get("limit") if isinstance(entries, Mapping) else None,
        spider and f"{spider.__module__}.{spider.__qualname__}",
    ]
    return hashlib.sha256(canonical_json(how)).hexdigest()


def read_kept_body(
    body: bytes,
    record_body: Mapping[str, Any],
    final_url: str,
    parse: Callable[..., ParsedFeed] = read_body,
    spider: Any = None,
    load: Callable[[str], bytes] | None = None,
) -> dict[str, Any]:
    """A kept `body` read again as the fetch record whose signed `body` is `record_body` says it
    was read (its vendor, feed URL, Content-Type and entry limit, and the final URL of the fetch
    that received it), by the spider class `spider` (`FeedSpider.read_again`: its own reading,
    and for a feed format `parse`, the crawl's worker and ceilings for a caller that has them):
    `{"identities": [...], "in_body", "over_limit", "unread"}` as `signed_entries` counts them,
    or `{"error": why}` when the body is not a readable feed (or the record not one to follow).
    A record of several bodies (`parts`: a sitemap index's sitemaps) is read with `load`, which
    gives the kept bytes of a digest (or raises): without it, such a record cannot be read.
    """
    entries = record_body.get("entries")
    vendor, feed_url = record_body.get("vendor"), record_body.get("feed_url")
    content_type = record_body.get("content_type", "")
    limit = entries.get("limit") if isinstance(entries, Mapping) else None
    if not all(type(v) is str for v in (vendor, feed_url, content_type, final_url)):
        return {"error": "the fetch record names no feed to read it as"}  # the audit says more
    if type(limit) is not int or limit < 0:
        return {"error": "the fetch record states no entry limit"}
    kind = record_body.get("kind", "feed")
    if type(kind) is not str or kind not in READERS:
        return {"error": f"the fetch record names no source kind we read: {kind!r:.80}"}
    if problem := reading_problem(record_body):
        return {"error": f"the fetch record says no reading we follow: {problem}"}
    if spider is None:  # the base's reading (vendor_press and every config-made spider)
        from crovia_spider.spiders.base import FeedSpider

        name = record_body.get("spider")
        name = name if type(name) is str and name else "feed"
        spider = type("FeedReader", (FeedSpider,), {"name": name})
    return spider.read_again(body, record_body, final_url, parse, load)


def body_identities(
    body: bytes, record_body: Mapping[str, Any], final_url: str
) -> list[dict[str, str]] | None:
    """The identities read from a kept `body` (`read_kept_body`, by the base's reading), or None
    when it is not a readable feed."""
    found = read_kept_body(body, record_body, final_url)
    return found.get("identities")
