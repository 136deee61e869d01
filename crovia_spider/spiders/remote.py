"""A crawl over Redis from the spider's side: the worker's half and the sequencer's half.

The same spider runs in both (docs/cluster.md). Set by the daemons, never by hand:
- `CROVIA_REDIS_ROLE=worker` (`crovia worker`'s child): the feeds are those of the jobs named by
  CROVIA_REDIS_JOBS, each fetched and read exactly as a local crawl does (fetch policy,
  robots.txt, the shared politeness slot, the parser worker and its ceilings); what a feed gave
  (its fetch record's fields, its line of the run record, its items, every body they cite) goes
  back as one result message, published and the job acknowledged in one MULTI. No item pipeline
  runs, nothing is signed, no ledger is opened.
- `CROVIA_REDIS_ROLE=sequencer` (`crovia sequencer`'s child, the ledger's one writer): the run
  named by CROVIA_REDIS_RUN. Its jobs are enqueued once (one per source, with the feed state a
  conditional GET needs), then each result is checked (crovia_spider/cluster/jobs.py) and becomes
  what a local crawl's fetch would have given: the fetch record (FETCH_RECORDED) and the items,
  which the pipelines fingerprint, dedupe, classify, sign and append as always. The first result
  of a job that passes the checks counts; a second one (a job done twice) is ignored. A refused
  result (recorded: the rejects stream, the refused counter, the run record's problems) is not
  the job's answer, since anyone who can write to Redis can put one there before the worker's:
  the job stays open for a valid result. Once the job is acknowledged (its worker sent its result
  and acknowledged it in one MULTI) and no valid result of it is in the stream, the refusal is
  the source's outcome: recorded failed, with the reason. Restarted mid-run, it reads the
  run's results again from the start: a source whose fetch record this run already signed is not
  signed again, and its items stop at dedupe, so each is issued once.
Page captures travel the same way: once the feed jobs have answered, the sequencer asks the
capture book what is due (PageCaptures.captures_due, as a local crawl at its first idle) and
enqueues signed capture jobs, a source's pages each; a worker fetches them (capture_request) and
sends their facts and bytes as one result a job; the sequencer checks it (verdict.py,
`capture_pages`), reads each main text itself and sends each page with CAPTURE_RECORDED.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import logging
import time
from typing import Any

import orjson

from crovia_spider.capture.book import Job as Page
from crovia_spider.cluster import keys, runstate
from crovia_spider.cluster.connection import connect, ensure_group, job_done, text
from crovia_spider.cluster.jobs import (
    CAPTURE_PAGES_PER_JOB,
    JOB_SETTINGS,
    Job,
    JobRefused,
    ResultRefused,
    decode_result,
    encode_result,
    is_allowed,
    parse_allowed,
    pinned_key,
    verified_job,
)
from crovia_spider.cluster.results import BoundedReader, Message
from crovia_spider.config.feeds import FeedConfig
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.kinds import read_body
from crovia_spider.feed.parsepool import BlockingParser
from crovia_spider.items import FeedEntryItem
from crovia_spider.options import path_default, resolve_path
from crovia_spider.runs.runlog import FeedOutcome, RunLog, utc_now_micro
from crovia_spider.runs.stopping import STOP_REQUESTED
from crovia_spider.spiders.batching import batches
from crovia_spider.spiders.browsing import is_browser_job
from crovia_spider.spiders.fetches import CAPTURE_RECORDED, FETCH_RECORDED, FeedFetch
from crovia_spider.spiders.verdict import NOT_SENT, agree, capture_pages, claimed_result, derive
from ledger import jsonl
from ledger.exceptions import KeyFileError
from ledger.keys import load_signing_key
from ledger.records.capture import CAPTURE_TYPE
from ledger.records.fetch import FETCH_TYPE
from ledger.store import LEDGER_FILE

logger = logging.getLogger(__name__)
WORKER = "worker"
SEQUENCER = "sequencer"
ROLES = ("", WORKER, SEQUENCER)
# How long the sequencer's crawl waits for its run's results, by default (CROVIA_REDIS_RUN_TIMEOUT).
RUN_TIMEOUT = 3600.0
# One result's bytes at most, by default (CROVIA_REDIS_RESULT_BYTES): a feed body of 16 MiB, or a
# sitemap walk of 50 MiB of bodies, with room for the items' fields.
RESULT_BYTES = 128 << 20
# The fields of a run hash in Redis that say something about the run (the rest are counters).
_RUN_FIELDS = ("run_id", "started_at", "spider", "jobs", "ledger_bytes")
# How long the sequencer waits before looking at an idle results stream again (doubling).
_POLL_MIN, _POLL_MAX = 0.05, 0.5
# How long a run waits with no worker alive before it gives up (CROVIA_REDIS_NO_WORKER_SECONDS),
# and how often it looks for a cancellation or a live worker.
NO_WORKER_SECONDS = 120.0
_LOOK_EVERY = 2.0
# A capture request's meta: the id of the capture job whose page it fetches (a worker's crawl).
CAPTURE_JOB_META = "crovia_capture_job"


def remote_role(settings: Any) -> str:
    """The crawl's role in a cluster: "" (a local crawl), "worker" or "sequencer"."""
    role = settings.get("CROVIA_REDIS_ROLE") or ""
    if role not in ROLES:
        raise ConfigError(f"CROVIA_REDIS_ROLE must be worker or sequencer, not {role!r}")
    if role and not settings.get("CROVIA_REDIS_URL"):
        raise ConfigError(f"CROVIA_REDIS_ROLE={role} needs CROVIA_REDIS_URL")
    return role


