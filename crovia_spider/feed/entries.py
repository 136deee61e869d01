"""One feedparser entry becomes a FeedEntryItem: fields as the feed gave them, links made absolute.

No hashing, dedupe or classification here (the pipelines do that); only reading the entry.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

from crovia_spider.feed.arxiv import arxiv_meta
from crovia_spider.feed.plaintext import html_to_text
from crovia_spider.feeds_config import FeedConfig
from crovia_spider.items import FeedEntryItem


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
    """The item of one entry of `feed`, fetched from `base_url` with HTTP `status`."""
    link = absolute_link(entry.get("link") or "", base_url)
    return FeedEntryItem(
        vendor=feed.vendor,
        spider=spider,
        category=feed.category,
        source_url=feed.url,
        source_status=status,
        observed_at=observed_at,
        parent_run_hash=run_hash,
        title=_title(entry),
        link=link,
        guid=(entry.get("id") or "").strip(),
        published=(entry.get("published") or entry.get("updated") or "").strip(),
        description_html=_description(entry),
        arxiv=arxiv_meta(entry, link),
        content_html=_content(entry),
    )


def absolute_link(link: str, base_url: str) -> str:
    """`link` resolved against the feed's URL (feedparser already applied xml:base); "" if it is
    empty or not http(s), so a `javascript:` or `file:` link never becomes an item's URL."""
    link = link.strip()
    if not link:
        return ""
    absolute = urljoin(base_url, link)
    return absolute if urlsplit(absolute).scheme in ("http", "https") else ""


def _title(entry: dict[str, Any]) -> str:
    title = entry.get("title") or ""
    detail = entry.get("title_detail") or {}
    if "html" in (detail.get("type") or ""):
        title = html_to_text(title)
    return " ".join(title.split())


def _description(entry: dict[str, Any]) -> str:
    return entry.get("summary") or _content(entry)


def _content(entry: dict[str, Any]) -> str:
    for content in entry.get("content") or ():
        if content.get("value"):
            return content["value"]
    return ""
