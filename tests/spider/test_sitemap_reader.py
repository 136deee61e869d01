"""The sitemap reader alone (crovia_spider/feed/sitemap.py): bodies in, ParsedFeed out, no network.

Sitemaps, gzipped sitemaps, news sitemaps, indexes and robots.txt; the source's include and exclude
patterns; and hostile bodies: gzip bombs, more URLs than the protocol allows, entity declarations,
truncated documents, wrong roots, garbage, malformed URLs, lone surrogates and huge strings.
"""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.utils.sitemap import Sitemap

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.sitemap import (
    MAX_UNCOMPRESSED,
    MAX_URL_CHARS,
    MAX_URLS,
    TOO_LARGE,
    NewsSitemap,
    parse_sitemap,
)

URL = "https://lab.example.org/sitemap.xml"
HEADERS = {"content-location": URL, "content-type": "application/xml"}
ROBOTS = {"content-location": "https://lab.example.org/robots.txt", "content-type": "text/plain"}
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
URLSET = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}" xmlns:news="{NEWS_NS}">'
)
DECLARES = "refused: the document declares DTD entities (entity bomb or XXE)"


def urlset(*urls: str) -> bytes:
    return (URLSET + "".join(urls) + "</urlset>\n").encode()


def url(loc: str, lastmod: str = "") -> str:
    return (
        f"<url><loc>{loc}</loc>" + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "") + "</url>"
    )


def read(body: bytes, headers: dict[str, str] | None = None, **options: object):
    return parse_sitemap(body, HEADERS if headers is None else headers, options)


def links(parsed) -> list[str]:
    return [entry["link"] for entry in parsed.entries]


NEWS = urlset(
    """<url><loc>https://lab.example.org/news/1</loc>
      <lastmod>2026-01-02</lastmod>
      <news:news>
        <news:publication><news:name>Lab</news:name><news:language>en</news:language></news:publication>
        <news:publication_date>2026-01-01T10:00:00Z</news:publication_date>
        <news:title> Model card, <![CDATA[v2 & more]]> </news:title>
      </news:news>
    </url>"""
)


def test_a_urlset_gives_one_entry_per_url() -> None:
    parsed = read(
        urlset(
            url("https://lab.example.org/a", "2026-01-01"),
            url("  https://lab.example.org/b?x=1&amp;y=2  "),
        )
    )
    assert (parsed.version, parsed.failed, parsed.error) == ("sitemap", False, "")
    assert parsed.entries == [
        {
            "id": "",
            "link": "https://lab.example.org/a",
            "title": "https://lab.example.org/a",
            "published": "2026-01-01",
            "lastmod": "2026-01-01",
        },
        {
            "id": "",
            "link": "https://lab.example.org/b?x=1&y=2",
            "title": "https://lab.example.org/b?x=1&y=2",
            "published": "",
            "lastmod": "",
        },
    ]


def test_entries_become_items() -> None:
    feed = FeedConfig(vendor="lab", url=URL, kind="sitemap")
    (entry,) = read(NEWS).entries
    item = entry_item(
        entry,
        feed,
        spider="t",
        base_url=URL,
        status=200,
        observed_at="2026-01-01T00:00:00Z",
        run_hash="0" * 64,
    )
    assert (item.link, item.title) == (
        "https://lab.example.org/news/1",
        "Model card, v2 & more",
    )


def test_an_empty_urlset_is_a_sitemap_of_nothing() -> None:
    parsed = read(urlset())
    assert (parsed.version, parsed.entries, parsed.failed, parsed.error) == (
        "sitemap",
        [],
        False,
        "",
    )


def test_a_gzipped_urlset_is_read() -> None:
    parsed = read(gzip.compress(urlset(url("https://lab.example.org/a"))))
    assert (links(parsed), parsed.failed) == (["https://lab.example.org/a"], False)


