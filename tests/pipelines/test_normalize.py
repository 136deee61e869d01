"""Normalising an entry into the 17-field spider_record; plain-text excerpts."""

from __future__ import annotations

from crovia_spider import __version__
from crovia_spider.items import FeedEntryItem
from crovia_spider.plaintext import excerpt, html_to_text
from ledger.envelope import RECORD_FIELDS
from pipelines.normalize import NormalizePipeline


def entry(**fields) -> FeedEntryItem:
    base = {
        "vendor": "arxiv_cs_ai", "spider": "vendor_press", "category": "news",
        "source_url": "https://export.arxiv.org/rss/cs.AI", "source_status": 200,
        "observed_at": "2026-06-18T04:43:37.219665Z", "parent_run_hash": "d" * 64,
        "title": "Spotlight", "link": "https://arxiv.org/abs/2606.19004", "guid": "oai:x",
        "published": "Thu, 18 Jun 2026 00:00:00 -0400", "description_html": "arXiv:2606.19004v1",
    }  # fmt: skip
    return FeedEntryItem(**{**base, **fields})


def test_record_has_the_seed_fields_and_values():
    item = NormalizePipeline(crawler=None).process_item(entry())
    assert set(item.record) == set(RECORD_FIELDS)
    assert item.record["axiom_subtype"] == "news.vendor_press.v1"
    assert item.record["schema"] == "spider.news.vendor_press.v1"
    assert item.record["runtime_version"] == __version__
    assert item.record["url"] == "https://arxiv.org/abs/2606.19004"
    assert item.record["source_url"] == "https://export.arxiv.org/rss/cs.AI"


def test_guid_stands_for_url_only_when_it_is_one():
    pipe = NormalizePipeline(crawler=None)
    assert pipe.process_item(entry(link="", guid="https://x.example.org/1")).record["url"] == (
        "https://x.example.org/1"
    )
    assert pipe.process_item(entry(link="", guid="tag:x,2026:1")).record["url"] == ""


def test_excerpt_is_plain_text_cut_at_1000_characters():
    html = "<p>A &amp; B</p><script>x()</script><style>p{}</style><!-- c -->" + "<b>é</b>" * 2000
    text = excerpt(html)
    assert text.startswith("A & B\né") and len(text) == 1000 and "<" not in text


def test_plain_text_keeps_the_feed_whitespace():
    assert html_to_text("arXiv:1v1 Announce Type: cross \nAbstract: a &lt;b") == (
        "arXiv:1v1 Announce Type: cross \nAbstract: a <b"
    )
