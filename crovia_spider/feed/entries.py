"""One feedparser entry becomes a FeedEntryItem: plain text, safe links, bounded fields.

What the item holds (the pipelines rely on it):
- `title`: plain text (crovia_spider/feed/plaintext.py), at most TITLE_CHARS characters;
- `link`: an absolute http(s) URL made safe by crovia_spider/feed/urls.py (xml:base and the feed's
  final URL already applied by feedparser), or "" when the entry has none, it is no http(s) URL
  (`javascript:`, `file:`, `data:`) or it is longer than LINK_CHARS;
- `guid`: controls removed, whitespace collapsed, at most GUID_CHARS characters;
- `published`: the feed's date string, cleaned the same way, "" when longer than DATE_CHARS;
- `arxiv`: id, version and announce type, only for feeds of the arXiv family: no other source can
  claim an arXiv identity.
A field cut or left out at its cap is named in `item.cut` (the spider counts it in the run
record). No hashing, dedupe
or classification here.
"""

from __future__ import annotations

from typing import Any

from crovia_spider.config.feeds import ARXIV_FAMILY, FeedConfig
from crovia_spider.feed.arxiv import arxiv_meta
from crovia_spider.feed.plaintext import clean_text, plain_text
from crovia_spider.feed.urls import web_url
from crovia_spider.items import FeedEntryItem

TITLE_CHARS = 500
GUID_CHARS = 1000
LINK_CHARS = 2000
DATE_CHARS = 100


def entry_item(
    entry: dict[str, Any],
    feed: FeedConfig,
    *,
    spider: str,
    base_url: str,
    status: int,
    observed_at: str,
    run_hash: str,
) -> FeedEntryItem:
    """The item of one entry of `feed`, fetched from `base_url` with HTTP `status`.

    (An entry holding a reference XML cannot encode, `&#xD800;`, never gets here: parse_body
    leaves it out and counts it, crovia_spider/feed/body.py.)
    """
    cut: list[str] = []
    link = web_url(_text(entry.get("link")), base_url)
    if len(link) > LINK_CHARS:
        link = _left_out("link", cut)
    return FeedEntryItem(
        vendor=feed.vendor,
        spider=spider,
        category=feed.category,
        source_url=feed.url,
        source_status=status,
        observed_at=observed_at,
        parent_run_hash=run_hash,
        title=_capped(plain_text(_text(entry.get("title"))), TITLE_CHARS, "title", cut),
        link=link,
        guid=_capped(clean_text(_text(entry.get("id"))), GUID_CHARS, "guid", cut),
        published=_date(entry, cut),
        description_html=_text(entry.get("summary")) or _content(entry),
        arxiv=arxiv_meta(entry, link) if feed.family == ARXIV_FAMILY else None,
        content_html=_content(entry),
        modified=_modified(entry, cut),
        family=feed.family,
        relay=feed.relay,
        cut=cut,
    )


def _date(entry: dict[str, Any], cut: list[str]) -> str:
    date = clean_text(_text(entry.get("published")) or _text(entry.get("updated")))
    return _left_out("published", cut) if len(date) > DATE_CHARS else date


def _modified(entry: dict[str, Any], cut: list[str]) -> str:
    """A sitemap URL's `lastmod` (crovia_spider/feed/sitemap.py), cleaned and capped as a date."""
    date = clean_text(_text(entry.get("lastmod")))
    return _left_out("modified", cut) if len(date) > DATE_CHARS else date


def _capped(text: str, limit: int, name: str, cut: list[str]) -> str:
    if len(text) > limit:
        cut.append(name)
        return text[:limit]
    return text


def _left_out(name: str, cut: list[str]) -> str:
    cut.append(name)
    return ""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content(entry: dict[str, Any]) -> str:
    for content in entry.get("content") or ():
        if isinstance(content, dict) and _text(content.get("value")):
            return content["value"]
    return ""
