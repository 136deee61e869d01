"""A page as a browser renders it: Playwright on the system Chromium, every request our own.

`BrowserSession.render(main, fetch, ...)` renders one page in a fresh browser context and gives
back what a browser capture signs (crovia_spider/spiders/browsing.py makes the record): every
exchange, the full-page screenshot (PNG), the rendered DOM, whether the page loaded, and why the
rendering failed if it did.

Chromium fetches nothing itself. Its proxy is a dead port (crovia_spider/capture/chromium.py),
and every request a page makes is intercepted (`context.route`) and answered with what `fetch`
got: the crawl's own Scrapy download, through every downloader middleware of the crawl (the fetch
policy after DNS resolution, robots.txt for a document, the size cap, the heads a WARC export is
rebuilt from), so a refused request is listed and never sent. Redirects are followed here, hop by
hop, each hop one more request through the policy, because Chromium would follow a redirect it
was handed without asking the route again. WebSockets are refused (`route_web_socket`), service
workers blocked (`service_workers="block"`), prefetches refused by their `Sec-Purpose` header,
and preconnects and DNS prefetches end at the dead proxy.

Bounded: one deadline per page (`seconds`) for the network and the load, a few more seconds for
the screenshot and the DOM, at most `max_requests` requests and `max_bytes` bytes of bodies per
page; a request still waiting at the deadline is cut (aborted, listed as cut). A page the
renderer cannot answer (a script that never yields) or a crashed one fails with the reason; so
does one while the browser holds more than `memory_mb` of resident memory, after which the browser
is started again.

Playwright's async API runs in the crawl's own asyncio loop (Scrapy's asyncio reactor): a route
handler awaits a Scrapy download directly, with no thread or process between the browser and the
middlewares that must judge its requests (docs/spider.md, "Browser captures", says why).
"""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any
from urllib.parse import urljoin

from crovia_spider.capture.chromium import (
    Launcher,
    chromium_path,
    kill_left,
    launch_options,
    launcher,
    resident_bytes,
    session_identities,
    session_processes,
)
from crovia_spider.capture.exchanges import Exchange, Exchanges
from ledger.store import MAX_BODY_BYTES

logger = logging.getLogger(__name__)
ALLOWED_METHODS = ("GET", "HEAD", "POST")
REDIRECTS = (301, 302, 303, 307, 308)
MAX_HOPS = 20
# Request headers of the browser's that go with a request (the rest are Scrapy's own: the
# crawl's User-Agent, no cookies: every capture is the same anonymous client).
FORWARDED = ("accept", "accept-language", "content-type", "origin", "range", "referer")
# Response headers Chromium must not see: the body it is given is decoded and whole.
_NOT_FULFILLED = frozenset(("content-encoding", "content-length", "transfer-encoding"))
IDLE_SECONDS = 0.5  # no request in flight this long after the load: the page has settled
AFTER_SECONDS = 15.0  # the screenshot and the DOM, after the page's own deadline
MAX_SCREENSHOT_HEIGHT = 16384  # Chromium's own limit of a texture side
MAX_BLOB_BYTES = MAX_BODY_BYTES  # what a kept blob may hold (BodyStore reads no more)


class Refused(Exception):
    """A request the crawl did not send (fetch policy, robots.txt, a limit): the reason."""


class NoAnswer(Exception):
    """A request sent without a usable answer (an error, a timeout, a body over the cap)."""


