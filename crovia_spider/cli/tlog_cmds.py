"""`crovia consistency`, and the tlog-proof file of `crovia prove --tlog-proof`: the ledger read as
a C2SP transparency log (docs/ledger.md, "The ledger as a transparency log").

The ledger is imported inside handlers. A size the ledger does not have is a usage error (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from crovia_spider.cli import EXIT_OK
from crovia_spider.cli.ledger_args import ledger_dir, positive_int, require_ledger
from crovia_spider.cli.output import write_output


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add consistency."""
    parser = subparsers.add_parser(
        "consistency",
        help="print an RFC 9162 consistency proof between two tree sizes",
        description="Print the consistency proof of the ledger's RFC 6962 tree from OLD_SIZE to"
        " NEW_SIZE leaves, one base64 hash per line (the form tlog-witness uses). Equal sizes"
        " print nothing.",
    )
    parser.add_argument("old_size", metavar="OLD_SIZE", type=positive_int)
    parser.add_argument("new_size", metavar="NEW_SIZE", type=positive_int)
    ledger_dir(parser)
    parser.set_defaults(handler=cmd_consistency)


def cmd_consistency(args: argparse.Namespace) -> int:
    import base64

    from crovia_spider.exceptions import ConfigError
    from ledger.store import Ledger

    require_ledger(args.ledger_dir)
    with Ledger.open(args.ledger_dir) as ledger:
        if not args.old_size <= args.new_size <= ledger.leaf_count:
            raise ConfigError(
                f"need OLD_SIZE <= NEW_SIZE <= {ledger.leaf_count} (the ledger's leaves),"
                f" not {args.old_size} and {args.new_size}"
            )
        proof = ledger.rfc6962_consistency(args.old_size, args.new_size)
    for digest in proof:
        print(base64.b64encode(digest).decode("ascii"))
    return EXIT_OK


def write_tlog_proof(ledger: Any, receipt: dict[str, Any], path: Path, *, force: bool) -> None:
    """Write the tlog-proof of the receipt's leaf under its seal's checkpoint to `path`.

    Raises NoCheckpoint when that seal has none, or what write_output raises.
    """
    from ledger.store import tlog_proof_for

    leaf_index, leaf_count = receipt["ledger"]["leaf_index"], receipt["seal"]["leaf_count"]
    write_output(path, tlog_proof_for(ledger, leaf_index, leaf_count), force=force)
