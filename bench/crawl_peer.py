"""The bench's peer: plain Scrapy + feedparser writing the same items to a JSON-lines feed export.

Run by bench/crawl_bench.py as `scrapy runspider bench/crawl_peer.py -a urls=U1,U2 -o out.jsonl`
from a directory without scrapy.cfg, so none of the project's settings or pipelines apply.
"""

from __future__ import annotations

import feedparser
import scrapy


class PeerSpider(scrapy.Spider):
    """Fetches each URL, parses it with feedparser, yields one dict per entry."""

    name = "peer"

    async def start(self):
        for url in self.urls.split(","):
            yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response):
        headers = {k.decode().lower(): v[-1].decode("latin-1") for k, v in response.headers.items()}
        parsed = feedparser.parse(response.body, response_headers=headers)
        for entry in parsed.entries:
            yield {
                "title": entry.get("title", ""),
                "url": entry.get("link", ""),
                "guid": entry.get("id", ""),
                "published": entry.get("published", ""),
                "summary": entry.get("summary", ""),
                "source_url": response.url,
                "source_status": response.status,
            }
