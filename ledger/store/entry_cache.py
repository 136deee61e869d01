"""What each kept body held when read again, remembered by the body's digest: `crovia history` and
`crovia absent` read every body of a feed, and a body is the same bytes for ever.

`entries_cache.sqlite` in the ledger directory maps a key (the body's sha256 and how it was read:
the caller says, e.g. the reader's version and the record's feed, limit and final URL) to a small
JSON object: the identities read and the counts, or the reason the body could not be read. It is
derived data, never evidence: every answer taken from it is still held to what the fetch record
signs (ledger/store/timeline.py), a value of the wrong shape is a miss, and deleting the file costs
only time. Bounded: a value over MAX_VALUE_BYTES is not kept, and past MAX_ROWS rows or
MAX_TOTAL_BYTES the least recently used go. Several readers at once are safe (SQLite's locking, a
busy timeout, writes in one short transaction); a cache that cannot be opened or written (a
read-only ledger directory) is no cache, never an error.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import orjson

CACHE_FILE = "entries_cache.sqlite"
MAX_ROWS = 1024
MAX_VALUE_BYTES = 8 << 20
MAX_TOTAL_BYTES = 128 << 20
_BUSY_SECONDS = 10.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS reads (
    key TEXT PRIMARY KEY,
    body_sha256 TEXT NOT NULL,
    value BLOB NOT NULL,
    used REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""


class EntryCache:
    """The read-again cache of the ledger at `ledger_dir` (see the module docstring)."""

    def __init__(
        self,
        ledger_dir: str | Path,
        *,
        max_rows: int = MAX_ROWS,
        max_total_bytes: int = MAX_TOTAL_BYTES,
        max_value_bytes: int = MAX_VALUE_BYTES,
    ) -> None:
        self.path = Path(ledger_dir) / CACHE_FILE
        self.max_rows, self.max_total_bytes = max_rows, max_total_bytes
        self.max_value_bytes = max_value_bytes
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def get(self, key: str) -> dict[str, Any] | None:
        """The value kept for `key` (a JSON object), or None."""
        db = self._open()
        if db is None:
            return None
        try:
            row = db.execute("SELECT value FROM reads WHERE key = ?", (key,)).fetchone()
            value = None if row is None else orjson.loads(row[0])
        except (sqlite3.Error, orjson.JSONDecodeError):
            return None
        if type(value) is not dict:
            return None
        try:
            with db:
                now = time.time()
                db.execute("UPDATE reads SET used = ?, hits = hits + 1 WHERE key = ?", (now, key))
        except sqlite3.Error:
            pass  # a read-only cache still answers; it only forgets what was used
        return value if type(value) is dict else None

    def put(self, key: str, body_sha256: str, value: dict[str, Any]) -> None:
        """Keep `value` for `key` (unless it is too large), evicting the least recently used."""
        data = orjson.dumps(value)
        db = self._open()
        if db is None or len(data) > self.max_value_bytes:
            return
        try:
            with db:
                db.execute(
                    "INSERT OR REPLACE INTO reads (key, body_sha256, value, used) VALUES (?,?,?,?)",
                    (key, body_sha256, data, time.time()),
                )
                self._evict(db)
        except sqlite3.Error:
            return

    def hits(self, body_sha256: str) -> int:
        """How many times a value for the body `body_sha256` was found (0 when none is kept)."""
        db = self._open()
        if db is None:
            return 0
        row = db.execute(
            "SELECT COALESCE(SUM(hits), 0) FROM reads WHERE body_sha256 = ?", (body_sha256,)
        ).fetchone()
        return int(row[0])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _open(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        try:
            db = sqlite3.connect(self.path, timeout=_BUSY_SECONDS)
            db.execute(_SCHEMA)
        except sqlite3.Error:
            self._broken = True
            return None
        self._db = db
        return db

    def _evict(self, db: sqlite3.Connection) -> None:
        db.execute(
            "DELETE FROM reads WHERE key IN"
            " (SELECT key FROM reads ORDER BY used DESC, rowid DESC LIMIT -1 OFFSET ?)",
            (self.max_rows,),
        )
        total = 0
        rows = db.execute(
            "SELECT key, length(value) FROM reads ORDER BY used DESC, rowid DESC"
        ).fetchall()
        for key, size in rows:
            total += size
            if total > self.max_total_bytes:
                db.execute("DELETE FROM reads WHERE key = ?", (key,))
