"""Stage 5, issue: sign AX.OBS envelopes into the ledger in batches, seal, record the run.

Envelopes go to `Ledger.issue()` CROVIA_ISSUE_BATCH at a time on the ledger's writer thread (one
fsync per batch); an item counts as `new`/`updated` only once its batch has returned, i.e. is
durable. The ledger seals every CROVIA_SEAL_EVERY leaves by itself; when the spider closes, this
stage flushes the last batch, seals once more (so every crawl ends sealed), appends the run record
to runs.jsonl, and only then stores the feeds' validators (crovia_spider/runs/feed_state.py). It all
happens also when the crawl ends badly; a ledger failure stops issuing and is written into the run
record.

Every fetch of every feed is also signed, as an AX.FETCH fetch record (ledger/records/fetch.py):
the spider sends it (crovia_spider/spiders/fetches.py) before the feed's items, and it joins the
batch
like an item, its received body kept the same way.

Envelope extras: the item's identity in `object.identity` (`{"family", "guid", "link"}`, what
dedupe groups versions by); the fetch evidence in `object.fetch`; arXiv id, version and announce
type in `object.arxiv`; the classification ruleset in `confidence.ruleset`; what the item is about
in `subject.target_id`. The body bytes `object.fetch.body_sha256` names are kept in the ledger
directory (ledger/store/bodies.py) by the writer thread just before the batch citing them, so a
body is durable before any envelope that cites it; each distinct body is compressed and written
once.
"""

from __future__ import annotations

import hashlib
import logging
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

from crovia_spider.capture.book import DEFAULT_SCHEDULE, CaptureBook, parse_schedule, set_book
from crovia_spider.capture.text import extractor as text_extractor
from crovia_spider.exceptions import CrawlRefused
from crovia_spider.feed.ceilings import DEFAULT_MEMORY_MB
from crovia_spider.feed.parsepool import start_worker
from crovia_spider.items import FeedBatch, FeedEntryItem
from crovia_spider.runs.feed_state import failing_streaks, load_state, updated_state
from crovia_spider.runs.runlog import LEDGER_FAILED, NO_MAIN_TEXT_COUNT, RUN_RECORDED, utc_now_micro
from crovia_spider.runs.runsummary import log_summary
from crovia_spider.spiders.capturing import CAPTURE_RECORDED, PageFetch
from crovia_spider.spiders.fetches import FETCH_RECORDED, FeedFetch
from ledger.envelope import axiom_id_of, new_envelope
from ledger.exceptions import EmptyLedger, LedgerError
from ledger.records.capture import FAILED as CAPTURE_FAILED
from ledger.records.capture import new_capture_envelope
from ledger.records.fetch import new_fetch_envelope
from ledger.store import BodyStore, Ledger, capture_of, keep_pages
from pipelines.ledger_session import LedgerSession
from pipelines.stage import Stage

logger = logging.getLogger(__name__)
# Batches handed to the writer thread but not yet durable; beyond this the reactor waits, so a fast
# feed cannot pile every envelope of a crawl up in memory.
MAX_PENDING_BATCHES = 4
# Capture records per batch at most (each keeps a page, its heads and its main text).
CAPTURE_BATCH = 100
NOT_ISSUED = "not issued: the ledger failed earlier in this run"
# The `change` of a fetch record and of a capture record in a batch: no item, no item counter.
FETCH = "fetch"
CAPTURE = "capture"
NOT_ITEMS = (FETCH, CAPTURE)


def object_extra(item: FeedEntryItem) -> dict[str, Any]:
    """The envelope's `object` extras: the identity (pipelines/fingerprint.py), the fetch evidence
    (docs/spider.md), and arXiv's id, version and announce type for arXiv items."""
    extra: dict[str, Any] = {"identity": dict(item.identity)}
    if item.fetch:
        extra["fetch"] = item.fetch
    if item.arxiv:
        extra["arxiv"] = item.arxiv
    return extra


