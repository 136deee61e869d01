"""Fetch records from the spider's side: what one fetch of one feed found, on its way to the ledger.

The spider builds a FeedFetch for every fetch of every feed (a body, a 304, a failure) and sends
it with the FETCH_RECORDED signal; the issue stage signs it as an AX.FETCH envelope
(ledger/records/fetch.py) and keeps the body. For a body the record states the digest of the
identities of the items the spider yielded for it, in the order yielded, and how many entries the
body held that were not read (past the entry limit, or unreadable: `signed_entries`);
`read_kept_body` reads a kept body again with the same spider's code, so anyone can recompute all
of it (`crovia absent` and `crovia history` do).

A body is parsed with two headers only, both in the record: the response's Content-Type (its
charset) and the final URL as Content-Location (the base of relative links), by the reader of the
source kind the record names (`kind`, absent for RSS and Atom). Nothing else a response sends
changes what an entry's identity is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.kinds import READERS, read_body
from ledger.records.fetch import entries_digest, reading_problem

# Sent (Scrapy signal) by the spider with `fetch=FeedFetch(...)`; pipelines/issue.py signs it.
FETCH_RECORDED = object()
# A validator or Content-Type longer than this is read as absent: records sign them, in a ledger
# line of 65,535 bytes, and a server may send 16 KB a header (crovia_spider/spiders/base.py).
HEADER_CHARS = 1024


@dataclass
class FeedFetch:
    """One fetch of one feed, as ledger.records.fetch.new_fetch_envelope takes it, plus the body
    bytes to keep (b"" when none came)."""

    spider: str
    vendor: str
    feed_url: str
    outcome: str
    fetched_at: str
    run_hash: str
    fetch: dict[str, Any] | None = None
    body_sha256: str = ""
    entries: dict[str, Any] | None = None
    sent: dict[str, str] = field(default_factory=dict)
    content_type: str = ""
    kind: str = ""  # the feed's source kind, "" for "feed" (FeedConfig.kind)
    error: str = ""
    relay: str = ""  # who serves the feed, when not its vendor (FeedConfig.relay)
    select: dict[str, Any] = field(default_factory=dict)  # the reader's options (FeedConfig)
    # The further fetches of a source of several bodies (a sitemap index's sitemaps), in order.
    parts: list[dict[str, Any]] = field(default_factory=list)
    body: bytes = field(default=b"", repr=False)
    # The bodies of `parts`, by digest, to keep beside `body`.
    part_bodies: dict[str, bytes] = field(default_factory=dict, repr=False)

    def envelope_fields(self) -> dict[str, Any]:
        """Keyword arguments of new_fetch_envelope."""
        fields = dict(self.__dict__)
        del fields["body"], fields["part_bodies"]
        return fields


def parse_headers(content_type: str, final_url: str) -> dict[str, str]:
    """The headers a feed body is parsed with: Content-Type (when sent) and the final URL."""
    headers = {"content-location": final_url}
    if content_type:
        headers["content-type"] = content_type
    return headers


def sent_validators(headers: Mapping[str, str]) -> dict[str, str]:
    """The conditional-GET validators a request sent, as a fetch record signs them."""
    names = (("If-None-Match", "if_none_match"), ("If-Modified-Since", "if_modified_since"))
    return {key: headers[name] for name, key in names if headers.get(name)}


def signed_entries(
    identities: list[dict[str, str]], parsed: ParsedFeed, limit: int
) -> dict[str, int | str]:
    """A fetch record's `entries` (docs/format.md): the `identities` of the items the spider
    yielded for the body whose reader gave `parsed`, and what the body held besides: entries past
    the `limit`, and `unread`, the entries the body held (as many as the reader gave and left
    out, a reference XML cannot encode, cut off by a truncated document, of the wrong shape or
    past a sitemap's protocol limit; never fewer than the items yielded) that yielded no item."""
    over_limit = max(0, len(parsed.entries) - limit)
    held = len(parsed.entries) + parsed.invalid_entries + parsed.truncated_entries
    held += parsed.malformed_entries + parsed.beyond_protocol
    in_body = max(held, len(identities) + over_limit)
    return {
        "count": len(identities),
        "identities_sha256": entries_digest(identities),
        "limit": limit,
        "in_body": in_body,
        "over_limit": over_limit,
        "unread": in_body - len(identities) - over_limit,
    }


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
