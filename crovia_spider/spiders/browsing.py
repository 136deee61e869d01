"""Browser captures from the spider's side: the page rendered, every request through the crawl.

A source with `capture = "browser"` has each item's page captured twice in a run: the plain
capture (crovia_spider/spiders/capturing.py), then, once that is recorded, the browser capture,
which names it as its twin. A browser capture's main document is an ordinary Scrapy request
(the fetch policy on every hop, robots.txt, politeness, the size cap); its answer is handed to
the browser (crovia_spider/capture/browser.py), and every further request the page makes is
downloaded by the crawl's own engine (`engine.download_async`, through every downloader
middleware) and handed back. What came of it goes to the issue stage as a PageFetch with
`mode` "browser" and `browser` (ledger/records/capture.py), with every blob to keep.

The browser captures of a page form their own chain (book key: the item's key and
BROWSER_SUFFIX), so they are compared with each other only: a plain capture never makes a browser
capture "edited", nor the other way round. Bounded per run by CROVIA_BROWSER_PAGES (the rest are
due at the next run), CROVIA_BROWSER_CONCURRENCY pages at once, CROVIA_BROWSER_SECONDS each.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from scrapy.http import Response
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from twisted.python.failure import Failure

from crovia_spider.capture.book import Job
from crovia_spider.capture.browser import (
    Answer,
    BrowserSession,
    NoAnswer,
    Options,
    Refused,
    Rendered,
    unrendered,
)
from crovia_spider.capture.chromium import DEFAULT_CHROMIUM, ChromiumMissing
from crovia_spider.capture.exchanges import Exchange, verdict
from crovia_spider.capture.heads import HEADS_META
from crovia_spider.capture.text import MainText, is_html, main_text, text_within
from crovia_spider.capture.walls import wall_evidence
from crovia_spider.fetching.politeness import describe_failure
from crovia_spider.options import resolve_path
from crovia_spider.runs.stopping import FetchStopped
from crovia_spider.spiders.fetches import CAPTURE_RECORDED
from ledger.records.capture import (
    BROWSER_MODE,
    HEADER_CHARS,
    MAX_REDIRECTS,
    URL_CHARS,
    USABLE_VERDICTS,
)
from ledger.store import chain_key

# What ends a browser capture job's key: its chain's (ledger/store/pages.py chain_key).
BROWSER_SUFFIX = chain_key("", BROWSER_MODE)
TWIN_META = "crovia_browser_twin"
DOM_TYPE = "text/html; charset=utf-8"
# A main document the browser renders: a 2xx, or a removal's page (what a reader was shown).
RENDERED_STATUSES = (*range(200, 300), 404, 410)
BROWSER_PER_HOST = 6  # Chromium's own connections per host


def is_browser_job(job: Job) -> bool:
    return job.key.endswith(BROWSER_SUFFIX)


def browser_job(job: Job) -> Job:
    """The browser capture of the page of the plain capture job `job`."""
    return Job(chain_key(job.key, BROWSER_MODE), job.item, job.url, job.vendor, job.spider)


class BrowserCaptures:
    """The browser half of PageCaptures (crovia_spider/spiders/capturing.py)."""

    def setup_browser(self, crawler: Any) -> None:
        settings = crawler.settings
        self.browser_vendors: frozenset[str] = frozenset(
            feed.vendor for feed in self.feeds if feed.capture == BROWSER_MODE and self.capture_on
        )
        self.browser_pages = max(0, settings.getint("CROVIA_BROWSER_PAGES", 100))
        self.browser_taken = 0  # browser captures scheduled in this run
        self.browser_concurrency = max(1, settings.getint("CROVIA_BROWSER_CONCURRENCY", 2))
        self.browser_options = Options(
            seconds=max(1.0, settings.getfloat("CROVIA_BROWSER_SECONDS", 30.0)),
            max_requests=max(1, settings.getint("CROVIA_BROWSER_REQUESTS", 500)),
            # A page's bodies together: four times what one capture may keep.
            max_bytes=4 * self.capture_max_bytes,
            memory_mb=max(64, settings.getint("CROVIA_BROWSER_MEMORY_MB", 2048)),
            user_agent=settings.get("USER_AGENT") or "",
        )
        self.browser_session: BrowserSession | None = None
        self._browser_slots: asyncio.Semaphore | None = None
        if self.browser_vendors:
            from scrapy import signals

            crawler.signals.connect(self._close_browser, signal=signals.spider_closed)

    async def _close_browser(self) -> None:
        if self.browser_session is not None:
            await self.browser_session.close()

    def browser_request(self, job: Job, twin: str) -> scrapy.Request:
        """The request of a browser capture's main document (redirects followed by Scrapy, each
        hop through the fetch policy; robots.txt obeyed; no retry: a browser does not retry)."""
        return scrapy.Request(
            job.url,
            callback=self.browser_received,
            errback=self.browser_failed,
            meta={
                "crovia_capture": job,
                TWIN_META: twin,
                HEADS_META: None,
                "handle_httpstatus_list": list(range(400, 600)),
                "download_maxsize": self.capture_max_bytes,
                "download_warnsize": 0,
                "download_timeout": self.browser_options.seconds,
                "dont_retry": True,
            },
            dont_filter=True,
        )

    async def browser_received(self, response: Response) -> None:
        """The main document answered: render it (when it is a page to render) and record."""
        job, twin = response.meta["crovia_capture"], response.meta[TWIN_META]
        fetch = self._page_fetch(job)
        fetch.mode = BROWSER_MODE
        main = answer_of(response)
        hops = redirect_hops(response)
        fetch.final_url = response.url[:URL_CHARS]
        fetch.status = response.status
        fetch.redirects = [u[:URL_CHARS] for u in response.meta.get("redirect_urls", [])]
        fetch.redirects = fetch.redirects[:MAX_REDIRECTS]
        fetch.ip_address, fetch.tls_certificate_sha256 = (
            main.ip_address,
            main.tls_certificate_sha256,
        )
        fetch.body, fetch.request_head, fetch.response_head = (
            main.body,
            main.request_head,
            main.response_head,
        )
        for key, name in (
            ("content_type", "content-type"),
            ("last_modified", "last-modified"),
            ("etag", "etag"),
        ):
            value = main.header(name)
            if value and len(value) <= HEADER_CHARS:
                fetch.headers[key] = value
        heads = response.meta.get(HEADS_META) or (b"", b"", "")
        if heads[2]:
            fetch.headers["content_encoding"] = heads[2]
        wall = wall_evidence(response.status, {k.lower(): v for k, v in main.headers}, main.body)
        content_type = main.header("content-type")
        failure = ""
        if not wall and response.status not in RENDERED_STATUSES:
            failure = f"the page answered HTTP {response.status}: nothing to render"
        elif not wall and not is_html(content_type, main.body):
            failure = "not an HTML page: a browser capture renders HTML pages only"
        if wall or failure:
            rendered = unrendered(main, hops, failure)
        else:
            rendered = await self._render(main, hops)
        await self._record_browser(fetch, job, twin, rendered, wall)

    async def _render(self, main: Answer, hops: list[Exchange]) -> Rendered:
        if self._browser_slots is None:
            self._browser_slots = asyncio.Semaphore(self.browser_concurrency)
        if self.browser_session is None:
            settings = self.crawler.settings
            chromium = str(resolve_path(settings.get("CROVIA_CHROMIUM") or DEFAULT_CHROMIUM))
            try:
                self.browser_session = BrowserSession(chromium, self.browser_options)
            except ChromiumMissing as exc:  # every browser capture of the run says so
                return unrendered(main, hops, str(exc))
        async with self._browser_slots:
            return await self.browser_session.render(main, hops, self._browser_fetch)

    async def _record_browser(
        self, fetch: Any, job: Job, twin: str, rendered: Rendered, wall: list[str]
    ) -> None:
        """Make the browser capture's facts (ledger/records/capture.py) and send it to be signed."""
        exchanges = rendered.exchanges
        main = rendered.main
        at = next((i for i, e in enumerate(exchanges.items) if e is main), len(exchanges.items))
        subresources = exchanges.items[at + 1 :]  # after the main document and its redirects
        found, reasons = verdict(
            main, subresources, wall, rendered.loaded or bool(wall), rendered.failure
        )
        browser: dict[str, Any] = {
            "verdict": found,
            "exchanges_sha256": exchanges.keep(exchanges.manifest(job.url)),
            "requests": len(exchanges.items),
            "refused": exchanges.refused,
            "failed": exchanges.failed,
            "software": rendered.software or _software_unstarted(),
            "viewport": {
                "width": self.browser_options.width,
                "height": self.browser_options.height,
            },
            "user_agent": (self.browser_options.user_agent or "(Chromium's own)")[:1024],
            "options": self.browser_options.signed(),
        }
        if reasons:
            browser["reasons"] = reasons
        if twin:
            browser["twin"] = twin
        if rendered.screenshot and rendered.screenshot_size[0] > 0:
            width, height = rendered.screenshot_size
            browser["screenshot"] = {
                "sha256": exchanges.keep(rendered.screenshot),
                "width": width,
                "height": height,
            }
        if rendered.dom:
            browser["dom"] = {"sha256": exchanges.keep(rendered.dom), "length": len(rendered.dom)}
        fetch.browser = browser
        fetch.blobs = exchanges.blobs
        if found in USABLE_VERDICTS and rendered.dom:
            text = await self.parser.call(
                text_within,
                main_text,
                MainText(None, "the parser worker died on this page twice"),
                rendered.dom,
                DOM_TYPE,
            )
            fetch.text, fetch.error = text.text, text.error
        elif found not in USABLE_VERDICTS:
            fetch.error = f"{found}: " + "; ".join(reasons)
            fetch.error = fetch.error[:HEADER_CHARS]
        self.crawler.signals.send_catch_log(signal=CAPTURE_RECORDED, capture=fetch)

    async def browser_failed(self, failure: Failure) -> None:
        """No main document: refused (fetch policy, robots.txt), no answer, over the cap."""
        if failure.check(FetchStopped):
            return
        request = failure.request
        job, twin = request.meta["crovia_capture"], request.meta[TWIN_META]
        fetch = self._page_fetch(job)
        fetch.mode = BROWSER_MODE
        reason = self._failure_error(failure, job)[:HEADER_CHARS] or "no answer"
        asked = Exchange(request.url[:URL_CHARS], resource_type="document", navigation=True)
        if isinstance(failure.value, IgnoreRequest):
            asked.refused = reason
        else:
            asked.error = reason
        await self._record_browser(fetch, job, twin, unrendered(asked, [], reason), [])

    async def _browser_fetch(
        self,
        url: str,
        method: str,
        headers: dict[str, str],
        body: bytes | None,
        document: bool,
        previous: str | None,
        timeout: float,
    ) -> Answer:
        """One request of a page, downloaded by the crawl (see the module); Refused when a
        middleware refused it, NoAnswer when no usable answer came."""
        meta: dict[str, Any] = {
            HEADS_META: None,
            "dont_redirect": True,
            "dont_retry": True,
            "dont_obey_robotstxt": not document,
            "download_maxsize": self.capture_max_bytes,
            "download_warnsize": 0,
            "download_timeout": timeout,
        }
        if previous is not None:
            meta["redirect_urls"] = [previous]
        meta["download_slot"] = self._browser_slot(url)
        try:
            request = scrapy.Request(
                url, method=method, headers=headers, body=body or b"", meta=meta, dont_filter=True
            )
        except ValueError as exc:
            raise Refused(f"not a URL that can be fetched: {exc}") from None
        try:
            response = await self.crawler.engine.download_async(request)
        except FetchStopped as exc:
            raise NoAnswer(str(exc)) from None
        except IgnoreRequest as exc:
            if over_size_cap(exc):
                raise NoAnswer(f"body over CROVIA_CAPTURE_MAX_BYTES: {exc}") from None
            raise Refused(str(exc) or "refused") from None
        except Exception as exc:  # the download's own errors: no answer, said in words
            raise NoAnswer(describe_failure(Failure(exc))) from None
        return answer_of(response)

    def _browser_slot(self, url: str) -> str:
        """The downloader slot of a page's requests to the host of `url`: as a browser loads a
        page, BROWSER_PER_HOST at a time and no delay between them, unless the host has a
        politeness of its own (arXiv's, a source's `delay`: DOWNLOAD_SLOTS), which it keeps.
        A slot of its own, so the page's requests do not wait behind the crawl's."""
        host = urlsplit(url).hostname or ""
        key = f"{host} (browser)"
        slots = self.crawler.engine.downloader.per_slot_settings
        if key not in slots:
            own = slots.get(host)
            slots[key] = dict(own) if own else {"concurrency": BROWSER_PER_HOST, "delay": 0.0}
        return key


