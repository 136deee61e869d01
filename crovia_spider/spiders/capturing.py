"""Captures from the spider's side: fetch each item's page, read its main text, hand it on.

A source with captures (`capture`, FeedConfig.captures) has the page of each new or updated item
fetched once the feeds are done (the crawl's first idle), with the pages the capture book says are
due again (crovia_spider/capture/book.py); `crovia capture` runs a crawl of captures only. Every
page is an ordinary Scrapy request: the fetch policy on every hop, robots.txt, the per-host
politeness and the size cap (CROVIA_CAPTURE_MAX_BYTES) apply as to a feed. What came back (or why
nothing did) goes to the issue stage as a PageFetch with the CAPTURE_RECORDED signal; the stage
decides the outcome against the book and signs the AX.CAPTURE record (ledger/records/capture.py).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import Response
from twisted.python.failure import Failure

from crovia_spider.capture.book import Job, book_of
from crovia_spider.capture.heads import HEADS_META, response_fields
from crovia_spider.capture.text import (
    NO_MAIN_TEXT,
    MainText,
    is_html,
    main_text,
    selected_within,
)
from crovia_spider.capture.text import extractor as text_extractor
from crovia_spider.capture.walls import wall_evidence
from crovia_spider.fetching.politeness import describe_failure
from crovia_spider.runs.runlog import utc_now_micro
from crovia_spider.runs.stopping import FetchStopped
from crovia_spider.spiders.browsing import (
    BrowserCaptures,
    browser_job,
    is_browser_job,
    over_size_cap,
)
from crovia_spider.spiders.fetches import CAPTURE_RECORDED
from ledger.records.capture import HEADER_CHARS, MAX_REDIRECTS, URL_CHARS, USABLE_VERDICTS

JOB_META = "crovia_capture"
# Every status reaches the callback (a 404 or 410 is a removal, others a failed capture); 3xx
# are still followed by RedirectMiddleware, each hop through the fetch policy.
_ALL_ERRORS = list(range(400, 600))


@dataclass
class PageFetch:
    """One capture of one page, as the issue stage needs it to sign the record."""

    job: Job
    captured_at: str
    run_hash: str
    spider: str
    final_url: str = ""
    status: int | None = None
    redirects: list[str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    ip_address: str = ""
    tls_certificate_sha256: str = ""
    body: bytes | None = field(default=None, repr=False)  # None: no response
    request_head: bytes = field(default=b"", repr=False)
    response_head: bytes = field(default=b"", repr=False)
    text: str | None = field(default=None, repr=False)
    error: str = ""
    extractor: str = ""  # what read `text` (capture/text.py extractor), with the source's selector
    # A browser capture (crovia_spider/spiders/browsing.py): its mode, its `browser` facts and
    # the blobs they name (digest -> bytes), kept with the record.
    mode: str = ""
    browser: dict[str, Any] | None = None
    blobs: dict[str, bytes] = field(default_factory=dict, repr=False)
    # Set by the issue stage once the record is signed: what a browser capture names as twin.
    axiom_id: str = ""

    @property
    def no_main_text(self) -> bool:
        """An HTML page answered (a 2xx) whose main text was not found (capture/text.py): kept
        and signed, but no version of the page."""
        answered = self.status is not None and 200 <= self.status < 300
        return answered and self.text is None and self.error.startswith(NO_MAIN_TEXT)

    def not_the_page(self) -> str | None:
        """Why this answer is no version of the page (None when it may be one): the issue stage
        signs it `failed` with this error, kept all the same. A browser capture whose verdict is
        not usable (its error says why); a plain capture answered by a bot wall, read from its
        kept response head and body by the rule a browser capture's verdict uses
        (crovia_spider/capture/walls.py), so a cluster's sequencer reads it as a local crawl;
        an HTML page with no main text (its error says so)."""
        if self.browser is not None:
            if self.browser["verdict"] not in USABLE_VERDICTS:
                return self.error
        elif self.status is not None and self.body is not None:
            wall = wall_evidence(self.status, response_fields(self.response_head), self.body)
            if wall:
                return "a bot wall, not the page: " + "; ".join(wall)
        return self.error if self.no_main_text else None


class PageCaptures(BrowserCaptures):
    """The capture half of FeedSpider (crovia_spider/spiders/base.py)."""

    def setup_captures(self, crawler: Any) -> None:
        settings = crawler.settings
        self.capture_on = settings.getbool("CROVIA_CAPTURE", True)
        self.capture_only = settings.getbool("CROVIA_CAPTURE_ONLY")
        self.capture_all = settings.getbool("CROVIA_CAPTURE_ALL")
        self.capture_max_bytes = settings.getint("CROVIA_CAPTURE_MAX_BYTES", 16 * 1024 * 1024)
        self.capture_queue: dict[str, Job] = {}
        # vendor -> where its pages' main text is (`capture_selector`), for those that say.
        self.capture_selectors = {f.vendor: f.capture_selector for f in self.feeds}
        # The vendors of this crawl's sources whose pages are captured (asked once per item).
        self.capture_vendors: frozenset[str] = frozenset(
            feed.vendor for feed in self.feeds if feed.captures and self.capture_on
        )
        self.captures_due_taken = False
        # At most CROVIA_CAPTURE_PAGES plain captures a run, newest first: a first crawl of a
        # sitemap of 50,000 URLs is not 50,000 captures at once; the rest are due at the next.
        self.capture_pages = max(0, settings.getint("CROVIA_CAPTURE_PAGES", 1000))
        self.capture_taken = 0
        self.deferred = {"plain": 0, "browser": 0}
        self.browser_planned: set[str] = set()  # browser captures to follow their plain twin
        self.setup_browser(crawler)
        crawler.signals.connect(self._idle_captures, signal=signals.spider_idle)

    def queue_capture(self, job: Job) -> None:
        """An item of a source with captures was issued new or updated: capture its page."""
        self.capture_queue[job.key] = job

    def _idle_captures(self) -> None:
        """At the crawl's idle: schedule the queued pages and, once, those due again, within
        the run's budgets: this run's new and updated items first, then the pages due, the
        newest first; the rest stay due for the next run (said in the run record)."""
        if self.remote_role:  # a cluster's captures are jobs (crovia_spider/spiders/remote.py)
            return
        now = utc_now_micro()
        jobs = self.captures_due(now)
        if not jobs:
            return
        scheduled = False
        for job in jobs.values():
            if is_browser_job(job):
                continue
            browser = self._browser_job_of(job)
            if self.capture_taken >= self.capture_pages:
                self._defer(job, now, "plain")
                if browser is not None:
                    self._defer(browser, now, "browser")
                continue
            self.capture_taken += 1
            if browser is not None:  # its browser capture follows it, or waits for a later run
                if self.browser_taken < self.browser_pages:
                    self.browser_taken += 1
                    self.browser_planned.add(browser.key)
                else:
                    self._defer(browser, now, "browser")
            try:
                request = self.capture_request(job)
            except ValueError as exc:  # a link Scrapy cannot request: recorded, never lost
                fetch = self._page_fetch(job)
                fetch.error = f"not a URL that can be fetched: {exc}"[:HEADER_CHARS]
                self.crawler.signals.send_catch_log(signal=CAPTURE_RECORDED, capture=fetch)
                continue
            self.crawler.engine.crawl(request)
            scheduled = True
        for job in jobs.values():  # browser captures due whose plain twin is not in this run
            if not is_browser_job(job) or job.key in self.browser_planned:
                continue
            if job.vendor not in self.browser_vendors:
                continue  # its source no longer captures with the browser
            if self.browser_taken >= self.browser_pages:
                self._defer(job, now, "browser")
                continue
            with contextlib.suppress(ValueError):  # its plain capture recorded why already
                self.crawler.engine.crawl(self.browser_request(job, ""))
                self.browser_taken += 1
                scheduled = True
        if scheduled:
            raise DontCloseSpider

    def captures_due(self, now: str) -> dict[str, Job]:
        """The captures to make now: the queued pages (this run's new and updated items) and,
        once a run, those the book says are due, the newest first."""
        jobs = dict(self.capture_queue)
        self.capture_queue.clear()
        book = book_of(self.crawler)
        if not self.captures_due_taken and book is not None:
            self.captures_due_taken = True
            due = book.due(now, self.capture_vendors, self.capture_all)
            # The newest pages first: one never captured (a deferred new item) before all.
            due.sort(key=lambda j: book.pages[j.key].first_seen or "~", reverse=True)
            for job in due:
                jobs.setdefault(job.key, job)
        return jobs

    def _browser_job_of(self, job: Job) -> Job | None:
        """The browser capture of the page of the plain capture `job`, noted in the book, when
        its source captures with the browser."""
        if job.vendor not in self.browser_vendors:
            return None
        follow = browser_job(job)
        book = book_of(self.crawler)
        if book is not None:
            book.note_item(follow.key, job.item, job.url, job.vendor, job.spider)
        return follow

    def _follow_with_browser(self, fetch: PageFetch) -> None:
        """After the plain capture of a page planned with its browser capture: that capture,
        naming the plain one as its twin."""
        follow = browser_job(fetch.job)
        if follow.key not in self.browser_planned:
            return
        self.browser_planned.discard(follow.key)
        with contextlib.suppress(ValueError):  # its plain capture recorded why already
            self.crawler.engine.crawl(self.browser_request(follow, fetch.axiom_id))

    def _defer(self, job: Job, now: str, kind: str) -> None:
        """A capture over the run's budget: due at the next run, and counted in the record."""
        book = book_of(self.crawler)
        if book is not None:
            book.defer(job.key, now)
        self.deferred[kind] += 1
        setting = {"plain": "CROVIA_CAPTURE_PAGES", "browser": "CROVIA_BROWSER_PAGES"}
        limit = {"plain": self.capture_pages, "browser": self.browser_pages}
        said = [
            f"{self.deferred[k]} {k} page captures deferred to the next run: over {setting[k]}"
            f" ({limit[k]} a run), the newest taken first"
            for k in ("plain", "browser")
            if self.deferred[k]
        ]
        mark = " page captures deferred to the next run"
        problems = [p for p in self.run.problems if mark not in p]
        self.run.problems[:] = problems + said

    def capture_request(self, job: Job) -> scrapy.Request:
        return scrapy.Request(
            job.url,
            callback=self.page_received,
            errback=self.page_failed,
            meta={
                JOB_META: job,
                HEADS_META: None,
                "handle_httpstatus_list": _ALL_ERRORS,
                "download_maxsize": self.capture_max_bytes,
                "download_warnsize": 0,
            },
            dont_filter=True,
        )

    async def page_received(self, response: Response) -> None:
        """A page answered (any status): its facts, its body and its main text, signed next."""
        fetch = self._page_fetch(response.meta[JOB_META])
        fetch.final_url = response.url[:URL_CHARS]
        fetch.status = response.status
        fetch.redirects = [u[:URL_CHARS] for u in response.meta.get("redirect_urls", [])]
        fetch.redirects = fetch.redirects[:MAX_REDIRECTS]
        for key, name in (
            ("content_type", b"Content-Type"),
            ("last_modified", b"Last-Modified"),
            ("etag", b"ETag"),
        ):
            if value := _header(response, name):
                fetch.headers[key] = value
        heads = response.meta.get(HEADS_META) or (b"", b"", "")
        fetch.request_head, fetch.response_head = heads[0], heads[1]
        if heads[2]:
            fetch.headers["content_encoding"] = heads[2]
        fetch.ip_address = str(response.ip_address) if response.ip_address else ""
        certificate = getattr(response, "certificate", None)
        if certificate is not None:
            fetch.tls_certificate_sha256 = hashlib.sha256(certificate.dump()).hexdigest()
        fetch.body = response.body
        if self.remote_role:  # a cluster's worker: the sequencer reads the main text itself
            self.page_fetched(response.meta, fetch)
            return
        await self.read_main_text(fetch)
        # A coroutine, not an async generator: it yields nothing to the scraper.
        self.crawler.signals.send_catch_log(signal=CAPTURE_RECORDED, capture=fetch)
        self._follow_with_browser(fetch)

    async def read_main_text(self, fetch: PageFetch) -> None:
        """The main text of a page that answered (its body), in the parser worker, with the
        source's selector: `fetch.text` (None when not found), `error` saying why, `extractor`."""
        body = fetch.body or b""
        content_type = fetch.headers.get("content_type", "")
        selector = self.capture_selectors.get(fetch.job.vendor, "")
        if body and is_html(content_type, body):
            found = await self.parser.call(
                selected_within,
                main_text,
                MainText(None, f"{NO_MAIN_TEXT}: the parser worker died on this page twice"),
                body,
                content_type,
                selector,
            )
        elif body:
            found = MainText(None, "not an HTML page: kept as bytes, no main text")
        elif is_html(content_type, b""):
            found = MainText(None, f"{NO_MAIN_TEXT}: the page is empty")
        else:
            found = MainText(None, "")
        fetch.text, fetch.error = found.text, found.error
        fetch.extractor = text_extractor(selector)

    def page_failed(self, failure: Failure) -> None:
        """No page to keep: a timeout, a refusal (fetch policy, robots.txt), a body over the cap,
        a redirect loop. Recorded all the same: it proves only that we tried."""
        if failure.check(FetchStopped):
            return  # never asked for (the crawl was stopped)
        job = failure.request.meta[JOB_META]
        fetch = self._page_fetch(job)
        fetch.error = self._failure_error(failure, job)[:HEADER_CHARS] or "no answer"
        if self.remote_role:  # a cluster's worker: sent to the sequencer
            self.page_fetched(failure.request.meta, fetch)
            return
        self.crawler.signals.send_catch_log(signal=CAPTURE_RECORDED, capture=fetch)
        self._follow_with_browser(fetch)

    def _failure_error(self, failure: Failure, job: Job) -> str:
        """Why a capture failed. Scrapy's words name DOWNLOAD_MAXSIZE for a body over the cap
        (a capture's cap is CROVIA_CAPTURE_MAX_BYTES) and no limit at all for a redirect loop."""
        exc = failure.value
        if over_size_cap(exc):
            cap = failure.request.meta["download_maxsize"]
            return f"body over the capture cap, CROVIA_CAPTURE_MAX_BYTES ({cap} B): {exc}"
        if isinstance(exc, IgnoreRequest) and str(exc) == "max redirections reached":
            limit = self.crawler.settings.getint("REDIRECT_MAX_TIMES")
            return (
                f"redirect limit reached: more than {limit} redirects (REDIRECT_MAX_TIMES)"
                f" from {job.url}"
            )
        return describe_failure(failure)

    def _page_fetch(self, job: Job) -> PageFetch:
        return PageFetch(
            job=job,
            captured_at=utc_now_micro(),
            run_hash=self.run.parent_run_hash,
            spider=self.name,
        )


def _header(response: Response, name: bytes) -> str:
    value = response.headers.get(name)
    return value.decode("latin-1") if value and len(value) <= HEADER_CHARS else ""
