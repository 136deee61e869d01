"""`crovia changes`: what changed in the items and pages the ledger follows, each change proved.

`changes [--since TIME] [--vendor V] [--kind K] [--json]` lists the change events of the ledger
(ledger/changes/: new, edited, moved, removed, returned, unreachable), newest last. Each line says
what changed, where, when (between which two signed records) and the records that prove it (axiom
ids and leaf indexes); an edit is followed by the diff of the main text, sentence by sentence, as
text. A page is `removed` only once it answered 404 or 410 at CROVIA_REMOVAL_CAPTURES captures in
a row at least CROVIA_REMOVAL_SPAN apart; anything else that is no answer is `unreachable`.
Exit 0 (with or without events), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    print_json,
    printable,
    require_ledger,
    utc_time,
)
from ledger.changes import EVENT_KINDS


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `changes`."""
    parser = subparsers.add_parser(
        "changes",
        help="what changed: new items, edited, moved, removed, returned, unreachable pages",
        description="List the change events the ledger's signed records prove, newest last: new"
        " items, and edited, moved, removed, returned or unreachable pages, each with when"
        " (between which two signed records) and the records (axiom ids, leaf indexes); an edit"
        " with the diff of the main text. Removal is proved: 404 or 410 at"
        " CROVIA_REMOVAL_CAPTURES captures at least CROVIA_REMOVAL_SPAN apart.",
    )
    parser.add_argument(
        "--since", metavar="TIME", type=utc_time,
        help="only changes shown at or after this time (2026-12-01 or 2026-12-01T09:00:00Z, UTC)",
    )  # fmt: skip
    parser.add_argument("--vendor", metavar="V", help="only this vendor's")
    parser.add_argument("--kind", metavar="K", choices=EVENT_KINDS, help="only this kind")
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_changes)


def removal_rule() -> Any:
    """The RemovalRule of CROVIA_REMOVAL_CAPTURES and CROVIA_REMOVAL_SPAN (checked settings)."""
    from crovia_spider.options import setting
    from ledger.changes import RemovalRule

    return RemovalRule(
        captures=setting("CROVIA_REMOVAL_CAPTURES"),
        span_seconds=float(setting("CROVIA_REMOVAL_SPAN")),
    )


def selected_events(
    directory: Any, since: str | None = None, vendor: str | None = None, kind: str | None = None
) -> list[Any]:
    """The ledger's change events that pass the filters, oldest first, edits with their diff."""
    from ledger.changes import derive_changes, with_diff

    events = derive_changes(directory, removal_rule())
    chosen = [
        e
        for e in events
        if (since is None or e.at >= since[:19] + "Z")
        and (vendor is None or e.vendor == vendor)
        and (kind is None or e.kind == kind)
    ]
    return [with_diff(e, directory) for e in chosen]


def cmd_changes(args: argparse.Namespace) -> int:
    require_ledger(args.ledger_dir)
    events = selected_events(args.ledger_dir, args.since, args.vendor, args.kind)
    if args.json:
        print_json({"ok": True, "events": [e.as_dict() for e in events]})
        return 0
    if not events:
        print("no change" + (" matching" if args.since or args.vendor or args.kind else ""))
        return 0
    for event in events:
        write_event(event)
    return 0


def write_event(event: Any) -> None:
    """One event as text: a line saying what, where and when, the records, and an edit's diff;
    everything from a page escaped (printable) so it cannot drive the terminal."""
    out = sys.stdout
    out.write(f"{event.at}  {event.kind:<11} {printable(event.vendor)}  {printable(event.url)}\n")
    if event.title and event.title != event.url:
        out.write(f"    title: {printable(event.title)}\n")
    if event.after is not None:
        out.write(
            f"    between {event.after.axiom_id} ({event.after.role}, leaf"
            f" {event.after.leaf_index}, {event.after.at}) and {event.records[-1].axiom_id}"
            f" ({event.records[-1].role}, leaf {event.records[-1].leaf_index}, {event.at})\n"
        )
    if event.detail:
        out.write(f"    {printable(event.detail)}\n")
    records = ", ".join(f"{r.axiom_id} (leaf {r.leaf_index})" for r in event.records)
    out.write(f"    records: {records}\n")
    out.write(f"    event {event.id}\n")
    for line in event.diff.splitlines():
        out.write(f"    | {printable(line)}\n")
