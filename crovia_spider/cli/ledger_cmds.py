"""Ledger subcommands of `crovia`: keygen, verify, prove, seal, audit, stats, reindex.

Imports only the stdlib at module level; the ledger (PyNaCl, orjson) is imported inside handlers so
that `crovia --help` stays fast. Failed checks raise VerificationError (exit 1), usage and I/O
problems LedgerError (exit 2); the dispatcher in crovia_spider/cli/__init__.py turns them into
messages. See docs/ledger.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from crovia_spider.options import env_default

EXIT_OK = 0
EXIT_CHECK_FAILED = 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
    _add_keygen(subparsers)
    _add_verify(subparsers)
    _add_prove(subparsers)
    _add_seal(subparsers)
    _add_audit(subparsers)
    _add_stats(subparsers)
    _add_reindex(subparsers)


# -- parsers ---------------------------------------------------------------------------------------


def _ledger_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ledger-dir",
        type=Path,
        default=Path(env_default("CROVIA_LEDGER_DIR")),
        help="ledger directory (default: $CROVIA_LEDGER_DIR or %(default)s)",
    )


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def _add_keygen(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "keygen",
        help="create an ed25519 signing key (mode 0600)",
        description="Create a new signing key file; never overwrites one. Prints the public key.",
    )
    parser.add_argument("--out", type=Path, required=True, help="where to write the key file")
    parser.add_argument(
        "--trust-root", type=Path, help="also write the public trust root JSON to this file"
    )
    _json_flag(parser)
    parser.set_defaults(handler=cmd_keygen)


def _add_verify(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check a receipt offline",
        description="Check every rule of a crovia.axiom_proof.v1 receipt offline. Exit 1 names the"
        " failed check. Pin the signer with --pubkey or --key-id: without a pin the receipt is only"
        " shown to be self-consistent.",
    )
    parser.add_argument("receipt", help="receipt JSON file, or - for stdin")
    pin = parser.add_mutually_exclusive_group()
    pin.add_argument("--pubkey", metavar="HEX", help="the trusted signer's public key (64 hex)")
    pin.add_argument("--key-id", metavar="ID", help="the trusted signer's key_id (16 hex)")
    _json_flag(parser)
    parser.set_defaults(handler=cmd_verify)


def _add_prove(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prove",
        help="print the receipt of an axiom",
        description="Print the canonical receipt binding AXIOM_ID to the newest seal covering it.",
    )
    parser.add_argument("axiom_id", metavar="AXIOM_ID")
    _ledger_dir(parser)
    parser.add_argument("--out", type=Path, help="write the receipt here instead of stdout")
    parser.set_defaults(handler=cmd_prove)


def _add_seal(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "seal",
        help="cut a signed seal over the ledger now",
        description="Sign the Merkle root over every leaf. With no new leaf since the last seal,"
        " prints that seal and writes nothing.",
    )
    _ledger_dir(parser)
    parser.add_argument(
        "--key",
        type=Path,
        default=Path(env_default("CROVIA_SIGNING_KEY_FILE")),
        help="signing key file (default: $CROVIA_SIGNING_KEY_FILE or %(default)s)",
    )
    parser.add_argument("--run-id", help="run_id recorded in the seal (default: seal_<leaf_count>)")
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=float(env_default("CROVIA_LOCK_TIMEOUT")),
        help="seconds to wait for the writer lock (default: %(default)s)",
    )
    _json_flag(parser)
    parser.set_defaults(handler=cmd_seal)


def _add_audit(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="re-check every leaf and seal of a ledger",
        description="Stream the whole ledger: canonical form, axiom_id, signature and leaf hash of"
        " every line; signature and Merkle root of every seal. Exit 1 names the first bad leaf"
        " index or seals.jsonl line.",
    )
    _ledger_dir(parser)
    parser.add_argument(
        "--pubkey",
        metavar="HEX",
        help="the trusted signer; without it the first seal's key is used, which shows the ledger"
        " is self-consistent, not who signed it",
    )
    parser.add_argument(
        "--workers", type=_positive_int, default=2, help="verifying threads (default: 2)"
    )
    _json_flag(parser)
    parser.set_defaults(handler=cmd_audit)


def _add_stats(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help="leaves, seals, vendors and runs of a ledger")
    _ledger_dir(parser)
    _json_flag(parser)
    parser.set_defaults(handler=cmd_stats)


def _add_reindex(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reindex",
        help="rebuild the index and Merkle node files from the JSONL",
        description="Rebuild the derived storage (index.sqlite, tree/) from axiom_ledger.jsonl,"
        " taking the writer lock.",
    )
    _ledger_dir(parser)
    parser.set_defaults(handler=cmd_reindex)


# -- handlers --------------------------------------------------------------------------------------


def cmd_keygen(args: argparse.Namespace) -> int:
    from ledger.keys import generate_signing_key, key_id

    key = generate_signing_key(args.out)
    public = bytes(key.verify_key)
    trust_root = {
        "key_id": key_id(public),
        "public_key_hex": public.hex(),
        "signature_algorithm": "ed25519",
    }
    if args.trust_root is not None:
        args.trust_root.write_text(json.dumps(trust_root, indent=2, sort_keys=True) + "\n")
    if args.json:
        _print_json(
            {**trust_root, "key_file": str(args.out), "trust_root_file": _str(args.trust_root)}
        )
        return EXIT_OK
    print(
        f"signing key written to {args.out} (mode 0600): keep it secret, back it up, never share it"
    )
    print(f"public key: {trust_root['public_key_hex']}")
    print(f"key_id:     {trust_root['key_id']}")
    if args.trust_root is not None:
        print(f"trust root: {args.trust_root}")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from ledger.exceptions import VerificationError
    from ledger.keys import parse_pin
    from ledger.verify import verify_receipt

    parse_pin(args.pubkey, args.key_id)  # a malformed pin is a usage error: exit 2 before any check
    receipt = _load_receipt(args.receipt)
    try:
        verdict = verify_receipt(receipt, pubkey_hex=args.pubkey, key_id=args.key_id)
    except VerificationError as exc:
        if not args.json:
            raise
        _print_json(
            {
                "ok": False,
                "check": exc.check,
                "message": str(exc.args[0]),
                "expected": exc.expected,
                "computed": exc.computed,
            }
        )
        return EXIT_CHECK_FAILED
    if args.json:
        _print_json({"ok": True, **verdict.__dict__, "checks": list(verdict.checks)})
        return EXIT_OK
    print(
        f"OK: {verdict.axiom_id} is leaf {verdict.leaf_index} of {verdict.leaf_count} under"
        f" seal root {verdict.merkle_root}, signed by key_id {verdict.key_id}"
    )
    print(f"checks passed: {', '.join(verdict.checks)}")
    if not verdict.key_pinned:
        print(
            "NOTE: no key was pinned, so this shows the receipt is self-consistent, not who signed"
            " it. Pin the expected signer with --pubkey HEX or --key-id ID."
        )
    return EXIT_OK


def cmd_prove(args: argparse.Namespace) -> int:
    from ledger.canonical import canonical_json
    from ledger.store import Ledger

    with Ledger.open(args.ledger_dir) as ledger:
        data = canonical_json(ledger.receipt(args.axiom_id))
    if args.out is not None:
        args.out.write_bytes(data)
    else:  # byte for byte the canonical receipt; a newline only for a human at a terminal
        sys.stdout.buffer.write(data + b"\n" if sys.stdout.isatty() else data)
    return EXIT_OK


def cmd_seal(args: argparse.Namespace) -> int:
    from ledger.keys import load_signing_key
    from ledger.store import Ledger

    _require_ledger(args.ledger_dir)  # a writer would create one: not what a typo should do
    key = load_signing_key(args.key)
    with Ledger.open(args.ledger_dir, signing_key=key, lock_timeout=args.lock_timeout) as ledger:
        before = ledger.last_seal()
        seal = ledger.seal(run_id=args.run_id)
    fresh = seal is not before
    if args.json:
        _print_json({"new_seal": fresh, "seal": seal})
    elif fresh:
        print(
            f"sealed {seal['leaf_count']} leaves: root {seal['merkle_root']}"
            f" (key_id {seal['key_id']})"
        )
    else:
        print(
            f"no new leaves since the last seal ({seal['leaf_count']} leaves, root"
            f" {seal['merkle_root']}); nothing written"
        )
    return EXIT_OK


def cmd_audit(args: argparse.Namespace) -> int:
    from ledger.audit import audit

    progress = _Progress() if sys.stderr.isatty() and not args.json else None
    try:
        report = audit(
            args.ledger_dir, pubkey_hex=args.pubkey, workers=args.workers, progress=progress
        )
    finally:
        if progress is not None:
            progress.done()
    if args.json:
        _print_json(
            {"ok": True, **report.__dict__, "signatures_checked": report.signatures_checked}
        )
        return EXIT_OK
    rate = report.leaves / report.seconds if report.seconds else 0.0
    signed = (
        f"signatures under {report.public_key_hex}"
        if report.signatures_checked
        else "signatures NOT checked (no seal and no --pubkey)"
    )
    torn = (
        "; a torn last line is ignored (the next writer quarantines it)" if report.torn_tail else ""
    )
    print(
        f"audit ok: {report.leaves} leaves, {report.seals} seals, {signed},"
        f" {report.seconds:.1f}s ({rate:.0f} leaves/s){torn}"
    )
    if report.signatures_checked and not report.key_pinned:
        print(
            "NOTE: no key was pinned, so the signatures were checked under the key the first seal"
            " names: this shows the ledger is self-consistent, not who signed it (a ledger"
            " re-signed wholesale under another key passes too). Pin the expected signer with"
            " --pubkey HEX."
        )
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    from ledger.store import Ledger

    with Ledger.open(args.ledger_dir) as ledger:
        stats = ledger.stats()
    if args.json:
        _print_json(stats)
        return EXIT_OK
    last = stats["last_seal"]
    print(
        f"ledger {stats['directory']}: {stats['leaves']} leaves, {stats['seals']} seals,"
        f" {stats['runs']} runs, {stats['unsealed_leaves']} leaves not yet sealed"
    )
    if last is not None:
        print(
            f"last seal: {last['leaf_count']} leaves at {last['sealed_at']} ({last['run_id']}),"
            f" root {last['merkle_root']}"
        )
    for vendor, count in stats["vendors"].items():
        print(f"  {vendor}: {count}")
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    from ledger.store import Ledger

    _require_ledger(args.ledger_dir)
    lock_timeout = float(env_default("CROVIA_LOCK_TIMEOUT"))
    with Ledger.open(args.ledger_dir, writer=True, lock_timeout=lock_timeout) as ledger:
        count = ledger.rebuild_index()
    print(f"reindexed {count} leaves in {args.ledger_dir}")
    return EXIT_OK


# -- helpers ---------------------------------------------------------------------------------------


def _load_receipt(source: str) -> dict:
    from ledger.exceptions import ReceiptMalformed

    try:
        text = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReceiptMalformed(f"{source} is not JSON: {exc}") from None


def _require_ledger(directory: Path) -> None:
    from ledger.exceptions import LedgerNotFound
    from ledger.store import LEDGER_FILE

    if not (directory / LEDGER_FILE).is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _print_json(obj: object) -> None:
    print(json.dumps(obj, sort_keys=True, ensure_ascii=False))


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


class _Progress:
    """A self-overwriting progress line on stderr, at most ten updates a second."""

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self, leaves: int) -> None:
        now = time.monotonic()
        if now - self._last >= 0.1:
            self._last = now
            sys.stderr.write(f"\raudited {leaves} leaves")
            sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
