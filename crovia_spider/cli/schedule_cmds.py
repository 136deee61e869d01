"""`crovia schedule`: run crawls and seals on a clock, or list when they would fire.

Operations (cron beside it, systemd, the ledger lock, backups): docs/operations.md.
"""

from __future__ import annotations

import argparse
import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from crovia_spider.exceptions import ConfigError
from crovia_spider.options import env_default, optional_path, path_default, project_root

if TYPE_CHECKING:
    from crovia_spider.schedule.config import Job

DEFAULT_GRACE = 120.0
DEFAULT_KILL_AFTER = 30.0

DESCRIPTION = """\
Run the jobs of a schedule file in the foreground until SIGTERM or Ctrl-C. Each run is a child
process (`scrapy crawl NAME ...` or `crovia seal`) in the project root with this environment, so
every CROVIA_* setting applies; one run at a time. On SIGTERM/SIGINT no new run starts; a running
one gets --grace seconds, then SIGTERM, then SIGKILL after --kill-after more; exit 0."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia schedule`."""
    parser = subparsers.add_parser(
        "schedule",
        help="run crawls and seals on a schedule, in the foreground",
        description=DESCRIPTION,
        epilog="Operations guide (cron, systemd, lock, backups): docs/operations.md",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="schedule file (default: $CROVIA_SCHEDULE_FILE, else config/schedule.toml)",
    )
    parser.add_argument("--list", action="store_true", help="show jobs and next fire times only")
    parser.add_argument("--json", action="store_true", help="with --list: one JSON object per job")
    parser.add_argument(
        "--grace",
        type=_seconds,
        metavar="SECONDS",
        default=DEFAULT_GRACE,
        help=f"seconds a running job may go on after a stop signal (default {DEFAULT_GRACE:g})",
    )
    parser.add_argument(
        "--kill-after",
        type=_seconds,
        metavar="SECONDS",
        default=DEFAULT_KILL_AFTER,
        help=f"then seconds from SIGTERM to SIGKILL (default {DEFAULT_KILL_AFTER:g})",
    )
    parser.add_argument(
        "--metrics-port",
        type=_port,
        metavar="PORT",
        default=None,
        help="serve Prometheus metrics at http://HOST:PORT/metrics (0: any free port, logged)",
    )
    parser.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="address the metrics server listens on (default 127.0.0.1: this machine only)",
    )
    parser.add_argument(
        "--redis", nargs="?", const=env_default("CROVIA_REDIS_URL"), default=None, metavar="URL",
        help="run its crawls on a cluster (crovia crawl --redis: docs/cluster.md); URL defaults"
        " to $CROVIA_REDIS_URL",
    )  # fmt: skip
    parser.set_defaults(handler=run_schedule)


def run_schedule(args: argparse.Namespace) -> int:
    """List the jobs, or run them until a stop signal. Raises ConfigError (exit 2) if the schedule,
    or a feed list or rules file its crawls read, is invalid: before anything is listed or run."""
    import logging

    from crovia_spider.schedule.config import enabled_jobs, load_schedule, skip_reason

    root = project_root()
    config = args.config if args.config is not None else path_default("CROVIA_SCHEDULE_FILE")
    configured = load_schedule(config)
    check_crawl_config(configured)
    publish_dir = env_default("CROVIA_PUBLISH_DIR")
    skipped = {job.name: skip_reason(job, publish_dir) for job in configured}
    if args.list:
        _print_list(configured, skipped, datetime.now(UTC), as_json=args.json)
        return 0
    jobs = enabled_jobs(configured, publish_dir)
    for name, why in skipped.items():
        if why:
            logging.getLogger("crovia_spider.schedule.runner").info("job=%s skipped: %s", name, why)
    from crovia_spider.schedule.runner import HarvestScheduler

    if args.metrics_port is not None:
        _serve_metrics(args.metrics_host, args.metrics_port)

    scheduler = HarvestScheduler(
        jobs,
        project_root=root,
        ledger_dir=path_default("CROVIA_LEDGER_DIR"),
        grace=args.grace,
        kill_after=args.kill_after,
        redis=_redis(args.redis),
    )
    return scheduler.run()