def test_a_news_sitemap_gives_its_title_and_publication_date() -> None:
    (entry,) = read(NEWS).entries
    assert entry["title"] == "Model card, v2 & more"
    assert entry["published"] == "2026-01-01T10:00:00Z"  # the news date, before lastmod
    assert entry["lastmod"] == "2026-01-02"


def test_scrapy_still_loses_the_nested_news_elements() -> None:
    """NewsSitemap exists because Scrapy's Sitemap keeps only direct children's text. Should a
    Scrapy release read nested elements (or rename the method overridden), this fails: look at
    NewsSitemap again."""
    (plain,) = list(Sitemap(NEWS))
    assert plain["news"] == "" and "title" not in plain and "publication_date" not in plain
    assert "_process_sitemap_element" in vars(Sitemap)
    (ours,) = list(NewsSitemap(NEWS))
    assert ours["news_title"] == "Model card, v2 & more"


def test_an_index_names_its_sitemaps_once() -> None:
    body = f"""<sitemapindex xmlns="{SITEMAP_NS}">
      <sitemap><loc>https://lab.example.org/s1.xml.gz</loc><lastmod>2026-01-01</lastmod></sitemap>
      <sitemap><loc>https://lab.example.org/s2.xml</loc></sitemap>
      <sitemap><loc>https://lab.example.org/s1.xml.gz</loc></sitemap>
      <sitemap><loc>/relative.xml</loc></sitemap>
    </sitemapindex>""".encode()
    parsed = read(body)
    assert (parsed.version, parsed.failed, parsed.entries) == ("sitemapindex", False, [])
    assert parsed.sitemaps == [
        "https://lab.example.org/s1.xml.gz",
        "https://lab.example.org/s2.xml",
    ]
    assert parsed.malformed_entries == 1


def test_robots_txt_names_sitemaps() -> None:
    body = (
        b"User-agent: *\nDisallow: /private\n"
        b"Sitemap: https://lab.example.org/a.xml\n"
        b"sitemap:/b.xml\n"  # Scrapy joins it with the robots.txt's URL
        b"Sitemap: https://lab.example.org/a.xml\n"
        b"Sitemap: http://[::1\n"  # no URL parser reads it: it costs only itself
        b"Sitemap: ftp://lab.example.org/c.xml\n"
        b"Sitemap: \xff\xfe\n"
    )
    parsed = read(body, ROBOTS)
    assert (parsed.version, parsed.failed, parsed.entries) == ("robots.txt", False, [])
    assert parsed.sitemaps == ["https://lab.example.org/a.xml", "https://lab.example.org/b.xml"]
    assert parsed.malformed_entries == 2


def test_robots_txt_naming_no_sitemap_fails() -> None:
    parsed = read(b"User-agent: *\nDisallow:\n", ROBOTS)
    assert (parsed.failed, parsed.error) == (True, "robots.txt names no sitemap")


def test_robots_txt_names_at_most_the_protocols_count() -> None:
    body = b"".join(b"Sitemap: https://lab.example.org/%d.xml\n" % n for n in range(MAX_URLS + 3))
    parsed = read(body, ROBOTS)
    assert (len(parsed.sitemaps), parsed.beyond_protocol) == (MAX_URLS, 3)


@pytest.mark.parametrize(
    ("options", "kept", "excluded"),
    [
        ({}, ["/blog/1", "/blog/draft-2", "/about"], 0),
        ({"include": ["/blog/"]}, ["/blog/1", "/blog/draft-2"], 1),
        ({"exclude": ["draft"]}, ["/blog/1", "/about"], 1),
        ({"include": ["/blog/"], "exclude": ["draft"]}, ["/blog/1"], 2),
        ({"include": ["^/blog"]}, [], 3),  # re.search on the whole URL: `^` is its start
        ({"include": ["nothing", "about"]}, ["/about"], 2),
    ],
)
def test_include_and_exclude_pick_pages(options, kept, excluded) -> None:
    body = urlset(
        *(url(f"https://lab.example.org{p}") for p in ("/blog/1", "/blog/draft-2", "/about"))
    )
    parsed = parse_sitemap(body, HEADERS, options)
    assert links(parsed) == [f"https://lab.example.org{p}" for p in kept]
    assert (parsed.excluded, parsed.malformed_entries, parsed.error) == (excluded, 0, "")


