"""Fuzz harness: a fetched sitemap body, through `parse_sitemap` and `entry_item`.

`parse_sitemap` documents that it never raises (a body refused or unreadable is a `failed`
ParsedFeed), and an entry it returns must become an item without error. The input's length picks
where the body came from (a sitemap, or a robots.txt) and the include / exclude patterns, so the
robots.txt and filtering paths are reached too; gzip is reached by inputs starting with its magic.
An odd-length input is read as a walk reads a further sitemap, with the bytes it may still read
(`MAX_BYTES`) set to the input's own length: a body read says it read no more
(`read_bytes`), and a gzip stream inflating past them is stopped within one 64 KiB chunk.
"""

from __future__ import annotations

import sys

from scrapy.utils.gz import gunzip

from tests.fuzz.harness import fuzz, instrumented

with instrumented():
    from crovia_spider.config.feeds import FeedConfig
    from crovia_spider.feed.entries import entry_item
    from crovia_spider.feed.sitemap import GZIP_MAGIC, MAX_BYTES, MAX_UNCOMPRESSED, parse_sitemap

URL = "https://lab.example.org/sitemap.xml"
FEED = FeedConfig(vendor="lab", url=URL, kind="feed")
HEADERS = (
    {"content-location": URL, "content-type": "application/xml"},
    {"content-location": "https://lab.example.org/robots.txt", "content-type": "text/plain"},
    {"content-location": URL},
)
OPTIONS = ({}, {"include": ["/news/", "blog"], "exclude": ["draft", "[?&]page=[0-9]+"]})
DOCUMENTED = ()
SLACK = 64 << 10
# An entry is a dict of five strings in a list, about 300 bytes with its URL, for a `<url>` of
# ~30 bytes (`<url><loc>http://a</loc></url>`): about 5x measured, well under 20x.
STRICT = 20
# gunzip reads 64 KiB chunks into a BytesIO whose value it then copies: about 150 KiB for any
# gzipped body, however small.
GZIP_SLACK = 192 << 10
CHUNK = 64 << 10  # what gunzip decompresses at a time, so how far past a limit it may read


def AMPLIFICATION(data: bytes) -> int:  # the harness reads this name
    """20x the input; for a gzipped one, 20x what it holds uncompressed as well, and gunzip's
    buffers: deflate shrinks repetitive XML up to 1,000-fold, and the bound follows the XML read
    (at most 16 MB here: max_len 16,384 of deflate's ~1,032x)."""
    if data[:3] != GZIP_MAGIC:
        return STRICT
    try:
        size = len(gunzip(data, max_size=MAX_UNCOMPRESSED))
    except Exception:  # a broken or refused stream: nothing past gunzip's own buffers
        size = 0
    return STRICT + -(-(STRICT * size + GZIP_SLACK) // len(data))


def target(data: bytes) -> None:
    headers = HEADERS[len(data) % len(HEADERS)]
    options = OPTIONS[len(data) % 2]
    limit = len(data) if len(data) % 2 else MAX_UNCOMPRESSED
    if len(data) % 2:
        options = {**options, MAX_BYTES: limit}
    parsed = parse_sitemap(data, headers, options)
    if not parsed.failed and parsed.read_bytes > limit:
        raise AssertionError(f"read {parsed.read_bytes} bytes of at most {limit}")
    if parsed.read_bytes > limit + CHUNK:
        raise AssertionError(f"decompressed {parsed.read_bytes} bytes past a limit of {limit}")
    for entry in parsed.entries:
        entry_item(
            entry,
            FEED,
            spider="fuzz",
            base_url=URL,
            status=200,
            observed_at="2026-01-01T00:00:00Z",
            run_hash="0" * 64,
        )


if __name__ == "__main__":
    fuzz(sys.modules[__name__])