class RemoteRoles:
    """The cluster half of FeedSpider (crovia_spider/spiders/base.py)."""

    remote_role = ""

    def setup_remote(self, crawler: Any) -> bool:
        """Take the crawl's role from its settings. A worker's feeds, run and feed state come
        from its signed jobs; a sequencer's run from its own run state (a restart) or anew; a
        page is captured by the cluster only as a capture job. True when the feeds and the run
        are set here."""
        self.remote_role = role = remote_role(crawler.settings)
        if not role:
            return False
        # A sequencer's crawl asked to stop waits for no Redis that may not come back (its
        # daemon is stopping too); a worker's is stopped by its daemon.
        stop = None if role == WORKER else lambda: bool(crawler.stats.get_value(STOP_REQUESTED))
        self.redis = connect(crawler.settings["CROVIA_REDIS_URL"], ride_out=True, stop=stop)
        if role == WORKER:
            self._take_jobs(crawler.settings)
            return True
        self.remote_request = crawler.settings.get("CROVIA_REDIS_RUN") or ""
        if not self.remote_request:
            raise ConfigError("CROVIA_REDIS_ROLE=sequencer needs CROVIA_REDIS_RUN")
        self.run_dir = resolve_path(crawler.settings["CROVIA_LEDGER_DIR"])
        try:
            mine = runstate.load(self.run_dir, self.remote_request)
        except runstate.RunStateError as exc:
            raise ConfigError(str(exc)) from None
        fetched = [(f.vendor, f.url) for f in self.feeds]
        if mine is None:
            self.run = RunLog(self.name, fetched)
            mine = runstate.RunState(
                self.remote_request, self.name, self.run.run_id, self.run.started_at
            )
        elif mine.spider != self.name:
            raise ConfigError(f"request {self.remote_request} is a run of {mine.spider}")
        else:
            self.run = RunLog(self.name, fetched, mine.run_id, mine.started_at)
        self.run_state = mine
        self._refuse_foreign_run()
        runstate.save(self.run_dir, mine)
        self.redis.hset(
            keys.run_key(self.remote_request),
            mapping={"run_id": mine.run_id, "started_at": mine.started_at, "spider": self.name},
        )
        return True

    def _refuse_foreign_run(self) -> None:
        """A run hash in Redis that this sequencer did not write (its run state says what it
        wrote) is refused: named in the log and the run record, and replaced."""
        key = keys.run_key(self.remote_request)
        held = {text(k): text(v)[:200] for k, v in self.redis.hgetall(key).items()}
        mine = self.run_state
        ours = {"run_id": mine.run_id, "started_at": mine.started_at, "spider": self.name}
        if mine.jobs is not None:
            ours["jobs"] = orjson.dumps(mine.jobs).decode()
        if mine.ledger_bytes is not None:
            ours["ledger_bytes"] = str(mine.ledger_bytes)
        foreign = {k: v for k, v in held.items() if k in _RUN_FIELDS and ours.get(k) != v}
        if foreign:
            named = ", ".join(f"{k}={v!r}" for k, v in sorted(foreign.items()))[:400]
            logger.error("request %s: a run state in Redis this sequencer did not create was"
                         " refused (%s): the run is %s", self.remote_request, named,
                         mine.run_id)  # fmt: skip
            mine.refused.append(named)
            self.redis.delete(key)
        for named in mine.refused:
            self.run.problems.append(
                f"a run state in Redis this sequencer did not create was refused: {named}"[:500]
            )

    # -- the worker ---------------------------------------------------------------------------

    def _take_jobs(self, settings: Any) -> None:
        self.worker_name = settings.get("CROVIA_WORKER_NAME") or "worker"
        self.remote_jobs: dict[str, tuple[str, Job]] = {}
        self.worker_fetches: dict[str, FeedFetch] = {}
        # Capture jobs (job id -> Job) and the pages of each fetched so far.
        self.capture_jobs: dict[str, Job] = {}
        self.worker_pages: dict[str, list[Any]] = {}
        try:
            pin = pinned_key(settings.get("CROVIA_SEQUENCER_PUBKEY") or "")
            allowed = parse_allowed(settings.get("CROVIA_WORKER_ALLOW_PRIVATE") or "")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        # The fetch policy's exception for internal addresses is the worker's own command line's,
        # never a job's feed (crovia_spider/fetching/middlewares.py).
        self.private_allowed = functools.partial(is_allowed, allowed=allowed)
        ids = [i for i in (settings.get("CROVIA_REDIS_JOBS") or "").split(",") if i]
        first: Job | None = None
        pipe = self.redis.pipeline(transaction=False)  # one round trip for the batch's jobs
        for job_id in ids:
            pipe.xrange(keys.JOBS, job_id, job_id)
        for job_id, found in zip(ids, pipe.execute(), strict=True):
            if not found:
                continue  # done and deleted by another worker meanwhile
            try:
                job = verified_job(found[0][1], pin)
            except JobRefused as exc:  # left pending, never acknowledged: not done here
                logger.error("job %s refused: %s", job_id, exc)
                continue
            first = first or job
            if (job.request, job.spider) != (first.request, self.name):
                raise ConfigError(f"job {job_id} is not of run {first.request} of {self.name}")
            if job.captures:
                self.capture_jobs[job_id] = job
                continue
            self.remote_jobs[job.feed.vendor] = (job_id, job)
        jobs = [job for _, job in self.remote_jobs.values()]
        self.feeds = [job.feed for job in jobs]
        self.state = {job.feed.url: job.state for job in jobs}
        run_id, started_at = (first.run_id, first.started_at) if first else ("", "")
        self.run = RunLog(self.name, [(f.vendor, f.url) for f in self.feeds], run_id, started_at)

    def _ack(self, job_id: str) -> None:
        pipe = self.redis.pipeline(transaction=True)
        job_done(pipe, job_id)
        pipe.execute()

    async def work_feed(self, response: Any) -> None:
        """A worker's callback: read the feed as `parse_feed` does, and send what it gave."""
        feed: FeedConfig = response.meta["feed"]
        items = [item async for batch in self.parse_feed(response) for item in batch.entries]
        self.send_result(feed, items)

    def work_failed(self, failure: Any) -> None:
        """A worker's errback: the failure recorded as `feed_failed` does, and sent. A fetch the
        stopping crawl never made is not sent: its job stays pending for another worker. Nor is
        a fetch that failed on Redis (the hosts' shared politeness slots are there): that says
        nothing of the source, so its job stays pending and is taken over once silent for the
        job timeout, by this worker or another, rather than recorded failed."""
        import redis

        if failure.check(redis.RedisError):
            logger.warning("%s: Redis failed under its fetch (%s); its job is left to be taken"
                           " over", failure.request.meta["feed"].vendor, failure.value)  # fmt: skip
            return
        self.feed_failed(failure)
        self.send_result(failure.request.meta["feed"], [])

    def send_result(self, feed: FeedConfig, items: list[FeedEntryItem]) -> None:
        fetch = self.worker_fetches.pop(feed.vendor, None)
        if fetch is None:
            return
        job_id, job = self.remote_jobs[feed.vendor]
        bodies: dict[str, bytes] = dict(fetch.part_bodies)
        if fetch.fetch and "body_sha256" in fetch.fetch:
            bodies[fetch.fetch["body_sha256"]] = fetch.body
        for item in items:
            if item.fetch:
                bodies[item.fetch["body_sha256"]] = item.body
        result = {
            "fetch": fetch.envelope_fields(),
            "outcome": dataclasses.asdict(self.run.feeds[feed.vendor]),
            "kept": self.run.bodies.get(feed.vendor),
            "items": [
                {f.name: getattr(item, f.name) for f in _ITEM_FIELDS if f.name not in NOT_SENT}
                for item in items
            ],
        }
        pipe = self.redis.pipeline(transaction=True)
        pipe.xadd(keys.results_key(job.request), encode_result(job_id, self.worker_name, result,
                                                               bodies))  # fmt: skip
        job_done(pipe, job_id)
        pipe.execute()

    def capture_job_requests(self) -> list[Any]:
        """A worker's capture requests: each page its capture jobs name, fetched as a local
        crawl captures it (PageCaptures.capture_request: the fetch policy with the worker's own
        --allow-private, robots.txt, the shared politeness slot, CROVIA_CAPTURE_MAX_BYTES)."""
        requests = []
        for job_id, job in self.capture_jobs.items():
            self.worker_pages[job_id] = []
            for page in job.captures:
                meta = {CAPTURE_JOB_META: job_id}
                try:
                    request = self.capture_request(Page(**page))
                except ValueError as exc:  # a link Scrapy cannot request: sent as a failure
                    fetch = self._page_fetch(Page(**page))
                    fetch.error = f"not a URL that can be fetched: {exc}"[:1024]
                    self.page_fetched(meta, fetch)
                    continue
                request.meta.update(meta)
                requests.append(request.replace(errback=self.work_page_failed))
        return requests

    def politeness_feeds(self) -> list[FeedConfig]:
        """The sources whose hosts' politeness this crawl sets (fetching/politeness.py): its
        feeds and, on a worker, its capture jobs' sources (a source's `delay`, the arXiv rule)."""
        jobs = getattr(self, "capture_jobs", {})
        return [*self.feeds, *(job.feed for job in jobs.values())]

    def work_page_failed(self, failure: Any) -> None:
        """A capture that failed on Redis (the shared politeness slot) says nothing of the page:
        its job is left pending, to be taken over. Any other failure is the page's."""
        import redis

        if failure.check(redis.RedisError):
            job_id = failure.request.meta[CAPTURE_JOB_META]
            logger.warning("capture job %s: Redis failed under a fetch (%s); left to be taken"
                           " over", job_id, failure.value)  # fmt: skip
            self.worker_pages.pop(job_id, None)
            return
        self.page_failed(failure)

    def page_fetched(self, meta: dict[str, Any], fetch: Any) -> None:
        """A worker's page fetched (or failed): once every page of its job is, one result."""
        job_id = meta.get(CAPTURE_JOB_META, "")
        pages = self.worker_pages.get(job_id)
        if pages is None:
            return  # its job was given up (Redis failed under one of its fetches)
        pages.append(fetch)
        job = self.capture_jobs[job_id]
        if len(pages) < len(job.captures):
            return
        del self.worker_pages[job_id]
        order = {page["key"]: n for n, page in enumerate(job.captures)}
        bodies: dict[str, bytes] = {}

        def kept(data: bytes) -> str:
            digest = hashlib.sha256(data).hexdigest()
            bodies[digest] = data
            return digest

        sent = []
        for page in sorted(pages, key=lambda f: order[f.job.key]):
            sent.append(
                {
                    "key": page.job.key,
                    "url": page.job.url,
                    "captured_at": page.captured_at,
                    "final_url": page.final_url,
                    "status": page.status,
                    "redirects": page.redirects,
                    "headers": page.headers,
                    "ip_address": page.ip_address,
                    "tls_certificate_sha256": page.tls_certificate_sha256,
                    "body_sha256": None if page.body is None else kept(page.body),
                    "request_head_sha256": kept(page.request_head) if page.request_head else "",
                    "response_head_sha256": kept(page.response_head) if page.response_head else "",
                    "error": page.error,
                }
            )
        pipe = self.redis.pipeline(transaction=True)
        message = encode_result(job_id, self.worker_name, {"pages": sent}, bodies)
        pipe.xadd(keys.results_key(job.request), message)
        job_done(pipe, job_id)
        pipe.execute()

    # -- the sequencer ------------------------------------------------------------------------

    def enqueue_jobs(self) -> dict[str, str]:
        """The run's jobs (job id -> vendor), each signed with the job key, enqueued now unless
        this sequencer enqueued them before (its run state says so: a restart)."""
        mine = self.run_state
        if mine.jobs is not None:
            return mine.jobs
        settings, expires = self._job_terms()
        run = self.remote_request, self.run.run_id, self.run.started_at, self.name
        ids = self._enqueue(
            [Job(*run, f, self.state.get(f.url, {}), settings, expires) for f in self.feeds]
        )
        mine.jobs = {job_id: feed.vendor for job_id, feed in zip(ids, self.feeds, strict=True)}
        runstate.save(self.run_dir, mine)
        return mine.jobs

    def enqueue_captures(self) -> dict[str, Job]:
        """The run's capture jobs (job id -> Job), signed with the job key and enqueued: the
        pages a local crawl would capture at its first idle (PageCaptures.captures_due: this
        run's new and updated items, then the pages the book says are due), within the run's
        budget (CROVIA_CAPTURE_PAGES; the rest deferred, as a local crawl does), a source's
        pages grouped CAPTURE_PAGES_PER_JOB a job. A restarted sequencer takes up the capture
        jobs its run state names instead (their results are read again from the start)."""
        if not self.capture_vendors:
            return {}
        feeds = {feed.vendor: feed for feed in self.feeds}
        mine = self.run_state
        if mine.captures is not None:
            ids = self.remote_request, self.run.run_id, self.run.started_at, self.name
            return {
                job_id: Job(*ids, feeds[pages[0]["vendor"]], {}, {}, 0, tuple(pages))
                for job_id, pages in mine.captures.items()
                if pages and pages[0].get("vendor") in feeds
            }
        now = utc_now_micro()
        by_vendor: dict[str, list[Page]] = {}
        browser = 0
        sources = {feed.vendor for feed in self.feeds}
        for page in self.captures_due(now).values():
            if page.vendor not in sources:  # a source the config lost: due for a later run
                continue
            if is_browser_job(page):
                browser += 1
                continue
            if self.capture_taken >= self.capture_pages:
                self._defer(page, now, "plain")
                continue
            self.capture_taken += 1
            by_vendor.setdefault(page.vendor, []).append(page)
        if browser or self.browser_vendors:
            self.run.problems.append(
                "browser captures are not made by a cluster (only plain ones): crawl the"
                ' sources with capture = "browser" locally'
            )
        settings, expires = self._job_terms()
        jobs = []
        for vendor, pages in by_vendor.items():
            for start in range(0, len(pages), CAPTURE_PAGES_PER_JOB):
                chunk = pages[start : start + CAPTURE_PAGES_PER_JOB]
                captures = tuple(dataclasses.asdict(page) for page in chunk)
                job = Job(
                    self.remote_request, self.run.run_id, self.run.started_at, self.name,
                    feeds[vendor], {}, settings, expires, captures,
                )  # fmt: skip
                jobs.append(job)
        if not jobs:
            mine.captures = {}
            runstate.save(self.run_dir, mine)
            return {}
        ids = self._enqueue(jobs)
        logger.info("%d capture job(s) enqueued: %d page(s)", len(jobs), self.capture_taken)
        mine.captures = {job_id: list(job.captures) for job_id, job in zip(ids, jobs, strict=True)}
        runstate.save(self.run_dir, mine)
        return dict(zip(ids, jobs, strict=True))

    def _job_terms(self) -> tuple[dict[str, str], int]:
        """(the settings each job of the run carries, the Unix time it expires: when the run
        times out, and a minute)."""
        settings = {
            name: str(self.settings.get(name))
            for name in JOB_SETTINGS
            if self.settings.get(name) is not None
        }
        timeout = self.settings.getfloat("CROVIA_REDIS_RUN_TIMEOUT", RUN_TIMEOUT)
        return settings, int(time.time() + timeout) + 60

    def _enqueue(self, jobs: list[Job]) -> list[str]:
        """The ids of `jobs`, each signed with the job key, enqueued in one transaction."""
        key = job_key(self.settings)
        ensure_group(self.redis, keys.JOBS, keys.JOBS_GROUP)
        pipe = self.redis.pipeline(transaction=True)
        for job in jobs:
            pipe.xadd(keys.JOBS, job.signed(key))
        return [text(job_id) for job_id in pipe.execute()]

    async def sequence(self) -> Any:
        """The sequencer's start(): enqueue the run's jobs, then turn each first result of a job
        into its fetch record and items, until every job has answered (or the run's timeout:
        its unanswered feeds say so in the run record)."""
        import redis

        ledger = self.run_dir / LEDGER_FILE
        mine = self.run_state
        if mine.ledger_bytes is None:  # the ledger's lock is held: nothing is appended meanwhile
            mine.ledger_bytes = jsonl.complete_size_or_zero(ledger)
            runstate.save(self.run_dir, mine)
        self.signed_fetches, self.signed_captures = signed_by_run(
            ledger, mine.ledger_bytes, self.run.parent_run_hash
        )
        by_vendor = {feed.vendor: feed for feed in self.feeds}
        jobs: dict[str, FeedConfig | Job] = {}  # a feed job's source, or a capture job
        captures_asked = False
        for job_id, vendor in self.enqueue_jobs().items():
            if vendor in by_vendor:
                jobs[job_id] = by_vendor[vendor]
            else:  # the config lost the source between a crash and the restart
                self.run.problems.append(f"job {job_id}: {vendor!r} is no source of the config")
        if mine.captures is not None:  # a restart: the capture jobs of the run, from the start
            captures_asked = True
            jobs.update(self.enqueue_captures())
        answered: set[str] = set()
        refused: dict[str, str] = {}  # job id -> why its latest result was refused
        stream, last = keys.results_key(self.remote_request), "0-0"
        timeout = self.settings.getfloat("CROVIA_REDIS_RUN_TIMEOUT", RUN_TIMEOUT)
        deadline = time.monotonic() + timeout
        reader = results_reader(self.redis, self.settings)
        self.body_reader = body_reader(self.settings)
        pause = _POLL_MIN
        no_worker = self.settings.getfloat("CROVIA_REDIS_NO_WORKER_SECONDS", NO_WORKER_SECONDS)
        alive_at, looked_at, gave_up = time.monotonic(), 0.0, ""
        try:
            while time.monotonic() < deadline:
                if len(answered) >= len(jobs):
                    if captures_asked:
                        break
                    # Every feed answered: once its items are through the issue stage (which
                    # notes them in the capture book), the pages to capture become jobs.
                    captures_asked = True
                    await self._scraper_idle()
                    jobs.update(await asyncio.to_thread(self.enqueue_captures))
                    continue
                if not self.crawler.engine.running or self.crawler.stats.get_value(STOP_REQUESTED):
                    return
                now = time.monotonic()
                if now - looked_at >= _LOOK_EVERY:
                    looked_at = now
                    cancelled, alive = await asyncio.to_thread(self._cancelled_or_alive)
                    alive_at = now if alive else alive_at
                    if cancelled:
                        gave_up = "cancelled by its requester (crovia crawl --redis stopped)"
                    elif now - alive_at > no_worker:
                        gave_up = f"no worker alive for {no_worker:g} s: the run gives up"
                    if gave_up:
                        break
                try:
                    # Looked up before reading: a job acknowledged by now has its result in it.
                    settled = await asyncio.to_thread(self.jobs_done, set(refused) - answered)
                    found = await asyncio.to_thread(reader.read, stream, last)
                except redis.RedisError:
                    if self.crawler.stats.get_value(STOP_REQUESTED):
                        return  # stopping with Redis gone: the run is taken up again
                    raise
                for message in found:
                    last = message.id
                    items = await self.take_result(message, jobs, answered, refused)
                    for batch in batches(items):
                        yield batch
                if found:
                    pause, alive_at = _POLL_MIN, time.monotonic()
                    continue
                # Every result sent before `settled` was looked up has been read.
                for job_id in settled - answered:
                    if isinstance(jobs[job_id], FeedConfig):  # a capture job's pages stay due
                        self.refusal_stands(jobs[job_id].vendor, refused[job_id])
                    answered.add(job_id)
                await asyncio.sleep(pause)
                pause = min(pause * 2, _POLL_MAX)
        finally:
            close = getattr(self.body_reader, "close", None)
            if close is not None:
                close()
        if len(answered) < len(jobs):
            missing = len(jobs) - len(answered)
            why = gave_up or (
                f"unanswered after {timeout:g} s (CROVIA_REDIS_RUN_TIMEOUT): are workers"
                " running? (crovia workers)"
            )
            self.run.problems.append(f"{missing} job(s) withdrawn, {why}")
            # Never done later for a run that has ended: the jobs leave the queue.
            await asyncio.to_thread(self.redis.xdel, keys.JOBS, *(set(jobs) - answered))
        # A crawl that downloads nothing is found idle when start() ends, else only on Scrapy's
        # 5 s heartbeat: end once the items are through the pipelines, and the run closes then.
        await self._scraper_idle()

    async def _scraper_idle(self) -> None:
        """Once every item yielded so far is through the pipelines."""
        slot = self.crawler.engine.scraper.slot
        while slot is not None and not slot.is_idle() and self.crawler.engine.running:
            await asyncio.sleep(0.02)

    async def take_result(
        self,
        message: Message,
        jobs: dict[str, FeedConfig | Job],
        answered: set[str],
        refused: dict[str, str],
    ) -> list[FeedEntryItem]:
        """The items of a job's first valid result (its fetch record sent to be signed); a
        refused result is recorded in `refused` and leaves the job unanswered."""
        fields = message.fields or {b"job": message.job.encode()}
        job_id = text(fields.get(b"job"))
        if job_id not in jobs:
            self._refuse(message.id, job_id, fields, "a result for no job of this run")
            return []
        if job_id in answered:
            logger.info("job %s answered again (done twice): the first answer counts", job_id)
            return []
        feed = jobs[job_id]
        if isinstance(feed, Job):
            await self.take_captures(message, job_id, feed, answered, refused)
            return []
        vendor = feed.vendor
        body_cap, _ = result_caps(self.settings)
        try:
            worker, result, bodies = self._decoded(message, body_cap)
            fetch, outcome, kept, items = await asyncio.to_thread(
                self.check_result, feed, result, bodies
            )
        except ResultRefused as exc:
            self._refuse(message.id, job_id, fields, str(exc))
            refused[job_id] = str(exc)
            self.run.problems.append(f"{vendor}: a worker's result was refused: {exc}"[:500])
            return []
        answered.add(job_id)
        self.run.feeds[vendor] = outcome
        if kept is not None:
            self.run.bodies[vendor] = kept
        logger.info("%s: %d item(s) from worker %s", vendor, len(items), worker)
        if feed.url not in self.signed_fetches:
            self.crawler.signals.send_catch_log(signal=FETCH_RECORDED, fetch=fetch)
        return items

    async def take_captures(
        self,
        message: Message,
        job_id: str,
        job: Job,
        answered: set[str],
        refused: dict[str, str],
    ) -> None:
        """A capture job's first valid result: each page's facts, checked (crovia_spider/spiders/
        verdict.py), its main text read here from the kept body, sent to be signed as a local
        crawl's capture (CAPTURE_RECORDED). A refused result is recorded as a feed result's."""
        fields = message.fields or {b"job": message.job.encode()}
        _, result_cap = result_caps(self.settings)
        body_cap = min(self.capture_max_bytes or result_cap, result_cap)
        try:
            worker, result, bodies = self._decoded(message, body_cap)
            pages = capture_pages(self, job, result, bodies)
        except ResultRefused as exc:
            self._refuse(message.id, job_id, fields, str(exc))
            refused[job_id] = str(exc)
            self.run.problems.append(
                f"{job.feed.vendor}: a worker's capture result was refused: {exc}"[:500]
            )
            return
        answered.add(job_id)
        logger.info("%s: %d page(s) captured by worker %s", job.feed.vendor, len(pages), worker)
        for fetch in pages:
            signed = self.signed_captures.get((fetch.job.url, fetch.job.item))
            if signed is not None:  # signed by this run before a restart: counted, not again
                self.run.captured(fetch.job.vendor, signed)
                continue
            if fetch.status is not None:  # an answer: its main text, read by the sequencer
                await self.read_main_text(fetch)
            self.crawler.signals.send_catch_log(signal=CAPTURE_RECORDED, capture=fetch)

    def _decoded(
        self, message: Message, body_cap: int
    ) -> tuple[str, dict[str, Any], dict[str, bytes]]:
        """(worker, result, bodies) of a result under `body_cap` a body; one the reader handed
        over by its size alone (over CROVIA_REDIS_RESULT_BYTES) is refused unread."""
        _, result_cap = result_caps(self.settings)
        if message.fields is None:
            raise ResultRefused(
                f"a result of {message.size:,} bytes, over the cap of {result_cap:,}"
                " (CROVIA_REDIS_RESULT_BYTES); not read"
            )
        _, worker, result, bodies = decode_result(message.fields, body_cap, result_cap)
        return worker, result, bodies

    def check_result(
        self, feed: FeedConfig, result: dict[str, Any], bodies: dict[str, bytes]
    ) -> tuple[FeedFetch, FeedOutcome, dict[str, Any] | None, list[FeedEntryItem]]:
        """What the sequencer signs of a worker's result: the fetch record, run-record line,
        kept-body note and items a local crawl would have made of the bytes the worker says the
        server sent, read again here with the spider's own reader (crovia_spider/spiders/
        verdict.py). The result must state exactly those, and cite every body it carries.
        Raises ResultRefused naming what differs."""
        claimed = claimed_result(self, feed, result, bodies)
        derived = derive(self, feed, claimed, bodies)
        agree(claimed, derived)
        return derived.fetch, derived.outcome, derived.kept, derived.items

    def _cancelled_or_alive(self) -> tuple[bool, bool]:
        """(the run's requester cancelled it, some worker lives), in one round trip and a scan."""
        cancelled = bool(self.redis.exists(keys.cancel_key(self.remote_request)))
        alive = next(self.redis.scan_iter(match=keys.WORKERS_PATTERN, count=1000), None)
        return cancelled, alive is not None

    def jobs_done(self, job_ids: set[str]) -> set[str]:
        """Those of `job_ids` no longer in the jobs stream: their worker acknowledged them."""
        asked = sorted(job_ids)
        pipe = self.redis.pipeline(transaction=False)  # one round trip for them all
        for job_id in asked:
            pipe.xrange(keys.JOBS, job_id, job_id)
        return {job_id for job_id, found in zip(asked, pipe.execute(), strict=True) if not found}

    def refusal_stands(self, vendor: str, reason: str) -> None:
        """A job done whose every result was refused: its source is recorded failed, saying why
        (the run record's problems already name each refusal)."""
        self.run.feeds[vendor].error = f"a worker's result was refused: {reason}"[:500]
        logger.warning("%s: no valid result of its job, recorded failed: %s", vendor, reason)

    def _refuse(
        self, message_id: str, job_id: str, fields: dict[bytes, bytes], reason: str
    ) -> None:
        """A refused result: logged, kept in the rejects stream (capped), counted; never signed."""
        worker = text(fields.get(b"worker"))[:200]
        logger.warning("result of job %s from worker %r refused: %s", job_id[:40], worker, reason)
        # Recorded once a message: a restarted sequencer reads the run's results again.
        if not self.redis.hsetnx(keys.run_key(self.remote_request), f"refused:{message_id}", 1):
            return
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(
            keys.REJECTS,
            {
                "run": self.remote_request,
                "job": job_id[:40],
                "worker": worker,
                "reason": reason[:500],
            },
            maxlen=keys.REJECTS_MAX,
            approximate=True,
        )
        pipe.hincrby(keys.STATS, keys.REFUSED, 1)
        pipe.execute()


