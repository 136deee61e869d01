"""The index half of `crovia audit`: index.sqlite holds exactly one row per leaf, equal to the row
the JSONL line gives (ledger/store/index.py `row_for`, and its lookup keys).

The index is derived, but `crovia prove` and dedupe trust it: a deleted row hides a leaf, an edited
one points a lookup at another. Rows are read in one ordered pass beside the leaves, so memory
stays constant. Rows missing only at the end of the ledger while a writer holds the lock are a
batch whose lines are durable but whose rows are not yet committed: reported as pending, not
failed. Without a writer, the writer's recovery would add them, and `crovia reindex` rebuilds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ledger.exceptions import IndexMismatch
from ledger.store.index import SCHEMA_VERSION, STORED_COLUMNS, axiom_key

AUDIT_COLUMNS = STORED_COLUMNS
_SELECT = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM leaves"
_REBUILD = "`crovia reindex` rebuilds it from the JSONL"
_FETCH_ROWS = 1024


class IndexChecker:
    """Compares the rows of index.sqlite, in leaf order, with the rows the leaves give."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise IndexMismatch(f"{path.name} is missing: {_REBUILD}")
        try:
            self._db = open_read_only(path)
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
            self._rows = self._db.execute(f"{_SELECT} ORDER BY leaf_index")
            self._buffer: list[tuple[Any, ...]] = []
            self._next = self._fetch()
        except sqlite3.DatabaseError as exc:
            raise IndexMismatch(f"{path.name} is unreadable ({exc}): {_REBUILD}") from None
        if version != SCHEMA_VERSION:
            raise IndexMismatch(
                f"{path.name} has schema {version}: {_REBUILD}",
                expected=SCHEMA_VERSION,
                computed=version,
            )
        self.checked = 0
        self.missing_from: int | None = None
        self._resume: int | None = None  # after `passed`: the leaf the next read starts at

    def close(self) -> None:
        self._db.close()

    def _fetch(self) -> tuple[Any, ...] | None:
        """The next row in leaf order, or None; rows come in blocks (a call per row costs more
        than the comparison)."""
        if not self._buffer:
            self._buffer = self._rows.fetchmany(_FETCH_ROWS)
            self._buffer.reverse()
        return self._buffer.pop() if self._buffer else None

    def passed(self, first_leaf: int, count: int) -> None:
        """The rows of leaves `first_leaf` to `first_leaf` + `count` - 1 were read and found equal
        to their lines elsewhere (an audit worker, `rows_between`): move past them. Raises the
        IndexMismatch `check` would if a row before `first_leaf` has not been checked (a row
        under a negative leaf index)."""
        self._sync()
        if self._next is not None and self._next[0] < first_leaf:
            self._no_row(first_leaf, self._next[0])
        self.checked += count
        self._resume = first_leaf + count

    def _sync(self) -> None:
        """After `passed`: read on from the leaf it ended at (one row; the rest comes in blocks
        only if a leaf is then checked here)."""
        if self._resume is not None:
            self._rows = self._db.execute(
                f"{_SELECT} WHERE leaf_index>=? ORDER BY leaf_index", (self._resume,)
            )
            self._resume = None
            self._buffer = []
            self._next = self._rows.fetchone()

    def has_row(self, leaf_index: int) -> bool:
        """Whether the next row in leaf order is that of `leaf_index` (before `check`)."""
        self._sync()
        return self._next is not None and self._next[0] == leaf_index

    def first_with(self, axiom_id: str, before: int) -> int | None:
        """The first indexed leaf before `before` whose row names `axiom_id` (an indexed lookup:
        the uniqueness of a leaf that has no row yet)."""
        found = self._db.execute(
            "SELECT leaf_index FROM leaves WHERE axiom_key=? AND axiom_id=? AND leaf_index<?"
            " ORDER BY leaf_index LIMIT 1",
            (axiom_key(axiom_id), axiom_id, before),
        ).fetchone()
        return None if found is None else found[0]

    def first_repeat(self, leaves: int) -> tuple[int, int, str] | None:
        """(first leaf, repeating leaf, axiom_id) of the earliest repeat of an axiom_id among the
        rows of leaves [0, `leaves`), or None. Rows equal to their lines (`check`), this is the
        ledger's own uniqueness, found without holding a digest per leaf: SQLite groups the
        axiom_id index's 64-bit keys in one ordered pass (constant memory), and only the rows of a
        key held twice are compared in full."""
        repeats = []
        keys = self._db.execute(
            "SELECT axiom_key FROM leaves WHERE leaf_index<? GROUP BY axiom_key HAVING COUNT(*)>1",
            (leaves,),
        ).fetchall()
        for (key,) in keys:
            first: dict[str, int] = {}
            rows = self._db.execute(
                "SELECT leaf_index, axiom_id FROM leaves WHERE axiom_key=? AND leaf_index<?"
                " ORDER BY leaf_index",
                (key, leaves),
            )
            for leaf_index, axiom_id in rows:
                if axiom_id in first:
                    repeats.append((first[axiom_id], leaf_index, axiom_id))
                    break
                first[axiom_id] = leaf_index
        return min(repeats, key=lambda repeat: repeat[1], default=None)

    def check_run(self, first_leaf: int, expected: list[tuple[Any, ...]]) -> bool:
        """Check the rows of leaves `first_leaf`, `first_leaf` + 1, ... against `expected` at
        once, and True, when the index holds them all and they are equal (the common case: one
        comparison of lists instead of a call per leaf). False changes nothing: the caller then
        checks leaf by leaf with `has_row` and `check`, which name what differs."""
        wanted = len(expected)
        self._sync()
        if self._next is None or self._next[0] != first_leaf:
            return False
        while len(self._buffer) < wanted - 1:  # `_buffer` is reversed: next rows at its end
            more = self._rows.fetchmany(_FETCH_ROWS)
            if not more:
                return False
            more.reverse()
            self._buffer[:0] = more
        rows = [self._next, *reversed(self._buffer[len(self._buffer) - wanted + 1 :])]
        if rows != expected:
            return False
        del self._buffer[len(self._buffer) - wanted + 1 :]
        self.checked += wanted
        self._next = self._fetch()
        return True

    def check(self, leaf_index: int, expected: tuple[Any, ...]) -> None:
        """The row of leaf `leaf_index` equals `expected`; IndexMismatch naming the leaf if not."""
        self._sync()
        row = self._next
        if row is None:  # rows stop here: judged at `finish`
            if self.missing_from is None:
                self.missing_from = leaf_index
            return
        if row[0] != leaf_index:
            self._no_row(leaf_index, row[0])
        if row != expected:
            pairs = zip(AUDIT_COLUMNS, row, expected, strict=True)
            names = [name for name, found, wanted in pairs if found != wanted]
            raise IndexMismatch(
                f"leaf {leaf_index}: the index row disagrees with the JSONL in {names}",
                expected=expected,
                computed=row,
            )
        self.checked += 1
        self._next = self._fetch()

    def _no_row(self, leaf_index: int, found: int) -> None:
        raise IndexMismatch(
            f"leaf {leaf_index}: no index row (a deleted row hides the leaf from lookups):"
            f" {_REBUILD}",
            expected=leaf_index,
            computed=found,
        )

    def finish(self, leaves: int, *, ledger_grew: bool, writer_active: bool) -> int:
        """After the last leaf: the rows still pending (0 unless a writer is active).

        Raises IndexMismatch for rows beyond the ledger's end (unless lines were appended during
        the audit) and for rows missing at its end with no writer to commit them.
        """
        self._sync()
        if self._next is not None and not ledger_grew:
            raise IndexMismatch(
                f"the index has rows beyond the ledger's {leaves} leaves (from leaf"
                f" {self._next[0]}): was the ledger cut short? {_REBUILD}",
                expected=leaves,
                computed=self._next[0],
            )
        if self.missing_from is None:
            return 0
        if writer_active:
            return leaves - self.missing_from
        raise IndexMismatch(
            f"leaf {self.missing_from}: no index row for leaves {self.missing_from} to"
            f" {leaves - 1} and no writer to add them: {_REBUILD}",
            expected=leaves,
            computed=self.missing_from,
        )


def rows_between(db: sqlite3.Connection, first_leaf: int, count: int) -> list[tuple[Any, ...]]:
    """The AUDIT_COLUMNS of the rows of leaves `first_leaf` to `first_leaf` + `count` - 1, in leaf
    order (fewer when rows are missing): what an audit worker compares a block's lines with."""
    return db.execute(
        f"{_SELECT} WHERE leaf_index>=? AND leaf_index<? ORDER BY leaf_index",
        (first_leaf, first_leaf + count),
    ).fetchall()


def open_read_only(path: Path) -> sqlite3.Connection:
    """index.sqlite opened for reading only (sqlite3.DatabaseError if it cannot be)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
