"""Which leaves hold which items: a read-only search of a ledger by vendor, URL, title words and
observation time (`crovia find`), so a user can get from an item to the axiom id that
`crovia prove` takes.

Answered from index.sqlite (ledger/store/find_index.py): the leaves whose find rows may match are
read from the JSONL by their offsets and checked in full, and the leaves the rows do not cover yet
(issued since the last seal, or an index from before the rows) are read line by line, so the
answer is exactly the one a full scan of the JSONL gives (`scan=True`, or no usable index). It
takes no lock and writes nothing, so it runs beside a writer.
"""

from __future__ import annotations

import fnmatch
import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import orjson

from ledger import jsonl
from ledger.exceptions import LedgerNotFound
from ledger.records.capture import CAPTURE_TYPE
from ledger.records.coverage import COVERAGE_TYPE
from ledger.records.fetch import FETCH_TYPE
from ledger.store.find_index import Found, candidates, covered, found_in, title_words
from ledger.store.reader import INDEX_FILE, LEDGER_FILE, SEALS_FILE

__all__ = ["Found", "find_leaves", "parse_since", "title_words"]

# Leaves that observe no item and are never listed: the fetch records (AX.FETCH,
# ledger/records/fetch.py), page captures (AX.CAPTURE) and arXiv's coverage records (AX.COVERAGE,
# `crovia arxiv coverage`); `crovia history` shows the first two. They keep
# find rows like every leaf (the rows follow the leaves one for one) and are dropped when read.
NOT_ITEMS = frozenset({FETCH_TYPE, CAPTURE_TYPE, COVERAGE_TYPE})


def find_leaves(
    directory: Path,
    *,
    vendor: str | None = None,
    url: str | None = None,
    title: str | None = None,
    since: str | None = None,
    scan: bool = False,
) -> Iterator[Found]:
    """The item leaves of the ledger in `directory` (AX.OBS, not fetch records) matching every
    filter given, in leaf order.

    `vendor` is a vendor id or shell pattern (`arxiv_*`); `url` equals the item's link or its
    identity (`subject.target_id`); every word of `title` is a word of the item's title (whole
    words, any case: `title_words`); `since` (as `parse_since` returns it) is at or before
    `observed_at`. `scan` reads every line instead of asking the index (the same answer, slower).
    Raises LedgerNotFound when there is no ledger file.
    """
    path = directory / LEDGER_FILE
    if not path.is_file():
        raise LedgerNotFound(f"no ledger at {directory} (no {LEDGER_FILE})")
    last_seal = jsonl.last_line(directory / SEALS_FILE)
    sealed = last_seal["leaf_count"] if last_seal else 0
    words = title_words(title) if title is not None else []
    query = _Query(vendor, url, words, since)
    db = None if scan else _open_index(directory / INDEX_FILE)
    if db is None:
        yield from _scanned(path, 0, 0, sealed, query)
        return
    try:
        below, tail = _coverage(db)
        rows = candidates(db, below, vendor=vendor, url=url, words=words, since=since)
    except sqlite3.DatabaseError:  # an index of another schema, or damaged: read the JSONL
        db.close()
        yield from _scanned(path, 0, 0, sealed, query)
        return
    db.close()
    yield from _read(path, rows, sealed, query)
    yield from _scanned(path, below, tail, sealed, query)


class _Query:
    def __init__(self, vendor: str | None, url: str | None, words: list[str], since: str | None):
        self.vendor, self.url, self.words, self.since = vendor, url, set(words), since

    def matches(self, found: Found) -> bool:
        if self.vendor is not None and not fnmatch.fnmatchcase(found.vendor, self.vendor):
            return False
        if self.url is not None and self.url not in (found.url, found.target_id):
            return False
        if self.words and not self.words.issubset(title_words(found.title)):
            return False
        return self.since is None or found.observed_at >= self.since


def _open_index(path: Path) -> sqlite3.Connection | None:
    if not path.is_file():
        return None
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None


def _coverage(db: sqlite3.Connection) -> tuple[int, int]:
    """(leaves the find rows cover, the JSONL offset of the first leaf they do not)."""
    below = covered(db)
    (indexed,) = db.execute("SELECT MAX(leaf_index) + 1 FROM leaves").fetchone()
    below = min(below, indexed or 0)
    if below == 0:
        return 0, 0
    offset, length = db.execute(
        "SELECT offset, length FROM leaves WHERE leaf_index=?", (below - 1,)
    ).fetchone()
    return below, offset + length + 1


def _read(
    path: Path, rows: list[tuple[int, int, int]], sealed: int, query: _Query
) -> Iterator[Found]:
    """The candidate leaves, each read at its offset and checked in full."""
    fd = os.open(path, os.O_RDONLY)
    try:
        for leaf_index, offset, length in rows:
            line = os.pread(fd, length + 1, offset)
            if len(line) != length + 1 or not line.endswith(b"\n"):
                continue  # the index is ahead of the file: a full scan would not see it either
            envelope = orjson.loads(line[:-1])
            if _is_item(envelope):
                found = found_in(envelope, leaf_index, leaf_index < sealed)
                if query.matches(found):
                    yield found
    finally:
        os.close(fd)


def _scanned(path: Path, first: int, offset: int, sealed: int, query: _Query) -> Iterator[Found]:
    """Every leaf from `first` (at byte `offset`) to the end, read line by line."""
    for index, (_, line) in enumerate(jsonl.iter_lines(path, offset), first):
        envelope = orjson.loads(line)
        if _is_item(envelope):
            found = found_in(envelope, index, index < sealed)
            if query.matches(found):
                yield found


def _is_item(envelope: object) -> bool:
    return not (isinstance(envelope, dict) and envelope.get("axiom_type") in NOT_ITEMS)


def parse_since(text: str) -> str:
    """A date (`2026-11-29`, midnight UTC) or ISO 8601 time (`2026-11-29T18:00:00Z`; no zone means
    UTC) as an `observed_at` string, which then compares as text. Raises ValueError otherwise."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
