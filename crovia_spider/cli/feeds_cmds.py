"""Feed subcommands of `crovia`: `feeds list` (each feed's health), `feeds check` (the config
files, validated without starting Scrapy), `feeds import-opml FILE` (a feed reader's
subscription list into config/feeds.toml), and `feeds add URL` / `feeds try VENDOR|URL` (a new
source found and tried: crovia_spider/cli/feeds_add.py).

Only the stdlib at module level; see crovia_spider/cli/__init__.py for exit codes and errors.
"""

from __future__ import annotations

import argparse
import json
import typing
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import printable
from crovia_spider.options import path_default

if typing.TYPE_CHECKING:
    from crovia_spider.config.feeds import FeedConfig


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia feeds list`, `check`, `import-opml`, `add` and `try`."""
    from crovia_spider.cli import feeds_add

    feeds = subparsers.add_parser(
        "feeds", help="feed health, config check, OPML import, add and try a source",
        description="The feeds that `scrapy crawl` harvests (config/feeds.toml).",
    )  # fmt: skip
    commands = feeds.add_subparsers(dest="feeds_command", metavar="COMMAND", required=True)
    listing = commands.add_parser(
        "list", help="each feed's health, one line each",
        description="One line per configured feed: vendor (and the relay that serves it, if not"
        " the vendor), state (ok; failing N times since T; never fetched; watched: a watch"
        " source; disabled), last success, last new item and items in the ledger (from"
        " the ledger directory's feed state and index).",
    )  # fmt: skip
    _feeds_file(listing)
    listing.add_argument(
        "--ledger-dir", type=Path, default=path_default("CROVIA_LEDGER_DIR"),
        help="ledger directory holding the feed state (default: $CROVIA_LEDGER_DIR or %(default)s)",
    )  # fmt: skip
    listing.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    listing.add_argument(
        "--failing", action="store_true", help="only the feeds whose last crawls failed"
    )
    listing.set_defaults(handler=list_feeds)
    check = commands.add_parser(
        "check", help="validate the settings, feeds.toml, classify.toml and schedule.toml",
        description="Check every CROVIA_* setting of the environment (crovia_spider/options.py),"
        " then load the feed list, the classification rules and the schedule as a crawl and the"
        " scheduler would. Exit 0 when all are valid; exit 2 naming the setting, its value and"
        " what it takes, or the file, the entry and the key at fault. Starts no crawler, so it"
        " answers at once; `crovia doctor` checks the rest of what a crawl reads.",
    )  # fmt: skip
    _feeds_file(check)
    check.add_argument(
        "--classify-file", type=Path, default=path_default("CROVIA_CLASSIFY_FILE"),
        help="classification rules (default: $CROVIA_CLASSIFY_FILE or %(default)s)",
    )  # fmt: skip
    check.add_argument(
        "--schedule-file", type=Path, default=path_default("CROVIA_SCHEDULE_FILE"),
        help="schedule (default: $CROVIA_SCHEDULE_FILE or %(default)s)",
    )  # fmt: skip
    check.set_defaults(handler=check_config)
    opml = commands.add_parser(
        "import-opml", help="add the feeds of an OPML file to the feed list",
        description="Append every feed of an OPML file that is not configured yet; the file is "
        "validated before it is replaced. An outline that is not a valid feed, or whose host is "
        "not a public address, is skipped and reported.",
    )  # fmt: skip
    opml.add_argument("opml", type=Path, metavar="FILE", help="OPML file exported by a feed reader")
    _feeds_file(opml)
    opml.add_argument("--category", help="category of the imported feeds (default: news)")
    opml.add_argument(
        "--allow-private", action="store_true",
        help="also import feeds on loopback, private, link-local or other non-public addresses",
    )  # fmt: skip
    opml.set_defaults(handler=import_opml)
    feeds_add.register(commands, _feeds_file)


def _feeds_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feeds-file", type=Path, default=path_default("CROVIA_FEEDS_FILE"),
        help="feed list (default: $CROVIA_FEEDS_FILE or %(default)s)",
    )  # fmt: skip


def list_feeds(args: argparse.Namespace) -> int:
    """Print each feed's health, one line each. Raises LedgerNotFound (exit 2) when the ledger
    directory does not exist: a mistyped path must not read as "never fetched"."""
    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.runs.feed_state import load_state
    from ledger.exceptions import LedgerNotFound

    if not args.ledger_dir.is_dir():
        raise LedgerNotFound(f"no ledger directory at {args.ledger_dir} (crawl first, or give"
                             " --ledger-dir)")  # fmt: skip
    state = load_state(args.ledger_dir)
    items = _items_by_vendor(args.ledger_dir)
    rows = [_health(feed, state.get(feed.url, {}), items) for feed in load_feeds(args.feeds_file)]
    if args.failing:
        rows = [row for row in rows if row["state"] == "failing"]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    table = [("VENDOR", "STATE", "LAST SUCCESS", "LAST NEW ITEM", "ITEMS")]
    for row in rows:
        state_text = row["state"]
        if state_text == "failing":
            state_text = f"failing {row['failures']} times since {_minute(row['failing_since'])}"
        vendor = f"{row['vendor']} via {row['relay']}" if row["relay"] else row["vendor"]
        when = [_minute(row[k]) for k in ("last_success", "last_new_item")]
        if row["state"] == "watched":
            when = ["-", "-"]  # no fetch to succeed; `crovia changes` says what its pages did
        table.append((printable(vendor), state_text, *when, str(row["items"])))
    widths = [max(len(line[col]) for line in table) for col in range(4)]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
              + "  " + line[4])  # fmt: skip
    return EXIT_OK


def _health(feed: FeedConfig, entry: dict, items: dict[str, int]) -> dict[str, object]:
    """One feed's row: its state is disabled, watched (a watch source), failing (N crawls in a
    row), ok or never fetched."""
    from crovia_spider.config.feeds import WATCH_KIND

    last = entry.get("last_run") or {}
    failures = int(entry.get("failures", 0))
    since = entry.get("failing_since")
    if "failures" not in entry and last.get("error") and last["error"] != "interrupted":
        failures, since = 1, last.get("started_at")  # state written before health was kept
    if not feed.enabled:
        state = "disabled"
    elif feed.kind == WATCH_KIND:
        state = "watched"  # its pages are captured, never fetched as a feed (docs/watching.md)
    elif failures:
        state = "failing"
    elif entry.get("last_success") or (last and not last.get("error")):
        state = "ok"
    else:
        state = "never fetched"
    return {
        "vendor": feed.vendor,
        "spider": feed.spider,
        "enabled": feed.enabled,
        "url": feed.url,
        "relay": feed.relay,
        "state": state,
        "failures": failures,
        "failing_since": since if failures else None,
        "last_success": entry.get("last_success"),
        "last_new_item": entry.get("last_new_item"),
        "items": items.get(feed.vendor, 0),
        "last_run": last or None,
    }


def _items_by_vendor(ledger_dir: Path) -> dict[str, int]:
    from ledger.exceptions import LedgerError
    from ledger.store import Ledger

    try:
        with Ledger.open(ledger_dir) as ledger:
            return dict(ledger.stats()["vendors"])
    except LedgerError:
        return {}  # no ledger yet (nothing crawled): no items


def _minute(when: object) -> str:
    """2026-12-01T04:48:55.123456Z -> 2026-12-01T04:48Z; None -> never."""
    return f"{when[:16]}Z" if isinstance(when, str) and len(when) >= 16 else "never"


def check_config(args: argparse.Namespace) -> int:
    """Check every setting, then load every config file the crawl and the scheduler read, as
    they would; ConfigError (exit 2, naming the setting and its value, or file, entry and key)
    for the first that is wrong."""
    from crovia_spider.config.feeds import load_feeds
    from crovia_spider.config.ruleset import load_ruleset
    from crovia_spider.config.settings_check import check_environment
    from crovia_spider.schedule.config import load_schedule

    settings = check_environment()
    print(f"settings: {len(settings)} CROVIA_* settings, all valid")
    feeds = load_feeds(args.feeds_file)
    enabled = sum(1 for feed in feeds if feed.enabled)
    print(f"{args.feeds_file}: {len(feeds)} feeds ({enabled} enabled)")
    ruleset = load_ruleset(args.classify_file)
    print(f"{args.classify_file}: {len(ruleset.rules)} rules (version {ruleset.version})")
    if args.schedule_file.exists():
        from crovia_spider.cli.schedule_cmds import check_crawl_config

        jobs = load_schedule(args.schedule_file)
        check_crawl_config(jobs)  # each job's own -s settings, and the files they name
        print(f"{args.schedule_file}: {len(jobs)} jobs")
    else:
        print(f"{args.schedule_file}: not there (only `crovia schedule` needs it)")
    return EXIT_OK


def import_opml(args: argparse.Namespace) -> int:
    from crovia_spider.cli.opml import import_opml as run_import

    result = run_import(
        args.opml, args.feeds_file, category=args.category, allow_private=args.allow_private
    )
    for entry in result.added:
        print(f"added {entry['vendor']}: {entry['url']}")
    for line in result.skipped:
        print(f"skipped {line}")
    print(
        f"{len(result.added)} added, {len(result.already_configured)} already configured, "
        f"{len(result.skipped)} skipped -> {args.feeds_file}"
    )
    return EXIT_OK
