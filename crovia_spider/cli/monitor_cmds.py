"""`crovia monitor`: verify a published log since the last run, trusting only its verifier key.

The checks are ledger/monitor/follow.py's; this module reads the state, picks the source (a
directory or an http(s) URL), prints the outcome and saves the state only after everything held. A
failed check exits 1 and leaves the state as it was. docs/ledger.md, "Monitoring".
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import json_flag, positive_int, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add monitor."""
    parser = subparsers.add_parser(
        "monitor",
        help="verify a published log (directory or URL) since the last run",
        description="Verify the checkpoint under VKEY, every new entry (signature, schema, leaf"
        " hash), every changed tile, the consistency with the last verified size, and each new"
        " seal's roots. Key rotations published in rotations.json are followed (each record"
        " signed by both keys) from VKEY's key, old or new. Exit 1 on a fork, a rollback, a bad"
        " tile, entry, seal or rotation, a key with no signed hand-over from VKEY's, or a log that"
        " misbehaves (a redirect off its origin, a missed deadline, an oversized answer); the"
        " state file is then left as it was. Exit 2 only when the log cannot be reached.",
    )
    parser.add_argument("source", metavar="SOURCE", help="published directory or http(s) URL")
    parser.add_argument(
        "--vkey",
        required=True,
        help="the log's note verifier key (name+hash+base64, as `crovia pubkey` prints it)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        help="state file (created on the first run); without it every run starts from size 0",
    )
    parser.add_argument(
        "--witness",
        action="append",
        default=[],
        metavar="VKEY",
        help="a witness's cosignature verifier key (crovia witness vkey); repeat for several",
    )
    parser.add_argument(
        "--quorum", type=int, default=0, help="valid witness cosignatures required (default 0)"
    )
    parser.add_argument(
        "--workers", type=positive_int, default=2, help="verifying threads (default: 2)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="the time this run may spend waiting on an http(s) log, all requests together"
        " (default: %(default)g); a log that uses it up fails the check (exit 1)",
    )
    parser.add_argument(
        "--proxy",
        metavar="URL",
        help="an http://host:port proxy to reach the log through; without it no proxy is used,"
        " whatever the *_PROXY variables say",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_monitor)


def cmd_monitor(args: argparse.Namespace) -> int:
    from ledger.monitor import MonitorState, load_state, monitor, open_source, save_state
    from ledger.tlog.note import Ed25519Verifier

    origin = Ed25519Verifier.from_vkey(args.vkey).name
    state = MonitorState.empty(origin) if args.state is None else load_state(args.state, origin)
    report, new_state = monitor(
        open_source(args.source, args.timeout, args.proxy),
        args.vkey,
        state,
        witnesses=args.witness,
        quorum=args.quorum,
        workers=args.workers,
    )
    if args.state is not None and new_state != state:
        save_state(args.state, new_state)
    if args.json:
        print_json(
            {
                "cosigners": list(report.cosigners),
                "entries": report.entries,
                "previous_size": report.previous_size,
                "seals": report.seals,
                "size": report.size,
            }
        )
    else:
        print(f"size {report.size}: +{report.entries} entries verified")
        witnesses = ", ".join(report.cosigners) or "none"
        print(f"  {report.seals} seal(s) verified; cosigned by: {witnesses}")
    return EXIT_OK
