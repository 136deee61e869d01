"""An entry's identity, `{"family", "guid", "link"}` (signed as the envelope's `object.identity`).

The rule is pipelines/fingerprint.py's (its docstring says why); it lives here because the spider
needs it too: a fetch record signs the digest of the identities of every entry its body held, in
feed order (ledger/records/fetch.py), and anyone recomputing that digest from a kept body reads the
body with the same code (`crovia_spider.fetch_entries`).
"""

from __future__ import annotations

from crovia_spider.config.feeds import ARXIV_FAMILY
from crovia_spider.feed.arxiv import abs_url
from crovia_spider.feed.urls import web_url
from crovia_spider.items import FeedEntryItem


def canonical_link(url: str) -> str:
    """`url` as a safe http(s) URL (crovia_spider/feed/urls.py: scheme and host lower-cased,
    default port dropped, percent-encoded, fragment kept); "" for "" or no http(s) URL."""
    return web_url(url)


def identity(item: FeedEntryItem) -> dict[str, str]:
    """The item's identity, `{"family", "guid", "link"}` (pipelines/fingerprint.py's rule)."""
    if item.arxiv:
        return {"family": ARXIV_FAMILY, "guid": "", "link": abs_url(item.arxiv["id"])}
    family = item.family or item.vendor
    return {"family": family, "guid": item.guid, "link": canonical_link(item.link)}
