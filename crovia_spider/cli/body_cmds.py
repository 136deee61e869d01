"""`crovia body AXIOM_ID`: the exact bytes a source served, as the envelope's signature names them.

Writes the kept body that the envelope's `object.fetch.body_sha256` cites (ledger/store/bodies.py)
to stdout or `--out`, and exits 0 only if those bytes hash to that signed sha256; otherwise the
bytes kept are still written and the command exits 1 naming the body (check `fetch_body`). `--out`
never replaces an existing file unless `--force`. See docs/ledger.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import ledger_dir, require_ledger


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `body`."""
    parser = subparsers.add_parser(
        "body",
        help="write the fetched bytes an envelope was read from",
        description="Write the exact body bytes the envelope AXIOM_ID cites (object.fetch) and"
        " check them against its signed body_sha256: exit 0 if they match, 1 if not.",
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
        store.copy_to(digest, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return EXIT_OK
    with _open_out(args.out, args.force) as out:
        store.copy_to(digest, out)
    return EXIT_OK


def _cited_body(envelope: dict, axiom_id: str) -> object:
    from crovia_spider.exceptions import CroviaError

    if envelope.get("axiom_type") == "AX.FETCH":  # a fetch record: the body it received or
        digest = (envelope.get("body") or {}).get("body_sha256")  # a 304 confirms
        if digest is None:
            raise CroviaError(f"{axiom_id} is a fetch record that names no body (a failure)")
        return digest
    fetch = envelope.get("object", {}).get("fetch")
    if not isinstance(fetch, dict):
        raise CroviaError(f"{axiom_id} cites no fetched body (issued before fetch evidence)")
    return fetch.get("body_sha256")


def _open_out(path: Path, force: bool):
    from crovia_spider.exceptions import CroviaError

    try:
        return path.open("wb" if force else "xb")
    except FileExistsError:
        raise CroviaError(f"{path} exists: choose another --out, or add --force") from None
