"""What one scheduled run did, read back from the ledger directory the child wrote to.

A crawl appends its run record to `runs.jsonl`; every seal (at the end of a crawl, or by
`crovia seal`) lands in `seals.jsonl` (docs/ledger.md). The scheduler notes where both files ended
before the child started and reads only what was appended after, so the outcome line reports this
run and no other.
"""

from __future__ import annotations

import json
import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import jsonl
from ledger.store import RUNS_FILE, SEALS_FILE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LedgerMark:
    """Byte lengths of the run and seal logs at one moment (0 for a file not yet created)."""

    runs: int
    seals: int


def mark(ledger_dir: Path) -> LedgerMark:
    """Where the ledger's run and seal logs end now."""
    return LedgerMark(_size(ledger_dir / RUNS_FILE), _size(ledger_dir / SEALS_FILE))


def records_since(path: Path, offset: int) -> list[dict[str, Any]]:
    """The complete JSON lines appended to `path` after byte `offset`.

    A line still being written (no newline yet) or one that does not parse is left out and logged:
    the ledger's own recovery decides what becomes of it, the scheduler only reports.
    """
    records = []
    for _offset, line in jsonl.iter_lines(path, offset):
        try:
            records.append(json.loads(line))
        except ValueError:
            log.warning("%s: skipped a line that is not JSON after byte %d", path, offset)
    return records


def describe_outcome(
    spider: str | None, exit_code: int, ledger_dir: Path, before: LedgerMark
) -> str:
    """`exit=... new=... updated=... seal=...` for the run that started at `before`.

    For a crawl the counts come from its run record (the newest appended for `spider`); a seal job
    has no run record. `seal=none` means no seal was cut (e.g. the crawl could not take the ledger
    lock).
    """
    parts = [f"exit={_exit_text(exit_code)}"]
    if spider is not None:
        runs = [
            r
            for r in records_since(ledger_dir / RUNS_FILE, before.runs)
            if r.get("spider") == spider
        ]
        parts.append(_run_counts(runs[-1]) if runs else "run_record=none")
    seals = records_since(ledger_dir / SEALS_FILE, before.seals)
    parts.append(_seal_text(seals[-1]) if seals else "seal=none")
    return " ".join(parts)


def _run_counts(record: dict[str, Any]) -> str:
    """Run id, how the crawl ended, and its new and updated envelopes (crovia.run.v1 `totals`)."""
    totals = record.get("totals") or {}
    return (
        f"run_id={record.get('run_id', '?')} outcome={record.get('outcome', '?')}"
        f" new={totals.get('new', '?')} updated={totals.get('updated', '?')}"
    )


def _seal_text(seal: dict[str, Any]) -> str:
    root = str(seal.get("merkle_root", ""))[:16]
    return f"seal=leaf_count:{seal.get('leaf_count', '?')},root:{root}"


def _exit_text(exit_code: int) -> str:
    """0, 1, ... or the signal's name when the child was killed (Popen reports -signum)."""
    if exit_code >= 0:
        return str(exit_code)
    try:
        return signal.Signals(-exit_code).name
    except ValueError:
        return str(exit_code)


def _size(path: Path) -> int:
    # Up to the last complete line: a torn tail is cut off by the next writer before it appends.
    try:
        return jsonl.complete_size(path)
    except FileNotFoundError:
        return 0
