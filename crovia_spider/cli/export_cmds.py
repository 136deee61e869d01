"""`crovia export`: capture records (AX.CAPTURE) as a WARC or a WACZ (docs/archives.md).

`export (AXIOM_ID ... | --vendor V) [--since DATE] (--warc FILE | --wacz FILE)` exports every
capture record of the items named (of each of their versions), the capture records named, or
every capture of a vendor, rebuilt from the blobs the records name (crovia_spider/archive/). A
WACZ adds each record's receipt and tlog proof. Every blob is checked against its signed digest
while the export is written to a temporary file beside FILE, renamed to FILE only when all is
written: a blob missing or changed exits 1 (check fetch_body, naming the record and the blob) and
writes nothing. Nothing matching, an unsealed record (for a WACZ) or FILE existing without
--force exits 2. The ledger is imported inside the handler.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, BinaryIO

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import (
    json_flag,
    ledger_dir,
    print_json,
    require_ledger,
    utc_time,
)
from crovia_spider.cli.output import check_output, force_flag, write_streamed

DESCRIPTION = (
    "Captures of web pages signed in a crovia-spider ledger. Each WARC record names its capture"
    " record (WARC-Crovia-Axiom-Id, an AX.CAPTURE envelope) and the kept blobs it was rebuilt"
    " from; a response's payload is the body as received after content decoding. In a WACZ,"
    " crovia/<axiom_id>.json is the record's receipt (check it with crovia verify) and"
    " crovia/<axiom_id>.tlog-proof its c2sp.org/tlog-proof. See docs/archives.md."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `export`."""
    parser = subparsers.add_parser(
        "export",
        help="write captured pages as a WARC or a WACZ, with their receipts",
        description="Write the captures of the items AXIOM_ID (every capture of every version;"
        " a capture record's own id exports that record), or of --vendor, as a WARC 1.1 file"
        " (--warc) or a WACZ (--wacz: the WARC, its index and pages, and each capture record's"
        " receipt and tlog proof). Every kept blob is checked against its signed sha256: exit 1"
        " naming it if one is missing or changed, and nothing is written. Exit 2 when nothing"
        " matches, a record is not sealed yet (--wacz), or FILE exists (without --force).",
    )
    parser.add_argument(
        "axiom_ids",
        metavar="AXIOM_ID",
        nargs="*",
        help="an item (AX.OBS: all its captures) or a capture record (AX.CAPTURE)",
    )
    parser.add_argument(
        "--vendor", metavar="V", help="instead of AXIOM_IDs: every capture of this vendor (or glob)"
    )
    parser.add_argument(
        "--since",
        metavar="DATE",
        type=utc_time,
        help="only captures at or after DATE (a date or ISO 8601 time, UTC if no zone)",
    )
    out = parser.add_mutually_exclusive_group(required=True)
    out.add_argument("--warc", metavar="FILE", type=Path, help="write a WARC (gzipped if .gz)")
    out.add_argument("--wacz", metavar="FILE", type=Path, help="write a WACZ")
    ledger_dir(parser)
    force_flag(parser)
    json_flag(parser)
    parser.set_defaults(handler=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    from crovia_spider.archive.select import select_captures
    from crovia_spider.exceptions import ExportRefused
    from ledger.store import BodyStore, Ledger

    if bool(args.axiom_ids) == (args.vendor is not None):
        raise ExportRefused("name the captures: AXIOM_ID ... or --vendor V (one of them)")
    path = args.warc or args.wacz
    check_output(path, force=args.force)  # before any work: refused at once
    require_ledger(args.ledger_dir)
    store = BodyStore(args.ledger_dir)
    with Ledger.open(args.ledger_dir) as reader:
        captures = select_captures(
            reader, axiom_ids=args.axiom_ids, vendor=args.vendor, since=args.since
        )
        if args.wacz is not None:
            written = _export_wacz(reader, captures, store, path, args.force)
        else:
            written = _export_warc(captures, store, path, args.force)
    _report(args, path, captures, written)
    return EXIT_OK


def _export_warc(captures: list, store: Any, path: Path, force: bool) -> Any:
    from crovia_spider.archive.warc import warcinfo, write_warc

    def write(out: BinaryIO) -> Any:
        gzip = path.suffix.lower() == ".gz"
        info = warcinfo(DESCRIPTION)
        return write_warc(out, captures, store, filename=path.name, info=info, gzip=gzip)

    return write_streamed(path, write, force=force)


def _export_wacz(reader: Any, captures: list, store: Any, path: Path, force: bool) -> Any:
    from crovia_spider.archive.wacz import evidence, write_wacz
    from crovia_spider.archive.warc import warcinfo

    files = evidence(reader, captures)  # an unsealed record refuses before any WARC is built
    title = f"crovia export: {len(captures)} captures"

    def write(out: BinaryIO) -> Any:
        info = warcinfo(DESCRIPTION)
        return write_wacz(
            out,
            captures,
            store,
            files,
            info=info,
            title=title,
            description=DESCRIPTION,
            workdir=path.parent,
        )

    return write_streamed(path, write, force=force)


def _report(args: argparse.Namespace, path: Path, captures: list, written: Any) -> None:
    kind = "WACZ" if args.wacz is not None else "WARC"
    if args.json:
        print_json(
            {
                "ok": True,
                "format": kind.lower(),
                "path": str(path),
                "bytes": path.stat().st_size,
                "captures": [e["axiom_id"] for e in captures],
                "pages": len(written.pages),
                "warc_records": written.records,
                "without_response": list(written.without_response),
            }
        )
        return
    print(
        f"wrote {path}: {kind} of {len(captures)} capture record(s), {written.records} WARC"
        f" records, {len(written.pages)} page(s) ({path.stat().st_size} bytes)"
    )
    if written.without_response:
        print(
            f"  {len(written.without_response)} capture(s) without a response kept as metadata"
            " records (nothing to replay)"
        )
    check = f"wacz validate -f {path}" if kind == "WACZ" else f"warcio check {path}"
    print(f"check it: {check}; docs/archives.md says what each digest covers")
