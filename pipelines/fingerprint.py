"""Stage 2, fingerprint: the item's identity, its target_id, and a deterministic fingerprint.

Identity (`item.identity`, signed as the envelope's `object.identity`; the ledger indexes
`item.identity_key` = sha256 of its canonical JSON, ledger/store/index.py): `{"family", "guid",
"link"}`.
- `family` scopes it: arXiv's feeds are one family (`arxiv`), every other feed is its own, named
  by its vendor id (crovia_spider/config/feeds.py). A third-party feed repeating an arXiv entry,
  another vendor's link or a guid such as `1` therefore never meets another family's item.
- arXiv: `guid` "" and `link` the version-less abstract URL `https://arxiv.org/abs/<id>`, so one
  paper is one item across categories and versions; only arXiv-family feeds carry arXiv metadata.
- otherwise: the entry's guid (cleaned) and its canonical link (scheme and host lower-cased,
  default port dropped, `#fragment` kept), either of them "" when absent. Entries that share a
  link but not a guid (podcast episodes, sections of one page) stay distinct, and so do entries
  with one guid and two links; the fragment stays because some feeds give each entry an anchor on
  one page (`.../changelog#2-1-238`).

`subject.target_id` says what the item is about: arXiv's abstract URL, else the canonical link,
else the guid when it is an http(s) URL, else `guid:<vendor>:<percent-encoded guid>`
(crovia_spider/feed/urls.py). It is never a `javascript:`, `file:` or `data:` string.

Fingerprint (64 hex) = sha256(canonical_json(doc)) where doc is
- arXiv: {"v": 1, "target_id", "arxiv_version", "title", "abstract"}; the abstract is the excerpt
  without arXiv's `arXiv:ID Announce Type: T` header, so one version listed as `new` in one
  category and `cross` in another has one fingerprint, and a new version has a new one; an
  OAI-PMH record's abstract is cut where its primary RSS listing's excerpt ends
  (crovia_spider/feed/arxiv.py, `fingerprint_abstract`), so a paper read both ways is one version;
- otherwise: {"v": 1, "target_id", "url", "title", "summary", "published"}, and `modified`, a
  sitemap URL's lastmod, when it has one (no other kind has it, so their fingerprints are as they
  were): a page whose lastmod changed is a new version of it.
Observation time, HTTP status, run and classification are left out: they are not the item's content.
"""

from __future__ import annotations

import hashlib
from typing import Any

from crovia_spider.feed.arxiv import abs_url, fingerprint_abstract
from crovia_spider.feed.identity import canonical_link, identity
from crovia_spider.feed.urls import guid_identifier, web_url
from crovia_spider.items import FeedEntryItem
from ledger.canonical import canonical_json
from ledger.store import identity_digest
from pipelines.stage import Stage

FINGERPRINT_VERSION = 1


def target_id(item: FeedEntryItem) -> str:
    """`subject.target_id`: what the item is about (see the module docstring)."""
    if item.arxiv:
        return abs_url(item.arxiv["id"])
    # The identity's link is canonical_link(item.link), already made (in the spider): asking
    # again cost a URL parse per item, as the cache has long dropped it when the stage runs.
    link = (item.identity["link"] if item.identity else canonical_link(item.link)) or web_url(
        item.guid
    )
    return link or guid_identifier(item.vendor, item.guid)


def fingerprint_doc(item: FeedEntryItem, target: str) -> dict[str, Any]:
    """The document the fingerprint hashes (see the module docstring)."""
    record = item.record
    if item.arxiv:
        return {
            "v": FINGERPRINT_VERSION,
            "target_id": target,
            "arxiv_version": item.arxiv["version"],
            "title": record["title"],
            "abstract": fingerprint_abstract(item.arxiv, record["summary_excerpt"]),
        }
    doc = {
        "v": FINGERPRINT_VERSION,
        "target_id": target,
        "url": record["url"],
        "title": record["title"],
        "summary": record["summary_excerpt"],
        "published": record["published"],
    }
    if item.modified:
        doc["modified"] = item.modified
    return doc


class FingerprintPipeline(Stage):
    """Sets `item.identity`, `item.identity_key`, `item.target_id` and `record["fingerprint"]`."""

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        item.identity = item.identity or identity(item)  # the spider sets it (fetch records)
        item.identity_key = identity_digest(item.identity)
        item.target_id = target_id(item)
        doc = fingerprint_doc(item, item.target_id)
        item.record["fingerprint"] = hashlib.sha256(canonical_json(doc)).hexdigest()
        return item