@pytest.mark.parametrize("options", [{"include": ["("]}, {"exclude": "draft"}, {"include": [3]}])
def test_unusable_patterns_fail_the_body(options) -> None:
    parsed = parse_sitemap(urlset(url("https://lab.example.org/a")), HEADERS, options)
    assert parsed.failed and ("include" in parsed.error or "exclude" in parsed.error)


def test_a_gzip_bomb_is_refused() -> None:
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing, 60 MB of zeros in ~60 KB
    chunk = bytes(1 << 20)
    data = b"".join(bomb.compress(chunk) for _ in range(60)) + bomb.flush()
    assert len(data) < 100_000
    parsed = read(data)
    assert (parsed.failed, parsed.error, parsed.entries) == (True, TOO_LARGE, [])


def test_a_gzipped_sitemap_at_the_limit_is_read() -> None:
    head, tail = urlset(url("https://lab.example.org/a")).split(b"</urlset>")
    pad = MAX_UNCOMPRESSED - len(head) - len(b"</urlset>") - len(tail)
    body = gzip.compress(head + b" " * pad + b"</urlset>" + tail, 1)
    assert links(read(body)) == ["https://lab.example.org/a"]
    assert read(gzip.compress(head + b" " * (pad + 1) + b"</urlset>" + tail, 1)).error == TOO_LARGE


def test_a_plain_body_over_the_limit_is_refused() -> None:
    parsed = read(b" " * (MAX_UNCOMPRESSED + 1))
    assert (parsed.failed, parsed.error) == (True, TOO_LARGE)


def test_a_broken_gzip_stream_fails() -> None:
    whole = gzip.compress(urlset(url("https://lab.example.org/a")))
    parsed = read(whole[:10] + b"not deflate at all" * 3)
    assert parsed.failed and "broken gzip stream" in parsed.error


def test_urls_past_the_protocols_count_are_not_read() -> None:
    body = urlset(*(url(f"https://lab.example.org/{n}") for n in range(MAX_URLS + 1)))
    parsed = read(body)
    assert (len(parsed.entries), parsed.beyond_protocol) == (MAX_URLS, 1)
    assert links(parsed)[-1] == f"https://lab.example.org/{MAX_URLS - 1}"
    assert parsed.error == "1 URL(s) past the sitemap protocol's 50,000 a file, not read"
    assert not parsed.failed


def test_an_index_names_at_most_the_protocols_count() -> None:
    sitemaps = "".join(
        f"<sitemap><loc>https://lab.example.org/{n}.xml</loc></sitemap>"
        for n in range(MAX_URLS + 2)
    )
    parsed = read(f"<sitemapindex>{sitemaps}</sitemapindex>".encode())
    assert (len(parsed.sitemaps), parsed.beyond_protocol) == (MAX_URLS, 2)


BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (n, (b"&lol%d;" % (n - 1) if n > 1 else b"&lol;") * 10)
        for n in range(1, 10)
    )
    + b"]><urlset><url><loc>https://lab.example.org/&lol9;</loc></url></urlset>"
)
EXTERNAL = (
    b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    b"<urlset><url><loc>https://lab.example.org/</loc><lastmod>&xxe;</lastmod></url></urlset>"
)
LATE = (
    b"<urlset><url><loc>https://lab.example.org/</loc></url><!DOCTYPE x [<!ENTITY a 'b'>]></urlset>"
)