_ITEM_FIELDS = dataclasses.fields(FeedEntryItem)


def result_caps(settings: Any) -> tuple[int, int]:
    """(a body's cap, a result's cap) of the sequencer's results reading: a body as
    DOWNLOAD_MAXSIZE (the worker downloads under it; 0 there is not "no cap" here), a result
    as CROVIA_REDIS_RESULT_BYTES."""
    result_cap = max(1 << 20, settings.getint("CROVIA_REDIS_RESULT_BYTES", RESULT_BYTES))
    body_cap = settings.getint("DOWNLOAD_MAXSIZE") or result_cap
    return min(body_cap, result_cap), result_cap


def results_reader(client: Any, settings: Any) -> BoundedReader:
    """The sequencer's reader of a run's results: a message over a result's cap handed over as
    its size alone, one read at most one result's cap (crovia_spider/cluster/results.py)."""
    _, result_cap = result_caps(settings)
    return BoundedReader(client, result_cap, result_cap)


def body_reader(settings: Any) -> Any:
    """How the sequencer reads a result's bodies again: in the parser worker under the crawl's
    ceilings (CROVIA_PARSE_MEMORY_MB, CROVIA_PARSE_SECONDS), or in-process when
    CROVIA_PARSE_WORKER=0, as the crawl itself reads them."""
    if not settings.getbool("CROVIA_PARSE_WORKER", True):
        return read_body
    return BlockingParser(
        settings.getint("CROVIA_PARSE_MEMORY_MB"), settings.getfloat("CROVIA_PARSE_SECONDS")
    )


