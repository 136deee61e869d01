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
        " exact bytes (canonical JSON, at most one final newline), and print what it vouches"
        " for and the verdict: valid (exit 0), unpinned (the key is not one you pinned: exit 1,"
        " check pinned_key) or invalid (exit 1, naming the failed check). Exit 2 is a usage or I/O"
        " error. Pin the signer with --trust-root, --pubkey or --key-id; --any-key accepts any"
        " key (exit 0, saying so).",
    )
    parser.add_argument("receipt", nargs="?", help="receipt JSON file, or - for stdin")
    parser.add_argument(
        "--bundle",
        metavar="ZIP",
        type=Path,
        help="check an evidence bundle (crovia bundle) whole, from the zip alone, instead of one"
        " receipt: exit 1 names the first file that fails",
    )
    pin = parser.add_mutually_exclusive_group()
    pin.add_argument("--pubkey", metavar="HEX", help="the trusted signer's public key (64 hex)")
    pin.add_argument("--key-id", metavar="ID", help="the trusted signer's key_id (16 hex)")
    pin.add_argument(
        "--trust-root",
        metavar="FILE",
        type=Path,
        help="the site's trust_root.json: pins its key, its signed rotation chain and its TSA"
        " roots",
    )
    pin.add_argument(
        "--any-key",
        action="store_true",
        help="accept a receipt signed by any key (verdict unpinned, exit 0): only shows the"
        " receipt is self-consistent",
    )
    parser.add_argument(
        "--rotations",
        metavar="FILE",
        type=Path,
        action="append",
        default=[],
        help="a published rotations.json (repeatable): signed key rotations to follow; by"
        " default the rotations.json of the published site the receipt lies in, if any",
    )
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
    parser.set_defaults(handler=cmd_verify, logs=False)  # it logs nothing: starts faster


