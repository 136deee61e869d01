"""What `crovia find` asks of index.sqlite: one row per leaf with the item's vendor, url, identity
and observation time, and a full-text table of its title's words (SQLite FTS5), so a query reads
only the lines that match instead of the whole JSONL (issue 19: 9.8 s at 1M leaves, now a few
milliseconds).

The rows are derived from the lines as `find` itself reads them (`found_in`), kept in the same
database as the leaves' rows (`find_items`, `find_words`), and added off the issuing path: when a
writer opens the ledger (an index from before them gains them then: the migration) and at every
seal (`catch_up`). Leaves not yet in them are read from the JSONL by `find`, so an answer is
always the one a full scan gives. Matching rule for titles: whole words (docs/ledger.md, "Finding
an item"): a word is a run of letters and digits (`str.isalnum`) after case folding.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from ledger import jsonl

_SCHEMA = """
CREATE TABLE IF NOT EXISTS find_items (
    leaf_index  INTEGER PRIMARY KEY,
    axiom_key   INTEGER NOT NULL,
    vendor      TEXT NOT NULL,
    url_key     INTEGER NOT NULL,
    target_key  INTEGER NOT NULL,
    observed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS find_vendor ON find_items (vendor);
CREATE INDEX IF NOT EXISTS find_url ON find_items (url_key);
CREATE INDEX IF NOT EXISTS find_target ON find_items (target_key);
CREATE INDEX IF NOT EXISTS find_observed ON find_items (observed_at);
CREATE VIRTUAL TABLE IF NOT EXISTS find_words USING fts5 (words, tokenize='ascii', detail='none');
"""
_WORD = re.compile(r"[^\W_]+")  # letters and digits: str.isalnum
_CATCH_UP_ROWS = 4096


@dataclass(frozen=True)
class Found:
    """One leaf that matched: its axiom id and the item it observed."""

    axiom_id: str
    leaf_index: int
    vendor: str
    title: str
    url: str
    observed_at: str
    sealed: bool  # covered by the last seal, so `crovia prove` can export it now
    target_id: str  # the item's identity (docs/spider.md, section 4); not shown

    def as_dict(self) -> dict[str, Any]:
        """What `crovia find --json` shows of it."""
        shown = asdict(self)
        del shown["target_id"]
        return shown


def find_fields(envelope: Any) -> tuple[str, str, str, str, str, str]:
    """axiom id, vendor, title, url, observed_at and target id of one envelope, as `find` reads
    them: .get throughout, since a damaged leaf is for `crovia audit` to name and find still lists
    the rest. The writer holds these of each leaf it writes until the seal makes their rows
    (`rows_from_fields`), so the issuing path neither hashes nor tokenizes."""
    if not isinstance(envelope, dict):
        envelope = {}
    body = envelope.get("body")
    record = body.get("spider_record") if isinstance(body, dict) else None
    if not isinstance(record, dict):
        record = {}
    subject = envelope.get("subject")
    target = subject.get("target_id", "") if isinstance(subject, dict) else ""
    return (
        str(envelope.get("axiom_id", "")), str(record.get("vendor", "")),
        str(record.get("title", "")), str(record.get("url", "")),
        str(record.get("observed_at", "")), str(target),
    )  # fmt: skip


def found_in(envelope: Any, index: int, sealed: bool) -> Found:
    """What `find` reads of one envelope."""
    axiom_id, vendor, title, url, observed_at, target = find_fields(envelope)
    return Found(axiom_id, index, vendor, title, url, observed_at, sealed, target)


def title_words(text: str) -> list[str]:
    """The words of a title or a query: runs of letters and digits after case folding."""
    return _WORD.findall(text.casefold())


def text_key(text: str) -> int:
    """A signed 64-bit key from sha256 of a text (as the index keys target ids)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _axiom_key(axiom_id: str) -> int:
    try:
        return int(axiom_id[4:20], 16) - 2**63
    except ValueError:
        return 0


def create(db: sqlite3.Connection) -> None:
    """The find tables, if missing (a writer's connection)."""
    db.executescript(_SCHEMA)


def truncate(db: sqlite3.Connection, leaf_count: int) -> None:
    """Forget the rows of leaves at and beyond `leaf_count` (inside the caller's transaction)."""
    if _has_tables(db):
        db.execute("DELETE FROM find_items WHERE leaf_index>=?", (leaf_count,))
        db.execute("DELETE FROM find_words WHERE rowid>=?", (leaf_count,))


def covered(db: sqlite3.Connection) -> int:
    """How many leaves, from 0, the find rows cover (0 without the tables)."""
    if not _has_tables(db):
        return 0
    (last,) = db.execute("SELECT MAX(leaf_index) FROM find_items").fetchone()
    return 0 if last is None else last + 1


def rows_from_fields(
    fields: tuple[str, ...], leaf_index: int
) -> tuple[tuple[Any, ...], tuple[int, str]]:
    """The `find_items` and `find_words` rows of one leaf from its `find_fields`."""
    axiom_id, vendor, title, url, observed_at, target = fields
    item = (leaf_index, _axiom_key(axiom_id), vendor, text_key(url), text_key(target), observed_at)
    return item, (leaf_index, " ".join(title_words(title)))


def find_rows(envelope: Any, leaf_index: int) -> tuple[tuple[Any, ...], tuple[int, str]]:
    """The `find_items` and `find_words` rows of one leaf (its envelope as read from its line)."""
    return rows_from_fields(find_fields(envelope), leaf_index)


def catch_up(
    db: sqlite3.Connection,
    ledger_file: Path,
    issued: Sequence[tuple[tuple[Any, ...], tuple[int, str]]] = (),
) -> int:
    """Add the find rows of every indexed leaf that has none; return how many were added.

    The rows follow the leaves' rows: if the last find row names another axiom than its leaf's
    row (the ledger was cut and grew again), they are dropped and rebuilt.
    `issued` may hold the rows (`find_rows`) of the newest leaves, made by the writer from the
    envelopes it has just written: when they are exactly the leaves without rows, and name the
    axioms of those leaves' rows, they are inserted as they are instead of reading and parsing
    the leaves' lines again (the same rows: a line is the canonical JSON of that envelope).
    """
    create(db)
    start = covered(db)
    if start:
        last = db.execute(
            "SELECT f.axiom_key = l.axiom_key FROM find_items f JOIN leaves l USING (leaf_index)"
            " WHERE f.leaf_index=?",
            (start - 1,),
        ).fetchone()
        if last is None or not last[0]:
            db.execute("BEGIN")
            truncate(db, 0)
            db.execute("COMMIT")
            start = 0
    row = db.execute("SELECT offset FROM leaves WHERE leaf_index=?", (start,)).fetchone()
    if row is None:
        return 0
    (end,) = db.execute("SELECT MAX(leaf_index) + 1 FROM leaves").fetchone()
    if _rows_fit(db, issued, start, end):
        added = 0
        for at in range(0, len(issued), _CATCH_UP_ROWS):
            chunk = issued[at : at + _CATCH_UP_ROWS]
            added += _insert(db, [item for item, _ in chunk], [word for _, word in chunk])
        return added
    added, items, words = 0, [], []
    for leaf_index, (_offset, line) in enumerate(jsonl.iter_lines(ledger_file, row[0]), start):
        if leaf_index >= end:
            break
        try:
            envelope = orjson.loads(line)
        except orjson.JSONDecodeError:
            envelope = {}
        item, word = find_rows(envelope, leaf_index)
        items.append(item)
        words.append(word)
        if len(items) == _CATCH_UP_ROWS:
            added += _insert(db, items, words)
            items, words = [], []
    return added + _insert(db, items, words)


def _rows_fit(
    db: sqlite3.Connection,
    issued: Sequence[tuple[tuple[Any, ...], tuple[int, str]]],
    start: int,
    end: int,
) -> bool:
    """True when `issued` are the rows of leaves start..end-1, in order, with their axioms."""
    if len(issued) != end - start or not issued:
        return False
    if any(item[0] != leaf for leaf, (item, _) in enumerate(issued, start)):
        return False
    keys = db.execute(
        "SELECT leaf_index, axiom_key FROM leaves WHERE leaf_index IN (?, ?)", (start, end - 1)
    ).fetchall()
    return dict(keys) == {start: issued[0][0][1], end - 1: issued[-1][0][1]}


def _insert(db: sqlite3.Connection, items: list[tuple[Any, ...]], words: list[tuple]) -> int:
    if not items:
        return 0
    db.execute("BEGIN")
    try:
        db.executemany("INSERT INTO find_items VALUES (?,?,?,?,?,?)", items)
        db.executemany("INSERT INTO find_words (rowid, words) VALUES (?,?)", words)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return len(items)


def candidates(
    db: sqlite3.Connection,
    below: int,
    *,
    vendor: str | None,
    url: str | None,
    words: list[str],
    since: str | None,
) -> list[tuple[int, int, int]]:
    """(leaf index, offset, length) of the leaves below `below` whose find rows may match, in
    leaf order: every leaf that matches is among them (the caller checks each line in full).
    A row is used only while it names the same axiom as its leaf's row."""
    where, args = ["f.leaf_index < ?"], [below]
    if vendor is not None and "[" not in vendor:  # fnmatch's * and ? are GLOB's
        where.append("f.vendor GLOB ?")
        args.append(vendor)
    if url is not None:
        where.append("(f.url_key = ? OR f.target_key = ?)")
        args += [text_key(url)] * 2
    if since is not None:
        where.append("f.observed_at >= ?")
        args.append(since)
    if words:
        where.append("f.leaf_index IN (SELECT rowid FROM find_words WHERE find_words MATCH ?)")
        args.append(" ".join(f'"{word}"' for word in words))
    query = (
        "SELECT f.leaf_index, l.offset, l.length FROM find_items f"
        " JOIN leaves l ON l.leaf_index = f.leaf_index AND l.axiom_key = f.axiom_key"
        f" WHERE {' AND '.join(where)} ORDER BY f.leaf_index"
    )
    return db.execute(query, args).fetchall()


def _has_tables(db: sqlite3.Connection) -> bool:
    found = db.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('find_items', 'find_words')"
    ).fetchone()
    return found[0] == 2
