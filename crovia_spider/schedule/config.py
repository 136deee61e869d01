"""The jobs of `crovia schedule`, read from config/schedule.toml and validated before anything runs.

A job is a crawl (`spider = "NAME"`, optional `args`), a seal (`seal = true`), a stamping run
(`stamp = true`, optional `args = ["--upgrade"]`: `crovia stamp`, docs/stamps.md), a publish
(`publish = true`: `crovia publish` into $CROVIA_PUBLISH_DIR, left out when that is unset) or
arXiv's signed completeness statement (`coverage = true`: `crovia arxiv coverage --record` over
the last COVERAGE_DAYS days, docs/spider.md "arXiv, complete"), fired by `cron` (5-field crontab,
UTC unless `timezone`) or `every` (a duration such as "15m"), with optional `jitter` seconds.
Any mistake raises ConfigError naming the file, the job and the fault.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apscheduler.triggers.base import BaseTrigger

from crovia_spider.config.tables import check_top_level, read_toml
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.triggers import (
    crontab_trigger,
    interval_trigger,
    load_timezone,
    parse_duration,
)

MAX_JITTER = 86400
JOB_KEYS = frozenset(
    {
        "name",
        "spider",
        "args",
        "seal",
        "stamp",
        "publish",
        "coverage",
        "cron",
        "every",
        "timezone",
        "jitter",
    }
)
STAMP_ARGS = ((), ("--upgrade",))
# A coverage job records the days of this window, oldest first (`--from` today minus this, UTC):
# a day's statement changes only when a crawl reads the day again, which the daily arXiv job does
# for the days its harvest overlaps; reading the whole ledger at every run would cost more each
# day (the window reads only the bodies that can hold its days). A scheduler stopped longer than
# this leaves the days before the window to `crovia arxiv coverage --record --from D` by hand.
COVERAGE_DAYS = 14
KINDS = "a job is one of 'spider', 'seal', 'stamp', 'publish' or 'coverage'"
# Names become APScheduler job ids and log fields; spider names are Scrapy's own rule.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_SPIDER = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Job:
    """One scheduled job: what it runs (a crawl of `spider` with `args`, or a seal) and when."""

    name: str
    trigger: BaseTrigger
    when: str
    spider: str | None = None
    args: tuple[str, ...] = ()
    jitter: int | None = None
    stamp: bool = False
    publish: bool = False
    coverage: bool = False

    @property
    def is_seal(self) -> bool:
        return self.spider is None and not (self.stamp or self.publish or self.coverage)

    @property
    def action(self) -> str:
        """What the job runs, as an operator would type it."""
        if self.publish:
            return "crovia publish"
        if self.coverage:
            return f"crovia arxiv coverage --record --from <{COVERAGE_DAYS} days ago>"
        if self.is_seal:
            return "crovia seal"
        if self.stamp:
            return " ".join(("crovia stamp", *self.args))
        return " ".join(("scrapy crawl", self.spider, *self.args))


def enabled_jobs(jobs: list[Job], publish_dir: str) -> list[Job]:
    """The jobs to schedule: publish jobs only when a publish directory is configured."""
    return [job for job in jobs if skip_reason(job, publish_dir) is None]


def skip_reason(job: Job, publish_dir: str) -> str | None:
    """Why a configured job is not scheduled (listed and logged as skipped), or None."""
    if job.publish and not publish_dir:
        return "CROVIA_PUBLISH_DIR is unset"
    return None


def load_schedule(path: Path) -> list[Job]:
    """Read and validate a schedule file. Raises ConfigError (file, job, reason) on any mistake."""
    try:
        data = read_toml(path)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such schedule file") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the schedule: {exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    check_top_level(path, data, {"jobs": "[[jobs]]"})
    entries = data.get("jobs")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[jobs]] entries")
    return _load_jobs(path, entries)


def _load_jobs(path: Path, entries: list[Any]) -> list[Job]:
    jobs: list[Job] = []
    for number, entry in enumerate(entries, start=1):
        label = entry.get("name", f"#{number}") if isinstance(entry, dict) else f"#{number}"
        try:
            job = parse_job(entry)
        except ValueError as exc:
            raise ConfigError(f"{path}: job {label!r}: {exc}") from exc
        if any(j.name == job.name for j in jobs):
            raise ConfigError(f"{path}: job {job.name!r}: duplicate name (names must be unique)")
        jobs.append(job)
    return jobs


def parse_job(entry: Any) -> Job:
    """One [[jobs]] table -> Job. Raises ValueError with the reason (the caller adds the file)."""
    if not isinstance(entry, dict):
        raise ValueError("each [[jobs]] entry must be a table")
    unknown = set(entry) - JOB_KEYS
    if unknown:
        raise ValueError(f"unknown key(s) {sorted(unknown)}; allowed: {sorted(JOB_KEYS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError("'name' must be a string of letters, digits, '_', '.', '-'")
    coverage = _parse_coverage(entry)
    stamp = _parse_stamp(entry)
    publish = _parse_publish(entry)
    if stamp and publish:
        raise ValueError(KINDS)
    if stamp:
        spider, args = None, tuple(entry.get("args", ()))
    else:
        spider, args = (None, ()) if publish or coverage else _parse_action(entry)
    jitter = _parse_jitter(entry.get("jitter"))
    trigger, when = _parse_trigger(entry, jitter)
    return Job(
        name=name,
        trigger=trigger,
        when=when,
        spider=spider,
        args=args,
        jitter=jitter,
        stamp=stamp,
        publish=publish,
        coverage=coverage,
    )


def _parse_stamp(entry: dict[str, Any]) -> bool:
    """True for a stamping job (`stamp = true`, args none or ["--upgrade"])."""
    stamp = entry.get("stamp")
    if stamp is None:
        return False
    if stamp is not True or entry.get("spider") is not None or entry.get("seal") is not None:
        raise ValueError("'stamp' must be true, without 'spider' or 'seal'")
    if tuple(entry.get("args", ())) not in STAMP_ARGS:
        raise ValueError("a stamp job's 'args' is [] or [\"--upgrade\"]")
    return True


def _parse_coverage(entry: dict[str, Any]) -> bool:
    """True for a coverage job (`coverage = true` and nothing of another kind, no `args`)."""
    if "coverage" not in entry:
        return False
    if entry["coverage"] is not True:
        raise ValueError("'coverage' must be true (leave it out for a crawl or a seal)")
    if {"spider", "seal", "stamp", "publish"} & entry.keys():
        raise ValueError(KINDS)
    if "args" in entry:
        raise ValueError("a coverage job has no 'args' (it records the last days, every category)")
    return True


def _parse_publish(entry: dict[str, Any]) -> bool:
    """True for a publish job (`publish = true` and nothing of a crawl or a seal)."""
    if "publish" not in entry:
        return False
    if entry["publish"] is not True:
        raise ValueError("'publish' must be true (leave it out for a crawl or a seal)")
    if {"spider", "seal", "args"} & entry.keys():
        raise ValueError("a publish job has no 'spider', 'seal' or 'args'")
    return True


def _parse_action(entry: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """(spider, args) for a crawl, (None, ()) for a seal."""
    spider, seal, args = entry.get("spider"), entry.get("seal"), entry.get("args")
    if (spider is None) == (seal is None):
        raise ValueError(
            "give exactly one of 'spider = \"NAME\"' (a crawl), 'seal = true', 'stamp = true',"
            " 'publish = true' or 'coverage = true'"
        )
    if seal is not None:
        if seal is not True:
            raise ValueError("'seal' must be true (leave it out for a crawl)")
        if args is not None:
            raise ValueError("'args' belongs to crawls, not to a seal")
        return None, ()
    if not isinstance(spider, str) or not _SPIDER.fullmatch(spider):
        raise ValueError(f"'spider' must be a spider name, got {spider!r}")
    if args is None:
        return spider, ()
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError('\'args\' must be a list of strings, e.g. ["-a", "vendor=openai"]')
    return spider, tuple(args)


def _parse_jitter(jitter: Any) -> int | None:
    if jitter is None:
        return None
    # A day at most: APScheduler adds it to each fire time, and a huge one overflows there.
    if isinstance(jitter, bool) or not isinstance(jitter, int) or not 0 <= jitter <= MAX_JITTER:
        raise ValueError(
            f"'jitter' must be a whole number of seconds from 0 to {MAX_JITTER} (a day),"
            f" got {jitter!r}"
        )
    return jitter or None


def _parse_trigger(entry: dict[str, Any], jitter: int | None) -> tuple[BaseTrigger, str]:
    """The APScheduler trigger and a short description such as "cron '0 6 * * 1-5' UTC"."""
    cron, every, zone = entry.get("cron"), entry.get("every"), entry.get("timezone")
    if (cron is None) == (every is None):
        raise ValueError(
            "give exactly one trigger: 'cron = \"M H DoM Mon DoW\"' or 'every = \"15m\"'"
        )
    if every is not None:
        if zone is not None:
            raise ValueError("'timezone' applies to 'cron' only; an 'every' interval has none")
        if not isinstance(every, str):
            raise ValueError(f"'every' must be a string such as \"15m\", got {every!r}")
        return interval_trigger(parse_duration(every), jitter), f"every {every}"
    if not isinstance(cron, str):
        raise ValueError(f"'cron' must be a string such as \"0 6 * * 1-5\", got {cron!r}")
    if zone is not None and not isinstance(zone, str):
        raise ValueError(f"'timezone' must be a string such as \"Europe/Rome\", got {zone!r}")
    zone = zone or "UTC"
    return crontab_trigger(cron, load_timezone(zone), jitter), f"cron '{cron}' {zone}"
