"""The pure rules behind issue 8's text and URL promises: references, plain text, safe URLs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crovia_spider.feed.body import parse_body
from crovia_spider.feed.plaintext import plain_text
from crovia_spider.feed.references import INVALID_MARK, resolve_references
from crovia_spider.feed.urls import guid_identifier, web_url
from tests.spider.feedtext import item, rss

RSS = {"content-type": "application/rss+xml"}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (b"a&nbsp;b", b"a&#160;b"),
        (b"&eacute;&mdash;", b"&#233;&#8212;"),
        (b"&amp;&lt;&gt;&quot;&apos;", b"&amp;&lt;&gt;&quot;&apos;"),  # XML's own stay
        (b"&secret;", b"&secret;"),  # no HTML entity: left for expat to refuse
        (b"&#xD800;&#x110000;&#0;&#99999999999;", b"&#xFDD0;" * 4),
        (b"&#x41;&#10;&#xFFFD;", b"&#x41;&#10;&#xFFFD;"),
        (b"<![CDATA[&nbsp;&#xD800;]]>", b"<![CDATA[&nbsp;&#xD800;]]>"),
        (b"<!-- &nbsp; &#0; -->", b"<!-- &nbsp; &#0; -->"),
    ],
)
def test_references_are_rewritten_outside_cdata_and_comments(given, expected):
    assert resolve_references(given) == expected


def test_a_wide_body_is_left_alone():
    body = "a&nbsp;b".encode("utf-16")
    assert resolve_references(body) == body


def test_the_entry_with_a_bad_reference_is_left_out_alone_and_counted():
    body = rss(item("ok", "https://l/1"), item("bad &#xD800;", "https://l/2"))
    parsed = parse_body(body, RSS)
    assert not parsed.failed and parsed.invalid_entries == 1
    assert [entry["title"] for entry in parsed.entries] == ["ok"]
    assert not any(INVALID_MARK in entry["title"] for entry in parsed.entries)


@pytest.mark.parametrize(
    ("markup", "text"),
    [
        ("<b>Bold</b> <script>x()</script>text", "Bold text"),
        ("&lt;b&gt;escaped&lt;/b&gt;", "escaped"),
        ("&amp;lt;i&amp;gt;twice&amp;lt;/i&amp;gt;", "twice"),
        ("nul\x00 c1\x9b bidi\u202e\u2066 \t\n lines", "nul c1 bidi lines"),
        ("a < b > c & d", "a < b > c & d"),
    ],
)
def test_plain_text(markup, text):
    assert plain_text(markup) == text


@given(st.text())
def test_plain_text_has_no_control_and_is_stable(text):
    once = plain_text(text)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in once)
    assert once == " ".join(once.split())


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        (
            "https://Lab.Example.org:443/a b?q=x y#f g",
            "https://lab.example.org/a%20b?q=x%20y#f%20g",
        ),
        ("http://user:pw@lab.example.org:8080", "http://lab.example.org:8080/"),
        ("https://bücher.example/é", "https://xn--bcher-kva.example/%C3%A9"),
        ("https://lab.example.org/%20ok", "https://lab.example.org/%20ok"),
        ("javascript:alert(1)", ""),
        ("file:///etc/passwd", ""),
        ("data:text/html,<b>x</b>", ""),
        ("http://[::1", ""),
    ],
)
def test_web_url(url, safe):
    assert web_url(url) == safe
    assert web_url(safe) == safe


_URL_PIECES = st.sampled_from(
    [*"aZ09-._~:/?#[]@!$&'()*+,;=% \t\"<>\\^`{|}\u00e9\u00a0\u2028\x00\x7f", "%20", "%zz", "..",
     "//", "xn--", "[::1]", ":443", ":80", ":0", ":99999"]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(["http://", "https://", "HTTPS://", "//", "http:", "javascript:", ""]),
    st.sampled_from(
        ["Lab.Example.org", "b\u00fccher.example", "[::1]", "", "u:p@h.org", "h.org:443"]
    ),
    st.lists(_URL_PIECES, max_size=12).map("".join),
    st.sampled_from(["", "https://base.example.org/dir/feed.xml", "http://B.Example:8080/a?c#d"]),
)
def test_web_url_is_stable(scheme, host, rest, base):
    """Applying it twice changes nothing, so a link signed once is the same link when an identity
    is computed from it again (a host like `]` once gave `http://]/`, which is no URL)."""
    once = web_url(scheme + host + rest, base)
    assert web_url(once) == once
    assert web_url("http://Lab.Example.org[::1]@]") == ""


def test_guid_identifier():
    assert guid_identifier("lab", "1") == "guid:lab:1"
    assert guid_identifier("lab", "tag:x,2026:a b%") == "guid:lab:tag:x,2026:a%20b%25"
