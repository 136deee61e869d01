"""`crovia seal`, `crovia audit`, `crovia stats` and `crovia reindex`: the ledger directory.

The ledger is imported inside handlers. A failed audit raises VerificationError (exit 1), usage
and I/O problems LedgerError (exit 2). See docs/ledger.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    notice,
    positive_int,
    print_json,
    require_ledger,
)
from crovia_spider.options import env_default, path_default, setting

if TYPE_CHECKING:
    from ledger.audit import AuditReport, BodiesReport


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add seal, audit, stats and reindex."""
    _add_seal(subparsers)
    _add_audit(subparsers)
    _add_stats(subparsers)
    _add_reindex(subparsers)


def _add_seal(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "seal",
        help="cut a signed seal over the ledger now",
        description="Sign the Merkle root over every leaf. With no new leaf since the last seal,"
        " prints that seal and writes nothing.",
    )
    ledger_dir(parser)
    parser.add_argument(
        "--key",
        type=Path,
        default=path_default("CROVIA_SIGNING_KEY_FILE"),
        help="signing key file (default: $CROVIA_SIGNING_KEY_FILE or %(default)s)",
    )
    parser.add_argument("--run-id", help="run_id recorded in the seal (default: seal_<leaf_count>)")
    parser.add_argument(
        "--lock-timeout",
        type=float,
        default=setting("CROVIA_LOCK_TIMEOUT"),
        help="seconds to wait for the writer lock (default: %(default)s)",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_seal)


def _add_audit(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="show a ledger is whole: every leaf, seal and index row",
        description="Stream the whole ledger: every line is a canonical AX.OBS envelope at its own"
        " anchor height, with a unique axiom_id and a signature that verifies; every seal's"
        " signature and Merkle root hold; index.sqlite agrees row for row. Exit 1 names the"
        " first bad leaf index or seals.jsonl line, and also when no key could check the"
        " signatures (no seal and no --pubkey). With --bodies, every fetch record is then held"
        " to its kept body, read again.",
    )
    ledger_dir(parser)
    parser.add_argument(
        "--pubkey",
        metavar="HEX",
        help="the trusted signer; without it the first seal's key is used, which shows the ledger"
        " is self-consistent, not who signed it",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=2, help="verifying threads (default: 2)"
    )
    parser.add_argument(
        "--bodies",
        action="store_true",
        help="also read every fetch record's kept body again with the crawl's reader (under"
        " CROVIA_PARSE_MEMORY_MB and CROVIA_PARSE_SECONDS) and fail unless it gives the entries"
        " the record signs (check fetch_entries)",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_audit)


