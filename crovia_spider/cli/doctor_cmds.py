"""`crovia doctor`: what a crawl will read, checked at once; one line per problem, with its fix.

What it checks, in order: every setting against what it takes (crovia_spider/options.py) and any
CROVIA_* variable that looks like a misspelt one; the config files a crawl and the scheduler load;
the signing key (readable, mode 0600, in a private directory) and its era (the ledger's current
key, after its rotations); the ledger's writer lock (held, and by which pid); with
CROVIA_REDIS_URL set, the cluster's Redis and whether a sequencer holds it; the TSAs and
OpenTimestamps calendars that are configured (each reachable over TCP) and the TSA roots (PEM);
which sources capture their items' pages, and how many of their items the capture book does not
follow. Each check is cheap and none writes: files are opened read-only (the index database
too), the lock is probed with a shared flock that is released at once and never created, and Redis
is only read. Exit 0 when nothing is wrong, 1 when a problem is found, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from crovia_spider.cli import EXIT_CHECK_FAILED, EXIT_OK
from crovia_spider.cli.ledger_args import json_flag, print_json
from crovia_spider.exceptions import ConfigError, CroviaError

PROBE_SECONDS = 5.0  # a TSA or calendar that does not accept a connection by then is unreachable


@dataclass(frozen=True)
class Finding:
    """One line: a check that passed (`fix` empty) or a problem and how to fix it."""

    check: str
    text: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        return not self.fix


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia doctor`."""
    parser = subparsers.add_parser(
        "doctor",
        help="check everything a crawl will read; one line per problem, with its fix",
        description=__doc__.split("\n\n", 1)[1].replace("\n", " "),
    )
    parser.add_argument(
        "--ledger-dir", type=Path, default=None, metavar="DIR",
        help="the ledger to check (default: $CROVIA_LEDGER_DIR)",
    )  # fmt: skip
    parser.add_argument(
        "--key", type=Path, default=None, metavar="FILE",
        help="the signing key to check (default: $CROVIA_SIGNING_KEY_FILE)",
    )  # fmt: skip
    json_flag(parser)
    parser.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    findings = list(run_checks(args.ledger_dir, args.key))
    problems = [f for f in findings if not f.ok]
    if args.json:
        print_json(
            {
                "ok": not problems,
                "checks": [{"check": f.check, "ok": f.ok, "text": f.text} for f in findings],
                "problems": [{"check": f.check, "problem": f.text, "fix": f.fix} for f in problems],
            }
        )
    else:
        for finding in findings:
            if finding.ok:
                print(f"ok       {finding.check}: {finding.text}")
            else:
                print(f"PROBLEM  {finding.check}: {finding.text}; fix: {finding.fix}")
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        print(f"crovia doctor: {count}" if problems else "crovia doctor: no problem found")
    sys.stdout.flush()
    return EXIT_CHECK_FAILED if problems else EXIT_OK


def run_checks(ledger_dir: Path | None, key: Path | None) -> Iterator[Finding]:
    """Every finding, check by check; a check that needs a setting found wrong is left out (the
    setting's own line says what to fix)."""
    checks: list[tuple[str, Callable[[], Iterator[Finding]]]] = [
        ("settings", check_settings),
        ("config", check_config),
        ("signing key", lambda: check_key(_ledger(ledger_dir), _key(key))),
        ("ledger lock", lambda: check_lock(_ledger(ledger_dir))),
        ("cluster", check_cluster),
        ("stamping", check_stamping),
        ("captures", lambda: check_captures(_ledger(ledger_dir))),
    ]
    for name, check in checks:
        try:
            yield from check()
        except ConfigError as exc:
            if name != "settings":
                yield Finding(name, f"not checked: {exc}", "fix that setting first (above)")


def _ledger(given: Path | None) -> Path:
    from crovia_spider.options import path_default

    return given if given is not None else path_default("CROVIA_LEDGER_DIR")


def _key(given: Path | None) -> Path:
    from crovia_spider.options import path_default

    return given if given is not None else path_default("CROVIA_SIGNING_KEY_FILE")


def check_settings() -> Iterator[Finding]:
    from crovia_spider.config.settings_check import (
        HARNESS_VARIABLES,
        INTERNAL_SETTINGS,
        environment_problems,
    )
    from crovia_spider.options import OPTIONS
    from crovia_spider.suggest import closest

    problems = environment_problems()
    for exc in problems:
        name = str(exc).split(" ", 1)[0]
        default = OPTIONS[name].default
        unset = f"unset it for the default ({default!r})" if default else "unset it"
        yield Finding("settings", str(exc), f"set {name} to {OPTIONS[name].kind.takes}, or {unset}")
    known = {name.removeprefix("CROVIA_"): name for name in OPTIONS}
    for name in sorted(os.environ):
        if not name.startswith("CROVIA_") or name in OPTIONS:
            continue
        if name in INTERNAL_SETTINGS or name in HARNESS_VARIABLES:
            continue
        close = closest(name.removeprefix("CROVIA_"), known)
        if close:
            yield Finding(
                "settings",
                f"{name} is set but is no setting: nothing reads it",
                f"did you mean {known[close]}? rename it",
            )
    if not problems:
        yield Finding("settings", f"{len(OPTIONS)} CROVIA_* settings, all valid")


