"""The item a spider yields: one feed entry as the feed gave it, plus what the pipelines add.

The spider fills the first block (what was fetched and parsed); each pipeline stage fills its own
fields in order (docs/design.md, step 3), so a reader can see at a glance who writes what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class FeedEntryItem:
    """One feed entry on its way from the spider to the ledger."""

    # Filled by the spider: the feed, the fetch, and the entry's own fields (text as given).
    vendor: str
    spider: str
    category: str
    source_url: str  # the configured feed URL
    source_status: int  # HTTP status of the feed fetch
    observed_at: str  # when the feed response arrived, UTC with microseconds and Z
    parent_run_hash: str
    title: str  # plain text (crovia_spider/feed/plaintext.py)
    link: str  # absolute http(s), percent-encoded, resolved against xml:base; "" if none
    guid: str  # controls removed, whitespace collapsed
    published: str  # the feed's own date string, "" if none
    description_html: str  # the entry's description (or content) as HTML
    arxiv: dict[str, Any] | None = None  # {"id", "version", "announce_type"} for arXiv entries
    content_html: str = ""  # the entry's content (content:encoded, Atom content) as HTML, if any
    # A sitemap URL's `lastmod` ("" for every other kind): part of its fingerprint, so a changed
    # lastmod is a new version of the page (pipelines/fingerprint.py).
    modified: str = ""
    # The fetch the entry came from, signed as object.fetch: final_url, status, body_sha256,
    # fetched_at, and etag / last_modified when the response sent them (docs/spider.md, 8).
    fetch: dict[str, Any] = field(default_factory=dict)
    # The body bytes fetch.body_sha256 names, shared by every item of the feed; kept in the ledger
    # directory by the issue stage. Left out of repr, so a logged item never dumps a whole feed.
    body: bytes = field(default=b"", repr=False)
    relay: str = ""  # who serves the feed, when not its vendor: signed as body.relay
    family: str = ""  # the feed's source family (identities are scoped to it); "" means the vendor
    cut: list[str] = field(default_factory=list)  # fields cut or left out at their length cap

    # Filled by the pipelines, in order.
    record: dict[str, Any] = field(default_factory=dict)  # normalize: the 17-field spider_record
    identity: dict[str, str] = field(default_factory=dict)  # fingerprint: object.identity
    identity_key: str = ""  # fingerprint: sha256 naming the identity (ledger index key)
    target_id: str = ""  # fingerprint: subject.target_id (a URL, or guid:<vendor>:<guid>)
    change: str = ""  # dedupe: "new" (first sighting) or "updated" (content changed)
    predecessors: list[str] = field(default_factory=list)  # dedupe: earlier axiom_id if updated
    ruleset: dict[str, str] = field(default_factory=dict)  # classify: ruleset version


@dataclass
class FeedBatch:
    """Entries of one fetched body, carried through the pipeline stages together.

    Scrapy's cost of an item (the spider middlewares, the item pipeline chain, the `item_scraped`
    signal and its tasks) is paid once a batch, not once an entry: the peer's whole per-item cost,
    and with five stages more than a stage's own work. Each stage runs over `entries` in order,
    leaving out the ones it drops (counted and logged as an item's drop was). No identity is in a
    batch twice (crovia_spider/spiders/batching.py): the later sighting of an identity is decided
    after the earlier has left the pipelines, as ever (pipelines/dedupe.py).
    """

    vendor: str
    entries: list[FeedEntryItem]
