"""The derived SQLite index of the JSONL ledger: where each leaf is, and what it is about.

Rebuildable from axiom_ledger.jsonl at any time (`crovia reindex`), so it is written without fsync
(`synchronous=OFF`); crash recovery brings it back in line with the JSONL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

_SCHEMA = """
CREATE TABLE IF NOT EXISTS leaves (
    leaf_index   INTEGER PRIMARY KEY,
    axiom_id     TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    receipt_hash TEXT NOT NULL,
    run_hash     TEXT NOT NULL,
    vendor       TEXT NOT NULL,
    offset       INTEGER NOT NULL,
    length       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS leaves_axiom ON leaves (axiom_id);
CREATE INDEX IF NOT EXISTS leaves_target ON leaves (target_id, leaf_index);
"""


class IndexEntry(NamedTuple):
    """The newest leaf of a target: what dedupe needs."""

    axiom_id: str
    fingerprint: str
    leaf_index: int


class LeafRow(NamedTuple):
    """One indexed leaf."""

    leaf_index: int
    axiom_id: str
    target_id: str
    fingerprint: str
    receipt_hash: str
    run_hash: str
    vendor: str
    offset: int
    length: int


def row_for(envelope: Mapping[str, Any], leaf_index: int, offset: int, length: int) -> LeafRow:
    """The index row of a full envelope stored at `offset` (missing fields index as "")."""
    body = envelope.get("body") or {}
    record = body.get("spider_record") or {}
    return LeafRow(
        leaf_index,
        envelope.get("axiom_id", ""),
        (envelope.get("subject") or {}).get("target_id", ""),
        body.get("fingerprint", ""),
        body.get("receipt_hash", ""),
        record.get("parent_run_hash", ""),
        body.get("vendor", ""),
        offset,
        length,
    )


class LedgerIndex:
    """SQLite index at `path`; read-only unless `writable`."""

    def __init__(self, path: Path, *, writable: bool) -> None:
        if writable:
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.executescript(_SCHEMA)
        else:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)

    def close(self) -> None:
        self._db.close()

    def add(self, rows: Iterable[LeafRow]) -> None:
        """Insert rows in one transaction."""
        with self._transaction():
            self._db.executemany("INSERT INTO leaves VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def count(self) -> int:
        """Number of indexed leaves (they are contiguous from 0)."""
        (last,) = self._db.execute("SELECT MAX(leaf_index) FROM leaves").fetchone()
        return 0 if last is None else last + 1

    def leaf(self, leaf_index: int) -> LeafRow | None:
        found = self._db.execute("SELECT * FROM leaves WHERE leaf_index=?", (leaf_index,))
        row = found.fetchone()
        return None if row is None else LeafRow(*row)

    def by_axiom(self, axiom_id: str) -> LeafRow | None:
        """The first leaf with this axiom_id."""
        found = self._db.execute(
            "SELECT * FROM leaves WHERE axiom_id=? ORDER BY leaf_index LIMIT 1", (axiom_id,)
        )
        row = found.fetchone()
        return None if row is None else LeafRow(*row)

    def latest_for_target(self, target_id: str) -> IndexEntry | None:
        found = self._db.execute(
            "SELECT axiom_id, fingerprint, leaf_index FROM leaves WHERE target_id=?"
            " ORDER BY leaf_index DESC LIMIT 1",
            (target_id,),
        )
        row = found.fetchone()
        return None if row is None else IndexEntry(*row)

    def vendor_counts(self) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT vendor, COUNT(*) FROM leaves GROUP BY vendor ORDER BY vendor"
        )
        return dict(rows.fetchall())

    def truncate(self, leaf_count: int) -> None:
        """Forget leaves at and beyond `leaf_count`."""
        with self._transaction():
            self._db.execute("DELETE FROM leaves WHERE leaf_index>=?", (leaf_count,))

    def _transaction(self) -> sqlite3.Connection:
        return _Transaction(self._db)


class _Transaction:
    """BEGIN/COMMIT, or ROLLBACK on error (autocommit mode connection)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._db.execute("BEGIN")
        return self._db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
