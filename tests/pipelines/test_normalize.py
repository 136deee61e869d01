"""Normalising an entry into the 17-field spider_record; plain-text excerpts."""

from __future__ import annotations

import feedparser
import pytest

from crovia_spider import __version__
from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.plaintext import excerpt, plain_text
from crovia_spider.items import FeedEntryItem
from ledger.envelope import RECORD_FIELDS
from pipelines.normalize import NormalizePipeline
from tests.conftest import FEEDS

CHANGELOG = (FEEDS / "anthropic_claude_code_changelog_mintlify_prefix.xml").read_bytes()


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
    assert text.startswith("A & B é") and len(text) == 1000 and "<" not in text


def test_plain_text_collapses_whitespace_and_keeps_a_lone_angle_bracket():
    assert plain_text("arXiv:1v1 Announce Type: cross \nAbstract: a &lt;b") == (
        "arXiv:1v1 Announce Type: cross Abstract: a <b"
    )


def test_an_empty_or_markup_only_description_falls_back_to_the_content():
    pipe = NormalizePipeline(crawler=None)
    content = "<ul><li>Fixed &amp; improved</li><script>x()</script></ul>"
    for description in ("", "  ", '<img src="https://x.example.org/a.png"/>', "<p> </p>"):
        item = pipe.process_item(entry(description_html=description, content_html=content))
        assert item.record["summary_excerpt"] == "Fixed & improved"
    # A description with text wins over the content.
    item = pipe.process_item(entry(description_html="<p>Short</p>", content_html=content))
    assert item.record["summary_excerpt"] == "Short"


@pytest.mark.parametrize(
    "description",
    ["", "<description/>", '<description><![CDATA[<img src="a.png"/>]]></description>'],
)
def test_changelog_entries_take_their_text_from_content_encoded(description):
    # The Claude Code changelog carries each version's notes in content:encoded only.
    notes = b"<![CDATA[<ul><li>Added <code>/rewind</code></li><li>Fixed a hang</li></ul>]]>"
    body = CHANGELOG.replace(b"<content:encoded/>", description.encode() + b"<content:encoded>"
                             + notes + b"</content:encoded>", 1)  # fmt: skip
    first = feedparser.parse(body, sanitize_html=True).entries[0]
    feed = FeedConfig(vendor="claude_code", url="https://code.claude.com/docs/en/changelog/rss.xml")
    item = entry_item(first, feed, spider="vendor_press", base_url=feed.url, status=200,
                      observed_at="2026-08-21T01:24:21.000000Z", run_hash="d" * 64)  # fmt: skip
    record = NormalizePipeline(crawler=None).process_item(item).record
    assert record["summary_excerpt"] == "Added /rewind Fixed a hang"
    assert record["title"] == "2.1.238"
