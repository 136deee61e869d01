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
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from typing import Any

import orjson

from crovia_spider.cluster import keys
from crovia_spider.cluster.connection import connect, ensure_group, job_done, text
from crovia_spider.cluster.jobs import (
    JOB_SETTINGS,
    Job,
    ResultRefused,
    check_fields,
    decode_job,
    decode_result,
    encode_result,
)
from crovia_spider.config.feeds import DEFAULT_KIND, FeedConfig
from crovia_spider.exceptions import ConfigError
from crovia_spider.feed.identity import identity
from crovia_spider.items import FeedEntryItem
from crovia_spider.options import resolve_path
from crovia_spider.runs.runlog import FeedOutcome, RunLog
from crovia_spider.runs.stopping import STOP_REQUESTED
from crovia_spider.spiders.batching import batches
from crovia_spider.spiders.fetches import FETCH_RECORDED, FeedFetch
from ledger import jsonl
from ledger.fetch_record import FETCH_TYPE, NOT_MODIFIED, entries_digest
from ledger.store import LEDGER_FILE

logger = logging.getLogger(__name__)
WORKER = "worker"
SEQUENCER = "sequencer"
ROLES = ("", WORKER, SEQUENCER)
# The fields of an item the spider fills (items.py, the first block): what a result carries. The
# pipelines' fields are filled again by the sequencer's pipelines; `body` travels by its digest.
PIPELINE_FIELDS = (
    "record", "identity", "identity_key", "target_id", "change", "predecessors", "ruleset",
)  # fmt: skip
NOT_SENT = (*PIPELINE_FIELDS, "body")
# How long the sequencer's crawl waits for its run's results, by default (CROVIA_REDIS_RUN_TIMEOUT).
RUN_TIMEOUT = 3600.0


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
        from its jobs; a sequencer's run from Redis when it was started before (a restart), and
        neither captures pages. True when the feeds and the run are set here."""
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
        key = keys.run_key(self.remote_request)
        known = {text(k): text(v) for k, v in self.redis.hgetall(key).items()}
        fetched = [(f.vendor, f.url) for f in self.feeds]
        if known.get("run_id"):
            self.run = RunLog(self.name, fetched, known["run_id"], known["started_at"])
        else:
            self.run = RunLog(self.name, fetched)
            self.redis.hset(
                key,
                mapping={
                    "run_id": self.run.run_id,
                    "started_at": self.run.started_at,
                    "spider": self.name,
                },
            )
        return True

    # -- the worker ---------------------------------------------------------------------------

    def _take_jobs(self, settings: Any) -> None:
        self.worker_name = settings.get("CROVIA_WORKER_NAME") or "worker"
        self.remote_jobs: dict[str, tuple[str, Job]] = {}
        self.worker_fetches: dict[str, FeedFetch] = {}
        ids = [i for i in (settings.get("CROVIA_REDIS_JOBS") or "").split(",") if i]
        first: Job | None = None
        pipe = self.redis.pipeline(transaction=False)  # one round trip for the batch's jobs
        for job_id in ids:
            pipe.xrange(keys.JOBS, job_id, job_id)
        for job_id, found in zip(ids, pipe.execute(), strict=True):
            if not found:
                continue  # done and deleted by another worker meanwhile
            try:
                job = decode_job(found[0][1].get(b"job", b""))
            except ValueError as exc:
                logger.error("job %s dropped: %s", job_id, exc)
                self._ack(job_id)
                continue
            first = first or job
            if (job.request, job.spider) != (first.request, self.name):
                raise ConfigError(f"job {job_id} is not of run {first.request} of {self.name}")
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

    # -- the sequencer ------------------------------------------------------------------------

    def enqueue_jobs(self) -> dict[str, str]:
        """The run's jobs (job id -> vendor), enqueued now unless enqueued before (a restart)."""
        key = keys.run_key(self.remote_request)
        known = self.redis.hget(key, "jobs")
        if known is not None:
            return orjson.loads(known)
        settings = {
            name: str(self.settings.get(name))
            for name in JOB_SETTINGS
            if self.settings.get(name) is not None
        }
        ensure_group(self.redis, keys.JOBS, keys.JOBS_GROUP)
        pipe = self.redis.pipeline(transaction=True)
        for feed in self.feeds:
            job = Job(
                self.remote_request, self.run.run_id, self.run.started_at, self.name, feed,
                self.state.get(feed.url, {}), settings,
            )  # fmt: skip
            pipe.xadd(keys.JOBS, {"job": job.encode()})
        ids = [i.decode() if isinstance(i, bytes) else i for i in pipe.execute()]
        jobs = {job_id: feed.vendor for job_id, feed in zip(ids, self.feeds, strict=True)}
        self.redis.hset(key, "jobs", orjson.dumps(jobs))
        return jobs

    async def sequence(self) -> Any:
        """The sequencer's start(): enqueue the run's jobs, then turn each first result of a job
        into its fetch record and items, until every job has answered (or the run's timeout:
        its unanswered feeds say so in the run record)."""
        import redis

        key = keys.run_key(self.remote_request)
        directory = resolve_path(self.settings["CROVIA_LEDGER_DIR"])
        ledger = directory / LEDGER_FILE
        if self.redis.hget(key, "ledger_bytes") is None:
            self.redis.hset(key, "ledger_bytes", jsonl.complete_size_or_zero(ledger))
        offset = int(self.redis.hget(key, "ledger_bytes"))
        self.signed_fetches = fetches_signed(ledger, offset, self.run.parent_run_hash)
        by_vendor = {feed.vendor: feed for feed in self.feeds}
        jobs = {job_id: by_vendor[vendor] for job_id, vendor in self.enqueue_jobs().items()}
        answered: set[str] = set()
        refused: dict[str, str] = {}  # job id -> why its latest result was refused
        stream, last = keys.results_key(self.remote_request), "0-0"
        timeout = self.settings.getfloat("CROVIA_REDIS_RUN_TIMEOUT", RUN_TIMEOUT)
        deadline = time.monotonic() + timeout
        while len(answered) < len(jobs) and time.monotonic() < deadline:
            if not self.crawler.engine.running or self.crawler.stats.get_value(STOP_REQUESTED):
                return
            try:
                # Looked up before reading: a job acknowledged by now has its result in the stream.
                settled = await asyncio.to_thread(self.jobs_done, set(refused) - answered)
                found = await asyncio.to_thread(self.redis.xread, {stream: last}, 50, 1000)
            except redis.RedisError:
                if self.crawler.stats.get_value(STOP_REQUESTED):
                    return  # stopping with Redis gone: the run is taken up again
                raise
            for _, messages in found or ():
                for message_id, fields in messages:
                    last = text(message_id)
                    for batch in batches(self.take_result(last, fields, jobs, answered, refused)):
                        yield batch
            if not found:  # every result sent before `settled` was looked up has been read
                for job_id in settled - answered:
                    self.refusal_stands(jobs[job_id].vendor, refused[job_id])
                    answered.add(job_id)
        if len(answered) < len(jobs):
            missing = len(jobs) - len(answered)
            self.run.problems.append(
                f"{missing} job(s) unanswered after {timeout:g} s (CROVIA_REDIS_RUN_TIMEOUT):"
                " are workers running? (crovia workers)"
            )
        # A crawl that downloads nothing is found idle when start() ends, else only on Scrapy's
        # 5 s heartbeat: end once the items are through the pipelines, and the run closes then.
        slot = self.crawler.engine.scraper.slot
        while slot is not None and not slot.is_idle() and self.crawler.engine.running:
            await asyncio.sleep(0.02)

    def take_result(
        self,
        message_id: str,
        fields: dict[bytes, bytes],
        jobs: dict[str, FeedConfig],
        answered: set[str],
        refused: dict[str, str],
    ) -> list[FeedEntryItem]:
        """The items of a job's first valid result (its fetch record sent to be signed); a
        refused result is recorded in `refused` and leaves the job unanswered."""
        job_id = text(fields.get(b"job"))
        if job_id not in jobs:
            self._refuse(message_id, job_id, fields, "a result for no job of this run")
            return []
        if job_id in answered:
            logger.info("job %s answered again (done twice): the first answer counts", job_id)
            return []
        feed = jobs[job_id]
        vendor = feed.vendor
        # The worker downloads under the same cap (the job carries DOWNLOAD_MAXSIZE); 0: none.
        cap = self.settings.getint("DOWNLOAD_MAXSIZE") or (1 << 30)
        try:
            _, worker, result, bodies = decode_result(fields, cap)
            fetch, outcome, kept, items = self.check_result(feed, result, bodies)
        except ResultRefused as exc:
            self._refuse(message_id, job_id, fields, str(exc))
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

    def check_result(
        self, feed: FeedConfig, result: dict[str, Any], bodies: dict[str, bytes]
    ) -> tuple[FeedFetch, FeedOutcome, dict[str, Any] | None, list[FeedEntryItem]]:
        """A result's fetch record, run-record line, kept-body note and items, each field typed
        and naming this run, source and spider; every body it cites present. ResultRefused."""
        run_hash = self.run.parent_run_hash
        fields = check_fields(FeedFetch, result.get("fetch"), "the fetch record",
                              ("body", "part_bodies"))  # fmt: skip
        fetch = FeedFetch(**fields)
        expected = {
            "spider": self.name,
            "vendor": feed.vendor,
            "feed_url": feed.url,
            "run_hash": run_hash,
            "kind": "" if feed.kind == DEFAULT_KIND else feed.kind,
            "relay": feed.relay,
            "select": feed.options,
        }
        for name, value in expected.items():
            if getattr(fetch, name) != value:
                raise ResultRefused(f"the fetch record's {name} is not this job's")

        def body(digest: Any) -> bytes:
            if type(digest) is not str or digest not in bodies:
                raise ResultRefused(f"a body the result cites is not in it: {str(digest)[:64]}")
            return bodies[digest]

        if fetch.fetch and "body_sha256" in fetch.fetch:
            fetch.body = body(fetch.fetch["body_sha256"])
        for part in fetch.parts:
            if type(part) is dict and "body_sha256" in part:
                fetch.part_bodies[part["body_sha256"]] = body(part["body_sha256"])
        outcome = FeedOutcome(**check_fields(FeedOutcome, result.get("outcome"), "its run line"))
        if (outcome.vendor, outcome.url) != (feed.vendor, feed.url):
            raise ResultRefused("its run line names another source")
        if outcome.new or outcome.updated or outcome.duplicate:
            raise ResultRefused("its run line counts items a worker cannot have issued")
        kept = result.get("kept")
        if kept is not None and type(kept) is not dict:
            raise ResultRefused("its kept-body note is not an object")
        raw_items = result.get("items")
        if type(raw_items) is not list:
            raise ResultRefused("its items are not a list")
        items = []
        for raw in raw_items:
            item = FeedEntryItem(**check_fields(FeedEntryItem, raw, "an item", NOT_SENT))
            mine = (item.vendor, item.spider, item.source_url, item.parent_run_hash)
            if mine != (feed.vendor, self.name, feed.url, run_hash):
                raise ResultRefused("an item names another source, spider or run")
            if item.fetch:
                item.body = body(item.fetch.get("body_sha256"))
            item.identity = identity(item)
            items.append(item)
        entries = fetch.entries
        if fetch.outcome == NOT_MODIFIED:  # its entries are the confirmed body's: no item
            confirmed = self.state.get(feed.url, {}).get("validated_body") or {}
            if items:
                raise ResultRefused("items of a fetch answered 304")
            if (fetch.body_sha256, entries) != (confirmed.get("sha256", ""),
                                                confirmed.get("entries")):  # fmt: skip
                raise ResultRefused("a 304 confirming another body than the feed state's")
        elif entries is not None and type(entries) is dict:
            digest = entries_digest([item.identity for item in items])
            if entries.get("identities_sha256") != digest or entries.get("count") != len(items):
                raise ResultRefused("its items are not the entries its fetch record states")
        elif items:
            raise ResultRefused("items without a fetch record stating them")
        return fetch, outcome, kept, items

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


def fetches_signed(ledger: Any, offset: int, run_hash: str) -> set[str]:
    """The feed URLs whose fetch record of run `run_hash` the ledger holds past byte `offset`
    (where the run began): a restarted sequencer signs none of them again."""
    found: set[str] = set()
    needle, kind = run_hash.encode(), FETCH_TYPE.encode()
    for _, line in jsonl.iter_lines(ledger, offset):
        if needle not in line or kind not in line:
            continue
        try:
            envelope = orjson.loads(line)
            body = envelope["body"]
            if envelope.get("axiom_type") == FETCH_TYPE and body.get("run") == run_hash:
                found.add(body["feed_url"])
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            continue  # not a line of ours to read here: crovia audit says more
    return found