@pytest.mark.parametrize("body", [BILLION_LAUGHS, EXTERNAL, LATE], ids=["laughs", "xxe", "late"])
def test_a_document_declaring_entities_is_refused(body) -> None:
    parsed = read(body)
    assert (parsed.failed, parsed.error, parsed.entries) == (True, DECLARES, [])
    parsed = read(gzip.compress(body))
    assert (parsed.failed, parsed.error) == (True, DECLARES)
    utf16 = read(body.replace(b'<?xml version="1.0"?>', b"").decode().encode("utf-16"))
    assert (utf16.failed, utf16.error) == (True, DECLARES)


def test_scrapys_parser_never_resolves_entities() -> None:
    """Behind the refusal, Scrapy's parser does not resolve them either (no root file read)."""
    (element,) = list(NewsSitemap(EXTERNAL))
    assert "root:" not in element["lastmod"]


def test_a_truncated_document_loses_its_last_url() -> None:
    whole = urlset(url("https://lab.example.org/a"), url("https://lab.example.org/bcdef"))
    cut = whole[: whole.index(b"bcdef") + 2]  # lxml hands back ".../bc" as if whole
    parsed = read(cut)
    assert links(parsed) == ["https://lab.example.org/a"]
    assert (parsed.truncated_entries, parsed.failed, parsed.error) == (
        1,
        False,
        "truncated document",
    )
    at_a_boundary = read(whole[: whole.index(b"</urlset>")])
    assert (links(at_a_boundary), at_a_boundary.truncated_entries) == (
        ["https://lab.example.org/a"],
        1,
    )


def test_comments_after_the_root_are_no_truncation() -> None:
    body = urlset(url("https://lab.example.org/a")) + b"<!-- generated -->\n<?pi x?>\n\n"
    parsed = read(body)
    assert (links(parsed), parsed.truncated_entries, parsed.error) == (
        ["https://lab.example.org/a"],
        0,
        "",
    )


def test_a_truncated_index_loses_its_last_sitemap() -> None:
    body = b"<sitemapindex><sitemap><loc>https://lab.example.org/1.xml</loc></sitemap><sitemap><loc>https://lab.exa"
    parsed = read(body)
    assert (parsed.sitemaps, parsed.truncated_entries) == (["https://lab.example.org/1.xml"], 1)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            b"<html><body>Not here</body></html>",
            "not a sitemap (root <html>; content-type text/html)",
        ),
        (
            b"<rss version='2.0'><channel/></rss>",
            "not a sitemap (root <rss>; content-type text/html)",
        ),
    ],
)
def test_a_wrong_root_is_no_sitemap(body, error) -> None:
    parsed = read(body, {"content-location": URL, "content-type": "text/html"})
    assert (parsed.failed, parsed.error) == (True, error)


@pytest.mark.parametrize(
    "body", [b"", b"garbage", b"\x00\xff" * 100, b"{}", b"<?xml version='1.0'?>", b"\x1f\x8b\x08"]
)
def test_garbage_fails_and_says_why(body) -> None:
    parsed = read(body)
    assert parsed.failed and parsed.error and parsed.entries == []


@pytest.mark.parametrize(
    "loc",
    [
        "",
        "/relative",
        "ftp://lab.example.org/a",
        "javascript:alert(1)",
        "https://lab.example.org/a b",
        "https://lab.example.org/a\tb",
        "https://lab.example.org/a\u00a0b",
        "https://lab.example.org/a\u0085b",
        "https:///no-host",
        "https://lab.example.org:99999/",
        "https://[::1/",
        "https://lab.example.org/" + "a" * MAX_URL_CHARS,
    ],
)
def test_malformed_locs_cost_only_their_url(loc) -> None:
    parsed = read(
        urlset(url(loc), url("https://lab.example.org/ok"), "<url><lastmod>x</lastmod></url>")
    )
    assert links(parsed) == ["https://lab.example.org/ok"]
    assert (parsed.malformed_entries, parsed.failed) == (2, False)
    assert "2 URL(s) malformed" in parsed.error