def check_config() -> Iterator[Finding]:
    from crovia_spider.cli.schedule_cmds import check_crawl_config
    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.config.ruleset import load_ruleset
    from crovia_spider.notify.config import load_notify
    from crovia_spider.options import path_default
    from crovia_spider.schedule.config import load_schedule

    fix = "correct it (crovia feeds check says the same)"
    feeds_file = path_default("CROVIA_FEEDS_FILE")
    try:
        feeds = load_feeds(feeds_file)
        yield Finding("config", f"{feeds_file}: {len(feeds)} sources")
    except ConfigError as exc:
        yield Finding("config", str(exc), fix)
    rules = path_default("CROVIA_CLASSIFY_FILE")
    try:
        yield Finding("config", f"{rules}: {len(load_ruleset(rules).rules)} rules")
    except ConfigError as exc:
        yield Finding("config", str(exc), fix)
    notify = path_default("CROVIA_NOTIFY_FILE")  # a crawl reads it first, and refuses a bad one
    try:
        targets = load_notify(notify).targets
        yield Finding("config", f"{notify}: {len(targets)} notification targets")
    except ConfigError as exc:
        yield Finding("config", str(exc), "correct it (crovia notify says the same)")
    schedule = path_default("CROVIA_SCHEDULE_FILE")
    if schedule.exists():
        try:
            jobs = load_schedule(schedule)
            check_crawl_config(jobs)
            yield Finding("config", f"{schedule}: {len(jobs)} jobs")
        except ConfigError as exc:
            yield Finding("config", str(exc), fix)


def check_key(ledger_dir: Path, key_file: Path) -> Iterator[Finding]:
    """The key loads as the crawl loads it, and is the ledger's current key (its era)."""
    from ledger.exceptions import LedgerError
    from ledger.keys import key_id
    from ledger.store import check_writer_key, load_ledger_key

    try:
        key = load_ledger_key(key_file, ledger_dir)
    except LedgerError as exc:
        missing = not key_file.exists() and not key_file.is_symlink()
        how = f"crovia keygen --out {key_file}" if missing else "see the message"
        yield Finding("signing key", str(exc), how)
        return
    name = f"{key_file} (key_id {key_id(bytes(key.verify_key))})"
    if not (ledger_dir / "axiom_ledger.jsonl").is_file():
        yield Finding("signing key", f"{name}; no ledger yet at {ledger_dir}: the first crawl")
        return
    try:
        check_writer_key(ledger_dir, key)
    except LedgerError as exc:
        yield Finding(
            "signing key",
            str(exc),
            "set CROVIA_SIGNING_KEY_FILE to the ledger's current key (rotations.jsonl names it)",
        )
        return
    yield Finding("signing key", f"{name} signs {ledger_dir}")


def check_lock(ledger_dir: Path) -> Iterator[Finding]:
    """Whether another process holds the writer lock: a shared flock tried and dropped at once
    (a writer retries its own), on the lock file opened read-only; never created."""
    import fcntl

    path = ledger_dir / "ledger.lock"
    if not ledger_dir.is_dir():
        yield Finding("ledger lock", f"no ledger yet at {ledger_dir}: nothing holds its lock")
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        yield Finding("ledger lock", f"{path}: free (no writer has run yet)")
        return
    except OSError as exc:
        yield Finding("ledger lock", f"{path}: cannot be read ({exc.strerror})", "check its mode")
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        held_by = ""
    except BlockingIOError:
        held_by = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
    finally:
        os.close(fd)
    if not held_by:
        yield Finding("ledger lock", f"{path}: free")
        return
    yield Finding(
        "ledger lock",
        f"{path} is held by pid {held_by}: a crawl now would wait CROVIA_LOCK_TIMEOUT, then stop",
        f"wait for pid {held_by} to end (a crawl, seal or cluster run), or stop it if it hangs",
    )


def check_cluster() -> Iterator[Finding]:
    """With CROVIA_REDIS_URL: Redis answers, and a sequencer holds its claim (only read)."""
    from crovia_spider.options import setting

    url = setting("CROVIA_REDIS_URL")
    if not url:
        yield Finding("cluster", "CROVIA_REDIS_URL not set: crawls are local")
        return
    from crovia_spider.cluster import keys
    from crovia_spider.cluster.connection import connect, shown

    try:
        client = connect(url)
        held = client.get(keys.SEQUENCER)
    except CroviaError as exc:
        yield Finding("cluster", str(exc), "start Redis there, or correct CROVIA_REDIS_URL")
        return
    if not held:
        yield Finding(
            "cluster",
            f"Redis at {shown(url)} answers, but no sequencer holds it: `crovia crawl --redis`"
            " would wait for one",
            "start `crovia sequencer` on the ledger's machine",
        )
        return
    try:
        claim = json.loads(held)
    except ValueError:
        claim = {}
    where = f"pid {claim.get('pid', '?')} on {claim.get('host', '?')}"
    yield Finding("cluster", f"Redis at {shown(url)} answers; its sequencer is {where}")


