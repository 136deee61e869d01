"""The stamps of a ledger, kept beside its seals in `<ledger dir>/stamps/`.

- `seals/<seal digest hex>.json`: one record per stamped seal, replaced atomically (temporary
  file, fsync, rename, directory fsync): `{"seal_digest", "rfc3161": [{gen_time, token_base64,
  tsa_url}], "ots": {"calendars", "proof_base64", "stamped_at"}}` (`ots` only once a calendar
  answered).
- `attempts.jsonl`: one durable line per request that failed, so an operator sees which TSA or
  calendar is down or answering garbage; the next run asks again.
- `stamps.lock`: one stamping run at a time (the ledger's own writer lock is not taken).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from ledger import jsonl, lock
from ledger.stamps import ots, seal_digest

STAMPS_DIR = "stamps"
SEALS_DIR = "seals"
ATTEMPTS_FILE = "attempts.jsonl"
LOCK_FILE = "stamps.lock"


class StampStore:
    """The `stamps/` directory of the ledger at `ledger_dir` (created by the first write)."""

    def __init__(self, ledger_dir: Path) -> None:
        self.directory = Path(ledger_dir) / STAMPS_DIR

    def load(self, seal: Mapping[str, Any]) -> dict[str, Any]:
        """The record of `seal`; an empty one (no tokens, no proof) when nothing is stored."""
        digest = seal_digest(seal).hex()
        path = self.directory / SEALS_DIR / f"{digest}.json"
        try:
            return orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return {"rfc3161": [], "seal_digest": digest}

    def save(self, record: Mapping[str, Any]) -> None:
        """Replace a seal's record durably and atomically."""
        folder = self.directory / SEALS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{record['seal_digest']}.json"
        temporary = final.with_suffix(f".tmp{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, orjson.dumps(record, option=orjson.OPT_SORT_KEYS) + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, final)
        jsonl.fsync_dir(folder)

    def record_attempt(self, attempt: Mapping[str, Any]) -> None:
        """Append one failed request to attempts.jsonl, durably."""
        self.directory.mkdir(parents=True, exist_ok=True)
        line = orjson.dumps(attempt, option=orjson.OPT_SORT_KEYS) + b"\n"
        jsonl.append_to(self.directory / ATTEMPTS_FILE, line)

    def attempts(self) -> Iterator[dict[str, Any]]:
        """Every recorded failed request, oldest first."""
        for _offset, line in jsonl.iter_lines(self.directory / ATTEMPTS_FILE):
            yield orjson.loads(line)

    @contextmanager
    def locked(self, timeout: float) -> Iterator[None]:
        """Hold the stamping lock (LedgerLocked after `timeout` seconds)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = lock.acquire(self.directory / LOCK_FILE, timeout)
        try:
            yield
        finally:
            lock.release(fd)


def proof_summary(record: Mapping[str, Any]) -> ots.ProofSummary | None:
    """The attestations of a record's OpenTimestamps proof, or None without one."""
    if "ots" not in record:
        return None
    return ots.scan_detached(base64.b64decode(record["ots"]["proof_base64"])).summary


def stamp_counts(ledger_dir: Path, seals: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """For `crovia stats`: seals in all, seals with any stamp, with RFC 3161 tokens, with an OTS
    proof still pending, with one confirmed in Bitcoin.
    """
    store = StampStore(ledger_dir)
    counts = dict.fromkeys(("seals", "stamped", "rfc3161", "ots_pending", "ots_confirmed"), 0)
    for seal in seals:
        record = store.load(seal)
        summary = proof_summary(record)
        counts["seals"] += 1
        counts["stamped"] += bool(record["rfc3161"] or summary)
        counts["rfc3161"] += bool(record["rfc3161"])
        if summary is not None:
            counts["ots_confirmed" if summary.bitcoin else "ots_pending"] += 1
    return counts
