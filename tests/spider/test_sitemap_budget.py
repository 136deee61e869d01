"""What a sitemap walk reads is bounded while it reads (issue 47, observation 2), unit by unit:

- a sitemap body is read up to the bytes its walk has left (`MAX_BYTES`), counted uncompressed: a
  gzip bomb is stopped while it is decompressed, 64 KiB past them at most, never once whole, and
  the reading says how many bytes it read (`read_bytes`), which the walk counts;
- a walk keeps each URL once as it reads, body by body, exactly what `once_each` keeps of every
  body at the end (so the record read again from its kept bodies counts the same);
- a walk holds no more sitemap URLs to fetch than a fetch record can name.

The walk itself, on 127.0.0.1, is tests/spider/test_sitemap_memory.py.
"""

from __future__ import annotations

import gzip
import random
import zlib

from scrapy.http import Response

from crovia_spider.feed.body import ParsedFeed
from crovia_spider.feed.sitemap import MAX_BYTES, MAX_UNCOMPRESSED, TOO_LARGE, parse_sitemap
from crovia_spider.spiders.sitemap_walk import Queue, Read, Walk, once_each
from ledger.records.fetch import MAX_PARTS
from tests.memory import traced_peak
from tests.sitefixture import SITEMAP_NS, urlset

BASE = "https://lab.example.org"
HEADERS = {"content-location": BASE + "/sitemap.xml.gz", "content-type": "application/x-gzip"}
CHUNK = 64 << 10  # what gunzip decompresses at a time (scrapy.utils._compression._CHUNK_SIZE)
MIB = 1 << 20


def gzip_bomb(megabytes: int) -> bytes:
    """A gzipped urlset of `megabytes` MiB of one URL repeated (about 4 KB a MiB gzipped)."""
    row = f"<url><loc>{BASE}/news/{'b' * 200}</loc></url>".encode()
    chunk = row * (MIB // len(row))
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">'.encode()
    out = [deflate.compress(head)]
    out.extend(deflate.compress(chunk) for _ in range(megabytes))
    out.extend((deflate.compress(b"</urlset>"), deflate.flush()))
    return b"".join(out)


def read_bomb(bomb: bytes, max_bytes: int) -> ParsedFeed:
    return parse_sitemap(bomb, HEADERS, {MAX_BYTES: max_bytes})


def test_a_gzip_bomb_is_stopped_as_its_decompression_passes_the_bytes_left() -> None:
    bomb = gzip_bomb(100)  # 100 MiB uncompressed, 400 KB on the wire
    parsed = read_bomb(bomb, MIB)
    assert parsed.failed and not parsed.entries
    assert parsed.error == (
        "refused: more than 1,048,576 bytes uncompressed, what the walk may still read"
        " (CROVIA_SITEMAP_BYTES)"
    )
    assert MIB < parsed.read_bytes <= MIB + CHUNK  # stopped there, not decompressed whole
    # What the reading held at once: the bytes left and a chunk, never the 100 MiB.
    assert traced_peak(read_bomb, bomb, MIB).peak < 4 * MIB
    # Without a walk's limit, the protocol's 50 MB a file stops it the same way.
    whole = parse_sitemap(bomb, HEADERS, {})
    assert whole.failed and whole.error == TOO_LARGE
    assert MAX_UNCOMPRESSED < whole.read_bytes <= MAX_UNCOMPRESSED + CHUNK


def test_a_body_within_the_bytes_left_is_read_and_says_how_many_it_read() -> None:
    plain = urlset(BASE, {f"/news/{n}": "2026-11-20" for n in range(50)})
    packed = gzip.compress(plain, mtime=0)
    for body in (plain, packed):
        parsed = parse_sitemap(body, HEADERS, {MAX_BYTES: len(plain)})
        assert not parsed.failed and len(parsed.entries) == 50
        assert parsed.read_bytes == len(plain)  # uncompressed, whatever came on the wire
        refused = parse_sitemap(body, HEADERS, {MAX_BYTES: len(plain) - 1})
        assert refused.failed and refused.error.endswith("(CROVIA_SITEMAP_BYTES)")
        assert refused.read_bytes == len(plain)
    robots = b"Sitemap: https://lab.example.org/s.xml\n"
    found = parse_sitemap(robots, {"content-location": BASE + "/robots.txt"}, {})
    assert found.sitemaps == [BASE + "/s.xml"] and found.read_bytes == len(robots)
    unread = parse_sitemap(b"<rss/>", HEADERS, {})  # read, then found no sitemap
    assert unread.failed and unread.read_bytes == len(b"<rss/>")


def test_a_max_bytes_that_is_no_whole_number_above_0_is_the_protocol_limit() -> None:
    plain = urlset(BASE, {"/news/1": "2026-11-20"})
    for odd in (0, -1, "5", 5.0, True, None, MAX_UNCOMPRESSED * 2):
        parsed = parse_sitemap(plain, HEADERS, {MAX_BYTES: odd})
        assert not parsed.failed and len(parsed.entries) == 1, odd


def test_keeping_body_by_body_keeps_what_once_each_keeps_of_them_all() -> None:
    rng = random.Random(47)
    for _ in range(300):
        bodies = [_body(rng, rng.randrange(0, 12)) for _ in range(rng.randrange(1, 6))]
        expected = once_each(bodies)
        walk = Walk()
        for read in bodies:
            walk.keep(read)
        walk.settle()
        assert [r.parsed.entries for r in walk.bodies] == [r.parsed.entries for r in expected]
        assert not walk.chosen
    # The sitemaps a body names are not held once queued.
    walk = Walk()
    walk.keep(_read([], sitemaps=[BASE + "/a.xml"]))
    assert walk.bodies[0].parsed.sitemaps == []


def test_a_walk_holds_no_more_sitemaps_to_fetch_than_a_record_names() -> None:
    queue = Queue()
    queue.extend([f"{BASE}/a{n}.xml" for n in range(MAX_PARTS - 10)], 1)
    queue.extend([f"{BASE}/b{n}.xml" for n in range(50)], 2)
    assert len(queue) == MAX_PARTS + 40  # every one named is counted
    taken = [queue.popleft() for _ in range(MAX_PARTS - 1)]
    queue.extend([f"{BASE}/c{n}.xml" for n in range(5)], 3)  # named later: after the others
    assert taken[-1] == (f"{BASE}/b8.xml", 2) and queue[0] == (f"{BASE}/b9.xml", 2)
    assert len(queue) == 46


def _body(rng: random.Random, count: int) -> Read:
    entries = []
    for _ in range(count):
        link = f"{BASE}/news/{rng.randrange(8)}"
        title = rng.choice((link, link, f"Title {rng.randrange(3)}"))
        entries.append({"id": "", "link": link, "title": title, "published": "", "lastmod": ""})
    return _read(entries)


def _read(entries: list[dict[str, str]], sitemaps: list[str] | None = None) -> Read:
    parsed = ParsedFeed(version="sitemap", entries=entries, sitemaps=sitemaps or [])
    return Read(Response(BASE + "/s.xml"), parsed, "0" * 64)
