"""The foreground scheduler of `crovia schedule`: fires jobs, runs each as a child, stops cleanly.

APScheduler 3.x decides when; this module decides how a run goes:
- one worker thread, so the scheduler's own runs never compete for the ledger lock (a crawl and the
  hourly seal firing together run one after the other);
- `max_instances=1`: a fire while the same job is still running or waiting is skipped and logged;
- `coalesce=True`, no misfire limit: after a stall, a late job runs once, not once per missed fire;
- SIGTERM/SIGINT: no new runs; a running child gets `grace` seconds, then SIGTERM, then SIGKILL
  `kill_after` seconds later (children.stop); then `run()` returns 0.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from subprocess import Popen
from types import TracebackType

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    JobEvent,
)
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from crovia_spider.schedule import children, outcome
from crovia_spider.schedule.config import Job

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# After the last child is gone its worker thread only reads two files and logs one line.
_OUTCOME_WAIT = 10.0

log = logging.getLogger(__name__)


class HarvestScheduler:
    """Runs `jobs` on their triggers, each run a child in `project_root`, until a stop signal."""

    def __init__(
        self,
        jobs: list[Job],
        *,
        project_root: Path,
        ledger_dir: Path,
        grace: float,
        kill_after: float,
        redis: str = "",
    ) -> None:
        self._jobs = jobs
        self._redis = redis  # set: crawls go to a cluster (`crovia crawl --redis`)
        self._root = project_root
        self._ledger_dir = ledger_dir
        self._grace = grace
        self._kill_after = kill_after
        self._crawl_prefix = children.crawl_command()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._children: dict[str, Popen[bytes]] = {}
        self._active = 0
        self._stopping = False

    def run(self) -> int:
        """Schedule the jobs, block until SIGTERM or SIGINT; returns 0 once all has stopped.

        Raises ConfigError, before scheduling anything, if a crawl job names an unknown spider.
        """
        children.check_spiders(self._jobs, self._crawl_prefix, self._root)
        if self._redis:
            for job in self._jobs:
                children.cluster_command(job, self._redis)  # ConfigError now, not at 06:00
        scheduler = self._build()
        with StopSignals() as signals:
            scheduler.start()
            for job in self._jobs:
                next_run = scheduler.get_job(job.name).next_run_time
                log.info(
                    "job=%s scheduled %s: %s, next at %s",
                    job.name,
                    job.when,
                    job.action,
                    _iso(next_run),
                )
            signum = signals.wait()
            self._shutdown(scheduler, signal.Signals(signum).name)
        return 0

    def _build(self) -> BackgroundScheduler:
        if not log.isEnabledFor(logging.DEBUG):
            # Its per-run INFO lines and skip/miss warnings repeat ours (_on_event); keep errors.
            logging.getLogger("apscheduler").setLevel(logging.ERROR)
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=1)},
            job_defaults={"max_instances": 1, "coalesce": True, "misfire_grace_time": None},
            timezone=UTC,
        )
        scheduler.add_listener(
            self._on_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED | EVENT_JOB_ERROR
        )
        for job in self._jobs:
            scheduler.add_job(
                self._run_job, trigger=job.trigger, args=(job,), id=job.name, name=job.name
            )
        return scheduler

    def _run_job(self, job: Job) -> None:
        """One run: start the child unless stopping, wait for it, log its outcome in one line."""
        argv = children.job_command(job, self._crawl_prefix)
        if self._redis and job.spider is not None:
            argv = children.cluster_command(job, self._redis)
        with self._lock:
            if self._stopping:
                log.info("job=%s not started: the scheduler is stopping", job.name)
                return
            before = outcome.mark(self._ledger_dir)
            started = time.monotonic()
            try:
                child = children.start(argv, self._root)
            except OSError as exc:
                log.error("job=%s could not start %s: %s", job.name, argv[0], exc)
                return
            self._children[job.name] = child
            self._active += 1
        try:
            log.info("job=%s started pid=%d: %s", job.name, child.pid, job.action)
            code = child.wait()
            log.info(
                "job=%s finished %s duration=%.1fs",
                job.name,
                outcome.describe_outcome(job.spider, code, self._ledger_dir, before),
                time.monotonic() - started,
            )
        finally:
            with self._lock:
                del self._children[job.name]
                self._active -= 1
                self._idle.notify_all()

    def _shutdown(self, scheduler: BackgroundScheduler, signame: str) -> None:
        with self._lock:
            self._stopping = True
            running = list(self._children.items())
        scheduler.shutdown(wait=False)
        log.info(
            "received %s: no new runs; %d running job(s) get up to %gs to finish "
            "(further signals are ignored)",
            signame,
            len(running),
            self._grace,
        )
        deadline = time.monotonic() + self._grace
        for name, child in running:
            children.stop(child, name, deadline, self._kill_after)
        with self._idle:
            self._idle.wait_for(lambda: self._active == 0, timeout=_OUTCOME_WAIT)
        log.info("scheduler stopped")

    def _on_event(self, event: JobEvent) -> None:
        if event.code == EVENT_JOB_MAX_INSTANCES:
            log.warning(
                "job=%s fire at %s skipped: its previous run is still going or waiting",
                event.job_id,
                ", ".join(_iso(t) for t in event.scheduled_run_times),
            )
        elif event.code == EVENT_JOB_MISSED:
            log.warning("job=%s fire at %s missed", event.job_id, _iso(event.scheduled_run_time))
        else:
            log.error("job=%s failed inside the scheduler: %r", event.job_id, event.exception)


class StopSignals:
    """Turns SIGTERM/SIGINT into an event the main thread waits for, without a race.

    The handlers do nothing themselves; Python's wakeup fd writes each signal's number to a socket
    that `wait()` reads, so a signal arriving before `wait()` is not lost and no lock is taken in a
    handler.
    """

    def __enter__(self) -> StopSignals:
        self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)
        self._old_fd = signal.set_wakeup_fd(self._writer.fileno())
        self._old = {s: signal.signal(s, _ignore) for s in STOP_SIGNALS}
        return self

    def wait(self) -> int:
        """Block until a stop signal arrives; returns its number."""
        return self._reader.recv(1)[0]

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._old_fd)
        self._reader.close()
        self._writer.close()


def _ignore(signum: int, frame: object) -> None:
    """Handler for stop signals: the wakeup fd already carries the signal to StopSignals.wait()."""


def _iso(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else "never"
