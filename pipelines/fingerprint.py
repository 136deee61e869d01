"""Stage 2, fingerprint: the item's stable identity and a deterministic content fingerprint.

Identity (`item.target_id`, the envelope's `subject.target_id`): for arXiv the version-less abstract
URL `https://arxiv.org/abs/<id>`; otherwise the canonical link (scheme and host lower-cased, default
port removed, `#fragment` kept); otherwise the entry's guid. The fragment stays because some feeds
give each entry an anchor on one page (the Claude Code changelog links every version to
`.../changelog#2-1-238`): without it their entries would share one identity and all but the first
would be lost. A feed that changes only the fragment of a link costs one extra envelope, linked to
nothing; a lost item cannot be recovered, so that is the better error.

Fingerprint (64 hex) = sha256(canonical_json(doc)) where doc is
- arXiv: {"v": 1, "target_id", "arxiv_version", "title", "abstract"}; the abstract is the excerpt
  without arXiv's `arXiv:ID Announce Type: T` header, so one version listed as `new` in one
  category and `cross` in another has one fingerprint, and a new version has a new one;
- otherwise: {"v": 1, "target_id", "url", "title", "summary", "published"}.
Observation time, HTTP status, run and classification are left out: they are not the item's content.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from crovia_spider.feed.arxiv import abs_url
from crovia_spider.items import FeedEntryItem
from ledger.canonical import canonical_json
from pipelines.stage import Stage

FINGERPRINT_VERSION = 1
_ARXIV_HEADER = re.compile(r"^arXiv:\S+\s+Announce Type:\s*\S+\s*(?:Abstract:\s*)?", re.I)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_link(url: str) -> str:
    """`url` with scheme and host lower-cased and the default port dropped; the fragment is kept
    (it can be all that tells two entries apart). "" stays ""."""
    if not url:
        return ""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    netloc = host if parts.port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{parts.port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, parts.fragment))


def identity(item: FeedEntryItem) -> str:
    """The item's stable identity: arXiv abs URL without version, else canonical link, else guid."""
    if item.arxiv:
        return abs_url(item.arxiv["id"])
    return canonical_link(item.link) or item.guid


def fingerprint_doc(item: FeedEntryItem, target_id: str) -> dict[str, Any]:
    """The document the fingerprint hashes (see the module docstring)."""
    record = item.record
    if item.arxiv:
        return {
            "v": FINGERPRINT_VERSION,
            "target_id": target_id,
            "arxiv_version": item.arxiv["version"],
            "title": record["title"],
            "abstract": _ARXIV_HEADER.sub("", record["summary_excerpt"], count=1),
        }
    return {
        "v": FINGERPRINT_VERSION,
        "target_id": target_id,
        "url": record["url"],
        "title": record["title"],
        "summary": record["summary_excerpt"],
        "published": record["published"],
    }


class FingerprintPipeline(Stage):
    """Sets `item.target_id` and `record["fingerprint"]`."""

    def process_item(self, item: FeedEntryItem) -> FeedEntryItem:
        item.target_id = identity(item)
        doc = fingerprint_doc(item, item.target_id)
        item.record["fingerprint"] = hashlib.sha256(canonical_json(doc)).hexdigest()
        return item