def _add_prove(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prove",
        help="print the receipt of an axiom",
        description="Write the canonical receipt binding AXIOM_ID to the newest seal covering it:"
        " to --out FILE, or to stdout when it is a pipe or a file. At a terminal, without --out,"
        " a short summary and how to write the file are printed instead.",
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
    if args.bundle is not None or args.receipt is None:
        return _verify_bundle(args)
    from ledger.exceptions import VerificationError
    from ledger.keys import parse_pin, parse_trust_root
    from ledger.receipt import verify_receipt_bytes
    from ledger.stamps.check import load_roots, parse_block_header

    parse_pin(args.pubkey, args.key_id)  # a malformed pin is a usage error: exit 2 before any check
    trust = None
    if args.trust_root is not None:
        trust = parse_trust_root(_read_small(args.trust_root), str(args.trust_root))
    roots = load_roots(args.tsa_root)
    headers = [parse_block_header(text) for text in args.bitcoin_header]
    sources = list(args.rotations) or _site_rotations(args.receipt, trust)
    data = _read_receipt(args.receipt)
    try:
        verdict = verify_receipt_bytes(
            data,
            pubkey_hex=args.pubkey,
            key_id=args.key_id,
            tsa_roots=roots,
            bitcoin_headers=headers,
            trust_root=trust,
            known_rotations=_read_rotations(sources),
        )
    except VerificationError as exc:
        return _refused(args, exc)
    if verdict.verdict == "unpinned" and not args.any_key:
        return _refused(args, _no_pin(verdict))
    chain_source = [str(path) for path in sources] or None
    if args.json:
        stamps = stamp_report(verdict.stamps)
        fields = {**verdict.__dict__, "checks": list(verdict.checks), **stamps}
        print_json(
            {"ok": True, **fields, "any_key": bool(args.any_key), "chain_source": chain_source}
        )
        return EXIT_OK
    _print_verdict(verdict, chain_source)
    return EXIT_OK


def _verify_bundle(args: argparse.Namespace) -> int:
    """`verify --bundle ZIP` (crovia_spider/cli/bundle_cmds.py); a receipt beside it is a usage
    error, and so is neither."""
    from crovia_spider.cli.bundle_cmds import cmd_verify_bundle
    from ledger.keys import parse_pin

    if args.bundle is None or args.receipt is not None:
        from crovia_spider.cli import UsageError

        raise UsageError(
            "crovia verify: error: give a RECEIPT or --bundle ZIP: one of them",
            "usage: crovia verify [options] RECEIPT | crovia verify [options] --bundle ZIP\n",
        )
    parse_pin(args.pubkey, args.key_id)
    return cmd_verify_bundle(args)


def _print_verdict(verdict: object, chain_source: list[str] | None) -> None:
    if verdict.verdict == "valid":
        print(f"OK: {verdict.axiom_id} verified (verdict: valid); this receipt vouches that")
    else:
        print(
            f"OK (--any-key): {verdict.axiom_id} is self-consistent (verdict: unpinned: any key"
            " accepted, so it does not show who signed it); this receipt vouches that"
        )
    if verdict.fetch:  # an AX.FETCH record: the fetch itself, not an item
        print(f"  {printable(verdict.fetch)}")
    item = () if verdict.fetch else (("title", verdict.title), ("url", verdict.url))
    via = f" via {verdict.relay}" if verdict.relay else ""  # bytes served by a third party
    for label, value in (
        ("vendor", verdict.vendor + via),
        *item,
        ("observed at", verdict.observed_at),
        ("issued at", verdict.issued_at),
        ("ledger", f"leaf {verdict.leaf_index} of {verdict.leaf_count}"),
        ("sealed at", f"{verdict.sealed_at}, root {verdict.merkle_root}"),
        ("signed by", f"key_id {verdict.key_id} ({_pin_state(verdict)})"),
    ):
        print(f"  {label + ':':<12} {printable(value)}")
    print(f"checks passed: {', '.join(verdict.checks)}")
    if verdict.key_rotations:
        print(
            f"followed {verdict.key_rotations} key rotation(s) from the ledger's first key to the"
            " seal's key, each signed by both keys: any key of that chain may be pinned"
        )
    if chain_source:
        print(f"rotation chain read from: {', '.join(chain_source)}")
    if verdict.verdict != "valid":
        print(
            "NOTE: no key was pinned (--any-key), so this shows the receipt is self-consistent,"
            " not who signed it. Pin the signer with --trust-root FILE, --pubkey HEX or --key-id."
        )
    print_stamps(verdict.stamps)


def _pin_state(verdict: object) -> str:
    previous = verdict.previous_key
    if previous is not None:
        return (
            f"this site's previous key {previous['key_id']}, handed over to"
            f" {previous['handed_over_to_key_id']} at {previous['rotated_at']}"
        )
    if verdict.verdict == "valid":
        return "the key you pinned, or one its signed rotations lead to"
    return "NOT pinned: any key would do"


def _no_pin(verdict: object) -> Exception:
    from ledger.exceptions import UntrustedKey

    return UntrustedKey(
        f"no key was pinned: key_id {verdict.key_id} signed this receipt, but nothing says it is"
        " the key you trust. Pin it with --trust-root FILE, --pubkey HEX or --key-id ID, or"
        " accept any key with --any-key",
        expected="a pinned key (--trust-root, --pubkey, --key-id) or --any-key",
        computed=verdict.public_key_hex,
    )


def _refused(args: argparse.Namespace, exc: Exception) -> int:
    """A failed check: verdict unpinned (pinned_key) or invalid (any other), exit 1."""
    from crovia_spider.cli import EXIT_CHECK_FAILED, failure

    verdict = "unpinned" if exc.check == "pinned_key" else "invalid"
    if args.json:
        print_json({**failure(exc, EXIT_CHECK_FAILED), "verdict": verdict})
    else:
        print(f"crovia verify: error: {exc}", file=sys.stderr)
        print(f"verdict: {verdict} (check {exc.check})", file=sys.stderr)
    return EXIT_CHECK_FAILED


def _site_rotations(receipt: str, trust: object) -> list[Path]:
    """`<site>/rotations.json` when the receipt is `<site>/receipts/<name>` (docs/format.md,
    "rotation publication"), unless a trust root already names the chain."""
    if receipt == "-" or (trust is not None and trust.key_rotations):
        return []
    path = Path(receipt).absolute()
    candidate = path.parent.parent / "rotations.json"
    if path.parent.name == "receipts" and candidate.is_file():
        return [candidate]
    return []


def _read_rotations(paths: list[Path]) -> list[object]:
    from ledger.keys import parse_rotations

    records: list[object] = []
    for path in paths:
        records += parse_rotations(_read_small(path), str(path))
    return records


def _read_small(path: Path) -> bytes:
    """A trust root or rotations file (at most 4 MiB: more is not one)."""
    with open(path, "rb") as handle:
        return handle.read((1 << 22) + 1)


def cmd_prove(args: argparse.Namespace) -> int:
    from ledger.canonical import canonical_json
    from ledger.store import Ledger

    with Ledger.open(args.ledger_dir) as ledger:
        receipt = ledger.receipt(args.axiom_id)
        rotations = ledger.rotations()
        if args.tlog_proof is not None:
            from crovia_spider.cli.tlog_cmds import write_tlog_proof

            write_tlog_proof(ledger, receipt, args.tlog_proof, force=args.force)
    data = canonical_json(receipt)
    if args.out is not None:
        write_output(args.out, data, force=args.force)
        print(f"wrote {args.out}: receipt of {receipt['axiom_id']} ({len(data)} bytes)")
        print(_check_hint(args.out, receipt["seal"]["public_key_hex"], rotations))
    elif sys.stdout.isatty():  # 7 KB of JSON is for a file or a program, not for a reader
        _print_summary(receipt, args.axiom_id, len(data))
    else:  # byte for byte the canonical receipt
        sys.stdout.buffer.write(data)
    return EXIT_OK


def _check_hint(out: Path, seal_key: str, rotations: list[dict]) -> str:
    """The command that checks the receipt just written, as it runs: pinned to the ledger's
    current key, which signed its seal (without a pin `crovia verify` exits 1, unpinned)."""
    import shlex

    command = printable(f"crovia verify {shlex.quote(str(out))} --pubkey {seal_key}")
    current = rotations[-1]["new_public_key_hex"] if rotations else seal_key
    if current == seal_key:
        return f"check it, pinned to the ledger's key: {command}"
    return (
        "check it, pinned to the key of its seal (the ledger's key has since been rotated to"
        f" {current}): {command}"
    )


def _print_summary(receipt: dict, given: str, size: int) -> None:
    body, seal = receipt["envelope"]["body"], receipt["seal"]
    print(f"receipt of {receipt['axiom_id']} ({size} bytes of JSON, not shown at a terminal)")
    for label, value in (
        ("vendor", body.get("vendor", "")),
        ("title", body.get("title", "")),
        ("ledger", f"leaf {receipt['ledger']['leaf_index']} of {seal['leaf_count']}"),
        ("sealed at", f"{seal['sealed_at']} by key_id {seal['key_id']}"),
    ):
        print(f"  {label + ':':<11} {printable(str(value))}")
    print(f"write it with:  crovia prove {printable(given)} --out receipt.json")
    print(f"    (or pipe:   crovia prove {printable(given)} > receipt.json)")


def _read_receipt(source: str) -> bytes:
    """The receipt's bytes (at most one more than the verifier accepts, so it can say so)."""
    from ledger.receipt import MAX_RECEIPT_BYTES

    if source == "-":
        return sys.stdin.buffer.read(MAX_RECEIPT_BYTES + 1)
    with open(source, "rb") as handle:
        return handle.read(MAX_RECEIPT_BYTES + 1)
