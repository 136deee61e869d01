"""`crovia crawl [VENDOR|PATTERN ...] [--skip PATTERN ...]`: the crawl, from the one CLI.

It runs `scrapy crawl SPIDER -a vendor=... -a skip=...` in the project root (found from the working
directory, else the checkout crovia runs from; crovia_spider/options.py), so it is the same crawl
with the same exit status, from any folder. Which spiders: `--spider NAME`, else those whose feeds
the VENDOR ids and patterns name (every spider with an enabled feed when none is given), one after
the other; the exit status is the worst of theirs, and a crawl that fails or is interrupted stops
the rest. When the feed list cannot be read, or a vendor id names no feed, `vendor_press` is run
anyway, so Scrapy's own refusal (with its "did you mean") is what the user sees.

The child runs in a session of its own and Ctrl-C / SIGTERM are passed to it once, so a Ctrl-C at
the terminal is one graceful stop of the crawl (a second one forces it, as in Scrapy). The child
dies with `crovia crawl`: killed however it ends (SIGKILL, the OOM killer), the kernel kills the
crawl too (crovia_spider/deathsig.py), and the crawl's parser worker with it, so no crawl is left
behind holding the ledger's lock.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crovia_spider.exceptions import ConfigError
from crovia_spider.options import env_default, path_default, project_root

# What a --redis value starts with; anything else is a vendor argparse gave to --redis.
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia crawl`."""
    parser = subparsers.add_parser(
        "crawl",
        help="crawl the configured feeds (all, or those named) into the ledger",
        description="Crawl the feeds of config/feeds.toml into the ledger: `scrapy crawl"
        " vendor_press` run from the project root, whatever the working directory. VENDOR is a"
        " vendor id (crawled even when disabled) or a shell pattern such as 'arxiv_*' (enabled"
        " feeds only). Exit status as `scrapy crawl`: 0 the ledger holds what was seen (feeds may"
        " have failed: see the summary), 1 the crawl was refused or the ledger refused a write,"
        " 2 a usage error.",
    )
    parser.add_argument("vendors", nargs="*", metavar="VENDOR", help="vendor ids or patterns")
    parser.add_argument(
        "--skip", action="append", default=[], metavar="PATTERN",
        help="leave out the feeds whose vendor matches (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--spider", metavar="NAME",
        help="crawl with this spider only (default: the spiders of the chosen feeds)",
    )  # fmt: skip
    parser.add_argument(
        "--verbose", dest="crawl_verbose", action="store_true",
        help="Scrapy's full log (banner, settings, middlewares, stats): -s LOG_LEVEL=INFO",
    )  # fmt: skip
    settings_option(parser, "this crawl")
    parser.add_argument(
        "--redis", metavar="URL", nargs="?", const=env_default("CROVIA_REDIS_URL"),
        help="crawl on a cluster (docs/cluster.md): ask its sequencer for the run and wait for"
        " its summary; the workers fetch, the sequencer signs",
    )  # fmt: skip
    parser.add_argument(
        "--wait", type=float, default=60.0, metavar="SECONDS",
        help="with --redis: how long a sequencer has to take the request (default 60); past it"
        " the request is withdrawn, never run later",
    )  # fmt: skip
    parser.set_defaults(handler=cmd_crawl)


def settings_option(parser: argparse.ArgumentParser, whose: str) -> None:
    """`-s NAME=VALUE` (repeatable, in `args.settings`): a setting of `whose` crawls."""
    parser.add_argument(
        "-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
        help=f"a Scrapy or CROVIA_* setting for {whose}, as `scrapy crawl -s` (repeatable)",
    )  # fmt: skip


def cmd_crawl(args: argparse.Namespace) -> int:
    from crovia_spider.schedule.children import crawl_command

    if args.redis is not None:
        if args.redis and not args.redis.startswith(REDIS_SCHEMES):
            # `crawl --redis VENDOR`: argparse gave the first vendor to --redis
            args.vendors.insert(0, args.redis)
            args.redis = env_default("CROVIA_REDIS_URL")
        if not args.redis:
            raise ConfigError("--redis needs a URL, or CROVIA_REDIS_URL set")
        return crawl_on_cluster(args)
    prefix = crawl_command()
    settings = [arg for pair in args.settings for arg in ("-s", pair)]
    if args.crawl_verbose or args.verbose:
        settings = ["-s", "LOG_LEVEL=INFO", *settings]  # a later -s LOG_LEVEL=... still wins
    code = 0
    for spider, vendors in plan(args.vendors, args.skip, args.spider, _feeds_file(args.settings)):
        argv = [*prefix, "crawl", spider, *settings]
        if vendors:
            argv += ["-a", "vendor=" + ",".join(vendors)]
        if args.skip:
            argv += ["-a", "skip=" + ",".join(args.skip)]
        status, interrupted = _run(argv, project_root())
        code = max(code, status)
        if status or interrupted:
            break
    return code


