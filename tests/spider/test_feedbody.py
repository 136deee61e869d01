"""Feed bodies are untrusted: parse_body reports instead of raising, and lets no DTD through."""

from __future__ import annotations

import codecs
import hashlib

import pytest

from crovia_spider.feed.body import parse_body
from crovia_spider.fetching.middlewares import retry_after_seconds
from crovia_spider.runs.runlog import parent_run_hash
from tests.conftest import FEEDS, FIXTURES

RSS = {"content-type": "application/rss+xml"}


def test_a_clean_feed():
    parsed = parse_body((FEEDS / "openai_news_rss_prefix.xml").read_bytes(), RSS)
    assert (len(parsed.entries), parsed.version, parsed.error) == (6, "rss20", "")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-16-be"])
def test_entity_declarations_are_refused_in_any_encoding(encoding):
    body = (FIXTURES / "bad" / "entity_bomb.xml").read_text().encode(encoding)
    parsed = parse_body(body, RSS)
    assert parsed.entries == [] and parsed.error.startswith("refused")


BOMB = (FIXTURES / "bad" / "entity_bomb.xml").read_text()
DECLARATION, AFTER_DECLARATION = BOMB.split("\n", 1)
DTD, DOCUMENT = AFTER_DECLARATION.split("]>\n", 1)
BIG_COMMENT = "<!--" + "<rss>" * 20_000 + "-->\n"  # 100 KB, and a root-like tag in it


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"{DECLARATION}\n{BIG_COMMENT}{AFTER_DECLARATION}", id="big comment first"),
        pytest.param(f"{BIG_COMMENT}{BOMB}", id="big comment before the XML declaration"),
        pytest.param(f"{DECLARATION}\n<![CDATA[<rss>]]>{AFTER_DECLARATION}", id="junk in prolog"),
        pytest.param(
            f"{DECLARATION}\n<!DOCTYPE rss [<!ATTLIST rss x CDATA '<rss>'>"
            + AFTER_DECLARATION.split("[", 1)[1],
            id="root-like tag in a quoted literal",
        ),
    ],
)
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_entity_declarations_are_found_wherever_the_prolog_hides_them(text, encoding):
    parsed = parse_body((" " + text).encode(encoding), RSS)  # no BOM, and not "<" first
    assert parsed.entries == []
    assert parsed.error.startswith("refused: the document declares DTD entities"), parsed.error


def test_a_document_expat_cannot_parse_is_refused_for_entities_anywhere():
    # Past the root element it is no prolog, but feedparser's loose parser would still read it.
    text = f"{DECLARATION}\n" + DOCUMENT.replace("<channel>", f"{DTD}]><channel>", 1)
    parsed = parse_body(text.encode(), RSS)
    assert parsed.entries == []
    assert parsed.error.startswith("refused: the document declares DTD entities, outside")


def test_expat_entity_errors_refuse_what_the_prolog_scan_cannot_read():
    # EBCDIC is beyond the prolog scan; feedparser decodes it and expat stops at its limit.
    text = DECLARATION.replace("?>", ' encoding="cp037"?>') + "\n<!-- <x> -->\n" + AFTER_DECLARATION
    parsed = parse_body(text.encode("cp037"), RSS)
    assert parsed.entries == []
    assert parsed.error.startswith("refused: SAXParseException")
    assert "limit on input amplification factor" in parsed.error


@pytest.mark.parametrize(
    "prolog",
    [
        '<!-- a note on <!ENTITY x "y"> -->',
        '<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"'
        ' "http://my.netscape.com/publish/formats/rss-0.91.dtd">',
        '<?xml-stylesheet href="feed.xsl" type="text/xsl"?>',
    ],
)
def test_a_prolog_without_entity_declarations_passes(prolog):
    body = (FEEDS / "openai_news_rss_prefix.xml").read_bytes()
    end = body.index(b"?>") + 2
    parsed = parse_body(body[:end] + b"\n" + prolog.encode() + body[end:], RSS)
    assert len(parsed.entries) == 6 and not parsed.error.startswith("refused"), parsed.error


def test_truncation_keeps_closed_entries_only():
    body = (FEEDS / "arxiv_cs_ai_rss2_2026-04-27_trim3.xml").read_bytes()
    for cut in (3000, 5000, 6500):
        parsed = parse_body(body[:cut], RSS)
        assert len(parsed.entries) == body[:cut].count(b"</item>")
        assert parsed.truncated_entries == (
            1 if b"<item>" in body[:cut].rsplit(b"</item>", 1)[-1] else 0
        )


def test_garbage_is_not_a_feed():
    for body in (b"", b"\x00\xff\xfe garbage", b'{"json": true}'):
        parsed = parse_body(body, {"content-type": "application/json"})
        assert parsed.entries == [] and parsed.error.startswith("not a feed")


@pytest.mark.parametrize(
    ("header", "seconds"),
    [(b"7", 7.0), (b"Thu, 01 Jan 1970 00:00:00 GMT", 0.0), (b"soon", None), (None, None)],
)
def test_retry_after(header, seconds):
    assert retry_after_seconds(header) == seconds


def test_retry_after_date_in_the_future():
    assert retry_after_seconds(b"Fri, 31 Dec 2100 23:59:59 GMT") > 86400


def test_parent_run_hash_formula():
    # sha256 of canonical JSON {"run_id","spider","started_at"}: pinned so the doc stays true.
    assert parent_run_hash("r1", "vendor_press", "2026-06-18T04:43:37.000000Z") == (
        hashlib.sha256(
            b'{"run_id":"r1","spider":"vendor_press","started_at":"2026-06-18T04:43:37.000000Z"}'
        ).hexdigest()
    )


RSS_CAFE = (
    '<?xml version="1.0" encoding="{declared}"?>\n<rss version="2.0"><channel><title>t</title>'
    "<item><title>Café — ünïcode</title><link>https://lab.example.org/1</link></item>"
    "</channel></rss>\n"
)


@pytest.mark.parametrize(
    ("bom", "codec", "declared", "charset"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-8", None),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-8", None),
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf-16", None),
        (codecs.BOM_UTF8, "utf-8", "windows-1252", None),
        (codecs.BOM_UTF8, "utf-8", "utf-8", "iso-8859-1"),
    ],
)
def test_the_byte_order_mark_decides_the_encoding(bom, codec, declared, charset):
    body = bom + RSS_CAFE.format(declared=declared).encode(codec)
    headers = {"Content-Type": "application/rss+xml" + (f"; charset={charset}" if charset else "")}
    parsed = parse_body(body, headers)
    assert not parsed.failed, parsed.error
    assert [e["title"] for e in parsed.entries] == ["Café — ünïcode"]
