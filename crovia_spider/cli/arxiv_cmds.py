"""`crovia arxiv coverage`: arXiv, complete. Per category and announcement day, what the RSS feed
announced, what OAI-PMH listed, what both and what one only saw, and which crawl can fill a gap;
`--record` signs each as an AX.COVERAGE record (ledger/records/coverage.py).

The sets are read again from the kept bodies the fetch records sign, in the crawl's parser worker
(crovia_spider/spiders/arxiv_coverage.py). A read that did not go whole says so in its state:
"not read" and "not harvested" are never "none announced" or "none listed". Exit 0, 2 usage or
I/O error (no ledger, a key that cannot sign).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    notice,
    print_json,
    printable,
    require_ledger,
)
from crovia_spider.options import env_default, path_default, setting

SHOWN_IDS = 20  # ids of a difference the table prints (--json gives them all)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `arxiv` and its subcommand `coverage`."""
    parser = subparsers.add_parser(
        "arxiv",
        help="arXiv, complete: per category and day, the papers seen by RSS, OAI-PMH, both",
        description="arXiv read two ways: its RSS feeds and its OAI-PMH interface.",
    )
    commands = parser.add_subparsers(dest="arxiv_command", metavar="COMMAND", required=True)
    coverage = commands.add_parser(
        "coverage",
        help="per category and announcement day: announced, harvested, both, missed",
        description="For each arXiv category and announcement day, from the signed fetch records"
        " and their kept bodies: the papers the RSS feed announced, those OAI-PMH listed, those"
        " in both, those missed by OAI-PMH (announced, not listed) and those read by OAI-PMH only"
        " (every paper of a day whose RSS crawl failed), the deleted records, how far each read"
        " went, and which crawl can fill a gap. Not observed is never did not exist. --record"
        " signs each day's statement as an AX.COVERAGE record when it differs from the last.",
    )
    coverage.add_argument(
        "--category",
        action="append",
        metavar="C",
        help="an arXiv category such as cs.AI (repeat, or comma-separate; default: every"
        " category an arXiv RSS feed of the ledger or the feed list reads)",
    )
    coverage.add_argument("--from", dest="since", metavar="D", type=_day, help="first day shown")
    coverage.add_argument("--to", dest="until", metavar="D", type=_day, help="last day shown")
    coverage.add_argument(
        "--record", action="store_true", help="sign each day's coverage as an AX.COVERAGE record"
    )
    coverage.add_argument(
        "--key",
        type=Path,
        default=path_default("CROVIA_SIGNING_KEY_FILE"),
        help="with --record: signing key file (default: $CROVIA_SIGNING_KEY_FILE or %(default)s)",
    )
    ledger_dir(coverage)
    json_flag(coverage)
    coverage.set_defaults(handler=cmd_coverage)


def _day(text: str) -> str:
    from datetime import date

    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


def cmd_coverage(args: argparse.Namespace) -> int:
    from crovia_spider.feed.parsepool import BlockingParser
    from crovia_spider.spiders.arxiv_coverage import Coverage

    require_ledger(args.ledger_dir)
    parser = BlockingParser(setting("CROVIA_PARSE_MEMORY_MB"), setting("CROVIA_PARSE_SECONDS"))
    try:
        coverage = Coverage(args.ledger_dir, parser).read(args.since or "", args.until or "")
        categories = _categories(args.category, coverage.categories)
        days = list(coverage.days(categories, args.since or "", args.until or ""))
    finally:
        parser.close()
    recorded: list[str] = []
    if args.record:
        recorded = _record(args, days)
    if args.json:
        print_json(
            {
                "days": [day.as_dict() for day in days],
                "recorded": recorded,
                "problems": coverage.problems,
            }
        )
        return EXIT_OK
    _table(days)
    for problem in coverage.problems:
        print(f"note: {printable(problem)}")
    if args.record:
        print(
            f"recorded {len(recorded)} coverage record(s)" + "".join(f"\n  {a}" for a in recorded)
        )
    return EXIT_OK