def _redis(url: str | None) -> str:
    """The cluster's URL for `--redis` (checked now, so a typo fails at start), or ""."""
    if url is None:
        return ""
    if not url:
        raise ConfigError("--redis needs a URL, or CROVIA_REDIS_URL set")
    from crovia_spider.cluster.connection import connect

    connect(url)
    return url


def check_crawl_config(jobs: list[Job]) -> None:
    """Check each crawl job's own `-s` settings, and load the feed list and the classification
    rules it will read (this environment's, or a job's own `-s CROVIA_FEEDS_FILE=...`), as the
    crawl would. Raises ConfigError naming the job, the setting or the file and the entry: a
    mistake fails at start, not at every run."""
    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.config.ruleset import load_ruleset
    from crovia_spider.config.settings_check import check_pairs
    from crovia_spider.exceptions import ConfigError
    from crovia_spider.options import resolve_path

    loaders = (("CROVIA_FEEDS_FILE", load_feeds), ("CROVIA_CLASSIFY_FILE", load_ruleset))
    checked: set[tuple[str, Path]] = set()
    for job in jobs:
        if job.spider is None:
            continue
        pairs = zip(job.args, job.args[1:], strict=False)
        given = [pair for flag, pair in pairs if flag == "-s" and "=" in pair]
        try:
            check_pairs(given)
        except ConfigError as exc:
            raise ConfigError(f"job {job.name!r}: {exc}") from None
        settings = dict(pair.split("=", 1) for pair in given)
        for name, load in loaders:
            own = settings.get(name)
            path = resolve_path(own) if own else path_default(name)
            if (name, path) in checked:
                continue
            checked.add((name, path))
            try:
                load(path)
            except ConfigError as exc:
                raise ConfigError(f"job {job.name!r}: {exc}" if own else str(exc)) from None


def _serve_metrics(host: str, port: int) -> None:
    """Start the metrics server (a daemon thread) and log its address; exit 2 if it cannot bind."""
    import logging

    from crovia_spider.runs.metrics import serve

    publish = optional_path("CROVIA_PUBLISH_DIR")
    try:
        server, _thread = serve(path_default("CROVIA_LEDGER_DIR"), publish, host, port)
    except OSError as exc:
        raise OSError(f"cannot serve metrics on {host}:{port}: {exc.strerror or exc}") from None
    bound_host, bound_port = server.server_address[:2]
    logging.getLogger("crovia_spider.schedule.runner").info(
        "metrics at http://%s:%d/metrics", _url_host(str(bound_host)), bound_port
    )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 0 to 65535, got {text}")
    return value


def _print_list(
    jobs: list[Job], skipped: dict[str, str | None], now: datetime, *, as_json: bool
) -> None:
    """Every configured job; one that will not run says `skipped` and why, never vanishes."""
    rows = [_list_row(job, skipped.get(job.name), now) for job in jobs]
    if as_json:
        for row in rows:
            print(json.dumps(row))
        return
    print(f"{'JOB':<16} {'NEXT (UTC)':<21} {'WHEN':<32} RUNS")
    for row in rows:
        when = row["when"] + (f" ~{row['jitter']}s" if row["jitter"] else "")
        upcoming = "skipped" if row["skipped"] else row["next"] or "never"
        runs = row["runs"] + (f" (skipped: {row['skipped']})" if row["skipped"] else "")
        print(f"{row['name']:<16} {upcoming:<21} {when:<32} {runs}")


def _list_row(job: Job, skipped: str | None, now: datetime) -> dict[str, object]:
    """The next fire time before jitter, so the listing is the same from one call to the next."""
    exact = copy.copy(job.trigger)
    exact.jitter = None
    upcoming = None if skipped else exact.get_next_fire_time(None, now)
    return {
        "name": job.name,
        "next": upcoming.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if upcoming else None,
        "when": job.when,
        "jitter": job.jitter or 0,
        "runs": job.action,
        "skipped": skipped,
    }


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 seconds, got {text}")
    return value
