"""`crovia`: one command, subcommands grouped by module, one error handler.

Exit codes: 0 ok; 1 a check failed (verification, audit); 2 usage, configuration or I/O error.
Each module in SUBCOMMAND_MODULES exposes `register(subparsers)`; handlers take the parsed args
and return an exit code. Modules import their heavy dependencies (Scrapy, APScheduler) inside
handlers, so `crovia verify` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from crovia_spider import __version__

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2

SUBCOMMAND_MODULES = (
    "crovia_spider.cli.ledger_cmds",
    "crovia_spider.cli.feeds_cmds",
    "crovia_spider.cli.schedule_cmds",
    "crovia_spider.cli.web_cmds",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crovia",
        description="Harvest feeds into a signed ledger, and prove and verify what was observed.",
        epilog="Exit codes: 0 ok, 1 a check failed, 2 usage or I/O error. Settings: see README.",
    )
    parser.add_argument("--version", action="version", version=f"crovia {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the one handler: known errors become a message and an exit code
        code = exit_code_for(exc)
        if code is None:
            raise
        print(f"crovia {args.command}: error: {exc}", file=sys.stderr)
        return code


def exit_code_for(exc: BaseException) -> int | None:
    """The exit code of a known exception; None for a bug, which must surface as a traceback."""
    from crovia_spider.exceptions import CroviaError
    from ledger.exceptions import LedgerError, VerificationError

    if isinstance(exc, VerificationError):
        return EXIT_CHECK_FAILED
    if isinstance(exc, (CroviaError, LedgerError, OSError)):
        return EXIT_USAGE
    return None


if __name__ == "__main__":
    sys.exit(main())