class IssuePipeline(Stage):
    """Hands envelopes to the ledger writer in ordered batches; finishes the run on close."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.session = LedgerSession.of(crawler)
        self.batch_size = max(1, crawler.settings.getint("CROVIA_ISSUE_BATCH"))
        self.batch: list[tuple[str, str, dict[str, Any]]] = []
        self.batch_bodies: dict[str, bytes] = {}  # sha256 -> body cited by the current batch
        self.batch_captures = 0  # capture records in the current batch
        self.kept: set[str] = set()  # bodies durable in the ledger (writer thread only)
        self.pending: deque[Future[None]] = deque()
        self.failed = False
        self.book: CaptureBook | None = None  # loaded when the crawl has sources with captures
        self.keeper: ProcessPoolExecutor | None = None  # keeps batches of captured pages

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IssuePipeline:
        """Build the stage and open the ledger: the last stage built, so the config is validated
        first; before the engine starts, so a locked ledger or a missing key fetches nothing and
        the crawl exits non-zero (CrawlRefused)."""
        stage = cls(crawler)
        try:
            stage.session.open()
        except CrawlRefused as exc:
            logger.critical("crawl refused: %s", exc)
            raise
        stage.run.lock_acquired_at = stage.session.opened_at
        stage._load_book()
        crawler.signals.connect(stage.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(stage.capture_recorded, signal=CAPTURE_RECORDED)
        crawler.signals.connect(stage.item_error, signal=signals.item_error)
        crawler.signals.connect(stage.fetch_recorded, signal=FETCH_RECORDED)
        return stage

    def _load_book(self) -> None:
        """The capture book, under the ledger lock, when this crawl captures pages: brought up to
        date with the ledger (crovia_spider/capture/book.py). A bad schedule refuses the crawl."""
        spider = getattr(self.crawler, "spider", None)
        if not getattr(spider, "capture_vendors", None):
            return
        setting = self.crawler.settings.get("CROVIA_RECAPTURE_AFTER") or DEFAULT_SCHEDULE
        try:
            schedule = parse_schedule(setting)
        except ValueError as exc:
            self.session.close()
            raise CrawlRefused(f"CROVIA_RECAPTURE_AFTER: {exc}") from None
        self.book = self.session.submit(
            lambda writer: CaptureBook.load(writer.directory, schedule)
        ).result()
        set_book(self.crawler, self.book)

    def item_error(self, item: Any, response: Any, spider: Any, failure: Any) -> None:
        """An unexpected error in a stage (Scrapy logs its traceback): the item is still counted,
        as dropped with the error, so the run record accounts for every item seen."""
        entries = item.entries if isinstance(item, FeedBatch) else [item]
        for entry in entries:
            if isinstance(entry, FeedEntryItem):
                self.run.drop(entry.vendor, f"internal error: {type(failure.value).__name__}")

    def process_entry(self, item: FeedEntryItem) -> FeedEntryItem:
        if self.failed:
            raise self.drop(item, NOT_ISSUED)
        try:
            envelope = new_envelope(
                item.record,
                predecessors=item.predecessors,
                object_extra=object_extra(item),
                body_extra={"relay": item.relay} if item.relay else None,
                confidence_extra={"ruleset": item.ruleset},
                target_id=item.target_id,
            )
        except LedgerError as exc:
            logger.warning("invalid record from %s (%s): %s", item.vendor, item.target_id, exc)
            raise self.drop(item, f"invalid record ({type(exc).__name__})") from None
        self.batch.append((item.vendor, item.change, envelope))
        if (
            self.book is not None
            and item.link
            and item.vendor in self.crawler.spider.capture_vendors
        ):
            job = self.book.note_item(
                item.identity_key, axiom_id_of(envelope), item.link, item.vendor, item.spider
            )
            self.crawler.spider.queue_capture(job)
        if item.fetch:
            self.batch_bodies[item.fetch["body_sha256"]] = item.body
        # Until the batch goes to the writer, a later sighting of the item finds its envelope here.
        self.session.hold(item.identity_key, item.record["fingerprint"], envelope)
        if len(self.batch) >= self.batch_size:
            self._flush()
        return item

    def fetch_recorded(self, fetch: FeedFetch) -> None:
        """Sign a fetch record (AX.FETCH) in the batch, before the items of its feed, and keep
        the body it received. After a ledger failure nothing more is issued (the run record
        says so)."""
        if self.failed or not self.session.is_open:
            return
        envelope = new_fetch_envelope(**fetch.envelope_fields())
        self.batch.append((fetch.vendor, FETCH, envelope))
        if fetch.fetch and "body_sha256" in fetch.fetch:  # a 200's body, kept as items' bodies
            self.batch_bodies[fetch.fetch["body_sha256"]] = fetch.body
        self.batch_bodies.update(fetch.part_bodies)  # a sitemap walk's further bodies
        if len(self.batch) >= self.batch_size:
            self._flush()

    def capture_recorded(self, capture: PageFetch) -> None:
        """Sign a capture record (AX.CAPTURE) of an item's page: its outcome against the page's
        last version (the capture book), chained to the page's previous capture; keep its body,
        heads and main text. After a ledger failure nothing more is issued."""
        if self.failed or not self.session.is_open or self.book is None:
            return
        job = capture.job
        blobs: dict[str, bytes] = {}

        def kept(data: bytes) -> str:
            digest = hashlib.sha256(data).hexdigest()
            blobs[digest] = data
            return digest

        fields: dict[str, Any] = {}
        if capture.body is not None:
            fields["body_sha256"] = kept(capture.body)
            fields["body_length"] = len(capture.body)
            for name, head in (
                ("request_head_sha256", capture.request_head),
                ("response_head_sha256", capture.response_head),
            ):
                if head:
                    fields[name] = kept(head)
        if capture.text is not None and "body_sha256" in fields:
            text = capture.text.encode("utf-8")
            fields["text"] = {
                "sha256": kept(text),
                "length": len(capture.text),
                "extractor": capture.extractor or text_extractor(),
            }
        version = fields.get("text", {}).get("sha256") or fields.get("body_sha256", "")
        outcome, previous = self.book.judge(
            job.key, job.url, capture.final_url, capture.status, version
        )
        error = capture.error
        not_the_page = capture.not_the_page()  # a wall, a failed rendering, a menu: kept, signed
        if not_the_page is not None:
            outcome, error = CAPTURE_FAILED, not_the_page
        if outcome == CAPTURE_FAILED and not error:
            error = f"HTTP {capture.status}"
        try:
            envelope = new_capture_envelope(
                spider=capture.spider,
                vendor=job.vendor,
                item=job.item,
                url=job.url,
                captured_at=capture.captured_at,
                run_hash=capture.run_hash,
                outcome=outcome,
                previous=previous,
                final_url=capture.final_url,
                status=capture.status,
                redirects=capture.redirects,
                headers=capture.headers,
                ip_address=capture.ip_address,
                tls_certificate_sha256=capture.tls_certificate_sha256,
                error=error,
                mode=capture.mode,
                browser=capture.browser,
                **fields,
            )
        except LedgerError as exc:
            problem = f"capture of {job.url[:200]} not recordable: {exc}"
            logger.warning("%s", problem)
            self.run.problems.append(problem)
            return
        axiom_id = axiom_id_of(envelope)
        self.book.record(job.key, capture_of({**envelope, "axiom_id": axiom_id}, -1))
        self.run.captured(job.vendor, NO_MAIN_TEXT_COUNT if capture.no_main_text else outcome)
        self.batch.append((job.vendor, CAPTURE, envelope))
        self.batch_bodies.update(blobs)
        self.batch_bodies.update(capture.blobs)  # a browser capture's exchanges, screenshot, DOM
        capture.axiom_id = axiom_id
        self.batch_captures += 1
        # Pages are large: a batch goes to the writer every CAPTURE_BATCH captures, so most are
        # kept while the next are fetched, and little is left to keep when the crawl ends.
        if len(self.batch) >= self.batch_size or self.batch_captures >= CAPTURE_BATCH:
            self._flush()

    def close_spider(self) -> None:
        if self.session.is_open:
            self._flush()
            self._wait_all()

    def spider_closed(self, reason: str) -> None:
        """After the last item: seal, write the run record, store validators, release the ledger."""
        if not self.session.is_open:
            return  # refused at open: there is no ledger to finish
        try:
            self.session.submit(self._finish, reason).result()
        finally:
            self.session.close()
            if self.keeper is not None:
                self.keeper.shutdown(wait=True)

    def _flush(self) -> None:
        if self.failed:
            for vendor, change, _ in self.batch:
                if change not in NOT_ITEMS:
                    self.run.drop(vendor, NOT_ISSUED)
        elif self.batch:
            self.pending.append(self.session.submit(self._issue, self.batch, self.batch_bodies))
        self.batch, self.batch_bodies, self.batch_captures = [], {}, 0
        self.session.release_held()
        while len(self.pending) > MAX_PENDING_BATCHES:
            self._settle(self.pending.popleft())

    def _wait_all(self) -> None:
        while self.pending:
            self._settle(self.pending.popleft())

    def _settle(self, future: Future[None]) -> None:
        try:
            future.result()
        except LedgerError as exc:
            self._fail(f"ledger refused a batch: {exc}")
        except OSError as exc:
            self._fail(f"ledger I/O error: {exc}")

    def _fail(self, problem: str) -> None:
        logger.error("%s; issuing stops for this run", problem)
        self.run.problems.append(problem)
        self.failed = True
        self.crawler.stats.set_value(LEDGER_FAILED, True)

    # -- on the writer thread ---------------------------------------------------------------------

    def _issue(
        self,
        writer: Ledger,
        batch: list[tuple[str, str, dict[str, Any]]],
        bodies: dict[str, bytes],
    ) -> None:
        items = [(vendor, change) for vendor, change, _ in batch if change not in NOT_ITEMS]
        if self.failed:
            for vendor, _ in items:
                self.run.drop(vendor, NOT_ISSUED)
            return
        try:
            self._keep(writer, bodies, any(change == CAPTURE for _, change, _ in batch))
            writer.issue([envelope for _, _, envelope in batch])
        except (LedgerError, OSError):
            for vendor, _ in items:
                self.run.drop(vendor, "not issued: the ledger refused the batch")
            raise
        for vendor, change in items:
            self.run.count(vendor, change)

    def _keep(self, writer: Ledger, bodies: dict[str, bytes], pages: bool) -> None:
        """Make each body the batch cites durable, once per run, with two syncs for the batch
        (BodyStore.put_many; kept ones are skipped). A batch holding captures (`pages`: four
        files each, a page, two heads, a main text) is kept by a process of its own: written
        from this thread, each of those thousands of file operations waits for the GIL behind
        the reactor, which made keeping pages the slowest part of a capture crawl."""
        fresh = {digest: body for digest, body in bodies.items() if digest not in self.kept}
        if pages and fresh:
            if self.keeper is None:  # spawned, ends itself if the crawl is killed: as the parser
                self.keeper = start_worker(DEFAULT_MEMORY_MB << 20)
            try:
                self.keeper.submit(keep_pages, str(writer.directory), fresh).result()
            except BrokenProcessPool:  # killed (out of memory?): this batch is not issued
                self.keeper = None
                raise OSError("the process keeping captured pages died") from None
        else:
            BodyStore(writer.directory).put_many(fresh)
        self.kept.update(fresh)

    def _finish(self, writer: Ledger, reason: str) -> None:
        run = self.run
        seal_text = "not sealed"
        try:
            before = writer.last_seal()
            seal = writer.seal(run_id=run.run_id)
            seal_text = (
                f"sealed {seal['leaf_count']} leaves (root {seal['merkle_root'][:16]}...)"
                if seal is not before
                else f"nothing new to seal (ledger at {seal['leaf_count']} leaves)"
            )
        except EmptyLedger:
            seal_text = "nothing to seal (the ledger has no leaves)"
        except (LedgerError, OSError) as exc:
            self._fail(f"final seal failed: {exc}")
        run.close_unanswered(reason)
        if self.book is not None:  # what the book follows of this crawl's sources, and when
            run.pages = self.book.plan(utc_now_micro(), self.crawler.spider.capture_vendors)
        outcome = "failed" if self.failed else run.outcome_of(reason)
        record = run.record(utc_now_micro(), outcome)
        writer.append_run(record)
        state = updated_state(writer.directory, run) if not self.failed else None
        if self.book is not None and not self.failed:
            self.book.save(writer.directory)
        if run.captures:
            outcomes: dict[str, int] = {}
            for counts in run.captures.values():
                for outcome, n in counts.items():
                    outcomes[outcome] = outcomes.get(outcome, 0) + n
            found = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
            logger.info("captured %d pages: %s", sum(outcomes.values()), found)
        self.crawler.stats.set_value(RUN_RECORDED, True)
        after = self.crawler.settings.getint("CROVIA_FAILING_AFTER", 3)
        streaks = failing_streaks(state or load_state(writer.directory), run, after)
        log_summary(run, record, seal=seal_text, streaks=streaks)
