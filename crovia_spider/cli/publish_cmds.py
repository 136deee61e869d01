"""`crovia publish`: write the ledger as a static C2SP tlog-tiles log (ledger/publish/publisher.py).

With CROVIA_WITNESSES set, each new checkpoint is first submitted to those witnesses and published
with the cosignatures that came back; a witness that is down only costs its cosignature.
docs/ledger.md, "Publishing".
"""

from __future__ import annotations

import argparse
import functools
from pathlib import Path

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import json_flag, ledger_dir, print_json, require_ledger
from crovia_spider.options import env_default, optional_path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add publish."""
    parser = subparsers.add_parser(
        "publish",
        help="write the log as static tiles (C2SP tlog-tiles) for any web server",
        description="Write checkpoint, tile/, tile/entries/ and seals/ into DIR up to the newest"
        " seal, only what changed since the last publish, each file atomically and the"
        " checkpoint last. DIR can be served by any static web server.",
    )
    parser.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=optional_path("CROVIA_PUBLISH_DIR"),  # relative: from the project root
        metavar="DIR",
        help="publish directory (default: $CROVIA_PUBLISH_DIR)",
    )
    ledger_dir(parser)
    parser.add_argument(
        "--full", action="store_true", help="rewrite everything, over whatever DIR holds"
    )
    parser.add_argument(
        "--witness",
        action="append",
        metavar="URL",
        help="witness base URL to ask for a cosignature (default: $CROVIA_WITNESSES, commas)",
    )
    json_flag(parser)
    parser.set_defaults(handler=cmd_publish)


def cmd_publish(args: argparse.Namespace) -> int:
    from crovia_spider.changes.published import write_changes
    from crovia_spider.exceptions import ConfigError
    from crovia_spider.notify.keys import write_public_key
    from crovia_spider.services.witness_client import collect_cosignatures
    from crovia_spider.web.site import write_verifier_page
    from ledger.publish import WRITERS, publish, write_receipts, write_screenshots

    if args.dir is None:
        raise ConfigError("give DIR or set CROVIA_PUBLISH_DIR")
    require_ledger(args.ledger_dir)
    witnesses = args.witness or [
        url.strip() for url in env_default("CROVIA_WITNESSES").split(",") if url.strip()
    ]
    cosigner = functools.partial(collect_cosignatures, witnesses) if witnesses else None
    # The log (tiles, bundles, seals), then the receipts of its new leaves, the screenshots of its
    # browser captures and the verifier page, then the feeds of change events and their pages and
    # the webhook key (docs/watching.md).
    writers = (
        *WRITERS,
        write_receipts,
        write_screenshots,
        write_verifier_page,
        write_changes,
        write_public_key,
    )
    report = publish(args.ledger_dir, args.dir, full=args.full, cosigner=cosigner, writers=writers)
    if args.json:
        print_json({**report.__dict__, "written": len(report.written), "dir": str(args.dir)})
    elif report.previous_size == report.size and not report.written:
        print(f"{args.dir}: already at size {report.size}, nothing to publish")
    else:
        print(
            f"{args.dir}: published size {report.size} (was {report.previous_size}),"
            f" {len(report.written)} files written, {report.cosignatures} cosignature(s)"
        )
    if not args.json and report.size:
        from crovia_spider.web.serve import newest_item_receipt, receipt_words

        newest, kind = newest_item_receipt(args.dir)
        what = receipt_words(kind)
        if newest:
            print(f"the newest {what} in the browser: /v/{newest} (`crovia serve {args.dir}`)")
    return EXIT_OK