def test_a_url_of_the_longest_length_is_kept() -> None:
    loc = "https://lab.example.org/" + "a" * (MAX_URL_CHARS - 24)
    assert links(read(urlset(url(loc)))) == [loc]


def test_a_bare_ampersand_is_read_as_written() -> None:
    """lxml's recover mode would read `?a=1&b=2` as `?a=1=2`: a wrong link, kept as if right."""
    parsed = read(urlset(url("https://lab.example.org/?a=1&b=2"), url("https://lab.example.org/&")))
    assert links(parsed) == ["https://lab.example.org/?a=1&b=2", "https://lab.example.org/&"]
    assert parsed.error == ""


def test_a_lone_surrogate_costs_only_its_url() -> None:
    body = urlset(
        url("https://lab.example.org/&#xD800;"),
        "<url><loc>https://lab.example.org/t</loc><news:news><news:title>&#xDFFF;</news:title>"
        "</news:news></url>",
        url("https://lab.example.org/ok"),
    )
    parsed = read(body)
    assert links(parsed) == ["https://lab.example.org/ok"]
    assert parsed.malformed_entries == 2


def test_an_html_entity_is_read_as_html_has_it() -> None:
    parsed = read(
        urlset(
            "<url><loc>https://lab.example.org/</loc><news:news><news:title>caf&eacute;</news:title></news:news></url>"
        )
    )
    assert parsed.entries[0]["title"] == "café"


def test_huge_strings_are_bounded() -> None:
    huge_title = "t" * 2_000_000
    body = urlset(
        url("https://lab.example.org/" + "x" * 5_000_000),
        f"<url><loc>https://lab.example.org/t</loc><news:news><news:title>{huge_title}</news:title>"
        "</news:news></url>",
    )
    parsed = read(body)
    assert links(parsed) == ["https://lab.example.org/t"]
    assert parsed.entries[0]["title"] == huge_title  # entry_item caps it (TITLE_CHARS)
    assert parsed.malformed_entries == 1


def test_a_text_node_lxml_will_not_read_is_told() -> None:
    """Past 10 MB a text node ends lxml's parse (huge_tree is off): never silently."""
    body = urlset(
        url("https://lab.example.org/" + "x" * 11_000_000), url("https://lab.example.org/b")
    )
    parsed = read(body)
    assert not parsed.failed and "XML error(s) read past" in parsed.error


def test_a_utf16_sitemap_is_read() -> None:
    body = (
        urlset(url("https://lab.example.org/ü"))
        .decode()
        .replace('encoding="UTF-8"', 'encoding="UTF-16"')
    )
    parsed = read(body.encode("utf-16"))
    assert (links(parsed), parsed.error) == (["https://lab.example.org/ü"], "")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2_000))
def test_any_bytes_never_raise(body: bytes) -> None:
    parsed = read(body, include=["a"], exclude=["b"])
    assert parsed.failed or parsed.version in ("sitemap", "sitemapindex")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "<url>",
                "</url>",
                "<loc>",
                "</loc>",
                "<sitemap>",
                "</sitemap>",
                "<lastmod>",
                "</lastmod>",
                "<news:news>",
                "</news:news>",
                "<news:title>",
                "</news:title>",
                "https://lab.example.org/",
                "a",
                "&",
                "&amp;",
                "&#xD800;",
                "<![CDATA[",
                "]]>",
                "<!--",
                "-->",
                " ",
                "\x00",
                "é",
            ]
        ),
        max_size=60,
    ),
    st.sampled_from(["urlset", "sitemapindex"]),
)
def test_any_sitemap_shaped_text_never_raises(parts: list[str], root: str) -> None:
    body = f'<{root} xmlns:news="{NEWS_NS}">{"".join(parts)}</{root}>'.encode()
    for headers in (HEADERS, ROBOTS):
        parsed = read(body, headers)
        for entry in parsed.entries:
            assert entry["link"].startswith(("http://", "https://"))
            entry["title"].encode("utf-8")
