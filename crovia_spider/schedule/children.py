"""The child process behind each run: what it executes, how it starts, how it is stopped.

Every run is a fresh process because a Twisted reactor cannot be restarted inside one. Children
inherit the environment (so every CROVIA_* setting applies) and run in the project root, in a
session of their own: a Ctrl-C at the terminal reaches the scheduler only, which then gives the
child its grace period instead of the terminal interrupting it at once.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from crovia_spider.exceptions import ConfigError
from crovia_spider.options import env_default
from crovia_spider.schedule.config import COVERAGE_DAYS, Job
from crovia_spider.suggest import did_you_mean

# A different crawl entry point (another venv, a wrapper, a test's stand-in); see options.py.
CRAWL_COMMAND_SETTING = "CROVIA_SCRAPY_COMMAND"

log = logging.getLogger(__name__)


def crawl_command() -> list[str]:
    """The command a crawl starts with, before `crawl NAME ...`.

    $CROVIA_SCRAPY_COMMAND (split like a shell would) if set, else this interpreter's Scrapy, so a
    scheduler started from the project's virtualenv crawls with the same one even without it on
    PATH.
    """
    override = env_default(CRAWL_COMMAND_SETTING).strip()
    return shlex.split(override) if override else [sys.executable, "-m", "scrapy"]


def job_command(job: Job, crawl_prefix: list[str], today: date | None = None) -> list[str]:
    """argv of the child for `job`: `<crawl_prefix> crawl SPIDER ARGS...`, `crovia seal`,
    `crovia stamp [--upgrade]`, `crovia publish` or `crovia arxiv coverage --record --from D`
    (D: COVERAGE_DAYS before `today`, the UTC date of the run unless given).
    """
    if job.publish:
        return [sys.executable, "-m", "crovia_spider", "publish"]
    if job.coverage:
        first = (today or datetime.now(UTC).date()) - timedelta(days=COVERAGE_DAYS)
        return [sys.executable, "-m", "crovia_spider", "arxiv", "coverage", "--record",
                "--from", first.isoformat()]  # fmt: skip
    if job.is_seal:
        return [sys.executable, "-m", "crovia_spider", "seal"]
    if job.stamp:
        return [sys.executable, "-m", "crovia_spider", "stamp", *job.args]
    return [*crawl_prefix, "crawl", job.spider, *job.args]


def cluster_command(job: Job, redis_url: str) -> list[str]:
    """argv of a crawl job run on a cluster: `crovia crawl --redis --spider SPIDER [VENDOR...]
    [--skip PATTERN]`, the URL passed in the environment (never on a command line). Its `args`
    may only choose feeds (`-a vendor=...`, `-a skip=...`): a crawl on a cluster uses the
    sequencer's and the workers' settings, so any other is a ConfigError."""
    argv = [sys.executable, "-m", "crovia_spider", "crawl", "--redis", "--spider", str(job.spider)]
    words = list(job.args)
    while words:
        flag = words.pop(0)
        value = words.pop(0) if words else ""
        name, _, patterns = value.partition("=")
        if flag != "-a" or name not in ("vendor", "skip"):
            raise ConfigError(
                f"job {job.name!r}: {flag} {value} does not travel to a cluster; only"
                " -a vendor=... and -a skip=... do (crovia schedule --redis)"
            )
        for pattern in filter(None, patterns.split(",")):
            argv += ["--skip", pattern] if name == "skip" else [pattern]
    os.environ.setdefault("CROVIA_REDIS_URL", redis_url)  # the children inherit it
    return argv


def check_spiders(jobs: list[Job], crawl_prefix: list[str], cwd: Path) -> None:
    """Check, before scheduling anything, that every crawl job names a spider `scrapy list` shows.

    Raises ConfigError naming the job and the spiders there are, or when `scrapy list` itself fails
    (a broken feed list, a missing Scrapy), so a typo fails at start and not at 06:00 tomorrow.
    """
    wanted = {job.spider: job.name for job in jobs if job.spider is not None}
    if not wanted:
        return
    try:
        listing = subprocess.run(
            [*crawl_prefix, "list"], cwd=cwd, capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired as exc:
        raise ConfigError(f"`scrapy list` did not answer within {exc.timeout:g}s") from exc
    if listing.returncode != 0:
        detail = listing.stderr.strip().splitlines()[-1:] or ["no message"]
        raise ConfigError(f"`scrapy list` failed (exit {listing.returncode}): {detail[0]}")
    known = set(listing.stdout.split())
    for spider, name in wanted.items():
        if spider not in known:
            raise ConfigError(
                f"job {name!r}: no spider {spider!r} in this project (scrapy list: "
                f"{', '.join(sorted(known)) or 'none'}){did_you_mean(spider, sorted(known))}"
            )


def start(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """Start a child in `cwd`, inheriting environment and output. Raises OSError if it cannot."""
    return subprocess.Popen(argv, cwd=cwd, start_new_session=True)


def stop(child: subprocess.Popen[bytes], name: str, deadline: float, kill_after: float) -> None:
    """Let `child` run until `deadline` (time.monotonic()), then SIGTERM, then SIGKILL after
    `kill_after` s.

    Returns once the child has exited. Scrapy treats its first SIGTERM as "finish in-flight work,
    close the spider" (the crawl still seals and writes its run record); SIGKILL is the last resort
    and leaves the ledger to its crash recovery.
    """
    if _exited_by(child, deadline - time.monotonic()):
        return
    log.warning(
        "job=%s pid=%d still running after the grace period: sending SIGTERM", name, child.pid
    )
    child.terminate()
    if _exited_by(child, kill_after):
        return
    log.warning(
        "job=%s pid=%d ignored SIGTERM for %gs: sending SIGKILL", name, child.pid, kill_after
    )
    child.kill()
    child.wait()


def _exited_by(child: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        child.wait(timeout=max(seconds, 0))
    except subprocess.TimeoutExpired:
        return False
    return True