def _categories(given: list[str] | None, in_ledger: set[str]) -> list[str]:
    """The categories asked for, else those of the ledger and of the feed list's arXiv feeds."""
    if given:
        return sorted({c.strip() for text in given for c in text.split(",") if c.strip()})
    from crovia_spider.config.feeds import ARXIV_FAMILY, load_feeds
    from crovia_spider.exceptions import ConfigError
    from crovia_spider.spiders.arxiv_coverage import rss_category

    found = set(in_ledger)
    try:
        feeds = load_feeds(path_default("CROVIA_FEEDS_FILE"))
    except (ConfigError, OSError):
        feeds = []  # the ledger's categories alone: the feed list is not needed to read it
    found |= {rss_category(f.url) for f in feeds if f.family == ARXIV_FAMILY} - {""}
    return sorted(found)


def _table(days: list[Any]) -> None:
    if not days:
        print("no arXiv day read by RSS or OAI-PMH in this ledger (for what was asked)")
        return
    head = ("day", "category", "RSS", "announced", "OAI-PMH", "harvested", "both",
            "missed by OAI-PMH", "OAI-PMH only", "deleted")  # fmt: skip
    rows = [
        (
            d.day,
            d.category,
            d.rss_state.replace("_", " "),
            str(len(d.announced)),
            d.oai_state.replace("_", " "),
            str(len(d.harvested)),
            str(len(d.both)),
            str(len(d.rss_only)),
            str(len(d.oai_only)),
            str(len(d.deleted)),
        )
        for d in days
    ]
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(head)).rstrip())
    for day, row in zip(days, rows, strict=True):
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        for label, ids in (("missed by OAI-PMH", day.rss_only), ("OAI-PMH only", day.oai_only)):
            if ids:
                shown = sorted(ids)[:SHOWN_IDS]
                more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
                print(f"    {label}: {' '.join(printable(i) for i in shown)}{more}")
        if gap := day.gap():
            print(f"    gap: {printable(gap)}")


def _record(args: argparse.Namespace, days: list[Any]) -> list[str]:
    """Sign an AX.COVERAGE record of each day over (before today, UTC) whose statement differs
    from its newest record (the new one names it in `predecessors`); the axiom ids written."""
    from crovia_spider.runs.runlog import utc_now_micro
    from ledger.records.coverage import MAX_FETCHES, new_coverage_envelope
    from ledger.store import Ledger, load_ledger_key

    key = load_ledger_key(args.key, args.ledger_dir, notice=notice)
    computed_at = utc_now_micro()
    envelopes = []
    for day in days:
        if day.day >= computed_at[:10]:
            continue  # a day not over yet is recorded once it is
        envelope = new_coverage_envelope(
            category=day.category,
            day=day.day,
            computed_at=computed_at,
            rss={"state": day.rss_state, "fetches": day.rss_fetches[-MAX_FETCHES:]},
            oai={"state": day.oai_state, "fetches": day.oai_fetches[-MAX_FETCHES:]},
            announced=day.announced,
            harvested=day.harvested,
            deleted=day.deleted,
            predecessors=[day.recorded] if day.recorded else [],
        )
        if day.recorded_body is not None and _same(day.recorded_body, envelope["body"]):
            continue  # nothing new to state of that day
        envelopes.append(envelope)
    if not envelopes:
        return []
    lock, origin = setting("CROVIA_LOCK_TIMEOUT"), env_default("CROVIA_LOG_ORIGIN") or None
    with Ledger.open(
        args.ledger_dir, signing_key=key, lock_timeout=lock, log_origin=origin
    ) as ledger:
        issued = ledger.issue(envelopes)
        ledger.seal()
    return [found.axiom_id for found in issued]


def _same(before: dict[str, Any], now: dict[str, Any]) -> bool:
    ignore = ("computed_at",)
    return {k: v for k, v in before.items() if k not in ignore} == {
        k: v for k, v in now.items() if k not in ignore
    }
