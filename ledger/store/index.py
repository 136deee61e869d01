"""The derived SQLite index of the JSONL ledger: where each leaf is, and what it is about.

Rebuildable from axiom_ledger.jsonl at any time (`crovia reindex`), so it is written without fsync
(`synchronous=OFF`); crash recovery brings it back in line with the JSONL.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ledger.canonical import canonical_json, encode_checked
from ledger.exceptions import IndexCorrupt
from ledger.records.capture import PAGE_TARGET_PREFIX
from ledger.records.coverage import COVERAGE_TARGET_PREFIX
from ledger.records.fetch import FEED_TARGET_PREFIX
from ledger.store import find_index

# Lookups go through 64-bit integer keys (a prefix of the axiom id, a hash of the target id or of
# the identity): their b-trees are far smaller and faster to update than ones over long strings;
# the full text is compared after the key matches. Version 3 added the identity: an index of an
# older version is dropped and rebuilt from the JSONL when a writer opens it.
SCHEMA_VERSION = 3
_SCHEMA = """
CREATE TABLE IF NOT EXISTS leaves (
    leaf_index   INTEGER PRIMARY KEY,
    axiom_key    INTEGER NOT NULL,
    target_key   INTEGER NOT NULL,
    identity_key INTEGER NOT NULL,
    identity     TEXT NOT NULL,
    axiom_id     TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    receipt_hash TEXT NOT NULL,
    run_hash     TEXT NOT NULL,
    vendor       TEXT NOT NULL,
    offset       INTEGER NOT NULL,
    length       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS leaves_axiom ON leaves (axiom_key);
CREATE INDEX IF NOT EXISTS leaves_target ON leaves (target_key, leaf_index);
CREATE INDEX IF NOT EXISTS leaves_identity ON leaves (identity_key, leaf_index);
"""
_COLUMNS = (
    "leaf_index, axiom_id, target_id, fingerprint, receipt_hash, run_hash, vendor, offset, length,"
    " identity"
)
_IN_CHUNK = 5000  # well under SQLite's limit on bound parameters


class IndexEntry(NamedTuple):
    """The newest leaf of a target: what dedupe needs."""

    axiom_id: str
    fingerprint: str
    leaf_index: int


class Versions(NamedTuple):
    """What the ledger holds of one identity: its newest leaf, and the newest leaf with a given
    fingerprint (None when no earlier version had that content)."""

    newest: IndexEntry | None
    same: IndexEntry | None


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
    identity: str


def identity_digest(identity: Mapping[str, Any]) -> str:
    """sha256 hex of canonical JSON of an envelope's `object.identity`: the index's key for it."""
    return hashlib.sha256(canonical_json(dict(identity))).hexdigest()


def identity_of(envelope: Mapping[str, Any]) -> str:
    """The identity digest of `envelope`: of its `object.identity`, or for an envelope without one
    (written before identities were scoped by source) of `{"target_id": subject.target_id}`."""
    found = (envelope.get("object") or {}).get("identity")
    if type(found) is dict:  # a parsed line's (the audit's per-leaf path): no copy, no ABC check
        return hashlib.sha256(encode_checked(found)).hexdigest()
    if isinstance(found, Mapping):  # part of an envelope already held to canonical JSON
        return hashlib.sha256(encode_checked(dict(found))).hexdigest()
    return identity_digest({"target_id": (envelope.get("subject") or {}).get("target_id", "")})


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
        identity_of(envelope),
    )


# Every column of a leaf's row, in the order `stored_values` gives them (the audit reads them all).
STORED_COLUMNS = (*LeafRow._fields, "axiom_key", "target_key", "identity_key")


def stored_values(row: LeafRow) -> tuple[Any, ...]:
    """The values of STORED_COLUMNS for `row`: its fields and the three lookup keys."""
    return (*row, axiom_key(row.axiom_id), target_key(row.target_id), target_key(row.identity))


def stored_row(
    envelope: Mapping[str, Any], leaf_index: int, offset: int, length: int
) -> tuple[Any, ...]:
    """`stored_values(row_for(envelope, leaf_index, offset, length))` in one step, without the
    LeafRow between them (the audit compares one per leaf with index.sqlite)."""
    body = envelope.get("body") or {}
    axiom_id = envelope.get("axiom_id", "")
    target_id = (envelope.get("subject") or {}).get("target_id", "")
    identity = identity_of(envelope)
    return (
        leaf_index,
        axiom_id,
        target_id,
        body.get("fingerprint", ""),
        body.get("receipt_hash", ""),
        (body.get("spider_record") or {}).get("parent_run_hash", ""),
        body.get("vendor", ""),
        offset,
        length,
        identity,
        axiom_key(axiom_id),
        target_key(target_id),
        target_key(identity),
    )


def axiom_key(axiom_id: str) -> int:
    """A signed 64-bit key from the first 16 hex digits of an axiom id (0 if it has none)."""
    try:
        return int(axiom_id[4:20], 16) - 2**63
    except ValueError:
        return 0


def target_key(target_id: str) -> int:
    """A signed 64-bit key from sha256 of a target id."""
    digest = hashlib.sha256(target_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class LedgerIndex:
    """SQLite index at `path`; read-only unless `writable`.

    The writer uses SQLite's write-ahead log, so readers (`crovia stats`, `crovia prove` during a
    crawl) never see a half-committed transaction nor need to roll one back, and a killed
    transaction rolls back on the next open. It never fsyncs: the index is derived, and recovery
    checks it against the JSONL.
    `add` buffers rows (visible to this object's lookups at once); `flush` commits them in one
    transaction, and `add` flushes by itself every FLUSH_ROWS rows. `stage` inserts a batch in a
    transaction it leaves open, for `commit` once the batch's lines are durable (or `rollback`).
    An index of another schema version is dropped and rebuilt.
    """

    FLUSH_ROWS = 2048

    def __init__(self, path: Path, *, writable: bool) -> None:
        self._pending: list[LeafRow] = []
        self._pending_axiom: dict[str, LeafRow] = {}
        self._pending_target: dict[str, LeafRow] = {}
        self._pending_identity: dict[str, list[LeafRow]] = {}
        if writable:
            self._db = sqlite3.connect(path, isolation_level=None)
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute("PRAGMA journal_mode=WAL")
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
            if version != SCHEMA_VERSION:
                self._db.execute("DROP TABLE IF EXISTS leaves")
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._db.executescript(_SCHEMA)
        else:
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            self._check_version()

    def close(self) -> None:
        self.flush()
        self._db.close()

    def add(self, rows: Iterable[LeafRow]) -> None:
        """Index rows (the next leaves, in order); committed by the next flush."""
        for row in rows:
            self._pending.append(row)
            self._pending_axiom.setdefault(row.axiom_id, row)
            self._pending_target[row.target_id] = row
            self._pending_identity.setdefault(row.identity, []).append(row)
        if len(self._pending) >= self.FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        """Commit buffered rows in one transaction."""
        if not self._pending:
            return
        with self._transaction():
            self._insert(self._pending)
        self._pending.clear()
        self._pending_axiom.clear()
        self._pending_target.clear()
        self._pending_identity.clear()

    def stage(self, rows: Sequence[LeafRow]) -> None:
        """Insert rows (the next leaves) in a transaction left open: this connection sees them at
        once, other connections after `commit`; `rollback` forgets them.
        """
        self.flush()
        self._db.execute("BEGIN")
        try:
            self._insert(rows)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def commit(self) -> None:
        """Commit the rows of `stage`."""
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        """Forget the rows of `stage`."""
        self._db.execute("ROLLBACK")

    def known(self, axiom_ids: list[str]) -> set[str]:
        """Those of `axiom_ids` already indexed (one query per few thousand ids)."""
        found = {axiom_id for axiom_id in axiom_ids if axiom_id in self._pending_axiom}
        for start in range(0, len(axiom_ids), _IN_CHUNK):
            chunk = axiom_ids[start : start + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT axiom_id FROM leaves WHERE axiom_key IN ({marks})",
                [axiom_key(axiom_id) for axiom_id in chunk],
            )
            wanted = set(chunk)
            found.update(axiom_id for (axiom_id,) in rows if axiom_id in wanted)
        return found

    def count(self) -> int:
        """Number of indexed leaves (they are contiguous from 0)."""
        if self._pending:
            return self._pending[-1].leaf_index + 1
        (last,) = self._db.execute("SELECT MAX(leaf_index) FROM leaves").fetchone()
        return 0 if last is None else last + 1

    def leaf(self, leaf_index: int) -> LeafRow | None:
        if self._pending and leaf_index >= self._pending[0].leaf_index:
            position = leaf_index - self._pending[0].leaf_index
            return self._pending[position] if position < len(self._pending) else None
        found = self._db.execute(f"SELECT {_COLUMNS} FROM leaves WHERE leaf_index=?", (leaf_index,))
        row = found.fetchone()
        return None if row is None else LeafRow(*row)

    def by_axiom(self, axiom_id: str) -> LeafRow | None:
        """The first leaf with this axiom_id."""
        found = self._db.execute(
            f"SELECT {_COLUMNS} FROM leaves WHERE axiom_key=? AND axiom_id=?"
            " ORDER BY leaf_index LIMIT 1",
            (axiom_key(axiom_id), axiom_id),
        )
        row = found.fetchone()
        return LeafRow(*row) if row is not None else self._pending_axiom.get(axiom_id)

    def latest_for_target(self, target_id: str) -> IndexEntry | None:
        """The newest leaf whose subject.target_id is `target_id`."""
        row = self._pending_target.get(target_id)
        if row is not None:
            return IndexEntry(row.axiom_id, row.fingerprint, row.leaf_index)
        found = self._db.execute(
            "SELECT axiom_id, fingerprint, leaf_index FROM leaves WHERE target_key=?"
            " AND target_id=? ORDER BY leaf_index DESC LIMIT 1",
            (target_key(target_id), target_id),
        )
        entry = found.fetchone()
        return None if entry is None else IndexEntry(*entry)

    def versions(self, identity: str, fingerprint: str) -> Versions:
        """The newest leaf of `identity`, and its newest leaf with `fingerprint` (each or None)."""
        pending = self._pending_identity.get(identity, [])
        if pending:
            same = next((r for r in reversed(pending) if r.fingerprint == fingerprint), None)
            if same is not None:
                return Versions(_entry(pending[-1]), _entry(same))
            return Versions(_entry(pending[-1]), self._same(identity, fingerprint))
        key = target_key(identity)
        newest = self._db.execute(
            "SELECT axiom_id, fingerprint, leaf_index FROM leaves WHERE identity_key=?"
            " AND identity=? ORDER BY leaf_index DESC LIMIT 1",
            (key, identity),
        ).fetchone()
        if newest is None:
            return Versions(None, None)
        if newest[1] == fingerprint:
            return Versions(IndexEntry(*newest), IndexEntry(*newest))
        return Versions(IndexEntry(*newest), self._same(identity, fingerprint))

    def _same(self, identity: str, fingerprint: str) -> IndexEntry | None:
        found = self._db.execute(
            "SELECT axiom_id, fingerprint, leaf_index FROM leaves WHERE identity_key=?"
            " AND identity=? AND fingerprint=? ORDER BY leaf_index DESC LIMIT 1",
            (target_key(identity), identity, fingerprint),
        ).fetchone()
        return None if found is None else IndexEntry(*found)

    def vendor_counts(self) -> dict[str, int]:
        """Items (AX.OBS leaves) by vendor; fetch records, whose target is their feed
        (ledger/records/fetch.py), page captures, whose target is their page
        (ledger/records/capture.py), and coverage records, whose target is their category and
        day (ledger/records/coverage.py), are counted by `target_count`."""
        self.flush()
        prefixes = (FEED_TARGET_PREFIX, PAGE_TARGET_PREFIX, COVERAGE_TARGET_PREFIX)
        rows = self._db.execute(
            "SELECT vendor, COUNT(*) FROM leaves WHERE"
            + " AND ".join(" substr(target_id, 1, ?) != ?" for _ in prefixes)
            + " GROUP BY vendor ORDER BY vendor",
            [value for prefix in prefixes for value in (len(prefix), prefix)],
        )
        return dict(rows.fetchall())

    def target_count(self, prefix: str) -> int:
        """Leaves whose target starts with `prefix`: FEED_TARGET_PREFIX (fetch records),
        PAGE_TARGET_PREFIX (page captures) or COVERAGE_TARGET_PREFIX (coverage records)."""
        self.flush()
        (count,) = self._db.execute(
            "SELECT COUNT(*) FROM leaves WHERE substr(target_id, 1, ?) = ?", (len(prefix), prefix)
        ).fetchone()
        return count

    def truncate(self, leaf_count: int) -> None:
        """Forget leaves at and beyond `leaf_count`."""
        self.flush()
        with self._transaction():
            self._db.execute("DELETE FROM leaves WHERE leaf_index>=?", (leaf_count,))
            find_index.truncate(self._db, leaf_count)

    def catch_up_find(self, ledger_file: Path, issued: Sequence[Any] = ()) -> int:
        """Add `crovia find`'s rows for the leaves that have none (ledger/store/find_index.py);
        `issued`: the newest leaves' rows, if the writer made them (`find_index.catch_up`)."""
        self.flush()
        return find_index.catch_up(self._db, ledger_file, issued)

    def _insert(self, rows: Iterable[LeafRow]) -> None:
        keyed = (stored_values(row) for row in rows)
        self._db.executemany(
            f"INSERT INTO leaves ({_COLUMNS}, axiom_key, target_key, identity_key)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            keyed,
        )

    def _check_version(self) -> None:
        try:
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
        except sqlite3.DatabaseError as exc:
            raise IndexCorrupt(f"unreadable index ({exc}); run `crovia reindex`") from None
        if version != SCHEMA_VERSION:
            raise IndexCorrupt(
                f"index schema {version}, expected {SCHEMA_VERSION}; run `crovia reindex`"
            )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


def _entry(row: LeafRow) -> IndexEntry:
    return IndexEntry(row.axiom_id, row.fingerprint, row.leaf_index)


class _Transaction:
    """BEGIN/COMMIT, or ROLLBACK on error (autocommit mode connection)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._db.execute("BEGIN")
        return self._db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")