def crawl_on_cluster(args: argparse.Namespace) -> int:
    """`crawl --redis URL`: one crawl request per spider of the plan, each waited for; the
    sequencer's exit status (the worst), and one line per run from its run record. A request no
    sequencer takes within `--wait` seconds is withdrawn (exit 2); Ctrl-C or SIGTERM withdraws
    it, or stops its run if a sequencer runs it already (exit 130 or 143)."""
    from crovia_spider.cluster import keys
    from crovia_spider.cluster.connection import ClusterError, connect, shown
    from crovia_spider.cluster.sequencer import cancel_request, request_crawl

    if args.settings:
        raise ConfigError(
            "crawl --redis takes no -s: the sequencer's and the workers' settings apply"
        )
    client = connect(args.redis, ride_out=True)  # waits out a Redis restart, as the daemons
    wait = max(1.0, args.wait)
    if not client.exists(keys.SEQUENCER):
        print(f"no sequencer runs against {shown(args.redis)}; waiting up to {wait:g} s for one"
              " (crovia sequencer)", file=sys.stderr, flush=True)  # fmt: skip
    code = 0
    for spider, vendors in plan(args.vendors, args.skip, args.spider, _feeds_file([])):
        request = request_crawl(client, spider, ",".join(vendors), ",".join(args.skip),
                                deadline=time.time() + wait)  # fmt: skip
        print(f"crawl {spider}: request {request} sent; waiting for the sequencer", flush=True)
        try:
            with _stopped_by_signals():
                answer = _answer(client, request, wait)
        except KeyboardInterrupt as stop:
            dropped = cancel_request(client, request)
            what = "withdrawn, never to run" if dropped else "cancelled: its run stops"
            print(f"crawl {spider}: stopped; request {request} {what}", file=sys.stderr)
            return 128 + (stop.args[0] if stop.args else signal.SIGINT)
        if answer is None:
            cancel_request(client, request)
            raise ClusterError(
                f"no sequencer took request {request} within {wait:g} s (--wait): it is"
                " withdrawn, never to run. Is `crovia sequencer` running? (crovia workers)"
            )
        status = int(answer.get("exit", 1))
        record = answer.get("run") or {}
        totals = record.get("totals") or {}
        feeds = record.get("feeds") or []
        failed = sum(1 for feed in feeds if feed.get("error"))
        from crovia_spider.runs.runsummary import _pages_part as pages_part  # what it captured

        print(
            f"crawl {spider}: run {record.get('run_id', '?')} {record.get('outcome', 'failed')},"
            f" {len(feeds)} feeds ({failed} failed), {totals.get('new', 0)} new,"
            f" {totals.get('updated', 0)} updated, {totals.get('duplicate', 0)} duplicate,"
            f" {totals.get('dropped', 0)} dropped"
            + (f"; {pages}" if (pages := pages_part(record)) else "")
            + f"; exit {status}"
            + (f": {answer['error']}" if answer.get("error") else "")
        )
        code = max(code, status)
        if status:
            break
    return code


def _answer(client: Any, request: str, wait: float) -> dict[str, Any] | None:
    """The sequencer's answer to `request`; None when no sequencer took it within `wait` s."""
    from crovia_spider.cluster.sequencer import request_taken, wait_answer

    deadline = time.monotonic() + wait
    while not request_taken(client, request):
        answer = wait_answer(client, request, timeout=1)
        if answer is not None:
            return answer
        if time.monotonic() > deadline:
            return None
    return wait_answer(client, request)


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt(SIGTERM) here, as SIGINT does, so both withdraw."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def plan(
    vendors: list[str], skip: list[str], spider: str | None, feeds_file: Path
) -> list[tuple[str, list[str]]]:
    """(spider, vendor ids and patterns for it) for each crawl to run, in order."""
    from crovia_spider.config.feeds import DEFAULT_SPIDER, is_pattern, load_feeds, matches

    if spider is not None:
        return [(spider, vendors)]
    feeds = load_feeds(feeds_file)  # ConfigError: exit 2 with the message, before any crawl
    ids = {feed.vendor for feed in feeds}
    if any(not is_pattern(name) and name not in ids for name in vendors):
        return [(DEFAULT_SPIDER, vendors)]  # refused with a suggestion by the spider
    patterns = [name for name in vendors if is_pattern(name)]
    order: dict[str, list[str]] = {}
    for feed in feeds:
        if vendors:
            chosen = feed.vendor in vendors or (feed.enabled and matches(feed, patterns))
        else:
            chosen = feed.enabled
        if chosen and not matches(feed, skip):
            names = order.setdefault(feed.spider, [])
            if feed.vendor in vendors:
                names.append(feed.vendor)
    if not order:
        return [(DEFAULT_SPIDER, vendors)]  # nothing left: the spider says why
    return [(name, [*own, *patterns] if vendors else []) for name, own in order.items()]


def _feeds_file(settings: list[str]) -> Path:
    """The feed list this crawl reads: `-s CROVIA_FEEDS_FILE=...` if given, else the default."""
    from crovia_spider.options import resolve_path

    for pair in reversed(settings):
        name, _, value = pair.partition("=")
        if name == "CROVIA_FEEDS_FILE":
            return resolve_path(value)
    return path_default("CROVIA_FEEDS_FILE")


def _run(argv: list[str], cwd: Path) -> tuple[int, bool]:
    """Run one crawl; pass SIGINT and SIGTERM on to it. (exit status, whether it was stopped)."""
    from crovia_spider.deathsig import preexec

    # preexec_fn: this command starts no thread, and the crawl must die with it (the docstring)
    child = subprocess.Popen(argv, cwd=cwd, start_new_session=True, preexec_fn=preexec())
    stopped = False

    def forward(signum: int, frame: object) -> None:
        nonlocal stopped
        stopped = True
        child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        status = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return (status if status >= 0 else 128 - status), stopped
