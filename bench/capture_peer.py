"""The capture bench's peer: plain Scrapy writing each page it fetches into a gzipped WARC.

Run by bench/capture_bench.py as `scrapy runspider bench/capture_peer.py -a urls_file=urls.txt
-a warc=pages.warc.gz` from a directory without scrapy.cfg, so none of the project's settings,
middlewares or pipelines apply. Each page is one request record and one response record, written
with warcio's WARCWriter as its README shows, the way a user archiving pages with Scrapy would.
"""

from __future__ import annotations

from http import HTTPStatus
from io import BytesIO
from urllib.parse import urlsplit

import scrapy
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


class CapturePeerSpider(scrapy.Spider):
    """Fetches each URL of `urls_file` and appends its request and response to `warc`."""

    name = "capture_peer"

    async def start(self):
        self.out = open(self.warc, "wb")  # noqa: SIM115 (closed when the spider closes)
        self.writer = WARCWriter(self.out, gzip=True)
        with open(self.urls_file, encoding="utf-8") as urls:
            for url in urls.read().split():
                yield scrapy.Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response):
        request = response.request
        parts = urlsplit(request.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = [(k.decode(), v.decode("latin-1")) for k, vs in request.headers.items() for v in vs]
        asked = StatusAndHeaders(f"GET {target} HTTP/1.1", [("Host", parts.netloc), *sent],
                                 is_http_request=True)  # fmt: skip
        answer = [(k.decode(), v.decode("latin-1")) for k, vs in response.headers.items()
                  for v in vs]  # fmt: skip
        status = f"{response.status} {HTTPStatus(response.status).phrase}"
        got = StatusAndHeaders(status, answer, protocol="HTTP/1.1")
        record = self.writer.create_warc_record(
            response.url, "response", payload=BytesIO(response.body), http_headers=got
        )
        req = self.writer.create_warc_record(
            request.url, "request", payload=BytesIO(b""), http_headers=asked
        )
        self.writer.write_request_response_pair(req, record)

    def closed(self, reason):
        self.out.close()
