"""What the ledger subcommands share: common arguments, JSON output, exit codes, checks.

Stdlib only at module level, like every ledger command module (`crovia --help` stays fast).
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path

from crovia_spider.options import path_default


def ledger_dir(parser: argparse.ArgumentParser) -> None:
    """Add --ledger-dir, defaulting to $CROVIA_LEDGER_DIR."""
    parser.add_argument(
        "--ledger-dir",
        type=Path,
        default=path_default("CROVIA_LEDGER_DIR"),
        help="ledger directory (default: $CROVIA_LEDGER_DIR or %(default)s)",
    )


def json_flag(parser: argparse.ArgumentParser) -> None:
    """Add --json."""
    parser.add_argument("--json", action="store_true", help="machine-readable output on stdout")


def notice(line: str) -> None:
    """Say `line` on stderr: a key loader's notice (a raw key file to convert), never data."""
    print(line, file=sys.stderr)


def utc_time(text: str) -> str:
    """An argparse type: a date (midnight UTC) or ISO 8601 time (no zone means UTC), as the
    UTC string envelope times compare with (ledger.store.parse_since); a clear usage error else."""
    from ledger.store import parse_since

    try:
        return parse_since(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date or ISO 8601 time: {text!r} (e.g. 2026-11-29 or 2026-11-29T18:00:00Z)"
        ) from None


def positive_int(text: str) -> int:
    """An argparse type: an int of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def print_json(obj: object) -> None:
    """One line of sorted-key JSON on stdout, whatever `obj` holds (a value that is not JSON is
    written as its str; a string that is not UTF-8, such as a lone surrogate, escaped)."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, sort_keys=True, default=str)
    print(text)


def printable(text: str) -> str:
    """`text` with every control, format or separator character escaped (\\x1b, \\u202e): text
    from a receipt is untrusted, and must not move a terminal's cursor or reorder its line."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if _hidden(ch) else ch for ch in text
    )


def _hidden(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") or ch == "\\"


def require_ledger(directory: Path) -> None:
    """Raise LedgerNotFound unless `directory` holds a ledger file (a writer would create one)."""
    from ledger.exceptions import LedgerNotFound
    from ledger.store import LEDGER_FILE

    if not (directory / LEDGER_FILE).is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
