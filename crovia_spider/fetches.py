"""Fetch records from the spider's side: what one fetch of one feed found, on its way to the ledger.

The spider builds a FeedFetch for every fetch of every feed (a body, a 304, a failure) and sends
it with the FETCH_RECORDED signal; the issue stage signs it as an AX.FETCH envelope
(ledger/fetch_record.py) and keeps the body. For a body the record states the digest of its
entries' identities, in feed order; `body_identities` reads a kept body again the same way, so
anyone can recompute that digest (`crovia absent` and `crovia history` do).

A body is parsed with two headers only, both in the record: the response's Content-Type (its
charset) and the final URL as Content-Location (the base of relative links). Nothing else a
response sends changes what an entry's identity is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from crovia_spider.feed.body import ParsedFeed, parse_body
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.identity import identity
from crovia_spider.feeds_config import FeedConfig

# Sent (Scrapy signal) by the spider with `fetch=FeedFetch(...)`; pipelines/issue.py signs it.
FETCH_RECORDED = object()


@dataclass
class FeedFetch:
    """One fetch of one feed, as ledger.fetch_record.new_fetch_envelope takes it, plus the body
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
    error: str = ""
    body: bytes = field(default=b"", repr=False)

    def envelope_fields(self) -> dict[str, Any]:
        """Keyword arguments of new_fetch_envelope."""
        fields = dict(self.__dict__)
        del fields["body"]
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


def read_identities(
    parsed: ParsedFeed, vendor: str, feed_url: str, final_url: str, limit: int
) -> list[dict[str, str]]:
    """The identities of the entries of `parsed` the crawl reads (the first `limit`; an entry
    that cannot be read is left out, as the spider leaves it out), in feed order."""
    feed = FeedConfig(vendor=vendor, url=feed_url)
    out = []
    for entry in parsed.entries[:limit]:
        try:
            item = entry_item(
                entry, feed, spider="", base_url=final_url, status=200, observed_at="",
                run_hash="",
            )  # fmt: skip
        except Exception:  # the spider drops such an entry alone, and so does this
            continue
        out.append(identity(item))
    return out


def body_identities(
    body: bytes, record_body: Mapping[str, Any], final_url: str
) -> list[dict[str, str]] | None:
    """The identities of the entries of a kept `body`, read as the fetch record whose signed
    `body` is `record_body` says it was read (its vendor, feed URL, Content-Type and entry limit,
    and the final URL of the fetch that received it); None when the body is not a readable feed.
    """
    entries = record_body.get("entries")
    vendor, feed_url = record_body.get("vendor"), record_body.get("feed_url")
    content_type = record_body.get("content_type", "")
    limit = entries.get("limit") if isinstance(entries, Mapping) else None
    if not all(type(v) is str for v in (vendor, feed_url, content_type, final_url)):
        return None  # not a record this reader can follow (the audit names what is wrong)
    if type(limit) is not int or limit < 0:
        return None
    parsed = parse_body(body, parse_headers(content_type, final_url))
    if parsed.failed:
        return None
    return read_identities(parsed, vendor, feed_url, final_url, limit)
