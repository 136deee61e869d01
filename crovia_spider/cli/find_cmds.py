"""`crovia find`: the axiom ids of the items a user is looking for, read-only
(ledger/store/find.py).

Stdlib only at module level; the ledger is imported inside the handler. A missing ledger is
LedgerNotFound (exit 2); finding nothing is not an error (exit 0, "0 found").
"""

from __future__ import annotations

import argparse

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import ledger_dir, print_json, utc_time


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `crovia find`."""
    parser = subparsers.add_parser(
        "find",
        help="list axiom ids with their items (vendor, title, url, time)",
        description="List the leaves whose items match every filter given, oldest first, with"
        " their axiom ids (for `crovia prove AXIOM_ID`). Reads the ledger only; takes no lock.",
    )
    ledger_dir(parser)
    parser.add_argument("--vendor", metavar="V", help="vendor id or pattern, e.g. 'arxiv_*'")
    parser.add_argument("--url", metavar="U", help="the item's link (or its identity), exactly")
    parser.add_argument("--title", metavar="WORDS", help="whole words of the title, any case")
    parser.add_argument(
        "--since",
        metavar="DATE",
        type=utc_time,
        help="observed at or after DATE: 2026-11-29 (UTC) or 2026-11-29T18:00:00Z",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    output.add_argument(
        "--ids", action="store_true", help="only the axiom ids, one a line (for scripts)"
    )
    parser.set_defaults(handler=cmd_find)


def cmd_find(args: argparse.Namespace) -> int:
    from ledger.store import find_leaves

    found = find_leaves(
        args.ledger_dir, vendor=args.vendor, url=args.url, title=args.title, since=args.since
    )
    if args.json:
        items = [leaf.as_dict() for leaf in found]
        print_json({"count": len(items), "items": items})
        return EXIT_OK
    if args.ids:
        for leaf in found:
            print(leaf.axiom_id)
        return EXIT_OK
    count = 0
    for leaf in found:
        count += 1
        unsealed = "" if leaf.sealed else " (not sealed yet: `crovia seal` first)"
        print(f"{leaf.axiom_id} leaf {leaf.leaf_index} {leaf.observed_at} {leaf.vendor}{unsealed}")
        print(f"    {leaf.title}\n    {leaf.url}")
    print(f"{count} found in {args.ledger_dir}")
    return EXIT_OK