def _add_stats(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("stats", help="leaves, seals, vendors and runs of a ledger")
    ledger_dir(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_stats)


def _add_reindex(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reindex",
        help="rebuild the index and Merkle node files from the JSONL",
        description="Rebuild the derived storage (index.sqlite, tree/) from axiom_ledger.jsonl,"
        " taking the writer lock.",
    )
    ledger_dir(parser)
    parser.set_defaults(handler=cmd_reindex)


def cmd_seal(args: argparse.Namespace) -> int:
    from ledger.exceptions import EmptyLedger
    from ledger.store import Ledger, load_ledger_key

    require_ledger(args.ledger_dir)  # a writer would create one: not what a typo should do
    key = load_ledger_key(args.key, args.ledger_dir, notice=notice)
    origin = env_default("CROVIA_LOG_ORIGIN") or None
    with Ledger.open(
        args.ledger_dir, signing_key=key, lock_timeout=args.lock_timeout, log_origin=origin
    ) as ledger:
        before = ledger.last_seal()
        try:
            seal = ledger.seal(run_id=args.run_id)
        except EmptyLedger:  # nothing to do is not an error (an offline crawl issued nothing)
            seal = None
    if seal is None:
        if args.json:
            print_json({"new_seal": False, "seal": None})
        else:
            print(f"nothing to seal: the ledger at {args.ledger_dir} has no leaves yet")
        return EXIT_OK
    fresh = seal is not before
    if args.json:
        print_json({"new_seal": fresh, "seal": seal})
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
    bodies = _audit_bodies(args.ledger_dir, report.leaves) if args.bodies else None
    if args.json:
        extra = {} if bodies is None else {"bodies": bodies.__dict__}
        print_json({"ok": True, **report.__dict__, **extra})
        return EXIT_OK
    print(_audit_summary(report, args.pubkey))
    if bodies is not None:
        print(_bodies_summary(bodies))
    if report.key_rotations:
        print(
            f"followed {report.key_rotations} key rotation(s) (rotations.jsonl): each leaf and"
            " seal was checked under the key of its era"
        )
    if not report.key_pinned and report.leaves:
        print(
            "NOTE: no key was pinned, so the signatures were checked under the key the first seal"
            " names: this shows the ledger is self-consistent, not who signed it (a ledger"
            " re-signed wholesale under another key passes too). Pin the expected signer with"
            " --pubkey HEX."
        )
    return EXIT_OK


def _audit_bodies(directory: Path, leaves: int) -> BodiesReport:
    """The audited leaves' fetch records held to their kept bodies, each read again here (no
    read-again cache: the audit vouches only for what it read)."""
    from crovia_spider.spiders.reread import kept_body_reader
    from ledger.audit import check_fetch_bodies

    reader = kept_body_reader(directory, cache=False)
    try:
        return check_fetch_bodies(directory, reader, leaves=leaves)
    finally:
        reader.close()


def _bodies_summary(bodies: BodiesReport) -> str:
    text = (
        f"bodies ok: {bodies.fetch_records} fetch records held to their kept bodies, read again"
        f" ({bodies.bodies_read} readings)"
    )
    if bodies.not_checked:
        text += (
            f"; {bodies.not_checked} 304 records confirm a body no earlier fetch record of their"
            " feed received: not checked (they prove nothing to history and absent)"
        )
    return text


def _audit_summary(report: AuditReport, pubkey_hex: str | None = None) -> str:
    """The audit's line. "(pinned)" follows the key the user pinned, whichever era it is of;
    the public key shown is the newest era's, said so when there were several."""
    from ledger.keys import key_id

    rate = report.leaves / report.seconds if report.seconds else 0.0
    pinned = key_id(bytes.fromhex(pubkey_hex)) if report.key_pinned and pubkey_hex else None
    keys = ", ".join(f"{kid} (pinned)" if kid == pinned else kid for kid in report.key_ids)
    keys = keys or "none needed"
    if report.public_key_hex is not None:
        newest = "newest " if len(report.key_ids) > 1 else ""
        keys += f", {newest}public key {report.public_key_hex}"
    parts = [
        f"audit ok: {report.leaves} leaves, {report.seals} seals,"
        f" {report.signatures_verified} signatures verified under key_id {keys}"
        f"{'' if report.key_pinned else ' (not pinned)'},"
        f" {report.index_rows_checked} index rows checked",
        f"{report.unsealed_leaves} leaves after the last seal" if report.unsealed_leaves else "",
        f"{report.index_rows_pending} index rows not yet committed by the writer"
        if report.index_rows_pending
        else "",
        "a torn last line is ignored (the next writer quarantines it)" if report.torn_tail else "",
    ]
    return "; ".join(part for part in parts if part) + f" ({report.seconds:.1f}s, {rate:.0f}/s)"


def cmd_stats(args: argparse.Namespace) -> int:
    from ledger.stamps.store import stamp_counts
    from ledger.store import Ledger

    with Ledger.open(args.ledger_dir) as ledger:
        stats = ledger.stats()
        stats["stamps"] = stamp_counts(args.ledger_dir, ledger.seals())
    if args.json:
        print_json(stats)
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
    stamps = stats["stamps"]
    print(
        f"stamps: {stamps['stamped']} of {stamps['seals']} seals stamped"
        f" ({stamps['rfc3161']} with RFC 3161 tokens); OpenTimestamps: {stamps['ots_pending']}"
        f" pending, {stamps['ots_confirmed']} confirmed in Bitcoin"
    )
    print(f"fetch records: {stats['fetch_records']} (one per feed and crawl)")
    print(f"page captures: {stats['page_captures']} (one per capture of an item's page)")
    print(
        f"coverage records: {stats['coverage_records']} (one per arXiv category and day whose"
        " statement changed)"
    )
    for vendor, count in stats["vendors"].items():
        print(f"  {vendor}: {count} items")
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    from ledger.store import Ledger

    require_ledger(args.ledger_dir)
    lock_timeout = setting("CROVIA_LOCK_TIMEOUT")
    with Ledger.open(args.ledger_dir, writer=True, lock_timeout=lock_timeout) as ledger:
        count = ledger.rebuild_index()
    print(f"reindexed {count} leaves in {args.ledger_dir}")
    return EXIT_OK


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
