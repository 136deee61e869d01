"""`crovia body AXIOM_ID`: the exact bytes a source served, as the envelope's signature names them.

Writes the kept body the envelope cites (ledger/store/bodies.py): an item's `object.fetch.
body_sha256` (the feed body it was read from), a fetch record's `body_sha256` (the feed's), a
capture record's `body_sha256` (the page's), to stdout or `--out`, and exits 0 only if those
bytes hash to that signed sha256; otherwise the command exits 1 naming the body (check
`fetch_body`) and writes nothing: the bytes are checked while they stream into a temporary file
(in --out's directory, or spooled for stdout), which is renamed to --out, or copied to stdout,
only on a match. An envelope that cites no body (a failed fetch or capture, an item issued
before fetch evidence) is exit 2, saying which. Reading stops at the crawl's download limit
(MAX_BODY_BYTES), so a swapped-in gzip bomb costs no more than that. `--out` never replaces an
existing file unless `--force`, and never a key file (crovia_spider/cli/output.py). See
docs/ledger.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import ledger_dir, require_ledger
from crovia_spider.cli.output import write_streamed


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `body`."""
    parser = subparsers.add_parser(
        "body",
        help="write the fetched bytes an envelope was read from",
        description="Write the exact body bytes the envelope AXIOM_ID cites (an item's feed body,"
        " a fetch record's feed body, a capture record's page) and check them against its signed"
        " body_sha256: exit 0 if they match, 1 if not, 2 if it cites none.",
    )
    parser.add_argument("axiom_id", metavar="AXIOM_ID")
    ledger_dir(parser)
    parser.add_argument("--out", type=Path, help="write the bytes here instead of stdout")
    parser.add_argument("--force", action="store_true", help="let --out replace an existing file")
    parser.set_defaults(handler=cmd_body)


def cmd_body(args: argparse.Namespace) -> int:
    from ledger.store import BodyStore, Ledger

    require_ledger(args.ledger_dir)
    with Ledger.open(args.ledger_dir) as ledger:
        digest = _cited_body(ledger.envelope_of(args.axiom_id), args.axiom_id)
    store = BodyStore(args.ledger_dir)
    if args.out is None:
        with tempfile.SpooledTemporaryFile(max_size=1 << 20) as spool:
            store.copy_to(digest, spool)  # checked before a byte reaches stdout
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return EXIT_OK
    _write_checked(store, digest, args.out, args.force)
    return EXIT_OK


def _write_checked(store: object, digest: object, path: Path, force: bool) -> None:
    """Stream the body into a temporary file beside `path`; only if it matches, make it `path`
    (crovia_spider/cli/output.py write_streamed)."""
    write_streamed(path, lambda out: store.copy_to(digest, out), force=force)


def _cited_body(envelope: dict, axiom_id: str) -> object:
    """The digest of the body `envelope` signs: a fetch record's (the feed's), a capture
    record's (the page's), an item's (`object.fetch`, the feed body it was read from); else
    CroviaError saying why it names none."""
    from crovia_spider.exceptions import CroviaError

    kind = envelope.get("axiom_type")
    body = envelope.get("body") if isinstance(envelope.get("body"), dict) else {}
    if kind == "AX.FETCH":  # a fetch record: the body it received or a 304 confirms
        digest = body.get("body_sha256")
        if digest is None:
            raise CroviaError(f"{axiom_id} is a fetch record that names no body (a failure)")
        return digest
    if kind == "AX.CAPTURE":  # a capture record: the page as received
        digest = body.get("body_sha256")
        if digest is None:
            why = f"{body.get('outcome')}: {body.get('error') or 'no response'}"
            raise CroviaError(f"{axiom_id} is a capture record that kept no page ({why})")
        return digest
    if kind != "AX.OBS":
        raise CroviaError(f"{axiom_id} is an {kind} record, which cites no fetched body")
    fetch = envelope.get("object", {}).get("fetch")
    if not isinstance(fetch, dict):
        raise CroviaError(f"{axiom_id} cites no fetched body (issued before fetch evidence)")
    return fetch.get("body_sha256")
