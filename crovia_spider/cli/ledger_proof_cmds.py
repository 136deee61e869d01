"""`crovia verify` and `crovia prove`: receipts made and checked (keys: key_cmds.py).

The ledger (PyNaCl, orjson) is imported inside handlers. Failed checks raise VerificationError
(exit 1), usage and I/O problems LedgerError (exit 2). See docs/ledger.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    print_json,
    printable,
)
from crovia_spider.cli.output import force_flag, write_output
from crovia_spider.cli.stamp_report import print_stamps, stamp_report


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add verify and prove."""
    _add_verify(subparsers)
    _add_prove(subparsers)


def _add_verify(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a receipt offline",
        description="Check every rule of a crovia.axiom_proof.v1 receipt offline, on the file's"
        " exact bytes (canonical JSON, no trailing newline), and print what it vouches for. Exit"
        " 1 names the failed check; exit 2 is a usage or I/O error. Pin the signer with --pubkey"
        " or --key-id: without a pin the receipt is only shown to be self-consistent.",
    )
    parser.add_argument("receipt", help="receipt JSON file, or - for stdin")
    pin = parser.add_mutually_exclusive_group()
    pin.add_argument("--pubkey", metavar="HEX", help="the trusted signer's public key (64 hex)")
    pin.add_argument("--key-id", metavar="ID", help="the trusted signer's key_id (16 hex)")
    parser.add_argument(
        "--tsa-root",
        metavar="PEM",
        type=Path,
        action="append",
        default=[],
        help="a trusted RFC 3161 TSA root certificate (repeatable); without one a token's TSA is"
        " not pinned",
    )
    parser.add_argument(
        "--bitcoin-header",
        metavar="HEX",
        action="append",
        default=[],
        help="an 80-byte Bitcoin block header (160 hex, repeatable) to check an OpenTimestamps"
        " Bitcoin attestation against",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_verify)


def _add_prove(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prove",
        help="print the receipt of an axiom",
        description="Print the canonical receipt binding AXIOM_ID to the newest seal covering it.",
    )
    parser.add_argument("axiom_id", metavar="AXIOM_ID")
    ledger_dir(parser)
    parser.add_argument("--out", type=Path, help="write the receipt here instead of stdout")
    parser.add_argument(
        "--tlog-proof",
        type=Path,
        metavar="FILE",
        help="also write a c2sp.org/tlog-proof file for the same leaf and seal",
    )
    force_flag(parser)
    parser.set_defaults(handler=cmd_prove)


def cmd_verify(args: argparse.Namespace) -> int:
    from ledger.keys import parse_pin
    from ledger.receipt import verify_receipt_bytes
    from ledger.stamps.check import load_roots, parse_block_header

    parse_pin(args.pubkey, args.key_id)  # a malformed pin is a usage error: exit 2 before any check
    roots = load_roots(args.tsa_root)
    headers = [parse_block_header(text) for text in args.bitcoin_header]
    verdict = verify_receipt_bytes(
        _read_receipt(args.receipt),
        pubkey_hex=args.pubkey,
        key_id=args.key_id,
        tsa_roots=roots,
        bitcoin_headers=headers,
    )
    if args.json:
        stamps = stamp_report(verdict.stamps)
        print_json({"ok": True, **verdict.__dict__, "checks": list(verdict.checks), **stamps})
        return EXIT_OK
    print(f"OK: {verdict.axiom_id} verified; this receipt vouches that")
    if verdict.fetch:  # an AX.FETCH record: the fetch itself, not an item
        print(f"  {printable(verdict.fetch)}")
    item = () if verdict.fetch else (("title", verdict.title), ("url", verdict.url))
    for label, value in (
        ("vendor", verdict.vendor),
        *item,
        ("observed at", verdict.observed_at),
        ("issued at", verdict.issued_at),
        ("ledger", f"leaf {verdict.leaf_index} of {verdict.leaf_count}"),
        ("sealed at", f"{verdict.sealed_at}, root {verdict.merkle_root}"),
        ("signed by", f"key_id {verdict.key_id} ({_pin_state(verdict.key_pinned)})"),
    ):
        print(f"  {label + ':':<12} {printable(value)}")
    print(f"checks passed: {', '.join(verdict.checks)}")
    if verdict.key_rotations:
        print(
            f"followed {verdict.key_rotations} key rotation(s) from the ledger's first key to the"
            " seal's key, each signed by both keys: any key of that chain may be pinned"
        )
    if not verdict.key_pinned:
        print(
            "NOTE: no key was pinned, so this shows the receipt is self-consistent, not who signed"
            " it. Pin the expected signer with --pubkey HEX or --key-id ID."
        )
    print_stamps(verdict.stamps)
    return EXIT_OK


def _pin_state(pinned: bool) -> str:
    return "the key you pinned" if pinned else "NOT pinned: any key would do"


def cmd_prove(args: argparse.Namespace) -> int:
    from ledger.canonical import canonical_json
    from ledger.store import Ledger

    with Ledger.open(args.ledger_dir) as ledger:
        receipt = ledger.receipt(args.axiom_id)
        if args.tlog_proof is not None:
            from crovia_spider.cli.tlog_cmds import write_tlog_proof

            write_tlog_proof(ledger, receipt, args.tlog_proof, force=args.force)
    data = canonical_json(receipt)
    if args.out is not None:
        write_output(args.out, data, force=args.force)
    else:  # byte for byte the canonical receipt; a newline only for a human at a terminal
        sys.stdout.buffer.write(data + b"\n" if sys.stdout.isatty() else data)
    return EXIT_OK


def _read_receipt(source: str) -> bytes:
    """The receipt's bytes (at most one more than the verifier accepts, so it can say so)."""
    from ledger.receipt import MAX_RECEIPT_BYTES

    if source == "-":
        return sys.stdin.buffer.read(MAX_RECEIPT_BYTES + 1)
    with open(source, "rb") as handle:
        return handle.read(MAX_RECEIPT_BYTES + 1)
