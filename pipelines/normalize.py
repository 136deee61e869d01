"""Stage 1, normalise: the item becomes a `spider_record`, the 17 fields of docs/format.md.

`summary_excerpt` is the description as plain text (crovia_spider/feed/plaintext.py: no tags,
entities decoded, controls and bidi overrides removed, whitespace collapsed) cut to 1,000
characters; when that has no text (an empty or markup-only description: changelog feeds put
everything in content:encoded), the entry's content by the same rules. `url` is the item's safe
http(s) link (or its guid when that is an http(s) URL, made safe the same way), else "".
An entry with neither link nor guid has no identity, and one with neither title nor description
says nothing: both are dropped with their reason.
`fingerprint` and `decision_hint` are left empty for the stages that own them.
"""

from __future__ import annotations

from crovia_spider import __version__
from crovia_spider.feed.plaintext import excerpt
from crovia_spider.feed.urls import web_url
from crovia_spider.items import FeedEntryItem
from pipelines.stage import Stage

ENVELOPE_TARGET = "AX.OBS"


def subtype_fields(category: str, spider: str) -> dict[str, str]:
    """`axiom_subtype` and `schema` for a category and spider, as in the reference receipt."""
    return {"axiom_subtype": f"{category}.{spider}.v1", "schema": f"spider.{category}.{spider}.v1"}


class NormalizePipeline(Stage):
    """Builds `item.record` from the fields the spider read."""

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        summary = excerpt(item.description_html) or excerpt(item.content_html)
        if not item.link and not item.guid:
            raise self.drop(item, "no link and no guid")
        if not item.title and not summary:
            raise self.drop(item, "no title and no description")
        item.record = {
            "category": item.category,
            "decision_hint": "",
            "envelope_target": ENVELOPE_TARGET,
            "fingerprint": "",
            "observed_at": item.observed_at,
            "parent_run_hash": item.parent_run_hash,
            "published": item.published,
            "runtime_version": __version__,
            "source_status": item.source_status,
            "source_url": item.source_url,
            "spider": item.spider,
            "summary_excerpt": summary,
            "title": item.title,
            "url": item.link or web_url(item.guid),
            "vendor": item.vendor,
            **subtype_fields(item.category, item.spider),
        }
        return item
