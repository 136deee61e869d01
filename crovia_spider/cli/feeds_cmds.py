"""Feed subcommands of `crovia`: `feeds list` (each feed and its last outcome) and
`feeds import-opml FILE` (a feed reader's subscription list into config/feeds.toml).

Only the stdlib at module level; see crovia_spider/cli/__init__.py for exit codes and errors.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.options import path_default


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia feeds list` and `crovia feeds import-opml`."""
    feeds = subparsers.add_parser(
        "feeds", help="list configured feeds, import an OPML subscription list",
        description="The feeds that `scrapy crawl` harvests (config/feeds.toml).",
    )  # fmt: skip
    commands = feeds.add_subparsers(dest="feeds_command", metavar="COMMAND", required=True)
    listing = commands.add_parser(
        "list", help="each feed with its last outcome",
        description="Each configured feed and what its last crawl saw (from the ledger directory).",
    )  # fmt: skip
    _feeds_file(listing)
    listing.add_argument(
        "--ledger-dir", type=Path, default=path_default("CROVIA_LEDGER_DIR"),
        help="ledger directory holding the feed state (default: $CROVIA_LEDGER_DIR or %(default)s)",
    )  # fmt: skip
    listing.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    listing.set_defaults(handler=list_feeds)
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


def _feeds_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--feeds-file", type=Path, default=path_default("CROVIA_FEEDS_FILE"),
        help="feed list (default: $CROVIA_FEEDS_FILE or %(default)s)",
    )  # fmt: skip


def list_feeds(args: argparse.Namespace) -> int:
    """Print each feed and its last outcome. Raises LedgerNotFound (exit 2) when the ledger
    directory does not exist: a mistyped path must not read as "never crawled"."""
    from crovia_spider.feed_state import load_state
    from crovia_spider.feeds_config import load_feeds
    from ledger.exceptions import LedgerNotFound

    if not args.ledger_dir.is_dir():
        raise LedgerNotFound(f"no ledger directory at {args.ledger_dir} (crawl first, or give"
                             " --ledger-dir)")  # fmt: skip
    state = load_state(args.ledger_dir)
    rows = []
    for feed in load_feeds(args.feeds_file):
        last = state.get(feed.url, {}).get("last_run")
        rows.append({"vendor": feed.vendor, "spider": feed.spider, "enabled": feed.enabled,
                     "url": feed.url, "last_run": last})  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    for row in rows:
        flag = "" if row["enabled"] else " (disabled)"
        print(
            f"{row['vendor']}{flag} [{row['spider']}] {row['url']}\n    {_outcome(row['last_run'])}"
        )
    return EXIT_OK


def _outcome(last: dict | None) -> str:
    if not last:
        return "never crawled"
    if last.get("error"):
        what = last["error"]
    elif last.get("not_modified"):
        what = "304 not modified"
    else:
        what = f"HTTP {last['status']}: {last['new']} new, {last['updated']} updated, " \
               f"{last['duplicate']} duplicate, {last['dropped']} dropped"  # fmt: skip
    if last.get("parse_error"):
        what += f" [{last['parse_error']}]"
    return f"{last['started_at']}: {what}"


def import_opml(args: argparse.Namespace) -> int:
    from crovia_spider.opml import import_opml as run_import

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
