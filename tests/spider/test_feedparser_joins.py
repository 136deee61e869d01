"""feedparser's URL joins are remembered (crovia_spider/feed/body.py): it joins the document's
base URL with itself at every start tag, a quarter of its time. These tests hold that remembering
changes nothing: every fixture feed, bad body and fuzz seed, and generated feeds of hostile
xml:base values (relative, nested, `javascript:`, malformed, longer than what is remembered),
parse to the same ParsedFeed, entry by entry and field by field, with the library's own joins."""

from __future__ import annotations

import random
from pathlib import Path

import feedparser.mixin
import feedparser.urls
import pytest

from crovia_spider.feed import body as feed_body
from crovia_spider.spiders.fetches import parse_headers

ROOT = Path(__file__).resolve().parents[1]
HEADERS = parse_headers("application/atom+xml; charset=utf-8", "https://example.org/dir/feed.xml")
BASES = [
    "", "/", "sub/", "../up/", "https://other.example/x/", "javascript:alert(1)//", "data:,x",
    "http://[::1", "//proto.example/p/", "?q=1", "#frag", "file:///etc/", "https://x/%zz/",
    "https://é.example/ü/", " https://spaced.example/ ", "https://long.example/" + "a" * 3000,
]  # fmt: skip


def _parsed(body: bytes, remembered: bool, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as patch:
        if not remembered:  # the library's own joins, as feedparser ships them
            patch.setattr(feedparser.mixin, "make_safe_absolute_uri",
                          feedparser.urls.make_safe_absolute_uri)  # fmt: skip
            patch.setattr(feedparser.mixin, "_urljoin", feedparser.urls._urljoin)
        return feed_body.parse_body(body, HEADERS)


def _bodies() -> list[Path]:
    folders = ("fixtures/feeds", "fixtures/bad", "fuzz/corpus/feed")
    return [p for folder in folders for p in sorted((ROOT / folder).iterdir()) if p.is_file()]


def test_the_remembered_joins_are_in_place():
    assert feedparser.mixin.make_safe_absolute_uri is not feedparser.urls.make_safe_absolute_uri
    assert feedparser.mixin._urljoin is not feedparser.urls._urljoin


@pytest.mark.parametrize("path", _bodies(), ids=lambda p: p.name)
def test_every_known_body_parses_the_same(path: Path, monkeypatch) -> None:
    body = path.read_bytes()
    assert _parsed(body, True, monkeypatch) == _parsed(body, False, monkeypatch)


def test_each_join_answers_as_the_library_does():
    for join, own in (
        (feedparser.mixin.make_safe_absolute_uri, feedparser.urls.make_safe_absolute_uri),
        (feedparser.mixin._urljoin, feedparser.urls._urljoin),
    ):
        for _ in range(2):  # the second time from what was remembered
            for base in BASES:
                for rel in BASES:
                    assert join(base, rel) == own(base, rel), (base, rel)
    assert feedparser.mixin.make_safe_absolute_uri("https://x/") == "https://x/"
    with pytest.raises(TypeError):  # an error is raised again, never remembered as an answer
        feedparser.mixin._urljoin("https://x/", None)
    with pytest.raises(TypeError):
        feedparser.mixin._urljoin("https://x/", None)


def test_generated_xml_bases_parse_the_same(monkeypatch) -> None:
    chosen = random.Random(11)
    for _ in range(120):
        entries = []
        for i in range(4):
            base = chosen.choice(BASES).replace("&", "&amp;").replace('"', "&quot;")
            inner = chosen.choice(BASES).replace("&", "&amp;").replace('"', "&quot;")
            entries.append(
                f'<entry xml:base="{base}"><id>tag:x,2026:{i}</id><title>t{i}</title>'
                f'<link href="{chosen.choice(["rel", "/abs", "../up", "#f", "", "?q"])}"/>'
                f'<content type="html" xml:base="{inner}">&lt;a href="r"&gt;x&lt;/a&gt;</content>'
                "<updated>2026-01-01T00:00:00Z</updated></entry>"
            )
        top = chosen.choice(BASES).replace("&", "&amp;").replace('"', "&quot;")
        body = (
            f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"'
            f' xml:base="{top}"><title>t</title><id>urn:t</id>{"".join(entries)}</feed>'
        ).encode()
        assert _parsed(body, True, monkeypatch) == _parsed(body, False, monkeypatch), body