def over_size_cap(exc: BaseException) -> bool:
    """A body refused for its size: by its Content-Length or as it came (the downloader), or
    inflating past the cap (HttpCompressionMiddleware)."""
    if isinstance(exc, DownloadCancelledError):
        return "larger than download max size" in str(exc)  # not a cancelled crawl
    return isinstance(exc, IgnoreRequest) and isinstance(
        exc.__cause__, _DecompressionMaxSizeExceeded
    )


def _software_unstarted() -> dict[str, str]:
    from importlib.metadata import version

    return {
        "browser": "Chromium (not started for this page)",
        "driver": f"Playwright {version('playwright')}",
    }


def answer_of(response: Response) -> Answer:
    """A Scrapy response as the browser is given it and a capture keeps it."""
    heads = response.meta.get(HEADS_META) or (b"", b"", "")
    headers = [
        (bytes(name).decode("latin-1"), bytes(value).decode("latin-1"))
        for name, values in response.headers.items()
        for value in values
    ]
    certificate = getattr(response, "certificate", None)
    return Answer(
        url=response.url,
        status=response.status,
        headers=headers,
        body=response.body,
        request_head=heads[0],
        response_head=heads[1],
        ip_address=str(response.ip_address) if response.ip_address else "",
        tls_certificate_sha256=(
            hashlib.sha256(certificate.dump()).hexdigest() if certificate is not None else ""
        ),
    )


def redirect_hops(response: Response) -> list[Exchange]:
    """The redirects Scrapy followed to the main document, one exchange each (their heads are
    not kept: the plain capture's rule)."""
    urls = response.meta.get("redirect_urls", [])
    reasons = response.meta.get("redirect_reasons", [])
    hops = []
    for index, url in enumerate(urls):
        status = (
            reasons[index] if index < len(reasons) and isinstance(reasons[index], int) else None
        )
        target = urls[index + 1] if index + 1 < len(urls) else response.url
        hops.append(Exchange(url[:URL_CHARS], resource_type="document", navigation=True,
                             status=status, redirect_to=target[:URL_CHARS]))  # fmt: skip
    return hops