@dataclass
class Answer:
    """A response the crawl got for the page (heads as kept, body decoded)."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    request_head: bytes = b""
    response_head: bytes = b""
    ip_address: str = ""
    tls_certificate_sha256: str = ""

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers if k.lower() == name), "")


# fetch(url, method, headers, body, document, previous_url, timeout) -> Answer, or raises
# Refused or NoAnswer.
Fetch = Callable[
    [str, str, dict[str, str], bytes | None, bool, str | None, float], Awaitable[Answer]
]


@dataclass
class Options:
    """What a browser capture is made with (its record signs them as `options`)."""

    seconds: float = 30.0
    width: int = 1280
    height: int = 800
    max_requests: int = 500
    max_bytes: int = 64 * 1024 * 1024
    memory_mb: int = 2048
    user_agent: str = ""

    def signed(self) -> dict[str, Any]:
        return {
            "seconds": int(self.seconds),
            "max_requests": self.max_requests,
            "max_bytes": self.max_bytes,
            "memory_mb": self.memory_mb,
            "wait": "load, then 500 ms without a request in flight",
            "javascript": True,
            "service_workers": "blocked",
            "websockets": "refused",
            "full_page_screenshot": True,
        }


@dataclass
class Rendered:
    """What rendering one page gave (see the module)."""

    exchanges: Exchanges
    main: Exchange | None
    screenshot: bytes = b""
    screenshot_size: tuple[int, int] = (0, 0)
    dom: bytes = b""
    loaded: bool = False
    failure: str = ""
    final_url: str = ""
    software: dict[str, str] = field(default_factory=dict)


def unrendered(main: Answer | Exchange, hops: list[Exchange], failure: str = "") -> Rendered:
    """What a browser capture holds when the page was not rendered: the main document's
    answer (a wall, a status or a type not rendered; `failure` says why), or the request that
    got none (an Exchange saying why)."""
    exchanges = Exchanges()
    for hop in hops:
        exchanges.add(hop)
    if isinstance(main, Exchange):
        exchanges.add(main)
        return Rendered(exchanges, None, failure=failure)
    first = exchanges.add(_fill(exchanges, _document(main.url), main))
    return Rendered(exchanges, first, failure=failure, final_url=main.url)


def _document(url: str) -> Exchange:
    return Exchange(url[:4096], resource_type="document", navigation=True)


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG from its IHDR chunk; (0, 0) when `data` is no PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return (0, 0)
    return struct.unpack(">II", data[16:24])


class BrowserSession:
    """One Chromium for a crawl's browser captures, started at the first and closed at the end."""

    def __init__(self, chromium: str | None, options: Options) -> None:
        self.binary = chromium_path(chromium)  # ChromiumMissing before any page is tried
        self.options = options
        self._playwright: Any = None
        self._browser: Any = None
        self._launcher: Launcher | None = None
        self._lock = asyncio.Lock()
        self.closed = False

    @property
    def token(self) -> str:
        return self._launcher.token if self._launcher else ""

    async def _browser_now(self) -> Any:
        async with self._lock:
            if self.closed:
                raise RuntimeError("the crawl's browser is closed")
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            await self._stop_browser()
            from playwright.async_api import async_playwright

            if self._playwright is None:
                self._playwright = await async_playwright().start()
            self._launcher = launcher(self.binary)
            options = launch_options(
                self._launcher, self.options.memory_mb, self.options.user_agent
            )
            self._browser = await self._playwright.chromium.launch(**options)
            logger.info(
                "browser session %s: Chromium %s from %s",
                self._launcher.token,
                self._browser.version,
                self.binary,
            )
            return self._browser

    async def _stop_browser(self) -> None:
        browser, self._browser = self._browser, None
        # Its processes as they are now: once the browser has gone, a zygote or renderer left
        # behind no longer descends from a marked process (chromium.py).
        token = self._launcher.token if self._launcher is not None else ""
        had = await asyncio.to_thread(session_identities, token) if token else set()
        if browser is not None:
            try:
                await asyncio.wait_for(browser.close(), 10)
            except Exception as exc:  # a browser already gone: nothing left to close
                logger.debug("closing the browser: %s", exc)
        if self._launcher is not None:
            kill_left(had | session_identities(token))
            self._launcher.close()
            self._launcher = None

    async def close(self) -> None:
        """Close the browser and the driver; nothing of the session is left running."""
        async with self._lock:
            self.closed = True
            await self._stop_browser()
            playwright, self._playwright = self._playwright, None
            if playwright is not None:
                try:
                    await asyncio.wait_for(playwright.stop(), 10)
                except Exception as exc:  # a driver already gone
                    logger.debug("stopping Playwright: %s", exc)

    def software(self) -> dict[str, str]:
        browser = f"Chromium {self._browser.version}" if self._browser else "Chromium"
        return {"browser": browser, "driver": f"Playwright {version('playwright')}"}

    async def render(self, main: Answer, redirects: list[Exchange], fetch: Fetch) -> Rendered:
        """Render the page whose main document is `main` (reached through the exchanges
        `redirects`), every further request answered by `fetch` (see the module)."""
        rendered = unrendered(main, redirects)
        exchanges = rendered.exchanges
        try:
            browser = await self._browser_now()
        except Exception as exc:
            rendered.failure = f"the browser did not start: {type(exc).__name__}: {exc}"[:500]
            return rendered
        rendered.software = self.software()
        page_run = _PageRun(self, main, exchanges, fetch)
        watch = asyncio.ensure_future(self._watch_memory(page_run))
        try:
            await page_run.run(browser, rendered)
        finally:
            watch.cancel()
        if page_run.over_memory:
            rendered.failure = page_run.over_memory
            async with self._lock:
                await self._stop_browser()
        return rendered

    async def _watch_memory(self, page_run: _PageRun) -> None:
        while True:
            await asyncio.sleep(1.0)
            page_run.over_memory = await self._over_memory()
            if page_run.over_memory:
                await page_run.abandon()
                return

    async def _over_memory(self) -> str:
        """Why the browser is over its memory ("" when it is not)."""
        held = await asyncio.to_thread(lambda: resident_bytes(session_processes(self.token)))
        if held <= self.options.memory_mb * 1024 * 1024:
            return ""
        return (
            f"the browser held {held >> 20} MiB, over CROVIA_BROWSER_MEMORY_MB"
            f" ({self.options.memory_mb})"
        )