def check_stamping() -> Iterator[Finding]:
    """Each TSA and calendar configured accepts a connection; each TSA root file is PEM."""
    from crovia_spider.options import resolve_path, setting

    services = [("TSA", url) for url in setting("CROVIA_TSA_URLS")]
    services += [("calendar", url) for url in setting("CROVIA_OTS_CALENDARS")]
    roots = setting("CROVIA_TSA_ROOTS")
    if not services and not roots:
        yield Finding("stamping", "no TSA or calendar configured: `crovia stamp` has none to ask")
        return
    timeout = min(PROBE_SECONDS, setting("CROVIA_STAMP_TIMEOUT"))
    for what, url in services:
        why = _unreachable(url, timeout)
        setting_name = "CROVIA_TSA_URLS" if what == "TSA" else "CROVIA_OTS_CALENDARS"
        if why:
            yield Finding(
                "stamping",
                f"{what} {url} cannot be reached: {why}",
                f"check the URL and the network, or take it out of {setting_name}",
            )
        else:
            yield Finding("stamping", f"{what} {url} reachable")
    yield from _check_roots([resolve_path(name) for name in roots])


def _unreachable(url: str, timeout: float) -> str:
    """Why a TCP connection to the URL's host and port fails within `timeout`; "" when it opens
    (closed at once: nothing is sent)."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return ""
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _check_roots(paths: list[Path]) -> Iterator[Finding]:
    from ledger.exceptions import LedgerError
    from ledger.stamps.check import load_roots

    for path in paths:
        try:
            count = len(load_roots([path]))
        except LedgerError as exc:
            yield Finding("stamping", str(exc), "give PEM certificate files in CROVIA_TSA_ROOTS")
            continue
        yield Finding("stamping", f"TSA root {path}: {count} certificate(s)")


def check_captures(ledger_dir: Path) -> Iterator[Finding]:
    """Which sources capture their items' pages, and how many of their items the capture book
    does not follow (from the ledger's index, read-only, and the book's file); a watch source is
    named so."""
    from crovia_spider.config.feeds import WATCH_KIND, load_feeds
    from crovia_spider.options import path_default, setting

    try:
        feeds = load_feeds(path_default("CROVIA_FEEDS_FILE"))
    except ConfigError:
        return  # said under config
    vendors = sorted({feed.vendor for feed in feeds if feed.enabled and feed.captures})
    if not vendors:
        yield Finding("captures", "no source captures its items' pages")
        return
    watch = {feed.vendor for feed in feeds if feed.kind == WATCH_KIND}
    listed = ", ".join(f"{v} (watch)" if v in watch else v for v in vendors)
    if not setting("CROVIA_CAPTURE"):
        yield Finding(
            "captures",
            f"CROVIA_CAPTURE is 0: no page is captured, though these sources capture: {listed}",
            "unset CROVIA_CAPTURE, or set `capture = false` on those sources",
        )
        return
    yield Finding("captures", f"{len(vendors)} source(s) capture their items' pages: {listed}")
    items = _items_by_vendor(ledger_dir, vendors)
    followed = _followed_by_vendor(ledger_dir)
    for vendor in vendors:
        missing = items.get(vendor, 0) - followed.get(vendor, 0)
        if missing > 0:
            yield Finding(
                "captures",
                f"{missing} item(s) of {vendor} in the ledger are not followed by the capture"
                " book: their pages are not captured",
                f"crovia capture --all {vendor}",
            )


def _items_by_vendor(ledger_dir: Path, vendors: list[str]) -> dict[str, int]:
    """Distinct items of each vendor in the index (sealed leaves: every crawl ends with a seal)."""
    import sqlite3

    path = ledger_dir / "index.sqlite"
    if not path.is_file():
        return {}
    marks = ",".join("?" for _ in vendors)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute(
                f"SELECT vendor, COUNT(DISTINCT target_key) FROM find_items"
                f" WHERE vendor IN ({marks}) GROUP BY vendor",
                vendors,
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    return {str(vendor): int(count) for vendor, count in rows}


def _followed_by_vendor(ledger_dir: Path) -> dict[str, int]:
    """Pages of each vendor in the capture book's file (captures_state.json)."""
    try:
        saved = json.loads((ledger_dir / "captures_state.json").read_text(encoding="utf-8"))
        pages = saved["pages"].values()
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    counts: dict[str, int] = {}
    for page in pages:
        vendor = page.get("vendor", "") if isinstance(page, dict) else ""
        counts[vendor] = counts.get(vendor, 0) + 1
    return counts
