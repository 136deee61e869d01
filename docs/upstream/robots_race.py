"""Scrapy's RobotsTxtMiddleware lets through requests that wait together for a host's robots.txt.

A minimal reproduction for Scrapy's maintainers: it needs only Scrapy and sends packets only to
127.0.0.1. A threaded HTTP server whose robots.txt disallows /private/, and a plain spider
(ROBOTSTXT_OBEY = True, the default asyncio reactor) that starts N requests for /private/N.html at
once. Expected: none of them fetched, N "Forbidden by robots.txt". Seen with Scrapy 2.19.0 and
Twisted 26.10.0, N = 16: 3 refused (the request that downloaded robots.txt, the first waiter, one
that came after the parser was stored), the other 13 fetched.

Cause (scrapy/downloadermiddlewares/robotstxt.py, `robot_parser`): while a host's robots.txt is
being downloaded, every other request to that host does

    return await maybe_deferred_to_future(parser)      # parser: the one shared Deferred

and with the asyncio reactor `maybe_deferred_to_future` is `Deferred.asFuture`, which adds a
callback that sets the future and returns None (Twisted documents that it "consumes" the result).
The first waiter gets the RobotParser; the Deferred's result is None from then on, so every later
waiter gets None, which `process_request_2` reads as "no robots.txt": allowed. Before
`robot_parser` became a coroutine (scrapy/scrapy pull request 6802) each waiter had a Deferred of
its own, fed by a callback that returned the result, and every waiter was checked.

Run: python robots_race.py [N]   prints the counts; exit 1 while any disallowed page is fetched.
"""

import http.server
import sys
import threading
from typing import ClassVar

import scrapy
from scrapy.crawler import CrawlerProcess

N = int(sys.argv[1]) if len(sys.argv) > 1 else 16
fetched: list[str] = []


class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            body = b"User-agent: *\nDisallow: /private/\n"
        else:
            fetched.append(self.path)
            body = b"<html><body>private</body></html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
threading.Thread(target=server.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{server.server_address[1]}"


class Race(scrapy.Spider):
    name = "race"
    custom_settings: ClassVar[dict] = {
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "ERROR",
        "CONCURRENT_REQUESTS": N,
    }

    async def start(self):
        for n in range(N):
            yield scrapy.Request(f"{base}/private/{n}.html")

    def parse(self, response):
        pass


process = CrawlerProcess()
crawler = process.create_crawler(Race)
process.crawl(crawler)
process.start()
server.shutdown()
refused = crawler.stats.get_value("robotstxt/forbidden", 0)
print(f"scrapy {scrapy.__version__}: {N} requests disallowed by robots.txt, {refused} refused,")
print(f"{len(fetched)} fetched: {sorted(fetched)}")
sys.exit(1 if fetched else 0)