def _fill(exchanges: Exchanges, exchange: Exchange, answer: Answer) -> Exchange:
    """Fill `exchange` with `answer`, its heads and body kept in `exchanges`."""
    exchange.status = answer.status
    exchange.ip_address = answer.ip_address
    exchange.tls_certificate_sha256 = answer.tls_certificate_sha256
    if answer.request_head:
        exchange.request_head_sha256 = exchanges.keep(answer.request_head)
    if answer.response_head:
        exchange.response_head_sha256 = exchanges.keep(answer.response_head)
    exchange.body_sha256 = exchanges.keep(answer.body)
    exchange.body_length = len(answer.body)
    exchange.content_type = answer.header("content-type")[:1024]
    if answer.status in REDIRECTS and answer.header("location"):
        exchange.redirect_to = urljoin(answer.url, answer.header("location"))[:4096]
    return exchange


class _PageRun:
    """One page's rendering: the context, its route handler and its deadline."""

    def __init__(self, session: BrowserSession, main: Answer, exchanges: Exchanges, fetch: Fetch):
        self.session = session
        self.options = session.options
        self.main = main
        self.exchanges = exchanges
        self.fetch = fetch
        self.deadline = time.monotonic() + self.options.seconds
        self.inflight = 0
        self.quiet_since = time.monotonic()
        self.served_main = False
        self.context: Any = None
        self.over_memory = ""
        self.crashed = False

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    async def abandon(self) -> None:
        context, self.context = self.context, None
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), 5)
            except Exception as exc:  # a context already gone
                logger.debug("closing a context: %s", exc)

    async def run(self, browser: Any, rendered: Rendered) -> None:
        options = self.options
        try:
            self.context = await browser.new_context(
                viewport={"width": options.width, "height": options.height},
                user_agent=options.user_agent or None,
                service_workers="block",
                accept_downloads=False,
                locale="en-US",
                timezone_id="UTC",
            )
            await self.context.route("**/*", self.handle)
            await self.context.route_web_socket("**/*", self.websocket)
            page = await self.context.new_page()
            page.on("crash", lambda _: setattr(self, "crashed", True))
            await page.goto(self.main.url, wait_until="commit", timeout=self.left() * 1000 + 1)
            rendered.loaded = await self._load(page)
            await self._settle()
            await self._keep(page, rendered)
            if not self.over_memory:  # a page kept before the watch's first look: held too,
                self.over_memory = await self.session._over_memory()  # while it is still open
        except Exception as exc:  # Playwright's errors, a closed context: the page failed
            if not rendered.failure:
                rendered.failure = self._failure(exc)
        finally:
            await self.abandon()

    def _failure(self, exc: Exception) -> str:
        if self.over_memory:
            return self.over_memory
        if self.crashed:
            return "the page crashed in the browser"
        if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
            return (
                f"the page did not answer within {AFTER_SECONDS:g} s after its"
                f" {self.options.seconds:g} s (a script keeping it busy?): no screenshot, no DOM"
            )
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"the browser failed on the page: {text}"[:500]

    async def _load(self, page: Any) -> bool:
        try:
            await page.wait_for_load_state("load", timeout=self.left() * 1000 + 1)
        except Exception as exc:
            if type(exc).__name__ != "TimeoutError":
                raise
            return False
        return True

    async def _settle(self) -> None:
        """Until IDLE_SECONDS pass with no request in flight, or the deadline; then the
        requests still in flight are cut by their own handlers (their wait ends there too)."""
        while self.left() > 0:
            if self.inflight == 0 and time.monotonic() - self.quiet_since >= IDLE_SECONDS:
                return
            await asyncio.sleep(0.05)
        grace = time.monotonic() + 2.0
        while self.inflight and time.monotonic() < grace:
            await asyncio.sleep(0.05)

    async def _keep(self, page: Any, rendered: Rendered) -> None:
        """The screenshot and the DOM, within AFTER_SECONDS."""
        if self.crashed:
            raise RuntimeError("the page crashed")
        height = await asyncio.wait_for(
            page.evaluate("Math.max(document.documentElement.scrollHeight, innerHeight)"),
            AFTER_SECONDS,
        )
        page_height = int(height) if isinstance(height, int | float) else 0
        tall = min(MAX_SCREENSHOT_HEIGHT, page_height)
        while True:  # the whole page, or as much of it from the top as a kept blob may hold
            shot: dict[str, Any] = {"full_page": True, "type": "png"}
            if 0 < tall < page_height:
                shot["clip"] = {"x": 0, "y": 0, "width": self.options.width, "height": tall}
            rendered.screenshot = await page.screenshot(**shot, timeout=AFTER_SECONDS * 1000)
            if len(rendered.screenshot) <= MAX_BLOB_BYTES or tall <= self.options.height:
                break
            tall = max(self.options.height, tall // 2)
        if len(rendered.screenshot) > MAX_BLOB_BYTES:
            rendered.screenshot = b""
        rendered.screenshot_size = png_size(rendered.screenshot)
        dom = await asyncio.wait_for(page.content(), AFTER_SECONDS)
        rendered.dom = dom.encode("utf-8", "replace")
        if len(rendered.dom) > MAX_BLOB_BYTES:
            raise RuntimeError(
                f"the rendered DOM is over {MAX_BLOB_BYTES} bytes, what a blob holds"
            )
        rendered.final_url = page.url

    # -- every request of the page ------------------------------------------------------------

    async def websocket(self, socket_route: Any) -> None:
        self.exchanges.add(
            Exchange(socket_route.url, method="GET", resource_type="websocket",
                     refused="WebSockets are not opened by browser captures")
        )  # fmt: skip
        try:
            await socket_route.close(code=1008, reason="refused by the capture's policy")
        except Exception as exc:  # the page went first
            logger.debug("closing a WebSocket: %s", exc)

    async def handle(self, route: Any) -> None:
        request = route.request
        url, method = request.url, request.method
        navigation = request.is_navigation_request()
        if navigation and url == self.main.url and not self.served_main:
            self.served_main = True
            await _quietly(self._fulfil(route, self.main))
            return
        exchange = Exchange(url[:4096], method, request.resource_type, navigation)
        headers = await request.all_headers()
        self.exchanges.add(exchange)
        if refusal := self._refusal(method, headers):
            exchange.refused = refusal
            await _quietly(route.abort("blockedbyclient"))
            return
        chain = [exchange]  # the request and each redirect hop after it
        self.inflight += 1
        try:
            answer = await asyncio.wait_for(
                self._follow(chain, headers, request.post_data_buffer), self.left()
            )
        except Refused as exc:
            chain[-1].refused = str(exc)[:1024]
            await _quietly(route.abort("blockedbyclient"))
        except NoAnswer as exc:
            chain[-1].error = str(exc)[:1024]
            await _quietly(route.abort("failed"))
        except TimeoutError:
            chain[-1].cut = True
            chain[-1].error = f"no answer within the page's {self.options.seconds:g} s"
            await _quietly(route.abort("timedout"))
        else:
            await _quietly(self._fulfil(route, answer))
        finally:
            self.inflight -= 1
            self.quiet_since = time.monotonic()

    def _refusal(self, method: str, headers: dict[str, str]) -> str:
        if method not in ALLOWED_METHODS:
            return f"method {method} is not made by browser captures"
        purpose = headers.get("sec-purpose", "") + headers.get("purpose", "")
        if "prefetch" in purpose or "prerender" in purpose:
            return "a prefetch: not made by browser captures"
        if len(self.exchanges.items) > self.options.max_requests:
            return f"over the page's {self.options.max_requests} requests (CROVIA_BROWSER_REQUESTS)"
        if self.exchanges.kept_bytes >= self.options.max_bytes:
            return f"over the page's {self.options.max_bytes} bytes of bodies"
        return ""

    async def _follow(
        self, chain: list[Exchange], headers: dict[str, str], body: bytes | None
    ) -> Answer:
        """The answer at the end of the redirects of `chain`'s request, each hop fetched and
        recorded (appended to `chain` and to the page's exchanges)."""
        sent = {k: v for k, v in headers.items() if k in FORWARDED}
        previous: str | None = None
        for _ in range(MAX_HOPS + 1):
            current = chain[-1]
            if body:
                current.request_body_sha256 = self.exchanges.keep(body)
            document = current.resource_type == "document"
            answer = await self.fetch(
                current.url, current.method, sent, body, document, previous, max(0.1, self.left())
            )
            _fill(self.exchanges, current, answer)
            if not current.redirect_to:
                return answer
            previous = current.url
            method = current.method
            if answer.status in (301, 302, 303) and method == "POST":
                method, body = "GET", None
            hop = Exchange(current.redirect_to, method, current.resource_type, current.navigation)
            chain.append(self.exchanges.add(hop))
        raise NoAnswer(f"more than {MAX_HOPS} redirects")

    async def _fulfil(self, route: Any, answer: Answer) -> None:
        headers: dict[str, str] = {}
        for name, value in answer.headers:
            key = name.lower()
            if key in _NOT_FULFILLED:
                continue
            joiner = "\n" if key == "set-cookie" else ", "
            headers[name] = headers[name] + joiner + value if name in headers else value
        await route.fulfill(status=answer.status, headers=headers, body=answer.body)


async def _quietly(action: Awaitable[Any]) -> None:
    """Abort or fulfil a route whose page may be gone already (closed at its deadline)."""
    try:
        await action
    except Exception as exc:
        logger.debug("route already handled or page gone: %s", exc)
