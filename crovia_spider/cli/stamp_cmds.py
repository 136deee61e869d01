"""`crovia stamp`: RFC 3161 tokens and OpenTimestamps proofs for every seal (docs/stamps.md).

A TSA or calendar that is down, slow or wrong is recorded in `<ledger>/stamps/attempts.jsonl` and
reported; the run goes on and exits 0, and the next run asks again, so stamping never blocks a
crawl or a seal. Exit 2 only for what the operator must fix: a bad setting, an unreadable root, a
missing ledger, the stamping lock held past the timeout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import json_flag, ledger_dir, print_json, require_ledger
from crovia_spider.options import env_default, setting


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add stamp."""
    parser = subparsers.add_parser(
        "stamp",
        help="timestamp seals with RFC 3161 TSAs and OpenTimestamps calendars",
        description="Ask each TSA in $CROVIA_TSA_URLS for a token, and submit to each calendar in"
        " $CROVIA_OTS_CALENDARS, for every seal that has none from it yet; with --upgrade, ask"
        " the calendars for completed (Bitcoin) proofs instead. Failures are recorded in"
        " stamps/attempts.jsonl and retried next run; they do not change the exit code.",
    )
    ledger_dir(parser)
    parser.add_argument(
        "--upgrade", action="store_true", help="fetch completed OpenTimestamps proofs"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=setting("CROVIA_STAMP_TIMEOUT"),
        help="seconds one request may take in all (default: $CROVIA_STAMP_TIMEOUT or %(default)s)",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_stamp)


def cmd_stamp(args: argparse.Namespace) -> int:
    from crovia_spider.fetching.stamp_http import HttpTransport
    from ledger.stamps.check import load_roots
    from ledger.stamps.stamper import Stamper
    from ledger.store import Ledger

    require_ledger(args.ledger_dir)
    tsa_urls, calendars = _urls("CROVIA_TSA_URLS"), _urls("CROVIA_OTS_CALENDARS")
    roots = load_roots([Path(p) for p in _urls("CROVIA_TSA_ROOTS")])
    if not tsa_urls and not calendars:
        print("nothing to do: set CROVIA_TSA_URLS and/or CROVIA_OTS_CALENDARS (docs/stamps.md)")
        return EXIT_OK
    stamper = Stamper(args.ledger_dir, HttpTransport(args.timeout), tsa_urls, calendars, roots)
    lock_timeout = setting("CROVIA_LOCK_TIMEOUT")
    with Ledger.open(args.ledger_dir) as ledger, stamper.store.locked(lock_timeout):
        seals = list(ledger.seals())
        report = stamper.upgrade(seals) if args.upgrade else stamper.stamp(seals)
    _print(report, args)
    return EXIT_OK


def _urls(name: str) -> list[str]:
    return [u.strip() for u in env_default(name).split(",") if u.strip()]


def _print(report, args: argparse.Namespace) -> None:
    if args.json:
        print_json(report.__dict__)
        return
    if args.upgrade:
        print(
            f"{report.seals} seals: {report.upgraded} proofs upgraded to Bitcoin,"
            f" {report.still_pending} still pending"
        )
    else:
        print(
            f"{report.seals} seals: {report.tokens} RFC 3161 tokens kept,"
            f" {report.submitted} OpenTimestamps submissions kept"
        )
    for failure in report.failures:
        print(f"  not kept ({failure['kind']}, retried next run): {failure['error']}")
    if report.skipped:
        print(
            f"  {report.skipped} request(s) skipped: their TSA or calendar failed earlier"
            " in this run"
        )