def job_key(settings: Any) -> Any:
    """The sequencer's job key (CROVIA_JOB_KEY_FILE), which signs every job it enqueues."""
    path = resolve_path(settings.get("CROVIA_JOB_KEY_FILE") or path_default("CROVIA_JOB_KEY_FILE"))
    try:
        return load_signing_key(path)
    except (KeyFileError, OSError) as exc:
        raise ConfigError(f"the job key cannot be read: {exc}") from None


def signed_by_run(
    ledger: Any, offset: int, run_hash: str
) -> tuple[set[str], dict[tuple[str, str], str]]:
    """What run `run_hash` signed past byte `offset` of the ledger (where the run began), in one
    read: (the feed URLs of its fetch records, (page URL, item) -> outcome of its capture
    records). A restarted sequencer signs none of them again (and counts the captures)."""
    fetches: set[str] = set()
    captures: dict[tuple[str, str], str] = {}
    needle, kinds = run_hash.encode(), (FETCH_TYPE.encode(), CAPTURE_TYPE.encode())
    for _, line in jsonl.iter_lines(ledger, offset):
        if needle not in line or not any(kind in line for kind in kinds):
            continue
        try:
            envelope = orjson.loads(line)
            body = envelope["body"]
            if body.get("run") != run_hash:
                continue
            if envelope.get("axiom_type") == FETCH_TYPE:
                fetches.add(body["feed_url"])
            elif envelope.get("axiom_type") == CAPTURE_TYPE:
                captures[(body["url"], body["item"])] = str(body["outcome"])
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            continue  # not a line of ours to read here: crovia audit says more
    return fetches, captures
