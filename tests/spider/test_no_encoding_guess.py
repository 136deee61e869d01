"""A body's encoding is never guessed: the reading of a kept body must not change with the
packages installed (the wacz package brings chardet, which feedparser uses when it can import it).
"""

from __future__ import annotations

import feedparser.encodings

from crovia_spider.feed.body import parse_body

TITLE = "Привет мир, как дела у всех нас сегодня"


def test_a_body_its_declared_encoding_cannot_decode_reads_as_windows_1252():
    body = (
        (
            b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>'
            b"<link>https://lab.example.org/</link><description>d</description><item><title>"
        )
        + TITLE.encode("koi8-r")
        + (b"</title><link>https://lab.example.org/1</link></item></channel></rss>")
    )
    parsed = parse_body(body, {"content-type": "application/rss+xml"})
    assert feedparser.encodings.lazy_chardet_encoding is None
    # chardet would read KOI8-R here; without a guess it is windows-1252, as it always was.
    assert parsed.entries[0]["title"] == TITLE.encode("koi8-r").decode("windows-1252")
    assert "parsed as windows-1252" in parsed.error
