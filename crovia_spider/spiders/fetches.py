"""Fetch records from the spider's side: what one fetch of one feed found, on its way to the ledger.

The spider builds a FeedFetch for every fetch of every feed (a body, a 304, a failure) and sends
it with the FETCH_RECORDED signal; the issue stage signs it as an AX.FETCH envelope
(ledger/records/fetch.py) and keeps the body. For a body the record states the digest of the
identities of the items the spider yielded for it, in the order yielded, and how many entries the
body held that were not read (past the entry limit, or unreadable: `signed_entries`);
`read_kept_body` (reread.py) reads a kept body again with the same spider's code, so anyone can
recompute all of it (`crovia absent` and `crovia history` do).

A body is parsed with two headers only, both in the record: the response's Content-Type (its
charset) and the final URL as Content-Location (the base of relative links), by the reader of the
source kind the record names (`kind`, absent for RSS and Atom). Nothing else a response sends
changes what an entry's identity is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import scrapy
from scrapy.http import Response
from scrapy.responsetypes import responsetypes

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.body import ParsedFeed
from crovia_spider.runs.runlog import FeedOutcome
from ledger.records.fetch import entries_digest

# Sent (Scrapy signal) by the spider with `fetch=FeedFetch(...)`; pipelines/issue.py signs it.
FETCH_RECORDED = object()
# Sent (Scrapy signal) by the spider with `capture=PageFetch(...)`; pipelines/issue.py signs it.
CAPTURE_RECORDED = object()
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


def kept_response(
    body: bytes,
    final_url: str,
    content_type: str,
    feed: FeedConfig,
    status: int = 200,
    validators: Mapping[str, str] | None = None,
) -> Response:
    """A kept body as the response a crawl received it in: the class Scrapy picks for it, its
    final URL, its Content-Type, `status` and `validators` (ETag, Last-Modified), and a request
    carrying the feed, as in a crawl."""
    headers = {"Content-Type": content_type} if content_type else {}
    headers.update(validators or {})
    kind = responsetypes.from_args(headers=headers, url=final_url, body=body)
    request = scrapy.Request(feed.url, meta={"feed": feed}, dont_filter=True)
    return kind(url=final_url, status=status, headers=headers, body=body, request=request)


def record_response(outcome: FeedOutcome, response: Response) -> None:
    """Copy what the run record keeps of a response: final URL, status, size, digest, validators."""
    outcome.final_url = response.url
    outcome.status = response.status
    outcome.bytes = len(response.body)
    outcome.sha256 = hashlib.sha256(response.body).hexdigest()
    outcome.etag = _header(response, b"ETag")
    outcome.last_modified = _header(response, b"Last-Modified")


def fetch_evidence(response: Response, body_sha256: str, fetched_at: str) -> dict[str, Any]:
    """What every envelope of this response signs as `object.fetch`: the URL after redirects, the
    status, the sha256 of the body as parsed (after transfer and content decoding), when it
    arrived, and `etag` / `last_modified` only if the response sent them (absent, not empty)."""
    evidence: dict[str, Any] = {
        "body_sha256": body_sha256,
        "fetched_at": fetched_at,
        "final_url": response.url,
        "status": response.status,
    }
    for key, header in (("etag", b"ETag"), ("last_modified", b"Last-Modified")):
        if value := _header(response, header):
            evidence[key] = value
    return evidence


def response_headers(response: Response) -> dict[str, str]:
    """The headers feedparser reads a body with: its Content-Type, and the final URL as the base
    of relative links (`parse_headers`: a fetch record names both, so the body can be read again
    exactly as the crawl read it)."""
    return parse_headers(_header(response, b"Content-Type"), response.url)


def _header(response: Response, name: bytes) -> str:
    """The header `name` of `response` as text, or "" when it is absent or longer than
    HEADER_CHARS: every envelope of the response signs its validators and its fetch record the
    Content-Type, and a ledger line holds 65,535 bytes (a server's 16 KB headers could fill it,
    and a record over it would stop a crawl's issuing). A real one is far shorter."""
    value = response.headers.get(name)
    return value.decode("latin-1") if value and len(value) <= HEADER_CHARS else ""
