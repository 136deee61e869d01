"""`crovia worker`: takes fetch jobs from Redis and runs today's crawl on them, holding no key.

The loop: announce itself (a hash that expires when it goes silent: `crovia workers` lists it),
take over the jobs another worker left pending longer than the job timeout (XAUTOCLAIM: that
worker died or hangs; each is counted as a redelivery), else read new jobs with the workers'
consumer group, and run one `scrapy crawl SPIDER` child for the jobs of one run and spider
(CROVIA_REDIS_ROLE=worker: crovia_spider/spiders/remote.py). While the child works, the worker
renews its heartbeat and tells Redis its jobs are alive (XCLAIM of its own jobs resets their idle
time), so a slow but living job is never taken over. The child publishes each job's result and
acknowledges the job in one transaction; a job the child could not finish stays pending and is
taken over later, by this worker or another.

A worker reads no config file, opens no ledger and holds no signing key: what it fetches and
how it reads it come with the job (docs/cluster.md). It runs only jobs the sequencer signed with
the job key whose public half it pins (`--sequencer-key`): an unsigned, foreign or expired job is
refused, said once, and never acknowledged (it did not do it). A job's settings are held to the
worker's own ceilings, and its crawls reach internal addresses only on the hosts its own command
line allows (`--allow-private`), never because a job names one.

It rides out a Redis restart or failover (crovia_spider/cluster/connection.py): its commands and
its child's are retried with backoff while Redis is gone, one line logged when it goes and one
when it is back; a job whose result could not be sent meanwhile stays pending and is taken over.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from crovia_spider.cluster import keys
from crovia_spider.cluster.connection import connect, ensure_group, text
from crovia_spider.cluster.jobs import (
    JOB_SETTINGS,
    JobRefused,
    clamp_settings,
    parse_allowed,
    pinned_key,
    verified_job,
)
from crovia_spider.deathsig import preexec
from crovia_spider.options import project_root
from crovia_spider.runs.runlog import utc_now_micro
from crovia_spider.schedule.children import crawl_command

log = logging.getLogger(__name__)


@dataclass
class WorkerOptions:
    url: str
    name: str = ""
    batch: int = 20  # jobs one child crawls at most
    job_timeout: float = 60.0  # CROVIA_JOB_TIMEOUT
    heartbeat: float = 5.0
    settings: list[str] = field(default_factory=list)  # extra `-s NAME=VALUE` for children
    idle_exit: float = 0.0  # >0: exit after this many seconds without a job (tests, batch use)
    sequencer_key: str = ""  # the sequencer's job public key, 64 hex (pinned)
    allow_private: list[str] = field(default_factory=list)  # HOST[:PORT] internal hosts allowed


def own_ceilings(pairs: list[str]) -> dict[str, str]:
    """The worker's own value of each setting a job may carry: the project's settings with the
    environment (settings.py reads it) and the worker's `-s NAME=VALUE`, which win over a job's."""
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("crovia_spider.settings", priority="project")
    for pair in pairs:
        name, _, value = pair.partition("=")
        settings.set(name, value, priority="cmdline")
    return {name: str(settings.get(name)) for name in JOB_SETTINGS}


def worker_name() -> str:
    """host-pid: unique among live workers, and says where to look."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
    def __init__(self, options: WorkerOptions) -> None:
        self.options = options
        self.name = options.name or worker_name()
        self.stopping = False
        self.redis = connect(options.url, ride_out=True, stop=lambda: self.stopping)
        self.started = utc_now_micro()
        self.current: list[str] = []
        self.pin = pinned_key(options.sequencer_key)  # ValueError: refused before any job
        parse_allowed(options.allow_private)
        self.ceilings = own_ceilings(options.settings)
        self.refused: set[str] = set()  # jobs refused once: said once, never acknowledged

    def run(self) -> int:
        import redis

        ensure_group(self.redis, keys.JOBS, keys.JOBS_GROUP)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)
        log.warning("worker %s takes jobs from %s", self.name, keys.JOBS)
        idle_since = time.monotonic()
        try:
            while not self.stopping:
                self.beat()
                messages = self.take_over() or self.read_new()
                if not messages:
                    if self.options.idle_exit and (
                        time.monotonic() - idle_since > self.options.idle_exit
                    ):
                        break
                    continue
                self.work(messages)
                idle_since = time.monotonic()
        except redis.RedisError as exc:
            if not self.stopping:
                raise
            log.warning("worker %s stops with Redis unreachable (%s): the jobs it held stay"
                        " pending, to be taken over", self.name, exc)  # fmt: skip
        finally:
            try:
                self.redis.delete(keys.worker_key(self.name))
                self.redis.xgroup_delconsumer(keys.JOBS, keys.JOBS_GROUP, self.name)
            except redis.RedisError:  # only when stopping: retried for ever otherwise
                log.warning("worker %s: its heartbeat expires by itself", self.name)
        return 0

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopping = True

    def beat(self) -> None:
        """Say this worker lives, and what it works on."""
        key = keys.worker_key(self.name)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(
            key,
            mapping={
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "started": self.started,
                "heartbeat": utc_now_micro(),
                "jobs": ",".join(self.current),
            },
        )
        pipe.expire(key, max(3, int(self.options.heartbeat * 3)))
        pipe.execute()

    def take_over(self) -> list[tuple[str, dict[bytes, bytes]]]:
        """Jobs pending with a silent worker past the job timeout, now this worker's (those it
        refused before left aside)."""
        idle_ms = int(self.options.job_timeout * 1000)
        answer = self.redis.xautoclaim(
            keys.JOBS, keys.JOBS_GROUP, self.name, idle_ms, "0-0", count=self.options.batch
        )
        messages = [(text(i), fields) for i, fields in answer[1] if fields]
        messages = [(i, fields) for i, fields in messages if i not in self.refused]
        if messages:
            self.redis.hincrby(keys.STATS, keys.REDELIVERED, len(messages))
            log.warning("worker %s took over %d job(s) left pending", self.name, len(messages))
        return messages

    def read_new(self) -> list[tuple[str, dict[bytes, bytes]]]:
        block = int(min(2.0, self.options.heartbeat) * 1000)
        answer = self.redis.xreadgroup(
            keys.JOBS_GROUP, self.name, {keys.JOBS: ">"}, count=self.options.batch, block=block
        )
        return [(text(i), fields) for _, messages in answer or () for i, fields in messages]

    def work(self, messages: list[tuple[str, dict[bytes, bytes]]]) -> None:
        """One child crawl for the jobs of each run and spider, one after the other; a job not
        signed by the pinned sequencer key is refused, said once, and left unacknowledged."""
        groups: dict[tuple[str, str], list[str]] = {}
        settings: dict[tuple[str, str], dict[str, str]] = {}
        for job_id, fields in messages:
            try:
                job = verified_job(fields, self.pin)
            except JobRefused as exc:
                if job_id not in self.refused:
                    self.refused.add(job_id)
                    log.error("worker %s refused job %s: %s", self.name, job_id[:40], exc)
                continue
            groups.setdefault((job.request, job.spider), []).append(job_id)
            settings[(job.request, job.spider)] = clamp_settings(job.settings, self.ceilings)
        for (request, spider), ids in groups.items():
            if self.stopping:
                return
            self.crawl(spider, ids, settings[(request, spider)])

    def crawl(self, spider: str, ids: list[str], job_settings: dict[str, str]) -> int:
        argv = [*crawl_command(), "crawl", spider]
        pairs = [
            "CROVIA_REDIS_ROLE=worker",
            f"CROVIA_REDIS_JOBS={','.join(ids)}",
            f"CROVIA_WORKER_NAME={self.name}",
            f"CROVIA_SEQUENCER_PUBKEY={bytes(self.pin).hex()}",
            f"CROVIA_WORKER_ALLOW_PRIVATE={','.join(self.options.allow_private)}",
            *(f"{name}={value}" for name, value in job_settings.items()),
            *self.options.settings,
        ]
        for pair in pairs:
            argv += ["-s", pair]
        env = {**os.environ, "CROVIA_REDIS_URL": self.options.url}  # never on a command line
        self.current = ids
        child = subprocess.Popen(
            argv, cwd=project_root(), env=env, start_new_session=True, preexec_fn=preexec()
        )
        asked_to_stop = False
        try:
            while True:
                try:
                    return child.wait(timeout=self.options.heartbeat)
                except subprocess.TimeoutExpired:
                    pass
                if self.stopping and not asked_to_stop:
                    # Once: a second SIGTERM would make Scrapy stop at once, not gracefully.
                    child.send_signal(signal.SIGTERM)
                    asked_to_stop = True
                self.beat()
                # Still working on them: their idle time starts again, nobody takes them over.
                self.redis.xclaim(keys.JOBS, keys.JOBS_GROUP, self.name, 0, ids, justid=True)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            self.current = []
